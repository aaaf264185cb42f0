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
import re
from contextlib import contextmanager

from ..errors import DPTopicError, ParameterError

# Flags shared by every command that reads a corpus with the preprocessing options (_common.add_preprocessing_args).
CORPUS_FLAGS = {"max_vocab": "--max-vocab", "min_df": "--min-df", "max_df": "--max-df", "stop_words": "--stop-words",
                "lowercase": "--lowercase"}

# --format of every command that reads a corpus file (the readers name format=)
FORMAT_FLAG = {"format": "--format"}

# HDP-LDA with --clip: eps_I follows from the clip bound (--epsilon-inherent is the other way to set it)
FROM_CLIP = {"epsilon_inherent": ("--clip", "eps_I={value} (from --clip)")}

# A value after ``name=`` in a line that is not yet a ParameterError: a quoted string, or a token up to a space, ``:``,
# ``;``, ``,``, ``)`` or a closing full stop.
_VALUE = r"(?P<value>'[^']*'|\"[^\"]*\"|[^\s:;,()]+?)(?=[\s:;,)]|\.\s|\.$|$)"


def _flag_value(flag: str, value: str) -> str:
    if value == "None":
        return f"no {flag}"
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return f"{flag} {value}"


def _unstructured(message: str, names: dict) -> str:
    """A bridge for the library's refusals that are not yet a :class:`ParameterError` (a plain
    :class:`DPTopicError` that names a parameter in its text): ``name=VALUE`` read as ``--flag VALUE`` and a bare
    ``snake_case`` name as ``--flag``. It rewrites names only, never a sentence; each raise site it serves is to
    become a ParameterError (then it is not called)."""
    text = str(message)
    for name in sorted(names, key=len, reverse=True):
        flag = names[name]
        if isinstance(flag, tuple):         # (the name alone, the name with its value): ParameterError's
            flag = flag[0]
        text = re.sub(rf"(?<![\w\-./'\"]){re.escape(name)}={_VALUE}",
                      lambda m, flag=flag: _flag_value(flag, m.group("value")), text)
        if "_" in name:
            text = re.sub(rf"(?<![\w\-./'\"]){re.escape(name)}(?![\w\-=]|\.\w)", flag, text)
        else:       # a single word is a name where a bound follows it: "give epsilon > 20"
            text = re.sub(rf"(?<![\w\-./'\"]){re.escape(name)}(?= (?:>=|<=|>|<) )", flag, text)
    if text != str(message):    # a flag given on the command line is never None: the API's "None or" is not for it
        text = text.replace(" must be None or ", " must be ")
    return text


def flag_message(error: DPTopicError, names: dict) -> str:
    """``error``'s line with each parameter of ``names`` (``{"n_words": "--n-words"}``) written as its flag."""
    if isinstance(error, ParameterError):
        return error.message(names)
    return _unstructured(str(error), names)


@contextmanager
def flag_errors(names: dict):
    """Write a :class:`~dptopic.errors.DPTopicError` raised inside the block in the flags ``names`` maps its
    parameters to (:func:`flag_message`); ``main`` prints it as one line, exit status 2. The error keeps its class
    where it can be made from one line."""
    try:
        yield
    except DPTopicError as e:
        message = str(e)
        new = flag_message(e, names)
        if new == message:
            raise
        if isinstance(e, ParameterError):
            err = DPTopicError(new)
        else:
            try:
                err = type(e)(new)
            except Exception:  # a subclass with another signature: the message is what the command line shows
                err = DPTopicError(new)
        raise err from e


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
