"""LiRA, the Huang et al. baselines and the attack metrics."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from dptopic.attacks import lira, metrics
from dptopic.attacks.baselines import huang_scores
from dptopic.cli.main import main
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
import json
import os
import string
import warnings

import dptopic
from dptopic.attacks import run_lira
from helpers import claiming_trainer


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
    from dptopic.cli._trainers import trainer_flag
    from dptopic.models.registry import TRAINERS

    passes = {p for t in TRAINERS.values() if t.cli for p in t.parameters()
              if trainer_flag(t.name, p) in ("--iterations", "--epochs", "--rounds")}
    assert passes and passes <= {"n_iter", *_ALIASES["n_iter"]}, passes


# --------------------------------------------------------------------------------------------------------------
# The audit's uncertainty and what it records (sized as 20 Newsgroups, 1,000-2,000 documents): an AUC standard error
# that counts documents and models rather than pooled scores, a record of what was attacked (and a report that refuses
# another model's audit), local-DP units, the corpus read into a saved model's vocabulary, a seeded model's caveat,
# the coverage check, one-line API errors and thread-safe warnings, ldp-doc, and one rounding of the claim.
def _fake(report, n_topics=4):
    """Plain (leaky) LDA whose report claims whatever ``report`` says (10 sweeps)."""
    return claiming_trainer(report, n_topics, n_iter=10)


DOC_CLAIM = {"private": True, "epsilon": 50.0, "delta": 1e-5, "unit": "document",
             "neighbouring_relation": "document-level replacement"}


def _one_line(capsys):
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def _flat(text):
    return " ".join(text.split())     # the console wraps long lines


# ----------------------------------------------------------------- 1: the AUC's standard error
def _correlated_scores(rng, D=150, T=8):
    """Scores of T targets (complementary pairs) x D documents whose members stand out by a per-document amount:
    a document that is easy to spot is easy under every target, so its scores are strongly correlated."""
    y = np.zeros((T, D), bool)
    for r in range(T // 2):
        half = rng.permutation(D) < D // 2
        y[2 * r], y[2 * r + 1] = half, ~half
    effect = 0.6 + rng.normal(0, 1.0, D)
    s = effect[None, :] * y + rng.normal(0, 0.7, (T, D))
    return s.ravel(), y.ravel(), np.tile(np.arange(D), T)


def test_bootstrap_over_documents_matches_the_spread_over_replications():
    rng = np.random.default_rng(1)
    R = 300
    aucs = [roc_auc_score(y, s) for s, y, _ in (_correlated_scores(rng) for _ in range(R))]
    spread = np.std(aucs, ddof=1)
    spread_se = spread / np.sqrt(2 * (R - 1))           # the standard error of a standard deviation
    boot, hm = [], []
    for i in range(15):
        s, y, g = _correlated_scores(rng)
        out = metrics.summarize(s, y, groups=g, seed=i)
        assert "bootstrap over documents" in out["auc_se_method"]
        boot.append(out["auc_se"])
        hm.append(metrics.summarize(s, y)["auc_se"])
    boot_se = np.std(boot, ddof=1) / np.sqrt(len(boot))
    assert abs(np.mean(boot) - spread) <= 3 * np.hypot(spread_se, boot_se), (np.mean(boot), spread)
    # Hanley & McNeil treat the 1,200 scores as independent: far below the real spread, and below the bootstrap
    assert np.mean(hm) < 0.75 * spread and np.mean(hm) < 0.75 * np.mean(boot)


def test_weighted_auc_is_sklearns():
    rng = np.random.default_rng(0)
    s, y = np.round(rng.normal(size=400), 1), rng.random(400) < 0.4     # with ties
    w = rng.integers(0, 3, 400).astype(float)
    order, slot, n = metrics._weighted_auc_parts(s, y)
    assert metrics._weighted_auc(slot, n, w[order]) == pytest.approx(roc_auc_score(y, s, sample_weight=w))
    assert metrics.summarize(s, y)["auc_se_method"].startswith("Hanley & McNeil")


def test_audit_standard_error_matches_independent_audits():
    """Twenty independent audits (documents drawn afresh from one population, seeds afresh): the AUC's spread is what
    the audit's own standard error says, and more than documents alone (or Hanley & McNeil) account for."""
    population = lda_corpus(n_docs=2000, vocab_size=80, n_topics=3, doc_length=("poisson", 40), alpha=0.3, beta=0.05,
                            seed=7).corpus
    rows = []
    for r in range(20):
        c = population.subset(np.sort(np.random.default_rng(500 + r).choice(population.n_docs, 100, replace=False)))
        res = run_lira(c, lira.estimator_trainer("lda", n_topics=3, n_iter=10), n_shadows=8, seed=r, verbose=0, n_jobs=2)
        v = res.summaries["lira_online"]
        assert v["auc_se"] == pytest.approx(np.hypot(v["auc_se_documents"], v["auc_se_models"]))
        s, y = res.pooled["lira_online"]
        rows.append((v["auc"], v["auc_se"], v["auc_se_documents"], metrics.summarize(s, y)["auc_se"]))
    rows = np.array(rows)
    spread = rows[:, 0].std(ddof=1)
    tol = 3 * np.hypot(spread / np.sqrt(2 * (len(rows) - 1)), rows[:, 1].std(ddof=1) / np.sqrt(len(rows)))
    assert abs(rows[:, 1].mean() - spread) <= tol, (rows[:, 1].mean(), spread)
    assert rows[:, 2].mean() < rows[:, 1].mean() and rows[:, 3].mean() < rows[:, 1].mean()
    assert "jackknife over complementary shadow pairs" in res.settings["auc_se"]


