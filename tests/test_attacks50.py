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
    assert "nominal 99.9% confidence" in printed and "100%" not in printed.split("empirical epsilon")[1][:200]
