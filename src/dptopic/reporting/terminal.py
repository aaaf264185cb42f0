"""The privacy card, the topics and a training run's corpus summary as terminal text (what ``dptopic train``,
``topics``, ``demo`` and ``refit`` print), for any front door that writes to a terminal or a pipe.

rich and the library modules a function reads (the card's rules, the topics' ranking, numpy) are imported inside the
functions, not at the top: the command line imports this module on its start-up path, and a command that prints no
table (its help, an error) should not pay for those imports.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..accounting.verify import rounded_up
from ..errors import DPTopicError


def make_console(stderr=False):
    """The console every command prints with. Text is printed as text: rich markup is off unless a call asks for it
    (``markup=True``, or a cell built with :func:`styled`), so that a name the user gave (a dataset, a file, a word
    of a vocabulary, a field of a saved model) prints as given and never as markup or an emoji code; control and
    bidirectional-format characters in any text are shown as escapes (:func:`plain`)."""
    from rich.console import Console  # rich: loaded only to print

    class _Console(Console):
        def on_broken_pipe(self) -> None:   # the reader went away (`| head`): exit as every other output does
            self.quiet = True
            raise BrokenPipeError

        def render_str(self, text, **kw):   # every string printed or put in a table passes here
            return super().render_str(plain(text), **kw)

    console = _Console(stderr=stderr, highlight=False, markup=False, emoji=False)
    # off a terminal (a file, a pipe) rich would break prose at 80 columns while tables take their natural width
    # (print_table): lines are left whole there, for the pager or terminal that shows them to wrap
    console.soft_wrap = not console.is_terminal
    return console


_INVISIBLE = None


def plain(text) -> str:
    """``text`` with its control characters (but line breaks and tabs) and bidirectional-format characters written as
    escapes (``\\x1b``, ``\\u202e``): a name from the user or a saved file cannot move the cursor, colour the
    terminal or reverse the line it is printed on."""
    global _INVISIBLE
    text = str(text)
    if _INVISIBLE is None:
        import re  # only when text is printed

        _INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
    return _INVISIBLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def esc(text) -> str:
    """A user-given value (a name, a path, a word, a field of a saved file) inside a line printed with markup: shown
    as text, its markup escaped (:func:`plain` too)."""
    from rich.markup import escape  # rich: loaded only to print

    return escape(plain(text))


def styled(markup: str):
    """A table cell or line written in rich markup (its user-given parts passed through :func:`esc`), as a
    ``rich.text.Text``: consoles print text as text (:func:`make_console`)."""
    from rich.text import Text  # rich: loaded only to print

    return Text.from_markup(plain(markup), emoji=False)


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 report``, ``2 reports``, ``1,000 reports`` (whole counts with thousands separators)."""
    count = f"{n:,}" if isinstance(n, int) else f"{n}"
    return f"{count} {word if n == 1 else (words or word + 's')}"


# the notes' counts are exact counts of the contributor's documents, printed on their machine and never sent
OWN_COUNTS = "exact counts of your documents: outside the guarantee; shown here, not sent"


def print_empty_note(n_empty: int, n_docs: int) -> None:
    """Say why some reports carry nothing (they are still sent: their number must not depend on the text)."""
    if n_empty:
        print(f"note: {n_empty:,} of {n_docs:,} documents contain no word of the vocabulary ({OWN_COUNTS}); their"
              " reports carry only noise and are sent anyway, so that the number of reports reveals nothing about the"
              " text.", file=sys.stderr)


def print_no_pair_note(n_short: int, n_docs: int) -> None:
    """The document-level twin of :func:`print_empty_note`: documents with fewer than two vocabulary words."""
    if n_short:
        print(f"note: {n_short:,} of {n_docs:,} documents have fewer than two vocabulary words ({OWN_COUNTS}); they"
              " report 'no pair' and are sent anyway, so that the number of reports reveals nothing about the text.",
              file=sys.stderr)


def warn(text: str) -> None:
    """One warning line on stderr (``warning: ...``), as every warning of the command line and the library's own
    (``main`` shows those alike): never on stdout, which carries the command's output."""
    print(f"warning: {' '.join(str(text).split())}", file=sys.stderr)


