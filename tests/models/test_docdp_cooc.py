"""DocDPCooccurrence's control of false words: a word chosen by a noisy count from a long public list is kept only if
its count clears the threshold that keeps the expected number of kept words with no occurrence at most
``max_false_words``."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import norm

import dptopic
from dptopic.accounting.card import privacy_card
from dptopic.accounting.gaussian import calibrate_gaussian_pair
from dptopic.corpus import Corpus, lda_corpus
from dptopic.errors import DPTopicError, SmallCorpusWarning
from dptopic.evaluation.topic_matching import topic_recovery
from dptopic.models import DocDPCooccurrence, docdp_cooc
from dptopic.moments import document_frequency_statistic
from helpers import quiet_fit

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

LIST = ["".join("abcdefghijklmnopqrstuvwxyz"[(i // 26 ** p) % 26] for p in (2, 1, 0)) + "x" for i in range(3000)]
# a long public list of made-up words: only its first 40 occur
USED = 40


def _corpus(n_docs=400, seed=0):
    rng = np.random.default_rng(seed)
    texts = [" ".join(LIST[j] for j in rng.integers(0, USED, size=15)) for _ in range(n_docs)]
    return Corpus.from_texts(texts, vocabulary=LIST)


def _false_words(model):
    return int(np.sum(model.kept_words_ >= USED))


def test_kept_words_that_never_occur_are_at_most_the_bound_on_average():
    """Over 20 runs the mean number of kept words that occur in no document stays within the bound (0.5) plus three
    standard errors of a count of that mean (Poisson), where keeping the most frequent by noisy count keeps many."""
    corpus = _corpus()
    runs = [_false_words(DocDPCooccurrence(n_topics=4, epsilon=1.0, n_words=60, background_share=None,
                                           seed=s).fit(corpus, vocabulary=LIST)) for s in range(20)]
    assert np.mean(runs) <= 0.5 + 3 * np.sqrt(0.5 / 20), runs
    without = _false_words(DocDPCooccurrence(n_topics=4, epsilon=1.0, n_words=60, background_share=None,
                                             max_false_words=None, seed=0).fit(corpus, vocabulary=LIST))
    assert without >= 20        # 60 kept, only 40 words occur: the noise chose the rest


def test_the_threshold_is_the_noise_quantile_set_by_the_lists_length():
    m = DocDPCooccurrence(n_topics=4, epsilon=1.0, n_words=60, background_share=None, max_false_words=0.25,
                          seed=1).fit(_corpus(), vocabulary=LIST)
    assert m.word_threshold_ == pytest.approx(m.ranking_noise_std_ * norm.isf(0.25 / len(LIST)))
    assert m.expected_false_words_ == pytest.approx(0.25)
    params = m.privacy_["parameters"]
    assert params["word_threshold"] == pytest.approx(m.word_threshold_)
    card = privacy_card(m.privacy_, "DocDPCooccurrence")
    assert card["word_selection"]["expected_false_words_at_most"] == pytest.approx(0.25)
    assert "occur in no document" in card["word_selection"]["note"]
    from dptopic.reporting.html import render_report

    page = render_report(title="t", trainer="DocDPCooccurrence", card=card, topics=[[("w", 1.0)]] * 4)
    assert "kept words" in page and "occur in no document" in page


def test_too_few_words_above_the_noise_are_made_up_with_a_warning_that_counts_them():
    corpus = _corpus(n_docs=30)         # far too few documents for epsilon 0.5: nothing stands above the noise
    with pytest.warns(SmallCorpusWarning, match=r"only \d+ word\(s\) of the 3,000 stand above the noise"):
        m = DocDPCooccurrence(n_topics=4, epsilon=0.5, n_words=60, background_share=None,
                              seed=2).fit(corpus, vocabulary=LIST)
    assert len(m.kept_words_) == 4
    # the card does not claim that every kept word cleared the threshold: it counts those below it
    n_below = m.privacy_["parameters"]["words_below_threshold"]
    assert 0 < n_below <= len(m.kept_words_)
    selection = privacy_card(m.privacy_, "DocDPCooccurrence")["word_selection"]
    assert selection["kept_below_threshold"] == n_below
    assert f"so {n_below} kept word(s) stand below it" in selection["note"]
    assert "holds only for the words that cleared it" in selection["note"]
    assert "was kept only if" not in selection["note"]


def test_the_secure_mode_text_says_that_documents_per_user_draws_each_persons_documents_from_pcg64():
    from dptopic.models.registry import trainer

    text = trainer("docdp-cooc").secure
    assert "documents_per_user" in text and "PCG64" in text
    assert "DocDPCooccurrence draws nothing else at random" not in text


def test_a_vocabulary_kept_whole_chooses_no_word_and_states_no_threshold():
    words = LIST[:USED]
    m = DocDPCooccurrence(n_topics=3, epsilon=1.0, n_words=USED, background_share=None,
                          seed=3).fit(Corpus.from_texts([" ".join(words[1:4])] * 50, vocabulary=words),
                                      vocabulary=words)
    assert m.word_threshold_ is None and "word_selection" not in privacy_card(m.privacy_, "DocDPCooccurrence")


TEXTS = (["the budget deficit fell by 30 percent in 1999 and the fiscal year closed with 000 jobs added"] * 3
         + ["our army and navy defend the nation at sea and on land with 10 new ships"] * 3
         + ["schools teachers and students need education funding for every child"] * 3) * 8


def test_a_data_chosen_vocabulary_makes_the_report_itself_say_partial():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0).fit(TEXTS)
        public = dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0).fit(TEXTS, vocabulary=data.vocabulary_.words)
    assert data.privacy_["guarantee"] == "partial" and public.privacy_["guarantee"] == "full"


V = 10


def _planted(seed=4):
    return lda_corpus(n_docs=600, vocab_size=40, n_topics=3, doc_length=50, alpha=0.1, beta=0.05, seed=seed)


def _with_stop_words(seed=4, n_docs=600):
    """A planted corpus plus two words that every document holds (like "writes" in posts)."""
    s = lda_corpus(n_docs=n_docs, vocab_size=40, n_topics=3, doc_length=50, alpha=0.1, beta=0.05, seed=seed)
    X = s.corpus.to_bow().toarray()
    X = np.hstack([X, np.full((X.shape[0], 2), 3.0)])
    return X, s.phi


def _fix_releases(monkeypatch, ranking, cooc):
    """Every fit then gets these two releases (the ledger still records the real events)."""
    real = docdp_cooc.gaussian_mechanism

    def fixed(values, sigma, sens, rng_, secure=False, label=""):
        _, event = real(values, sigma, sens, np.random.default_rng(0), label=label)
        assert np.shape(values) == np.shape(ranking) or np.shape(values) == cooc.shape
        return (ranking if np.ndim(values) == 1 else cooc), event

    monkeypatch.setattr(docdp_cooc, "gaussian_mechanism", fixed)


def _with_one_off_words(seed=5, n_docs=600, n_once=30):
    """A planted corpus (its words repeat inside the documents that use them) plus ``n_once`` words each held once by
    about half of the documents: more frequent than the planted words, never repeated."""
    s = lda_corpus(n_docs=n_docs, vocab_size=40, n_topics=3, doc_length=60, alpha=0.1, beta=0.05, seed=seed)
    X = s.corpus.to_bow().toarray()
    once = (np.random.default_rng(seed).random((n_docs, n_once)) < 0.5).astype(float)
    return np.hstack([X, once]), s.phi


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


def test_the_words_shown_are_ranked_by_relevance_read_from_the_topics_alone(monkeypatch, tmp_path):
    """The display order is post-processing: two corpora given the same releases show the same words, which are the
    topics' relevance order (Sievert & Shirley 2014, lambda 0.4, p(w) the topics' mean) and nothing else; it survives a
    save and load, and ``ranking="probability"`` gives the earlier order."""
    from dptopic.evaluation.topic_quality import relevance

    rng = np.random.default_rng(1)
    a = lda_corpus(n_docs=80, vocab_size=30, n_topics=2, doc_length=20, seed=5).corpus
    b = lda_corpus(n_docs=50, vocab_size=30, n_topics=2, doc_length=9, seed=6).corpus
    _fix_releases(monkeypatch, rng.normal(size=30), np.abs(rng.normal(size=(12, 12))) * 10)
    ma = DocDPCooccurrence(max_false_words=None, n_topics=2, n_words=12, seed=0).fit(a)
    mb = DocDPCooccurrence(max_false_words=None, n_topics=2, n_words=12, seed=0).fit(b)
    assert ma.word_ranking == {"by": "relevance", "lambda": 0.4}
    shown = ma.topic_words(8)
    assert shown == mb.topic_words(8)
    order = np.argsort(-relevance(ma.components_, 0.4), axis=1, kind="stable")[:, :8]
    assert shown == [[ma.vocabulary_[i] for i in row] for row in order]
    by_probability = np.argsort(-ma.components_, axis=1, kind="stable")[:, :8]
    assert ma.topic_words(8, ranking="probability") == [[ma.vocabulary_[i] for i in row] for row in by_probability]
    assert shown != ma.topic_words(8, ranking="probability")     # the two orders differ on these topics
    ma.save(tmp_path / "m")
    assert dptopic.load(tmp_path / "m").topic_words(8) == shown


def test_bad_input():
    X = sp.csr_matrix(np.ones((3, 6)))
    with pytest.raises(DPTopicError):
        DocDPCooccurrence(epsilon=0).fit(X)
    with pytest.raises(DPTopicError, match="n_words"):
        DocDPCooccurrence(n_topics=3, n_words=2).fit(X)
    with pytest.raises(DPTopicError, match="seed"):
        DocDPCooccurrence(secure=True, seed=1).fit(X)


def test_a_corpus_too_small_for_useful_topics_warns_from_the_api():
    from dptopic.advice import too_small_message
    # the utility table: 20 Newsgroups at epsilon 1 (11,287 documents) is useful, 500 documents are not
    assert too_small_message("document", 1.0, 11_287, 20) is None
    msg = too_small_message("document", 1.0, 500, 20)
    # the documents needed are more than the 500 given (the forecast's own verdict), never "or fewer"
    assert "500 documents" in msg and "or fewer" not in msg
    assert "become useful from" in msg or "need more than 500 and at most" in msg
    X = lda_corpus(n_docs=300, n_topics=4, vocab_size=300, doc_length=30, seed=0).corpus
    with pytest.warns(dptopic.SmallCorpusWarning, match="300 documents expect topics"):
        DocDPCooccurrence(n_topics=20, epsilon=1.0, seed=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dptopic.SmallCorpusWarning)
        DocDPCooccurrence(n_topics=20, epsilon=500.0, seed=0).fit(X)   # epsilon x documents: useful by the table


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


def test_computing_on_private_training_documents_is_labelled_outside_the_guarantee():
    """transform/perplexity of a private model on documents that trained a private model say that the result reads
    their private words; held-out documents and non-private models are left alone."""
    import warnings

    import numpy as np

    import dptopic

    rng = np.random.default_rng(11)
    train, held_out = rng.integers(0, 4, (60, 12)), rng.integers(0, 4, (20, 12)) + 4
    m = dptopic.DocDPCooccurrence(n_topics=2, epsilon=5.0).fit(train)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.transform(held_out)
        dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(train).transform(train)
    assert not [x for x in w if "outside the model's guarantee" in str(x.message)]
    for call in (lambda: m.transform(train[:5]), lambda: m.perplexity(train)):
        with pytest.warns(UserWarning, match="trained a private model in this process.*outside the model's guarantee"):
            call()


def test_training_documents_warning_counts_them_and_names_training_theta_only_where_released():
    import warnings

    import numpy as np

    import dptopic

    rng = np.random.default_rng(12)
    train = rng.integers(0, 4, (40, 10))
    held_out = np.vstack([rng.integers(0, 4, (7, 10)) + 4, train[:3]])   # 3 training documents among 10
    m = dptopic.DocDPCooccurrence(n_topics=2, epsilon=5.0).fit(train)
    with pytest.warns(UserWarning, match=r"3 of these 10 documents trained a private model") as rec:
        m.transform(held_out)
    assert not any("training_theta_" in str(w.message) for w in rec)   # DocDPCooccurrence does not release it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = dptopic.HDPLDA(n_topics=2, n_iter=3, epsilon_laplace=50.0, epsilon_inherent=50.0).fit(train)
    with pytest.warns(UserWarning, match=r"10 of these 10 documents.*training_theta_ \(released at fit time\)"):
        h.transform(train[:10])


@pytest.mark.parametrize("word_choice, background_share, counted, counts", [
    ("frequency", 0.25, True, False), ("repetition", 0.25, True, True), ("frequency", None, False, False),
    ("repetition", None, False, True)])
def test_the_cooccurrence_theorem_names_the_ranking_statistic_released(word_choice, background_share, counted,
                                                                       counts):
    import warnings

    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import DocDPCooccurrence

    c, *_ = lda_corpus(n_docs=200, vocab_size=300, n_topics=3, doc_length=30, alpha=0.2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DocDPCooccurrence(n_topics=12, epsilon=2.0, delta=1e-5, n_words=50, word_choice=word_choice,
                              background_share=background_share, verbose=0).fit(c, vocabulary=c.vocabulary.words)
    theorem = m.privacy_["theorem"]
    assert m.privacy_["parameters"]["word_choice"] == word_choice
    assert ("last entry 1 for the document" in theorem) == counted
    assert ("and the word counts" in theorem) == counts and "repetition" not in theorem


@pytest.mark.parametrize("word_choice", ["frequency", "repetition"])
def test_the_cooccurrence_trainers_two_releases_are_checked_against_its_parameters(word_choice):
    """`privacy verify` compared only DocDPCooccurrence's budget, not its events: a report whose ranking noise was
    edited (figures recomputed from the edit) passed. Both releases' noise now follows from epsilon, delta and
    ranking_noise, and whether the ranking came first from the report's public settings."""
    import json
    import warnings

    from dptopic.accounting.verify import recompute_report, verify_report
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import DocDPCooccurrence
    from dptopic.models.base import planned_spend_check

    c, *_ = lda_corpus(n_docs=200, vocab_size=300, n_topics=3, doc_length=30, alpha=0.2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DocDPCooccurrence(n_topics=4, epsilon=1.0, delta=1e-5, n_words=50, word_choice=word_choice,
                              verbose=0).fit(c, vocabulary=c.vocabulary.words)
    rep = m.privacy_
    assert len(rep["events"]) == 2 and rep["parameters"]["ranking_noise_multiplier"] is not None
    ok = planned_spend_check(verify_report(rep), m, rep)
    assert ok.status == "verified" and "match what" in ok.detail
    for i in (0, 1):
        edited = json.loads(json.dumps(rep))
        edited["events"][i]["noise_multiplier"] *= 1.5 if i == 0 else 0.9
        new = recompute_report(edited)
        edited.update({k: v for k, v in new.items() if k in edited or k in ("epsilon", "delta")})
        assert verify_report(edited).status == "verified"          # consistent with itself
        v = planned_spend_check(verify_report(edited), m, edited)
        assert v.status == "failed" and "parameters plan" in v.detail


# ------------------------------------------------------------------ DP set union and the word list
def test_privacy_verify_of_a_report_whose_parameters_are_not_an_object_is_one_line(tmp_path):
    import json
    import warnings

    from dptopic.accounting.verify import verify_report
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import DocDPCooccurrence
    from dptopic.models.base import planned_spend_check

    c, *_ = lda_corpus(n_docs=100, vocab_size=50, n_topics=3, doc_length=20, alpha=0.2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DocDPCooccurrence(n_topics=3, epsilon=1.0, delta=1e-5, verbose=0).fit(c, vocabulary=c.vocabulary.words)
    rep = json.loads(json.dumps(m.privacy_))
    rep["parameters"] = ["edited"]
    v = planned_spend_check(verify_report(rep), m, rep)       # no AttributeError: checked against the budget only
    assert v.status in ("verified", "looser", "failed")


@pytest.fixture(scope="module")
def texts():
    c = lda_corpus(n_docs=120, vocab_size=30, n_topics=2, doc_length=15, seed=4).corpus
    return [" ".join(c.vocabulary.words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


def test_cross_validation_on_a_public_vocabularys_counts_fits_its_folds_on_those_words(texts):
    from sklearn.model_selection import cross_validate

    public = sorted(set(" ".join(texts).split()))
    X = dptopic.CountVectorizer(vocabulary=public).fit_transform(texts)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = cross_validate(dptopic.DocDPCooccurrence(n_topics=2, epsilon=2.0, verbose=0), X, cv=2,
                             return_estimator=True)
    assert not [w for w in seen if "feature names" in str(w.message)]
    for m in out["estimator"]:      # each fold's model: the public words, supplied (not "w0, w1, ..." from data)
        assert list(m.vocabulary_.words) == public and m.privacy_["vocabulary_source"] == "supplied"


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_privacy_card_notes_a_large_delta():
    from dptopic.accounting.card import privacy_card

    X = np.random.default_rng(0).poisson(1, (40, 8))
    words = [f"w{i}" for i in range(8)]
    big = dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, delta=0.5).fit(X, vocabulary=words)
    card = privacy_card(big.privacy_, "DocDPCooccurrence")
    assert "delta = 0.5 is large" in card["strength_note"] and "1/(number of documents)" in card["strength_note"]
    small = dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0).fit(X, vocabulary=words)
    assert "strength_note" not in privacy_card(small.privacy_, "DocDPCooccurrence")


@pytest.mark.parametrize("vocab_size, releases", [(60, 1), (600, 2)])
def test_the_cooccurrence_report_names_the_releases_it_made(vocab_size, releases):
    c = lda_corpus(n_docs=300, vocab_size=vocab_size, n_topics=3, doc_length=30, seed=4).corpus
    rep = quiet_fit(dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0, verbose=0), c).privacy_
    assert len(rep["events"]) == releases
    assert ("two statistics" in rep["theorem"]) == (releases == 2)
    assert ("chose the kept words" in rep["scope"]) == (releases == 2)


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


# --- recovery: the moment method by default, the earlier NMF behind recovery="nmf" ---------------------------------

def _lda(n_docs, seed=0):
    from dptopic.corpus.synthetic import lda_corpus

    return lda_corpus(n_docs=n_docs, vocab_size=60, n_topics=4, doc_length=30, alpha=0.2, beta=0.05, seed=seed)


def test_the_default_recovery_is_refined_anchors_without_background_topics():
    from dptopic.models import docdp_cooc

    data = _lda(300)
    m = DocDPCooccurrence(n_topics=12, epsilon=1.0, seed=0).fit(data.corpus)
    assert m.recovery == "refined-anchors" and m.n_background_topics_ == 0 and not m.background_topics_.any()
    old = DocDPCooccurrence(n_topics=12, epsilon=1.0, seed=0, recovery="nmf").fit(data.corpus)
    assert old.background_share_ == 0.25       # the earlier default, kept behind the parameter
    assert docdp_cooc.resolve_background_share("auto", 12) is None
    assert docdp_cooc.resolve_background_share("auto", 12, "nmf") == 0.25
    assert docdp_cooc.resolve_background_share(0.3, 12) == 0.3      # given: as given, whatever the recovery


def test_recovery_only_post_processes_the_same_releases():
    # the same seed draws the same noise: both recoveries spend the same two releases, the accounting is unchanged
    data = _lda(300)
    a = DocDPCooccurrence(n_topics=4, epsilon=1.0, seed=3, n_words=40).fit(data.corpus)
    b = DocDPCooccurrence(n_topics=4, epsilon=1.0, seed=3, n_words=40, recovery="nmf").fit(data.corpus)
    assert a.privacy_["events"] == b.privacy_["events"]
    assert a.privacy_["epsilon"] == b.privacy_["epsilon"] and a.privacy_["delta"] == b.privacy_["delta"]
    assert np.array_equal(a.kept_words_, b.kept_words_) and not np.allclose(a.components_, b.components_)


def test_more_documents_bring_the_default_closer_to_the_planted_topics():
    # consistency at a fixed epsilon: the noise stays, the signal grows with the documents, so the distance to the
    # planted topics shrinks (seeds fixed; measured 0.060 at 300 documents and 0.018 at 10,000, where
    # recovery="nmf" stops at 0.031)
    from dptopic.evaluation import topic_coverage

    def recovery(n):
        data = _lda(n, seed=1)
        m = DocDPCooccurrence(n_topics=4, epsilon=1.0, seed=2).fit(data.corpus)
        return topic_coverage(m, (data.phi, data.corpus.vocabulary))["coverage"]

    small, large = recovery(300), recovery(10_000)
    assert 1 - large < (1 - small) / 2 and 1 - large < 0.025


def test_auto_words_of_the_moment_route_follow_the_presence_sum():
    from dptopic.models.docdp_cooc import auto_n_words_moments

    assert auto_n_words_moments(0.0, 4.0) == 200 and auto_n_words_moments(-1e3, 4.0) == 200
    assert auto_n_words_moments(175 * 4.0 * 600, 4.0) == 600
    assert auto_n_words_moments(1e12, 4.0) == 2000


def test_an_unknown_recovery_is_refused_in_one_line():
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="recovery"):
        DocDPCooccurrence(n_topics=4, recovery="svd").fit(_lda(50).corpus)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("vocab_size, unit", [(30, "document"), (260, "document"), (260, "user")])
