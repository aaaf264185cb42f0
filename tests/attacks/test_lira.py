"""LiRA, the Huang et al. baselines and the attack metrics."""
import numpy as np
import pytest

from dptopic.attacks import lira, metrics
from dptopic.attacks.baselines import huang_scores
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError


# --------------------------------------------------------------- directions
def test_scores_are_higher_for_members():
    # one document, shadows: IN statistics around -10, OUT around -12 (members have the higher s)
    rng = np.random.default_rng(0)
    members = np.array([[True], [False]] * 8)
    S = np.where(members, -10.0, -12.0) + 0.3 * rng.standard_normal(members.shape)
    hi, lo = np.array([-10.0]), np.array([-12.0])
    for fv in (False, True):
        assert lira.lira_online(hi, S, members, fv)[0] > 0 > lira.lira_online(lo, S, members, fv)[0]
        assert lira.lira_offline(hi, S, members, fv)[0] > lira.lira_offline(lo, S, members, fv)[0]
    # offline is log Pr[Z <= x]: at the OUT mean it is log 1/2
    assert lira.lira_offline(np.array([S[~members[:, 0], 0].mean()]), S, members)[0] == pytest.approx(np.log(0.5))


def test_huang_scores_are_higher_for_concentrated_theta():
    theta = np.array([[0.97, 0.01, 0.01, 0.01], [0.25, 0.25, 0.25, 0.25]])
    h = huang_scores(theta)
    for k in ("entropy", "std", "max"):
        assert h[k][0] > h[k][1]


def test_metrics_on_known_scores():
    y = np.array([1] * 100 + [0] * 100)
    s = np.concatenate([np.arange(100) + 100.0, np.arange(100.0)])  # perfect separation
    m = metrics.summarize(s, y)
    assert m["auc"] == 1.0 and m["tpr_at_fpr_0"] == 1.0 and m["tpr_at_fpr_0.01"] == 1.0
    m = metrics.summarize(-s, y)
    assert m["auc"] == 0.0 and m["tpr_at_fpr_0.01"] == 0.0
    # Clopper-Pearson: 0 of n gives upper bound 1 - alpha^(1/n)
    lo, hi = metrics.clopper_pearson(0, 100, 0.025)
    assert lo == 0 and hi == pytest.approx(1 - 0.025 ** (1 / 100))
    e = metrics.empirical_epsilon(s, y, confidence=0.95)
    # separated half: TPR >= 0.025^(1/n1), FPR <= 1-0.025^(1/n0): a finite, positive bound
    assert 2.0 < e["epsilon_lower_bound"] < 6.0
    assert metrics.empirical_epsilon(np.zeros(200), y)["epsilon_lower_bound"] == 0.0


def test_nan_scores_are_refused_and_infinities_keep_their_order():
    y = np.array([1] * 50 + [0] * 50)
    s = np.concatenate([np.arange(50) + 50.0, np.arange(50.0)])
    s[3] = np.nan       # read as the lowest score, a NaN member would have lowered the AUC below 1
    for f in (metrics.summarize, metrics.empirical_epsilon, metrics.roc):
        with pytest.raises(DPTopicError, match="1 of the 100 scores are NaN"):
            f(s, y)
    s[3] = np.inf       # an infinite score is still a score: the highest
    s[60] = -np.inf
    assert metrics.summarize(s, y)["auc"] == 1.0


def test_complementary_halves_and_bad_input():
    m = lira.complementary_halves(11, 8, np.random.default_rng(1))
    assert (m.sum(axis=0) == 4).all()
    with pytest.raises(DPTopicError, match="shadow"):
        lira.complementary_halves(11, 2, np.random.default_rng(1))
    with pytest.raises(DPTopicError, match="shadow"):
        lira.complementary_halves(11, 5, np.random.default_rng(1))


# --------------------------------------------------------------- real runs
@pytest.fixture(scope="module")
def planted():
    # few long documents over a large vocabulary with many topics and a tiny beta: memorising
    return lda_corpus(n_docs=120, vocab_size=400, n_topics=4, doc_length=("poisson", 60), alpha=0.5, beta=0.05,
                      seed=3).corpus


def test_lira_beats_chance_and_huang_on_a_memorising_model(planted):
    fn = lira.estimator_trainer("lda", n_topics=30, n_iter=40, beta=0.001, alpha=0.1)
    r = lira.run_lira(planted, fn, n_shadows=8, seed=0, verbose=0, n_targets=4)
    on = r.summaries["lira_online"]
    assert on["auc"] > 0.5 + 4 * on["auc_se"]
    best_huang = max(r.summaries[f"huang_{k}"]["auc"] for k in ("entropy", "std", "max"))
    assert on["auc"] > best_huang + 2 * on["auc_se"]
    assert r.summaries["lira_offline"]["auc"] > 0.5 + 4 * r.summaries["lira_offline"]["auc_se"]
    assert r.claimed is not None and not r.claimed["private"]
    assert r.to_json()["claimed_privacy"]["epsilon"] is None   # JSON null: no claim


def test_a_model_that_ignores_its_data_is_at_chance(planted):
    def ignore(corpus, rng):
        return rng.dirichlet(np.full(corpus.vocab_size, 0.5), size=10)  # fresh, data-independent Phi

    r = lira.run_lira(planted, ignore, n_shadows=16, seed=1, verbose=0, n_targets=1)
    for k in ("lira_online", "lira_offline"):
        s = r.summaries[k]
        assert abs(s["auc"] - 0.5) <= 4 * s["auc_se"], (k, s)


def test_empirical_epsilon_stays_below_hdp_claim(planted):
    fn = lira.estimator_trainer("hdp", n_topics=5, n_iter=3, epsilon_laplace=0.5, epsilon_inherent=0.5)
    r = lira.run_lira(planted, fn, n_shadows=8, seed=2, verbose=0, n_jobs=2)
    claim = r.to_json()["claimed_privacy"]
    assert claim["private"] and claim["unit"] == "word"
    assert np.isfinite(claim["epsilon"]) and claim["epsilon"] < 5  # a small setting
    assert 0 <= r.empirical_epsilon["epsilon_lower_bound"] <= claim["epsilon"]


def test_every_registered_trainer_can_be_audited(planted):
    from dptopic.models import ALGORITHMS

    small = planted.subset(range(40))
    import inspect

    for name in ALGORITHMS:
        iters = {"n_iter": 2} if "n_iter" in inspect.signature(ALGORITHMS[name].__init__).parameters else {}
        fn = lira.estimator_trainer(name, n_topics=3, **iters)
        sh = lira.train_shadows(small, fn, n_shadows=4, seed=0, verbose=0, huang=False)
        assert sh.scores.shape == (4, 40) and np.all(np.isfinite(sh.scores)), name
        assert sh.privacy is not None and "private" in sh.privacy, name


def test_sklearn_trainer_runs(planted):
    pytest.importorskip("sklearn")
    small = planted.subset(range(40))
    sh = lira.train_shadows(small, lira.sklearn_trainer(3, max_iter=3), n_shadows=4, seed=0, verbose=0)
    assert np.all(sh.scores <= 0) and sh.privacy is None
