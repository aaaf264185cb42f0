"""Fixes from a new user's walk-through (2026-11-23): reports that describe what happened, one way to read text."""
import warnings

import pytest

import dptopic
from dptopic.corpus import lda_corpus


def _quiet_fit(model, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, **kw)


@pytest.mark.parametrize("vocab_size, releases", [(60, 1), (600, 2)])
def test_the_cooccurrence_report_names_the_releases_it_made(vocab_size, releases):
    c = lda_corpus(n_docs=300, vocab_size=vocab_size, n_topics=3, doc_length=30, seed=4).corpus
    rep = _quiet_fit(dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0, verbose=0), c).privacy_
    assert len(rep["events"]) == releases
    assert ("two statistics" in rep["theorem"]) == (releases == 2)
    assert ("chose the kept words" in rep["scope"]) == (releases == 2)


TRAINERS = {"DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, verbose=0),
            "DocDPEM": lambda: dptopic.DocDPEM(n_topics=2, epsilon=1.0, n_iter=2, verbose=0),
            "DPSVI": lambda: dptopic.DPSVI.from_budget(1.0, 1e-5, n_topics=2, verbose=0),
            "HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_laplace=3.0, verbose=0)}


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=200, vocab_size=40, n_topics=2, doc_length=20, seed=1).corpus


@pytest.mark.parametrize("name", ["DocDPCooccurrence", "DocDPEM", "DPSVI"])
def test_document_level_reports_say_where_their_coins_come_from_and_name_group_privacy(name, small):
    from dptopic.reporting import privacy_card

    m = _quiet_fit(TRAINERS[name](), small)
    rep = m.privacy_
    assert rep["randomness"].startswith("standard mode") and "floating-point" in rep["randomness"]
    assert "k times epsilon" in rep["scope"] and rep["scope"].count("group privacy") == 1
    card = privacy_card(rep, type(m).__name__)
    assert card["implementation"]["randomness"] == rep["randomness"]