def print_table(console, table) -> None:
    """Print a rich table. Off a terminal (a file, a pipe) rich assumes 80 columns and would cut cells with '…' or
    split numbers: there the table gets its natural width (a column's ``max_width`` still wraps long prose)."""
    if console.is_terminal:
        console.print(table)
        return
    # a table is laid out at its natural width (soft wrapping, which leaves prose lines whole, would not lay it out):
    # rendered at that width, then printed as it is, uncropped (the console's own width is left as it was)
    from rich.measure import Measurement  # rich: loaded only to print
    from rich.segment import Segments  # rich: loaded only to print

    width = max(console.width, Measurement.get(console, console.options.update_width(1 << 16), table).maximum)
    console.print(Segments(console.render(table, console.options.update_width(width))), crop=False, soft_wrap=True)


def _split_name(split: str) -> str:
    from ..training.by_unit import SPLIT_NAMES  # numpy: loaded when a corpus line is printed, not at start-up

    return SPLIT_NAMES[split]


def without_copies_said(test, train, console, private: bool):
    """The held-out documents that repeat no training document (``dptopic.corpus.without_copies``), saying how many
    were left out. ``private``: the count said is an exact statistic of the private corpus, labelled as the corpus
    line labels its sizes."""
    from ..corpus import without_copies  # start-up: corpus loads numba

    kept, n_left_out = without_copies(test, train)
    if n_left_out:
        console.print(f"held-out: {n_left_out} of the {test.n_docs} held-out documents repeat a training"
                      " document and are left out of the evaluation"
                      + (" [yellow](exact counts of the private corpus: outside the guarantee; shown here, not"
                         " saved)[/]" if private else ""), markup=True)
    return kept


SUPPORT_SOURCE = ("each compared with the noise and with a single word-frequency topic, decided from the release alone:"
                  " post-processing, inside the guarantee, no budget spent")
"""What the support flags are, wherever they are printed (they are no figure read from the private data)."""

MORE_SUPPORT = ("more documents, a larger epsilon, public documents of the domain (a public word list, or public"
                " topics to start from), or fewer topics")
"""What would let more topics stand above the noise, as every output says it."""


def topic_support(model):
    """``(supported, background)`` of a model, one bool per topic each: ``supported`` is None for a model that
    carries no ``supported_topics_`` (non-private LDA, the word-level trainers, a folder saved before the flags were
    kept): not assessed, and then nothing is hidden. ``background`` comes from ``background_topics_`` or, without it,
    from ``background_topic_ids()``."""
    import numpy as np  # numpy: kept off this module's import (a light start)

    K = int(np.asarray(model.components_).shape[0])
    s = getattr(model, "supported_topics_", None)
    supported = None
    if s is not None and np.asarray(s).shape == (K,):
        supported = [bool(x) for x in np.asarray(s, dtype=bool)]
    b = getattr(model, "background_topics_", None)
    if b is not None and np.asarray(b).shape == (K,):
        background = [bool(x) for x in np.asarray(b, dtype=bool)]
    else:
        ids = set(model.background_topic_ids()) if hasattr(model, "background_topic_ids") else set()
        background = [k in ids for k in range(K)]
    return supported, background


def support_summary(supported) -> str:
    """"K of N topics stand above the noise of the release (...)"."""
    from .html import standing_text  # start-up: reporting.html loads numpy

    k, n = sum(bool(s) for s in supported), len(supported)
    text = standing_text(k, n)
    if text.startswith("Only "):        # the terminal's line counts, the page's banner stresses
        text = text[len("Only "):]
    return f"{text} above the noise of the release ({SUPPORT_SOURCE})"




