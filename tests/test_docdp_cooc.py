"""Document-level DP from one co-occurrence release (DocDPCooccurrence) and dptopic.recovery."""
import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import dptopic
from dptopic.accounting.gaussian import calibrate_gaussian_pair, calibrate_noise_multiplier
from dptopic.corpus import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation.recovery import topic_recovery
from dptopic.models import docdp_cooc
from dptopic.models.docdp_cooc import DocDPCooccurrence
from dptopic.recovery import document_frequency_statistic, normalised_cooccurrence, topics_from_cooccurrence
from dptopic.recovery.cooccurrence import per_document_cooccurrence

V = 10


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), min_size=V, max_size=V), min_size=1, max_size=5),
       st.lists(st.integers(0, 60), min_size=V, max_size=V))
def test_adding_a_document_moves_each_statistic_by_at_most_one(docs, extra):
    X = sp.csr_matrix(np.array(docs, float))
    Xp = sp.vstack([X, sp.csr_matrix(np.array(extra, float)[None, :])]).tocsr()
    assert np.linalg.norm(normalised_cooccurrence(Xp) - normalised_cooccurrence(X)) <= 1 + 1e-9
    assert np.linalg.norm(document_frequency_statistic(Xp) - document_frequency_statistic(X)) <= 1 + 1e-9
    assert np.linalg.norm(document_frequency_statistic(Xp, with_document=True)
                          - document_frequency_statistic(X, with_document=True)) <= 1 + 1e-9
    for doc in (False, True):
        assert np.linalg.norm(document_frequency_statistic(Xp, with_document=doc, with_counts=True)
                              - document_frequency_statistic(X, with_document=doc, with_counts=True)) <= 1 + 1e-9
    cols = [0, 3, 4, 9]
    assert np.linalg.norm(normalised_cooccurrence(Xp, cols) - normalised_cooccurrence(X, cols)) <= 1 + 1e-9


def test_cooccurrence_against_a_direct_reference():
    rng = np.random.default_rng(0)
    X = rng.poisson(0.8, size=(7, V)).astype(float)
    ref = np.zeros((V, V))
    for c in X:
        M = np.outer(c, c) - np.diag(c)
        n = np.linalg.norm(M)
        if n > 0:
            ref += M / n
    np.testing.assert_allclose(normalised_cooccurrence(sp.csr_matrix(X)), ref, atol=1e-12)
    # a long document weighs no more than a short one: its term has Frobenius norm exactly 1
    long = np.zeros(V); long[:3] = [50, 40, 30]
    assert np.linalg.norm(per_document_cooccurrence(long)) == pytest.approx(1.0)
    # without the normalisation the bound breaks
    assert np.linalg.norm(np.outer(long, long) - np.diag(long)) > 1


def test_pair_calibration_matches_dp_accounting():
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    s1, s2 = calibrate_gaussian_pair(1.0, 1e-5, 3.0)
    assert s1 == pytest.approx(3 * s2)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.GaussianDpEvent(s1)).compose(dp_event.GaussianDpEvent(s2))
    eps = acc.get_epsilon(1e-5)
    assert eps <= 1.0 + 2e-3 and eps > 0.98           # tight, not wasteful
    # the pair costs what one Gaussian of multiplier (s1^-2 + s2^-2)^(-1/2) costs: 3.73 at (1, 1e-5)
    assert (s1 ** -2 + s2 ** -2) ** -0.5 == pytest.approx(calibrate_noise_multiplier(1.0, 1e-5, 1.0, 1), rel=5e-3)


def _planted(seed=4):
    return lda_corpus(n_docs=600, vocab_size=40, n_topics=3, doc_length=50, alpha=0.1, beta=0.05, seed=seed)


@pytest.mark.parametrize("method", ["nmf", "anchors"])
def test_topics_from_an_exact_cooccurrence_recover_planted_topics(method):
    s = _planted()
    Q = normalised_cooccurrence(s.corpus.to_bow())
    topics = topics_from_cooccurrence(Q, 3, method)
    assert np.allclose(topics.sum(1), 1) and (topics >= 0).all()
    assert topic_recovery(topics, s.phi) > 0.9
    # a random guess does not
    assert topic_recovery(np.random.default_rng(0).dirichlet(np.ones(40), 3), s.phi) < 0.6


