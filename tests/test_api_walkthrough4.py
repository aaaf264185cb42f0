"""A new user's walk-through of the Python API, as a gensim or tomotopy user (2026-11-24): what it found."""
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.errors import DPTopicError

DOCS = [["Running", "e-mail", "C++", "writes:", "runs"], ["apple", "pear", "runs"]] * 5


def _lda(X):
    return dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(X)


def test_token_lists_are_recorded_as_the_caller_s_tokens_and_raw_text_warns(tmp_path):
    """A model fitted on token lists recorded dptopic's tokeniser ('runs of letters ... lower-cased') as the maker of
    its words, and raw text read into it (which never yields 'C++' or 'e-mail') gave proportions without a word. Words
    of letters in any case are read in the vocabulary's own case, so they are not named."""
    m = _lda(DOCS)
    assert m.tokenizer_["source"] == "token lists" and "caller's tokeniser" in m.tokenizer_["tokens"]
    with pytest.warns(UserWarning, match=r"'C\+\+'.*came from the tokenised documents"):
        m.transform(["Running e-mail C++ writes: it runs"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.transform([["Running", "C++"]])                       # tokens are read exactly: no warning
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m")
    assert loaded.tokenizer_["source"] == "token lists"
    with pytest.warns(UserWarning, match="came from the tokenised documents"):
        loaded.transform(["Running e-mail"])
    plain = _lda([["NASA", "apple"], ["pear", "runs"]] * 5)       # words dptopic's tokeniser reads: nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        theta = plain.transform(["NASA apple"])
    assert not np.allclose(theta, plain.transform(["pear runs"]))   # 'NASA' is counted, as written
    assert "source" not in _lda(["running apple", "pear runs"] * 5).tokenizer_


@pytest.mark.parametrize("bow", [[[(0, 2), (1, 1)], [(2, 3), (3, 1)], [(1, 1)]],
                                 [[(0, 2), (1, 1)], [(2, 3), (3, 1)]]])
def test_gensim_bag_of_words_is_refused_with_the_conversion(bow):
    """gensim's corpus (lists of (id, count) pairs) was read as an array: 'give a 2-D array of counts' or 'it has 3
    dimension(s)', with no word of the format or of what to pass."""
    with pytest.raises(DPTopicError, match=r"gensim's bag-of-words corpus.*corpus2csc\(bow, num_terms"):
        _lda(bow)
    m = _lda([["apple", "pear"], ["runs", "pear"]] * 3)
    with pytest.raises(DPTopicError, match="gensim's bag-of-words corpus"):
        m.transform(bow)
    assert _lda([[0, 2, 1], [3, 0, 1]]).components_.shape == (2, 3)     # a count matrix of nested lists still reads


def test_score_on_private_training_documents_warns_once():
    """score() read X and then handed the corpus it made to perplexity(), which read it again: the warning that the
    documents trained a private model came twice."""
    from dptopic.corpus import lda_corpus

    corpus = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=0).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.HDPLDA(n_topics=2, n_iter=3, epsilon_inherent=10.0, epsilon_laplace=5.0, verbose=0).fit(
            corpus, vocabulary=corpus.vocabulary)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.score(corpus)
    said = [w for w in caught if "trained a private model in this process" in str(w.message)]
    assert len(said) == 1, [str(w.message) for w in caught]
    assert not hasattr(m, "_scoring_corpus")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.perplexity(corpus)                                        # a later call on the same corpus still says it
    assert sum("trained a private model" in str(w.message) for w in caught) == 1


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


def test_evaluate_says_when_top_n_is_cut_to_the_vocabulary(tmp_path, capsys):
    from dptopic.cli.main import main

    texts = tmp_path / "t.txt"
    texts.write_text("\n".join(["apple pear banana fruit", "engine wheel brake car", "apple fruit pear",
                                "car engine brake"] * 10))
    assert main(["train", "--algorithm", "lda", "--corpus", str(texts), "--topics", "2", "--iterations", "5",
                 "--seed", "0", "--out", str(tmp_path / "m")]) in (0, None)
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "m"), "--corpus", str(texts), "--top-n", "5000"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "--top-n 5000 is more than the model's 8 words: the top 8 are used" in out and "NPMI (top 8," in out


def test_warnings_name_the_user_s_line_through_fit_transform_and_transform():
    """Each warning's stacklevel was counted for one call path: through fit_transform (which calls fit) it named
    base.py, and through scikit-learn's set_output wrapper of transform it named sklearn/utils/_set_output.py."""
    from dptopic.corpus import lda_corpus
    from dptopic.errors import SeededNoiseWarning

    corpus = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=1).corpus

    def hdp():
        return dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_inherent=10.0, epsilon_laplace=5.0, verbose=0, seed=0)

    for call in (lambda: hdp().fit_transform(corpus, vocabulary=corpus.vocabulary),
                 lambda: hdp().fit(corpus, vocabulary=corpus.vocabulary)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = call()
        seeded = [w for w in caught if issubclass(w.category, SeededNoiseWarning)]
        assert seeded and all(w.filename == __file__ for w in seeded), [(w.filename, w.lineno) for w in seeded]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.transform(corpus)
    reads = [w for w in caught if "trained a private model" in str(w.message)]
    assert reads and all(w.filename == __file__ for w in reads), [(w.filename, w.lineno) for w in reads]


def test_hdp_warns_when_its_clip_bound_is_under_one_token():
    """--unit word's budget error advised a smaller --epsilon-inherent; at 0.5 the clip bound is 0.284 and every
    topic came out the same, without a word."""
    from dptopic.accounting import hdp_epsilon_inherent
    from dptopic.corpus import lda_corpus

    corpus = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=2).corpus
    with pytest.warns(UserWarning, match=r"clip bound C = 0.284 .* under one token.*at least 1.386"):
        dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_inherent=0.5, epsilon_laplace=5.0, beta=1.0,
                       verbose=0).fit(corpus, vocabulary=corpus.vocabulary)
    assert hdp_epsilon_inherent(1.0, 1.0) == pytest.approx(1.386, abs=1e-3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_inherent=1.4, epsilon_laplace=5.0, beta=1.0,
                       verbose=0).fit(corpus, vocabulary=corpus.vocabulary)
    assert not any("under one token" in str(w.message) for w in caught)
