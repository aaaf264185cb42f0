import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import perplexity, split_completion
from dptopic.evaluation.perplexity import infer_theta
from dptopic.kernels import token_log_likelihood


def test_perplexity_single_topic_is_unigram():
    # with K=1, θ = 1 and perplexity = exp(-mean log φ_w), computable by hand
    c = Corpus.from_token_ids([[0, 1, 1], [2, 0]], ["a", "b", "c"])
    phi = np.array([[0.5, 0.3, 0.2]])
    expect = np.exp(-(np.log(0.5) * 2 + np.log(0.3) * 2 + np.log(0.2)) / 5)
    assert perplexity(phi, c, alpha=0.1) == pytest.approx(expect, rel=1e-12)


def test_completion_split_partitions_tokens(planted):
    c = planted.corpus
    (w1, p1), (w2, p2) = split_completion(c.word_ids, c.doc_ptr, np.random.default_rng(0))
    assert len(w1) + len(w2) == c.n_tokens
    assert np.array_equal(np.diff(p1) + np.diff(p2), c.doc_lengths)
    assert np.all(np.abs(np.diff(p1) - np.diff(p2)) <= 1)


def test_true_phi_beats_random_phi(planted):
    c, phi, _, _ = planted
    rnd = np.random.default_rng(0).dirichlet(np.ones(c.vocab_size), 5)
    for mode in ("paper", "completion"):
        assert perplexity(phi, c, 0.1, mode=mode) < perplexity(rnd, c, 0.1, mode=mode)


def test_bad_fold_in_schedule(planted):
    with pytest.raises(DPTopicError, match="burn_in"):
        infer_theta(planted.phi, planted.corpus.word_ids, planted.corpus.doc_ptr, 0.1, 10, 10)


def test_perplexity_refuses_topics_that_are_not_distributions():
    """An all-ones topic matrix gave perplexity 1.0 and a doubled one 186.7 instead of 404: nothing checked the rows."""
    from dptopic.corpus import lda_corpus
    from dptopic.evaluation import perplexity

    c = lda_corpus(n_docs=20, vocab_size=10, n_topics=2, doc_length=10, seed=0).corpus
    for phi, said in ((np.ones((2, 10)), "sums to 10"), (np.full((2, 10), 0.2), "sums to 2"),
                      (np.full((2, 10), np.nan), "sums to nan"), (-np.full((2, 10), 0.1), "non-negative"),
                      (np.full(10, 0.1), "K x V")):
        with pytest.raises(DPTopicError, match=said):
            perplexity(phi, c, 0.1)
    assert perplexity(np.full((2, 10), 0.1, dtype=np.float32), c, 0.1) == pytest.approx(10.0, rel=1e-6)


def _exact_theta(phi, doc, alpha):
    """E[θ | the document's words, Φ, α] by summing over every assignment of its tokens to topics."""
    K, n = phi.shape[0], len(doc)
    num, Z = np.zeros(K), 0.0
    for z in itertools.product(range(K), repeat=n):
        c = np.bincount(z, minlength=K)
        p = np.exp(sum(np.log(phi[z[i], doc[i]]) for i in range(n)) + gammaln(c + alpha).sum())
        num += p * (c + alpha) / (n + K * alpha)
        Z += p
    return num / Z


def test_perplexity_modes_against_an_exact_numpy_reference():
    rng = np.random.default_rng(1)
    K, V, alpha = 2, 6, 0.3
    phi = rng.dirichlet(np.full(V, 0.5), K)
    docs = [rng.integers(0, V, size=rng.integers(1, 8)).tolist() for _ in range(6)]
    c = Corpus.from_token_ids(docs, [f"w{i}" for i in range(V)])
    exact = np.array([_exact_theta(phi, d, alpha) for d in docs])
    # fold-in θ is a Monte Carlo estimate of the posterior mean: within 5 standard errors over 8 chains
    runs = np.array([infer_theta(phi, c.word_ids, c.doc_ptr, alpha, 2000, 100, seed=s) for s in range(8)])
    se = runs.std(axis=0, ddof=1) / math.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - exact) <= 5 * se + 1e-4)
    # "paper": θ and the evaluated tokens are the same document's
    want = math.exp(-sum(math.log(exact[d] @ phi[:, w]) for d in range(len(docs)) for w in docs[d]) / c.n_tokens)
    got = np.array([perplexity(phi, c, alpha, "paper", 2000, 100, seed=s) for s in range(8)])
    assert abs(got.mean() - want) <= 5 * got.std(ddof=1) / math.sqrt(len(got)) + 1e-4 * want
    # "completion": θ from a random half of each document, the other half evaluated (Wallach et al. 2009)
    for s in range(3):
        g = np.random.default_rng(s)
        (w_in, p_in), (w_ev, p_ev) = split_completion(c.word_ids, c.doc_ptr, g)
        theta = infer_theta(phi, w_in, p_in, alpha, 500, 100, g)
        ll, n = token_log_likelihood(w_ev, p_ev, theta, np.ascontiguousarray(phi.T))
        assert perplexity(phi, c, alpha, "completion", 500, 100, seed=s) == math.exp(-ll / n)
        half = np.array([_exact_theta(phi, w_in[p_in[d]:p_in[d + 1]].tolist(), alpha) for d in range(len(docs))])
        runs = np.array([infer_theta(phi, w_in, p_in, alpha, 2000, 100, seed=10 + t) for t in range(8)])
        se = runs.std(axis=0, ddof=1) / math.sqrt(len(runs))
        assert np.all(np.abs(runs.mean(axis=0) - half) <= 5 * se + 1e-4)