def test_recovery_refuses_bad_matrices():
    with pytest.raises(DPTopicError, match="square"):
        topics_from_cooccurrence(np.ones((3, 4)), 2)
    with pytest.raises(DPTopicError, match="NaN"):
        topics_from_cooccurrence(np.full((3, 3), np.nan), 2)
    with pytest.raises(DPTopicError, match="method"):
        topics_from_cooccurrence(np.ones((3, 3)), 2, "svd")
    with pytest.raises(DPTopicError, match="n_topics"):
        topics_from_cooccurrence(np.ones((3, 3)), 4)


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_planted_topics_recovered_at_large_epsilon():
    s = _planted()
    m = DocDPCooccurrence(n_topics=3, epsilon=400.0, n_words=40, seed=0).fit(s.corpus)
    assert topic_recovery(m.components_, s.phi) > 0.9
    # at a small epsilon on so few documents the topics are noise, as the noise scale says they must be
    m = DocDPCooccurrence(n_topics=3, epsilon=0.05, n_words=40, seed=0).fit(s.corpus)
    assert topic_recovery(m.components_, s.phi) < 0.9


def test_topics_read_only_the_releases(monkeypatch):
    """Post-processing: two different corpora given the same releases produce identical topics."""
    rng = np.random.default_rng(1)
    a = lda_corpus(n_docs=80, vocab_size=30, n_topics=2, doc_length=20, seed=5).corpus
    b = lda_corpus(n_docs=50, vocab_size=30, n_topics=2, doc_length=9, seed=6).corpus
    ranking = rng.normal(size=30)
    cooc = np.abs(rng.normal(size=(12, 12))) * 10
    real = docdp_cooc.gaussian_mechanism

    def fixed(values, sigma, sens, rng_, secure=False, label=""):
        _, event = real(values, sigma, sens, np.random.default_rng(0), label=label)
        return (ranking if np.ndim(values) == 1 else cooc), event

    monkeypatch.setattr(docdp_cooc, "gaussian_mechanism", fixed)
    ma = DocDPCooccurrence(max_false_words=None, n_topics=2, n_words=12, seed=0).fit(a)
    mb = DocDPCooccurrence(max_false_words=None, n_topics=2, n_words=12, seed=0).fit(b)
    np.testing.assert_array_equal(ma.components_, mb.components_)
    np.testing.assert_array_equal(ma.kept_words_, np.sort(np.argsort(-ranking, kind="stable")[:12]))


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_report_accounting_and_roundtrip(tmp_path):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    c = lda_corpus(n_docs=60, vocab_size=50, n_topics=3, doc_length=20, seed=1).corpus
    m = DocDPCooccurrence(max_false_words=None, n_topics=3, epsilon=1.0, delta=1e-5, n_words=20, seed=0).fit(c)
    rep = m.privacy_
    assert rep["unit"] == "document" and "add/remove" in rep["neighbouring_relation"]
    assert rep["epsilon"] <= 1.0 + 1e-9 and rep["delta"] == 1e-5
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.GaussianDpEvent(m.ranking_noise_std_)).compose(dp_event.GaussianDpEvent(m.noise_std_))
    assert rep["epsilon"] == pytest.approx(acc.get_epsilon(1e-5), rel=2e-2)
    assert "NOT covered" in rep["scope"] and "Koskela" in rep["theorem"]
    assert len(m.kept_words_) == 20 and np.allclose(m.components_.sum(1), 1)
    # with every word kept there is a single release and no ranking
    m1 = DocDPCooccurrence(max_false_words=None, n_topics=3, epsilon=1.0, n_words=50, seed=0).fit(c)
    assert m1.ranking_noise_std_ is None and m1.noise_std_ == pytest.approx(3.73, abs=0.02)
    m.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "model.json").read_text())["params"]["seed"] is None
    m2 = dptopic.load(tmp_path / "m")
    assert isinstance(m2, DocDPCooccurrence)
    np.testing.assert_array_equal(m2.components_, m.components_)
    assert m2.transform(c).shape == (c.n_docs, 3) and np.isfinite(m2.perplexity(c, n_iter=5, burn_in=2))


def test_bad_input():
    X = sp.csr_matrix(np.ones((3, 6)))
    with pytest.raises(DPTopicError):
        DocDPCooccurrence(epsilon=0).fit(X)
    with pytest.raises(DPTopicError, match="n_words"):
        DocDPCooccurrence(n_topics=3, n_words=2).fit(X)
    with pytest.raises(DPTopicError, match="seed"):
        DocDPCooccurrence(secure=True, seed=1).fit(X)


