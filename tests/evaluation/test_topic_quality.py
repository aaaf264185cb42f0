"""NPMI, C_v, UMass (gensim's form) and diversity: hand-computed values, a NumPy reference, and gensim."""
import itertools
import math
import warnings

import numpy as np
import pytest

import dptopic
from dptopic import evaluation as ev
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import (
    cv_coherence,
    npmi_coherence,
    perplexity,
    topic_diversity,
    topic_match,
    topic_quality,
    topic_recovery,
    umass_coherence,
    umass_pairwise_mean,
)
from dptopic.evaluation.topic_quality import cooccurrence
from helpers import topic_ranking

# 4 documents over the words a b c d (vocabulary order: by frequency, then alphabetical)
TEXTS = ["aaa bbb", "aaa bbb ccc", "aaa ccc", "ddd"]


@pytest.fixture
def ref():
    return Corpus.from_texts(TEXTS, stop_words=None, max_vocab=None)


_topic = topic_ranking


def test_npmi_by_hand(ref):
    # P(a) = 3/4, P(b) = 2/4, P(a,b) = 2/4: NPMI = log((1/2)/(3/8)) / -log(1/2) = log(4/3)/log 2
    ab = math.log(4 / 3) / math.log(2)
    assert npmi_coherence(_topic(ref, ["aaa", "bbb"]), ref, top_n=2) == pytest.approx(ab, abs=1e-9)
    # b and c: P(b,c) = 1/4, P(b) = P(c) = 1/2: log((1/4)/(1/4)) = 0
    assert npmi_coherence(_topic(ref, ["bbb", "ccc"]), ref, top_n=2) == pytest.approx(0.0, abs=1e-9)
    # a and d never co-occur: log(eps / (3/16)) / -log(eps), close to -1
    ad = math.log(1e-12 / (3 / 16)) / -math.log(1e-12)
    assert npmi_coherence(_topic(ref, ["aaa", "ddd"]), ref, top_n=2) == pytest.approx(ad, abs=1e-9)
    # three words: the mean over the 6 ordered pairs = the mean over the 3 unordered ones
    ac = math.log((2 / 4) / (3 / 4 * 2 / 4)) / -math.log(2 / 4)
    assert npmi_coherence(_topic(ref, ["aaa", "bbb", "ccc"]), ref, top_n=3) == pytest.approx((ab + ac + 0) / 3)


def test_umass_pairwise_mean_by_hand(ref):
    # pairs in rank order (b|a): log((2/4 + eps)/(3/4)); (c|a): log((2/4)/(3/4)); (c|b): log((1/4)/(2/4))
    want = (math.log(2 / 3) * 2 + math.log(1 / 2)) / 3
    assert umass_pairwise_mean(_topic(ref, ["aaa", "bbb", "ccc"]), ref, top_n=3) == pytest.approx(want, abs=1e-9)


def test_cv_by_hand(ref):
    words = ["aaa", "bbb", "ccc"]
    N = 4.0
    docs = [set(t.split()) for t in TEXTS]
    npmi = np.empty((3, 3))
    for i, j in itertools.product(range(3), range(3)):
        p1 = sum(words[i] in d for d in docs) / N
        p2 = sum(words[j] in d for d in docs) / N
        p12 = sum(words[i] in d and words[j] in d for d in docs) / N
        npmi[i, j] = math.log((p12 + 1e-12) / (p1 * p2)) / -math.log(p12 + 1e-12)
    total = npmi.sum(axis=0)
    want = np.mean([npmi[i] @ total / (np.linalg.norm(npmi[i]) * np.linalg.norm(total)) for i in range(3)])
    assert cv_coherence(_topic(ref, words), ref, top_n=3, window=110) == pytest.approx(want, abs=1e-9)


def test_diversity_by_hand():
    comp = np.array([[5, 4, 3, 0, 0, 0], [5, 0, 3, 4, 0, 0], [0, 0, 0, 3, 4, 5.]])
    # top 3: {0,1,2}, {0,3,2}, {5,4,3}: 6 distinct of 9
    assert topic_diversity(comp, 3) == pytest.approx(6 / 9)
    assert topic_diversity(np.eye(4) + 0.01, 1) == pytest.approx(1.0)     # each topic its own top word


def _window_reference(corpus, words, window):
    """Plain-Python boolean sliding windows."""
    n, single, pair = 0, np.zeros(len(words)), np.zeros((len(words), len(words)))
    pos = {w: i for i, w in enumerate(words)}
    for d in range(corpus.n_docs):
        toks = corpus.doc(d).tolist()
        s = min(window, len(toks))
        if not toks:
            continue
        for start in range(0, len(toks) - s + 1):
            present = {pos[t] for t in toks[start:start + s] if t in pos}
            n += 1
            for x in present:
                single[x] += 1
                for y in present:
                    pair[x, y] += 1
    return n, single, pair