@pytest.mark.parametrize("bad", ["x", 0, -1, 2.5, True, None])
def test_infer_theta_refuses_a_bad_number_of_threads_in_one_line(bad):
    """n_jobs='x' raised a bare ValueError from int(); the others were read as a number of shards."""
    import numpy as np

    from dptopic.evaluation.perplexity import infer_theta

    phi = np.full((2, 4), 0.25)
    with pytest.raises(DPTopicError) as e:
        infer_theta(phi, np.array([0, 1, 2, 3]), np.array([0, 2, 4]), 0.5, 10, 5, 0, n_jobs=bad)
    assert "n_jobs" in str(e.value) and "\n" not in str(e.value)


def test_fold_in_reference(planted):
    """Fold-in θ with the true Φ is close to the true θ on long documents."""
    from dptopic.evaluation import infer_theta

    c, phi, theta, _ = planted
    est = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 60, 30, seed=0)
    assert np.allclose(est.sum(1), 1)
    assert np.abs(est - theta).sum(1).mean() < 0.25


def test_fold_in_rows_do_not_depend_on_the_other_rows(planted):
    """Each document draws from a stream of the seed and its own words: θ of a subset, or of the documents
    reversed, is the same rows of θ of them all (scikit-learn's subset and sample-order invariance)."""
    from dptopic.evaluation import infer_theta

    c, phi, _, _ = planted
    full = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 20, 10, seed=5)
    sub = c.subset(np.arange(0, c.n_docs, 3))
    np.testing.assert_array_equal(infer_theta(phi, sub.word_ids, sub.doc_ptr, 0.1, 20, 10, seed=5), full[::3])
    rev = c.subset(np.arange(c.n_docs)[::-1])
    np.testing.assert_array_equal(infer_theta(phi, rev.word_ids, rev.doc_ptr, 0.1, 20, 10, seed=5), full[::-1])
    other = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 20, 10, seed=6)
    assert not np.array_equal(other, full)                 # the seed still matters


def test_fold_in_threads_return_exactly_what_one_thread_returns(planted):
    """Documents are folded in independently, so splitting them over threads changes nothing."""
    from dptopic.evaluation import infer_theta, perplexity

    c, phi, _, _ = planted
    one = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 12, 6, seed=2)
    for jobs in (2, 3, 7):
        np.testing.assert_array_equal(infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 12, 6, seed=2, n_jobs=jobs), one)
    for mode in ("paper", "completion"):
        assert perplexity(phi, c, 0.1, mode, 12, 6, seed=1, n_jobs=3) == perplexity(phi, c, 0.1, mode, 12, 6, seed=1)


def test_the_paper_perplexity_of_a_corpus_read_a_block_at_a_time_is_the_whole_corpus_score(planted, monkeypatch):
    """Several blocks of documents: each document's θ is the one the whole corpus's fold-in gives (a stream of its
    own), the log-likelihoods are summed block by block, and a part of a corpus has its tokens gathered a block at a
    time, never whole."""
    import importlib

    module = importlib.import_module("dptopic.evaluation.perplexity")

    c, phi, _, _ = planted
    whole = perplexity(phi, c, 0.1, "paper", 60, 20, seed=3)
    theta = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 60, 20, seed=np.random.default_rng(3))
    monkeypatch.setattr(module, "PERPLEXITY_BLOCK_DOCS", 7)
    assert c.n_docs > 7 * 3
    ll = n = 0
    for a in range(0, c.n_docs, 7):
        part = c.subset(np.arange(a, min(a + 7, c.n_docs)))
        got = token_log_likelihood(part.word_ids, part.doc_ptr, theta[a:a + 7], np.ascontiguousarray(phi.T))
        ll, n = ll + got[0], n + got[1]
    blocks = perplexity(phi, c, 0.1, "paper", 60, 20, seed=3)
    assert blocks == math.exp(-ll / n) and blocks == pytest.approx(whole, rel=1e-12)
    part = c.subset(np.arange(1, c.n_docs, 2))
    assert perplexity(phi, part, 0.1, "paper", 60, 20, seed=3) > 1
    assert part._word_ids is None             # the part's tokens were gathered a block at a time only
