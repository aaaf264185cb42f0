"""One self-contained HTML file a review board can read and file: inline CSS, inline SVG bar charts,
images as data URIs, no script and nothing fetched from anywhere."""
from __future__ import annotations

import base64
import datetime as _dt
import json
import math
import unicodedata
from html import escape
from pathlib import Path

from ..accounting.card import LARGE_DELTA, STRONG_EPSILON_LIMIT, epsilon_text, vocabulary_text
from ..accounting.verify import rounded_up
from ..errors import DPTopicError

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:26px;margin:8px 0 4px}h2{font-size:20px;margin:34px 0 10px;border-bottom:2px solid #dde2e8;padding-bottom:4px}
.sub{color:#5b6672;font-size:14px}
.badge{display:inline-block;padding:10px 16px;border-radius:8px;margin:14px 0;font-size:18px;font-weight:600}
.full{background:#e3f4e8;color:#17632f;border:1px solid #9fd6af}.partial{background:#fff4d6;color:#7a5a00;border:1px solid #f0d27a}
.weak{background:#fff4d6;color:#7a5a00;border:1px solid #f0d27a}
.none{background:#fde4e4;color:#8a1c1c;border:1px solid #f0a8a8}
table{border-collapse:collapse;width:100%;background:#fff;font-size:14px}
td,th{border:1px solid #dde2e8;padding:6px 9px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#eef1f5;width:26%;min-width:7.5em;overflow-wrap:normal;word-break:normal;hyphens:manual}
table.wide{table-layout:fixed;font-size:13px}table.wide th{width:auto;min-width:0;overflow-wrap:anywhere}
table.wide td,table.wide th{padding:5px 6px}
.num{text-align:right;font-variant-numeric:tabular-nums}
.topics{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:12px}
.topic{background:#fff;border:1px solid #dde2e8;border-radius:6px;padding:8px 10px}
.topic h3{font-size:14px;margin:0 0 4px}.topic.unsupported{background:#f1f2f4;border-style:dashed;color:#5b6672}.note{font-size:13px;color:#5b6672}
.warn{background:#fff4d6;border-left:4px solid #e0b400;padding:8px 12px;margin:10px 0;font-size:14px}
pre{background:#fff;border:1px solid #dde2e8;padding:10px;overflow:auto;font-size:12px;white-space:pre-wrap;
overflow-wrap:anywhere}
img{max-width:100%;background:#fff;border:1px solid #dde2e8}
.badge,.warn,.full,.partial,.weak,.none,th{-webkit-print-color-adjust:exact;print-color-adjust:exact}
.print-only{display:none}
@media print{
body{background:#fff}main{max-width:none;padding:0}
details{display:none}.print-only{display:block}
h2,h3{break-after:avoid}tr,.topic,.badge,.warn,img{break-inside:avoid}
table{font-size:12px}
}
"""


def _fmt(x, digits=4) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int,)) and not isinstance(x, bool):
        return str(x)
    try:
        f = float(x)
    except (TypeError, ValueError, OverflowError):
        return escape(str(x))
    if math.isinf(f):
        return "∞"
    if math.isnan(f):   # never "nan" on a page a review board files
        return "undefined"
    return f"{f:.{digits}g}"


def _fmt_eps(x, digits=4) -> str:
    """An epsilon: rounded up at ``digits`` significant digits, never down
    (:func:`~dptopic.accounting.card.epsilon_text`)."""
    if x is None:
        return "—"
    text = epsilon_text(x, digits)
    return "∞" if text == "inf" else text


def _fmt_delta(x, digits=3) -> str:
    """A delta: rounded up, as an epsilon is (a delta shown is never smaller than the one proven)."""
    return "0" if x == 0 else _fmt_eps(x, digits)


def _fmt_lower(x, digits=3) -> str:
    """A lower bound (the audit's empirical epsilon): rounded down at ``digits`` significant digits, never up."""
    try:
        f = float(x)
    except (TypeError, ValueError, OverflowError):
        return "—" if x is None else escape(str(x))
    if not math.isfinite(f):
        return _fmt(f, digits)
    return f"{rounded_up(f, digits, down=True):.{digits}g}"


def _text(x) -> str:
    """A card field as text: "—" where it is missing."""
    return "—" if x is None or x == "" else escape(str(x))


def _as_list(x) -> list:
    """A list field of an (edited) report: a list or tuple as it is, nothing for None, anything else as one item."""
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _rows(pairs) -> str:
    return "".join(f"<tr><th>{escape(str(k))}</th><td>{v}</td></tr>" for k, v in pairs)


LDA_RUN_TO_RUN_MATCH = (0.74, 0.79)
"""The yardstick beside a topic match (a report's comparison to another model): the match of two runs of
non-private LDA that differ only in their seed, lowest and highest of the three pairs of seeds 0, 1 and 2, with 20
topics on the State of the Union paragraphs (the demo corpus's training split). A private model that matches a
reference this well is as close to it as LDA comes to itself. Measured with::

    from itertools import combinations
    import dptopic
    from dptopic.datasets import load_sotu
    from dptopic.evaluation import match_models
    train, _ = load_sotu().position_split(0.2)
    runs = [dptopic.LDA(n_topics=20, seed=s, verbose=0).fit(train) for s in range(3)]
    print([round(match_models(a, b)["match"], 3) for a, b in combinations(runs, 2)])   # [0.744, 0.771, 0.789]
"""


def match_yardstick() -> str:
    """The words that put a topic match beside :data:`LDA_RUN_TO_RUN_MATCH`."""
    lo, hi = LDA_RUN_TO_RUN_MATCH
    return (f"yardstick: two runs of non-private LDA that differ only in their seed match {lo:.2f} to {hi:.2f} (20"
            " topics, State of the Union paragraphs; it varies by corpus)")


LABEL_UNITS = 14
"""A topic chart shows this many characters of a word (a wide CJK character counts two); a longer word is cut at
the end with an ellipsis, and its tooltip (an SVG <title>) holds it whole."""
UNIT_PX = 7.0   # about one character of the 11 px label font (a little over its average: "m" and "w" are wide)
LABEL_GAP = 8   # px between the label column and the bars: a label in a wider font does not touch its bar


def _units(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def _label(word: str) -> str:
    """``word`` as a chart shows it: at most LABEL_UNITS units, the last of them an ellipsis when it is cut."""
    if _units(word) <= LABEL_UNITS:
        return word
    out = ""
    for c in word:
        if _units(out + c) > LABEL_UNITS - 1:
            break
        out += c
    return out + "…"


def _topic_svg(words, weights, width=230, bar_h=15) -> str:
    top = max(weights) if len(weights) and max(weights) > 0 else 1.0
    labels = [_label(str(w)) for w in words]
    # the label column fits the longest label shown (bounded: LABEL_UNITS); labels start at its left edge, so a
    # label in a font wider than UNIT_PX runs into its bar rather than losing its first letters
    label_w, gap = min(LABEL_UNITS, max([_units(t) for t in labels] or [1])) * UNIT_PX + 2 + LABEL_GAP, 2
    h = len(words) * (bar_h + gap)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" role="img">']
    for i, (w, shown, p) in enumerate(zip(words, labels, weights)):
        y = i * (bar_h + gap)
        bw = max(1.0, (width - label_w - 44) * float(p) / top)
        parts.append(f'<text x="2" y="{y + bar_h - 4}" font-size="11"><title>{escape(str(w))}</title>{escape(shown)}'
                     '</text>'
                     f'<rect x="{label_w:.1f}" y="{y}" width="{bw:.1f}" height="{bar_h}" fill="#4c78a8"/>'
                     f'<text x="{label_w + bw + 3:.1f}" y="{y + bar_h - 4}" font-size="10" fill="#5b6672">{float(p):.3g}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _ledger_check(check) -> str:
    """The card's ``ledger_check``: whether the figures recompute from the events the report lists."""
    if not isinstance(check, dict):
        return "—"
    status = str(check.get("status", ""))
    label = {"verified": "verified", "looser": "valid, looser than its events", "failed": "FAILED",
             "not_recomputable": "not recomputable"}.get(status, status)
    cls = "warn" if status == "failed" else "note"
    return (f"<b>{escape(label)}</b>: <span class='{cls}'>{escape(str(check.get('detail', '')))}</span>"
            " <span class='note'>(dptopic privacy verify; what is checked: the figures, recomputed from the events,"
            " and the vocabulary's source and secure noise against the rest of the folder; the theorem and scope text"
            " are shown as stored)</span>")


def _weak(card: dict) -> bool:
    """Whether the card's headline lies outside the range it calls meaningful: epsilon above
    :data:`~dptopic.accounting.card.STRONG_EPSILON_LIMIT` or delta above :data:`~dptopic.accounting.card.LARGE_DELTA`,
    the card's own rule for its strength note."""
    try:
        eps, delta = float(card.get("epsilon")), float(card.get("delta") or 0.0)
    except (TypeError, ValueError, OverflowError):
        return bool(card.get("strength_note"))
    return not eps <= STRONG_EPSILON_LIMIT or delta > LARGE_DELTA or bool(card.get("strength_note"))


def _privacy_section(card: dict) -> str:
    g = card["guarantee"]
    seeded = bool(card.get("noise_reproducible"))
    if g == "none":
        badge = f'<div class="badge none">No differential privacy guarantee: {escape(str(card.get("reason", "")))}</div>'
    else:
        d = "" if card.get("delta") is None else f", δ = {_fmt_delta(card['delta'])}"
        what = "partial guarantee: see what is not covered" if g == "partial" else "guarantee"
        weak = _weak(card)
        per_word = str(card.get("privacy_unit") or "").startswith("word")
        if weak:        # the card's strength note says why (above epsilon 16 or delta 1e-3 it calls a guarantee weak)
            what += ("; " if g == "partial" else ", ") + "weak: see the note below"
        elif per_word:  # the range above is stated per document or per user; one word's epsilon is not one of those
            what += ("; " if g == "partial" else ", ") + ("per word only: a document of L words is protected at"
                                                          " L × ε (group privacy; see the per-document row)")
            weak = True
        spent = card.get("dataset_total") if isinstance(card.get("dataset_total"), dict) else {}
        if spent.get("exceeds_model"):  # the dataset has given more than this model's epsilon (docs/budget.md)
            what += ("; " if g == "partial" or weak else ", ") + "this dataset's total is larger: see below"
            weak = True
        if seeded:      # whoever knows the seed can regenerate the noise: not a clean guarantee
            what += ", only while the seed stays secret: the noise is reproducible from it"
        cls = "partial" if seeded or g == "partial" else "weak" if weak else g
        badge = (f'<div class="badge {cls}">ε = {_fmt_eps(card["epsilon"])}{d} per'
                 f' {escape(str(card.get("privacy_unit")))} ({what})</div>')
        if spent.get("line"):
            badge += (f'<div class="{"warn" if spent.get("exceeds_model") else "note"}">Dataset'
                      f' {escape(str(spent.get("dataset")))}: {escape(str(spent["line"]))}</div>')
        if card.get("guarantee_note"):
            badge += f'<div class="warn">{escape(str(card["guarantee_note"]))}</div>'
        if card.get("pure_note"):
            badge += f'<div class="note">{escape(str(card["pure_note"]))}</div>'
        if card.get("strength_note"):
            badge += f'<div class="warn">{escape(str(card["strength_note"]))}</div>'
    if seeded:
        badge += (f'<div class="warn"><b>Noise reproducible:</b> {escape(str(card.get("seed_warning") or ""))}'
                  '</div>')
    acc = card.get("accounting_method") or {}
    acc_html = "<br>".join(f"<b>{escape(str(k))}</b>: {escape(str(v))}" for k, v in acc.items()) if isinstance(acc, dict) \
        else escape(str(acc))
    acc_html = acc_html or "—"
    impl = card.get("implementation")
    impl = impl if isinstance(impl, dict) else {}
    noise = impl.get("noise")
    if g == "none" and card.get("privacy_unit"):     # the events' unit: shown as the terminal card does, labelled
        unit = (f"{_text(card.get('privacy_unit'))} <span class='note'>("
                f"{escape(str(card.get('privacy_unit_note') or 'no differential privacy guarantee'))})</span>")
        why = str(card.get("epsilon_is") or "none")
        guarantee = "none" + ("" if why == "none" else f" <span class='note'>({escape(why)})</span>")
    elif g == "none":
        unit = "none: no differential privacy guarantee"
        why = str(card.get("epsilon_is") or "none")
        guarantee = "none" + ("" if why == "none" else f" <span class='note'>({escape(why)})</span>")
    else:
        unit = _text(card.get("privacy_unit"))
        guarantee = (f"{_fmt_eps(card.get('epsilon'))}, {_fmt_delta(card.get('delta'))}"
                     f" <span class='note'>({escape(str(card.get('epsilon_is')))})</span>")
    rows = [("privacy unit", unit),
            ("what this protects", _text(card.get("protects"))),
            ("ε, δ (the guarantee)", guarantee),
            ("DP flavour", _text(card.get("dp_flavour"))),
            ("trust model", _text(card.get("trust_model"))),
            ("neighbouring relation", _text(card.get("neighbouring_relation"))),
            ("theorem", _text(card.get("theorem"))),
            ("accounting method", acc_html),
            ("implementation", escape(f"{impl.get('library')} {impl.get('version')}; noise: "
                                      f"{'none added' if noise is None else noise}"
                                      f"{' (secure, OS CSPRNG)' if impl.get('secure_noise') else ''}")),
            ("randomness", _text(impl.get("randomness"))),
            ("noise reproducible", "<b>YES</b>: an explicit seed was given" if seeded else "no"),
            ("recomputed from its events", _ledger_check(card.get("ledger_check"))),
            ("what is covered", _text(card.get("covered"))),
            ("what is NOT covered", _text(card.get("not_covered")))]
    if noise is None and not seeded:    # no noise was added: there is nothing to reproduce
        rows = [r for r in rows if r[0] != "noise reproducible"]
    if not card.get("protects"):        # no guarantee, or a unit the card cannot put in plain words
        rows = [r for r in rows if r[0] != "what this protects"]
    vocabulary = vocabulary_text(card)
    if vocabulary:                      # where the released words came from; a word list by name, size and hash
        rows.insert(next(i for i, r in enumerate(rows) if r[0] == "what is covered"), ("vocabulary", escape(vocabulary)))
    if card.get("user_bound"):          # a guarantee per person: how each person's contribution was bounded
        rows.insert(2, ("each person's contribution", _text(card["user_bound"])))
    if card.get("user_field"):          # which field of the input named the person
        rows.insert(2, ("person field", _text(card["user_field"])))
    for key, name in (("group_privacy", "group privacy"), ("replacement", "one person replaced")):
        if isinstance(card.get(key), dict) and card[key].get("note"):   # computed from the events, never k x ε
            rows.insert(next(i for i, r in enumerate(rows) if r[0] == "what is covered"), (name, _text(card[key]["note"])))
    words = card.get("word_selection")
    if isinstance(words, dict) and words.get("note"):     # the false-word control of a choice by noisy counts
        rows.insert(next(i for i, r in enumerate(rows) if r[0] == "what is covered"),
                    ("kept words", _text(words.get("note"))))
    for key, name in (("public_input", "public input"), ("public_vectors", "public vectors")):
        if isinstance(card.get(key), dict) and card[key].get("summary"):    # read in the clear, outside the epsilon
            rows.insert(next(i for i, r in enumerate(rows) if r[0] == "what is covered"),
                        (name, _text(card[key]["summary"])))
    if card.get("fed_composition"):     # FedLDA: per entry x entries (x rounds) = per user, visibly
        rows.insert(2, ("per-user ε (FedLDA)", _text(card.get("fed_composition"))))
    if card.get("epsilon_by_colluders"):        # a secure sum: epsilon by the number of dishonest entries
        rows.insert(2, ("ε by colluding contributors", _text(card.get("epsilon_by_colluders"))))
    if card.get("report_words_note"):
        rows.append(("report words", _text(card.get("report_words_note"))))
    if card.get("fits"):
        rows.append(("other fits", _text(card.get("fits"))))
    per = card.get("per_document")
    if isinstance(per, dict):
        ex = per.get("examples")
        rows.append(("per document (word-level ε)", escape(str(per.get("rule", ""))) + "<br>" + ", ".join(
            f"L = {escape(str(L))}: ε = {_fmt_eps(e)}" for L, e in (ex.items() if isinstance(ex, dict) else ()))))
    elif per:
        rows.append(("per document (word-level ε)", escape(str(per))))
    figs = card.get("figures")
    figs = figs if isinstance(figs, dict) else {}
    # each figure at its own delta; "—" where it has none (its "what" says what it is): never the headline's
    fig_rows = "".join(f"<tr><td>{escape(str(f.get('what')))}</td><td class='num'>{_fmt_eps(f.get('epsilon'))}</td>"
                       f"<td class='num'>{_fmt_delta(f.get('delta'))}</td></tr>"
                       for f in figs.values() if isinstance(f, dict))
    fig_table = ("<h3>Composition figures side by side</h3><table><tr><th>method</th><th>ε</th><th>δ</th></tr>"
                 f"{fig_rows}</table>") if fig_rows else ""
    if fig_rows and card.get("figures_note"):
        fig_table += f"<div class='note'>{escape(str(card['figures_note']))}</div>"
    warns = "".join(f'<div class="warn">{escape(str(w))}</div>' for w in _as_list(card.get("warnings")))
    return f"<h2 id='privacy'>Privacy card</h2>{badge}{warns}<table>{_rows(rows)}</table>{fig_table}"


def _evaluation_section(evaluation: dict | None) -> str:
    if not evaluation:
        return ("<h2 id='evaluation'>Evaluation</h2><p class='note'>No evaluation was given: give the report held-out"
                " reference documents to add NPMI, diversity and perplexity.</p>")
    ref = evaluation.get("reference", "")
    notes = "".join(f'<div class="warn">{escape(str(evaluation[k]))}</div>' for k in _EVALUATION_NOTES
                    if evaluation.get(k))
    rows = [(k, _fmt(v)) for k, v in evaluation.items()
            if k != "reference" and k not in _EVALUATION_NOTES and not isinstance(v, (dict, list))]
    return (f"<h2 id='evaluation'>Evaluation</h2><p class='note'>reference corpus: {escape(str(ref))}</p>"
            + notes + f"<table>{_rows(rows)}</table>")


_EVALUATION_NOTES = ("note", "absent_top_words")
"""Fields of the evaluation shown as notes above its figures: "outside the guarantee", and top words that occur in
no reference document (NPMI counts their pairs as -1, C_v leaves them out), as ``dptopic evaluate`` prints them."""


_EMPIRICAL = (("relation", "neighbouring relation"), ("delta", "at δ"), ("confidence", "confidence (see the note)"),
              ("confidence_note", "confidence note"), ("attack", "attack"), ("threshold", "score threshold"),
              ("n_members", "members scored for the bound"), ("n_nonmembers", "non-members scored for the bound"),
              ("n_models", "models the bound was evaluated on"),
              ("epsilon_lower_bound_replace_one", "lower bound for replacing a document"), ("method", "method"),
              ("n_attacks", "attacks compared"), ("per_attack_confidence", "confidence of each attack's bound"),
              ("selection", "which bound is shown"), ("per_attack", "each attack's bound"),
              # the one-run design (attacks.one_run)
              ("epsilon_lower_bound_delta0", "lower bound at δ = 0"), ("n_canaries", "canaries"),
              ("n_included", "canaries included (their coin came up heads)"), ("canary_length", "tokens per canary"),
              ("words_per_canary", "rare words per canary"), ("k_plus", "guessed in (highest scores)"),
              ("k_minus", "guessed out (lowest scores)"), ("n_guesses", "guesses"), ("n_correct", "correct guesses"),
              ("accuracy", "accuracy of the guesses"), ("p_value_at_zero", "p-value at ε = 0"),
              ("score", "score"), ("design", "design"), ("note", "note"))

def _value(key: str, v) -> str:
    """One figure of the audit's empirical epsilon: a bound rounded down; a dict of figures (each attack's bound) as
    ``name: figure`` pairs, never a Python dict's repr; numbers as numbers; text as it is."""
    if isinstance(v, dict):
        return "; ".join(f"{escape(str(k))}: {_value(key, x)}" for k, x in v.items()) or "—"
    if isinstance(v, (list, tuple)):
        return "; ".join(_value(key, x) for x in v) or "—"
    if key.startswith("epsilon") or key == "per_attack":
        return _fmt_lower(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, float):
        return _fmt(v)
    return _text(v)


def _empirical(emp: dict) -> str:
    """The audit's empirical epsilon: the lower bound (rounded down), then what it was computed from, one per line,
    each under a name in words (a field this dptopic does not know by its key)."""
    lines = [f"<b>{_fmt_lower(emp.get('epsilon_lower_bound'))}</b>"]
    names = dict(_EMPIRICAL)
    keys = [k for k, _ in _EMPIRICAL if k in emp] + [k for k in emp if k != "epsilon_lower_bound" and k not in names]
    for key in keys:
        lines.append(f"<span class='note'>{escape(names.get(key, str(key).replace('_', ' ')))}:"
                     f" {_value(key, emp[key])}</span>")
    return "<br>".join(lines)


_ATTACK_COLUMNS = {"auc": "AUC", "auc_se": "AUC standard error", "auc_se_documents": "AUC SE over documents",
                   "auc_se_models": "AUC SE over models", "n_members": "members scored",
                   "n_nonmembers": "non-members scored"}


def attack_column(key: str) -> str:
    """A column of the audit's attack table in words: ``tpr_at_fpr_0.001`` is "TPR at FPR 0.1%"."""
    key = str(key)
    if key in _ATTACK_COLUMNS:
        return _ATTACK_COLUMNS[key]
    if key.startswith("tpr_at_fpr_"):
        try:
            fpr = float(key[len("tpr_at_fpr_"):])
        except ValueError:
            pass
        else:
            return f"TPR at FPR {100 * fpr:g}%" if fpr > 0 else "TPR at FPR 0"
    return key.replace("_", " ")


UNRESOLVED = "n/r"
"""A TPR at an FPR the non-member scores cannot resolve, as ``dptopic audit`` prints it (docs/auditing.md)."""


def _tpr_fpr(key: str) -> float | None:
    """The FPR of a ``tpr_at_fpr_X`` column; None for another column."""
    if not str(key).startswith("tpr_at_fpr_"):
        return None
    try:
        return float(str(key)[len("tpr_at_fpr_"):])
    except ValueError:
        return None


def _attack_cell(row: dict, key: str) -> str:
    """One cell of the attack table. A TPR is a percentage, as the terminal prints it; at an FPR below the
    resolution of the non-member scores (fewer than 1/FPR of them: no threshold has an FPR between 0 and it) it is
    n/r, the terminal's rule (``reporting.terminal.audit_results_table``)."""
    v, fpr = row.get(key), _tpr_fpr(key)
    if fpr is None:
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else _fmt(v)
    n = row.get("n_nonmembers")
    from ..attacks.metrics import resolvable  # start-up: attacks.metrics loads numba

    if fpr > 0 and isinstance(n, (int, float)) and not isinstance(n, bool) and not resolvable(n, fpr):
        return UNRESOLVED
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return _fmt(v)
    return f"{f:.3%}" if math.isfinite(f) else _fmt(f)


_SETTING_NAMES = {"attacked": "what was audited"}   # the audit attacks shadow models, never the saved one


def _trainer_text(settings: dict) -> str | None:
    """The audited trainer's settings as ``Class: name = value, ...`` from ``settings["audited"]`` (an audit.json's
    ``trainer`` line of an earlier dptopic is a Python dict's repr); None where the audit does not record them."""
    from ..attacks.lira import settings_text  # start-up: attacks.lira loads numba

    audited = settings.get("audited")
    if not isinstance(audited, dict) or not isinstance(audited.get("params"), dict):
        return None
    name = audited.get("class") or audited.get("algorithm") or "trainer"
    return f"{name}: {settings_text(audited['params'])}"


ONE_RUN_MODEL = "one model on the corpus and the canaries whose coin came up heads (no shadow models)"
"""What the one-run design trains, as :func:`~dptopic.attacks.provenance.describe` names the models it trains."""


def _audited_text(settings: dict) -> str | None:
    """What the audit audited, in words, rebuilt from its record (``settings["audited"]``, ``["corpus"]``): the
    training procedure, by retraining shadow models, never the saved model itself; None without a record."""
    from ..attacks.provenance import describe  # start-up: attacks.provenance loads numba

    audited, corpus = settings.get("audited"), settings.get("corpus")
    if not isinstance(audited, dict) or not audited:
        return None
    shadows = settings.get("n_shadows")
    return describe(audited, corpus if isinstance(corpus, dict) else None,
                    shadows if isinstance(shadows, int) and not isinstance(shadows, bool) else None,
                    models=ONE_RUN_MODEL if settings.get("design") == "one-run" else None)


def _audit_section(audit: dict | None, roc_png: bytes | None) -> str:
    if not audit:
        return ""
    claim = audit.get("claimed_privacy")
    if not isinstance(claim, dict):  # an edited audit.json: show the claim as missing rather than fail
        claim = {}
    emp = audit.get("empirical_epsilon", {})
    emp_html = _empirical(emp) if isinstance(emp, dict) else _fmt_lower(emp)
    if claim.get("epsilon") is None and claim.get("private"):
        claim_html = f"none: no guarantee claimed ({escape(str(claim.get('reason', '')))})"
    elif claim.get("epsilon") is None:
        claim_html = "none (not private)" if claim else "—"
    else:
        claim_html = (f"{_fmt_eps(claim.get('epsilon'))} (δ = {_fmt_delta(claim.get('delta'))},"
                      f" unit {escape(str(claim.get('unit')))}"
                      + (f", {escape(str(claim['guarantee']))} guarantee" if claim.get("guarantee") else "") + ")")
    rows = [("claimed ε", claim_html), ("empirical ε lower bound", emp_html)]
    verdict = audit.get("verdict")
    if verdict:
        rows.append(("verdict", f"<b>{escape(str(verdict))}</b>"
                                + (f": {escape(str(audit.get('verdict_note')))}" if audit.get("verdict_note") else "")))
    head = ("<h2 id='audit'>Audit: membership inference"
            + (" (one training run, independently included canaries)" if audit.get("design") == "one-run" else "")
            + "</h2>")
    if verdict == "exceeds the claim":
        head += (f"<div class='warn'><b>The audit measured more leakage than the model claims:</b>"
                 f" {escape(str(audit.get('verdict_note', '')))}</div>")
    settings = audit.get("settings")
    small = settings.get("small_audit") if isinstance(settings, dict) else None
    if small:       # beside the headline bound it qualifies, not only in the settings table below
        head += f"<div class='warn'><b>Small audit:</b> {escape(str(small))}</div>"
    label = audit.get("metrics_guarantee")
    if label:       # the empirical bound, the attacks and the ROC alike
        head += f"<div class='warn'>The audit's figures below are {escape(str(label))}.</div>"
    head += f"<table>{_rows(rows)}</table>"
    notes = claim.get("notes") if isinstance(claim.get("notes"), list) else ([claim["note"]] if claim.get("note") else [])
    for n in notes:
        cls = "warn" if "group privacy" in str(n) or "partial" in str(n) else "note"
        head += f"<div class='{cls}'>{escape(str(n))}</div>"
    attacks = audit.get("attacks", {})
    if isinstance(attacks, dict) and attacks:
        keys = sorted({k for v in attacks.values() if isinstance(v, dict) for k in v
                       if not isinstance(v[k], (dict, list))})
        # readable column names; the audit.json key stays in the tooltip
        th = "".join(f"<th title='{escape(k, quote=True)}'>{escape(attack_column(k))}</th>" for k in keys)
        cells = {name: [_attack_cell(v, k) for k in keys] for name, v in attacks.items() if isinstance(v, dict)}
        body = "".join("<tr><td>" + escape(str(name)) + "</td>" + "".join(
            f"<td class='num'>{c}</td>" for c in row) + "</tr>" for name, row in cells.items())
        head += f"<h3>Attacks</h3><table class='wide'><tr><th>attack</th>{th}</tr>{body}</table>"
        if "n_members" in keys:     # why these counts are about twice the bound's
            head += ("<div class='note'>members and non-members scored: every score, pooled over the target models"
                     " (each audited document is scored once by every target, as a member of the half it trained on"
                     " or not); the empirical ε lower bound above is evaluated on about half of them, those of the"
                     " models its threshold was not chosen on.</div>")
        if any(c == UNRESOLVED for row in cells.values() for c in row):
            head += ("<div class='note'>n/r (not resolved): fewer non-member scores than 1/FPR, so no threshold has an"
                     " FPR between 0 and that rate; audit.json keeps the value, which is then the TPR at FPR 0 (audit"
                     " more documents or shadows to resolve it; see docs/auditing.md).</div>")
    if isinstance(settings, dict) and settings:
        shown = dict(settings)
        trainer = _trainer_text(settings)
        if trainer is not None:
            shown["trainer"] = trainer
        audited = _audited_text(settings)
        if audited is not None:     # an audit.json of an earlier dptopic said it "attacked the saved model"
            shown["attacked"] = audited
        head += "<h3>Audit settings</h3><table>" + _rows(
            (_SETTING_NAMES.get(k, k.replace("_", " ")),
             _fmt(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else _text(v))
            for k, v in shown.items() if not isinstance(v, (dict, list))) + "</table>"
    if roc_png:
        one_run = audit.get("design") == "one-run"      # one model: its lower bound drawn against the claim
        head += (("<h3>Lower bound against the claim</h3><img alt='the lower bound against the claimed epsilon'"
                  " src='data:image/png;base64," if one_run else
                  "<h3>ROC (log-log)</h3><img alt='ROC curves of the attacks' src='data:image/png;base64,")
                 + base64.b64encode(roc_png).decode("ascii") + "'>")
    return head


def estimated_count_text(estimated: int, shown: int) -> str:
    """``"3 of 10 words estimated"``: how many of a topic's listed words its release estimated, said on each topic
    line (the terminal) or heading (the page) where public word vectors placed some (the others are marked)."""
    return f"{estimated} of {shown} word{'' if shown == 1 else 's'} estimated"


def standing_text(k: int, n: int) -> str:
    """``"Only 3 of 20 topics stand"``, said right for none, one and all of them: ``"None of the 20 topics stands"``,
    ``"Only 1 of 20 topics stands"``, ``"All 20 topics stand"``, ``"The one topic stands"`` (then ``" above the noise
    of the release"`` follows)."""
    if n == 1:
        return "The one topic stands" if k else "The one topic does not stand"
    if k == 0:
        return f"None of the {n} topics stands"
    if k == n:
        return f"All {n} topics stand"
    return f"Only 1 of {n} topics stands" if k == 1 else f"Only {k} of {n} topics stand"


def _utility_warning(supported, card: dict) -> str:
    """The banner that opens a page whose model has topics below the noise of its release: what the data supports
    at this budget, and what would give more."""
    k, n = sum(bool(s) for s in supported), len(supported)
    budget = (f" at ε = {_fmt_eps(card.get('epsilon'))} per {escape(str(card.get('privacy_unit')))}"
              if card.get("guarantee") != "none" and card.get("epsilon") is not None else " at this budget")
    supports = "no distinct topic" if k == 0 else f"{k} distinct topic{'' if k == 1 else 's'}"
    rest = (f"the {'one' if n == 1 else f'{n}'} topic{'' if n == 1 else 's'}" if k == 0 else f"the other {n - k}")
    return (f'<div class="warn utility" id="utility-warning"><b>{standing_text(k, n)} above the noise of the'
            f' release.</b> The data supports {supports}{budget}; {rest}'
            f' {"is" if n - k == 1 else "are"} marked below the noise, their words mostly noise. More topics would'
            ' stand out with more documents, a larger ε, public documents of the domain (a public word list, or'
            ' public topics to start from), or fewer topics. <span class="note">Which topics stand out is decided'
            ' from the release alone: post-processing, inside the guarantee, no budget spent.</span></div>')


def _floor_section(floor: dict | None) -> str:
    """The topics public word vectors alone give, beside a model fitted with them: the floor, never the model's."""
    if not floor:
        return ""
    head = "<h2 id='public-floor'>The floor: public word vectors alone</h2>"
    note = f"<p class='note'>{escape(str(floor.get('note', '')))}</p>"
    if not floor.get("topics"):
        return head + note
    rows = "".join(f"<li>{escape(' '.join(map(str, words)))}</li>" for words in floor["topics"])
    return f"{head}{note}<ol class='floor' start='0'>{rows}</ol>"


def render_report(*, title: str, trainer: str, card: dict, topics: list, evaluation: dict | None = None,
                  audit: dict | None = None, roc_png: bytes | None = None, source: str = "", background=(),
                  supported=None, show_unsupported: bool = False, words_ranking: str = "ranked by probability",
                  words_note: str | None = None, floor: dict | None = None, estimated: list | None = None) -> str:
    """The HTML page. ``topics`` is a list of ``[(word, weight), ...]`` per topic (weights: P(word | topic)), in the
    order ``words_ranking`` names (``dptopic.evaluation.topic_quality.ranking_text``);
    ``background``: indices of background topics (``model.background_topic_ids()``), labelled as such;
    ``supported``: one bool per topic (``model.supported_topics_``), or None for a model without the assessment. With
    any topic unsupported, a banner (``id="utility-warning"``) opens the page, and each unsupported topic's card has
    the class ``unsupported`` and shows no words unless ``show_unsupported``. ``words_note``: which words the lists
    leave out (the words the release did not estimate in a topic), said under the heading. ``floor``: for a model
    fitted with public word vectors, the topics the vectors alone give (``{"topics", "note"}``,
    :func:`dptopic.moments.vector_prior.model_floor`), shown after the model's as the floor (``id="public-floor"``).
    ``estimated``: for a model whose public word vectors placed words, how many of each topic's listed words its
    release estimated (:func:`~dptopic.reporting.terminal.estimated_counts`), said in the heading of each topic that
    lists a placed word, as the terminal says it on the topic's line."""
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    bg = set(background or ())
    card_json = escape(json.dumps(card, indent=2, default=str, ensure_ascii=False))   # in the page and in print

    def topic_card(k, t):
        below = supported is not None and not supported[k]
        head = (f"topic {k}{' (background: corpus-wide words)' if k in bg else ''}"
                f"{' (below the noise)' if below else ''}"
                f"{f' ({estimated_count_text(estimated[k], len(t))})' if estimated and estimated[k] < len(t) else ''}")
        if below and not show_unsupported:
            body = ("<p class='note'>Below the noise of the release: words not shown (a report asked to show"
                    " the topics below the noise shows them).</p>")
        else:
            body = _topic_svg([w for w, _ in t], [p for _, p in t])
        return f"<div class='topic{' unsupported' if below else ''}'><h3>{head}</h3>{body}</div>"

    cards = "".join(topic_card(k, t) for k, t in enumerate(topics))
    banner = "" if supported is None or all(supported) else _utility_warning(supported, card)
    support_note = "" if supported is None else (
        f" {standing_text(sum(bool(s) for s in supported), len(supported)).replace('Only ', '')} above the noise of"
        " the release (decided"
        " from the release alone: post-processing, inside the guarantee).")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{_CSS}</style></head>
<body><main>
<h1>{escape(title)}</h1>
<div class="sub">{escape(trainer)} · {len(topics)} topics · {escape(source)} · generated {when} by dptopic</div>
{banner}
{_privacy_section(card)}
<h2 id="topics">Topics</h2><p class="note">Top words of each topic, {escape(words_ranking)}, with P(word | topic), read from the released
model{" (post-processing of what the guarantee covers)" if card.get("guarantee") != "none" else ""}.{support_note}{
    " " + escape(words_note[:1].upper() + words_note[1:]) + "." if words_note else ""}</p>
<div class="topics">{cards}</div>
{_floor_section(floor)}
{_evaluation_section(evaluation)}
{_audit_section(audit, roc_png)}
<h2 id="card-json">The privacy card as JSON</h2>
<details><summary>schema {escape(card.get('schema', ''))}</summary><pre>{card_json}</pre></details>
<div class="print-only"><p class="note">schema {escape(card.get('schema', ''))} (printed in full)</p>
<pre>{card_json}</pre></div>
</main></body></html>
"""


# ------------------------------------------------------------------------------------ a pyLDAvis page that works offline
def _pyldavis_assets(js_dir=None) -> dict:
    """The d3, LDAvis script and LDAvis style that the pyLDAvis package ships (its ``js`` folder), read as text:
    ``{"d3": ..., "ldavis": ..., "css": ...}``. ``js_dir`` another folder holding the same three files."""
    if js_dir is None:
        try:
            from pyLDAvis import urls  # pyLDAvis: optional (the [pyldavis] extra)
        except ImportError:
            raise DPTopicError("a pyLDAvis page needs the pyLDAvis package, whose bundled scripts it inlines: pip"
                               " install pyLDAvis (or 'dptopic[pyldavis]').") from None
        files = {"d3": urls.D3_LOCAL, "ldavis": urls.LDAVIS_LOCAL, "css": urls.LDAVIS_CSS_LOCAL}
    else:
        folder = Path(js_dir)
        files = {"d3": folder / "d3.v5.min.js", "ldavis": folder / "ldavis.v3.0.0.js",
                 "css": folder / "ldavis.v1.0.0.css"}
    out = {}
    for key, path in files.items():
        try:
            out[key] = Path(path).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise DPTopicError(f"cannot read pyLDAvis's bundled file {str(path)!r} ({type(e).__name__}): reinstall"
                               " pyLDAvis (pip install pyLDAvis, forcing a reinstall).") from None
    return out


def _inline_script(js: str) -> str:
    """A script's text made safe inside ``<script>``: a ``</script`` in it would end the element early."""
    return js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


def pyldavis_page(prepared, title: str = "Topics (pyLDAvis)", js_dir=None) -> str:
    """A self-contained HTML page of a pyLDAvis visualisation: d3, the LDAvis script and its style are inlined from
    the files the pyLDAvis package ships, so that the page shows with no network (``pyLDAvis.save_html`` loads them
    from d3js.org and a CDN, and its page is blank offline). ``prepared``: what ``pyLDAvis.prepare`` returns, or its
    JSON (``prepared.to_json()``, as a string or a dict). The page loads nothing from elsewhere; write it with
    ``open("vis.html", "w", encoding="utf-8").write(pyldavis_page(vis))``."""
    if hasattr(prepared, "to_json"):
        data = prepared.to_json()
    elif isinstance(prepared, str):
        data = prepared
    elif isinstance(prepared, dict):
        data = json.dumps(prepared)
    else:
        raise DPTopicError(f"pyldavis_page takes what pyLDAvis.prepare returns (or its JSON), not"
                           f" {type(prepared).__name__}.")
    try:
        parsed = json.loads(data)
    except ValueError:
        raise DPTopicError("pyldavis_page: the prepared data is not JSON; pass what pyLDAvis.prepare returns.") from None
    if not isinstance(parsed, dict) or not {"mdsDat", "tinfo", "token.table"} <= set(parsed):
        raise DPTopicError("pyldavis_page: the data is not pyLDAvis's (no mdsDat, tinfo and token.table); pass what"
                           " pyLDAvis.prepare returns.")
    assets = _pyldavis_assets(js_dir)
    body = json.dumps(parsed).replace("</", "<\\/")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{escape(title)}</title>\n<style>\n{assets['css']}\n</style>\n"
            f"<script>\n{_inline_script(assets['d3'])}\n</script>\n"
            f"<script>\n{_inline_script(assets['ldavis'])}\n</script>\n</head>\n<body>\n"
            "<div id=\"ldavis\" style=\"background-color:white;\"></div>\n"
            f"<script>\nnew LDAvis(\"#ldavis\", {body});\n</script>\n</body>\n</html>\n")
