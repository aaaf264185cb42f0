"""Leftovers of earlier reviews: scikit-learn's wording for inputs without rows, a refusal that says what is wrong
for an all-zero batch, the random_state refusal worded per trainer, and /v1/config naming the contributor header."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dptopic
from dptopic.errors import DPTopicError


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).poisson(1.0, (40, 12))


@pytest.fixture(scope="module")
def fitted(X):
    return {"LDA": dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0).fit(X),
            "OnlineVB": dptopic.OnlineVB(n_topics=2, n_epochs=2, seed=0, verbose=0).fit(X)}


@pytest.mark.parametrize("name", ["LDA", "OnlineVB"])
@pytest.mark.parametrize("sparse", [False, True])
def test_input_without_rows_is_named_as_scikit_learn_names_it(fitted, X, name, sparse):
    empty = sp.csr_matrix(X[:0]) if sparse else X[:0]
    with pytest.raises(DPTopicError, match=r"X has 0 documents \(shape=\(0, 12\)\) while a minimum of 1 is required"):
        fitted[name].transform(empty)


def test_all_zero_batch_is_refused_as_nothing_to_learn_and_leaves_the_model_unchanged(fitted):
    m = dptopic.OnlineVB(n_topics=2, n_epochs=1, seed=0, verbose=0).fit(np.ones((5, 12), dtype=int))
    before = m.components_.copy()
    with pytest.raises(DPTopicError, match="none of the input's words is in the model's vocabulary: there is nothing"
                                           " to score or learn from, and the model is unchanged"):
        m.partial_fit(np.zeros((3, 12), dtype=int))
    np.testing.assert_array_equal(m.components_, before)
    with pytest.raises(DPTopicError, match="nothing to score"):
        fitted["LDA"].score(np.zeros((3, 12), dtype=int))
    with pytest.warns(UserWarning, match="every row is the prior alone"):    # transform still answers, as before
        theta = fitted["LDA"].transform(np.zeros((3, 12), dtype=int))
    assert theta.shape == (3, 2)


def test_random_state_refusal_speaks_of_a_private_seed_only_for_private_trainers():
    with pytest.raises(DPTopicError) as e:
        dptopic.LDA(random_state=0)
    assert "takes seed=, not scikit-learn's random_state=" in str(e.value) and "private" not in str(e.value)
    with pytest.raises(DPTopicError, match="private trainer's seed is for tests and reproduction only"):
        dptopic.HDPLDA(random_state=0)


def test_config_names_the_contributor_header(tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    from dptopic.service import ServiceConfig
    from dptopic.service.app import Service

    cfg = ServiceConfig([f"w{i}" for i in range(20)], database=f"sqlite:///{tmp_path / 'c.db'}",
                        f=2 / (1 + np.exp(2.0)))
    doc = Service(cfg, start_trainer=False).config_doc()
    assert "Dptopic-Contributor" in doc["contributor"] and "1-128 characters" in doc["contributor"]


def test_jsonl_label_1_and_1_0_are_one_class(tmp_path):
    from dptopic.corpus import Corpus

    p = tmp_path / "l.jsonl"
    p.write_text('{"text": "apple banana cherry", "label": 1}\n{"text": "banana cherry date", "label": 1.0}\n'
                 '{"text": "cherry date egg", "label": 2.5}\n')
    assert Corpus.from_jsonl(p, label_field="label").labels == ["1", "1", "2.5"]


def test_folders_sharing_a_name_are_said_to_share_a_label(tmp_path):
    from dptopic.corpus import Corpus

    for sub, text in (("a/x", "alpha beta gamma"), ("b/x", "beta gamma delta"), ("c", "gamma delta epsilon")):
        (tmp_path / sub).mkdir(parents=True)
        (tmp_path / sub / "d.txt").write_text(text)
    with pytest.warns(UserWarning, match="the folders 'a/x', 'b/x' share the name 'x', so their files get one label"):
        c = Corpus.from_directory(tmp_path)
    assert c.labels == ["x", "x", "c"]
    import warnings

    (tmp_path / "b" / "x").rename(tmp_path / "b" / "y")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Corpus.from_directory(tmp_path).labels == ["x", "y", "c"]
