import json

import numpy as np
import pytest

import dptopic
from dptopic import LDA
from dptopic.errors import CorruptModelError, DPTopicError
from dptopic.evaluation import topic_recovery


@pytest.mark.parametrize("sampler,n_jobs", [("sparse", 1), ("dense", 1), ("sparse", 2)])
def test_planted_topic_recovery(planted, sampler, n_jobs):
    m = LDA(5, alpha=0.1, beta=0.05, n_iter=150, seed=0, sampler=sampler, n_jobs=n_jobs, verbose=0).fit(planted.corpus)
    assert topic_recovery(m.components_, planted.phi) >= 0.9
    assert m.components_.shape == (5, 200) and np.allclose(m.components_.sum(1), 1)


def test_perplexity_and_likelihood_improve_with_iterations(planted):
    tr, te = planted.corpus.train_test_split(0.2, seed=0)
    ppl = [LDA(5, n_iter=n, seed=1, verbose=0).fit(tr).perplexity(te, mode="completion") for n in (1, 5, 50)]
    assert ppl[0] > ppl[1] > ppl[2]
    m = LDA(5, n_iter=50, seed=1, eval_every=5, verbose=0).fit(tr)
    ll = [v for _, v in m.log_likelihood_]
    assert len(ll) == 10 and ll[-1] > ll[0]


def test_reproducible_bit_for_bit(planted):
    a = LDA(5, n_iter=20, seed=42, verbose=0).fit(planted.corpus)
    b = LDA(5, n_iter=20, seed=42, verbose=0).fit(planted.corpus)
    c = LDA(5, n_iter=20, seed=43, verbose=0).fit(planted.corpus)
    assert np.array_equal(a.components_, b.components_)
    assert not np.array_equal(a.components_, c.components_)
    p = LDA(5, n_iter=20, seed=42, n_jobs=2, verbose=0)
    assert np.array_equal(p.fit(planted.corpus).components_, LDA(5, n_iter=20, seed=42, n_jobs=2, verbose=0).fit(planted.corpus).components_)
    assert np.array_equal(a.transform(planted.corpus.subset(range(5))), b.transform(planted.corpus.subset(range(5))))


def test_fit_accepts_sparse_matrix_and_transform(planted):
    X = planted.corpus.to_bow()
    m = LDA(5, n_iter=60, seed=0, verbose=0).fit(X)
    assert m.vocabulary_[0] == "w0"
    theta = m.transform(X[:10])
    assert theta.shape == (10, 5) and np.allclose(theta.sum(1), 1)
    assert m.fit_transform(X[:50]).shape == (50, 5)
    with pytest.raises(DPTopicError, match="vocabulary mismatch|columns"):
        m.transform(X[:, :50])


def test_topic_words(planted):
    m = LDA(5, n_iter=30, seed=0, verbose=0).fit(planted.corpus)
    tw = m.topic_words(4)
    assert len(tw) == 5 and all(len(t) == 4 for t in tw)
    w = m.topic_words(2, weights=True)[0]
    assert w[0][1] >= w[1][1]


def test_save_load_roundtrip(planted, tmp_path):
    m = LDA(5, n_iter=20, seed=0, verbose=0).fit(planted.corpus)
    d = m.save(tmp_path / "model")
    meta = json.loads((tmp_path / "model" / "model.json").read_text())
    assert meta["privacy"]["private"] is False and meta["privacy"]["epsilon"] == "inf"
    assert meta["class"] == "LDA" and meta["params"]["n_topics"] == 5
    m2 = dptopic.load(d)
    assert np.array_equal(m2.components_, m.components_) and m2.vocabulary_ == m.vocabulary_
    assert m2.perplexity(planted.corpus.subset(range(10))) == pytest.approx(m.perplexity(planted.corpus.subset(range(10))))
    # saving again replaces atomically, leaving no temp dirs behind
    m.save(tmp_path / "model")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_corrupt_model_files(planted, tmp_path):
    m = LDA(5, n_iter=5, seed=0, verbose=0).fit(planted.corpus)
    d = tmp_path / "m"
    m.save(d)
    (d / "components.npy").write_bytes(b"garbage")
    with pytest.raises(CorruptModelError, match="components.npy"):
        dptopic.load(d)
    m.save(d)
    (d / "model.json").write_text("{not json")
    with pytest.raises(CorruptModelError, match="not valid JSON"):
        dptopic.load(d)
    with pytest.raises(DPTopicError, match="does not hold a dptopic"):  # unreadable metadata: not provably ours
        m.save(d)
    d = tmp_path / "m2"
    m.save(d)
    np.save(d / "components.npy", np.ones((5, 3)))
    with pytest.raises(CorruptModelError, match="not the file this model.json was saved with"):
        dptopic.load(d)                     # model.json records each array file's digest
    meta = json.loads((d / "model.json").read_text())
    del meta["array_sha256"]                # as a folder saved before digests were recorded: the shape is checked
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="K×V"):
        dptopic.load(d)
    with pytest.raises(DPTopicError, match="does not exist"):
        dptopic.load(tmp_path / "nope")


@pytest.mark.parametrize("kw,match", [
    ({"n_topics": 0}, "n_topics=0"), ({"alpha": -1.0}, "alpha=-1.0"), ({"beta": 0}, "beta=0"),
    ({"n_iter": 2.5}, "n_iter=2.5"), ({"sampler": "fast"}, "sampler='fast'"), ({"n_jobs": 0}, "n_jobs=0"),
])
def test_parameter_validation(planted, kw, match):
    with pytest.raises(DPTopicError, match=match) as e:
        LDA(**kw).fit(planted.corpus)
    assert "must be" in str(e.value) and "\n" not in str(e.value)


def test_unfitted_and_empty():
    with pytest.raises(DPTopicError, match="not fitted"):
        LDA().transform([[1]])
    import scipy.sparse as sp
    with pytest.raises(DPTopicError, match="empty corpus"):
        LDA(verbose=0).fit(sp.csr_matrix((3, 4)))


def test_transform_texts_keeps_one_row_per_text():
    texts = ["alpha beta gamma alpha", "gamma delta beta", "beta beta alpha"] * 5
    m = LDA(2, n_iter=10, seed=0, verbose=0).fit(texts)
    theta = m.transform(["alpha beta", "the of and", "zzz unknown"])
    assert theta.shape == (3, 2) and np.allclose(theta[1], 0.5)


def test_seed_must_be_int_or_generator(planted):
    with pytest.raises(DPTopicError, match="seed='abc'"):
        LDA(seed="abc").fit(planted.corpus)
    g = np.random.default_rng(3)
    assert LDA(5, n_iter=2, seed=g, verbose=0).fit(planted.corpus).components_.shape == (5, 200)
