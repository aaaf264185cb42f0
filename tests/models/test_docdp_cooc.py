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
