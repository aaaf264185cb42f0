"""Helpers shared by the command groups and light at import (the parsers of cli/parsers/ import them): argument types,
the corpus and model flags, the notes a command prints. The library's readers, as the commands' run code calls them
with their errors in the command's words, are cli/_run_common.py's. What a Python user needs too lives in the library:
the printers of the card and the topics in :mod:`dptopic.reporting.terminal` (re-exported here, as the commands import
them from here), the readers in :mod:`dptopic.datasets` and :mod:`dptopic.corpus`."""
from __future__ import annotations

import argparse
import math
import secrets
import sys

from ..errors import DPTopicError
from ..reporting.terminal import print_topics as _print_topics
from ..reporting.terminal import topic_support
from ._flags import FORMATS


def _float_arg(check, what):
    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not a number") from None
        if not check(v):
            raise argparse.ArgumentTypeError(f"{what}, got {s}")
        return v

    return parse


positive_float = _float_arg(lambda v: v > 0 and math.isfinite(v), "must be a finite number > 0")
epsilon_value = _float_arg(lambda v: 1e-9 <= v <= 500, "an epsilon must lie in [1e-09, 500]")
# an epsilon handed to the accountants as it is (the vocabulary's EPS_V): their range, (0, 500]
epsilon_budget = _float_arg(lambda v: 0 < v <= 500, "an epsilon must lie in (0, 500]")
unit_interval = _float_arg(lambda v: 0 < v < 1, "must lie in (0, 1)")
held_out_share = _float_arg(lambda v: 0 <= v < 1, "must lie in [0, 1) (0: train on every document, no held-out part)")


def _int_arg(lo: int, hi: int | None = None):
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {s}" if hi is None else
                                             f"must be an integer from {lo} to {hi}, got {s}")
        return v

    return parse


positive_int = _int_arg(1)
seed_int = _int_arg(0)
MAX_SEEDS = 1000            # an experiment's runs (--seeds N: seeds 0..N-1); more would never finish
seeds_int = _int_arg(1, MAX_SEEDS)
MAX_JOBS = 256          # the library's bound on n_jobs (dptopic._validation.N_JOBS)
jobs_int = _int_arg(1, MAX_JOBS)


def words_or(*keywords: str):
    """A parser for a number of words (an integer >= 2) or one of ``keywords`` (``--n-words``, ``--report-words``)."""
    def parse(s: str):
        if s in keywords:
            return s
        try:
            n = int(s)
        except ValueError:
            n = 0
        if n < 2:
            raise argparse.ArgumentTypeError(f"must be {' or '.join(keywords)} or an integer >= 2, got {s}")
        return n

    return parse
NO_VOCAB_CAP = 2**31 - 1  # max_vocab that keeps every word: corpus.corpus.NO_CAP (a copy: CLI imports stay light)


def max_vocab_arg(s: str) -> int:
    """``--max-vocab``: an integer >= 2, or ``all`` (no cap: every word, as DP set union needs)."""
    if s.strip().lower() == "all":
        return NO_VOCAB_CAP
    return _int_arg(2)(s)


def add_out_args(p, default: str, what: str = "model") -> None:
    """``--out`` and ``--overwrite`` for a command that writes a {what} folder (checked before any work)."""
    p.add_argument("--out", default=default, help=f"new or empty folder for the {what} (default {default})")
    p.add_argument("--overwrite", action="store_true", help=f"replace --out if it already holds a dptopic {what}")


def eps_delta_pair(s: str) -> tuple:
    """``EPS,DELTA`` with EPS in (0, 500] (the accountants' range) and DELTA in (0, 1)."""
    parts = s.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected EPS,DELTA (e.g. 1.0,1e-5), got {s!r}")
    return epsilon_budget(parts[0].strip()), unit_interval(parts[1].strip())


def df_arg(s: str):
    """``--min-df``/``--max-df``: a document count (``5``) or a fraction of the documents (``0.5``)."""
    try:
        v = int(s)
    except ValueError:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not a count or a fraction") from None
        if not 0 < v <= 1:
            raise argparse.ArgumentTypeError(f"a fraction of the documents must lie in (0, 1], got {s}")
        return v
    if v < 1:
        raise argparse.ArgumentTypeError(f"a document count must be >= 1, got {s}")
    return v


def owner_only_note(source_flag: str, public_flag: str | None = None) -> str:
    """Said after a file written with mode 0600 because it holds figures computed from the documents of
    ``source_flag``, which may be private (they are outside any model's guarantee)."""
    return (f" (readable by you only: it holds figures computed from the documents of {source_flag}"
            + (f"; pass {public_flag} when they are public" if public_flag else "; change its mode to share it") + ")")