def estimated_note(model) -> str | None:
    """Which words a model's top-word lists show and leave out: those its release estimated in a topic
    (``model.estimated_words()``) and those public word vectors placed in it (``model.placed_words()``, marked; what
    the mark means is :func:`placed_note`'s line), said once wherever topics are shown; None when every word was
    estimated."""
    from ..models.base import PLACED_MARK  # start-up: the estimators' base loads numpy and numba

    mask = model.estimated_words() if callable(getattr(model, "estimated_words", None)) else None
    if mask is None:
        return None
    placed = model.placed_words() if callable(getattr(model, "placed_words", None)) else None
    themes = [k for k in range(len(mask)) if not mask[k].all()]
    n, V = int(mask[themes].any(axis=0).sum()), int(mask.shape[1])
    text = (f"each topic lists only the words its release estimated in it ({n:,} of the {V:,} words"
            + ("; every word in the background topics" if len(themes) < len(mask) else "") + ")")
    if placed is not None:
        text += f" and those public word vectors placed in it (marked '{PLACED_MARK}')"
    return text + (": the others share a tail the release did not estimate per topic, the same in every topic, and"
                   " are left out (a topic lists fewer words when its release estimated fewer)")


def placed_note(model) -> str | None:
    """One line that says what the mark of a placed word means (:data:`~dptopic.models.base.PLACED_MARK`): public word
    vectors, named, put it in the topic, not the data; and the placement read the release and the public vectors
    alone, no private data, so it is post-processing inside the guarantee. None for a model whose vectors placed no
    word (or that had none)."""
    from ..models.base import PLACED_MARK  # start-up: the estimators' base loads numpy and numba

    placed = model.placed_words() if callable(getattr(model, "placed_words", None)) else None
    if placed is None:
        return None
    name = (getattr(model, "public_vectors_", None) or {}).get("name") or "given"
    return (f"'{PLACED_MARK}' marks a word the public word vectors {name} placed in a topic"
            f" ({int(placed.any(axis=0).sum()):,} words): not learned from the data, whose release did not estimate"
            " it there; the vectors put it beside its nearest released words, reading the release and the public"
            " vectors alone, no private data (post-processing: inside the guarantee, no budget spent)")


def _placed_mark() -> str:
    from ..models.base import PLACED_MARK  # start-up: the estimators' base loads numpy and numba

    return PLACED_MARK


def estimated_counts(model, topics) -> list | None:
    """For each topic's listed words (``topics``, as ``topic_words`` returns them), how many the release estimated
    rather than public word vectors placed (:meth:`~dptopic.models.base.TopicModel.placed_words`); None for a model
    whose vectors placed no word."""
    placed = model.placed_words() if callable(getattr(model, "placed_words", None)) else None
    if placed is None:
        return None
    index = model.vocabulary_.get
    return [sum(not placed[k, index(w)] for w in t) for k, t in enumerate(topics)]


def print_topics(model, n=10, max_topics=None, console=None, show_unsupported=False,
                 hint="show_unsupported=True shows their words"):
    """The top words of each topic as a table. For a model with ``supported_topics_``: the line "K of N topics
    stand above the noise", and the topics below it listed apart, their words hidden unless ``show_unsupported``
    (``hint`` says how to show them). A word public word vectors placed is marked (:data:`~dptopic.models.base.
    PLACED_MARK`), and a topic that lists some says how many of its words the release estimated
    (:func:`estimated_count_text`): its support was decided on those."""
    console = console or make_console()
    from rich.table import Table  # rich: loaded only to print

    from ..evaluation.topic_quality import ranking_text, word_ranking  # start-up: evaluation.topic_quality loads numba
    from .html import estimated_count_text  # start-up: reporting.html loads numpy

    supported, background = topic_support(model)
    # the order the words are shown in is said with them (DocDPCooccurrence ranks by relevance)
    t = Table(title=f"Top {n} words per topic of {type(model).__name__}, {ranking_text(word_ranking(model))}",
              show_lines=False)
    t.add_column("topic", justify="right")
    t.add_column("words")
    hidden = []
    counts = estimated_counts(model, model.topic_words(n))
    for k, words in enumerate(model.topic_words(n, mark_placed=True)):
        if max_topics is not None and k >= max_topics:
            break
        below = supported is not None and not supported[k]
        if below and not show_unsupported:
            hidden.append(k)
            continue
        label = str(k) + (" (background)" if background[k] else "") + (" (below the noise)" if below else "")
        placed = counts is not None and counts[k] < len(words)
        t.add_row(label, " ".join(words) + (f"  ({estimated_count_text(counts[k], len(words))})" if placed else ""))
    if t.row_count:
        print_table(console, t)
    note = estimated_note(model)
    if note:
        console.print(f"words: {note}")
    placed = placed_note(model)
    if placed:
        console.print(placed, markup=False, highlight=False)
    if supported is None:
        return
    console.print(support_summary(supported))
    if counts is not None and any(supported[k] and counts[k] < n for k in range(len(counts))):
        console.print(f"a topic stands above the noise by the words its release estimated (counted on its line); the"
                      f" words marked '{_placed_mark()}' are the public vectors' reading beside them, no part of that"
                      " test", markup=False, highlight=False)
    below = [k for k in range(len(supported)) if not supported[k]]
    if below:
        names = ", ".join(f"{k} (background)" if background[k] else str(k) for k in below)
        console.print(f"[yellow]below the noise[/]: topic{'' if len(below) == 1 else 's'} {names}"
                      + (f": words hidden ({esc(hint)})" if hidden else ": their words are mostly noise")
                      + f"; more topics would stand out with {MORE_SUPPORT}", markup=True)