def test_unit_document_trains_the_cooccurrence_model(tmp_path, capsys):
    from dptopic.cli.main import main
    texts = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
             "war troops army peace treaty", "school education teachers students", "students teachers education college"]
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(texts * 20))
    out = tmp_path / "m"
    shown, filters = warnings.showwarning, list(warnings.filters)
    assert main(["train", "--corpus", str(p), "--unit", "document", "--epsilon", "1", "--delta", "1e-5",
                 "--topics", "3", "--out", str(out), "--quiet"]) == 0
    # the command's one-line warnings and its silencing of the model's own warning end with it
    assert warnings.showwarning is shown and warnings.filters == filters
    # 96 training documents at epsilon 1: far below any measured setting, so the figure is only an upper bound
    captured = capsys.readouterr()
    printed = " ".join(captured.out.split())
    warned = " ".join(captured.err.split())                  # the command's warning: on stderr
    assert "expect topics with less than" in warned and "fewer documents give less" in warned
    assert "DocDPCooccurrence: at epsilon" not in captured.err      # the model's own warning is not repeated
    # NPMI is read from held-out documents of the private corpus: said beside it, and not saved
    assert "NPMI and perplexity are computed on held-out documents of the private corpus: outside the guarantee" \
        in printed
    meta = json.loads((out / "model.json").read_text())
    assert meta["class"] == "DocDPCooccurrence" and meta["params"]["seed"] is None
    assert "metrics" not in meta or not meta["metrics"]
    assert meta["privacy"]["unit"] == "document" and meta["privacy"]["epsilon"] <= 1.0
    assert dptopic.for_unit("document", 1.0).__class__ is DocDPCooccurrence
    assert main(["train", "--corpus", str(p), "--algorithm", "docdp-cooc", "--topics", "3", "--out",
                 str(tmp_path / "m2"), "--quiet"]) == 2
    assert "needs --epsilon" in capsys.readouterr().err


def test_a_corpus_too_small_for_useful_topics_warns_from_the_api():
    from dptopic.advice import too_small_message
    # the utility table: 20 Newsgroups at epsilon 1 (11,287 documents) is useful, 500 documents are not
    assert too_small_message("document", 1.0, 11_287, 20) is None
    msg = too_small_message("document", 1.0, 500, 20)
    assert "500 documents" in msg and "useful by" in msg and "or fewer" not in msg
    X = lda_corpus(n_docs=300, n_topics=4, vocab_size=300, doc_length=30, seed=0).corpus
    with pytest.warns(dptopic.SmallCorpusWarning, match="300 documents expect topics"):
        DocDPCooccurrence(n_topics=20, epsilon=1.0, seed=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dptopic.SmallCorpusWarning)
        DocDPCooccurrence(n_topics=20, epsilon=500.0, seed=0).fit(X)   # epsilon x documents: useful by the table


def test_compiled_statistics_match_the_numpy_reference():
    from dptopic.kernels.docdp import tokens_to_bow
    from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow
    c = lda_corpus(n_docs=400, vocab_size=60, n_topics=3, doc_length=("poisson", 30), seed=3).corpus
    X = c.to_bow()
    bow = tokens_to_bow(c.doc_ptr, c.word_ids, 60)
    cols = np.arange(0, 60, 3)
    for n_jobs in (1, 3):
        np.testing.assert_allclose(normalised_cooccurrence_bow(bow, cols, 60, n_jobs),
                                   normalised_cooccurrence(X, cols), atol=1e-10)
        np.testing.assert_allclose(document_frequency_bow(bow, 60, n_jobs), document_frequency_statistic(X),
                                   atol=1e-10)
        np.testing.assert_allclose(document_frequency_bow(bow, 60, n_jobs, with_document=True),
                                   document_frequency_statistic(X, with_document=True), atol=1e-10)
        for doc in (False, True):
            np.testing.assert_allclose(document_frequency_bow(bow, 60, n_jobs, with_document=doc, with_counts=True),
                                       document_frequency_statistic(X, with_document=doc, with_counts=True),
                                       atol=1e-10)


