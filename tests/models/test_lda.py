import json
import os
import pickle
import re
import shutil
import warnings

import numpy as np
import pytest

import dptopic
from dptopic import LDA, DocDPEM
from dptopic import evaluation as ev
from dptopic.backends import ShardSet, training_source
from dptopic.corpus import Corpus, lda_corpus
from dptopic.corpus.shards import write_shards
from dptopic.errors import DPTopicError
from dptopic.evaluation import cv_coherence, npmi_coherence, topic_quality, topic_recovery
from helpers import SPEECH_TEXTS, quiet_small_fits


@pytest.mark.parametrize("sampler,n_jobs", [("sparse", 1), ("dense", 1), ("sparse", 2), ("warp", 1), ("warp", 2),
                                             ("warp", 4)])
def test_planted_topic_recovery(planted, sampler, n_jobs):
    m = LDA(5, alpha=0.1, beta=0.05, n_iter=150, seed=0, sampler=sampler, n_jobs=n_jobs, verbose=0).fit(planted.corpus)
    assert topic_recovery(m.components_, planted.phi) >= 0.9
    assert m.components_.shape == (5, 200) and np.allclose(m.components_.sum(1), 1)


def test_auto_sampler_is_the_exact_one_below_four_threads_and_the_warp_one_from_four(planted):
    small = planted.corpus.subset(range(60))
    ran = {n: LDA(5, n_iter=3, seed=0, n_jobs=n, verbose=0).fit(small) for n in (1, 3, 4)}
    assert {n: m.sampler_ for n, m in ran.items()} == {1: "sparse", 3: "sparse", 4: "warp"}
    warp = LDA(5, n_iter=3, seed=0, n_jobs=4, sampler="warp", verbose=0).fit(small)
    assert np.array_equal(ran[4].components_, warp.components_)      # the same chain as asked for by name
    exact = LDA(5, n_iter=3, seed=0, n_jobs=4, sampler="sparse", verbose=0).fit(small)
    assert not np.array_equal(ran[4].components_, exact.components_)
    assert LDA(5, n_iter=3, seed=0, n_jobs=4, parallel="adlda", verbose=0).fit(small).sampler_ == "sparse"


def test_warp_sampler_refuses_the_dask_backend(planted):
    with pytest.raises(DPTopicError, match="sampler='warp' runs on the threads backend only"):
        LDA(5, n_iter=2, seed=0, sampler="warp", backend="dask", verbose=0).fit(planted.corpus)


def test_perplexity_and_likelihood_improve_with_iterations(planted):
    tr, te = planted.corpus.train_test_split(0.2, seed=0)
    ppl = [LDA(5, n_iter=n, seed=1, verbose=0).fit(tr).perplexity(te, mode="completion") for n in (1, 5, 50)]
    assert ppl[0] > ppl[1] > ppl[2]
    m = LDA(5, n_iter=50, seed=1, eval_every=5, verbose=0).fit(tr)
    ll = [v for _, v in m.log_likelihood_]
    assert len(ll) == 10 and ll[-1] > ll[0]


def test_reproducible_bit_for_bit(planted):
    a = LDA(5, n_iter=20, seed=42, verbose=0).fit(planted.corpus)
    b = LDA(5, n_iter=20, seed=42, verbose=0).fit(planted.corpus)
    c = LDA(5, n_iter=20, seed=43, verbose=0).fit(planted.corpus)
    assert np.array_equal(a.components_, b.components_)
    assert not np.array_equal(a.components_, c.components_)
    p = LDA(5, n_iter=20, seed=42, n_jobs=2, verbose=0)
    assert np.array_equal(p.fit(planted.corpus).components_, LDA(5, n_iter=20, seed=42, n_jobs=2, verbose=0).fit(planted.corpus).components_)
    assert np.array_equal(a.transform(planted.corpus.subset(range(5))), b.transform(planted.corpus.subset(range(5))))


def test_fit_accepts_sparse_matrix_and_transform(planted):
    X = planted.corpus.to_bow()
    m = LDA(5, n_iter=60, seed=0, verbose=0).fit(X)
    assert m.vocabulary_[0] == "w0"
    theta = m.transform(X[:10])
    assert theta.shape == (10, 5) and np.allclose(theta.sum(1), 1)
    assert m.fit_transform(X[:50]).shape == (50, 5)
    with pytest.raises(DPTopicError, match="vocabulary mismatch|columns"):
        m.transform(X[:, :50])


