"""Scoring membership-inference attacks: ROC, AUC, TPR at low FPR, an empirical ε lower bound.

Conventions: ``labels`` are 1 for members and 0 for non-members; a HIGHER score means
"more likely a member". TPR at a target FPR is the TPR of the ROC point with the
largest FPR not above the target (Carlini et al. 2022; Manzonelli et al. 2024).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.stats import beta as _beta
from scipy.stats import t as _student

from ..errors import DPTopicError

FPR_TARGETS = (0.01, 0.001, 0.0)


def _check(scores, labels):
    s = np.asarray(scores, dtype=np.float64).ravel()
    raw = np.asarray(labels).ravel()
    # members 1 (True), non-members 0 or -1 (False), as scikit-learn's roc_curve reads them without a pos_label
    values = set(raw.tolist())
    if raw.dtype == object or not (values <= {0, 1} or values <= {-1, 1}):
        shown = ", ".join(repr(v) for v in sorted(values, key=repr)[:4]) + (", ..." if len(values) > 4 else "")
        raise DPTopicError(f"labels take the values {shown}: give 1 (or True) for members and 0, -1 (or False) for"
                           " non-members.")
    y = raw == 1
    if s.shape != y.shape:
        raise DPTopicError(f"scores ({s.size}) and labels ({y.size}) differ in length: give one label per score.")
    if y.all() or (~y).all():
        raise DPTopicError("an attack needs both members and non-members to be scored; got only one kind.")
    n_nan = int(np.isnan(s).sum())
    if n_nan:
        # a NaN is not a score: read as the lowest, it would count as "non-member" and move the ROC and the bound
        raise DPTopicError(f"{n_nan} of the {s.size} scores are NaN: score every document, or drop the NaN scores"
                           " together with their labels.")
    if not np.all(np.isfinite(s)):
        s = np.clip(s, -np.finfo(float).max, np.finfo(float).max)
    return s, y


def roc(scores, labels):
    """``(fpr, tpr, thresholds)`` of the ROC curve (scikit-learn's ``roc_curve``, all points kept)."""
    from sklearn.metrics import roc_curve  # scikit-learn: heavy, loaded when used

    s, y = _check(scores, labels)
    return roc_curve(y, s, drop_intermediate=False)


def tpr_at_fpr(fpr, tpr, target: float) -> float:
    """TPR at the largest ROC point with FPR ≤ ``target``."""
    ok = fpr <= target + 1e-15
    return float(tpr[ok].max()) if ok.any() else 0.0


def auc_standard_error(auc: float, n_pos: int, n_neg: int) -> float:
    """Standard error of the AUC (Hanley & McNeil 1982, eq. 2). It assumes every score an independent trial: pooled
    attack scores (a document scored under many models) are not, and :func:`auc_bootstrap_se` is the honest figure
    for them."""
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    return float(np.sqrt(max(var, 0.0)))


AUC_BOOTSTRAP = 200
"""Resamples of the AUC's bootstrap over documents (:func:`auc_bootstrap_se`)."""

AUC_SE_BOOTSTRAP = (f"bootstrap over documents ({AUC_BOOTSTRAP} resamples of the audited documents with replacement,"
                    " each keeping all its scores; Davison & Hinkley 1997, Sec. 3.8)")
AUC_SE_HANLEY_MCNEIL = "Hanley & McNeil (1982): assumes every score an independent trial"


def _weighted_auc_parts(s, y):
    """What :func:`_weighted_auc` needs, computed once: the scores' order, and for each score in that order the index
    ``2 * (its tie group) + (1 if a member)`` (tie groups numbered in ascending order), and the number of groups."""
    order = np.argsort(s, kind="stable")
    ss = s[order]
    tie = np.cumsum(np.r_[True, ss[1:] != ss[:-1]]) - 1
    return order, 2 * tie + y[order].astype(np.int64), int(tie[-1]) + 1 if len(tie) else 0


def _weighted_auc(slot, n_ties, w_sorted) -> float:
    """The AUC (ties counted one half) when the score in ``slot`` (from :func:`_weighted_auc_parts`) counts
    ``w_sorted`` times; NaN without both kinds."""
    counts = np.bincount(slot, w_sorted, 2 * n_ties).reshape(n_ties, 2)
    wn, wp = counts[:, 0], counts[:, 1]
    P, N = wp.sum(), wn.sum()
    if P <= 0 or N <= 0:
        return float("nan")
    below = np.cumsum(wn) - wn
    return float((wp * (below + 0.5 * wn)).sum() / (P * N))


def auc_bootstrap_se(scores, labels, groups, n_boot: int = AUC_BOOTSTRAP, seed=None) -> float:
    """Standard error of the AUC by a bootstrap over ``groups`` (Davison & Hinkley 1997, Sec. 3.8, resampling
    clusters): the groups (an attack's documents) are drawn with replacement, each bringing all its scores, and the
    AUC recomputed; the SE is the spread of those AUCs. Scores of one document under many models are correlated, and
    the models are one another's shadows, so unlike :func:`auc_standard_error` this counts the documents, not the
    scores, as the independent units. ``seed``: an int or a Generator (the resamples are drawn from it)."""
    s, y = _check(scores, labels)
    g = np.asarray(groups).ravel()
    if g.shape != s.shape:
        raise DPTopicError(f"groups ({g.size}) and scores ({s.size}) differ in length: give one group per score.")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 2:
        raise DPTopicError(f"invalid n_boot={n_boot!r}: give a whole number >= 2 of bootstrap resamples.")
    _, gi = np.unique(g, return_inverse=True)
    G = int(gi.max()) + 1
    if G < 2:
        raise DPTopicError("a bootstrap over groups needs at least 2 groups (documents).")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    order, slot, n_ties = _weighted_auc_parts(s, y)
    gs = gi[order]
    aucs = np.array([_weighted_auc(slot, n_ties, np.bincount(rng.integers(G, size=G), minlength=G)[gs]
                                   .astype(np.float64)) for _ in range(int(n_boot))])
    aucs = aucs[np.isfinite(aucs)]
    return float(np.std(aucs, ddof=1)) if len(aucs) >= 2 else float("nan")


def clopper_pearson(k, n, alpha: float):
    """Two one-sided Clopper–Pearson bounds at level ``alpha`` each: ``(lower, upper)`` for k successes of n."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    lo = np.where(k > 0, _beta.ppf(alpha, np.maximum(k, 1e-300), n - k + 1), 0.0)
    hi = np.where(k < n, _beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    return lo, hi


RELATIONS = ("replace_one", "add_remove")


def epsilon_from_rates(p, q, delta: float = 0.0, relation: str = "replace_one"):
    """The largest ε that a test with Pr[event | member] ≥ ``p`` and Pr[event | non-member] ≤ ``q`` refutes.

    ``replace_one``: the member and non-member training sets differ by one document replaced by another,
    so (ε, δ)-DP for that relation gives p ≤ e^ε q + δ and the bound is ``log((p − δ)/q)``.
    ``add_remove``: a claim for adding or removing one document covers a replacement only by group
    privacy over two steps, p ≤ e^{2ε} q + (1 + e^ε) δ (Dwork & Roth 2014, Thm 2.2 applied twice); the
    bound is the log of the positive root x of q x² + δ x + (δ − p) = 0.
    """
    if relation not in RELATIONS:
        raise DPTopicError(f"invalid relation={relation!r}: choose one of {', '.join(RELATIONS)}.")
    p, q = np.asarray(p, float), np.asarray(q, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if relation == "replace_one":
            x = np.maximum(p - delta, 0) / q
        elif delta == 0:
            x = np.sqrt(np.maximum(p, 0) / q)
        else:
            x = np.where(q > 0, (np.sqrt(delta * delta + 4 * q * np.maximum(p - delta, 0)) - delta) / (2 * q),
                         np.maximum(p - delta, 0) / delta)
        out = np.log(x)
    return np.where(np.isnan(out), 0.0, np.maximum(out, 0.0))


def _eps_bounds(s, y, thresholds, delta, alpha, relation="replace_one"):
    """Lower bound on ε at each threshold ("member" if score ≥ t), both directions of the test."""
    pos, neg = s[y], s[~y]
    ps, ns = np.sort(pos), np.sort(neg)
    tp = len(ps) - np.searchsorted(ps, thresholds, side="left")
    fp = len(ns) - np.searchsorted(ns, thresholds, side="left")
    tpr_lo, _ = clopper_pearson(tp, len(ps), alpha)
    _, fpr_hi = clopper_pearson(fp, len(ns), alpha)
    a = epsilon_from_rates(tpr_lo, fpr_hi, delta, relation)            # the event "score >= t"
    b = epsilon_from_rates(1 - fpr_hi, 1 - tpr_lo, delta, relation)    # its complement, from non-members' side
    return np.fmax(a, b)


def clustered_clopper_pearson(k_g, n_g, alpha: float):
    """One-sided Clopper–Pearson bounds at level ``alpha`` for successes ``k_g`` of ``n_g`` trials in G clusters
    (rows; columns: several events at once), whose trials within a cluster may be correlated: the bounds of the
    pooled rate at the effective sample size ``n / deff`` (Korn & Graubard 1998), where the design effect ``deff``
    (at least 1) is the cluster-robust variance of the pooled rate over its binomial variance, and the
    degrees-of-freedom factor ``(t_{n-1} / t_{G-1})^2`` of the 1 − alpha quantiles widens them further when there
    are few clusters. G counts the clusters holding trials; with fewer than two the bounds are ``(0, 1)``. Returns
    ``(lower, upper)``."""
    k_g, n_g = np.asarray(k_g, float), np.asarray(n_g, float)
    k, n = k_g.sum(0), n_g.sum(0)
    # G: the clusters that hold trials of the event (a model with no members says nothing of the members' rate).
    # With fewer than two, the spread between clusters cannot be estimated (the cluster-robust variance would be 0
    # and the bound that of independent trials): the bounds are then the trivial [0, 1]
    G = np.count_nonzero(n_g > 0, axis=0)
    ok = G >= 2
    Gs, ns = np.where(ok, G, 2), np.where(ok, n, 2.0)
    p = np.where(ok, k / ns, 0.5)
    v = Gs / (Gs - 1) * ((k_g - p * n_g) ** 2).sum(0) / ns ** 2
    vs = p * (1 - p) / ns
    deff = np.where(vs > 0, np.maximum(v / np.where(vs > 0, vs, 1.0), 1.0), 1.0)
    df = (_student.ppf(1 - alpha, ns - 1) / _student.ppf(1 - alpha, Gs - 1)) ** 2
    n_eff = np.minimum(ns / deff * df, ns)
    k_eff = p * n_eff
    lo = np.where(k_eff > 0, _beta.ppf(alpha, np.maximum(k_eff, 1e-300), n_eff - k_eff + 1), 0.0)
    hi = np.where(k_eff < n_eff, _beta.ppf(1 - alpha, k_eff + 1, np.maximum(n_eff - k_eff, 1e-300)), 1.0)
    return np.where(ok, lo, 0.0), np.where(ok, hi, 1.0)


def _eps_bounds_clustered(s, y, g, thresholds, delta, alpha, relation="replace_one"):
    """:func:`_eps_bounds` with the trials clustered by ``g`` (:func:`clustered_clopper_pearson`)."""
    groups = np.unique(g)
    tp, fp, npos, nneg = [], [], [], []
    for c in groups:
        mine = g == c
        ps, ns = np.sort(s[mine & y]), np.sort(s[mine & ~y])
        tp.append(len(ps) - np.searchsorted(ps, thresholds, side="left"))
        fp.append(len(ns) - np.searchsorted(ns, thresholds, side="left"))
        npos.append(np.full(len(thresholds), len(ps)))
        nneg.append(np.full(len(thresholds), len(ns)))
    tpr_lo, _ = clustered_clopper_pearson(np.array(tp), np.array(npos), alpha)
    _, fpr_hi = clustered_clopper_pearson(np.array(fp), np.array(nneg), alpha)
    a = epsilon_from_rates(tpr_lo, fpr_hi, delta, relation)
    b = epsilon_from_rates(1 - fpr_hi, 1 - tpr_lo, delta, relation)
    return np.fmax(a, b)


MIN_BOUND_CLUSTERS = 4
"""Fewer models (clusters) than this, and :func:`empirical_epsilon` cannot split them into two halves of two: it then
treats the scores as independent trials (its confidence nominal)."""


def empirical_epsilon(scores, labels, delta: float = 0.0, confidence: float = 0.95, seed=0,
                      relation: str = "replace_one", groups=None) -> dict:
    """A lower bound on ε from the attack's scores (Jagielski et al. 2020; Nasr et al. 2021).

    A threshold test turns its rates into a bound (:func:`epsilon_from_rates`); TPR is bounded below and
    FPR above by Clopper–Pearson intervals, each at level (1 − confidence)/2, so that both hold jointly
    (union bound). The threshold is chosen on a random half of the scores and the bound evaluated on the
    other half. ``relation``: the neighbouring relation of the claim it is set beside; LiRA's IN and OUT
    training sets (random halves) differ by one document replaced, so an ``add_remove`` claim is compared
    through group privacy.

    The confidence is exact only if the scored trials are independent. Scores pooled from one attack are not: a
    model that fits its documents more sharply shifts all of their scores together. ``groups`` (the model each score
    comes from) makes the bound account for that: the threshold is chosen on half of the models and the bound
    evaluated on the others, with Clopper–Pearson bounds at the effective sample size of scores clustered by model
    (:func:`clustered_clopper_pearson`). That confidence is approximate: it leaves out that the models are one
    another's shadows and score the same documents (``docs/auditing.md``). Without ``groups`` it is nominal.
    """
    if not 0 < confidence < 1:
        raise DPTopicError(f"invalid confidence={confidence!r}: must lie in (0, 1).")
    if not 0 <= delta < 1:
        raise DPTopicError(f"invalid delta={delta!r}: must lie in [0, 1).")
    if relation not in RELATIONS:
        raise DPTopicError(f"invalid relation={relation!r}: choose one of {', '.join(RELATIONS)}.")
    s, y = _check(scores, labels)
    rng = np.random.default_rng(seed)
    g = None
    if groups is not None:
        g = np.asarray(groups).ravel()
        if len(g) != len(s):
            raise DPTopicError(f"groups has {len(g)} entries for {len(s)} scores: give the model of every score.")
        _, g = np.unique(g, return_inverse=True)
        if g.max() + 1 < MIN_BOUND_CLUSTERS:
            g = None
    if g is None:
        sel = rng.random(len(s)) < 0.5
    else:
        G = int(g.max()) + 1
        sel = (rng.permutation(G) < G // 2)[g]       # the threshold's half: half of the models, all their scores
    alpha = (1 - confidence) / 2
    if y[sel].all() or (~y[sel]).all() or y[~sel].all() or (~y[~sel]).all():
        raise DPTopicError("too few scores for an epsilon lower bound: score more members and non-members.")
    cands = np.unique(s[sel])
    if g is None:
        eb = _eps_bounds(s[sel], y[sel], cands, delta, alpha, relation)
        bound = lambda rel: float(_eps_bounds(s[~sel], y[~sel], np.array([t]), delta, alpha, rel)[0])  # noqa: E731
    else:
        eb = _eps_bounds_clustered(s[sel], y[sel], g[sel], cands, delta, alpha, relation)
        bound = lambda rel: float(_eps_bounds_clustered(s[~sel], y[~sel], g[~sel], np.array([t]), delta,  # noqa: E731
                                                        alpha, rel)[0])
    t = cands[int(np.argmax(eb))]
    out = {"epsilon_lower_bound": bound(relation), "relation": relation, "confidence": confidence,
           "epsilon_lower_bound_replace_one": bound("replace_one"),
           "delta": delta, "threshold": float(t),
           "n_members": int(y[~sel].sum()), "n_nonmembers": int((~y[~sel]).sum())}
    if g is None:
        out["confidence_note"] = "nominal: exact for independent trials; pooled attack scores share models"
        out["method"] = ("Clopper-Pearson bounds on TPR and FPR at one threshold chosen on a held-out half"
                         " (Jagielski et al. 2020; Nasr et al. 2021)")
    else:
        out["confidence_note"] = ("approximate: the scores' clustering by model is accounted for; that the models"
                                  " are one another's shadows and score the same documents is not")
        out["method"] = ("Clopper-Pearson bounds on TPR and FPR at the effective sample size of scores clustered by"
                         " model (Korn & Graubard 1998), at one threshold chosen on half of the models and evaluated"
                         " on the other half (Jagielski et al. 2020; Nasr et al. 2021)")
        out["n_models"] = int(len(np.unique(g[~sel])))
    return out


def summarize(scores, labels, groups=None, n_boot: int = AUC_BOOTSTRAP, seed=None) -> dict:
    """AUC (with its standard error) and TPR at FPR = 1%, 0.1% and 0.

    ``groups`` (one per score: the document it scores) gives the AUC's standard error by a bootstrap over the groups
    (:func:`auc_bootstrap_se`, ``n_boot`` resamples from ``seed``), as pooled attack scores need; without it the
    standard error is Hanley & McNeil's, which assumes independent scores. ``auc_se_method`` names the estimator.
    """
    from sklearn.metrics import roc_auc_score  # scikit-learn: heavy, loaded when used

    s, y = _check(scores, labels)
    fpr, tpr, _ = roc(s, y)
    auc = float(roc_auc_score(y, s))
    if groups is None:
        out = {"auc": auc, "auc_se": auc_standard_error(auc, int(y.sum()), int((~y).sum())),
               "auc_se_method": AUC_SE_HANLEY_MCNEIL}
    else:
        method = AUC_SE_BOOTSTRAP if n_boot == AUC_BOOTSTRAP else AUC_SE_BOOTSTRAP.replace(
            f"({AUC_BOOTSTRAP} resamples", f"({int(n_boot)} resamples")
        out = {"auc": auc, "auc_se": auc_bootstrap_se(s, y, groups, n_boot, seed), "auc_se_method": method}
    for f in FPR_TARGETS:
        out[f"tpr_at_fpr_{f:g}"] = tpr_at_fpr(fpr, tpr, f)
    out["n_members"], out["n_nonmembers"] = int(y.sum()), int((~y).sum())
    return out


def plot_roc(curves: dict, path, title: str = "ROC (log-log)", private: bool = False) -> Path:
    """Write a log–log ROC plot: ``curves`` maps a name to ``(scores, labels)``; ``private``: owner-only (0600)."""
    import matplotlib  # matplotlib: heavy, loaded only to draw

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # matplotlib: heavy, loaded only to draw

    from .._io import save_fig  # looked up when called: tests patch it at its source

    if not isinstance(curves, dict) or not curves:
        raise DPTopicError("plot_roc needs at least one curve: give {name: (scores, labels)}.")
    from sklearn.metrics import roc_auc_score  # scikit-learn: heavy, loaded when used

    fig, ax = plt.subplots(figsize=(5, 5))
    lo = 1.0
    drawn = []          # [names, fpr, tpr, auc]: a curve equal to one already drawn joins its legend entry
    for name, (s, y) in curves.items():
        fpr, tpr, _ = roc(s, y)
        lo = min(lo, 1.0 / max(1, int((~np.asarray(y).astype(bool)).sum())))
        same = next((d for d in drawn if d[1].shape == fpr.shape and np.array_equal(d[1], fpr)
                     and np.array_equal(d[2], tpr)), None)
        if same is not None:
            same[0].append(name)
        else:
            drawn.append([[name], fpr, tpr, roc_auc_score(y, s)])
    styles = ("-", "--", "-.", ":")
    for i, (names, fpr, tpr, auc) in enumerate(drawn):  # line styles vary, so curves that cross stay visible
        ax.plot(np.maximum(fpr, 1e-12), np.maximum(tpr, 1e-12), styles[i % len(styles)],
                label=f"{' = '.join(names)} (AUC {auc:.3f})")
    ax.plot([lo, 1], [lo, 1], "k--", lw=0.8, label="chance")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, 1)
    ax.set_ylim(lo, 1)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    try:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_fig(fig, path, private=private)
    except (OSError, TypeError) as e:
        raise DPTopicError(f"cannot write the ROC plot to {str(path)!r}"
                           f" ({getattr(e, 'strerror', None) or e}): give a path in a folder you can write.") from None
    finally:
        plt.close(fig)
    return path


def resolvable(n_nonmembers: int, fpr: float) -> bool:
    """Whether ``n_nonmembers`` scores can resolve a false-positive rate ``fpr``: at least ``1/fpr`` of them (with
    fewer, the smallest FPR above 0 is already above ``fpr``, and "TPR at ``fpr``" is the TPR at FPR 0)."""
    return n_nonmembers * fpr >= 1 - 1e-9
