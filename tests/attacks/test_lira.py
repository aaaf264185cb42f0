"""LiRA, the Huang et al. baselines and the attack metrics."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

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
    from dptopic.attacks.lira import ALGORITHMS

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


# ---------------------------------------------------------------------------------------------------------------------
# The attacks' statistics: the models' jackknife with one or two attacked targets, the audit's printed
# confidence, and checks of the ROC and the epsilon bound against references (scikit-learn, brute force, a mechanism of
# known epsilon).

def _separable(M=16, D=40, seed=9):
    rng = np.random.default_rng(seed)
    mem = lira.complementary_halves(D, M, rng)
    # members' statistic 100 above: every attack's AUC is exactly 1 whichever shadow pairs are left out
    return lira.ShadowScores(rng.normal(size=(M, D)) * 0.01 + mem * 100.0, mem, {})


@pytest.mark.parametrize("n_targets", [1, 2])
def test_jackknife_without_the_targets_group_has_no_spread_when_no_group_moves_the_auc(n_targets):
    """With --targets 1 or 2 the targets' group is never left out; the centre used all P pairs although only the
    other groups' were left out, which gave AUC/(G sqrt(G-1)) = 0.047 here for AUCs that never move."""
    se, G, covered = lira.model_jackknife_se(_separable(), n_targets)
    assert not covered and G == 7
    for k, v in se.items():
        assert v == pytest.approx(0.0, abs=1e-12), k


def test_jackknife_without_the_targets_group_is_the_delete_a_group_jackknife_of_the_other_groups():
    """Groups of one pair each (16 shadows, 8 groups, 7 left out in turn): the usual (G-1)/G sum (v - mean)^2."""
    rng = np.random.default_rng(3)
    M, D = 16, 60
    mem = lira.complementary_halves(D, M, rng)
    sh = lira.ShadowScores(rng.normal(size=(M, D)) + 0.8 * mem + rng.normal(size=(M, 1)), mem, {})
    se, G, covered = lira.model_jackknife_se(sh, n_targets=1)
    assert not covered and G == 7
    v = []
    for g in range(1, 8):                  # group g holds pair g (shadows 2g, 2g+1); group 0 holds the target
        keep = np.arange(M) // 2 != g
        sub = lira.ShadowScores(sh.scores[keep], sh.members[keep], {})
        s, y = lira.leave_one_out(sub, 1)["lira_online"]
        v.append(roc_auc_score(y, s))
    v = np.asarray(v)
    assert se["lira_online"] == pytest.approx(np.sqrt(6 / 7 * np.sum((v - v.mean()) ** 2)), rel=1e-10)


def test_roc_auc_and_tpr_at_fpr_match_references_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(50)
    for it in range(60):
        n = int(rng.integers(3, 40))
        y = rng.random(n) < rng.uniform(0.1, 0.9)
        if y.all() or (~y).all():
            continue
        s = rng.integers(0, 4, n).astype(float) if it % 2 else rng.normal(size=n)
        assert metrics.summarize(s, y)["auc"] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        _, slot, nt = metrics._weighted_auc_parts(s, y)
        assert metrics._weighted_auc(slot, nt, np.ones(n)) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        fpr, tpr, _ = metrics.roc(s, y)
        for f in (0.0, 0.01, 0.1, 0.3):
            best = max(((s >= t)[y].mean() for t in np.r_[np.unique(s), np.inf] if (s >= t)[~y].mean() <= f),
                       default=0.0)
            assert metrics.tpr_at_fpr(fpr, tpr, f) == pytest.approx(best, abs=1e-12)


def test_epsilon_bound_exceeds_a_known_epsilon_at_most_at_the_stated_rate():
    """Randomized response of the membership bit at eps = 1, independent trials: the 95% lower bound may exceed 1 in
    at most 5% of audits (plus three binomial standard errors of the simulation)."""
    rng = np.random.default_rng(51)
    eps, n, trials = 1.0, 1500, 200
    p = np.exp(eps) / (1 + np.exp(eps))
    out = []
    for r in range(trials):
        y = rng.random(n) < 0.5
        bit = np.where(y, rng.random(n) < p, rng.random(n) >= p).astype(float)
        out.append(metrics.empirical_epsilon(bit, y, confidence=0.95, seed=r)["epsilon_lower_bound"])
    out = np.asarray(out)
    assert np.mean(out > eps) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / trials)
    assert out.mean() > 0.7        # and it is a useful bound, not 0