def test_topic_words(planted):
    m = LDA(5, n_iter=30, seed=0, verbose=0).fit(planted.corpus)
    tw = m.topic_words(4)
    assert len(tw) == 5 and all(len(t) == 4 for t in tw)
    w = m.topic_words(2, weights=True)[0]
    assert w[0][1] >= w[1][1]


@pytest.mark.parametrize("kw,match", [
    ({"n_topics": 0}, "n_topics=0"), ({"alpha": -1.0}, "alpha=-1.0"), ({"beta": 0}, "beta=0"),
    ({"n_iter": 2.5}, "n_iter=2.5"), ({"sampler": "fast"}, "sampler='fast'"), ({"n_jobs": 0}, "n_jobs=0"),
])
def test_parameter_validation(planted, kw, match):
    with pytest.raises(DPTopicError, match=match) as e:
        LDA(**kw).fit(planted.corpus)
    assert "must be" in str(e.value) and "\n" not in str(e.value)


def test_unfitted_and_empty():
    with pytest.raises(DPTopicError, match="not fitted"):
        LDA().transform([[1]])
    import scipy.sparse as sp
    with pytest.raises(DPTopicError, match="empty corpus"):
        LDA(verbose=0).fit(sp.csr_matrix((3, 4)))


def test_transform_texts_keeps_one_row_per_text():
    texts = ["alpha beta gamma alpha", "gamma delta beta", "beta beta alpha"] * 5
    m = LDA(2, n_iter=10, seed=0, verbose=0).fit(texts)
    theta = m.transform(["alpha beta", "the of and", "zzz unknown"])
    assert theta.shape == (3, 2) and np.allclose(theta[1], 0.5)


def test_seed_must_be_int_or_generator(planted):
    with pytest.raises(DPTopicError, match="seed='abc'"):
        LDA(seed="abc").fit(planted.corpus)
    g = np.random.default_rng(3)
    assert LDA(5, n_iter=2, seed=g, verbose=0).fit(planted.corpus).components_.shape == (5, 200)


# ------------------------------------------------------------------------------------------- count-matrix dtypes
@quiet_small_fits
def test_a_float16_count_matrix_is_read_like_any_other(counts30):
    """scipy.sparse has no float16: it was a ValueError listing scipy's dtypes, from inside scipy."""
    assert Corpus.from_bow(counts30.astype(np.float16)).n_tokens == counts30.sum()
    m = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(counts30)
    assert m.transform(counts30.astype(np.float16)).shape == (len(counts30), 2)


@quiet_small_fits
def test_uint64_counts_too_large_for_a_corpus_are_refused_in_one_line(counts30):
    """Their integer sum wrapped, so the size check passed and np.repeat failed on 'negative' repeats."""
    X = counts30.astype(np.uint64) * np.uint64(2 ** 62)
    with pytest.raises(DPTopicError, match="tokens, more than"):
        dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(X)


# ----------------------------------------------------------------- inference with an alpha set after the fit
@quiet_small_fits
@pytest.mark.parametrize("make", [lambda: dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0),
                                  lambda: dptopic.DocDPEM(n_topics=2, epsilon=2.0, seed=0, verbose=0),
                                  lambda: dptopic.OnlineVB(2, seed=0, verbose=0)], ids=["LDA", "DocDPEM", "OnlineVB"])
@pytest.mark.parametrize("alpha", [float("nan"), float("inf"), 0.0])
def test_transform_and_perplexity_refuse_an_invalid_alpha_set_after_the_fit(corpus30, counts30, make, alpha):
    """NaN/inf proportions came back silently (and OnlineVB raised ZeroDivisionError for alpha=0)."""
    m = make().fit(corpus30)
    m.set_params(alpha=alpha)
    for call in (m.transform, m.perplexity, m.score):
        with pytest.raises(DPTopicError, match="invalid alpha="):
            call(counts30)


def test_a_model_fitted_on_a_vectorizers_counts_warns_when_it_reads_text(speech_lda_pipeline, tmp_path):
    lda = speech_lda_pipeline[-1]
    assert lda.tokenizer_["source"] == "count matrix"
    with pytest.warns(UserWarning, match="'000'.*came with the count matrix"):
        lda.transform(SPEECH_TEXTS[:2])
    with pytest.warns(UserWarning, match="came with the count matrix"):
        ev.npmi_coherence(lda, SPEECH_TEXTS[:9])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        speech_lda_pipeline.transform(SPEECH_TEXTS[:2])      # the pipeline counts with its own vectorizer
        letters = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(
            dptopic.CountVectorizer(token_pattern=r"(?u)\b[a-z]{3,}\b").fit_transform(SPEECH_TEXTS))
        letters.transform(SPEECH_TEXTS[:2])      # words dptopic's tokeniser makes too: no warning
        text_model = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(SPEECH_TEXTS)
        assert "source" not in text_model.tokenizer_
        text_model.transform(SPEECH_TEXTS[:2])
    lda.save(tmp_path / "m")
    assert dptopic.load(tmp_path / "m").tokenizer_["source"] == "count matrix"


