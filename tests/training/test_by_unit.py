"""dptopic.training.by_unit: the trainer a privacy unit gets, and the split a training run of a model uses."""
import numpy as np
import pytest

import dptopic
from dptopic.accounting.budget import hdp_iterations_within, smallest_hdp_budget
from dptopic.accounting.units import UNIT_EPSILON_MAX
from dptopic.attacks.lira import ALGORITHMS
from dptopic.errors import DPTopicError
from dptopic.models import CDPLDA, HDPLDA, LDA, DocDPCooccurrence
from dptopic.training import for_unit
from dptopic.training.by_unit import split_by, split_for, trainer_for_unit


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
# ``dptopic.training.by_unit``.


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


def _shared_message_corpus(with_target: bool):
    """One person ("target") and 400 others, each posting the same three-word message; the target's copy first."""
    people = (["target"] if with_target else []) + [f"p{i}" for i in range(400)]
    return dptopic.Corpus.from_token_ids([[0, 1, 2]] * len(people), ["flu", "shot", "clinic"], user_ids=people)


def _sides(model, corpus):
    train, test = split_for(model, corpus, 0.2)
    return {**{u: "train" for u in train.user_ids}, **{u: "test" for u in test.user_ids}}


def test_a_user_level_split_holds_out_whole_people_so_removing_one_moves_no_other():
    model = DocDPCooccurrence(n_topics=2, unit="user")
    assert split_by(model) == "person"
    with_target, without = _sides(model, _shared_message_corpus(True)), _sides(model, _shared_message_corpus(False))
    moved = [u for u in without if without[u] != with_target[u]]
    assert moved == []
    assert 0 < sum(s == "test" for s in without.values()) < 400       # both sides hold people


def test_a_user_level_split_keeps_every_document_of_a_person_on_one_side(planted):
    ids = [f"u{d % 37}" for d in range(planted.corpus.n_docs)]
    train, test = split_for(DocDPCooccurrence(n_topics=2, unit="user"), planted.corpus, 0.3, user_ids=ids)
    assert not set(train.user_ids) & set(test.user_ids)
    assert sorted(train.user_ids + test.user_ids) == sorted(ids)      # the parts carry the ids given
    assert train.n_docs + test.n_docs == planted.corpus.n_docs


def test_a_user_level_split_needs_the_people_and_refuses_two_different_sets_of_them(planted):
    model = DocDPCooccurrence(n_topics=2, unit="user")
    with pytest.raises(DPTopicError, match=r"^DocDPCooccurrence\(unit='user'\) holds out whole people: give user_ids="):
        split_for(model, planted.corpus, 0.2)
    c = planted.corpus.subset(range(10))
    c = dptopic.Corpus(c.doc_ptr, c.word_ids, c.vocabulary, user_ids=[str(i % 3) for i in range(10)])
    with pytest.raises(DPTopicError, match=r"^user_ids= differs from the corpus's own user ids \(document 0"):
        split_for(model, c, 0.2, user_ids=[str(i % 4 + 1) for i in range(10)])
    with pytest.raises(DPTopicError, match=r"^user_ids= splits by person"):
        split_for(LDA(n_topics=2), c, 0.2, user_ids=c.user_ids)


def test_numpy_numbers_are_taken_as_python_numbers():
    """for_unit takes NumPy's numbers wherever it takes numbers and builds the trainer with Python's (the word
    level's budget rule reads them too)."""
    m = for_unit("document", np.float32(2.0), delta=np.float64(1e-6), n_topics=np.int64(4), n_words=np.int32(300))
    assert (m.epsilon, m.delta, m.n_topics, m.n_words) == (2.0, 1e-6, 4, 300)
    assert all(type(v) in (int, float) for v in (m.epsilon, m.delta, m.n_topics, m.n_words))
    word = for_unit("word", np.float32(2000.0), delta=np.float32(1e-5))
    assert type(word.delta) is float and word.delta == pytest.approx(1e-5)
    with pytest.raises(DPTopicError, match="budget too small"):
        for_unit("word", np.float32(400.0))
