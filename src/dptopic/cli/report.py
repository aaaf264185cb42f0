"""``report``: one self-contained HTML file (topics, evaluation, privacy card, audit) a review board can file."""
from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

from ..errors import DPTopicError
from ._common import FORMATS, add_model_arg, make_console, positive_int

MARKER = '<meta name="generator" content="dptopic report">'


def _is_report(path: Path) -> bool:
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as fh:
            return MARKER in fh.read(4096)
    except OSError:
        return False


AUDIT_FILE_LIMIT = 64 << 20
"""The largest audit.json ``report --audit`` reads (bytes): an audit's figures are kilobytes."""


def _read_audit(spec: str | None):
    """``--audit``: an ``audit.json`` file, or the folder ``dptopic audit --out`` wrote (``audit.json`` + ``roc.png``).
    Every refusal names the file as given (for a folder, its ``audit.json``) and what is wrong with it."""
    if spec is None:
        return None, None

    p = Path(spec)
    folder = p.is_dir()
    js = p / "audit.json" if folder else p
    shown = os.path.join(spec, "audit.json") if folder else spec
    want = "give the folder 'dptopic audit --out' wrote, or its audit.json"
    if not js.is_file():
        raise DPTopicError(f"--audit {spec!r} " + ("holds no audit.json" if folder else "does not exist" if not
                           p.exists() else "is not a file") + f": {want}.")
    try:
        with open(js, "rb") as fh:
            data = fh.read(AUDIT_FILE_LIMIT + 1)
    except OSError as e:
        raise DPTopicError(f"--audit {shown!r} cannot be read ({e.strerror or type(e).__name__}): {want}.") from None
    if not data.strip():
        raise DPTopicError(f"--audit {shown!r} is empty: {want}, or run 'dptopic audit' again.")
    if len(data) > AUDIT_FILE_LIMIT:
        raise DPTopicError(f"--audit {shown!r} is larger than {AUDIT_FILE_LIMIT >> 20} MiB, which no audit.json is:"
                           f" {want}.")
    try:
        from .._io import load_json

        if b"\0" in data:           # valid UTF-8 perhaps, but no JSON (nor any text file) holds a NUL byte
            raise UnicodeDecodeError("utf-8", data, data.index(b"\0"), data.index(b"\0") + 1, "NUL byte")
        audit = load_json(data.decode("utf-8-sig"), f"--audit {shown!r}")
    except UnicodeDecodeError:
        raise DPTopicError(f"--audit {shown!r} is not UTF-8 text (a binary file?): {want}.") from None
    except json.JSONDecodeError as e:
        raise DPTopicError(f"--audit {shown!r} is not valid JSON ({e.msg}, line {e.lineno}): {want}, or run"
                           " 'dptopic audit' again.") from None
    # a LiRA audit names its attacks; a one-run audit (--design one-run) its design
    if not isinstance(audit, dict) or ("attacks" not in audit and audit.get("design") != "one-run"):
        raise DPTopicError(f"--audit {shown!r} is JSON but not a dptopic audit (no 'attacks' or one-run 'design'):"
                           f" {want}.")
    png = js.parent / "roc.png"
    return audit, (png.read_bytes() if png.is_file() else None)


def _check_audit_matches(audit: dict, model, audit_spec: str, model_spec: str) -> str | None:
    """An audit embedded in a model's report must be an audit of that model: of the same saved model (its
    fingerprint) when it was run with ``--model``, of the same trainer and parameters when run with ``--algorithm``,
    and in any case of a model making the same claim (private or not, epsilon, delta, unit); otherwise the page
    would show one model's guarantee beside another's attack. An audit.json from before dptopic recorded what it
    attacked is shown with a warning (its claim still has to match): the warning is returned (None otherwise)."""
    from ..attacks.lira import claimed_epsilon
    from ..attacks.provenance import mismatch

    privacy = getattr(model, "privacy_", None)
    mine, theirs = claimed_epsilon(privacy), audit.get("claimed_privacy")
    if not isinstance(theirs, dict):
        raise DPTopicError(f"--audit {audit_spec!r}: audit.json names no claimed privacy; run 'dptopic audit --model"
                           f" {model_spec}' again.")

    def same(x, y):
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            return (math.isinf(x) and math.isinf(y)) or math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-12)
        return x == y

    for key in ("private", "epsilon", "delta", "unit"):
        if not same(mine.get(key), theirs.get(key)):
            def show(c):
                from ..accounting.card import epsilon_text

                return (f"epsilon {epsilon_text(c.get('epsilon'))} per {c.get('unit')}" if c.get("private") and
                        isinstance(c.get("epsilon"), (int, float)) else "no guarantee")
            raise DPTopicError(f"--audit {audit_spec!r} audited the procedure of a model claiming {show(theirs)}, but"
                               f" {model_spec} claims {show(mine)}: audit this model with 'dptopic audit --model {model_spec}'.")

    # the claims match: now the model or procedure the audit attacked
    settings = audit.get("settings") if isinstance(audit.get("settings"), dict) else {}
    audited = settings.get("audited")
    if isinstance(audited, dict):
        why = mismatch(audited, model)
        if why:
            raise DPTopicError(f"--audit {audit_spec!r} is not an audit of {model_spec}: {why}; audit this model with"
                               f" 'dptopic audit --model {model_spec} --corpus CORPUS' (its training corpus).")
    elif "audited" in settings or "dptopic_version" in settings:
        # written by a dptopic that records what it attacked, but the record is missing or damaged
        raise DPTopicError(f"--audit {audit_spec!r}: audit.json does not say which model or procedure it audited"
                           " (settings.audited is missing or damaged; an audit run from Python with run_lira records"
                           f" none): run 'dptopic audit --model {model_spec}' to audit this model.")
    else:
        return (f"warning: --audit {audit_spec!r} was written by an earlier dptopic that did not record which model it"
                f" audited: only its claim is checked against {model_spec}; run 'dptopic audit --model {model_spec}'"
                " again to tie the audit to this model.")
    return None