def test_umass_takes_a_model_and_checks_the_reference_vocabulary():
    train = dptopic.Corpus.from_texts(SPEECH_TEXTS[:60])
    m = dptopic.LDA(n_topics=3, n_iter=10, seed=0, verbose=0).fit(train)
    other = dptopic.Corpus.from_texts(list(reversed(SPEECH_TEXTS)))   # the same number of words, another order
    assert other.vocab_size == m.components_.shape[1] and other.vocabulary != m.vocabulary_
    with pytest.raises(DPTopicError, match="not in the model's vocabulary"):
        ev.umass_coherence(m, other)
    same = ev.umass_coherence(m, other.restrict(m.vocabulary_))
    assert ev.umass_coherence(m, SPEECH_TEXTS) == pytest.approx(same)
    assert ev.umass_coherence(m.components_, other.restrict(m.vocabulary_)) == pytest.approx(same)
    with pytest.raises(DPTopicError, match="needs the fitted model"):
        ev.umass_coherence(m.components_, [t.split() for t in SPEECH_TEXTS])


def test_missing_texts_and_a_bare_string_get_their_own_one_line_errors():
    with pytest.raises(DPTopicError, match="document 1 of the list is None"):
        dptopic.LDA(n_topics=2, verbose=0).fit(["hello world foo bar", None])
    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(SPEECH_TEXTS)
    with pytest.raises(DPTopicError, match="document 1 of the list is None"):
        m.transform(["hello", None])
    with pytest.raises(DPTopicError, match="a single string is read as a corpus path"):
        dptopic.LDA(n_topics=2, verbose=0).fit("hello world foo bar")


def test_zero_counts_are_not_blamed_on_a_tokeniser():
    X = np.random.default_rng(0).integers(0, 3, (20, 6))
    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(X)
    with pytest.warns(UserWarning, match="counts are all zero") as rec:
        m.transform(np.zeros((1, 6), int))
    assert not any("tokeniser" in str(r.message) for r in rec)


def test_arrays_after_a_frame_warn_as_scikit_learn_does():
    import pandas as pd

    X = pd.DataFrame(np.random.default_rng(0).integers(0, 3, (20, 6)), columns=list("abcdef"))
    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(X)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        m.transform(X.to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.transform(X)


def test_backend_errors(planted, tmp_path):
    with pytest.raises(DPTopicError, match="client"):
        LDA(n_topics=3, n_iter=2, backend="dask", verbose=0).fit(planted.corpus)
    with pytest.raises(DPTopicError, match="backend"):
        LDA(n_topics=3, n_iter=2, backend="spark", verbose=0).fit(planted.corpus)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DPTopicError, match="no shard"):
        training_source(tmp_path / "empty")
    other = planted.corpus.subset(np.arange(5)).restrict(planted.corpus.vocabulary.words[:50])
    p1 = planted.corpus.subset(np.arange(5)).save(tmp_path / "a.npz")
    p2 = other.save(tmp_path / "b.npz")
    with pytest.raises(DPTopicError, match="different vocabulary"):
        ShardSet([p1, p2])


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


TOKENS = [["Apple", "banana", "fruit", "apple"], ["river", "lake", "mountain"], ["apple", "fruit", "salad"],
          ["lake", "river", "valley"], []]


def test_estimators_take_tokenised_documents():
    """A list of lists of words trains and transforms like the same documents given as strings."""
    import dptopic

    docs = [d for d in TOKENS if d] * 10
    m = dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0).fit(docs)
    assert m.vocabulary_.words == Corpus.from_tokens(docs).vocabulary.words
    theta = m.transform([["apple", "fruit"], ["river", "unknown-word"]])
    assert theta.shape == (2, 2) and abs(theta[0, 0] - theta[1, 0]) > 0.5
    assert np.array_equal(theta, m.transform(Corpus.from_tokens([["apple", "fruit"], ["river"]],
                                                                vocabulary=m.vocabulary_)))
    with pytest.raises(DPTopicError, match="list of lists of words"):
        dptopic.LDA(n_topics=2).fit([["a", "b"], "c d"])