def test_presence_and_count_statistic_by_hand():
    # one document, counts (2, 1, 0): presence (1, 1, 0) / sqrt(2) [with the document entry: (1, 1, 0, 1) / sqrt(3)],
    # counts (2, 1, 0) / sqrt(5); both parts scaled by 1/sqrt(2)
    X = sp.csr_matrix(np.array([[2.0, 1.0, 0.0]]))
    got = document_frequency_statistic(X, with_counts=True)
    want = np.array([1 / np.sqrt(2), 1 / np.sqrt(2), 0, 2 / np.sqrt(5), 1 / np.sqrt(5), 0]) / np.sqrt(2)
    np.testing.assert_allclose(got, want)
    assert np.linalg.norm(got) == pytest.approx(1.0)
    got = document_frequency_statistic(X, with_document=True, with_counts=True)
    want = np.array([1 / np.sqrt(3), 1 / np.sqrt(3), 0, 1 / np.sqrt(3), 2 / np.sqrt(5), 1 / np.sqrt(5), 0]) / np.sqrt(2)
    np.testing.assert_allclose(got, want)


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_streaming_from_shards_and_threads_give_the_same_model(tmp_path):
    from dptopic.corpus.shards import write_shards
    s = _planted()
    write_shards(s.corpus, tmp_path / "shards", 4)
    a = DocDPCooccurrence(n_topics=3, epsilon=50.0, n_words=20, seed=0).fit(s.corpus)
    b = DocDPCooccurrence(n_topics=3, epsilon=50.0, n_words=20, seed=0, n_jobs=2).fit(tmp_path / "shards")
    np.testing.assert_array_equal(a.kept_words_, b.kept_words_)
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-6)
    assert b.privacy_["epsilon"] == pytest.approx(a.privacy_["epsilon"])
    assert "the vocabulary" in b.privacy_["scope"]      # shards built their own vocabulary: not covered
    # mini-batches: a list of count matrices, or a function returning fresh ones, give the same model
    X = s.corpus.to_bow()
    parts = [X[:250], X[250:]]
    c = DocDPCooccurrence(n_topics=3, epsilon=50.0, n_words=20, seed=0).fit(parts, vocabulary=s.corpus.vocabulary)
    d = DocDPCooccurrence(n_topics=3, epsilon=50.0, n_words=20, seed=0).fit(lambda: iter(parts),
                                                                           vocabulary=s.corpus.vocabulary)
    np.testing.assert_allclose(c.components_, a.components_, atol=1e-6)
    np.testing.assert_array_equal(c.components_, d.components_)
    with pytest.raises(DPTopicError, match="iterator can be read only once"):
        DocDPCooccurrence(n_topics=3).fit(iter(parts))


def test_document_entry_estimates_the_share_of_documents_holding_a_word():
    # every document has 4 distinct words; word 0 is in all of them, word 1 in a quarter
    X = np.zeros((400, 8))
    X[:, 0] = 1
    X[:100, 1] = 1
    X[100:, 2] = 1
    X[:, 3] = X[:, 4] = 1
    X[100:, 5] = 0
    stat = document_frequency_statistic(sp.csr_matrix(X), with_document=True)
    assert stat[0] / stat[-1] == pytest.approx(1.0) and stat[1] / stat[-1] == pytest.approx(0.25)
    # the exact per-document vector: presence and a last 1, divided by sqrt(m + 1)
    np.testing.assert_allclose(document_frequency_statistic(sp.csr_matrix(X[:1]), with_document=True),
                               np.r_[X[0], 1.0] / np.sqrt(5.0))


def _with_stop_words(seed=4, n_docs=600):
    """A planted corpus plus two words that every document holds (like "writes" in posts)."""
    s = lda_corpus(n_docs=n_docs, vocab_size=40, n_topics=3, doc_length=50, alpha=0.1, beta=0.05, seed=seed)
    X = s.corpus.to_bow().toarray()
    X = np.hstack([X, np.full((X.shape[0], 2), 3.0)])
    return X, s.phi


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_background_words_go_to_background_topics():
    X, phi = _with_stop_words()
    m = DocDPCooccurrence(n_topics=5, epsilon=400.0, n_words=40, background_share=0.9, seed=0).fit(sp.csr_matrix(X))
    np.testing.assert_array_equal(m.background_words_, [40, 41])
    assert m.n_background_topics_ == 2 and not np.isin([40, 41], m.kept_words_).any()
    assert np.allclose(m.components_.sum(1), 1)
    # the three factorised topics are the planted ones, the stop words carry (almost) no mass in them
    assert topic_recovery(m.components_[:3, :40], phi) > 0.9
    assert m.components_[:3, 40:].max() < 1e-6
    # the first background topic is the stop words, the second every other word by frequency
    assert set(np.argsort(-m.components_[3])[:2]) == {40, 41} and m.components_[3, 40:].sum() > 0.99
    assert m.components_[4, 40:].max() < 1e-6
    presence = document_frequency_statistic(sp.csr_matrix(X), with_document=True)[:40]     # what the noise hides
    np.testing.assert_allclose(m.components_[4, :40], presence / presence.sum(), atol=3e-3)
    rep = m.privacy_
    assert rep["parameters"]["background_share"] == 0.9 and rep["parameters"]["background_topics"] == 2
    assert rep["epsilon"] <= 400.0 + 1e-6
    # one background topic on request; without the option nothing is set aside
    m1 = DocDPCooccurrence(n_topics=5, epsilon=400.0, n_words=40, background_share=0.9, n_background=1,
                           seed=0).fit(sp.csr_matrix(X))
    assert m1.n_background_topics_ == 1
    m0 = DocDPCooccurrence(n_topics=5, epsilon=400.0, n_words=42, seed=0).fit(sp.csr_matrix(X))
    assert m0.n_background_topics_ == 0 and len(m0.background_words_) == 0 and m0.ranking_noise_std_ is None
    # a share no word reaches: no background topic, every topic factorised
    m2 = DocDPCooccurrence(n_topics=3, epsilon=400.0, n_words=40, background_share=0.9, seed=0).fit(
        sp.csr_matrix(X[:, :40]))
    assert m2.n_background_topics_ == 0 and len(m2.background_words_) == 0