def test_fit_spends_exactly_its_release_plan(vocab_size, unit):
    """The events the fit spends are those of release_plan(n_words=V) (one release when every word is kept, two when
    the words are ranked first), and the plan's epsilon(delta) is the card's."""
    from helpers import assert_fit_spent_its_plan

    c = lda_corpus(n_docs=60, vocab_size=vocab_size, n_topics=3, doc_length=20, seed=4).corpus
    kw = {"user_ids": [f"u{i % 15}" for i in range(c.n_docs)]} if unit == "user" else {}
    m = DocDPCooccurrence(n_topics=3, epsilon=1.0, seed=0, unit=unit).fit(c, **kw)
    plan = assert_fit_spent_its_plan(m)
    assert len(plan.releases) == (1 if vocab_size <= 200 else 2) and plan.unit == unit
    assert m.noise_std_ == plan.release("co-occurrence statistic").scale


def test_a_seeded_fit_does_not_depend_on_the_fits_before_it_in_the_process():
    """The same seeded fit, first and after other fits (non-private, private and unseeded, on the same documents),
    gives the same topics to the bit: nothing a fit leaves in the process (caches, the record of documents already
    used by a private fit, numba's state) changes the next one."""
    planted = lda_corpus(n_docs=600, vocab_size=80, n_topics=4, doc_length=25, alpha=0.3, beta=0.05, seed=3).corpus
    first = quiet_fit(DocDPCooccurrence(n_topics=4, epsilon=1.0, seed=7, verbose=0), planted).components_
    quiet_fit(dptopic.LDA(n_topics=4, n_iter=5, seed=1, verbose=0), planted)
    quiet_fit(DocDPCooccurrence(n_topics=4, epsilon=2.0, verbose=0), planted)
    again = quiet_fit(DocDPCooccurrence(n_topics=4, epsilon=1.0, seed=7, verbose=0), planted).components_
    assert np.array_equal(first, again)