def test_standard_error_is_reproducible_and_named(small):
    fn = _fake(DOC_CLAIM)
    a = run_lira(small, fn, n_shadows=4, seed=3, verbose=0)
    b = run_lira(small, fn, n_shadows=4, seed=3, verbose=0)
    assert json.dumps(a.to_json(), sort_keys=True) == json.dumps(b.to_json(), sort_keys=True)
    # 4 shadows leave no pair to spare: documents only, and the settings say so
    assert "auc_se_models" not in a.summaries["lira_online"] and "not included" in a.settings["auc_se"]
    c = run_lira(small, fn, n_shadows=6, seed=np.random.default_rng(3), verbose=0)
    assert "auc_se_models" in c.summaries["lira_online"]


# ----------------------------------------------------------------- 3: local-DP units are documents
@pytest.mark.parametrize("unit", ["document (local DP)", "contributor (local DP, 10 documents)", "user"])
def test_local_document_units_are_compared(small, unit):
    r = run_lira(small, _fake(dict(DOC_CLAIM, unit=unit)), n_shadows=4, seed=0, verbose=0)
    assert r.verdict == "consistent with the claim", r.verdict_note
    assert not any("group privacy" in n for n in r.to_json()["claimed_privacy"].get("notes", []))
    assert lira.unit_covers_document(unit) and not lira.unit_covers_document("word")


# ----------------------------------------------------------------- 6: a seeded model's caveat
def test_a_seeded_models_claim_keeps_the_seed_caveat(small):
    seeded = dict(DOC_CLAIM, noise_reproducible=True,
                  warning="an explicit seed makes the noise reproducible: the guarantee holds only while the seed"
                          " stays secret.")
    r = run_lira(small, _fake(DOC_CLAIM), n_shadows=4, seed=0, verbose=0, claim=seeded)
    c = r.to_json()["claimed_privacy"]
    assert c["noise_reproducible"] is True and lira.SEEDED_NOTE in c["notes"]
    assert "seed stays secret" in r.verdict_note
    # the audit's own shadows (seeded by the audit) carry no such caveat
    assert "noise_reproducible" not in lira.claimed_epsilon(lira.shadow_claim(seeded))