@pytest.mark.parametrize("window", [1, 2, 3, 5, 50])
def test_window_kernel_matches_the_python_reference(window):
    rng = np.random.default_rng(window)
    docs = [rng.integers(0, 9, size=rng.integers(0, 12)).tolist() for _ in range(40)]
    docs[0] = []
    corpus = Corpus.from_token_ids(docs, [f"w{i}" for i in range(9)])
    words = np.array([0, 2, 3, 7])
    n, single, pair = cooccurrence(corpus, words, window)
    rn, rs, rp = _window_reference(corpus, words.tolist(), window)
    assert n == rn and np.array_equal(single, rs) and np.array_equal(pair, rp)


def test_matches_gensim_coherence_model():
    pytest.importorskip("gensim")
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    rng = np.random.default_rng(0)
    words = ["apple", "banana", "cherry", "river", "valley", "mountain", "stone", "cloud", "storm", "forest"]
    texts = [" ".join(rng.choice(words[:5] if i % 2 else words[5:], size=rng.integers(4, 25)))
             + " " + " ".join(rng.choice(words, size=3)) for i in range(60)]
    ref = Corpus.from_texts(texts, stop_words=None, max_vocab=None)
    toks = [t.split() for t in texts]
    d = Dictionary(toks)
    comp = rng.random((3, ref.vocab_size))
    topics = [[ref.vocabulary.words[i] for i in row] for row in np.argsort(-comp, axis=1, kind="stable")[:, :5]]
    longest = max(len(t) for t in toks)

    def g(coh, **kw):
        return np.array(CoherenceModel(topics=topics, texts=toks, dictionary=d, coherence=coh, topn=5, processes=1,
                                       **kw).get_coherence_per_topic())

    # boolean documents = gensim's sliding window once the window covers every document
    assert np.allclose(npmi_coherence(comp, ref, 5, None, per_topic=True), g("c_npmi", window_size=longest + 1),
                       atol=1e-9)
    assert np.allclose(cv_coherence(comp, ref, 5, 110, per_topic=True), g("c_v"), atol=1e-9)
    um = CoherenceModel(topics=topics, corpus=[d.doc2bow(t) for t in toks], dictionary=d, coherence="u_mass",
                        topn=5).get_coherence_per_topic()
    assert np.allclose(umass_pairwise_mean(comp, ref, 5, per_topic=True), um, atol=1e-9)


def test_topic_quality_and_bad_input(ref):
    q = topic_quality(_topic(ref, ["aaa", "bbb", "ccc"]), ref, top_n=3, reference_name="held-out")
    assert q["npmi"] == pytest.approx(npmi_coherence(_topic(ref, ["aaa", "bbb", "ccc"]), ref, 3))
    assert set(q) >= {"npmi", "c_v", "diversity", "umass_pairwise_mean", "umass_form", "reference", "npmi_reference"}
    assert q["reference"].startswith("held-out: 4 documents")
    with pytest.raises(DPTopicError, match="model's vocabulary"):
        npmi_coherence(np.ones((1, 3)), ref)
    with pytest.raises(DPTopicError, match="top_n"):
        npmi_coherence(_topic(ref, ["aaa"]), ref, top_n=1)
    with pytest.raises(DPTopicError, match="window"):
        npmi_coherence(_topic(ref, ["aaa", "bbb"]), ref, top_n=2, window=0)
    # a top word absent from the reference counts as never co-occurring
    empty_word = Corpus.from_token_ids([[0, 1], [1]], ["x", "y", "z"])
    assert npmi_coherence(np.array([[1.0, 0.5, 0.9]]), empty_word, top_n=2) == pytest.approx(-1.0)


def test_counts_of_another_vectorizer_are_refused_not_read_by_position(speech_lda_pipeline):
    lda = speech_lda_pipeline[-1]
    other = dptopic.CountVectorizer().fit(SPEECH_TEXTS[:3])            # fewer, other words in other columns
    X = other.transform(SPEECH_TEXTS[:5])
    words = list(reversed(speech_lda_pipeline[0].get_feature_names_out()))
    padded = dptopic.CountVectorizer(vocabulary=words).transform(SPEECH_TEXTS[:5])
    for bad in (X, padded):
        for f in (lda.transform, lda.perplexity, lambda Y: ev.npmi_coherence(lda, Y)):
            with pytest.raises(DPTopicError, match="another vectorizer"):
                f(bad)
    # its own vectorizer's counts are read
    assert lda.transform(speech_lda_pipeline[0].transform(SPEECH_TEXTS[:5])).shape == (5, 3)
    # without a vocabulary a vectorizer's matrix names its words, not w0, w1, ...
    assert dptopic.Corpus.from_bow(X).vocabulary.words == list(other.get_feature_names_out())


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


