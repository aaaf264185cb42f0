"""``randomize`` (contributor side: a corpus read over the public vocabulary becomes one locally private report per
document, word-level by :class:`~dptopic.contributor.Randomizer`, document-level by
:class:`~dptopic.contributor.DocumentRandomizer`, saved to a report file, with what was written and its guarantee
printed; the server's side, ``train --algorithm lp|olp|ldp-doc``, is cli/train_reports.py's). The notes' counts
(:func:`~dptopic.reporting.terminal.print_empty_note`) are exact counts of the contributor's documents, printed on
their machine and never sent."""
from __future__ import annotations

import sys

from .._io import check_output_file
from ..accounting.card import epsilon_text as _eps
from ..contributor.document_randomizer import DocumentRandomizer
from ..contributor.randomizer import Randomizer
from ..datasets import PUBLIC_VOCABULARY_DECIDES
from ..errors import DPTopicError
from ..protocol.document_reports import MAGIC as DOC_MAGIC
from ..protocol.document_reports import REPORT_ITEM_BYTES, report_size
from ..protocol.reports import MAGIC
from ..reporting.terminal import esc, make_console, plural, print_empty_note, print_no_pair_note
from ._flags import flag_errors
from ._run_common import load_corpus, read_vocabulary


def cmd_randomize(a):
    names = {"epsilon_word": "--epsilon-word", "f": "--f", "epsilon_doc": "--epsilon-doc", "vocabulary": "--vocabulary"}
    if a.unit == "document":    # DocumentRandomizer(vocabulary, epsilon)
        names["epsilon"] = "--epsilon-doc"
    with flag_errors(names):
        _randomize(a)


def _randomize(a):
    if a.unit == "document":
        if a.epsilon_word is not None or a.f is not None:
            raise DPTopicError("--unit document takes --epsilon-doc (per document); --epsilon-word/--f are for --unit word.")
    elif a.epsilon_doc is not None:     # the flag given for the other unit first: it says what was meant
        raise DPTopicError("--epsilon-doc is for --unit document; --unit word takes --epsilon-word (or --f)"
                           + (": add --unit document for a per-document guarantee." if a.epsilon_word is None
                              and a.f is None else "."))
    elif a.epsilon_word is None and a.f is None:
        raise DPTopicError("--unit word needs --epsilon-word (or --f); for a per-document guarantee use --unit document"
                           " --epsilon-doc 8.")
    check_output_file(a.out, is_report_file, overwrite=a.overwrite, what="report file")
    console = make_console(stderr=True)
    vocab = read_vocabulary(a.vocabulary)
    # one report per input document, those with no vocabulary word included (randomize_words says why)
    corpus = load_corpus(a.corpus, a.format, None, a.text_field, None, vocabulary=vocab, drop_empty=False,
                         vocab_settable=False, stop_words=PUBLIC_VOCABULARY_DECIDES)
    if a.unit == "document":
        randomize_documents(corpus, vocab, a.out, console, epsilon_doc=8.0 if a.epsilon_doc is None else a.epsilon_doc)
    else:
        randomize_words(corpus, vocab, a.out, console, epsilon_word=a.epsilon_word, f=a.f)


LARGE_REPORT_BYTES = 1_000_000     # a document-level report above this size gets a warning before randomizing


def is_report_file(path) -> bool:
    """Whether ``path`` is a report file (word- or document-level), which ``randomize --overwrite`` may replace."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) in (MAGIC, DOC_MAGIC)
    except OSError:
        return False


def randomize_words(corpus, vocabulary, out, console, *, epsilon_word=None, f=None) -> None:
    """LP-LDA's per-word reports of ``corpus`` (every document, those with no vocabulary word included: dropping them
    would make the number of reports an exact function of the raw text), saved to ``out``."""
    rz = Randomizer(vocabulary, epsilon_word=epsilon_word, f=f)  # OS CSPRNG; no seed, ever
    reports = rz.randomize(corpus)
    out = reports.save(out)
    n = reports.n_reports
    console.print(f"{plural(n, 'randomized report')} written to [bold]{esc(out)}[/] (V={rz.vocab_size},"
                  f" f={rz.f:.6g}; eps_word={_eps(rz.epsilon_word)} per word, eps_doc={_eps(rz.epsilon_doc)} per"
                  " document" + ("" if n == 1 else f"; together eps_word={_eps(n * rz.epsilon_word)} for one word's"
                                 f" presence in each and eps={_eps(n * rz.epsilon_doc)} for all {n:,} documents, by"
                                 " basic composition, if one person wrote them all")
                  + "; coins from the OS CSPRNG)", markup=True)
    print_empty_note(int((corpus.doc_lengths == 0).sum()), corpus.n_docs)


def randomize_documents(corpus, vocabulary, out, console, *, epsilon_doc: float) -> None:
    """One word pair per document of ``corpus`` by k-subset selection, saved to ``out`` (a warning first when each
    report is large: :func:`warn_large_document_reports`)."""
    rz = DocumentRandomizer(vocabulary, epsilon_doc)  # OS CSPRNG; no seed, ever
    warn_large_document_reports(rz.vocab_size, rz.epsilon, corpus.n_docs)
    reports = rz.randomize(corpus)
    out = reports.save(out)
    n = reports.n_reports
    console.print(f"{plural(n, 'document-level report')} written to [bold]{esc(out)}[/] (V={rz.vocab_size},"
                  f" eps_doc={_eps(rz.epsilon)} per document, {plural(reports.subset_size, 'item')} per report"
                  + ("" if n == 1 else f"; together eps={_eps(n * rz.epsilon)} for all {n:,} documents, by basic"
                                       " composition, if one person wrote them all")
                  + "; coins from the OS CSPRNG)", markup=True)
    print_no_pair_note(int((corpus.doc_lengths < 2).sum()), corpus.n_docs)


def _size(n_bytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{int(n_bytes)} bytes"


def warn_large_document_reports(vocab_size: int, epsilon: float, n_docs: int) -> None:
    """Warn once, before randomizing, when a document-level report exceeds :data:`LARGE_REPORT_BYTES`
    (:func:`dptopic.protocol.document_reports.report_size`: the size per document, the total, and the --epsilon-doc or
    vocabulary size that keep a report under the limit); the mechanism is unchanged."""
    per_doc, eps_min, v_max = report_size(vocab_size, epsilon, LARGE_REPORT_BYTES)
    if eps_min is None:
        return
    print(f"warning: at --epsilon-doc {epsilon:g} over {vocab_size} words each document-level report holds"
          f" {per_doc // REPORT_ITEM_BYTES:,} items ({_size(per_doc)} per document), so {plural(n_docs, 'document')}"
          f" will write {_size(per_doc * n_docs)}: --epsilon-doc {eps_min:.2f} or more, or a --vocabulary of at most"
          f" {v_max} words, keeps each report under {LARGE_REPORT_BYTES / 1e6:g} MB.", file=sys.stderr, flush=True)


