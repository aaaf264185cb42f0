"""dptopic.evaluation against gensim's CoherenceModel, hand computation and a NumPy reference; its bad-input errors."""
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.special import gammaln

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import (cv_coherence, npmi_coherence, perplexity, split_completion, topic_diversity,
                                topic_match, topic_recovery, umass_coherence, umass_pairwise_mean)
from dptopic.evaluation.perplexity import infer_theta
from dptopic.kernels import token_log_likelihood


def _gensim(topics, toks, vocab, coherence, topn, **kw):
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    d = Dictionary([vocab])         # every word has an id, even one no reference document holds
    if coherence == "u_mass":
        kw["corpus"] = [d.doc2bow(t) for t in toks]
    else:
        kw.update(texts=toks, processes=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array(CoherenceModel(topics=topics, dictionary=d, coherence=coherence, topn=topn,
                                       **kw).get_coherence_per_topic(), dtype=float)


def _random_case(seed):
    rng = np.random.default_rng(seed)
    V = int(rng.integers(3, 10))
    vocab = [f"w{i}" for i in range(V)]
    docs = [rng.integers(0, V, size=rng.integers(0, 12)).tolist() for _ in range(int(rng.integers(2, 12)))]
    docs[0] = docs[0] or [0]
    comp = rng.random((int(rng.integers(1, 4)), V))        # K = 1 to 3; topics share words
    return rng, vocab, docs, comp, int(rng.integers(2, V + 1))


def test_npmi_cv_umass_equal_gensim_on_random_corpora_with_empty_documents():
    pytest.importorskip("gensim")
    compared = 0
    for seed in range(40):
        rng, vocab, docs, comp, top = _random_case(seed)
        ref = Corpus.from_token_ids(docs, vocab)
        toks = [[vocab[i] for i in d] for d in docs]
        tops = np.argsort(-comp, axis=1, kind="stable")[:, :top]
        topics = [[vocab[i] for i in row] for row in tops]
        df = np.array([sum(w in d for d in docs) for w in range(len(vocab))])
        # the two documented differences left out: a top word in no document (gensim: inf, NaN, a 0 pair) or in
        # every one (NPMI 1 here, -1 in gensim)
        ok = ~((df[tops] == 0) | (df[tops] == len(docs))).any(axis=1)
        covering = max(map(len, docs)) + int(rng.integers(1, 5))
        assert np.allclose(npmi_coherence(comp, ref, top, None, per_topic=True)[ok],
                           _gensim(topics, toks, vocab, "c_npmi", top, window_size=covering)[ok], atol=1e-9), seed
        # a window covering every document: the boolean-document estimate, empty documents counted as gensim does
        assert np.allclose(npmi_coherence(comp, ref, top, covering, per_topic=True)[ok],
                           npmi_coherence(comp, ref, top, None, per_topic=True)[ok], atol=1e-12), seed
        assert np.allclose(cv_coherence(comp, ref, top, covering, per_topic=True)[ok],
                           _gensim(topics, toks, vocab, "c_v", top, window_size=covering)[ok], atol=1e-9), seed
        assert np.allclose(umass_pairwise_mean(comp, ref, top, per_topic=True)[ok],
                           _gensim(topics, toks, vocab, "u_mass", top)[ok], atol=1e-9), seed
        compared += int(ok.sum())
    assert compared > 30


def test_empty_documents_are_one_window_each_as_in_gensim():
    vocab = ["a", "b", "c", "d"]
    docs = [[0, 1], [0, 1, 2], [0, 2], [3], [], []]
    ref = Corpus.from_token_ids(docs, vocab)
    comp = np.array([[4, 3, 2, 1.0]])
    # by hand over 6 documents (windows): P(a) = 3/6, P(b) = P(c) = 2/6, P(a,b) = P(a,c) = 2/6, P(b,c) = 1/6
    def npmi(p12, p1, p2):
        return math.log((p12 + 1e-12) / (p1 * p2)) / -math.log(p12 + 1e-12)
    want = (npmi(2 / 6, 3 / 6, 2 / 6) * 2 + npmi(1 / 6, 2 / 6, 2 / 6)) / 3
    for window in (None, 3, 10):
        assert npmi_coherence(comp, ref, 3, window) == pytest.approx(want, abs=1e-12)
    assert cv_coherence(comp, ref, 3, 10) == pytest.approx(cv_coherence(comp, ref, 3, 3), abs=1e-12)
    pytest.importorskip("gensim")
    toks = [[vocab[i] for i in d] for d in docs]
    assert _gensim([["a", "b", "c"]], toks, vocab, "c_npmi", 3, window_size=3)[0] == pytest.approx(want)
    assert cv_coherence(comp, ref, 3, 110) == pytest.approx(
        _gensim([["a", "b", "c"]], toks, vocab, "c_v", 3)[0], abs=1e-9)


def _gensim_windows(docs, words, window):
    """gensim's WordOccurrenceAccumulator: the token leaving a window marks its word absent, even if the word
    occurs again inside the window, until an occurrence enters at the right edge."""
    pos = {w: i for i, w in enumerate(words)}
    n, single, pair = 0, np.zeros(len(words)), np.zeros((len(words), len(words)))
    for d in docs:
        s = min(window, len(d))
        present: set = set()
        for start in range(0, len(d) - s + 1) if d else [0]:
            if start == 0:
                present = set(d[:s])
            else:
                present.discard(d[start - 1])
                present.add(d[start + s - 1])
            n += 1
            ids = [pos[t] for t in present if t in pos]
            for x in ids:
                single[x] += 1
                for y in ids:
                    pair[x, y] += 1
    return n, single, pair


def test_sliding_windows_count_exactly_where_gensim_forgets_repeated_words():
    pytest.importorskip("gensim")
    from dptopic.evaluation.topic_quality import _npmi_matrix

    differ = 0
    for seed in range(30):
        rng = np.random.default_rng(100 + seed)
        V = int(rng.integers(3, 8))
        vocab = [f"w{i}" for i in range(V)]
        docs = [rng.integers(0, V, size=rng.integers(1, 25)).tolist() for _ in range(int(rng.integers(2, 10)))]
        ref, toks = Corpus.from_token_ids(docs, vocab), [[vocab[i] for i in d] for d in docs]
        comp, top, window = rng.random((1, V)), int(rng.integers(2, V + 1)), int(rng.integers(2, 8))
        words = np.argsort(-comp[0], kind="stable")[:top]
        n, single, pair = _gensim_windows(docs, words.tolist(), window)
        if (single == 0).any() or (pair >= n).any():
            continue
        gensim = _gensim([[vocab[i] for i in words]], toks, vocab, "c_npmi", top, window_size=window)[0]
        off = ~np.eye(top, dtype=bool)
        assert _npmi_matrix(n, single, pair)[off].mean() == pytest.approx(gensim, abs=1e-9)   # the doc's account
        ours = npmi_coherence(comp, ref, top, window)
        no_repeat = all(len(set(d[i:i + window])) == len(d[i:i + window]) for d in docs for i in range(len(d)))
        if no_repeat:
            assert ours == pytest.approx(gensim, abs=1e-9)
        differ += abs(ours - gensim) > 1e-6
    assert differ > 0


def test_absent_top_word_and_gensim_on_it():
    vocab = ["a", "b", "c", "f"]
    docs = [[0, 1], [0, 1, 2], [0, 2], [1]]
    ref = Corpus.from_token_ids(docs, vocab)
    comp = np.array([[3, 2, 0.5, 1.0]])         # top 3: a, b, f; f occurs nowhere
    ab = math.log((2 / 4) / (3 / 4 * 3 / 4)) / -math.log(2 / 4)
    assert npmi_coherence(comp, ref, 3) == pytest.approx((ab - 1 - 1) / 3, abs=1e-9)
    assert umass_coherence(comp, ref, 3) == pytest.approx(math.log(3 / 3) + math.log(1 / 3) + math.log(1 / 3))
    assert math.isnan(umass_coherence(np.array([[3, 2, 0.5, 4.0]]), ref, 3, per_topic=True)[0])
    pytest.importorskip("gensim")
    toks = [[vocab[i] for i in d] for d in docs]
    assert np.isinf(_gensim([["a", "b", "f"]], toks, vocab, "c_npmi", 3, window_size=10)[0])


def test_diversity_and_match_by_hand_and_their_invariances():
    comp = np.array([[5, 4, 3, 0, 0, 0], [5, 0, 3, 4, 0, 0], [0, 0, 0, 3, 4, 5.]])
    assert topic_diversity(comp, 3) == pytest.approx(6 / 9)
    assert topic_diversity(comp[::-1] * np.array([[2.0], [0.5], [7.0]]), 3) == pytest.approx(6 / 9)
    assert topic_diversity(comp, 10) == pytest.approx(6 / 18)          # top_n beyond V reads every word
    A, B = np.array([[1., 2, 0], [0, 1, 1]]), np.array([[0, 1., 1], [1, 1, 0]])
    # cos(B0, A1) = 1 and cos(B1, A0) = 3 / sqrt(10) beat the crossed pairs (2/sqrt(10), 1/2)
    r = topic_match(A, ["x", "y", "z"], B, ["x", "y", "z"])
    assert r["match"] == pytest.approx((1 + 3 / math.sqrt(10)) / 2)
    assert r["per_topic"] == pytest.approx([1.0, 3 / math.sqrt(10)])
    perm = [2, 0, 1]
    same = topic_match(A[::-1][:, perm] * np.array([[3.0], [0.2]]), ["z", "x", "y"], B, ["x", "y", "z"])
    assert same["match"] == pytest.approx(r["match"]) and same["per_topic"] == pytest.approx(r["per_topic"])
    assert topic_match(A, ["x", "y", "z"], B[::-1], ["x", "y", "z"])["per_topic"] == pytest.approx(
        r["per_topic"][::-1])
    assert topic_match(np.array([[1., 0, 0], [0, 0, 1]]), ["x", "y", "z"], B, ["x", "y", "z"])["match"] < r["match"]
    assert topic_recovery(A, B) == pytest.approx(r["match"])


def test_bad_input_is_one_line_errors():
    vocab = ["a", "b", "c"]
    ref = Corpus.from_token_ids([[0, 1], [1, 2]], vocab)
    good = np.array([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]])
    cases = [
        (lambda: npmi_coherence(good, ref, 2, window=True), "window"),
        (lambda: npmi_coherence(-good, ref, 2), "non-negative"),
        (lambda: cv_coherence(np.log(good), ref, 2), "non-negative"),
        (lambda: topic_diversity(-good, 2), "non-negative"),
        (lambda: npmi_coherence([["x", "y", "z"]], ref, 2), "matrix of numbers"),
        (lambda: umass_coherence(good, Corpus.from_token_ids([[], []], vocab), 2), "empty reference"),
        (lambda: umass_coherence(good, Corpus.from_token_ids([], vocab), 2), "empty reference"),
        (lambda: topic_match(good, vocab + ["d"], good, vocab), "vocabulary 4"),
        (lambda: topic_match(good, vocab, good, vocab[:2]), "vocabulary 2"),
        (lambda: topic_match(good, ["a", "a", "c"], good, vocab), "more than once"),
        (lambda: topic_match(good[0], vocab, good, vocab), "K x V"),
        (lambda: topic_match(np.zeros((0, 3)), vocab, good, vocab), "K x V"),
        (lambda: topic_match(-good, vocab, good, vocab), "non-negative"),
        (lambda: topic_match(good, vocab, good * np.nan, vocab), "finite"),
        (lambda: topic_recovery(good, good[:, :2]), "3 words"),
        (lambda: topic_recovery(good * np.inf, good), "finite"),
        (lambda: topic_recovery(good[0], good), "K x V"),
        (lambda: perplexity(good, ref, -1.0), "alpha"),
        (lambda: perplexity(good, ref, float("nan")), "alpha"),
        (lambda: perplexity(good, ref, "0.1"), "alpha"),
        (lambda: perplexity(good, [[0, 1]], 0.1), "Corpus"),
    ]
    for call, what in cases:
        with pytest.raises(DPTopicError, match=what) as e:
            call()
        assert "\n" not in str(e.value)


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
