"""Library parameter names in error lines, rewritten as the command-line flags that set them.

The library's one-line errors name its Python parameters (``invalid n_words=100000: ...``, ``pad_length=1 is too
small ...``): right for a caller of the API, not for a user of the command line, who typed ``--n-words`` and
``--pad-length``. A command that builds a model (or a corpus, a service configuration, an experiment) from its flags
runs that code inside :func:`flag_errors` with the mapping from the parameters it set to the flags that set them;
an error on the way out is reworded, nothing else changes (the same class, one line, exit status 2 in ``main``).

Only parameters the command set from a flag are mapped: a name the user typed himself (``audit --set n_iter=5``,
``experiment lira --dp-set sampling_rate=2``) stays as typed.
"""
from __future__ import annotations

import functools
import re
from contextlib import contextmanager

from ..errors import DPTopicError

# A value after ``name=``: a quoted string, or a token up to a space, ``:``, ``;``, ``,``, ``)`` or a closing full stop.
_VALUE = r"(?P<value>'[^']*'|\"[^\"]*\"|[^\s:;,()]+?)(?=[\s:;,)]|\.\s|\.$|$)"

# Flags shared by every command that reads a corpus with the preprocessing options (_common.add_preprocessing_args).
CORPUS_FLAGS = {"max_vocab": "--max-vocab", "min_df": "--min-df", "max_df": "--max-df", "stop_words": "--stop-words",
                "lowercase": "--lowercase"}

# --format of every command that reads a corpus file (the readers name format=)
FORMAT_FLAG = {"format": "--format"}

# a UCI corpus read by a command without --vocab (read_corpus(vocab_flag=None)): the readers name vocabulary=
UCI_VOCABULARY_RULES = ((r"\(the UCI vocabulary is read from there; vocabulary= is the public word list",
                         "(this command reads the UCI vocabulary from there; --vocabulary is the public word list"),)

CORPUS_RULES = (
    # Corpus.prune when only --min-df was given: no upper bound to raise
    (r"^max_df=None keeps words in at most (\d+) of (\d+) documents, below min_df=(\S+) \((\d+) documents\): no"
     r" word can pass; raise --max-df or lower --min-df\.$",
     r"--min-df \3 keeps only words in at least \4 documents, but the corpus has \2: no word can pass; lower"
     r" --min-df."),
    (r"give more text or lower min_df/min_length\.$",
     "give more text, or keep more words: lower --min-df, raise --max-df, or check --stop-words and --vocabulary."),
)

# --jobs takes threads (argparse refuses 0 and negatives): only the positive half of the library's n_jobs range
JOBS_RULES = ((r"^invalid n_jobs=(\S+): must be .*?an integer in \[1, (\d+)\]\.$",
               r"invalid --jobs \1: must be an integer in [1, \2]."),)

# HDP-LDA with --clip: eps_I follows from the clip bound (--epsilon-inherent is the other way to set it)
CLIP_RULES = (
    (r"\bepsilon_inherent=(\S+?)(?=[\s:;,)])", r"eps_I=\1 (from --clip)"),
    (r"\ba smaller epsilon_inherent\b", "a smaller --clip"),
)


def epsilon_rules(flag: str) -> tuple:
    """The noise's range met by an epsilon ``flag`` (``--epsilon``, ``--eps-grid``) of a Laplace trainer (cdp, cdp+):
    the library names the noise scale, or the epsilon of one release (sensitivity/scale)."""
    return (
        (r"^invalid scale=(\S+): the Laplace samplers support scales in (\(0, [^\]]*\]), i\.e\. epsilon >="
         r" sensitivity/(\S+); raise epsilon\.$",
         rf"{flag} is too small: its noise scale \1 is beyond the Laplace samplers' range \2 (epsilon >="
         rf" sensitivity/\3); raise {flag}."),
        (r"^invalid epsilon \(sensitivity/scale\)=(\S+): must be (.*)\.$",
         rf"{flag} is too large: the epsilon of each noisy release it sets (sensitivity/scale = \1) must be \2;"
         rf" lower {flag}."),
    )


def _flag_value(flag: str, value: str) -> str:
    """``--flag VALUE`` for ``name=VALUE`` (a string without its quotes); ``name=None`` is a flag not given."""
    if value == "None":
        return f"no {flag}"
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return f"{flag} {value}"


def translate(message: str, names: dict, rules=(), keep=None) -> str:
    """``message`` with each parameter of ``names`` (``{"n_words": "--n-words"}``) written as its flag.

    ``rules`` (pairs of a regular expression and its replacement, a string or a function of the match) run first,
    for sentences a plain rename would leave wrong. Then ``name=VALUE`` becomes ``--flag VALUE`` (quotes dropped:
    ``exclusion='none'`` is ``--exclusion none``), and a bare ``snake_case`` name becomes ``--flag``; single words
    (``epsilon``, ``delta``) are prose as often as names and are renamed only in the ``name=`` form and before a bound
    (``give epsilon > 20``). A message that matches the regular expression ``keep`` is left as it is.
    """
    text = str(message)
    if keep is not None and re.search(keep, text):
        return text
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text)
    for name in sorted(names, key=len, reverse=True):
        flag = names[name]
        text = re.sub(rf"(?<![\w\-./'\"]){re.escape(name)}={_VALUE}",
                      lambda m, flag=flag: _flag_value(flag, m.group("value")), text)
        if "_" in name:
            text = re.sub(rf"(?<![\w\-./'\"]){re.escape(name)}(?![\w\-=]|\.\w)", flag, text)
        else:       # a single word is a name where a bound follows it: "give epsilon > 20"
            text = re.sub(rf"(?<![\w\-./'\"]){re.escape(name)}(?= (?:>=|<=|>|<) )", flag, text)
    if text != str(message):    # a flag given on the command line is never None: the API's "None or" is not for it
        text = text.replace(" must be None or ", " must be ")
    return text


@contextmanager
def flag_errors(names: dict, rules=(), keep=None):
    """Reword a :class:`~dptopic.errors.DPTopicError` raised inside the block with :func:`translate`; the error keeps
    its class (``main`` prints it as one line, exit status 2)."""
    try:
        yield
    except DPTopicError as e:
        message = str(e)
        new = translate(message, names, rules, keep)
        if new == message:
            raise
        try:
            err = type(e)(new)
        except Exception:  # a subclass with another signature: the message is what the command line shows
            err = DPTopicError(new)
        raise err from e


def with_flag_names(names: dict, rules=()):
    """Decorate a command function whose flags map to library parameters in a fixed way: its errors are reworded by
    :func:`flag_errors`."""
    def wrap(func):
        @functools.wraps(func)
        def run(a):
            with flag_errors(names, rules):
                return func(a)

        return run

    return wrap


def epsilon_word_rules(flag: str, value) -> tuple:
    """An ``epsilon_word`` so small that the flip parameter ``f = 2/(1 + e^eps_word)`` rounds to 1: the library names
    ``f``; the user gave ``flag`` (``randomize --epsilon-word``, ``serve --epsilon-word``, ``audit --epsilon``)."""
    if value is None:
        return ()
    return ((r"^invalid f=1(?:\.0)?: .*$",
             f"{flag} {value:g} is too small: its flip parameter f = 2/(1 + e^eps_word) rounds to 1, which keeps"
             f" nothing of the documents; give a larger {flag}."),)
