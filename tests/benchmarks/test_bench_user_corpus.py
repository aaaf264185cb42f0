"""``benchmarks/bench_user_corpus.py``'s people built from labelled documents: one document a person, a few of one
label, a few of random labels."""
from collections import Counter, defaultdict

import numpy as np


def people(ids, labels):
    """Each person's labels, in document order."""
    out = defaultdict(list)
    for person, label in zip(ids, labels):
        out[person].append(label)
    return out


def test_one_document_a_person(bench):
    labels = np.repeat(["a", "b", "c"], 10)
    ids = bench.person_ids(labels, "one", 3)
    assert len(set(ids)) == len(labels)


def test_a_person_of_one_label_writes_that_label_only(bench):
    labels = np.repeat(["a", "b", "c"], [10, 9, 7])
    ids = bench.person_ids(labels, "same", 3)
    by = people(ids, labels)
    assert all(len(set(ls)) == 1 for ls in by.values())
    assert Counter(len(ls) for ls in by.values()) == Counter({3: 3 + 3 + 2, 1: 2})     # 10 = 3+3+3+1, 7 = 3+3+1
    assert ids == bench.person_ids(labels, "same", 3)                                # fixed: the same people each run


def test_a_person_of_random_labels_often_writes_several(bench):
    labels = np.repeat([f"g{i}" for i in range(20)], 30)
    by = people(bench.person_ids(labels, "mixed", 3), labels)
    assert Counter(len(ls) for ls in by.values()) == Counter({3: 200})
    assert np.mean([len(set(ls)) > 1 for ls in by.values()]) > 0.8                # 1 - P(three alike) ~ 0.9975
