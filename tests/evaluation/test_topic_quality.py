"""NPMI, C_v, UMass (gensim's form) and diversity: hand-computed values, a NumPy reference, and gensim."""
import itertools
import math

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import (cv_coherence, npmi_coherence, topic_diversity, topic_quality,
                                umass_pairwise_mean)
from dptopic.evaluation.topic_quality import cooccurrence

# 4 documents over the words a b c d (vocabulary order: by frequency, then alphabetical)
TEXTS = ["aaa bbb", "aaa bbb ccc", "aaa ccc", "ddd"]


@pytest.fixture
def ref():
    return Corpus.from_texts(TEXTS, stop_words=None, max_vocab=None)


def _topic(ref, words):
    """A K=1 topic whose ranking is ``words``."""
    comp = np.full((1, ref.vocab_size), 1e-6)
    for r, w in enumerate(words):
        comp[0, ref.vocabulary.get(w)] = 1.0 - 0.1 * r
    return comp


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


def test_reference_as_raw_texts_or_token_lists_is_read_in_the_model_vocabulary():
    import dptopic

    train = ["apple banana cherry apple", "river mountain valley river", "apple cherry banana",
             "valley mountain river"] * 3
    model = dptopic.LDA(n_topics=2, n_iter=10, seed=0).fit(Corpus.from_texts(train))
    held = ["apple banana zebra", "river valley", "unknown words only", "cherry apple mountain"]
    expected = topic_quality(model, Corpus.from_texts(held, vocabulary=model.vocabulary_), top_n=3)
    assert topic_quality(model, held, top_n=3) == expected
    assert topic_quality(model, [t.split() for t in held], top_n=3) == expected
    assert npmi_coherence(model, held, 3) == expected["npmi"]
    assert cv_coherence(model, held, 3) == expected["c_v"]
    # a Corpus in another vocabulary is still refused, in one line that says how to fix it
    with pytest.raises(DPTopicError, match=r"restrict\(model.vocabulary_\)") as e:
        topic_quality(model, Corpus.from_texts(held, stop_words=None), top_n=3)
    assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match="needs the fitted model"):
        npmi_coherence(model.components_, held, 3)
