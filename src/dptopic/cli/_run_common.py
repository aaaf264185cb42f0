"""The helpers the commands' run code shares that call the library: the readers of corpora, word lists and a saved
model's documents (their errors written in flags), the notes on what was read, the ``--out`` check and ``--set``'s
settings. Apart from cli/_common.py, which the parsers import (its imports load nothing of the library)."""
from __future__ import annotations

import sys
from pathlib import Path

from .._io import check_output_dir, claim_output, load_json
from ..corpus.files import tab_header_rows
from ..corpus.readers import FORMAT_NAMES, auto_format, file_suffix, is_tab_separated
from ..corpus.wordlist import read_vocabulary as _read_vocabulary
from ..datasets import BUILT_IN
from ..datasets import experiment_corpora as _experiment_corpora
from ..datasets import load_corpus as _load_corpus
from ..datasets import read_into_model as _read_into_model
from ..errors import DPTopicError
from ._common import note_vocabulary_cut, user_args
from ._flags import READING_FLAGS, flag_errors


def check_out(a, *suffixes: str) -> None:
    """Refuse an ``--out`` that cannot or must not be written, before training (see ``_io.check_output_dir``).
    ``suffixes`` name sibling folders the command also writes (``runs/demo-nonprivate``)."""
    # held until the command ends (main's _dispatch lets go): another run into the same --out is refused meanwhile,
    # and the check below cannot pass for two runs at once
    for out in (a.out, *(str(a.out).rstrip("/\\") + suf for suf in suffixes)):
        check_output_dir(out, overwrite=a.overwrite)      # a path that may be written at all
        claim_output(out)
        check_output_dir(out, overwrite=a.overwrite)      # and still may, now that it is held


# The library's readers of corpora and word lists: a reader's ``format`` and ``vocabulary`` errors are written in flags.
def load_corpus(*args, **kw):
    """:func:`dptopic.datasets.load_corpus`, its errors in flags (``--corpus``)."""
    with flag_errors(READING_FLAGS):
        return _load_corpus(*args, **kw)


def read_into_model(*args, **kw):
    """:func:`dptopic.datasets.read_into_model` (documents in a saved model's words), its errors in flags."""
    with flag_errors({**READING_FLAGS, "corpus": "--corpus", "reference": "--reference"}):
        return _read_into_model(*args, **kw)


def experiment_corpora(*args, **kw):
    """:func:`dptopic.datasets.experiment_corpora`: an experiment's (train, test)."""
    return _experiment_corpora(*args, **kw)


def read_vocabulary(*args, **kw):
    """:func:`dptopic.corpus.wordlist.read_vocabulary` (``--vocabulary FILE | wordfreq:LANG[:SIZE]``)."""
    with flag_errors({"vocabulary": "--vocabulary"}):
        return _read_vocabulary(*args, **kw)


def reading_note(spec, fmt: str, text_field: str = "text") -> str | None:
    """One line for stderr saying which format ``--format auto`` read the path ``spec`` in and which field held the
    text (None for a built-in corpus, a shard folder or a format given): the choice is never silent."""
    if fmt != "auto" or spec in BUILT_IN:
        return None
    p = Path(spec)
    chosen = auto_format(p)
    by = ("it is a folder" if chosen == "dir" else "by its name, docword.*" if chosen == "uci" else
          f"by its extension {file_suffix(p)!r}")
    if chosen == "csv" and is_tab_separated(p):
        rows = tab_header_rows(p)
        what = ("tab-separated values with Orange's header rows (names, types, flags)" if rows > 1 else
                "tab-separated values with one header row")
    else:
        what = "CSV with one header row" if chosen == "csv" else FORMAT_NAMES[chosen]
    field = ({"jsonl": f", the text from field {text_field!r}", "csv": f", the text from column {text_field!r}"}
             .get(chosen, ""))
    return (f"read {str(spec)!r} as {what}{field} (--format auto, {by};"
            f" {'--format and --text-field choose' if field else '--format chooses'} otherwise)")


def say_reading(a) -> None:
    """``--format auto`` never guesses silently: which format and field the corpus file was read in, one line on stderr
    (once), said just before the first step that spends or trains, once the input is known good (so that an error
    about the input stays the one line on stderr)."""
    if getattr(a, "_reading_said", False) or getattr(a, "corpus", None) is None:
        return
    a._reading_said = True
    note = reading_note(a.corpus, getattr(a, "format", "auto"), getattr(a, "text_field", "text"))
    if note is not None:
        print(f"note: {note}", file=sys.stderr)


def corpus_from_args(a):
    corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, a.max_vocab, a.min_df,
                         max_df=getattr(a, "max_df", None), stop_words=getattr(a, "stop_words", None),
                         lowercase=getattr(a, "lowercase", None), user_cuts=True, **user_args(a),
                         keep_urls=getattr(a, "keep_urls", None))
    if getattr(a, "max_vocab", None) is None and a.corpus not in BUILT_IN:
        note_vocabulary_cut(corpus)     # a user's text (the built-in corpora are documented with their cap)
    return corpus


def parse_settings(items, flag: str = "--set") -> dict:
    """``NAME=VALUE`` pairs (``--set``, ``--dp-set``); values are parsed as JSON numbers/booleans where possible, and
    ``none``/``None``/``null`` as None."""
    out = {}
    for it in items or []:
        if "=" not in it:
            raise DPTopicError(f"invalid {flag} {it!r}: write NAME=VALUE, e.g. {flag} sampling_rate=0.2.")
        k, v = it.split("=", 1)
        if v.strip() in ("none", "None", "null"):       # Python's and JSON's spelling of "no value"
            out[k.strip()] = None
            continue
        try:
            out[k.strip()] = load_json(v, f"{flag} {k.strip()}")
        except ValueError:
            out[k.strip()] = v
    return out
