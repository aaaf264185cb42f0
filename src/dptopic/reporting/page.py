"""What ``dptopic report``'s HTML page reads besides the model, and the page itself: an ``audit.json`` (read, and
checked to be an audit of this model), the evaluation figures of a reference corpus (labelled outside the guarantee
when that corpus is not public) and of another model's topics, and :func:`report_page`, the self-contained HTML."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

from .._io import load_json
from ..accounting.card import epsilon_text, privacy_card
from ..attacks.lira import claimed_epsilon
from ..attacks.one_run import bound_figure
from ..attacks.provenance import mismatch
from ..dataset_ledger.charge import current_total
from ..errors import DPTopicError, ParameterError
from ..evaluation import match_models, topic_diversity, topic_quality
from ..evaluation.topic_quality import ranking_text, size_text, umass_mimno_sum, word_ranking
from .html import match_yardstick, render_report
from .terminal import estimated_counts, estimated_note, placed_note, topic_support

MARKER = '<meta name="generator" content="dptopic report">'


def is_report(path: Path) -> bool:
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as fh:
            return MARKER in fh.read(4096)
    except OSError:
        return False


AUDIT_FILE_LIMIT = 64 << 20
"""The largest audit.json a report page reads (bytes): an audit's figures are kilobytes."""


def read_audit(spec: str | None):
    """The audit ``spec`` names: an ``audit.json`` file, or the folder an audit wrote (``audit.json`` + ``roc.png``).
    Every refusal is a :class:`~dptopic.errors.ParameterError` naming ``audit``, with the file as given (for a folder,
    its ``audit.json``) and what is wrong with it."""
    if spec is None:
        return None, None

    p = Path(spec)
    folder = p.is_dir()
    js = p / "audit.json" if folder else p
    shown = os.path.join(spec, "audit.json") if folder else spec
    want = "give the folder 'dptopic audit' wrote, or its audit.json"

    def refused(template: str, **fields) -> ParameterError:
        return ParameterError("{audit} {shown!r} " + template, "audit", spec, shown=shown, want=want, **fields)

    if not js.is_file():
        raise ParameterError("{audit} {spec!r} " + ("holds no audit.json" if folder else "does not exist" if not
                             p.exists() else "is not a file") + ": {want}.", "audit", spec, spec=spec, want=want)
    try:
        with open(js, "rb") as fh:
            data = fh.read(AUDIT_FILE_LIMIT + 1)
    except OSError as e:
        raise refused("cannot be read ({why}): {want}.", why=e.strerror or type(e).__name__) from None
    if not data.strip():
        raise refused("is empty: {want}, or run 'dptopic audit' again.")
    if len(data) > AUDIT_FILE_LIMIT:
        raise refused("is larger than {mib} MiB, which no audit.json is: {want}.", mib=AUDIT_FILE_LIMIT >> 20)
    try:
        if b"\0" in data:           # valid UTF-8 perhaps, but no JSON (nor any text file) holds a NUL byte
            raise UnicodeDecodeError("utf-8", data, data.index(b"\0"), data.index(b"\0") + 1, "NUL byte")
        audit = load_json(data.decode("utf-8-sig"), f"audit {shown!r}")
    except UnicodeDecodeError:
        raise refused("is not UTF-8 text (a binary file?): {want}.") from None
    except json.JSONDecodeError as e:
        raise refused("is not valid JSON ({why}, line {line}): {want}, or run 'dptopic audit' again.", why=e.msg,
                      line=e.lineno) from None
    # a LiRA audit names its attacks; a one-run audit its design
    if not isinstance(audit, dict) or ("attacks" not in audit and audit.get("design") != "one-run"):
        raise refused("is JSON but not a dptopic audit (no 'attacks' or one-run 'design'): {want}.")
    png = js.parent / "roc.png"
    return audit, (png.read_bytes() if png.is_file() else None)