def evaluate_on(model, reference, public: bool, reference_name: str) -> dict:
    """Evaluation figures of ``model`` on a reference corpus (already in the model's vocabulary)."""
    from ..evaluation import topic_diversity
    from ..evaluation.topic_quality import size_text

    ev = {"reference": f"{reference_name}: {size_text(reference)}"}
    quality = _topic_quality(model, reference)
    absent = quality.pop("absent_top_words", None)
    ev.update(quality)
    ev["topic diversity (top 25)"] = topic_diversity(model, 25)
    # "perplexity on the reference corpus", never "held-out": nothing here knows whether the reference documents
    # were held out of training (the training corpus itself can be given), as dptopic evaluate says "perplexity"
    try:
        ev[PERPLEXITY_LABEL + " (document completion)"] = float(model.perplexity(reference, mode="completion"))
    except (TypeError, DPTopicError):
        ev[PERPLEXITY_LABEL] = float(model.perplexity(reference))
    if getattr(model, "privacy_", {}).get("private") and not public:
        ev["note"] = reference_note("the reference documents", "--reference-public")
    if absent:      # as dptopic evaluate prints it: NPMI's -1 pairs and a missing C_v are explained on the page too
        ev["absent_top_words"] = absent
    return ev


PERPLEXITY_LABEL = "perplexity on the reference corpus"


def reference_note(documents: str, flag: str) -> str:
    """The note on figures of a private model computed from a corpus not declared public (``report --reference``,
    ``evaluate --corpus``): which figures read the documents, and that topic diversity does not."""
    return (f"outside the guarantee: the reference corpus's exact size, NPMI, C_v, UMass and perplexity read"
            f" {documents}, which the model's privacy"
            " report does not cover (topic diversity reads only the released topics, post-processing of the"
            f" release); pass {flag} when that corpus is public")


def _topic_quality(model, reference) -> dict:
    from ..evaluation import topic_quality

    top = min(10, len(model.vocabulary_))      # as evaluate: a vocabulary of fewer words gives them all
    q = topic_quality(model, reference, top_n=top)
    out = {f"NPMI (top {top}, {q.get('npmi_reference', 'document co-occurrence')})": q["npmi"],
           f"C_v (top {top})": q.get("c_v"),
           "UMass, mean over word pairs": q.get("umass_pairwise_mean")}
    if q.get("absent_top_words"):   # the caller shows it as a note, not as a figure
        out["absent_top_words"] = q["absent_top_words"]
    return out


