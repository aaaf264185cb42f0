"""A contributor's state file: what it sent and signed in a round, kept before it is sent so that a resumed run sends
the same (:class:`StateFile`, the part of :class:`~dptopic.contributor.secure_sum.default.SecureContributor` that
keeps it), its format, and the default file's name."""
from __future__ import annotations

import json
from pathlib import Path

from ..._io import atomic_write_bytes
from ...errors import DPTopicError
from ...protocol.secure_sum.messages import ROUND_ID
from .checks import ServerLied

STATE_FORMAT = "dptopic-secure-sum-state"
STATE_VERSION = 2


_ACKNOWLEDGED = "acknowledged"
"""What a step's kept message becomes once :meth:`StateFile.acknowledged` drops it."""


class StateFile:
    """The state file of a contributor (``path``; None: kept in memory only), read and written as its steps go: the
    part of :class:`~dptopic.contributor.secure_sum.default.SecureContributor` that keeps ``st`` (its ``round_id``,
    ``me`` and ``plan`` checked against a file it resumes)."""

    def _load(self):
        st = read_state(self.path, strict=True)
        if st is None:
            return None
        if not isinstance(st, dict) or st.get("format") != STATE_FORMAT or st.get("version") != STATE_VERSION:
            raise DPTopicError(f"{self.path} is not a secure-sum state file of this version: give another state"
                               " file.")
        if st.get("round_id") != self.round_id or st.get("contributor") != self.me:
            raise DPTopicError(f"{self.path} belongs to round {str(st.get('round_id'))[:64]!r} as"
                               f" {str(st.get('contributor'))[:64]!r}, not this round as {self.me!r}: give a fresh"
                               " state file for a new round.")
        if st.get("plan") != self.plan.to_dict():
            raise ServerLied("the server's plan differs from the one you accepted when you joined this round (kept in"
                             f" {self.path}): refusing to take part further.")
        return st

    def _write(self) -> None:
        if self.path is not None:
            atomic_write_bytes(self.path, json.dumps(self.st).encode(), private=True)   # it holds the round's secrets

    def _once(self, step: str, make):
        """What step ``step`` sends: made and kept the first time, the kept one afterwards."""
        if step not in self.st["sent"]:
            self.st["sent"][step] = make()
            self._write()
        sent = self.st["sent"][step]
        if sent is _ACKNOWLEDGED:
            raise DPTopicError(f"this contributor's {step} was acknowledged and not kept (acknowledged): it is never"
                               " made a second time; nothing sent.")
        return sent

    def acknowledged(self, step: str) -> None:
        """The server acknowledged what ``step`` sent (``shares``, ``upload0``, ``upload1``, ``unmask0``, ``unmask1``)
        and the caller will never send it again: without a state file, the copy kept for a resend is dropped, and a
        later request for the step is refused in one line (a step's message is never made twice: a second upload
        would carry other noise under the same masks). With a state file nothing changes: a resumed run resends from
        the file. For a process that plays many contributors (a simulation): each would otherwise hold its
        uploads, shares and answers until the round is over (docs/research/secure_sum_cohorts.md)."""
        if self.path is None and step in self.st["sent"]:
            self.st["sent"][step] = _ACKNOWLEDGED


def new_state(round_id: str, contributor: str, plan: dict | None, secrets: dict) -> dict:
    """A fresh state file's content for a round and a contributor: its ``plan`` (None until one is accepted: keys
    drawn before the configuration was known, :func:`~dptopic.contributor.secure_sum.client.take_part_committee`) and
    ``secrets`` (:meth:`ContributorSecrets.to_dict`), nothing sent yet."""
    return {"format": STATE_FORMAT, "version": STATE_VERSION, "round_id": round_id, "contributor": contributor,
            "plan": plan, "secrets": secrets, "sent": {}, "revealed": {}, "masked_with": {}, "signed": {},
            "finished": None}


def read_state(path, strict: bool = False):
    """The state file at ``path`` as a dict; None when there is none (``path`` None, or no file) or it cannot be read
    as a JSON object. With ``strict``, a file that is not JSON is refused in one line, and any JSON it holds is
    returned for the caller's checks to name what is wrong."""
    if path is None or not Path(path).exists():
        return None
    try:
        st = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        if strict:
            raise DPTopicError(f"{path} is not a secure-sum state file: give another state file.") from None
        return None
    return st if strict or isinstance(st, dict) else None


def state_file_name(round_id: str, contributor: str) -> str:
    """The default state file's name for a round and a contributor, both from the contributor's own invitation and
    checked (never a path from what a server sends)."""
    if not (ROUND_ID.fullmatch(str(round_id)) and ROUND_ID.fullmatch(str(contributor))):
        raise DPTopicError("a round id and a contributor id are 1-64 of A-Z a-z 0-9 _ -.")
    return f"secure-sum-{round_id}-{contributor}.json"
