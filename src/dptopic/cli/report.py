"""``report``: one self-contained HTML file (topics, evaluation, privacy card, audit) a review board can file."""
from __future__ import annotations

import sys

from .. import load
from .._io import atomic_write_bytes, check_output_file
from ..errors import DPTopicError
from ..reporting.page import audit_for_page, is_report, page_evaluation, report_page
from ..reporting.terminal import make_console
from ._common import owner_only_note, refuse_show_unsupported
from ._flags import flag_errors
from ._run_common import read_into_model


def cmd_report(a):
    out = check_output_file(a.out, is_report, overwrite=a.overwrite, what="report")
    if out.suffix.lower() not in (".html", ".htm"):
        raise DPTopicError(f"--out {a.out!r} must end in .html: the report is one HTML file.")
    if a.reference is None:
        idle = [flag for flag, on in (("--format", a.format != "auto"), ("--text-field", a.text_field != "text"),
                                      ("--reference-public", a.reference_public)) if on]
        if idle:
            raise DPTopicError(f"{'/'.join(idle)} describe{'s' if len(idle) == 1 else ''} the --reference corpus, and"
                               f" none was given: add --reference CORPUS, or drop {'/'.join(idle)}.")
    model = load(a.model)
    if a.show_unsupported:
        refuse_show_unsupported(model, a.model)
    with flag_errors({"audit": "--audit"}):
        audit, roc, audit_warning = audit_for_page(a.audit, model, a.model)
    ref = None if a.reference is None else read_into_model(model, a.reference, a.format, a.vocab, a.text_field,
                                                            parameter="reference", keep_empty=False)
    evaluation = page_evaluation(model, ref, a.reference_public, a.reference,
                                 None if a.compare_to is None else load(a.compare_to), a.compare_to,
                                 names={"reference": "--reference FILE", "reference_public": "--reference-public"})
    html, card = report_page(model, title=a.title, top=a.top, evaluation=evaluation, audit=audit, roc_png=roc,
                             source=str(a.model), show_unsupported=a.show_unsupported)
    # figures read from a reference corpus not declared public, or an audit's attack figures (computed from the
    # documents of the audited corpus), stay readable by their owner only (0600)
    sources = [flag for flag, on in (("--reference", a.reference is not None and not a.reference_public),
                                     ("the corpus 'dptopic audit' read (--audit)", audit is not None)) if on]
    atomic_write_bytes(out, html.encode("utf-8"), private=bool(sources))
    if "note" in evaluation:
        print(f"warning: {evaluation['note']}", file=sys.stderr)
    if audit_warning:
        print(audit_warning, file=sys.stderr)
    console = make_console()
    check = card.get("ledger_check")
    if isinstance(check, dict):     # the card's figures recomputed from the report's events (dptopic privacy verify)
        console.print(f"privacy figures recomputed from the report's events: {check.get('status')}")
    console.print(f"report written to {out}" + (owner_only_note(
        " and of ".join(sources), "--reference-public" if sources == ["--reference"] else None) if sources else ""))


