"""What a secure-sum round's server is started with (:class:`SecureSumConfig`), its steps (:data:`STATES`),
and the refusals and lines every mode's server shares: a refused request (:class:`ApiError`), a message not signed
by the member it names (:func:`check_signed`), a late registration, the roster's start-up line."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...corpus import Vocabulary
from ...errors import ParameterError
from ...protocol.secure_sum import default as ss
from ...protocol.secure_sum.crypto import verify
from ...protocol.secure_sum.enrollment import check_directory, layout_difference, layout_of
from ...protocol.secure_sum.messages import PHASES
from ...protocol.secure_sum.plan import SecureSumPlan

UPLOAD_PHASES = PHASES


STATES = ("keys", "shares", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released",
          "failed")


MAX_REGISTRATION_S = 366 * 86400.0
"""The longest registration deadline (a year), in seconds after a round opens."""


class ApiError(Exception):
    """A refused request: its HTTP status, a code and a one-line message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class SecureSumConfig:
    """What a secure-sum server (``dptopic serve``'s secure-sum kind) is started with: the public vocabulary, the
    plan, the operator's signed directory of invited contributors (:mod:`dptopic.protocol.secure_sum.enrollment`), and
    the server's own settings."""

    vocabulary: object
    plan: SecureSumPlan
    directory: dict
    n_topics: int = 20
    database: str = "sqlite:///dptopic-secure-sum.db"
    admin_token: str | None = field(default=None, repr=False)
    max_body_bytes: int = 16 * 1024 * 1024
    ledger: str | None = None               # the dataset ledger the released round is charged to (service/ledger.py)
    ledger_dataset: str | None = None
    allow_foreign_tables: bool = False
    schema: str | None = None               # PostgreSQL: the schema of the round's tables (one per round in cohorts)
    registration_s: float | None = None
    """The registration deadline, in seconds after the round first opened (kept in its database): the roster then
    closes with those registered, if at least ``n - F`` (:meth:`SecureRound.close_roster_if_due`). None: it closes
    once every invited contributor has registered, or by the admin (the same rule)."""

    def __post_init__(self):
        if self.registration_s is not None and (isinstance(self.registration_s, bool) or not isinstance(
                self.registration_s, (int, float)) or not 0 < self.registration_s <= MAX_REGISTRATION_S):
            raise ParameterError("invalid {registration_s=}: seconds in (0, {most:,d}] after the round first opens (a"
                                 " year at most).", "registration_s", self.registration_s,
                                 most=int(MAX_REGISTRATION_S))
        if not isinstance(self.vocabulary, Vocabulary):
            self.vocabulary = Vocabulary(list(self.vocabulary))
        if self.plan.vocab_size != len(self.vocabulary):
            raise ParameterError("the plan's vocabulary size differs from {vocabulary}'s.", "vocabulary")
        if not 2 <= self.n_topics <= len(self.vocabulary):
            raise ParameterError("{n_topics=} must lie between 2 and the vocabulary's size ({size}).", "n_topics",
                                 self.n_topics, size=len(self.vocabulary))
        if self.n_topics > self.plan.max_kept_words:
            raise ParameterError("{n_topics=} must be at most {max_words=} (the words the second sum holds, at least"
                                 " one a topic).", "n_topics", self.n_topics,
                                 values={"max_words": self.plan.max_words})
        if self.plan.committee:
            raise ParameterError("{plan}'s committee mode is not served by this round's server: serve it with"
                                 " dptopic.service.secure_sum.committee_app.create_committee_app, or plan without a"
                                 " committee.", "plan")
        self.directory = check_directory(self.directory, where="the config's directory")
        if len(self.directory["members"]) != self.plan.n:
            raise ParameterError("{directory} lists {listed} invited contributors, but the round takes {n} (the plan's"
                                 " n): give the same number, or invite again.", "directory",
                                 listed=len(self.directory["members"]), n=self.plan.n, others=("min_contributors",),
                                 key="service.secure_sum.config.directory_size")
        check_directory_plan(self.directory, self.plan)
        need = self.plan.upload_bytes(max(self.plan.dims)) + 64
        if self.max_body_bytes < need:
            raise ParameterError("{max_body_bytes=} is below the largest secure-sum upload here ({need} bytes): raise"
                                 " it.", "max_body_bytes", self.max_body_bytes, need=need)

    @property
    def round_id(self) -> str:
        """The round's id: the operator's, from the directory."""
        return self.directory["round_id"]