def _fix_releases(monkeypatch, ranking, cooc):
    """Every fit then gets these two releases (the ledger still records the real events)."""
    real = docdp_cooc.gaussian_mechanism

    def fixed(values, sigma, sens, rng_, secure=False, label=""):
        _, event = real(values, sigma, sens, np.random.default_rng(0), label=label)
        assert np.shape(values) == np.shape(ranking) or np.shape(values) == cooc.shape
        return (ranking if np.ndim(values) == 1 else cooc), event

    monkeypatch.setattr(docdp_cooc, "gaussian_mechanism", fixed)


def test_background_words_read_only_the_releases(monkeypatch):
    """Which words are background words, and the topics, are post-processing of the two releases."""
    rng = np.random.default_rng(2)
    a, _ = _with_stop_words(seed=1, n_docs=90)
    b, _ = _with_stop_words(seed=2, n_docs=40)
    ranking = np.r_[rng.uniform(0, 10, 40), 50.0, 45.0, 60.0]     # 42 words, then the document count
    cooc = np.abs(rng.normal(size=(12, 12))) * 10
    _fix_releases(monkeypatch, ranking, cooc)
    kw = dict(n_topics=4, n_words=12, background_share=0.5, seed=0)
    ma = DocDPCooccurrence(max_false_words=None, **kw).fit(sp.csr_matrix(a))
    mb = DocDPCooccurrence(max_false_words=None, **kw).fit(sp.csr_matrix(b))
    np.testing.assert_array_equal(ma.components_, mb.components_)
    np.testing.assert_array_equal(ma.background_words_, [40, 41])     # 50/60 and 45/60 of the documents


def test_background_bad_input():
    X = sp.csr_matrix(np.ones((3, 6)))
    with pytest.raises(DPTopicError, match="background"):
        DocDPCooccurrence(n_topics=2, n_words=4, background_share=0.5, n_background=2).fit(X)
    with pytest.raises(DPTopicError, match="background_share"):
        DocDPCooccurrence(n_topics=2, background_share=1.5).fit(X)
    with pytest.raises(DPTopicError, match="n_background"):
        DocDPCooccurrence(n_topics=3, background_share=0.5, n_background=3).fit(X)


def test_unit_document_streams_a_shard_folder_and_takes_background_share(tmp_path, capsys):
    from dptopic.cli.main import main
    texts = ["budget deficit tax revenue spending said", "tax revenue budget treasury surplus said",
             "army navy war defense troops said", "war troops army peace treaty said",
             "school education teachers students said", "students teachers education college said"]
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(texts * 30))
    shards = tmp_path / "shards"
    assert main(["corpus", "prepare", "--corpus", str(p), "--shards", "2", "--out", str(shards)]) in (0, None)
    out = tmp_path / "m"
    assert main(["train", "--corpus", str(shards), "--unit", "document", "--epsilon", "50", "--topics", "4",
                 "--background-share", "0.9", "--out", str(out), "--quiet"]) in (0, None)
    text = capsys.readouterr().out
    assert "2 shards" in text and "model written" in text
    meta = json.loads((out / "model.json").read_text())
    assert meta["class"] == "DocDPCooccurrence" and meta["params"]["background_share"] == 0.9
    assert meta["privacy"]["parameters"]["background_topics"] == 2       # "said" is in every document
    m = dptopic.load(out)
    assert m.topic_words(1)[-2] == ["said"]
    # the shard folder keeps its vocabulary, and the flag belongs to docdp-cooc alone
    assert main(["train", "--corpus", str(shards), "--unit", "document", "--epsilon", "1", "--topics", "3",
                 "--vocabulary", str(p), "--out", str(tmp_path / "m2"), "--quiet"]) == 2
    assert "--vocabulary has no effect on a shard folder" in capsys.readouterr().err
    assert main(["train", "--corpus", str(p), "--algorithm", "lda", "--background-share", "0.2", "--topics", "3",
                 "--out", str(tmp_path / "m3"), "--quiet"]) == 2
    assert "--background-share has no effect" in capsys.readouterr().err