# ------------------------------------------------------------------ coherence on a foreign reference
def test_topics_whose_top_words_occur_nowhere_in_the_reference_are_never_scored_best():
    """C_v scored 1.0 and Mimno's UMass 0.0 (each measure's best) for topics whose top words occur in no reference
    document: a reference from another domain made any topics look perfect."""
    import warnings

    from dptopic.evaluation import cv_coherence, topic_quality, umass_coherence

    words = [f"w{i}" for i in range(20)]
    comp = np.full((2, 20), 1e-3)
    comp[0, :10] = np.linspace(1, 0.5, 10)         # topic 0: w0..w9; topic 1: w10..w19
    comp[1, 10:] = np.linspace(1, 0.5, 10)
    rng = np.random.default_rng(0)
    foreign = Corpus.from_tokens([list(rng.choice(words[10:], 8)) for _ in range(30)], vocabulary=words)
    with pytest.warns(UserWarning, match="1 of 2 topics have top words that occur in no reference document"):
        per = cv_coherence(comp, foreign, 10, per_topic=False)
    assert np.isfinite(per)
    cv = cv_coherence(comp, foreign, 10, per_topic=True)
    assert np.isnan(cv[0]) and np.isfinite(cv[1])
    um = umass_coherence(comp, foreign, 10, per_topic=True)
    assert np.isnan(um[0]) and np.isfinite(um[1]) and um[1] < 0
    only = Corpus.from_tokens([list(rng.choice(words[10:], 8)) for _ in range(30)], vocabulary=words)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(cv_coherence(comp[:1], only, 10)) and np.isnan(umass_coherence(comp[:1], only, 10))
        q = topic_quality(comp[:1], only, 10)
    assert q["c_v"] is None and q["npmi"] == pytest.approx(-1.0) and "1 of 1 topics" in q["absent_top_words"]
    # one absent word among present ones: left out of the others' context vectors (their shared -1 entries for it
    # made them look alike), its own cosine 0: C_v is the 9 words' own C_v times 9/10, lower, never higher
    partial = Corpus.from_tokens([list(rng.choice(words[:9], 6)) for _ in range(40)], vocabulary=words)
    with_absent = cv_coherence(comp[:1], partial, 10, per_topic=True)[0]
    without = cv_coherence(comp[:1, :9], Corpus.from_tokens([partial.doc_words(d) for d in range(partial.n_docs)],
                                                            vocabulary=words[:9]), 9, per_topic=True)[0]
    assert with_absent == pytest.approx(without * 9 / 10, rel=1e-9) and with_absent < without


"""umass_mimno_sum (``evaluation/topic_quality.py``): Mimno's UMass of a model, None where undefined."""

from dptopic.evaluation.topic_quality import umass_mimno_sum


def test_umass_mimno_sum_is_the_mimno_umass_of_the_models_topics(tiny):
    m = dptopic.LDA(n_topics=3, n_iter=5, seed=0, verbose=0).fit(tiny.corpus)
    got = umass_mimno_sum(m, tiny.corpus, top_n=5)
    assert isinstance(got, float)
    assert math.isclose(got, umass_coherence(m.components_, tiny.corpus, 5, "mimno"), rel_tol=1e-12)


class _Undefined:
    def coherence(self, X, top_n=10):
        warnings.warn("3 of 3 topics have top words that occur in no reference document: ...", UserWarning)
        return float("nan")


def test_umass_mimno_sum_is_none_where_undefined_or_not_offered(tiny):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the absent-words warning is left to the caller
        assert umass_mimno_sum(_Undefined(), tiny.corpus) is None
    assert umass_mimno_sum(object(), tiny.corpus) is None     # a model without coherence


# ------------------------------------------------------------------ the display order: relevance (Sievert & Shirley)
from dptopic.evaluation.topic_quality import (
    check_ranking,
    ranking_scores,
    ranking_text,
    relevance,
    top_words,
    word_ranking,
)
from helpers import SPEECH_TEXTS


def _relevance_reference(comp, lam):
    """Sievert & Shirley (2014)'s relevance, word by word in plain Python: p(w) the mean of the normalised topics."""
    K, V = len(comp), len(comp[0])
    phi = [[comp[k][w] / sum(comp[k]) for w in range(V)] for k in range(K)]
    pw = [sum(phi[k][w] for k in range(K)) / K for w in range(V)]
    return np.array([[lam * math.log(phi[k][w]) + (1 - lam) * math.log(phi[k][w] / pw[w]) for w in range(V)]
                     for k in range(K)])