def check_audit_matches(audit: dict, model, audit_spec: str, model_spec: str) -> str | None:
    """An audit embedded in a model's report must be an audit of that model: of the same saved model (its
    fingerprint) when it audited a saved model, of the same trainer and parameters when it audited a procedure,
    and in any case of a model making the same claim (private or not, epsilon, delta, unit); otherwise the page
    would show one model's guarantee beside another's attack. An audit.json from before dptopic recorded what it
    attacked is shown with a warning (its claim still has to match): the warning is returned (None otherwise).
    Refusals are :class:`~dptopic.errors.ParameterError` naming ``audit`` (``audit_spec``, as given)."""
    def refused(template: str, **fields) -> ParameterError:
        return ParameterError("{audit} {spec!r}" + template, "audit", audit_spec, spec=audit_spec, model=model_spec,
                              **fields)

    privacy = getattr(model, "privacy_", None)
    mine, theirs = claimed_epsilon(privacy), audit.get("claimed_privacy")
    if not isinstance(theirs, dict):
        raise refused(": audit.json names no claimed privacy; audit {model} again ('dptopic audit' on it).")

    def same(x, y):
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            return (math.isinf(x) and math.isinf(y)) or math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-12)
        return x == y

    for key in ("private", "epsilon", "delta", "unit"):
        if not same(mine.get(key), theirs.get(key)):
            def show(c):
                return (f"epsilon {epsilon_text(c.get('epsilon'))} per {c.get('unit')}" if c.get("private") and
                        isinstance(c.get("epsilon"), (int, float)) else "no guarantee")
            raise refused(" audited the procedure of a model claiming {theirs}, but {model} claims {mine}: audit this"
                          " model ('dptopic audit' on {model}).", theirs=show(theirs), mine=show(mine))

    # the claims match: now the model or procedure the audit attacked
    settings = audit.get("settings") if isinstance(audit.get("settings"), dict) else {}
    audited = settings.get("audited")
    if isinstance(audited, dict):
        why = mismatch(audited, model)
        if why:
            raise refused(" is not an audit of {model}: {why}; audit this model ('dptopic audit' on {model} and its"
                          " training corpus).", why=why)
    elif "audited" in settings or "dptopic_version" in settings:
        # written by a dptopic that records what it attacked, but the record is missing or damaged
        raise refused(": audit.json does not say which model or procedure it audited (settings.audited is missing or"
                      " damaged; an audit run from Python with run_lira records none): audit this model ('dptopic"
                      " audit' on {model}).")
    else:
        return (f"warning: the audit {audit_spec!r} was written by an earlier dptopic that did not record which model"
                f" it audited: only its claim is checked against {model_spec}; audit {model_spec} again ('dptopic"
                " audit' on it) to tie the audit to this model.")
    return None


def evaluate_on(model, reference, public: bool, reference_name: str, names=None) -> dict:
    """Evaluation figures of ``model`` on a reference corpus (already in the model's vocabulary); ``names``: how the
    caller declares the reference public (``names["reference_public"]``; by default ``reference_public=True``)."""
    ev = {"reference": f"{reference_name}: {size_text(reference)}"}
    quality = topic_quality_figures(model, reference)
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
        ev["note"] = reference_note("the reference documents",
                                    (names or {}).get("reference_public", "reference_public=True"))
    if absent:      # as dptopic evaluate prints it: NPMI's -1 pairs and a missing C_v are explained on the page too
        ev["absent_top_words"] = absent
    return ev


PERPLEXITY_LABEL = "perplexity on the reference corpus"


def reference_note(documents: str, public: str) -> str:
    """The note on figures of a private model computed from a corpus not declared public (a report's reference
    documents, an evaluation's corpus): which figures read the documents, and that topic diversity does not;
    ``public``: how the caller declares the corpus public."""
    return (f"outside the guarantee: the reference corpus's exact size, NPMI, C_v, UMass and perplexity read"
            f" {documents}, which the model's privacy"
            " report does not cover (topic diversity reads only the released topics, post-processing of the"
            f" release); pass {public} when that corpus is public")


def evaluation_figures(model, corpus, *, top_n: int = 10, window=None, mode: str = "completion", seed=0,
                       reference_name=None, compare=None, compare_name=None, corpus_public: bool = False,
                       names=None) -> dict:
    """What ``dptopic evaluate`` reports of ``model`` on ``corpus`` (read in its vocabulary):
    :func:`~dptopic.evaluation.topic_quality`'s figures over the ``top_n`` top words (at most the vocabulary's size),
    the perplexity in ``mode``, Mimno's UMass sum, and, against ``compare`` (another model, named ``compare_name``),
    how close the topics are. A private model's figures that read documents not declared public (``corpus_public``)
    carry the note that they lie outside its guarantee (topic diversity reads only the released topics); ``names``:
    how the caller names ``corpus`` and ``corpus_public`` in that note (by default as these parameters)."""
    top_n = min(top_n, len(model.vocabulary_))
    ppl = model.perplexity(corpus, mode=mode, seed=seed)
    q = topic_quality(model, corpus, top_n=top_n, window=window, reference_name=reference_name)
    q["perplexity"], q["perplexity_mode"] = ppl, mode
    q["umass_mimno_sum"] = umass_mimno_sum(model, corpus, top_n)  # absent top words: said once, absent_top_words
    private = bool(getattr(model, "privacy_", {}).get("private"))
    if compare is not None:
        q["match"] = match_models(model, compare)
        q["match"]["reference_model"] = str(compare_name)
        if private:     # as the report's comparison labels it
            q["match"]["note"] = ("outside the guarantee: it also reads the other model, which this model's privacy"
                                  " report does not cover")
    if private and not corpus_public:
        names = names or {}
        q["note"] = reference_note(f"the documents of {names.get('corpus', 'corpus')}",
                                   names.get("corpus_public", "corpus_public=True"))
    return q