def test_auto_n_words_rule():
    sigma = 3.9
    assert docdp_cooc.auto_n_words(0.0, sigma) == 200 and docdp_cooc.auto_n_words(-50.0, sigma) == 200
    assert docdp_cooc.auto_n_words(4 * sigma * 150, sigma) == 200
    assert docdp_cooc.auto_n_words(4 * sigma * 237, sigma) == 237
    assert docdp_cooc.auto_n_words(1e9, sigma) == 400
    # the same mass with half the noise keeps twice the words
    assert docdp_cooc.auto_n_words(4 * 3.9 * 200, 1.95) == 2 * docdp_cooc.auto_n_words(4 * 3.9 * 200, 3.9) == 400


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_auto_n_words_reads_only_the_releases(monkeypatch):
    """n_words="auto" takes the number of words from the first release's document entry (post-processing)."""
    Vw, eps, delta = 300, 1.0, 1e-5
    _, sigma = calibrate_gaussian_pair(eps, delta, 3.0)
    rng = np.random.default_rng(5)
    ranking = np.r_[rng.uniform(0, 10, Vw), 4 * sigma * 210]     # 300 words, then the document entry
    real = docdp_cooc.gaussian_mechanism
    shapes = []

    def fixed(values, sigma_, sens, rng_, secure=False, label=""):
        _, event = real(values, sigma_, sens, np.random.default_rng(0), label=label)
        shapes.append(np.shape(values))
        if np.ndim(values) == 1:
            return ranking, event
        return np.abs(np.random.default_rng(1).normal(size=np.shape(values))) * 10, event

    monkeypatch.setattr(docdp_cooc, "gaussian_mechanism", fixed)
    a = sp.csr_matrix(np.random.default_rng(2).poisson(0.3, size=(80, Vw)))
    b = sp.csr_matrix(np.random.default_rng(3).poisson(0.1, size=(30, Vw)))
    ma = DocDPCooccurrence(max_false_words=None, n_topics=4, epsilon=eps, delta=delta, n_words="auto", seed=0,
                           recovery="nmf").fit(a)
    mb = DocDPCooccurrence(max_false_words=None, n_topics=4, epsilon=eps, delta=delta, n_words="auto", seed=0,
                           recovery="nmf").fit(b)
    assert shapes[0] == (Vw + 1,) and shapes[1] == (210, 210)       # the document entry was released, 210 words kept
    assert len(ma.kept_words_) == 210
    np.testing.assert_array_equal(ma.kept_words_, np.sort(np.argsort(-ranking[:Vw], kind="stable")[:210]))
    np.testing.assert_array_equal(ma.components_, mb.components_)
    rep = ma.privacy_
    assert rep["parameters"]["n_words"] == 210 and rep["parameters"]["n_words_rule"] == "auto"
    assert rep["epsilon"] <= eps + 1e-6
    with pytest.raises(DPTopicError, match="n_words"):
        DocDPCooccurrence(max_false_words=None, n_topics=4, n_words="many").fit(a)


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_default_background_share_needs_ten_topics():
    assert docdp_cooc.resolve_background_share("auto", 10, "nmf") == 0.25
    assert docdp_cooc.resolve_background_share("auto", 9) is None
    assert docdp_cooc.resolve_background_share(0.4, 3) == 0.4 and docdp_cooc.resolve_background_share(None, 20) is None
    X, _ = _with_stop_words()
    few = DocDPCooccurrence(n_topics=3, epsilon=400.0, seed=0).fit(sp.csr_matrix(X))     # the defaults
    assert few.background_share_ is None and few.n_background_topics_ == 0
    many = DocDPCooccurrence(n_topics=10, epsilon=400.0, seed=0, recovery="nmf").fit(sp.csr_matrix(X))
    assert many.background_share_ == 0.25 and many.privacy_["parameters"]["background_share"] == 0.25
    assert {40, 41} <= set(many.background_words_.tolist())


