"""Words public word vectors place outside the release (``vectors_route="spread"``): they never come before a topic's
first estimated words in the topic-word matrix, which stays a distribution."""
import numpy as np
import pytest

from dptopic.moments.public_groups import ESTIMATED_FIRST, estimated_first, spread_tail


def _topics(seed=0, K=6, V=400, n_kept=60):
    """Topics whose kept words hold half of each row and whose other words are heavy in some topics (as a spread
    makes them)."""
    rng = np.random.default_rng(seed)
    beta = rng.gamma(0.2, size=(K, V))
    beta[:, :n_kept] *= 0.5 * beta.sum(axis=1, keepdims=True) / beta[:, :n_kept].sum(axis=1, keepdims=True)
    beta[:, n_kept:] *= 0.5 * beta.sum(axis=1, keepdims=True) / beta[:, n_kept:].sum(axis=1, keepdims=True)
    return beta / beta.sum(axis=1, keepdims=True), np.arange(n_kept), np.arange(n_kept, V)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_topics_first_words_by_probability_are_estimated_and_rows_stay_distributions(seed):
    beta, kept, placed = _topics(seed)
    first = np.argsort(-beta, axis=1, kind="stable")[:, :ESTIMATED_FIRST]
    assert np.isin(first, placed).any()          # the case the rule is for
    out = estimated_first(beta, kept, placed)
    first = np.argsort(-out, axis=1, kind="stable")[:, :ESTIMATED_FIRST]
    assert not np.isin(first, placed).any()
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-12)
    assert (out >= 0).all()
    # the kept words as they were, and each topic's mass outside them kept: only the placed words' shares move
    np.testing.assert_allclose(out[:, kept], beta[:, kept], rtol=1e-12)
    np.testing.assert_allclose(out[:, placed].sum(axis=1), beta[:, placed].sum(axis=1), rtol=1e-12)
    # their order within the topic is kept (ties at the cap aside)
    for k in range(len(beta)):
        a, b = beta[k, placed], out[k, placed]
        assert np.all(np.diff(b[np.argsort(-a, kind="stable")]) <= 1e-15)


def test_a_topic_whose_placed_words_cannot_all_fit_below_gives_the_rest_to_its_kept_words():
    beta = np.array([[0.05, 0.04, 0.03, 0.02, 0.01] + [0.85 / 5] * 5])
    out = estimated_first(beta, np.arange(5), np.arange(5, 10), top=3)
    assert out[0, 5:].max() < out[0, 2]
    np.testing.assert_allclose(out.sum(), 1.0)
    ratio = out[0, :5] / beta[0, :5]
    np.testing.assert_allclose(ratio, ratio[0])        # the kept words scaled alike: their order and shape kept


def test_topics_the_vectors_leave_below_the_cap_are_unchanged():
    beta, kept, placed = _topics(3)
    beta[:, placed] = 1e-6
    beta /= beta.sum(axis=1, keepdims=True)
    np.testing.assert_array_equal(estimated_first(beta, kept, placed), beta)


def test_the_spread_places_no_word_before_a_topics_first_estimated_words():
    rng = np.random.default_rng(4)
    K, V, n_kept = 5, 300, 40
    kept = np.arange(n_kept)
    beta = np.full((K, V), 1.0)
    beta[:, kept] = rng.gamma(0.3, size=(K, n_kept)) * 2     # a heavy tail, which the spread concentrates
    beta /= beta.sum(axis=1, keepdims=True)
    E = rng.standard_normal((V, 6))
    out = spread_tail(beta, kept, E, np.ones(V, dtype=bool))
    assert not np.allclose(out, beta) and not np.allclose(out[:, n_kept:], out[0, n_kept:])
    first = np.argsort(-out, axis=1, kind="stable")[:, :ESTIMATED_FIRST]
    assert np.isin(first, kept).all()
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-12)