# ----------------------------------------------------------------- 9: API errors and warnings
def test_seed_errors_are_one_line(small):
    for bad in ("abc", -1, True, 1.5):
        with pytest.raises(DPTopicError, match="invalid seed") as e:
            run_lira(small, _fake(DOC_CLAIM), n_shadows=4, seed=bad, verbose=0)
        assert "\n" not in str(e.value)


def test_corpus_error_names_real_functions():
    with pytest.raises(DPTopicError) as e:
        run_lira(["a b c"], _fake(DOC_CLAIM), n_shadows=4, verbose=0)
    msg = str(e.value)
    assert "dptopic.load_corpus" not in msg and "Corpus.from_texts" in msg and "dptopic.corpus.as_corpus" in msg
    assert callable(dptopic.corpus.as_corpus) and callable(dptopic.Corpus.from_jsonl)


def test_shadow_warnings_stay_quiet_in_threads():
    c = lda_corpus(n_docs=60, vocab_size=60, n_topics=3, doc_length=("poisson", 30), seed=5).corpus
    fn = lira.estimator_trainer("docdp", n_topics=3, n_iter=3, epsilon=1.0, delta=1e-5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before = list(warnings.filters)
        run_lira(c, fn, n_shadows=8, seed=0, n_jobs=4, verbose=0)
        after = list(warnings.filters)
    leaked = [w for w in caught if issubclass(w.category, (dptopic.SeededNoiseWarning, dptopic.DataVocabularyWarning))
              or "earlier private fit" in str(w.message)]
    assert not leaked, [str(w.message)[:80] for w in leaked]
    ours = (dptopic.SeededNoiseWarning, dptopic.DataVocabularyWarning, dptopic.errors.SmallCorpusWarning)
    assert not [f for f in after if f not in before and (f[2] in ours or f[1] is not None)]   # ours are gone
    with pytest.warns(dptopic.SeededNoiseWarning):                  # and a user's own seeded fit still warns
        dptopic.DocDPEM(n_topics=3, n_iter=1, seed=1).fit(c)


# ----------------------------------------------------------------- 11: one rounding; owner-only plots
def test_the_claim_is_rounded_once_and_up():
    from dptopic.accounting.card import epsilon_text

    for eps in (1.9975, 0.99995, 1.979):
        _, note = lira.verdict({"epsilon": eps, "unit": "document", "private": True}, 0.1)
        assert f"claimed epsilon {epsilon_text(eps)}" in note, note
        assert float(epsilon_text(eps)) >= eps
    _, note = lira.verdict({"epsilon": 1.0, "unit": "document", "private": True}, 2.34567)
    assert "lower bound 2.34 exceeds" in note          # a lower bound is never shown larger than it is


def test_plot_from_python_is_owner_only(small, tmp_path):
    r = run_lira(small, _fake(DOC_CLAIM), n_shadows=4, seed=0, verbose=0)
    old = os.umask(0o022)
    try:
        p = r.plot(tmp_path / "roc.png")
        q = r.plot(tmp_path / "public.png", private=False)
    finally:
        os.umask(old)
    assert p.stat().st_mode & 0o777 == 0o600 and q.stat().st_mode & 0o777 == 0o644


# ----------------------------------------------------------------- CLI
def _name(i, prefix):
    out = ""
    for _ in range(3):
        i, r = divmod(i, 26)
        out += string.ascii_lowercase[r]
    return prefix + out


def _write(path, corpus, prefix="zork", extra=None):
    with open(path, "w") as fh:
        for d in range(corpus.n_docs):
            words = [_name(int(w), prefix) for w in corpus.word_ids[corpus.doc_ptr[d]:corpus.doc_ptr[d + 1]]]
            fh.write(json.dumps({"text": " ".join(words + (extra(d) if extra else []))}) + "\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory, small):
    d = tmp_path_factory.mktemp("walk3")
    a = _write(d / "a.jsonl", small)
    m1, m2 = d / "m1", d / "m2"
    for out, seed in ((m1, "0"), (m2, "1")):
        assert main(["train", "--corpus", str(a), "--topics", "3", "--iterations", "3", "--out", str(out), "--quiet",
                     "--seed", seed]) == 0
    return d, a, m1, m2


def test_audit_json_records_what_was_attacked(files, capsys):
    from dptopic.attacks.provenance import model_fingerprint

    d, a, m1, _ = files
    out = d / "rec"
    assert main(["audit", "--model", str(m1), "--corpus", str(a), "--shadows", "4", "--seed", "0", "--quiet",
                 "--out", str(out)]) == 0
    s = json.loads((out / "audit.json").read_text())["settings"]
    assert s["audited"]["model"] == str(m1) and s["audited"]["class"] == "LDA"
    assert s["audited"]["fingerprint"] == model_fingerprint(dptopic.load(m1))
    assert s["audited"]["params"]["n_topics"] == 3 and "seed" not in s["audited"]["params"]
    assert s["corpus"]["spec"] == str(a) and "model's vocabulary" in s["corpus"]["read"]
    assert s["dptopic_version"] == dptopic.__version__ and str(m1) in s["attacked"]
    assert s["reproducible"].startswith("yes") and "bootstrap" in s["auc_se"]
    assert "m1" in lira.attacked_caption(s) and "a.jsonl" in lira.attacked_caption(s)   # roc.png's title
    out2 = d / "rec2"       # by procedure; and an audit without --seed says it cannot be re-run
    assert main(["audit", "--algorithm", "lda", "--topics", "3", "--iterations", "3", "--corpus", str(a),
                 "--shadows", "4", "--quiet", "--out", str(out2)]) == 0
    s = json.loads((out2 / "audit.json").read_text())["settings"]
    assert s["audited"] == {"what": "procedure", "algorithm": "lda", "class": "LDA", "params": s["audited"]["params"]}
    assert s["audited"]["params"]["n_iter"] == 3 and s["corpus"]["read"].startswith("built as")
    assert s["seed"] is None and s["reproducible"].startswith("no")
    assert "for reproduction" not in lira.SHADOW_SEED_NOTE
    capsys.readouterr()


def test_report_refuses_an_audit_of_another_model(files, tmp_path, capsys):
    d, a, m1, m2 = files
    audit = d / "rep"
    assert main(["audit", "--model", str(m1), "--corpus", str(a), "--shadows", "4", "--seed", "0", "--quiet",
                 "--out", str(audit)]) == 0
    capsys.readouterr()
    assert main(["report", "--model", str(m1), "--audit", str(audit), "--out", str(tmp_path / "ok.html")]) == 0
    html = (tmp_path / "ok.html").read_text()
    assert "attacked" in html and "sha256:" in html
    capsys.readouterr()
    # m2: another non-private LDA of the same claim (the old check compared only private/epsilon/delta/unit)
    assert main(["report", "--model", str(m2), "--audit", str(audit), "--out", str(tmp_path / "no.html")]) == 2
    err = _one_line(capsys)
    assert "not an audit of" in err and "'dptopic audit' on" in err and not (tmp_path / "no.html").exists()
    # an audit of a procedure: refused for a model trained with other parameters
    proc = d / "proc"
    assert main(["audit", "--algorithm", "lda", "--topics", "4", "--iterations", "3", "--corpus", str(a),
                 "--shadows", "4", "--seed", "0", "--quiet", "--out", str(proc)]) == 0
    capsys.readouterr()
    assert main(["report", "--model", str(m1), "--audit", str(proc), "--out", str(tmp_path / "p.html")]) == 2
    assert "n_topics=4" in _one_line(capsys)
    # an audit.json from before the record: shown, with a one-line warning (here and on the page)
    doc = json.loads((audit / "audit.json").read_text())
    for k in ("audited", "corpus", "attacked", "dptopic_version"):
        doc["settings"].pop(k)
    old = tmp_path / "old"
    old.mkdir()
    (old / "audit.json").write_text(json.dumps(doc))
    assert main(["report", "--model", str(m2), "--audit", str(old), "--out", str(tmp_path / "old.html")]) == 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("warning:") and "\n" not in err and "earlier dptopic" in err
    assert "only its claim was checked" in (tmp_path / "old.html").read_text()


def test_audit_reads_the_corpus_as_evaluate_does(tmp_path, capsys):
    from dptopic.cli._run_common import load_corpus
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    model = tmp_path / "m"
    assert main(["train", "--corpus", str(src), "--stop-words", "none", "--max-vocab", "200", "--topics", "3",
                 "--iterations", "3", "--out", str(model), "--quiet", "--seed", "0"]) == 0
    capsys.readouterr()
    out = tmp_path / "a"
    assert main(["audit", "--model", str(model), "--corpus", str(src), "--shadows", "4", "--seed", "0", "--quiet",
                 "--out", str(out)]) == 0
    got = capsys.readouterr()
    assert "stop word" not in got.err and "outside the model's vocabulary" not in _flat(got.out)
    m = dptopic.load(model)
    want = load_corpus(str(src), vocabulary=m.vocabulary_, into_model=True, tokenizer=m.tokenizer_)
    s = json.loads((out / "audit.json").read_text())["settings"]
    assert s["n_docs"] == want.n_docs and s["vocab_size"] == len(m.vocabulary_)
    assert "coverage" not in s
    assert main(["audit", "--model", str(model), "--corpus", str(src), "--stop-words", "english", "--quiet",
                 "--out", str(tmp_path / "b")]) == 2
    assert "--stop-words" in _one_line(capsys)


def test_coverage_private_vocabulary_model_on_its_own_corpus(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "pv.jsonl"     # 40 words in every document; 10 words repeated 400 times in 4 documents each
    bursty = {int(d): w for w in range(10) for d in rng.choice(1200, 4, replace=False)}
    with open(path, "w") as fh:
        for d in range(1200):
            words = [_name(int(w), "zork") for w in rng.integers(0, 40, 25)]
            words += [_name(bursty[d], "burst")] * 400 if d in bursty else []
            fh.write(json.dumps({"text": " ".join(words)}) + "\n")
    model = tmp_path / "fd"
    assert main(["train", "--algorithm", "docdp", "--topics", "3", "--epsilon", "1", "--delta", "1e-5",
                 "--private-vocabulary", "1,1e-5", "--corpus", str(path), "--out", str(model), "--quiet"]) == 0
    capsys.readouterr()
    assert all(w.startswith("zork") for w in dptopic.load(model).vocabulary_.words)
    # the bursty words are most of the corpus's most frequent tokens, yet this is the training corpus
    assert main(["audit", "--model", str(model), "--corpus", str(path), "--shadows", "4", "--seed", "0", "--quiet",
                 "--out", str(tmp_path / "a")]) == 0
    assert "selected privately" in _flat(capsys.readouterr().out)
    other = tmp_path / "other.jsonl"  # a corpus missing most of the model's words is still refused
    other.write_text("".join(json.dumps({"text": " ".join([_name(w, "zork") for w in range(5)] * 5)}) + "\n"
                             for _ in range(50)))
    assert main(["audit", "--model", str(model), "--corpus", str(other), "--shadows", "4", "--quiet",
                 "--out", str(tmp_path / "b")]) == 2
    assert "selected privately" in _one_line(capsys)


def test_coverage_frequency_cut_model_refuses_a_foreign_corpus(files, small, tmp_path, capsys):
    d, a, m1, _ = files
    # the model's documents plus frequent words it never saw: as many of its words per document as in training,
    # yet a fifth of the tokens are foreign (the old check let this pass as if the model were trained on a word list)
    foreign = _write(tmp_path / "foreign.jsonl", small,
                     extra=lambda doc: [_name(i % 8, "quux") for i in range(int(0.25 * small.doc_lengths[doc]))])
    assert main(["audit", "--model", str(m1), "--corpus", str(foreign), "--shadows", "4", "--quiet",
                 "--out", str(tmp_path / "x")]) == 2
    err = _one_line(capsys)
    assert "outside the model's vocabulary" in err and "--restrict" in err
    assert main(["audit", "--model", str(m1), "--corpus", str(foreign), "--shadows", "4", "--quiet", "--restrict",
                 "--out", str(tmp_path / "y")]) == 0
    capsys.readouterr()


def test_coverage_vocabulary_file_says_what_it_dropped(files, tmp_path, capsys):
    d, a, m1, _ = files
    m = dptopic.load(m1)
    corpus = dptopic.Corpus.from_jsonl(a, vocabulary=m.vocabulary_)
    order, X = np.argsort(np.bincount(corpus.word_ids, minlength=corpus.vocab_size)), corpus.to_bow()
    k = next(k for k in range(3, corpus.vocab_size) if (X[:, order[:k]].sum(axis=1) == 0).sum() <= 20)
    words = [m.vocabulary_.words[i] for i in order[:k]]
    lacking = int((X[:, order[:k]].sum(axis=1) == 0).sum())       # some of the 60 documents hold none of them
    assert 0 < lacking <= 20
    vocab = tmp_path / "v.txt"
    vocab.write_text("\n".join(words + ["notamodelword"]))
    out = tmp_path / "v"
    assert main(["audit", "--model", str(m1), "--corpus", str(a), "--vocabulary", str(vocab), "--shadows", "4",
                 "--seed", "0", "--quiet", "--out", str(out)]) == 0
    printed = _flat(capsys.readouterr().out)
    n_model = len(dptopic.load(m1).vocabulary_)
    assert f"holds {k} of the model's {n_model} words" in printed
    s = json.loads((out / "audit.json").read_text())["settings"]
    assert f"{lacking} documents of the 60 held none of them and were left out" in printed
    assert s["n_docs"] == 60 - lacking and "left out" in s["coverage"]


def test_ldp_doc_is_refused_with_a_reason(files, tmp_path, capsys):
    d, a, *_ = files
    assert main(["audit", "--algorithm", "ldp-doc", "--corpus", str(a), "--shadows", "4", "--quiet",
                 "--out", str(tmp_path / "x")]) == 2
    err = _one_line(capsys)
    assert "unknown algorithm" not in err and "local reports" in err and "lp, olp" in err
    with pytest.raises(DPTopicError, match="cannot attack"):
        lira.estimator_trainer(dptopic.models.LocalDocumentLDA)


def test_lp_audit_from_the_cli_compares_the_document_unit(files, tmp_path, capsys):
    d, a, *_ = files
    assert main(["audit", "--algorithm", "lp", "--topics", "3", "--iterations", "3", "--epsilon", "3",
                 "--corpus", str(a), "--shadows", "4", "--seed", "1", "--quiet", "--out", str(tmp_path / "lp")]) == 0
    out = _flat(capsys.readouterr().out)
    doc = json.loads((tmp_path / "lp" / "audit.json").read_text())
    assert doc["claimed_privacy"]["unit"] == "document (local DP)"
    assert doc["verdict"] != "units differ" and "units differ" not in out and "L times epsilon" not in out


def test_docs_are_truthful():
    from pathlib import Path

    text = " ".join((Path(__file__).parents[2] / "docs" / "auditing.md").read_text().split())
    assert "lp, olp and docdp" not in text and "except `ldp-doc`" in text
    assert "the standard error is Hanley & McNeil's (1982)." not in text and "delete-a-group jackknife" in text
