"""Library errors in the flags of the command line.

The library's one-line errors name its Python parameters (``invalid n_words=100000: ...``): right for a caller of the
API, not for a user of the command line, who typed ``--n-words``. A refusal of a parameter is a
:class:`~dptopic.errors.ParameterError`, which carries the parameters it names and writes its line in any names
(:meth:`~dptopic.errors.ParameterError.message`). A command that builds a model (or a corpus, a service
configuration, an experiment) from its flags runs that code inside :func:`flag_errors` with the mapping from the
parameters it set to the flags that set them; the error is written in those flags, nothing else changes (one line,
exit status 2 in ``main``). No message text is rewritten: rewording a library message is never a change here.

Only parameters the command set from a flag are mapped: a name the user typed himself (``audit --set n_iter=5``,
``experiment lira --dp-set sampling_rate=2``) stays as typed.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager

from ..errors import DPTopicError, ParameterError, use_flag_templates
from ._flag_templates import FLAG_TEMPLATES

use_flag_templates(FLAG_TEMPLATES)     # the library's lines with a sentence of the command line's own

# Flags shared by every command that reads a corpus with the preprocessing options (_common.add_preprocessing_args).
CORPUS_FLAGS = {"max_vocab": "--max-vocab", "min_df": "--min-df", "max_df": "--max-df", "stop_words": "--stop-words",
                "lowercase": "--lowercase"}

# --format of every command that reads a corpus file (the readers name format=), and the formats it takes
FORMAT_FLAG = {"format": "--format"}
FORMATS = ("auto", "uci", "jsonl", "csv", "dir", "text", "npz")

# how every command that reads a corpus file names its reader's parameters (datasets.load_corpus, corpus.readers;
# the CSV reader's *_column are the same settings as the JSONL reader's *_field)
READING_FLAGS = {**FORMAT_FLAG, **CORPUS_FLAGS, "vocab": "--vocab", "vocabulary": "--vocabulary",
                 "keep_urls": "--keep-urls", "text_field": "--text-field", "text_column": "--text-field",
                 "label_field": "--label-field", "label_column": "--label-field", "id_field": "--id-field",
                 "id_column": "--id-field", "user_field": "--user-field", "user_column": "--user-field"}

# HDP-LDA with --clip: eps_I follows from the clip bound (--epsilon-inherent is the other way to set it)
FROM_CLIP = {"epsilon_inherent": ("--clip", "eps_I={value} (from --clip)")}

# the parameters every command that writes sets by the same flags (the dataset ledger a spending command records to
# included): main writes any refusal that names them in these
OUTPUT_FLAGS = {"out": "--out", "overwrite": "--overwrite", "ledger": "--ledger"}

# the parameters a library warning's advice names (a ParameterWarning), as every command that warns sets them: main
# writes such a warning in these flags, as it writes a refusal in OUTPUT_FLAGS
WARNING_FLAGS = {**READING_FLAGS, **OUTPUT_FLAGS, "private_vocabulary": "--private-vocabulary",
                 "report_words": "--report-words"}


def flag_message(error: DPTopicError, names: dict) -> str:
    """``error``'s line with each parameter of ``names`` (``{"n_words": "--n-words"}``) written as its flag; an error
    that is not a :class:`ParameterError` names no parameter as data and keeps its line."""
    if isinstance(error, FlagError):
        return error.error.message({**names, **error.names})
    return error.message(names) if isinstance(error, ParameterError) else str(error)


class FlagError(DPTopicError):
    """A :class:`ParameterError` written in flags; a :func:`flag_errors` around the one that wrote it may name more of
    its parameters (a command's corpus flags around its trainer's)."""

    def __init__(self, error: ParameterError, names: dict):
        self.error, self.names = error, dict(names)
        super().__init__(error.message(self.names))


@contextmanager
def flag_errors(names: dict):
    """Write a :class:`~dptopic.errors.ParameterError` raised inside the block in the flags ``names`` maps its
    parameters to (:func:`flag_message`); ``main`` prints it as one line, exit status 2. Any other error goes out as
    it came."""
    try:
        yield
    except (FlagError, ParameterError) as e:
        if flag_message(e, names) == str(e):
            raise
        original = e.error if isinstance(e, FlagError) else e
        raise FlagError(original, {**names, **e.names} if isinstance(e, FlagError) else names) from original


def with_flag_names(names: dict):
    """Decorate a command function whose flags map to library parameters in a fixed way: its errors are written in
    its flags by :func:`flag_errors`."""
    def wrap(func):
        @functools.wraps(func)
        def run(a):
            with flag_errors(names):
                return func(a)

        return run

    return wrap


def add_reading_args(p, of: str | None = None, vocab: bool = True, label: bool = False) -> None:
    """How a command reads a corpus file it is given: ``--format``, ``--vocab`` (the vocabulary file of a UCI corpus)
    unless ``vocab`` is false, ``--text-field``, and ``--label-field`` with ``label``. ``of``: the flag naming the
    file, for a command that reads more than one kind (``--prior``, ``--reference``)."""
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help=f"format of {of} (auto: by name)" if of else "input format (auto: by name)")
    if vocab:
        p.add_argument("--vocab", default=None, metavar="FILE",
                       help=f"the vocabulary file of a UCI {of} (default: next to its docword file)" if of else
                       "UCI vocab file (default: next to the docword file)")
    p.add_argument("--text-field", default="text",
                   help=f"JSONL field / CSV column holding the text{f' of {of}' if of else ''} (default: text)")
    if label:
        p.add_argument("--label-field", default=None, help="JSONL field / CSV column holding a label")
