import json

import numpy as np
import pytest

import dptopic
from dptopic import CDPLDA, HDPLDA, LDA, CDPLDAPlus
from dptopic.errors import BudgetExceededError, DPTopicError
from dptopic.evaluation import topic_recovery

from conftest import counts_from_z


class Recorder:
    def __init__(self, corpus, K):
        self.c, self.K, self.prev, self.diffs, self.releases = corpus, K, None, [], []

    def __call__(self, info):
        if self.prev is not None:
            self.diffs.append(np.asarray(info.release, float) - self.prev)
        self.releases.append(np.array(info.release, float))
        self.prev = counts_from_z(self.c, info.z, self.K)[1].astype(float)


def test_sound_hdp_fresh_noise_on_true_counts(planted):
    """S_i - N_{i-1} is fresh Laplace(2/eps_L) noise each iteration: no accumulation (spec §3.5)."""
    c = planted.corpus
    rec = Recorder(c, 5)
    m = HDPLDA(5, epsilon_laplace=1.0, epsilon_inherent=10, noise="continuous", n_iter=12, seed=0, verbose=0)
    m.fit(c, callback=rec)
    b = 2.0
    n = rec.diffs[0].size
    se = np.sqrt(20 * b**4 / n)
    for d in (rec.diffs[0], rec.diffs[-1]):
        assert abs(d.mean()) < 4 * np.sqrt(2 * b**2 / n)
        assert abs(d.var() - 2 * b**2) < 4 * se


def test_literal_hdp_accumulates_noise(planted):
    """Algorithm 1 as written: live counts = N(z) + accumulated noise, variance ≈ i·2b² (spec A-04)."""
    c = planted.corpus
    rec = Recorder(c, 5)
    m = HDPLDA(5, epsilon_laplace=1.0, noise="continuous", paper_literal=True, n_iter=12, seed=0, verbose=0)
    m.fit(c, callback=rec)
    b = 2.0
    v = [d.var() for d in rec.diffs]  # diffs[j] is the release of iteration j+1
    assert v[0] == pytest.approx(2 * 2 * b**2, rel=0.15)
    assert v[-1] == pytest.approx(12 * 2 * b**2, rel=0.15)
    assert m.privacy_["private"] is False and "claimed_by_paper" in m.privacy_


def test_sound_hdp_valid_probabilities_and_utility(planted):
    c = planted.corpus
    m = HDPLDA(5, epsilon_laplace=5.0, epsilon_inherent=12, n_iter=80, seed=0, verbose=0).fit(c)
    assert np.all(m.components_ > 0) and np.allclose(m.components_.sum(1), 1)
    assert topic_recovery(m.components_, planted.phi) > 0.6
    assert np.isfinite(m.perplexity(c.subset(range(20))))


def test_hdp_privacy_report_in_saved_model(planted, tmp_path):
    m = HDPLDA(5, epsilon_laplace=0.5, epsilon_inherent=4.0, beta=0.5, n_iter=10, seed=0, verbose=0).fit(planted.corpus)
    rep = m.privacy_
    assert rep["private"] is True and rep["unit"] == "word" and "replacement" in rep["neighbouring_relation"]
    assert "Theorem 3" in rep["theorem"]
    assert rep["epsilon_basic"] == pytest.approx(10 * (0.5 + 4.0))
    assert rep["epsilon_paper"] == pytest.approx(45.0)
    assert rep["epsilon_pld"] <= rep["epsilon_basic"] and rep["delta"] == 1e-5
    assert rep["parameters"]["clip"] == pytest.approx(0.5 * np.expm1(2.0))
    m.save(tmp_path / "h")
    saved = json.loads((tmp_path / "h" / "model.json").read_text())["privacy"]
    assert saved["epsilon_pld"] == pytest.approx(rep["epsilon_pld"]) and saved["unit"] == "word"
    assert not (tmp_path / "h" / "topic_word_counts.npy").exists()  # true counts are never written
    assert dptopic.load(tmp_path / "h").privacy_["epsilon_basic"] == pytest.approx(45.0)


def test_limited_inherent_is_not_private(planted):
    m = HDPLDA(5, epsilon_laplace=None, n_iter=5, seed=0, verbose=0).fit(planted.corpus)
    assert m.privacy_["private"] is False and m.privacy_["mode"] == "limited-inherent"


def test_from_budget_stays_within_budget(planted):
    m = HDPLDA.from_budget(200.0, 1e-5, n_iter=10, epsilon_inherent=5.0, n_topics=5, seed=0, verbose=0)
    m.fit(planted.corpus)
    assert m.privacy_["epsilon_pld"] <= 200.0 + 1e-6 and m.privacy_["budget"]["epsilon"] == 200.0
    with pytest.raises(DPTopicError, match="budget too small"):
        HDPLDA.from_budget(5.0, 1e-5, n_iter=10, epsilon_inherent=5.0)


