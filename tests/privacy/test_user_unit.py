"""The per-person guarantee end to end: for a neighbouring pair of corpora (one person's documents added or removed),
every statistic a user-level trainer releases, computed before its noise, moves by at most the sensitivity the noise
is calibrated to (1 in L2 norm), including the held-out split the training run makes first."""
import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.kernels.docdp import tokens_to_bow
from dptopic.kernels.user_level import user_cooccurrence_bow, user_document_frequency_bow
from dptopic.models import DocDPCooccurrence
from dptopic.person_bound import cooccurrence_statistic, group_by_person, people_of, presence_statistic
from dptopic.training.by_unit import split_for

SENSITIVITY = 1.0       # the L2 sensitivity DocDPCooccurrence(unit="user") calibrates its Gaussian noise to
TOL = 1e-9


def _bow(corpus):
    return tokens_to_bow(corpus.doc_ptr, corpus.word_ids, corpus.vocab_size)


def _released(corpus, person_statistic="sum"):
    """The first release's statistic and the co-occurrence release's, before noise, of a training run of
    DocDPCooccurrence(unit="user", person_statistic=...) on ``corpus``: its training part (the split the run makes)
    grouped by person."""
    model = DocDPCooccurrence(n_topics=2, unit="user", person_statistic=person_statistic)
    train, _ = split_for(model, corpus, 0.2)
    people, _ = people_of(model, train, lambda: iter([_bow(train)]), np.random.default_rng(0))
    V = train.vocab_size
    return presence_statistic(people, V, 1), cooccurrence_statistic(people, np.arange(V), V, 1,
                                                                    person_statistic=model.person_statistic)


def _moved(a, b):
    return max(float(np.linalg.norm(x - y)) for x, y in zip(a, b))


def _shared_message(with_target: bool):
    """One person ("target") and 400 others who each post the same three-word message (the target's copy first in
    the file); each of the others also posts one message of their own."""
    words = ["flu", "shot", "clinic"] + [f"w{i}" for i in range(50)]
    others = [f"p{i}" for i in range(400)]
    docs = [[0, 1, 2]] * (401 if with_target else 400) + [[3 + i % 30, 33 + i % 17] for i in range(400)]
    people = (["target"] if with_target else []) + others + others
    return Corpus.from_token_ids(docs, words, user_ids=people)


@pytest.mark.parametrize("person_statistic", ["sum", "profile"])
def test_removing_one_person_who_shares_a_message_with_400_others_moves_the_releases_at_most_one(person_statistic):
    assert _moved(_released(_shared_message(True), person_statistic),
                  _released(_shared_message(False), person_statistic)) <= SENSITIVITY + TOL


def test_removing_a_person_of_many_long_documents_moves_the_profile_release_at_most_one():
    """person_statistic='profile': a person who wrote 300 long documents adds one u u^T of norm 1, like anyone."""
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(40)]
    others = [list(rng.integers(0, 40, size=6)) for _ in range(200)]
    prolific = [list(rng.integers(0, 5, size=200)) for _ in range(300)]
    ids = [f"p{i}" for i in range(200)]
    from dptopic.person_bound import person_codes

    def released(docs, people):
        c = Corpus.from_token_ids(docs, words)
        grouped = group_by_person(_bow(c), person_codes(people), None, None)
        return cooccurrence_statistic(grouped, np.arange(40), 40, 1, person_statistic="profile")

    moved = np.linalg.norm(released(others + prolific, ids + ["many"] * 300) - released(others, ids))
    assert moved <= SENSITIVITY + TOL
    assert moved == pytest.approx(1.0)      # the person is counted: u u^T has norm 1


def test_ids_that_differ_by_an_invisible_character_are_refused_and_grouped_as_two_people():
    """ "v" and "v\\u0000" are two ids: the readers refuse the second (a control character), and the grouping the
    trainers use keeps them apart, so removing the documents of "v\\u0000" moves the releases at most 1."""
    from dptopic.person_bound import person_codes

    words = ["fever", "cough", "rash", "sleep"]
    docs = [[0, 1]] + [[2, 3]] * 6 + [[0, 2], [1, 3]]     # "v" writes about 0 and 1, "v\u0000" about 2 and 3
    ids = ["v"] + ["v\u0000"] * 6 + ["w", "y"]
    with pytest.raises(DPTopicError, match=r"^user_ids\[1\] holds an invisible control or format character"):
        Corpus.from_token_ids(docs, words, user_ids=ids)
    assert len(set(person_codes(ids).tolist())) == 4

    def released(keep):
        c = Corpus.from_token_ids([docs[i] for i in keep], words)
        bow, gptr, _ = group_by_person(_bow(c), person_codes([ids[i] for i in keep]), None, None)
        return user_document_frequency_bow(bow, gptr, 4), user_cooccurrence_bow(bow, gptr, np.arange(4), 4)

    everyone = range(len(ids))
    assert _moved(released(everyone), released([i for i in everyone if ids[i] != "v\u0000"])) <= SENSITIVITY + TOL