def test_relevance_matches_a_plain_python_reference():
    comp = np.random.default_rng(3).dirichlet(np.ones(7) * 0.5, size=4) * 5.0    # rows need not sum to 1
    for lam in (0.0, 0.3, 0.6, 1.0):
        assert np.allclose(relevance(comp, lam), _relevance_reference(comp.tolist(), lam), atol=1e-12)


def test_relevance_ranks_shared_words_below_a_topics_own_words():
    # word 0 has the most weight in every topic; words 1 and 2 each belong to one topic
    comp = np.array([[0.4, 0.35, 0.01, 0.24], [0.4, 0.01, 0.35, 0.24]])
    assert list(top_words(comp, 2)[0]) == [0, 1]                           # by probability: the shared word first
    assert list(top_words(comp, 2, ranking="relevance")[0]) == [1, 0]      # by relevance: the topic's own word first
    assert list(top_words(comp, 2, ranking={"by": "relevance", "lambda": 1.0})[0]) == [0, 1]   # lambda 1: probability
    # diversity of the top word: 1 of 2 distinct by probability, 2 of 2 by relevance
    class Shown:
        components_, word_ranking = comp, {"by": "relevance", "lambda": 0.6}
    assert topic_diversity(comp, 1) == 0.5 and topic_diversity(Shown(), 1) == 1.0


def test_a_model_names_its_ranking_and_every_measure_reads_it(ref):
    comp = np.full((2, ref.vocab_size), 0.1)
    comp[:, ref.vocabulary.get("aaa")] = 1.0                 # shared by both topics
    comp[0, ref.vocabulary.get("bbb")] = 0.9
    comp[1, ref.vocabulary.get("ccc")] = 0.9

    class Model:
        components_, vocabulary_ = comp, ref.vocabulary

    by_probability, by_relevance = Model(), Model()
    by_relevance.word_ranking = "relevance"
    assert word_ranking(by_probability) == {"by": "probability"}
    assert word_ranking(by_relevance) == {"by": "relevance", "lambda": 0.6}
    assert np.array_equal(ranking_scores(by_probability), comp)
    q_p, q_r = topic_quality(by_probability, ref, top_n=2), topic_quality(by_relevance, ref, top_n=2)
    assert q_p["top_words"] == "ranked by probability" and q_r["top_words"] == "ranked by relevance, λ = 0.6"
    # the same top 2 in another order (NPMI alike), but another top word (diversity of the top 1)
    assert topic_diversity(by_probability, 1) == 0.5 and topic_diversity(by_relevance, 1) == 1.0
    assert npmi_coherence(by_relevance, ref, top_n=2) == pytest.approx(npmi_coherence(comp, ref, top_n=2))


@pytest.mark.parametrize("bad", ["tfidf", {"by": "relevance", "lambda": 1.5}, {"by": "relevance", "lambda": True},
                                 {"by": "relevance"}, 3])
def test_an_unknown_ranking_is_refused_in_one_line(bad):
    with pytest.raises(DPTopicError, match="invalid word ranking"):
        check_ranking(bad)


def test_ranking_text_says_lambda():
    assert ranking_text("relevance") == "ranked by relevance, λ = 0.6"
    assert ranking_text({"by": "relevance", "lambda": 0.25}) == "ranked by relevance, λ = 0.25"
    assert ranking_text("probability") == "ranked by probability"


# "aaa" and "bbb" occur in every document; "ccc" and "eee" never occur together
EDGE_TEXTS = ["aaa bbb ccc", "aaa bbb ddd", "aaa bbb eee", "aaa bbb ccc ddd"]


@pytest.fixture
def edge_ref():
    return Corpus.from_texts(EDGE_TEXTS, stop_words=None, max_vocab=None)


@pytest.mark.parametrize("window", [None, 110])
def test_words_in_every_reference_document_score_complete_cooccurrence_not_never(edge_ref, window):
    """The eps-smoothed ratio reads log(1 + eps) / -log(1 + eps) = -1 (the value of words that never co-occur) when
    two words are in every document; complete co-occurrence is NPMI's upper bound 1."""
    always = npmi_coherence(_topic(edge_ref, ["aaa", "bbb"]), edge_ref, top_n=2, window=window)
    never = npmi_coherence(_topic(edge_ref, ["ccc", "eee"]), edge_ref, top_n=2, window=window)
    assert always == pytest.approx(1.0)
    assert never < 0 < always
    assert topic_quality(_topic(edge_ref, ["aaa", "bbb"]), edge_ref, top_n=2)["npmi"] == pytest.approx(1.0)