def test_cli_turns_the_defaults_off_and_refuses_bad_values(tmp_path, capsys):
    from dptopic.cli.main import main
    texts = ["budget deficit tax revenue spending said", "army navy war defense troops said",
             "school education teachers students said"]
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(texts * 40))
    out = tmp_path / "m"
    assert main(["train", "--corpus", str(p), "--unit", "document", "--epsilon", "50", "--topics", "12",
                 "--background-share", "off", "--n-words", "12", "--out", str(out), "--quiet"]) in (0, None)
    meta = json.loads((out / "model.json").read_text())
    assert meta["params"]["background_share"] is None and meta["params"]["n_words"] == 12
    assert meta["privacy"]["parameters"]["background_topics"] == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["train", "--corpus", str(p), "--unit", "document", "--epsilon", "1", "--n-words", "1",
              "--out", str(tmp_path / "m2")])
    assert e.value.code == 2 and "auto or an integer >= 2" in capsys.readouterr().err
    # --word-choice reaches the model, with its own ranking noise; another trainer refuses it in one line
    out3 = tmp_path / "m3"
    assert main(["train", "--corpus", str(p), "--unit", "document", "--epsilon", "50", "--topics", "12",
                 "--word-choice", "repetition", "--recovery", "nmf", "--out", str(out3), "--quiet"]) in (0, None)
    meta = json.loads((out3 / "model.json").read_text())
    assert meta["params"]["word_choice"] == "repetition"
    assert meta["privacy"]["parameters"]["word_choice"] == "repetition"
    assert "word-count" in meta["privacy"]["events"][0]["label"]
    capsys.readouterr()
    assert main(["train", "--corpus", str(p), "--algorithm", "docdp", "--epsilon", "1", "--word-choice",
                 "repetition", "--out", str(tmp_path / "m4")]) not in (0, None)
    err = capsys.readouterr()
    assert "--word-choice" in err.out + err.err and "Traceback" not in err.out + err.err


def _with_one_off_words(seed=5, n_docs=600, n_once=30):
    """A planted corpus (its words repeat inside the documents that use them) plus ``n_once`` words each held once by
    about half of the documents: more frequent than the planted words, never repeated."""
    s = lda_corpus(n_docs=n_docs, vocab_size=40, n_topics=3, doc_length=60, alpha=0.1, beta=0.05, seed=seed)
    X = s.corpus.to_bow().toarray()
    once = (np.random.default_rng(seed).random((n_docs, n_once)) < 0.5).astype(float)
    return np.hstack([X, once]), s.phi


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_repetition_keeps_the_words_that_repeat_and_sets_the_others_aside():
    X, phi = _with_one_off_words()
    kw = dict(n_topics=5, epsilon=400.0, n_words=20, background_share=0.9, seed=0)
    freq = DocDPCooccurrence(**kw).fit(sp.csr_matrix(X))
    rep = DocDPCooccurrence(word_choice="repetition", **kw).fit(sp.csr_matrix(X))
    # by frequency the one-off words (columns 40..69) crowd out the planted ones; by repetition the planted ones stay
    assert (freq.kept_words_ >= 40).sum() >= 10
    assert (rep.kept_words_ < 40).all()
    # the frequent words passed over are background words, so they lead no factorised topic
    passed = np.setdiff1d(np.arange(40, 70), rep.kept_words_)
    assert np.isin(passed, rep.background_words_).all() and rep.n_background_topics_ == 2
    assert rep.components_[:3, 40:].max() < 1e-6
    assert topic_recovery(rep.components_[:3, :40], phi) > topic_recovery(freq.components_[:3, :40], phi)
    # the first release is one Gaussian release of a statistic of L2 sensitivity 1: the guarantee is the same
    assert rep.privacy_["epsilon"] <= 400.0 + 1e-6
    assert rep.privacy_["parameters"]["word_choice"] == "repetition"
    labels = [e["label"] for e in rep.privacy_["events"]]
    assert len(labels) == 2 and "word-count" in labels[0] and "word-count" not in freq.privacy_["events"][0]["label"]