def cmd_report(a):
    from .. import load
    from .._io import atomic_write_bytes, check_output_file
    from ..reporting import privacy_card, render_report
    from ._common import owner_only_note, read_into_model

    out = check_output_file(a.out, _is_report, overwrite=a.overwrite, what="report")
    if out.suffix.lower() not in (".html", ".htm"):
        raise DPTopicError(f"--out {a.out!r} must end in .html: the report is one HTML file.")
    if a.reference is None:
        idle = [flag for flag, on in (("--format", a.format != "auto"), ("--text-field", a.text_field != "text"),
                                      ("--reference-public", a.reference_public)) if on]
        if idle:
            raise DPTopicError(f"{'/'.join(idle)} describe{'s' if len(idle) == 1 else ''} the --reference corpus, and"
                               f" none was given: add --reference CORPUS, or drop {'/'.join(idle)}.")
    model = load(a.model)
    from ._common import refuse_show_unsupported, topic_support

    if a.show_unsupported:
        refuse_show_unsupported(model, a.model)
    supported, background = topic_support(model)
    audit, roc = _read_audit(a.audit)
    audit_warning = None if audit is None else _check_audit_matches(audit, model, a.audit, a.model)
    if audit is not None and roc is None and audit.get("design") == "one-run":   # no ROC: the bound against the claim
        from ..attacks.one_run import bound_figure

        roc = bound_figure(audit)
    if audit_warning:   # the page says so too, in the audit's settings
        settings = audit.get("settings") if isinstance(audit.get("settings"), dict) else {}
        audit = {**audit, "settings": {**settings, "attacked": "not recorded (an audit.json of an earlier dptopic):"
                                       " only its claim was checked against this model's"}}
    evaluation = None
    if a.reference is not None:
        ref = read_into_model(model, a.reference, a.format, a.vocab, a.text_field, flag="--reference",
                              keep_empty=False)
        evaluation = evaluate_on(model, ref, a.reference_public, a.reference)
    if a.compare_to is not None:
        from ..evaluation import match_models
        from ..reporting.html import match_yardstick

        m = match_models(model, load(a.compare_to))
        if evaluation is None:      # diversity reads only the released topics: shown as without --compare-to
            from ..evaluation import topic_diversity

            evaluation = {"reference": "none given (the match below reads only the two models)",
                          "topic diversity (top 25)": topic_diversity(model, 25)}
        # the other model is no part of this one's release: if it was trained on private documents without a
        # guarantee, the match carries what it learnt from them
        outside = (" outside the guarantee: it also reads the other model, which this model's privacy report does not"
                   " cover;" if getattr(model, "privacy_", {}).get("private") else "")
        evaluation[f"match to the topics of {a.compare_to} (mean cosine of {m['matched']} Hungarian-matched pairs"
                   f" over {m['shared_words']} shared words; 1 = the same topics; {match_yardstick()};{outside} reads"
                   " only the two models, not the reference corpus)"] = m["match"]
    if evaluation is None:          # diversity reads only the released topics: shown without a reference corpus too
        from ..evaluation import topic_diversity

        evaluation = {"reference": "none given: only topic diversity, which reads the released topics alone (add"
                                   " --reference FILE with held-out documents for NPMI, C_v and perplexity)",
                      "topic diversity (top 25)": topic_diversity(model, 25)}
    trainer = type(model).__name__
    card = privacy_card(getattr(model, "privacy_", None) or {}, trainer)
    topics = model.topic_words(a.top, weights=True)
    from ..evaluation.topic_quality import ranking_text, word_ranking

    html = render_report(title=a.title or f"{trainer} topic model", trainer=trainer, card=card, topics=topics,
                         evaluation=evaluation, audit=audit, roc_png=roc, source=str(a.model),
                         background=[k for k, b in enumerate(background) if b], supported=supported,
                         show_unsupported=a.show_unsupported, words_ranking=ranking_text(word_ranking(model)))
    html = html.replace("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\">" + MARKER, 1)
    # figures read from a reference corpus not declared public, or an audit's attack figures (computed from the
    # documents of the audited corpus), stay readable by their owner only (0600)
    sources = [flag for flag, on in (("--reference", a.reference is not None and not a.reference_public),
                                     ("the corpus 'dptopic audit' read (--audit)", audit is not None)) if on]
    private = bool(sources)
    atomic_write_bytes(out, html.encode("utf-8"), private=private)
    if evaluation and "note" in evaluation:
        print(f"warning: {evaluation['note']}", file=sys.stderr)
    if audit_warning:
        print(audit_warning, file=sys.stderr)
    console = make_console()
    check = card.get("ledger_check")
    if isinstance(check, dict):     # the card's figures recomputed from the report's events (dptopic privacy verify)
        console.print(f"privacy figures recomputed from the report's events: {check.get('status')}")
    console.print(f"report written to {out}" + (owner_only_note(
        " and of ".join(sources), "--reference-public" if sources == ["--reference"] else None) if private else ""))


def register(sub) -> None:
    p = sub.add_parser("report", help="one self-contained HTML report: topics, evaluation, privacy card, audit")
    add_model_arg(p)
    p.add_argument("--out", required=True, help="the .html file to write (a new file, or a report with --overwrite)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it is a dptopic report")
    p.add_argument("--reference", default=None, metavar="CORPUS",
                   help="documents for NPMI, C_v, diversity and perplexity, read in the model's vocabulary (held-out"
                        " or public documents of the domain: the page cannot tell whether they were held out of"
                        " training, so it says 'perplexity on the reference corpus')")
    p.add_argument("--reference-public", action="store_true",
                   help="the reference corpus is public (else its figures are labelled outside the guarantee)")
    p.add_argument("--format", default="auto", choices=FORMATS, help="format of --reference (auto: by name)")
    p.add_argument("--vocab", default=None, metavar="FILE",
                   help="the vocabulary file of a UCI --reference (default: next to its docword file)")
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text of --reference (default: text)")
    p.add_argument("--compare-to", default=None, metavar="MODEL",
                   help="also report how close the topics are to another saved model's (one trained without privacy"
                        " on public documents of the domain, say): NPMI alone cannot tell a corpus's own topics from"
                        " general-language ones")
    p.add_argument("--audit", default=None, metavar="DIR", help="the folder 'dptopic audit --out' wrote for this model")
    p.add_argument("--top", "--top-n", "-n", dest="top", type=positive_int, default=10,
                   help="words shown per topic (default 10; also spelt --top-n or -n)")
    p.add_argument("--show-unsupported", action="store_true",
                   help="document-level private models: also show the words of the topics that do not stand above"
                        " the noise of the release (their cards show none by default: they are mostly noise)")
    p.add_argument("--title", default=None, help="the page title")
    p.set_defaults(func=cmd_report)
