"""User-facing errors.

Every problem a user can cause (bad parameter, bad file, bad corpus) raises a
:class:`DPTopicError` whose message is a single line saying what is wrong and
how to fix it. The CLI prints that line and exits with status 2, never a
traceback.
"""


import os
import sys

_INTERNAL = (os.path.dirname(os.path.abspath(__file__)) + os.sep,)


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` (called by the function that calls this) that names the first frame
    outside dptopic and scikit-learn's wrappers (``set_output`` wraps ``transform``; a search calls ``fit``): the
    user's line, however many of our own calls lie between (``fit_transform`` calls ``fit``, which calls the step
    that warns). The last frame when every frame is ours (the CLI)."""
    global _INTERNAL
    if len(_INTERNAL) == 1:
        try:
            import sklearn

            _INTERNAL = _INTERNAL + (os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep,)
        except ImportError:
            pass
    f, level = sys._getframe(1), 1
    while f.f_back is not None and os.path.abspath(f.f_code.co_filename).startswith(_INTERNAL):
        f, level = f.f_back, level + 1
    return level


class DPTopicError(ValueError):
    """A user error with a one-line, actionable message."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class InputTypeError(DPTopicError, TypeError):
    """Input of the wrong type (an entry of a count matrix that is not a number): a :class:`DPTopicError` that is
    also a ``TypeError``, as Python and scikit-learn raise for it."""


class CorruptModelError(DPTopicError):
    """A saved model directory is missing files or has inconsistent contents."""


class BudgetExceededError(DPTopicError):
    """A privacy ledger was asked to spend more than its budget."""


class SmallCorpusWarning(UserWarning):
    """Warned when, by the utility table measured on public corpora, the corpus is too small for useful topics at
    the budget: the model still trains, but its topics may be noise."""


class ForecastWarning(SmallCorpusWarning):
    """The :class:`SmallCorpusWarning` that forecasts, from the utility table, the topic quality to expect at this
    budget and corpus size (``dptopic recommend``'s figures). ``dptopic train`` says it once, before anything is spent,
    and silences this class alone in the fit: every other warning of the library reaches its stderr as Python shows
    it."""


class SeededNoiseWarning(UserWarning):
    """Warned when a private trainer or a local randomizer is given an explicit seed: whoever knows the seed can
    regenerate the noise and remove it, so the guarantee holds only while the seed stays secret. Seeds are for tests
    and reproduction; leave ``seed=None`` (fresh OS entropy) otherwise. Filter this class to silence it in tests."""


class DataVocabularyWarning(UserWarning):
    """Warned when a private trainer's vocabulary was chosen from its training documents: which words it holds is not
    covered by the guarantee (the privacy card says partial). Pass a public vocabulary, or choose one privately."""


def __getattr__(name):
    """``NotFittedError``, made on first use (importing scikit-learn here would make ``dptopic``'s command line slow
    to start): a model used before ``fit`` raises a :class:`DPTopicError` that is also scikit-learn's
    ``NotFittedError``, so ``except sklearn.exceptions.NotFittedError`` catches it as for scikit-learn's own
    estimators."""
    if name == "NotFittedError":
        from sklearn.exceptions import NotFittedError as sklearn_not_fitted

        cls = type("NotFittedError", (DPTopicError, sklearn_not_fitted), {"__module__": __name__,
                                                                         "__doc__": __getattr__.__doc__})
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
