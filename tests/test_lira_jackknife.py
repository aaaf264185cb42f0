"""The delete-a-group jackknife over shadow pairs (the models' share of an audit's AUC standard error)."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from dptopic.attacks import lira, metrics


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
