"""Review 50 of the attacks' statistics: the models' jackknife with one or two attacked targets, the audit's printed
confidence, and checks of the ROC and the epsilon bound against references (scikit-learn, brute force, a mechanism of
known epsilon)."""
import numpy as np
import pytest

from dptopic.attacks import lira, metrics


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
        from sklearn.metrics import roc_auc_score
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


@pytest.mark.parametrize("rho", [0.0, 0.2])
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