def test_a_column_of_texts_is_a_list_of_texts():
    """df["text"] (a pandas Series) or a NumPy array of strings reads like the list of strings it holds; a 1-D array
    of numbers is still refused with the reshape hint."""
    import dptopic

    texts = ["apple banana fruit salad apple", "river lake mountain valley", "apple fruit banana",
             "lake river hiking valley"] * 5
    want = Corpus.from_texts(texts)
    columns = [np.array(texts), np.array(texts, dtype=object)]
    try:
        import pandas as pd
        columns.append(pd.Series(texts))
    except ImportError:                   # pandas is optional; the arrays still run
        pass
    for column in columns:
        m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(column)
        assert m.vocabulary_.words == want.vocabulary.words
        assert np.array_equal(m.transform(column[:3] if isinstance(column, np.ndarray) else column.iloc[:3]),
                              m.transform(texts[:3]))
    with pytest.raises(DPTopicError, match="Reshape your data"):
        dptopic.LDA(n_topics=2).fit(np.array([1, 2, 3]))
    with pytest.raises(DPTopicError, match=r"3 dimension\(s\); give a 2-D documents × words array\.$"):
        dptopic.LDA(n_topics=2).fit(np.ones((2, 2, 2), dtype=int))
    with pytest.raises(DPTopicError, match="text 1 of the column is None, not a string.*fillna"):
        dptopic.LDA(n_topics=2).fit(np.array(["apple fruit", None, "river lake"], dtype=object))
    tokens = [np.array(t.split()) for t in texts]
    assert dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(tokens).vocabulary_.words == \
        Corpus.from_tokens([t.split() for t in texts]).vocabulary.words


def test_a_nullable_frame_with_missing_counts_is_named_in_one_line():
    """A pandas Int64 frame with NA said "... not a real number, not 'NAT); give integer counts." (the type name cut)."""
    pd = pytest.importorskip("pandas")
    from dptopic import LDA
    from dptopic.errors import DPTopicError

    df = pd.DataFrame({"a": [1, None, 2], "b": [0, 1, 1]}, dtype="Int64")
    with pytest.raises(DPTopicError, match="missing") as e:
        LDA(n_topics=2, n_iter=2, seed=0).fit(df)
    assert "\n" not in str(e.value) and "'NAT" not in str(e.value)
    with pytest.raises(DPTopicError, match="not a number \\(.*'object'\\)"):
        LDA(n_topics=2, n_iter=2, seed=0).fit(np.array([[1, object()], [2, 3]], dtype=object))


@pytest.fixture(scope="module")
def corpus_2():
    return lda_corpus(n_docs=120, vocab_size=60, n_topics=3, seed=0).corpus


@pytest.mark.filterwarnings("ignore")
def test_a_refit_uses_the_new_alpha(corpus_2):
    m = dptopic.LDA(3, n_iter=15, seed=0, verbose=0).fit(corpus_2)
    before = m.transform(corpus_2, seed=3)
    m.set_params(alpha=7.0).fit(corpus_2)
    assert not np.allclose(m.transform(corpus_2, seed=3), before)   # the refit and its inference take α = 7


def test_client_without_dask_backend_is_refused(corpus_2):
    with pytest.raises(DPTopicError, match="backend='dask'"):
        dptopic.LDA(3, n_iter=2, seed=0, client=object(), verbose=0).fit(corpus_2)


# ---- item 13: a save writes the parameters that produced the fitted state
def test_set_params_after_fit_does_not_change_what_save_writes(tmp_path):
    X = lda_corpus(n_docs=60, vocab_size=40, n_topics=3, doc_length=20, seed=0).corpus
    m = dptopic.LDA(n_topics=20, n_iter=3, seed=0, verbose=0).fit(X)
    m.set_params(n_topics=10)
    m.save(tmp_path / "lda")
    assert dptopic.load(tmp_path / "lda").n_topics == 20
    h = dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=2.0, n_iter=2, verbose=0).fit(X)
    h.set_params(epsilon_laplace=0.01)
    h.save(tmp_path / "hdp")
    meta = json.loads((tmp_path / "hdp" / "model.json").read_text())
    assert meta["params"]["epsilon_laplace"] == 1.0 == meta["privacy"]["parameters"]["epsilon_laplace"]


