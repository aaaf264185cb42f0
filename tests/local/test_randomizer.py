"""Privacy review 51: regressions for the gaps found in the mechanisms, local randomizers and accountants."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dptopic import Corpus
from dptopic.errors import DPTopicError

WORDS = ["apple", "pear", "plum"]
TEXTS = ["apple pear", "zzz qqq", "plum apple"]     # the second document holds no vocabulary word


# ---------------------------------------------------------------- word-level randomizer: one report per document
def test_the_word_randomizer_refuses_a_corpus_that_left_out_its_empty_documents():
    """Real reports from a Corpus built with the default drop_empty=True were one fewer per document without a
    vocabulary word: their number was an exact function of the text (DocumentRandomizer already refused it)."""
    from dptopic.local import Randomizer

    dropped = Corpus.from_texts(TEXTS, vocabulary=WORDS)
    assert dropped.n_docs == 2 and dropped.n_empty_dropped == 1
    with pytest.raises(DPTopicError, match="drop_empty=False"):
        Randomizer(WORDS, epsilon_word=3.0).randomize(dropped)


def test_the_word_randomizer_sends_one_report_per_document_however_they_are_given():
    from dptopic.local import Randomizer

    rz = Randomizer(WORDS, epsilon_word=3.0)
    kept = Corpus.from_texts(TEXTS, vocabulary=WORDS, drop_empty=False)
    assert rz.randomize(kept).n_reports == 3
    assert rz.randomize([t.split() for t in TEXTS]).n_reports == 3
    assert rz.randomize(np.array([[1, 1, 0], [0, 0, 0], [1, 0, 1]])).n_reports == 3
    # a simulation randomizes the documents it is given (experiments and audits on a prepared corpus)
    with pytest.warns(UserWarning):
        sim = Randomizer.for_simulation(WORDS, epsilon_word=3.0, seed=0)
    assert sim.randomize(Corpus.from_texts(TEXTS, vocabulary=WORDS)).n_reports == 2


# ---------------------------------------------------------------- the strong-composition cross-check of DP-SVI
def _classic_step_delta(sigma: float, eps: float) -> float:
    """The exact delta of one Gaussian step at eps (Balle & Wang 2018, Thm 8), sensitivity 1."""
    return norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * norm.cdf(-0.5 / sigma - eps * sigma)


@pytest.mark.parametrize("sigma", [0.25, 0.4, 0.5])
def test_strong_composition_figure_is_not_stated_where_the_classic_step_bound_fails(sigma):
    """The baseline charges each step eps_it = sqrt(2 ln(1.25/delta_it))/sigma, the classic Gaussian calibration,
    a theorem only for eps_it < 1. With little noise the step is not (eps_it, delta_it)-DP at all, so the composed
    figure (listed on the privacy card at the report's delta) held at no delta: it must not be a finite number."""
    from dptopic.accounting.gaussian import strong_composition_for_sigma

    d_step = 1e-6
    eps_it = math.sqrt(2 * math.log(1.25 / d_step)) / sigma
    assert _classic_step_delta(sigma, eps_it) > d_step          # the per-step claim is false here
    assert strong_composition_for_sigma(sigma, 0.05, 20, 1e-5, d_step) == math.inf


@pytest.mark.parametrize("sigma", [0.7, 1.24, 2.0, 8.0])
def test_strong_composition_figure_is_unchanged_where_the_step_bound_holds(sigma):
    from dptopic.accounting.gaussian import strong_composition_epsilon, strong_composition_for_sigma

    d_step, q, steps, delta = 1e-6, 0.05, 20, 1e-5
    eps_it = math.sqrt(2 * math.log(1.25 / d_step)) / sigma
    assert _classic_step_delta(sigma, eps_it) <= d_step
    want = strong_composition_epsilon(eps_it, q, steps, delta - steps * q * d_step)
    assert strong_composition_for_sigma(sigma, q, steps, delta, d_step) == pytest.approx(want, rel=1e-12)