def test_repetition_reads_only_the_releases(monkeypatch):
    """The word choice by repetition, the background words and the topics are post-processing of the two releases."""
    rng = np.random.default_rng(3)
    a, _ = _with_one_off_words(seed=1, n_docs=90, n_once=10)
    b, _ = _with_one_off_words(seed=2, n_docs=40, n_once=10)
    V = a.shape[1]
    ranking = np.r_[rng.uniform(0, 10, V), 60.0, rng.uniform(0, 12, V)] / np.sqrt(2)
    cooc = np.abs(rng.normal(size=(12, 12))) * 10
    _fix_releases(monkeypatch, ranking, cooc)
    kw = dict(n_topics=4, n_words=12, background_share=0.5, word_choice="repetition", seed=0)
    ma = DocDPCooccurrence(max_false_words=None, **kw).fit(sp.csr_matrix(a))
    mb = DocDPCooccurrence(max_false_words=None, **kw).fit(sp.csr_matrix(b))
    np.testing.assert_array_equal(ma.components_, mb.components_)
    np.testing.assert_array_equal(ma.kept_words_, mb.kept_words_)
    # the rule by hand: the 36 most frequent words, then the 12 of largest (count part - presence part)
    presence, counts = ranking[:V] * np.sqrt(2), ranking[V + 1:] * np.sqrt(2)
    order = np.argsort(-presence, kind="stable")
    order = order[presence[order] <= 0.5 * 60.0]
    pool = order[:36]
    want = np.sort(pool[np.argsort(-(counts[pool] - presence[pool]), kind="stable")[:12]])
    np.testing.assert_array_equal(ma.kept_words_, want)


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_ranking_noise_auto_follows_the_word_choice():
    assert docdp_cooc.resolve_ranking_noise("auto", "frequency") == 3.0
    assert docdp_cooc.resolve_ranking_noise("auto", "repetition") == 2.0
    assert docdp_cooc.resolve_ranking_noise(1.5, "repetition") == 1.5
    X = sp.csr_matrix(_with_one_off_words(n_docs=200, n_once=10)[0])
    f = DocDPCooccurrence(n_topics=4, epsilon=1.0, n_words=12, seed=0).fit(X)
    r = DocDPCooccurrence(n_topics=4, epsilon=1.0, n_words=12, word_choice="repetition", seed=0).fit(X)
    assert f.ranking_noise_std_ / f.noise_std_ == pytest.approx(3.0, rel=1e-6)
    assert r.ranking_noise_std_ / r.noise_std_ == pytest.approx(2.0, rel=1e-6)
    # both runs spend the same (epsilon, delta): the first release's extra half costs nothing more
    assert f.privacy_["epsilon"] <= 1.0 + 1e-9 and r.privacy_["epsilon"] <= 1.0 + 1e-9
    # with every word kept there is no first release and no choice: the report says so
    small = DocDPCooccurrence(n_topics=4, epsilon=1.0, n_words=100, background_share=None, word_choice="repetition",
                              seed=0).fit(X)
    assert small.ranking_noise_std_ is None and small.privacy_["parameters"]["word_choice"] is None


def test_repetition_with_nothing_passed_over_keeps_topics_finite():
    # every word is kept, so no frequent word is passed over and no word reaches the share: no background topics
    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, (300, 12)).astype(float))
    m = DocDPCooccurrence(n_topics=4, epsilon=50.0, n_words=12, background_share=0.99, word_choice="repetition",
                          seed=0).fit(X)
    assert len(m.background_words_) == 0 and m.n_background_topics_ == 0
    assert np.isfinite(m.components_).all() and np.allclose(m.components_.sum(1), 1)


def test_word_choice_bad_input():
    with pytest.raises(DPTopicError, match="word_choice"):
        DocDPCooccurrence(n_topics=2, word_choice="burstiness").fit(sp.csr_matrix(np.ones((3, 6))))


def test_rank_deficient_release_gives_finite_deterministic_topics():
    """A thresholded release of rank below K made scikit-learn's NNDSVDa start divide by zero norms: every topic NaN,
    with no error, and the model saved and loaded them (a walk-through found it in 3 of 60 fits on a 4 x 4 matrix)."""
    import warnings

    from dptopic.recovery import topics_from_cooccurrence

    Q = np.zeros((4, 4))
    Q[2, 2] = 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        T = topics_from_cooccurrence(Q, 2, noise_std=1.0, threshold=1.0)
    assert np.all(np.isfinite(T)) and np.allclose(T.sum(axis=1), 1.0) and np.all(T.argmax(axis=1) == 2)
    assert np.array_equal(T, topics_from_cooccurrence(Q, 2, noise_std=1.0, threshold=1.0))
    assert np.allclose(topics_from_cooccurrence(np.zeros((4, 4)), 2), 0.25)
