"""scikit-learn's own estimator checks (``parametrize_with_checks``) on dptopic's estimators.

A topic model takes a document-term matrix of integer counts, and dptopic refuses non-integral floats in one line
rather than rounding them silently, while the checks feed random floats in [0, 1). So each estimator runs through
``counting(cls)``, a test-only subclass that turns the checks' floats into counts (times 3, rounded) before calling
the estimator's real ``fit``, ``partial_fit``, ``transform`` and ``score``. NaN, infinities, negative numbers, complex
numbers and non-numbers pass through unchanged, so the checks of input validation see them as they are. Every other
contract is the estimator's own: ``fit`` returns self and is idempotent, parameters are left alone, ``n_features_in_``
and the message when it does not match, dtypes, sparse formats, read-only memory maps, ``transform`` of a subset or
of the rows reordered gives the same rows, ``fit_transform`` equals ``fit().transform()``, and the messages for
empty, 1-D, complex and object input.

One check fails by design and is expected to: ``check_estimators_pickle`` (models are saved as JSON + ``.npy`` with
``save``/``dptopic.load``, never pickled).

Every estimator here is seeded (``seed=0``; scikit-learn's ``set_random_state`` only knows ``random_state``, which
dptopic does not take): an unseeded private trainer draws fresh noise at each fit, so ``check_fit_idempotent`` fails
for it by design (test_an_unseeded_private_trainer_fails_fit_idempotence_by_design below shows it). The local trainers (``LPLDA``, ``OLPLDA``, ``LocalDocumentLDA``)
fit randomized report sets, not count matrices, so the checks do not apply to them.
"""
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

import dptopic
from dptopic.errors import DPTopicError

NOT_PICKLED = "models are saved as JSON + .npy (save/dptopic.load), never pickled"
EXPECTED = {"check_estimators_pickle": NOT_PICKLED}


def _as_counts(X):
    """The checks' random floats as integer-valued counts; anything else unchanged."""
    if sp.issparse(X):
        return type(X)(np.rint(X.toarray() * 3)) if X.dtype.kind == "f" else X
    if not isinstance(X, np.ndarray):
        if hasattr(X, "__array__") and not hasattr(X, "columns"):       # an array-like (the checks' _NotAnArray)
            return type(X)(_as_counts(np.asarray(X)))
        if isinstance(X, list) and X and all(isinstance(r, list) for r in X):     # nested lists of numbers
            return _as_counts(np.asarray(X)).tolist()
        return X
    if X.dtype.kind == "f" and np.all(np.isfinite(X)) and np.all(X >= 0):
        return np.rint(X * 3)
    if X.dtype.kind == "O":
        try:
            return np.rint(X.astype(np.float64) * 3).astype(object)
        except (TypeError, ValueError):
            return X
    return X


def counting(cls):
    """``cls`` with the checks' floats turned into counts on the way in (same name, parameters and methods)."""
    def fit(self, X, y=None, **kw):
        return cls.fit(self, _as_counts(X), y, **kw)

    def transform(self, X, *a, **kw):
        return cls.transform(self, _as_counts(X), *a, **kw)

    def score(self, X, y=None):
        return cls.score(self, _as_counts(X), y)

    body = {"fit": fit, "transform": transform, "score": score, "__module__": cls.__module__}
    if hasattr(cls, "partial_fit"):
        body["partial_fit"] = lambda self, X, y=None, **kw: cls.partial_fit(self, _as_counts(X), y, **kw)
    return type(cls.__name__, (cls,), body)


ESTIMATORS = [counting(dptopic.LDA)(n_topics=2, n_iter=10, seed=0, verbose=0),
              counting(dptopic.OnlineVB)(n_topics=2, n_epochs=1, seed=0, verbose=0),
              counting(dptopic.DPSVI)(n_topics=2, seed=0, verbose=0),
              counting(dptopic.DocDPCooccurrence)(n_topics=2, epsilon=100.0, seed=0),
              counting(dptopic.DocDPEM)(n_topics=2, epsilon=100.0, seed=0),
              counting(dptopic.OnlineLDA)(n_topics=2, n_iter=5, batch_size=64, seed=0, verbose=0),
              counting(dptopic.HDPLDA)(n_topics=2, n_iter=3, epsilon_inherent=10.0, seed=0, verbose=0),
              counting(dptopic.CDPLDA)(n_topics=2, n_iter=3, seed=0, verbose=0),
              counting(dptopic.CDPLDAPlus)(n_topics=2, n_iter=3, seed=0, verbose=0),
              counting(dptopic.FedLDA)(n_topics=2, rounds=1, pad_length=8, seed=0, verbose=0)]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # a seeded private fit warns that its noise is reproducible, a refit that its budget is spent again
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


def test_the_expected_failure_is_a_real_check():
    """The expected-failure list names checks scikit-learn has (a misspelt name would hide nothing and mean nothing)."""
    import sklearn.utils.estimator_checks as checks

    assert all(hasattr(checks, name) for name in EXPECTED)


def test_the_adapter_leaves_the_estimators_own_refusal_of_fractions():
    """Without the test adapter, non-integral floats are refused in one line (never rounded silently)."""
    X = np.random.default_rng(0).uniform(size=(10, 4))
    with pytest.raises(DPTopicError, match="integer counts"):
        dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(X)
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(np.rint(X * 3))
    assert np.array_equal(m.transform(np.rint(X * 3)), counting(dptopic.LDA)(**m.get_params()).fit(X).transform(X))


def test_sklearn_style_messages():
    """The wording scikit-learn users search for, inside dptopic's one-line errors."""
    m = dptopic.OnlineVB(n_topics=2, n_epochs=1, seed=0, verbose=0).fit(np.ones((6, 4), dtype=int))
    with pytest.raises(DPTopicError, match="X has 3 features, but OnlineVB is expecting 4 features as input"):
        m.transform(np.ones((2, 3), dtype=int))
    with pytest.raises(DPTopicError, match="Reshape your data"):
        m.transform(np.ones(4, dtype=int))
    with pytest.raises(DPTopicError, match="Negative values in data"):
        m.transform(-np.ones((2, 4), dtype=int))
    with pytest.raises(TypeError, match="not a number"):
        dptopic.Corpus.from_bow(np.array([[1, {"a": 1}]], dtype=object))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_an_unseeded_private_trainer_fails_fit_idempotence_by_design():
    """docs/sklearn.md: the checks run on seeded instances; unseeded, fresh noise makes each fit differ."""
    from sklearn.utils.estimator_checks import check_fit_idempotent

    checked = {type(e).__name__ for e in ESTIMATORS}
    assert {"HDPLDA", "CDPLDA", "CDPLDAPlus", "FedLDA"} <= checked
    assert all(e.get_params().get("seed") is not None for e in ESTIMATORS)
    with pytest.raises(AssertionError):
        check_fit_idempotent("DocDPEM", counting(dptopic.DocDPEM)(n_topics=2, epsilon=1.0))
    text = " ".join((Path(__file__).parents[2] / "docs" / "sklearn.md").read_text().split())
    for phrase in ("**seeded**", "check_fit_idempotent", "random_state", "return_estimator=True",
                   "fit randomized report sets"):
        assert phrase in text, phrase