def test_a_killed_saves_hidden_folder_is_cleaned_by_the_next_save(tmp_path):
    X = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    m = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(X)
    stale = tmp_path / ".model.abcd1234"          # what a save killed before its rename leaves
    stale.mkdir()
    np.save(stale / "components.npy", np.zeros(3))
    (stale / "model.json").write_text("{}")
    keep = tmp_path / ".model.old-notes"           # not ours: never touched
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    m.save(tmp_path / "model")
    assert not stale.exists() and (keep / "notes.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".model.old-notes", "model"]


def test_random_state_refusal_speaks_of_a_private_seed_only_for_private_trainers():
    with pytest.raises(DPTopicError) as e:
        dptopic.LDA(random_state=0)
    assert "takes seed=, not scikit-learn's random_state=" in str(e.value) and "private" not in str(e.value)
    with pytest.raises(DPTopicError, match="private trainer's seed is for tests and reproduction only"):
        dptopic.HDPLDA(random_state=0)


def test_text_mapped_onto_a_vocabulary_keeps_its_stop_words_short_words_and_case():
    import dptopic
    from dptopic.corpus import Corpus

    # training with a supplied vocabulary still applies the stop-word list and min_length ...
    c = Corpus.from_texts(["the cat is on the mat"] * 3, vocabulary=["the", "is", "on", "cat"])
    assert sorted(c.vocabulary.words[i] for i in c.doc(0)) == ["cat"]
    # ... reading text into a fitted model's words (lowercase="match") does not, and keeps the vocabulary's case
    c = Corpus.from_texts(["The cat is on the mat, NASA"] * 3, vocabulary=["the", "is", "on", "cat", "NASA"],
                          lowercase="match")
    assert sorted(c.vocabulary.words[i] for i in c.doc(0)) == ["NASA", "cat", "is", "on", "the", "the"]
    texts = ["the cat and the dog", "the dog and a cat", "cat dog the and"] * 5
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(Corpus.from_texts(texts, stop_words=None))
    assert "the" in m.vocabulary_.words
    m.transform(["the and the"])  # stop words of the model's own vocabulary count: no "none of the words" error
    cased = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(
        Corpus.from_texts(["Paris France wine", "Paris France cheese"] * 4, lowercase=False, stop_words=None))
    cased.transform(["Paris and France"])  # matched as written, not lowercased away
    with pytest.warns(UserWarning, match="none of the input's words"):  # lowercase words are not this vocabulary's
        assert np.allclose(cased.transform(["paris and france"]), 0.5)
    with pytest.raises(dptopic.DPTopicError, match="none of the input's words"):
        cased.perplexity(["paris and france"])


def test_transform_of_a_batch_without_vocabulary_words_gives_the_prior_as_inside_a_batch():
    import scipy.sparse as sp

    import dptopic

    texts = ["apple banana cherry", "banana cherry apple", "river lake mountain", "lake river mountain"] * 5
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(Corpus.from_texts(texts))
    inside = m.transform(["apple banana", "zzzz qqqq"])[1]
    with pytest.warns(UserWarning, match="every row is the prior alone"):
        alone = m.transform(["zzzz qqqq"])
    with pytest.warns(UserWarning, match="every row is the prior alone"):
        zeros = m.transform(sp.csr_matrix((3, len(m.vocabulary_))))
    np.testing.assert_allclose(alone[0], inside)
    assert zeros.shape == (3, 2) and np.allclose(zeros, inside)


@pytest.fixture(scope="module")
def small(planted):
    return planted.corpus.subset(range(80))


def test_non_private_lda_keeps_its_seed(small, tmp_path):
    LDA(4, n_iter=3, seed=7, verbose=0).fit(small).save(tmp_path / "l")
    assert json.loads((tmp_path / "l" / "model.json").read_text())["params"]["seed"] == 7


def test_a_model_trained_from_shards_records_how_its_text_was_read_and_its_words_chosen(tmp_path):
    import dptopic

    texts = [f"apple banana cherry grape {w}" for w in ("melon", "lemon", "peach", "plum")] * 10
    c = Corpus.from_texts(texts, max_vocab=6)
    write_shards(c, tmp_path / "sh", 3)
    from_npz = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(c)
    from_shards = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(str(tmp_path / "sh"))
    for key in ("reading", "vocabulary_cuts"):
        assert from_shards.tokenizer_.get(key) == from_npz.tokenizer_.get(key) is not None, key
    assert "shard" not in from_shards.tokenizer_.get("vocabulary_cuts", {})


@pytest.mark.parametrize("cls,kw", [(LDA, dict(n_iter=2)), (DocDPEM, dict(epsilon=1.0))])
def test_a_missing_shard_in_a_list_is_refused_not_read_as_text(shards, cls, kw):
    missing = str(shards[0].parent / "shard-00009.npz")
    with pytest.raises(DPTopicError, match=re.escape(f"corpus shard {missing!r} does not exist")):
        cls(n_topics=2, verbose=0, **kw).fit([str(shards[0]), missing])


@pytest.mark.parametrize("cls,kw", [(LDA, dict(n_iter=2)), (DocDPEM, dict(epsilon=1.0))])
def test_the_same_shard_twice_is_refused(shards, cls, kw):
    s0 = str(shards[0])
    with pytest.raises(DPTopicError, match="is given twice: give each shard once"):
        cls(n_topics=2, verbose=0, **kw).fit([s0, s0])
    other = shards[0].parent / ".." / "sh" / "shard-00000.npz"     # the same file by another path
    with pytest.raises(DPTopicError, match="is given twice .*as .* too"):
        ShardSet([shards[0], other])


def test_a_copy_of_a_shard_in_a_list_is_refused(shards, tmp_path):
    copy = tmp_path / "elsewhere" / "shard-00001.npz"
    copy.parent.mkdir()
    shutil.copy(shards[1], copy)
    with pytest.raises(DPTopicError, match=r"are the same shard \(shard 1 of one write_shards run"):
        ShardSet([shards[0], shards[1], copy])
    with pytest.raises(DPTopicError, match="are the same shard"):
        LDA(n_topics=2, n_iter=2, verbose=0).fit([str(shards[1]), str(copy)])
    assert ShardSet([shards[0], copy]).n_docs == ShardSet(shards[:2]).n_docs    # a copy alone is just that shard


def test_a_list_mixing_a_shard_and_texts_is_refused(shards):
    with pytest.raises(DPTopicError, match=r"mixes 1 corpus file\(s\) such as .*shard-00000.npz' with 2 texts"):
        LDA(n_topics=2, n_iter=2, verbose=0).fit([str(shards[0]), "a text about w1 w2", "another w3 w4"])
    with pytest.raises(DPTopicError, match="mixes 1 corpus file"):
        training_source([shards[0], "a text about w1 w2"])


def test_a_complete_folder_renamed_out_of_order_is_read_in_its_runs_order(shards):
    folder = shards[0].parent
    expected = training_source(folder).load_all()
    for j in range(4):                                  # rotate the names: shard j's file is now shard-(j+1 mod 4)
        os.rename(folder / f"shard-{j:05d}.npz", folder / f"tmp-{j}.npz")
    for j in range(4):
        os.rename(folder / f"tmp-{j}.npz", folder / f"shard-{(j + 1) % 4:05d}.npz")
    s = training_source(folder)
    got = s.load_all()
    assert np.array_equal(got.doc_ptr, expected.doc_ptr) and np.array_equal(got.word_ids, expected.word_ids)
    assert [p.name for p in s.paths] == ["shard-00001.npz", "shard-00002.npz", "shard-00003.npz", "shard-00000.npz"]
    LDA(n_topics=2, n_iter=2, verbose=0, seed=0).fit(folder)


WORDS = ["tax", "budget", "war", "army", "school", "teachers", "river", "bridge"]


# --------------------------------------------------- finding 3: LocalDocumentLDA fits reports, spends no budget
def _local_model():
    from dptopic.contributor.document_randomizer import DocumentRandomizer

    reports = DocumentRandomizer(WORDS, 8.0).randomize([["tax", "budget"], ["war", "army"], ["school", "river"]] * 4)
    return dptopic.models.LocalDocumentLDA(n_topics=2).fit(reports), reports


def test_the_local_document_trainers_pickling_refusal_names_no_documents():
    model, _ = _local_model()
    with pytest.raises(DPTopicError, match="never pickled") as e:
        pickle.dumps(model)
    assert "training documents" not in str(e.value) and "model.save(DIR)" in str(e.value)
    fitted = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(np.ones((4, 3), dtype=int))
    with pytest.raises(DPTopicError, match="its state holds the training documents"):
        pickle.dumps(fitted)


def test_get_feature_names_out_checks_input_features():
    import pandas as pd

    X = pd.DataFrame(np.ones((5, 3), dtype=int), columns=["a", "b", "c"])
    m = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(X)
    assert list(m.get_feature_names_out(["a", "b", "c"])) == ["topic0", "topic1"]
    with pytest.raises(DPTopicError, match="input_features is not equal to feature_names_in_"):
        m.get_feature_names_out(["a", "c", "b"])
    with pytest.raises(DPTopicError, match="should have length equal to number of features \\(3"):
        m.get_feature_names_out(["a"])
    bare = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(np.ones((5, 3), dtype=int))
    assert list(bare.get_feature_names_out(["x", "y", "z"])) == ["topic0", "topic1"]
    with pytest.raises(ValueError, match="got 1"):
        bare.get_feature_names_out(["x"])


def test_random_state_is_named_in_one_line():
    # walk A, finding 10: LDA(random_state=0) raised a raw TypeError
    with pytest.raises(DPTopicError, match="takes seed=, not scikit-learn's random_state="):
        dptopic.LDA(random_state=0)
    with pytest.raises(DPTopicError, match="random_state"):
        dptopic.DocDPCooccurrence(random_state=0)


# 6d -----------------------------------------------------------------------------------------------------------
def test_gensim_coherence_recipe_runs_as_written(tmp_path, monkeypatch, capsys):
    # the recipe of docs/results.md ("Coming from gensim"), executed as the page prints it, on a saved model
    pytest.importorskip("gensim")
    from pathlib import Path

    from dptopic import LDA

    page = (Path(__file__).resolve().parents[2] / "docs" / "results.md").read_text()
    block = page.split("### Coming from gensim", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    lines = [f"galaxy orbit rocket launch moon crater planet {'star' if i % 2 else 'comet'}" if i % 3 else
             f"senate vote bill law congress court judge {'tax' if i % 2 else 'budget'}" for i in range(40)]
    monkeypatch.chdir(tmp_path)
    LDA(n_topics=2, n_iter=30, seed=0, verbose=0).fit(lines[:30]).save("runs/demo")
    Path("heldout.txt").write_text("\n".join(lines[30:]) + "\n")
    exec(compile(block, "docs/results.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.count("c_v ") == 1 and out.count("c_npmi ") == 1, out


def _small_model(tmp_path):
    from dptopic import LDA
    from dptopic.corpus import Corpus

    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(["apple", "pear", "plum", "kiwi", "fig", "lime"], 12)) for _ in range(20)]
    m = LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(Corpus.from_texts(texts))
    m.save(tmp_path / "m")
    return m, tmp_path / "m"


def test_load_reads_each_array_file_once_and_checks_the_bytes_it_parses(tmp_path, monkeypatch):
    import dptopic._io as io_mod
    from dptopic import LDA

    m, folder = _small_model(tmp_path)
    hashed = []
    real = io_mod._HashingReader.hexdigest

    def spy(self):              # every array's digest comes from the reader that fed numpy its bytes
        hashed.append(self)
        return real(self)

    def no_second_pass(path):
        raise AssertionError(f"{path} hashed by a second read")

    def no_whole_file(self):
        raise AssertionError(f"{self} read whole into memory beside its array")

    opened = []
    real_open = open

    def counting_open(file, *a, **k):
        if str(file).endswith(".npy"):
            opened.append(str(file))
        return real_open(file, *a, **k)

    def no_np_load(*a, **k):
        raise AssertionError("np.load reads the file again, apart from the bytes hashed")

    monkeypatch.setattr("builtins.open", counting_open)
    monkeypatch.setattr(np, "load", no_np_load)
    monkeypatch.setattr(io_mod._HashingReader, "hexdigest", spy)
    monkeypatch.setattr(io_mod, "_file_sha256", no_second_pass)
    from pathlib import Path
    monkeypatch.setattr(Path, "read_bytes", no_whole_file)
    loaded = LDA.load(folder)
    files = sorted(str(p) for p in folder.glob("*.npy"))
    assert len(hashed) == len(files) and len(set(map(id, hashed))) == len(hashed)
    assert sorted(opened) == files                   # each array file opened once
    np.testing.assert_array_equal(loaded.components_, m.components_)
    monkeypatch.undo()
    # an edited array is still refused by its digest
    target = sorted(folder.glob("*.npy"))[0]
    np.save(target, np.load(target) * 1.0 + 1e-3)
    with pytest.raises(Exception, match="SHA-256 differs"):
        LDA.load(folder)


def test_load_refuses_bytes_appended_to_an_array_file(tmp_path):
    """The digest covers the whole file: bytes after the array (which numpy would not read) are still refused."""
    from dptopic import LDA

    _, folder = _small_model(tmp_path)
    target = sorted(folder.glob("*.npy"))[0]
    with open(target, "ab") as f:
        f.write(b"\x00" * 3)
    with pytest.raises(Exception, match="SHA-256 differs"):
        LDA.load(folder)


def test_a_model_fitted_on_uci_files_records_that_its_words_came_with_the_counts(tmp_path):
    from dptopic import LDA
    from dptopic.corpus import Corpus
    from dptopic.corpus.preprocess import BAG_OF_WORDS_FILE

    (tmp_path / "vocab.txt").write_text("apple\npear\nplum\nfig\n")
    rows = [(d, w, 1 + (d + w) % 3) for d in range(1, 9) for w in range(1, 5) if (d + w) % 2]
    (tmp_path / "docword.txt").write_text(f"8\n4\n{len(rows)}\n" + "".join(f"{d} {w} {c}\n" for d, w, c in rows))
    c = Corpus.from_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")
    m = LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(c)
    assert m.tokenizer_["source"] == BAG_OF_WORDS_FILE and "UCI vocab file" in m.tokenizer_["tokens"]
    m.save(tmp_path / "m")
    assert LDA.load(tmp_path / "m").tokenizer_["source"] == BAG_OF_WORDS_FILE
    c.save(tmp_path / "c")          # the corpus keeps it through a save (dptopic corpus prepare)
    assert LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(Corpus.load(tmp_path / "c")).tokenizer_["source"] \
        == BAG_OF_WORDS_FILE
    # reading text into it warns with advice for a bag-of-words file (there is no vectorizer to reuse)
    import warnings

    from dptopic.corpus.preprocess import warn_if_other_tokenizer

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warn_if_other_tokenizer(m.tokenizer_, words=["apple", "w1500"])
    (msg,) = [str(w.message) for w in seen]
    assert "bag-of-words file was counted" in msg and "pipeline.transform" not in msg and "'w1500'" in msg
    # text still records dptopic's own tokeniser
    assert "source" not in LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(
        Corpus.from_texts(["apple pear plum fig", "fig plum pear apple"] * 4)).tokenizer_


def test_an_option_dptopic_does_not_have_is_named_with_the_parameters_it_has():
    import dptopic
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="LDA has no learning_decay= .*n_topics, alpha, beta, n_iter"):
        dptopic.LDA(learning_decay=0.7)
    with pytest.raises(DPTopicError, match="LDA has no learning_method="):
        dptopic.LDA(learning_method="online")
    assert dptopic.OnlineVB(kappa=0.7).kappa == 0.7 and dptopic.LDA(eval_every=5).eval_every == 5


def test_a_column_selection_of_a_vectorizer_matrix_keeps_its_words():
    import dptopic

    texts = ["apple pear plum rock", "rock sand clay apple", "pear plum fig sand", "clay stone rock fig"] * 5
    X = dptopic.CountVectorizer().fit_transform(texts)
    words = list(X.feature_names)
    for cols in ([5, 1, 4], slice(None, None, -1), np.array([True, False] * (len(words) // 2) + [True] * (len(words) % 2))):
        sub = X[:, cols]
        assert list(sub.feature_names) == list(np.asarray(words, dtype=object)[cols])
        np.testing.assert_array_equal(sub.toarray(), X.toarray()[:, cols])
        assert sub.public_vocabulary is False
        m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(sub)
        assert list(m.vocabulary_.words) == list(sub.feature_names)
    assert list(X[2:5, :].feature_names) == words         # rows only: unchanged
    pub = dptopic.CountVectorizer(vocabulary=words).fit_transform(texts)
    assert pub.public_vocabulary and not pub[:, [0, 1]].public_vocabulary   # a selection may come from the data


def test_a_non_private_fit_does_not_warn_about_its_vocabulary():
    c = lda_corpus(n_docs=50, vocab_size=20, n_topics=2, doc_length=10, seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("error", dptopic.DataVocabularyWarning)
        dptopic.LDA(n_topics=2, n_iter=2, verbose=0).fit(c)


def test_released_topics_are_the_posterior_mean_of_the_counts_bit_for_bit(planted):
    from dptopic.models.lda import _transposed

    m = LDA(5, alpha=0.1, beta=0.05, n_iter=5, seed=0, verbose=0).fit(planted.corpus)
    c = m.topic_word_counts_
    expected = c.astype(np.float64) + 0.05
    expected /= (c.sum(1) + c.shape[1] * 0.05)[:, None]
    assert np.array_equal(m.components_, expected) and c.flags.c_contiguous
    a = np.arange(600 * 7, dtype=np.int32).reshape(600, 7)   # 600 rows: two full blocks of 256 and a part
    assert np.array_equal(_transposed(a), a.T) and _transposed(a).flags.c_contiguous