def vocabulary_cut_note(corpus) -> str | None:
    """One line saying how many words and what share of the tokens the default ``--max-vocab`` kept, when it left
    words out of a vocabulary built from text (``corpus.vocabulary_cut``); None when it left none out."""
    cut = corpus.vocabulary_cut
    if not cut:
        return None
    share = corpus.n_tokens / cut["tokens_read"] if cut["tokens_read"] else 1.0
    return (f"note: --max-vocab {cut['max_vocab']} (the default) kept the {cut['max_vocab']} most frequent of"
            f" {cut['words']} words, {share:.0%} of the {cut['tokens_read']} tokens read; --max-vocab N keeps more"
            f" (--max-vocab all keeps them all).")


def add_corpus_args(p, required=False, preprocessing=True):
    """``--corpus`` and how to read it; ``preprocessing=False`` where documents are read into a model's vocabulary
    (nothing is chosen from them, so the vocabulary options do not apply)."""
    p.add_argument("--corpus", default=None, required=required,
                   help="'demo' (State of the Union paragraphs), '20newsgroups' (its training split), or a path"
                   if required else "'demo' (State of the Union paragraphs, default), '20newsgroups' (its training"
                   " split), or a path")
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help="input format (auto: by name; text = one document per line)")
    p.add_argument("--vocab", default=None, help="UCI vocab file (default: next to the docword file)")
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    p.add_argument("--label-field", default=None, help="JSONL field / CSV column holding a label")
    if preprocessing:
        add_preprocessing_args(p)


def add_model_arg(p, help: str = "a saved model folder") -> None:
    """The model folder, as ``dptopic CMD MODEL`` (as ``privacy verify`` takes it) or ``--model MODEL``; resolved into
    ``a.model`` by :func:`resolve_model_arg` before the command runs."""
    p.add_argument("model_pos", nargs="?", default=None, metavar="MODEL", help=f"{help} (or --model MODEL)")
    p.add_argument("--model", default=None, help=help)
    p.set_defaults(_model_of=p.prog)


def resolve_model_arg(a) -> None:
    """``a.model`` from the positional MODEL or ``--model`` (one of them; both only when they agree)."""
    prog = getattr(a, "_model_of", None)
    if prog is None:
        return
    pos, opt = a.model_pos, a.model
    if pos is not None and opt is not None and pos != opt:
        raise DPTopicError(f"two models given, {pos!r} and --model {opt!r}: give one ({prog} MODEL or --model MODEL).")
    a.model = opt if opt is not None else pos
    if a.model is None:
        raise DPTopicError(f"no model given: name a saved model folder ({prog} MODEL, or --model MODEL).")


def add_preprocessing_args(p):
    g = p.add_argument_group("preprocessing (a vocabulary built from the data is not private: to train on a private"
                             " corpus, 'dptopic train' takes --vocabulary FILE or --private-vocabulary)")
    g.add_argument("--max-vocab", type=max_vocab_arg, default=None, metavar="N|all",
                   help="keep the N most frequent words, or all of them (default 1000 for text; a prepared .npz or a"
                        " UCI file keeps its own words unless given)")
    g.add_argument("--min-df", type=df_arg, default=None, metavar="N|F",
                   help="keep words in at least N documents, or a fraction F of them (default 1)")
    g.add_argument("--max-df", type=df_arg, default=None, metavar="N|F",
                   help="drop words in more than N documents, or more than a fraction F of them (default: no limit;"
                        " 0.5 drops filler words that occur everywhere)")
    g.add_argument("--stop-words", default=None, metavar="english|none|FILE|english+FILE",
                   help="stop words to drop: scikit-learn's English list (default for text), none, a file with one"
                        " word per line (instead of the English list), or english+FILE (both)")
    g.add_argument("--lowercase", default=None, action=argparse.BooleanOptionalAction,
                   help="fold raw text to lower case (default: yes)")
    g.add_argument("--keep-urls", action="store_true", default=None,
                   help="count the words of web addresses, e-mail addresses and @handles in raw text (default: they"
                        " are dropped before the text is split into words; docs/preprocessing.md)")


def user_args(a) -> dict:
    """``load_corpus``'s ``user_field``/``users_by_folder`` for ``train --unit user`` (empty otherwise)."""
    if getattr(a, "unit", None) != "user":
        return {}
    return {"user_field": getattr(a, "user_field", None), "users_by_folder": getattr(a, "user_field", None) is None}