@pytest.mark.parametrize("name", ["DocDPCooccurrence", "HDPLDA", "DPSVI"])
def test_a_private_fit_on_a_vocabulary_from_its_documents_warns_and_a_public_one_does_not(name, small):
    make, c = TRAINERS[name], small
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", dptopic.DataVocabularyWarning)
        with pytest.warns(dptopic.DataVocabularyWarning, match="chosen from the training documents"):
            make().fit(c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", dptopic.DataVocabularyWarning)
        m = make().fit(c, vocabulary=c.vocabulary.words)
    assert m.privacy_["vocabulary_source"] == "supplied"


def test_a_non_private_fit_does_not_warn_about_its_vocabulary():
    c = lda_corpus(n_docs=50, vocab_size=20, n_topics=2, doc_length=10, seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("error", dptopic.DataVocabularyWarning)
        dptopic.LDA(n_topics=2, n_iter=2, verbose=0).fit(c)


def test_topic_quality_reads_texts_as_evaluate_does(tmp_path):
    from dptopic.evaluation import topic_quality

    texts = ["The rocket reached orbit and the moon", "a doctor treats the disease of the patient",
             "the moon and the rocket orbit", "the patient saw the doctor about a disease"] * 15
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(dptopic.Corpus.from_texts(texts, stop_words=None))
    assert "the" in m.vocabulary_.words          # a stop word the model kept: text must be read with it
    texts = texts + ["nothing here matches"] * 5  # documents with none of the model's words: dropped, as evaluate does
    from dptopic.cli._common import load_corpus

    f = tmp_path / "ref.txt"
    f.write_text("\n".join(texts))
    ref = load_corpus(str(f), "text", None, "text", None, vocabulary=m.vocabulary_, into_model=True)
    assert ref.n_docs == 60
    assert topic_quality(m, texts) == topic_quality(m, ref)


def test_a_given_vocabulary_with_words_text_never_yields_warns():
    texts = ["interest rates rise again", "the bank raised interest rates"]
    with pytest.warns(UserWarning, match=r"1 stop word\(s\) \('interest'.*2 that the tokeniser never produces \('Bank', "
                                         r"'money,debt'"):
        c = dptopic.Corpus.from_texts(texts, vocabulary=["interest", "rates", "Bank", "money,debt", "raised"])
    assert c.n_tokens == 3      # rates x2, raised
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dptopic.Corpus.from_texts(texts, vocabulary=["interest", "rates", "raised"], stop_words=None)
        dptopic.Corpus.from_texts(texts, vocabulary=["rates", "Bank"], lowercase=False)


@pytest.mark.parametrize("make", [lambda d: dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, delta=d, verbose=0),
                                  lambda d: dptopic.DPSVI.from_budget(1.0, d, n_topics=2, verbose=0)])
def test_a_large_delta_warns(make):
    c = lda_corpus(n_docs=100, vocab_size=30, n_topics=2, doc_length=20, seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", UserWarning)
        with pytest.warns(UserWarning, match="delta = 0.5 is large"):
            make(0.5).fit(c)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            make(1e-5).fit(c)
    assert not [w for w in seen if "is large" in str(w.message)]


@pytest.mark.parametrize("eps, unit, weak", [(600.0, "word", True), (20.0, "document", True), (8.0, "document", False),
                                             (16.0, "document", False)])
def test_the_card_calls_a_large_epsilon_weak(eps, unit, weak):
    from dptopic.reporting import privacy_card
    from dptopic.reporting.html import _privacy_section

    rep = {"private": True, "epsilon": eps, "delta": 1e-5, "epsilon_method": "PLD", "unit": unit,
           "vocabulary_source": "supplied", "scope": "covers everything. NOT covered: nothing."}
    card = privacy_card(rep, "X")
    assert ("strength_note" in card) == weak
    if weak:
        assert "weak guarantee" in card["strength_note"] and ("per-document row" in card["strength_note"]) == (unit == "word")
        assert "weak guarantee" in _privacy_section(card)


def test_background_topics_are_named_and_labelled(tmp_path):
    from dptopic.reporting import privacy_card
    from dptopic.reporting.html import render_report

    c = lda_corpus(n_docs=400, vocab_size=300, n_topics=10, doc_length=40, seed=2).corpus
    m = _quiet_fit(dptopic.DocDPCooccurrence(n_topics=10, epsilon=4.0, verbose=0), c)
    ids = m.background_topic_ids()
    assert ids == list(range(10 - m.n_background_topics_, 10)) and len(ids) > 0
    m.save(tmp_path / "m")
    assert dptopic.load(tmp_path / "m").background_topic_ids() == ids      # from the saved report
    assert _quiet_fit(dptopic.LDA(n_topics=3, n_iter=2, verbose=0), c).background_topic_ids() == []
    page = render_report(title="t", trainer="DocDPCooccurrence", card=privacy_card(m.privacy_, "DocDPCooccurrence"),
                         topics=m.topic_words(5, weights=True), background=ids)
    assert page.count("(background: corpus-wide words)") == len(ids)


def test_a_vocabulary_given_as_a_generator_is_read_once():
    c = dptopic.Corpus.from_texts(["rates rise", "rates fall again"], vocabulary=(w for w in ["rates", "rise", "fall"]))
    assert c.vocabulary.words == ["rates", "rise", "fall"] and c.n_tokens == 4


@pytest.mark.parametrize("name", ["DocDPCooccurrence", "HDPLDA", "DPSVI"])
def test_a_corpus_built_on_a_given_vocabulary_counts_as_supplied_until_pruned(name, small, tmp_path):
    words = small.vocabulary.words
    docs = [small.doc_words(d) for d in range(small.n_docs)]
    given = dptopic.Corpus.from_tokens(docs, vocabulary=words)
    saved = dptopic.Corpus.load(given.save(tmp_path / "c.npz"))
    restricted = dptopic.Corpus.from_tokens(docs).restrict(words)
    for c in (given, saved, restricted):
        assert c.vocabulary_supplied
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", dptopic.DataVocabularyWarning)
            assert TRAINERS[name]().fit(c).privacy_["vocabulary_source"] == "supplied"
    for c in (dptopic.Corpus.from_tokens(docs), given.prune(max_vocab=30)):  # built from, or chosen by, the counts
        assert not c.vocabulary_supplied
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("always", dptopic.DataVocabularyWarning)
            with pytest.warns(dptopic.DataVocabularyWarning):
                TRAINERS[name]().fit(c)


def test_corpus_prepare_on_a_public_vocabulary_is_remembered_by_files_and_shards(tmp_path, small):
    from dptopic.backends import ShardSet
    from dptopic.cli.main import main

    words = ["word" + "".join(chr(97 + int(c)) for c in str(i)) for i in range(small.vocab_size)]  # letters only
    (tmp_path / "docs.txt").write_text("\n".join(" ".join(words[w] for w in small.doc(d)) for d in range(small.n_docs))
                                       + "\n")
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    base = ["corpus", "prepare", "--corpus", str(tmp_path / "docs.txt"), "--stop-words", "none"]
    assert main(base + ["--out", str(tmp_path / "data.npz")]) == 0
    assert not dptopic.Corpus.load(tmp_path / "data.npz").vocabulary_supplied
    given = ["corpus", "prepare", "--corpus", str(tmp_path / "docs.txt"), "--vocabulary", str(tmp_path / "vocab.txt")]
    assert main(given + ["--out", str(tmp_path / "given.npz")]) == 0
    c = dptopic.Corpus.load(tmp_path / "given.npz")
    assert c.vocabulary_supplied and c.vocabulary.words == words
    assert main(given + ["--shards", "2", "--out", str(tmp_path / "shards")]) == 0
    assert main(base + ["--shards", "2", "--out", str(tmp_path / "data-shards")]) == 0
    assert ShardSet(sorted((tmp_path / "shards").glob("shard-*.npz"))).vocabulary_supplied
    assert not ShardSet(sorted((tmp_path / "data-shards").glob("shard-*.npz"))).vocabulary_supplied
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for src, source in ((tmp_path / "shards", "supplied"), (tmp_path / "data-shards", "data")):
            assert TRAINERS["DocDPCooccurrence"]().fit(str(src)).privacy_["vocabulary_source"] == source
            assert TRAINERS["HDPLDA"]().fit(str(src)).privacy_["vocabulary_source"] == source
    assert main(given + ["--max-vocab", "10", "--out", str(tmp_path / "x.npz")]) == 2
    assert not (tmp_path / "x.npz").exists()
