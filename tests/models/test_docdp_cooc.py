"""DocDPCooccurrence's control of false words: a word chosen by a noisy count from a long public list is kept only if
its count clears the threshold that keeps the expected number of kept words with no occurrence at most
``max_false_words``."""
import numpy as np
import pytest
from scipy.stats import norm

from dptopic.accounting.card import privacy_card
from dptopic.corpus import Corpus
from dptopic.errors import SmallCorpusWarning
from dptopic.models import DocDPCooccurrence

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
    from dptopic.reporting import render_report

    page = render_report(title="t", trainer="DocDPCooccurrence", card=card, topics=[[("w", 1.0)]] * 4)
    assert "kept words" in page and "occur in no document" in page


def test_too_few_words_above_the_noise_are_made_up_with_a_warning_that_counts_them():
    corpus = _corpus(n_docs=30)         # far too few documents for epsilon 0.5: nothing stands above the noise
    with pytest.warns(SmallCorpusWarning, match=r"only \d+ word\(s\) of the 3,000 stand above the noise"):
        m = DocDPCooccurrence(n_topics=4, epsilon=0.5, n_words=60, background_share=None,
                              seed=2).fit(corpus, vocabulary=LIST)
    assert len(m.kept_words_) == 4


def test_a_vocabulary_kept_whole_chooses_no_word_and_states_no_threshold():
    words = LIST[:USED]
    m = DocDPCooccurrence(n_topics=3, epsilon=1.0, n_words=USED, background_share=None,
                          seed=3).fit(Corpus.from_texts([" ".join(words[1:4])] * 50, vocabulary=words),
                                      vocabulary=words)
    assert m.word_threshold_ is None and "word_selection" not in privacy_card(m.privacy_, "DocDPCooccurrence")


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