def check_directory_plan(directory: dict, plan: SecureSumPlan) -> None:
    """The plan and mode a single round's ``directory`` names (:mod:`dptopic.protocol.secure_sum.enrollment`'s note)
    against the ``plan`` a server is started with; one line otherwise (the contributors' invitations would refuse it). A
    directory that names neither (a round in cohorts' round, each checked against the cohort directory's layout) is
    not checked here."""
    named = directory.get("committee")
    if named is not None and bool(named) != bool(plan.committee):
        raise ParameterError("{directory} names a " + ("committee round: serve it in the committee mode"
                             if named else "round without a committee: serve it without the committee mode")
                             + " (the mode its invitations name), or invite again.", "directory")
    layout = directory.get("layout")
    diff = "" if layout is None else layout_difference(layout_of(plan), layout,
                                                         "{key} {pinned} in the invitations, {stated} in the plan")
    if diff:
        raise ParameterError("{directory} was written for another plan of the round: {diff}; start the server with"
                             " the invitations' plan, or invite again.", "directory", diff=diff)


def late_registration(contributor: str, state: str, reason: str | None) -> ApiError:
    """The refusal of a registration that comes once the roster has closed (409 ``round_closed``)."""
    return ApiError(409, "round_closed", f"the round's roster has closed without contributor {contributor!r} (the round"
                                         f" is at step {state!r}" + (f": {reason}" if reason else "") + "): it"
                                         " registered too late; nothing stored.")


def roster_line(plan, registration_deadline: float | None, admin: bool) -> str:
    """What a round's server says at start of its roster and of the invited contributors who never register
    (no-shows): when the roster closes, and that each no-show is one of the plan's F dropouts.
    ``registration_deadline``: a Unix time, or None; ``admin``: whether the server has an admin token (which can
    close the roster)."""
    n, F = int(plan.n), int(plan.dropouts)
    early = []
    if registration_deadline is not None:
        early.append("at its registration deadline ("
                     + time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(registration_deadline)) + ")")
    if admin:
        early.append("when the admin closes it (POST /v1/admin/secure/close)")
    line = f"roster: it closes once all {n} invited contributors have registered"
    if early:
        line += (f"; {' or '.join(early)}, with those registered so far: at least {n - F} (N - F), each with the"
                 " threshold of its neighbours among them, or the round fails")
    return (line + f"; a contributor who never registers is one of the {F} dropouts the plan tolerates"
            + ("" if early else ": without a registration deadline or an admin token, one no-show holds the round at"
               " its keys step") + ".")


def check_keys_message(members: dict, round_id: str, contributor: str, keys, signature) -> None:
    """A key set's registration checked as both round servers check it (the default round's keys, the committee
    mode's prekey bundle): signed by ``contributor``'s invitation key over the keys message (:func:`check_signed`),
    and well-formed (400 ``bad_keys`` in one line otherwise)."""
    check_signed(members, contributor, signature, ss.keys_message(round_id, contributor, keys)
                 if isinstance(keys, dict) and {"c", "s", "b"} <= set(keys) else b"")
    why = ss.check_keys(keys)
    if why is not None:
        raise ApiError(400, "bad_keys", why + ".")


def check_signed(members: dict, contributor: str, signature, msg: bytes) -> None:
    """Refuse (403) a message from ``contributor`` unless the operator's directory ``members`` lists it and
    ``signature`` is its invitation key's over ``msg``: the one check of both round servers (this one and the
    committee mode's)."""
    if contributor not in members:
        raise ApiError(403, "not_enrolled", f"contributor {str(contributor)[:40]!r} holds no invitation to this round"
                                            " (it is not in the operator's directory).")
    if not verify(bytes.fromhex(members[contributor]), signature, msg):
        raise ApiError(403, "bad_signature", f"the request is not signed by {contributor!r}'s invitation key (or"
                                             " not over this step's message): refused.")