def test_audit_prints_the_confidence_it_was_given(tmp_path, capsys):
    """--confidence 0.999 was printed "nominal 100% confidence" (and 0.975 "98%"): rounded up."""
    from dptopic.cli.main import main
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=20, seed=1).corpus
    src = tmp_path / "docs.txt"
    word = ["word" + "".join(chr(97 + int(ch)) for ch in str(w)) for w in range(c.vocab_size)]  # letters only
    src.write_text("\n".join(" ".join(word[w] for w in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]])
                             for d in range(c.n_docs)))
    assert main(["audit", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--corpus", str(src),
                 "--shadows", "4", "--seed", "0", "--confidence", "0.999", "--out", str(tmp_path / "a"),
                 "--quiet"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "99.9% confidence" in printed and "100%" not in printed.split("empirical epsilon")[1][:200]


# ------------------------------------------------------------ the bound on scores clustered by model
def _clustered_rr(T, D, rho, eps, rng):
    """T models x D documents whose every trial is exactly eps-DP randomized response on membership, with the coins
    of one model correlated (rho), as a model that fits all its documents more sharply shifts their scores."""
    from scipy.stats import norm

    y = np.zeros((T, D), bool)
    for t in range(T):
        y[t, rng.permutation(D) < D // 2] = True
    z = np.sqrt(rho) * rng.normal(size=(T, 1)) + np.sqrt(1 - rho) * rng.normal(size=(T, D))
    p = np.exp(eps) / (1 + np.exp(eps))
    return np.where(y, norm.cdf(z) < p, norm.cdf(z) >= p).ravel().astype(float), y.ravel()


@pytest.mark.parametrize("rho", [pytest.param(0.0, marks=pytest.mark.slow), 0.2])   # correlated models by default
def test_the_bound_with_models_as_clusters_exceeds_the_true_epsilon_at_most_at_its_confidence(rho):
    """95% bounds over 200 simulated audits of a mechanism of known epsilon = 1: with the models given as clusters the
    bound exceeds 1 in at most 5% + 2 standard errors (0.081) of them, whether or not the trials within a model are
    correlated; the pooled bound, which treats every score as an independent trial, does so in about a quarter of
    them at rho = 0.2 (the reason groups exist), and is valid at rho = 0."""
    from dptopic.attacks.metrics import empirical_epsilon

    rng = np.random.default_rng(4)
    T, D, reps = 64, 200, 200
    clustered, pooled = [], []
    for r in range(reps):
        s, y = _clustered_rr(T, D, rho, 1.0, rng)
        clustered.append(empirical_epsilon(s, y, seed=r, groups=np.repeat(np.arange(T), D))["epsilon_lower_bound"])
        pooled.append(empirical_epsilon(s, y, seed=r)["epsilon_lower_bound"])
    limit = 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps)
    assert np.mean(np.array(clustered) > 1.0) <= limit
    if rho > 0:
        assert np.mean(np.array(pooled) > 1.0) > 0.15
    else:
        assert np.mean(np.array(pooled) > 1.0) <= limit
        assert np.mean(clustered) > 0.9 * np.mean(pooled)       # little power lost when nothing is correlated


def test_clustered_clopper_pearson_without_over_dispersion_is_clopper_pearson_up_to_the_degrees_of_freedom():
    from dptopic.attacks.metrics import clopper_pearson, clustered_clopper_pearson

    k_g = np.array([[5], [5], [5], [5], [5], [5], [5], [5]])          # identical clusters: no excess variance
    n_g = np.full_like(k_g, 10)
    lo, hi = clustered_clopper_pearson(k_g, n_g, 0.025)
    clo, chi = clopper_pearson(40, 80, 0.025)
    assert lo[0] < clo and hi[0] > chi                                    # widened by (t_79 / t_7)^2 only
    assert lo[0] > 0.25 and hi[0] < 0.75
    spread = np.array([[0], [10], [0], [10], [0], [10], [0], [10]])       # same 40 of 80, wholly clustered
    lo2, hi2 = clustered_clopper_pearson(spread, n_g, 0.025)
    assert lo2[0] < lo[0] - 0.1 and hi2[0] > hi[0] + 0.1


def test_too_few_models_fall_back_to_the_nominal_bound():
    from dptopic.attacks.metrics import empirical_epsilon

    s, y = _clustered_rr(3, 200, 0.0, 1.0, np.random.default_rng(0))
    a = empirical_epsilon(s, y, seed=1, groups=np.repeat(np.arange(3), 200))
    b = empirical_epsilon(s, y, seed=1)
    assert a == b and a["confidence_note"].startswith("nominal")
    c = empirical_epsilon(*_clustered_rr(8, 200, 0.0, 1.0, np.random.default_rng(0)), seed=1,
                          groups=np.repeat(np.arange(8), 200))
    assert c["confidence_note"].startswith("approximate") and c["n_models"] == 4


# ---------------------------------------------------------------------------------------------------------------------
# The delete-a-group jackknife over shadow pairs (the models' share of an audit's AUC standard error).

def _shadows(n_shadows, n_docs=60, seed=0):
    rng = np.random.default_rng(seed)
    members = lira.complementary_halves(n_docs, n_shadows, rng)
    # a member scores higher, and each model has its own shift: the spread a jackknife over models sees
    scores = rng.normal(size=(n_shadows, n_docs)) + 0.8 * members + rng.normal(size=(n_shadows, 1))
    return lira.ShadowScores(scores, members, {})


def _auc(shadows, n_targets):
    s, y = lira.leave_one_out(shadows, n_targets)["lira_online"]
    return float(roc_auc_score(y, s))


def _left_out(shadows, n_targets, G):
    """AUC with each group of pairs left out in turn (pair p in group p % G), NumPy only."""
    P = shadows.n_shadows // 2
    out, sizes = [], []
    for g in range(G):
        keep = (np.arange(shadows.n_shadows) // 2) % G != g
        sub = lira.ShadowScores(shadows.scores[keep], shadows.members[keep], {})
        out.append(_auc(sub, int(keep[:n_targets].sum())))
        sizes.append(sum(1 for p in range(P) if p % G == g))
    return np.array(out), np.array(sizes)


def test_equal_groups_give_the_classical_delete_a_group_jackknife():
    sh = _shadows(16)                                   # 8 pairs in 4 groups of 2
    se, G, covered = lira.model_jackknife_se(sh, max_groups=4)
    v, sizes = _left_out(sh, 16, 4)
    assert G == 4 and covered and set(sizes) == {2}
    assert se["lira_online"] == pytest.approx(np.sqrt(3 / 4 * ((v - v.mean()) ** 2).sum()), rel=1e-12)


def test_unequal_groups_are_weighted():
    """5 pairs in 3 groups (2, 2, 1 pairs): the weighted jackknife of Busing et al. (1999), not the equal-group
    formula, which would treat the one-pair group's AUC as if it left out as much as the others."""
    sh = _shadows(10, seed=3)
    se, G, covered = lira.model_jackknife_se(sh, max_groups=3)
    v, sizes = _left_out(sh, 10, 3)
    assert list(sizes) == [2, 2, 1] and G == 3 and covered
    full = _auc(sh, 10)
    # Busing, Meijer & van der Leeden (1999), written out term by term: n = 5 pairs, g = 3 groups of m_j pairs
    n, g = 5, 3
    theta_j = g * full - sum((1 - sizes[j] / n) * v[j] for j in range(g))
    var = 0.0
    for j in range(g):
        h_j = n / sizes[j]
        pseudo_j = h_j * full - (h_j - 1) * v[j]
        var += (pseudo_j - theta_j) ** 2 / (h_j - 1)
    expected = np.sqrt(var / g)
    assert se["lira_online"] == pytest.approx(expected, rel=1e-12)
    assert not np.isclose(expected, np.sqrt(2 / 3 * ((v - v.mean()) ** 2).sum()), rtol=1e-3)
    h_all = 5 / sizes
    pseudo = h_all * full - (h_all - 1) * v       # centring on the pseudo-values' plain mean is another estimator
    assert not np.isclose(expected, np.sqrt(np.sum((pseudo - pseudo.mean()) ** 2 / (h_all - 1)) / 3), rtol=1e-4)


def test_one_target_is_said_to_leave_its_own_training_out():
    """With one attacked target the group holding it cannot be left out: the jackknife covers the shadows' training
    only, and the audit's settings say so."""
    sh = _shadows(12)
    se, G, covered = lira.model_jackknife_se(sh, n_targets=1)
    assert not covered and G == 5 and np.isfinite(se["lira_online"])
    assert lira.model_jackknife_se(sh, n_targets=3)[2]          # targets in two groups: each can be left out
    corpus_like = lira.model_jackknife_se(_shadows(4))
    assert corpus_like == ({}, 0, False)


def test_audit_settings_name_the_missing_target_spread():
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=("poisson", 20), seed=1).corpus
    fn = lira.estimator_trainer("lda", n_topics=2, n_iter=5)
    one = lira.run_lira(c, fn, n_shadows=8, n_targets=1, seed=0, verbose=0)
    every = lira.run_lira(c, fn, n_shadows=8, seed=0, verbose=0)
    assert "targets' own training is not included" in one.settings["auc_se"]
    assert "targets' own training" not in every.settings["auc_se"]
    assert "auc_se_models" in one.summaries["lira_online"]
"""``dptopic.attacks.lira``."""
import dptopic


# ---- item 9: LiRA's halves are equal on an odd corpus
def test_lira_halves_are_equal_on_an_odd_corpus():
    from dptopic.attacks.lira import run_lira

    c = lda_corpus(n_docs=31, vocab_size=20, n_topics=2, doc_length=10, seed=1).corpus

    def train(corpus, rng):
        return dptopic.LDA(n_topics=2, n_iter=3, seed=rng, verbose=0).fit(corpus).components_

    res = run_lira(c, train, n_shadows=4, seed=0, verbose=0)
    assert res.settings["n_docs_audited"] == 30 and "sat the audit out" in res.settings["halves"]


def test_every_registered_trainers_passes_have_the_common_name_n_iter():
    """The audit reaches a trainer's passes over the data (its ``n_iter``, ``n_epochs`` or ``rounds``) by the common
    name ``n_iter``: every parameter that dptopic train sets by --iterations, --epochs or --rounds is one of them."""
    from dptopic.attacks.lira import _ALIASES
    from dptopic.models.registry import TRAINERS

    passes = {p for t in TRAINERS.values() for p in t.parameters() if t.flag(p) in ("--iterations", "--epochs",
                                                                                     "--rounds")}
    assert passes and passes <= {"n_iter", *_ALIASES["n_iter"]}, passes
