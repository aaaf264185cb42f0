"""What a new user coming from scikit-learn and gensim ran into (a walk-through of 2026-11-23), each pinned."""
import math
import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

import dptopic
from dptopic import evaluation as ev
from dptopic.errors import DPTopicError

TEXTS = (["the budget deficit fell by 30 percent in 1999 and the fiscal year closed with 000 jobs added"] * 3
         + ["our army and navy defend the nation at sea and on land with 10 new ships"] * 3
         + ["schools teachers and students need education funding for every child"] * 3) * 8


@pytest.fixture(scope="module")
def pipe():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_pipeline(dptopic.CountVectorizer(), dptopic.LDA(n_topics=3, n_iter=20, seed=0, verbose=0)).fit(TEXTS)


def test_counts_of_another_vectorizer_are_refused_not_read_by_position(pipe):
    lda = pipe[-1]
    other = dptopic.CountVectorizer().fit(TEXTS[:3])            # fewer, other words in other columns
    X = other.transform(TEXTS[:5])
    padded = dptopic.CountVectorizer(vocabulary=list(reversed(pipe[0].get_feature_names_out()))).transform(TEXTS[:5])
    for bad in (X, padded):
        for f in (lda.transform, lda.perplexity, lambda Y: ev.npmi_coherence(lda, Y)):
            with pytest.raises(DPTopicError, match="another vectorizer"):
                f(bad)
    assert lda.transform(pipe[0].transform(TEXTS[:5])).shape == (5, 3)   # its own vectorizer's counts are read
    # without a vocabulary a vectorizer's matrix names its words, not w0, w1, ...
    assert dptopic.Corpus.from_bow(X).vocabulary.words == list(other.get_feature_names_out())


def test_a_model_fitted_on_a_vectorizers_counts_warns_when_it_reads_text(pipe, tmp_path):
    lda = pipe[-1]
    assert lda.tokenizer_["source"] == "count matrix"
    with pytest.warns(UserWarning, match="'000'.*came with the count matrix"):
        lda.transform(TEXTS[:2])
    with pytest.warns(UserWarning, match="came with the count matrix"):
        ev.npmi_coherence(lda, TEXTS[:9])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipe.transform(TEXTS[:2])                                # the pipeline counts with its own vectorizer
        letters = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(
            dptopic.CountVectorizer(token_pattern=r"(?u)\b[a-z]{3,}\b").fit_transform(TEXTS))
        letters.transform(TEXTS[:2])                              # words dptopic's tokeniser makes too: no warning
        text_model = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(TEXTS)
        assert "source" not in text_model.tokenizer_
        text_model.transform(TEXTS[:2])
    lda.save(tmp_path / "m")
    assert dptopic.load(tmp_path / "m").tokenizer_["source"] == "count matrix"


def test_umass_takes_a_model_and_checks_the_reference_vocabulary():
    train = dptopic.Corpus.from_texts(TEXTS[:60])
    m = dptopic.LDA(n_topics=3, n_iter=10, seed=0, verbose=0).fit(train)
    other = dptopic.Corpus.from_texts(list(reversed(TEXTS)))   # the same number of words, another order
    assert other.vocab_size == m.components_.shape[1] and other.vocabulary != m.vocabulary_
    with pytest.raises(DPTopicError, match="not in the model's vocabulary"):
        ev.umass_coherence(m, other)
    same = ev.umass_coherence(m, other.restrict(m.vocabulary_))
    assert ev.umass_coherence(m, TEXTS) == pytest.approx(same)
    assert ev.umass_coherence(m.components_, other.restrict(m.vocabulary_)) == pytest.approx(same)
    with pytest.raises(DPTopicError, match="needs the fitted model"):
        ev.umass_coherence(m.components_, [t.split() for t in TEXTS])


def test_an_infinite_epsilon_is_a_float_again_after_loading(tmp_path):
    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(TEXTS)
    m.save(tmp_path / "m")
    back = dptopic.load(tmp_path / "m")
    assert isinstance(back.privacy_["epsilon"], float) and math.isinf(back.privacy_["epsilon"])


def test_missing_texts_and_a_bare_string_get_their_own_one_line_errors():
    with pytest.raises(DPTopicError, match="document 1 of the list is None"):
        dptopic.LDA(n_topics=2, verbose=0).fit(["hello world foo bar", None])
    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(TEXTS)
    with pytest.raises(DPTopicError, match="document 1 of the list is None"):
        m.transform(["hello", None])
    with pytest.raises(DPTopicError, match="a single string is read as a corpus path"):
        dptopic.LDA(n_topics=2, verbose=0).fit("hello world foo bar")


def test_a_data_chosen_vocabulary_makes_the_report_itself_say_partial():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0).fit(TEXTS)
        public = dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0).fit(TEXTS, vocabulary=data.vocabulary_.words)
    assert data.privacy_["guarantee"] == "partial" and public.privacy_["guarantee"] == "full"


def test_zero_counts_are_not_blamed_on_a_tokeniser():
    X = np.random.default_rng(0).integers(0, 3, (20, 6))
    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(X)
    with pytest.warns(UserWarning, match="counts are all zero") as rec:
        m.transform(np.zeros((1, 6), int))
    assert not any("tokeniser" in str(r.message) for r in rec)


def test_stop_words_are_lowercased_with_the_tokens():
    c = dptopic.Corpus.from_texts(["The Cat sat on the mat today", "cat dog mat"], stop_words=["Cat", "THE"])
    assert "cat" not in c.vocabulary.words and "the" not in c.vocabulary.words and "mat" in c.vocabulary.words
    kept = dptopic.Corpus.from_texts(["The Cat sat", "cat dog"], stop_words=["Cat"], lowercase=False)
    assert "Cat" not in kept.vocabulary.words and "cat" in kept.vocabulary.words


def test_arrays_after_a_frame_warn_as_scikit_learn_does():
    import pandas as pd

    X = pd.DataFrame(np.random.default_rng(0).integers(0, 3, (20, 6)), columns=list("abcdef"))
    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(X)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        m.transform(X.to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.transform(X)