def print_privacy(report: dict, console=None):
    """A model's privacy report (``model.privacy_``) as the table ``dptopic train`` prints: whether it is private, its
    unit and relation, the guarantee (the privacy card's headline) and the cross-checks below it; a seed that makes the
    noise reproducible is also warned of on stderr."""
    console = console or make_console()
    from rich.table import Table  # rich: loaded only to print

    if not isinstance(report, dict):
        report = {}
    t = Table(title="Privacy report", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value", max_width=100, overflow="fold")     # prose wraps, even in a file
    if not report.get("private"):
        t.add_row("private", "NO")
        for key in ("mode", "reason"):
            if key in report:
                t.add_row(key, str(report[key]))
        if "claimed_by_paper" in report:
            claim = report["claimed_by_paper"]
            t.add_row("paper's claim (not proven)",
                      f"eps = {epsilon_cell(claim.get('epsilon'))}" if isinstance(claim, dict) else epsilon_cell(claim))
        if "epsilon_nominal" in report:
            t.add_row("eps, paper's nominal count-release claim", epsilon_cell(report["epsilon_nominal"]))
        part = report.get("count_release_epsilon")
        if part:
            if isinstance(part, dict):
                t.add_row("partial figure: count releases only (NOT the model)",
                          f"eps basic {epsilon_cell(part.get('epsilon_basic'))}, tight PLD {epsilon_cell(part.get('epsilon_pld'))},"
                          f" RDP {epsilon_cell(part.get('epsilon_rdp'))} (delta={delta_cell(part.get('delta'))},"
                          f" {part.get('unit')}-level)")
            else:
                t.add_row("partial figure: count releases only (NOT the model)", str(part))
        _dataset_row(t, report)
        _report_tail(t, report, ("scope", "vocabulary", "replayed_iterations"), console)
        return
    from ..accounting.card import privacy_card  # start-up: accounting.card loads numpy

    headline = privacy_card(report, check=False)   # the card's rule: the trainer's own reasons first, then the vocabulary
    partial = (headline.get("guarantee_note") or ("partial: see scope" if headline["guarantee"] == "partial" else "")
               if headline["guarantee"] == "partial" else "")
    from ..accounting.ledger import NO_GUARANTEE, claims_no_guarantee  # start-up: accounting.ledger loads numpy

    if claims_no_guarantee(report):    # noise was added, but its events add up to no guarantee: the card says none too
        t.add_row("private", "noise added, but no guarantee (see GUARANTEE below)")
    else:
        t.add_row("private", "yes" + (f" ({partial})" if partial else ""))
    t.add_row("privacy unit", str(report.get("unit")))
    if report.get("user_bound"):    # a guarantee per person: how each person's contribution was bounded
        t.add_row("each person's contribution", str(report["user_bound"]))
    if headline.get("user_field"):  # which field of the input named the person
        t.add_row("person field", str(headline["user_field"]))
    if isinstance(report.get("public_input"), dict):    # fit(public_corpus=): read in the clear
        t.add_row("public input", str(report["public_input"].get("summary")))
    if isinstance(report.get("public_vectors"), dict):  # public word vectors read in the clear
        t.add_row("public vectors", str(report["public_vectors"].get("summary")))
    # the card's relation: a local report composing a contributor's reports names the contributor's, as its epsilon
    t.add_row("neighbouring relation", str(headline.get("neighbouring_relation") or report.get("neighbouring_relation")))
    t.add_row("theorem", str(report.get("theorem")))
    delta = report.get("delta")

    if claims_no_guarantee(report):
        t.add_row(styled("[bold]GUARANTEE[/]"), styled(f"[bold red]NONE[/] ({esc(report['epsilon_method'][len(NO_GUARANTEE):])});"
                                                       " the rows below are what the events give, not a guarantee"))
    else:
        eps, head_delta = _report_number(report, "epsilon"), delta
        if headline.get("search"):      # the model a private search chose: the search's guarantee is the headline
            eps, head_delta = headline["epsilon"], headline["delta"]
            t.add_row("private search", str(headline["search"].get("scope")))
            t.add_row("cross-checks below", str(headline.get("figures_note")))
        from ..accounting.card import PURE_METHOD  # start-up: accounting.card loads numpy

        method = str(headline.get("epsilon_is") or report.get("epsilon_method", "as reported"))
        if headline.get("delta") == 0.0:    # the card's rule: a pure headline holds with delta = 0, and says so
            head = f"epsilon = {epsilon_cell(eps)}, {PURE_METHOD}"
            method = method.replace(f"; {PURE_METHOD}", "").replace(PURE_METHOD, "") or "as reported"
        else:
            head = f"epsilon = {epsilon_cell(eps)} at delta = {delta_cell(head_delta)}"
        t.add_row(styled("[bold]GUARANTEE[/]"), styled(f"[bold]{esc(head)}[/] ({esc(method)}); the rows below are"
                                                       " cross-checks"))
        card = headline                     # the card built above
        if card.get("pure_note"):           # the same events as pure DP at almost the same epsilon
            t.add_row("pure DP", str(card["pure_note"]))
        note = card.get("strength_note")      # the card's rule: above epsilon 16, weak
        if note:
            t.add_row(styled("[bold yellow]strength[/]"), str(note))
    per = report.get("per_document")
    if per:
        if isinstance(per, dict):
            ex = per.get("examples")
            t.add_row("per document (word-level)", f"{per.get('rule')}: " + ", ".join(
                f"L={L}: {epsilon_cell(e)}" for L, e in (ex.items() if isinstance(ex, dict) else ())))
        else:
            t.add_row("per document (word-level)", str(per))
    if headline.get("fed_composition"):
        t.add_row("per-user epsilon (FedLDA)", str(headline["fed_composition"]))
    if headline.get("epsilon_by_colluders"):
        t.add_row("epsilon by colluders", str(headline["epsilon_by_colluders"]))
    figures = headline.get("figures") if isinstance(headline.get("figures"), dict) else {}
    for key, name in (("epsilon_word_contributor", "eps per contributor, word level"),
                      ("epsilon_word", "eps per report, word level"), ("epsilon_doc", "eps per report, document level")):
        if isinstance(figures.get(key), dict):     # local DP: the word- and report-level figures beside the headline
            t.add_row(name, f"{epsilon_cell(figures[key]['epsilon'])} (delta=0): {str(figures[key]['what']).split(': ', 1)[-1]}")
    if "epsilon_per_entry" in report:
        t.add_row("epsilon per entry", epsilon_cell(report["epsilon_per_entry"]))
    elif "epsilon_nominal" in report:
        t.add_row("cross-check: paper's nominal claim", epsilon_cell(report["epsilon_nominal"]))
    if "epsilon_paper" in report:
        fresh = (report.get("parameters") or {}).get("final_release") == "fresh"
        t.add_row("cross-check: paper (T(eps_L+eps_I)" + (" + eps_L, the final release)" if fresh else ")"),
                  epsilon_cell(report["epsilon_paper"]))
    if "epsilon_basic" in report:
        t.add_row(f"cross-check: basic composition (delta={delta_cell(report.get('delta_basic', 0))})",
                  epsilon_cell(report["epsilon_basic"]))
    added = isinstance(report.get("vocabulary_selection"), dict) and isinstance(report.get("topic_model"), dict)
    for key, name in (("epsilon_pld", "eps_V + topic model's PLD (Thm 4.1)" if added else "tight PLD"),
                      ("epsilon_pld_tight", "tight PLD over every event"),
                      ("epsilon_rdp", "eps_V + topic model's RDP (Thm 4.1)" if added else "RDP")):
        if key in report:
            t.add_row(f"cross-check: {name} (delta={delta_cell(delta)})", epsilon_cell(report[key]))
    for key, name in (("group_privacy", "group privacy"), ("replacement", "one person replaced")):
        if isinstance(headline.get(key), dict) and headline[key].get("note"):    # computed from the events
            t.add_row(name, str(headline[key]["note"]))
    t.add_row("noise", f"{report.get('noise')}{' (secure, CSPRNG)' if report.get('secure_noise') else ''}")
    _dataset_row(t, report)
    _report_tail(t, report, ("parameters", "scope", "note", "report_words_note", "vocabulary", "randomness",
                                "replayed_iterations"), console)


def epsilon_cell(x) -> str:
    """An epsilon of a report for display: a number rounded UP at 4 significant digits (never shown below the one
    computed, as the privacy card does), anything else (an edited model.json) as it is."""
    from ..accounting.card import epsilon_text  # start-up: accounting.card loads numpy

    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        return str(x)
    try:
        return epsilon_text(float(x))
    except (TypeError, ValueError, OverflowError):
        return str(x)


def delta_cell(d) -> str:
    try:
        return f"{float(d):g}"
    except (TypeError, ValueError, OverflowError):
        return "0"


def _report_number(report: dict, key: str) -> float:
    """A number a private report must carry; a report missing it (an edited or truncated model.json) is refused
    in one line rather than half-printed."""
    try:
        return float(report[key])
    except (KeyError, TypeError, ValueError, OverflowError):
        raise DPTopicError(f"the privacy report says private but has no valid {key!r}: the model file was edited or"
                           f" is damaged; re-train or re-save the model.") from None


def _dataset_row(t, report) -> None:
    """The dataset ledger's line: this dataset's total over every release so far (docs/budget.md)."""
    led = report.get("dataset_ledger")
    if isinstance(led, dict) and led.get("line"):
        t.add_row(styled("[bold]dataset[/]"), f"{led.get('dataset')}: {led['line']}")


def _report_tail(t, report, keys, console):
    """The descriptive rows, the table, then the seed warning (if any) in plain sight."""
    warnings = report.get("warnings") or []
    for w in (warnings if isinstance(warnings, (list, tuple)) else [warnings]):
        t.add_row("warning", str(w))
    for key in keys:
        if key in report:
            v = report[key]
            t.add_row(key, ", ".join(f"{k}={x:.4g}" if isinstance(x, float) else f"{k}={x}" for k, x in v.items())
                      if isinstance(v, dict) else str(v))
    if report.get("noise_reproducible"):
        t.add_row("noise reproducible", "YES: an explicit seed was given")
    print_table(console, t)
    if report.get("noise_reproducible"):
        warn(report.get('warning', 'the noise is reproducible from the seed.'))


def print_verification(v, source, console=None, no_guarantee_exit: int = 3) -> None:
    """``privacy verify``'s table of a :class:`~dptopic.reporting.verification.SavedVerification`: each figure stated
    and recomputed, then the verdict (``no_guarantee_exit``: the exit status said with a consistent report that gives
    no guarantee)."""
    from rich.table import Table  # rich: loaded only to print

    console = console or make_console()
    check = v.check
    if check.figures:
        t = Table(title=f"privacy report of {source}: stated and recomputed from its {v.events}")
        for col in ("figure", "stated", "recomputed", ""):
            t.add_column(col, justify="left" if col == "figure" else "right")
        for key, f in check.figures.items():
            stated, again = f["stated"], f["recomputed"]
            # epsilons and deltas are upper bounds: shown rounded up (a count of events as it is)
            show = (lambda x: f"{x:.6g}") if key == "events (as planned)" else (lambda x: f"{rounded_up(x, 6):.6g}")
            t.add_row(key, "-" if stated is None else show(stated), "-" if again is None else show(again),
                      f["verdict"])
        print_table(console, t)
    if v.no_guarantee:    # the figures hold, but they add up to no guarantee: not "verified" as if all were well
        console.print(f"consistent, but NO (epsilon, delta) guarantee: every row of the table holds, and the events"
                      f" add up to no differential privacy guarantee (exit status {no_guarantee_exit}); {check.detail}")
    elif check.status == "verified" and check.figures:
        console.print(f"verified: every row of the table holds; {check.detail}")
    elif check.status in ("verified", "looser", "no_claim"):
        console.print(f"{check.status}: {check.detail}")


def print_corpus_summary(info: dict, console=None) -> None:
    """``dptopic corpus info``: a corpus summary (:func:`dptopic.corpus.summary.corpus_summary`) as lines and a table
    of its most frequent words."""
    from rich.table import Table  # rich: loaded only to print

    con = console or make_console()
    L = info["document_length"]
    con.print(f"{info['documents']} documents, {info['tokens']} tokens, vocabulary {info['vocabulary_size']} words"
              f" ({info['empty_documents_dropped']} empty documents dropped)")
    con.print(f"document length: min {L['min']}, median {L['median']:g}, mean {L['mean']:.1f}, max {L['max']}")
    if info["words_in_no_document"]:
        con.print(f"{info['words_in_no_document']} vocabulary words occur in no document")
    t = Table(title=f"Top {len(info['top_words'])} words")
    for col in ("word", "tokens", "documents", "share of documents"):
        t.add_column(col, justify="left" if col == "word" else "right")
    for w in info["top_words"]:
        t.add_row(w["word"], str(w["tokens"]), str(w["documents"]), f"{w['document_share']:.1%}")
    print_table(con, t)
    if "labels" in info:
        con.print("labels: " + ", ".join(f"{k} {n}" for k, n in info["labels"].items()))
    p = info.get("people")
    if isinstance(p, dict):
        d = p["documents_per_person"]
        con.print(f"{plural(p['people'], 'person', 'people')}, documents per person: min {d['min']}, median"
                  f" {d['median']:g}, max {d['max']}")
        if p["similar_ids"]:
            con.print(f"{plural(p['similar_groups'], 'group')} of person ids that may be one person, each id its own"
                      " person to every trainer unless the ledger links them (it links the same writing, the same id"
                      " in another case, and aliases given: docs/budget.md; or map the ids of one person to one id"
                      " before training: docs/privacy_units.md, 'One person, several ids'):")
            for g in p["similar_ids"]:
                con.print(f"  {', '.join(repr(u) for u in g['ids'])}: {g['documents']} documents ({g['why']})")


def prepared_line(corpus, out, shards=None, asked: int | None = None) -> str:
    """What ``corpus prepare`` says of the corpus it wrote to ``out``: as ``shards`` (the files written, ``asked`` the
    number asked for), or as one file."""
    head = (f"{corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size} ({corpus.n_empty_dropped}"
            " empty dropped) written")
    if shards is None:
        return f"{head} to {out}"
    fewer = (f" (fewer than the {asked} asked: each shard holds whole documents, about equal in tokens, and"
             f" {corpus.n_docs} documents split into {len(shards)} such blocks)" if len(shards) < asked else "")
    return f"{head} as {len(shards)} shards to {out}{fewer}"


def print_verdict(console, s, out, files):
    checks = s["paper_shape_checks"]
    untested = sum(v is None for v in checks.values())
    if checks and untested == len(checks):   # nothing tested: no verdict either way
        console.print(f"This run tests none of the paper's qualitative claims (give grids of two values or more):"
                      f" {checks}")
    else:
        verdict = "has" if s["has_paper_shape"] else "does NOT have"
        note = f" ({untested} claim(s) not tested by this run)" if untested else ""
        console.print(f"The result {verdict} the paper's qualitative shape{note}: {checks}")
    console.print("written: " + ", ".join(str(Path(out) / f) for f in files))


def print_checks(console, checks: dict, untested: dict) -> None:
    """One line per claim: yes / NO / not tested (with the reason), then the count of claims tested."""
    for c, ok in checks.items():
        why = str(untested.get(c, "this run cannot test it"))
        if ok is None and why.startswith("inconclusive"):     # within the standard errors: neither holds nor fails
            console.print(f"  [yellow]inconclusive[/] {esc(c)}: {esc(why.split(': ', 1)[-1])}", markup=True)
        elif ok is None:
            console.print(f"  [yellow]not tested[/] {esc(c)}: {esc(why)}", markup=True)
        else:
            console.print(f"  [{'green' if ok else 'red'}]{'yes' if ok else 'NO'}[/] {esc(c)}", markup=True)
    tested = [v for v in checks.values() if v is not None]
    if not tested:
        console.print("This run tests none of these claims.")
    else:
        console.print(f"{sum(tested)} of {len(tested)} claim(s) tested hold"
                      + (f"; {len(checks) - len(tested)} not tested by this run." if len(tested) < len(checks) else "."))


def audit_heading(design: str, description: str, corpus, *, shadows=None, canaries=None, canary_length=None,
                  canary_unit: str = "document", canary_documents: int = 1) -> str:
    """The line ``dptopic audit`` starts with: the procedure audited, the corpus, and what the design
    (``"lira"``, ``"one-run"`` or ``"release"``, :func:`dptopic.attacks.audit.audit_design`) trains."""
    head = f"{esc(description)}; corpus {corpus.n_docs} documents, V={corpus.vocab_size};"
    if design == "lira":
        return f"[bold]audit[/]: {head} {shadows} shadow models on complementary halves"
    if design == "one-run":
        return (f"[bold]audit[/] (one-run design): {head} {canaries} canaries of {canary_length} tokens, each included"
                " by a fair coin; one model trained")
    return (f"[bold]audit[/] (one-run design, scored on the release): {head} {canaries:,} canary {canary_unit}s"
            + (f" of {canary_documents} documents" if canary_unit == "person" else "")
            + ", each included by a fair coin; one model trained")


def audit_results_table(summaries: dict):
    """The table of each attack's AUC (± its standard error) and TPR at low FPR; a TPR at an FPR below the resolution
    of the non-member scores (fewer than 1/FPR of them) is shown as n/r (what ``dptopic audit`` prints)."""
    from rich.table import Table  # rich: loaded when a table is printed, not at start-up

    models = any("auc_se_models" in s for s in summaries.values())
    t = Table(title="Membership inference (higher = more leakage)",
              caption="AUC ± its standard error over " + ("documents and shadow models" if models else
                                                          "documents only (too few shadows for the models' part)")
              + " (see docs/auditing.md)")
    for col in ("attack", "AUC", "TPR@FPR=1%", "TPR@FPR=0.1%", "TPR@FPR=0"):
        t.add_column(col, justify="right" if col != "attack" else "left", no_wrap=(col == "attack"),
                     min_width=max(len(n) for n in summaries) if col == "attack" else None)
    from ..attacks.metrics import resolvable  # numpy: loaded when an audit is printed

    def tpr(s, f):
        n = s.get("n_nonmembers")
        if n is not None and not resolvable(n, f):  # no ROC point between FPR 0 and f: it would be the TPR at FPR 0
            return "n/r"
        return f"{s[f'tpr_at_fpr_{f:g}']:.3%}"

    unresolved = False
    for name, s in summaries.items():
        row = [tpr(s, 0.01), tpr(s, 0.001)]
        unresolved |= "n/r" in row
        t.add_row(name, f"{s['auc']:.3f} ± {s['auc_se']:.3f}", *row, f"{s['tpr_at_fpr_0']:.3%}")
    if unresolved:
        t.caption += ("; n/r: fewer non-member scores than 1/FPR, so no threshold has an FPR between 0 and that rate"
                      " (audit more documents or shadows to resolve it)")
    return t


_AUDIT_STYLES = {"bound": "bold", "claim": "bold", "exceeds": "bold red", "consistent": "green", "verdict": "yellow"}


def print_audit_summary(console, doc, written) -> None:
    """The bound, the claim, the verdict and the notes of the audit's record (:func:`~dptopic.attacks.audit.summary_lines`)."""
    from ..attacks.audit import summary_lines  # numpy: loaded when an audit is printed, not at start-up

    for text, emphasis in summary_lines(doc, written):
        console.print(text, style=_AUDIT_STYLES.get(emphasis), markup=False)