def topic_quality_figures(model, reference) -> dict:
    top = min(10, len(model.vocabulary_))      # as evaluate: a vocabulary of fewer words gives them all
    q = topic_quality(model, reference, top_n=top)
    out = {f"NPMI (top {top}, {q.get('npmi_reference', 'document co-occurrence')})": q["npmi"],
           f"C_v (top {top})": q.get("c_v"),
           "UMass, mean over word pairs": q.get("umass_pairwise_mean")}
    if q.get("absent_top_words"):   # the caller shows it as a note, not as a figure
        out["absent_top_words"] = q["absent_top_words"]
    return out


def audit_for_page(spec, model, model_spec: str):
    """``(audit, roc_png, warning)`` of the audit ``spec`` names (all None without one), checked to be an audit of
    ``model`` (:func:`check_audit_matches`); a one-run audit without an ROC figure gets its bound against the claim."""
    audit, roc = read_audit(spec)
    if audit is None:
        return None, None, None
    warning = check_audit_matches(audit, model, spec, model_spec)
    if roc is None and audit.get("design") == "one-run":     # no ROC: the bound against the claim
        roc = bound_figure(audit)
    if warning:   # the page says so too, in the audit's settings
        settings = audit.get("settings") if isinstance(audit.get("settings"), dict) else {}
        audit = {**audit, "settings": {**settings, "attacked": "not recorded (an audit.json of an earlier dptopic):"
                                       " only its claim was checked against this model's"}}
    return audit, roc, warning


def page_evaluation(model, reference=None, reference_public: bool = False, reference_name: str = "",
                    other=None, other_name: str = "", names=None) -> dict:
    """The page's evaluation: the figures of ``reference`` (documents read in the model's vocabulary,
    :func:`evaluate_on`), the match to ``other``'s topics (another saved model), and topic diversity, which reads the
    released topics alone, in any case. ``names``: how the caller names ``reference`` and ``reference_public`` (by
    default as these parameters)."""
    names = names or {}
    evaluation = None if reference is None else evaluate_on(model, reference, reference_public, reference_name, names)
    if other is not None:
        m = match_models(model, other)
        if evaluation is None:      # diversity reads only the released topics: shown as without the other model
            evaluation = {"reference": "none given (the match below reads only the two models)",
                          "topic diversity (top 25)": topic_diversity(model, 25)}
        # the other model is no part of this one's release: if it was trained on private documents without a
        # guarantee, the match carries what it learnt from them
        outside = (" outside the guarantee: it also reads the other model, which this model's privacy report does not"
                   " cover;" if getattr(model, "privacy_", {}).get("private") else "")
        evaluation[f"match to the topics of {other_name} (mean cosine of {m['matched']} Hungarian-matched pairs"
                   f" over {m['shared_words']} shared words; 1 = the same topics; {match_yardstick()};{outside} reads"
                   " only the two models, not the reference corpus)"] = m["match"]
    if evaluation is None:          # diversity reads only the released topics: shown without a reference corpus too
        evaluation = {"reference": "none given: only topic diversity, which reads the released topics alone (add"
                                   f" {names.get('reference', 'reference=')} with held-out documents for NPMI, C_v"
                                   " and perplexity)",
                      "topic diversity (top 25)": topic_diversity(model, 25)}
    return evaluation


def report_page(model, *, title=None, top: int = 10, evaluation=None, audit=None, roc_png=None, source: str = "",
                show_unsupported: bool = False) -> tuple[str, dict]:
    """``(html, card)``: the self-contained HTML page of ``model`` (marked as a dptopic report, :func:`is_report`) and
    the privacy card it shows."""
    supported, background = topic_support(model)
    trainer = type(model).__name__
    # the total of its documents as the ledger states it now, not as of the fit (or a line saying it was not read)
    card = privacy_card(current_total(getattr(model, "privacy_", None) or {}), trainer)
    from ..moments.vector_prior import model_floor  # the estimators: read when a page is made, not at start-up

    topics = model.topic_words(top, weights=True, mark_placed=True)
    notes = ". ".join(x for x in (estimated_note(model), placed_note(model)) if x) or None   # which words, what '*' is
    html = render_report(title=title or f"{trainer} topic model", trainer=trainer, card=card,
                         topics=topics, evaluation=evaluation,
                         audit=audit,
                         roc_png=roc_png, source=source, background=[k for k, b in enumerate(background) if b],
                         supported=supported, show_unsupported=show_unsupported,
                         words_ranking=ranking_text(word_ranking(model)), words_note=notes,
                         floor=model_floor(model, top),
                         estimated=estimated_counts(model, model.topic_words(top)))
    return html.replace("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\">" + MARKER, 1), card
