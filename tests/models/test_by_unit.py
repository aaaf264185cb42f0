"""dptopic.models.by_unit: the trainer a privacy unit gets, and the split a training run of a model uses."""
import numpy as np
import pytest

import dptopic
from dptopic.accounting.budget import hdp_iterations_within, smallest_hdp_budget
from dptopic.advice import UNIT_EPSILON_MAX
from dptopic.errors import DPTopicError
from dptopic.models import ALGORITHMS, CDPLDA, HDPLDA, LDA, DocDPCooccurrence, for_unit
from dptopic.models.by_unit import split_by, split_for, trainer_for_unit


@pytest.mark.parametrize("unit", ["document", "word"])
def test_the_trainer_for_a_unit_is_the_one_for_unit_builds(unit):
    name = trainer_for_unit(unit, 1.0)
    assert type(for_unit(unit, {"document": 1.0, "word": 2000.0}[unit])) is ALGORITHMS[name]


def test_a_budget_above_the_unit_s_largest_is_refused_in_the_caller_s_names():
    top = UNIT_EPSILON_MAX["document"]
    assert trainer_for_unit("document", top) == "docdp-cooc"
    with pytest.raises(DPTopicError, match=rf"^invalid --epsilon {2 * top:g}: --unit document takes a budget up to"
                                           rf" {top:g} \(a document-level budget above it protects nothing\)\.$"):
        trainer_for_unit("document", 2 * top, unit_name="--unit", epsilon_name="--epsilon")
    with pytest.raises(DPTopicError, match="invalid unit 'token'"):
        trainer_for_unit("token", 1.0)


@pytest.mark.parametrize("model,by", [(HDPLDA(n_topics=2), "position"), (CDPLDA(n_topics=2), "position"),
                                      (LDA(n_topics=2), "stable"), (DocDPCooccurrence(n_topics=2), "stable")])
def test_word_level_trainers_split_by_position_the_others_by_words(planted, model, by):
    assert split_by(model) == by
    train, test = split_for(model, planted.corpus, 0.2)
    want = planted.corpus.position_split(0.2) if by == "position" else planted.corpus.stable_split(0.2)
    assert np.array_equal(test.doc_ptr, want[1].doc_ptr) and np.array_equal(train.word_ids, want[0].word_ids)
    assert split_for(model, planted.corpus, 0) == (planted.corpus, None)


def test_hdp_iterations_within_is_the_most_the_budget_covers():
    eps_i, delta, n_iter = 10.0, 1e-5, 200
    budget = smallest_hdp_budget(eps_i, 40, delta) + 1e-6      # covers 40 iterations, not 41
    assert hdp_iterations_within(budget, eps_i, delta, n_iter) == 40
    assert hdp_iterations_within(smallest_hdp_budget(eps_i, 1, delta) / 2, eps_i, delta, n_iter) == 0
# ``dptopic.models.by_unit``.


@pytest.mark.parametrize("make, suggestion", [
    (lambda: dptopic.LDA(n_topic=5), "n_topics"),
    (lambda: dptopic.DocDPCooccurrence(epsilion=2), "epsilon"),
    (lambda: dptopic.HDPLDA.from_budget(1000, 1e-5, 20, n_topic=5), "n_topics"),
    (lambda: dptopic.for_unit("document", 1, n_topic=5), "n_topics"),
])
def test_a_misspelt_parameter_is_one_line_that_names_the_right_one(make, suggestion):
    with pytest.raises(DPTopicError, match=f"did you mean {suggestion}=") as e:
        make()
    assert isinstance(e.value, TypeError)          # still what Python and scikit-learn raise for it
    with pytest.raises(TypeError, match="its parameters are"):
        dptopic.for_unit("document", 1, algorithm="docdp")