def test_ledger_refuses_overspend(planted):
    m = HDPLDA.from_budget(200.0, 1e-5, n_iter=10, epsilon_inherent=5.0, n_topics=5, seed=0, verbose=0)
    m.n_iter = 40  # asking for more iterations than the budget was split over
    with pytest.raises(BudgetExceededError):
        m.fit(planted.corpus)


def test_cdp_nominal_and_corrected(planted):
    c = planted.corpus
    a = CDPLDA(5, paper_epsilon=1.0, n_iter=10, seed=0, verbose=0).fit(c)
    part = a.privacy_["count_release_epsilon"]  # a partial figure: the model itself is not covered
    assert a.privacy_["private"] is False
    assert a.privacy_["epsilon_nominal"] == 1.0 and part["epsilon_basic"] == pytest.approx(2.0)
    b = CDPLDAPlus(5, paper_epsilon=1.0, n_iter=10, seed=0, verbose=0).fit(c)
    part = b.privacy_["count_release_epsilon"]
    assert b.privacy_["epsilon_nominal"] == 10.0 and part["epsilon_basic"] == pytest.approx(20.0)
    assert part["epsilon_pld"] < 20.0
    assert np.allclose(b.components_.sum(1), 1) and np.all(b.components_ > 0)


@pytest.mark.parametrize("make,match", [
    (lambda: HDPLDA(epsilon_laplace=0), "epsilon_laplace=0"),
    (lambda: HDPLDA(epsilon_laplace=-1.0), "epsilon_laplace=-1.0"),
    (lambda: HDPLDA(delta=1.5), "delta=1.5"),
    (lambda: HDPLDA(delta=0), "delta=0"),
    (lambda: HDPLDA(clip=0), "clip=0"),
    (lambda: HDPLDA(beta=-0.1), "beta=-0.1"),
    (lambda: HDPLDA(clip=1.0, epsilon_inherent=2.0), "either clip or epsilon_inherent"),
    (lambda: CDPLDA(paper_epsilon=0.0), "epsilon=0.0"),
    (lambda: HDPLDA(secure=True, seed=3), "refuses a seed"),
    (lambda: CDPLDA(secure=True, seed=3), "refuses a seed"),
])
def test_bad_private_parameters(planted, make, match):
    with pytest.raises(DPTopicError, match=match) as e:
        make().fit(planted.corpus)
    assert "\n" not in str(e.value)


def test_secure_mode_trains(planted):
    pytest.importorskip("opendp")
    m = HDPLDA(5, epsilon_laplace=1.0, n_iter=2, secure=True, verbose=0).fit(planted.corpus.subset(range(30)))
    assert m.privacy_["secure_noise"] is True and np.allclose(m.components_.sum(1), 1)


def test_private_parallel_shards(planted):
    m = HDPLDA(5, epsilon_laplace=2.0, n_iter=20, seed=1, n_jobs=2, verbose=0).fit(planted.corpus)
    m2 = HDPLDA(5, epsilon_laplace=2.0, n_iter=20, seed=1, n_jobs=2, verbose=0).fit(planted.corpus)
    assert np.array_equal(m.components_, m2.components_)


def test_ledger_records_exactly_the_planned_events(planted):
    m = HDPLDA(5, epsilon_laplace=1.0, epsilon_inherent=3.0, n_iter=7, seed=0, verbose=0).fit(planted.corpus)
    groups = m.ledger_.groups()
    assert len(groups) == 2 and [n for _, n in groups] == [7, 7]
    assert {type(e).__name__ for e, _ in groups} == {"LaplaceEvent", "PureDPEvent"}
    assert m.ledger_._reserved == dict(groups)  # every spend fell within the checked reservation


@pytest.mark.parametrize("make", [
    lambda: LDA(5, n_iter=2, seed=0, verbose=0),
    lambda: HDPLDA(5, n_iter=2, seed=0, verbose=0),
    lambda: HDPLDA(5, epsilon_laplace=None, n_iter=2, seed=0, verbose=0),
    lambda: HDPLDA(5, paper_literal=True, n_iter=2, seed=0, verbose=0),
    lambda: CDPLDA(5, n_iter=2, seed=0, verbose=0),
    lambda: CDPLDAPlus(5, n_iter=2, seed=0, verbose=0),
])
def test_every_report_names_epsilon_delta_unit_relation_theorem(planted, make, tmp_path):
    m = make().fit(planted.corpus)
    for rep in (m.privacy_, dptopic.load(m.save(tmp_path / "m")).privacy_):
        for key in ("private", "unit", "neighbouring_relation", "theorem"):
            assert rep[key] not in (None, "")
        assert "delta" in rep and ("epsilon" in rep or "epsilon_basic" in rep)
        assert "replacement" in rep["neighbouring_relation"]
        if not rep["private"]:
            assert rep["epsilon"] in (float("inf"), "inf") and rep["delta"] is None and rep["reason"]