def refuse_data_cuts(a, given: str) -> None:
    """With the words given (``--vocabulary``) or chosen by DP set union (``--private-vocabulary``), the cuts that
    choose words from the data cannot apply: refused in one line (``given`` says what chose the words)."""
    cuts = [flag for flag, v in (("--max-vocab", a.max_vocab), ("--min-df", a.min_df),
                                 ("--max-df", getattr(a, "max_df", None)))
            if v is not None and not (flag == "--max-vocab" and v == NO_VOCAB_CAP)]    # 'all' chooses nothing
    if cuts:
        verb = "chooses" if len(cuts) == 1 else "choose"
        raise DPTopicError(f"{given}, so {' / '.join(cuts)} (which {verb} words from the data) cannot apply: drop one"
                           " or the other.")


class ExitStatus(int):
    """What a command function returns to end with a status of its own (``privacy verify``'s 3); any other return
    value is ignored and a command that returns ends with 0."""


_PENDING_NOTES: list = []   # notes for stderr, printed once the command has succeeded (an error stays one line)


def note_vocabulary_cut(corpus) -> None:
    line = vocabulary_cut_note(corpus)
    if line and line not in _PENDING_NOTES:
        _PENDING_NOTES.append(line)


def flush_notes(show: bool = True) -> None:
    """Print the pending notes to stderr (``show=False``: drop them, as when the command ends in an error)."""
    lines = list(_PENDING_NOTES)
    _PENDING_NOTES.clear()
    for line in lines if show else ():
        print(line, file=sys.stderr)


def print_topics(*args, **kw) -> None:
    """:func:`dptopic.reporting.terminal.print_topics`, its hint on hidden topics in this command line's flag."""
    kw.setdefault("hint", "--show-unsupported shows their words")
    _print_topics(*args, **kw)


def refuse_show_unsupported(model, spec) -> None:
    """``--show-unsupported`` on a model that carries no support assessment: refused in one line."""
    if topic_support(model)[0] is None:
        raise DPTopicError(f"--show-unsupported: --model {str(spec)!r} ({type(model).__name__}) carries no assessment"
                           " of which topics stand above the noise (only the document-level private trainers, docdp,"
                           " docdp-cooc and svi, make one), so every topic is shown already: drop --show-unsupported.")


# ------------------------------------------------------------- experiments (shared by every experiment command)
def add_common_experiment_args(p, topics=50, iterations=100, seeds=3, out="runs/experiment"):
    p.add_argument("--corpus", default="demo", choices=("demo", "20newsgroups"))
    p.add_argument("--topics", type=positive_int, default=topics)
    p.add_argument("--iterations", type=positive_int, default=iterations)
    p.add_argument("--seeds", type=seeds_int, default=seeds)
    p.add_argument("--max-docs", type=positive_int, default=None, help="use only the first N training documents (default: all of them)")
    p.add_argument("--out", default=out)


def add_seed_arg(p) -> None:
    p.add_argument("--seed", type=seed_int, default=None,
                   help="reproduce a run (the docs' figures use --seed 0); default: fresh OS entropy, printed")


def experiment_seed(a, console) -> int:
    """The experiment's seed: ``--seed``, or a fresh one from the OS that is printed so the run can be
    repeated. Experiments are reproductions on public benchmark corpora; they release no model."""
    if a.seed is None:
        a.seed = secrets.randbelow(2**31)
        console.print(f"seed {a.seed} (pass --seed {a.seed} to repeat this run)")
    return a.seed


MAX_TIMEOUT = 1e6    # seconds per request (about 11 days): beyond the platform's timer range a request fails
MAX_RETRIES = 1000


_timeout_arg = _float_arg(lambda v: 0 < v <= MAX_TIMEOUT, f"must be a number of seconds in (0, {MAX_TIMEOUT:g}]")
_retries_arg = _int_arg(0, MAX_RETRIES)     # pull --retries; serve's too


def add_request_args(p, per: str, retries: int, retrying: str) -> None:
    """``--timeout`` (seconds ``per`` request or attempt) and ``--retries`` (default ``retries``, ``retrying``: when)
    of a command that talks to a server."""
    p.add_argument("--timeout", type=_timeout_arg, default=30.0,
                   help=f"seconds per {per}, in (0, {MAX_TIMEOUT:g}] (default 30)")
    p.add_argument("--retries", type=_retries_arg, default=retries,
                   help=f"retries {retrying}, 0 to {MAX_RETRIES} (default {retries})")
