import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import perplexity, split_completion, topic_recovery, umass_coherence
from dptopic.evaluation.perplexity import infer_theta


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


def test_umass_by_hand():
    c = Corpus.from_token_ids([[0, 1], [0], [1, 2], [0, 1, 2]], ["a", "b", "c"])
    comp = np.array([[0.5, 0.3, 0.2]])  # top words a, b, c
    D = {0: 3, 1: 3, 2: 2}
    co = {(1, 0): 2, (2, 0): 1, (2, 1): 2}
    mimno = sum(np.log((co[(m, l)] + 1) / D[l]) for (m, l) in co)
    authors = sum(np.log((co[(m, l)] + 1) / D[m]) for (m, l) in co)
    assert umass_coherence(comp, c, top_n=3) == pytest.approx(mimno)
    assert umass_coherence(comp, c, top_n=3, variant="authors") == pytest.approx(authors)
    with pytest.raises(DPTopicError, match="top_n"):
        umass_coherence(comp, c, top_n=9)


def test_recovery_perfect_and_permuted(planted):
    phi = planted.phi
    assert topic_recovery(phi[::-1], phi) == pytest.approx(1.0)
    assert topic_recovery(np.ones_like(phi), phi) < 0.5


def test_bad_fold_in_schedule(planted):
    with pytest.raises(DPTopicError, match="burn_in"):
        infer_theta(planted.phi, planted.corpus.word_ids, planted.corpus.doc_ptr, 0.1, 10, 10)
