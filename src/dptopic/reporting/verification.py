"""``dptopic privacy verify`` for Python: a saved model's privacy figures recomputed from the events its report lists,
and, for a model folder, its events compared with what its trainer's parameters plan (reads no data)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .._io import _jsonable, _old_name, load_json, mismatched_arrays
from ..accounting.ledger import claims_no_guarantee
from ..accounting.verify import Verification, check_saved_card, verify_report
from ..corpus.files import not_a_regular_file
from ..errors import DPTopicError
from ..models.base import verify_saved


@dataclass(frozen=True)
class SavedVerification:
    """What :func:`verify_saved_model` found. ``check``: the figures stated and recomputed, with a status
    (:class:`~dptopic.accounting.verify.Verification`); ``no_guarantee``: they hold (or are looser than the events
    allow), but the events add up to no (epsilon, delta) guarantee (noise was added, e.g. FedLDA's tail rule)."""
    report: dict
    check: Verification
    events: str                 # the report's events as counted: "1 event repeated 256 times"

    @property
    def no_guarantee(self) -> bool:
        return (bool(self.report.get("private")) and claims_no_guarantee(self.report)
                and self.check.status in ("verified", "looser"))

    def to_dict(self) -> dict:
        """The status, the reason and every figure stated and recomputed (JSON; infinity as model.json writes it)."""
        out = _jsonable(self.check.to_dict())
        if self.no_guarantee:
            out["guarantee"] = "none"
        return out

    def raise_unless_checked(self) -> None:
        """A one-line :class:`~dptopic.errors.DPTopicError` unless the figures were checked and hold."""
        if self.check.status == "failed":
            raise DPTopicError(f"the privacy report does not match its own events: {self.check.detail}.")
        if self.check.status == "not_recomputable":
            raise DPTopicError(f"the privacy report cannot be verified: {self.check.detail}.")


SAVED = "model.save(folder), or out= of dptopic.train"
"""Where a saved model's folder comes from, as a refusal says it."""

def verify_saved_model(path) -> SavedVerification:
    """Verify the privacy report of a saved model folder (its ``model.json``; the arrays beside it must be those it was
    saved with) or of a JSON file holding a ``model.json`` or a privacy report."""
    path = str(path)
    rep, card, meta = read_saved_report(path)
    check = check_saved_card(card, verify_report(rep))
    if meta is not None:            # a model folder: its events against what its trainer's parameters plan
        check = verify_saved(meta, check)
        swapped = mismatched_arrays(path, meta) if os.path.isdir(path) else []
        if swapped:                 # the report may hold, but not for the topics beside it
            raise DPTopicError(f"{', '.join(swapped)} in {path!r} {'is' if len(swapped) == 1 else 'are'} not the"
                               " file(s) this model.json was saved with (SHA-256 differs): the privacy report does not"
                               " describe the topics in this folder; restore the folder from its source, or train the"
                               " model again.")
    return SavedVerification(rep, check, events_text(rep))


def read_saved_report(path: str) -> tuple[dict, dict | None, dict | None]:
    """The privacy report of a saved model folder, or of a JSON file holding a model's ``model.json`` or a report;
    the privacy card saved beside it (``model.json``'s ``privacy_card``), if any; and the whole ``model.json`` when
    the report came from one (its class and parameters say what the run should have spent)."""
    folder = os.path.isdir(path)
    if not folder and not os.path.exists(path) and os.path.isdir(_old_name(Path(path))):
        path, folder = str(_old_name(Path(path))), True   # a save interrupted between its two renames: the old one
    # a folder: its model.json alone (the report, the card, the trainer's class and parameters are all there); the
    # arrays beside it are never read, so a folder handed over without them verifies as model.json itself would
    source = os.path.join(path, "model.json") if folder else path
    odd = not_a_regular_file(source)
    if odd is not None:     # a FIFO would block, /dev/zero never end
        raise DPTopicError(f"{source!r} {odd}: pass a saved model's folder ({SAVED}) or a JSON privacy report saved to"
                           " a regular file.")
    try:
        with open(source, "rb") as fh:
            text = fh.read(-1 if folder else 64 << 20).decode("utf-8-sig")     # a model.json as loading reads it
    except FileNotFoundError:
        if folder:
            raise DPTopicError(f"{path!r} holds no model.json: pass a saved model's folder ({SAVED}) or a JSON"
                               " privacy report.") from None
        raise DPTopicError(f"{path!r} does not exist: pass a saved model's folder ({SAVED}) or a JSON privacy"
                           " report.") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DPTopicError(f"cannot read {source!r} ({getattr(e, 'strerror', None) or type(e).__name__}): pass a saved"
                           " model's folder or a JSON privacy report.") from None
    try:
        meta = load_json(text, source)
    except json.JSONDecodeError as e:
        raise DPTopicError(f"{source!r} is not valid JSON ({e.msg}, line {e.lineno}): pass a saved model's folder or"
                           " a JSON privacy report.") from None
    rep = meta.get("privacy", meta) if isinstance(meta, dict) else None
    if not isinstance(rep, dict) or "private" not in rep:
        raise DPTopicError(f"{path!r} holds no privacy report: pass a saved model's folder ({SAVED})"
                           " or a JSON privacy report (the \"privacy\" object of a model.json, or a model's"
                           " privacy_ attribute saved as JSON).")
    card = meta.get("privacy_card") if rep is not meta else None
    return rep, card if isinstance(card, dict) else None, meta if rep is not meta else None


def events_text(rep: dict) -> str:
    """The events of a report as the table counts them: "1 event repeated 256 times", "3 kinds of event (512 in
    all)"."""
    events = [e for e in (rep.get("events") or []) if isinstance(e, dict)]
    counts = [e.get("count") for e in events]
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        return f"{len(events)} event(s)"
    total = sum(counts)
    if len(events) == 1:
        return "1 event" if total == 1 else f"1 event repeated {total} times"
    return f"{len(events)} kinds of event ({total} in all)"
