"""Manzonelli et al. (2024), "Membership inference attacks and privacy in topic modeling".

* :func:`lira_experiment` -- Table 1 and Fig. 2 (online/offline LiRA against the Huang et al. baselines,
  log-log ROC) and Fig. 3 (TPR at low FPR against the number of topics k);
* :func:`fdptm_experiment` -- Figs. 4-6: a private vocabulary (DP set union) composed with the topic
  model: coherence and online LiRA against eps_V (and eps_T with a private trainer);
* :func:`classifier_mia_experiment` -- Zhao et al. (2021) Fig. 7: membership inference on a topic-model
  classifier, attack accuracy with the target's accuracy and F1 against eps.
"""
from __future__ import annotations

import csv
import io
import time
import warnings as _warnings
from pathlib import Path

import numpy as np

from .. import _io
from ..attacks import metrics
from ..attacks.audit import lira_settings
from ..attacks.classifier_mia import classifier_mia
from ..attacks.lira import (
    ALGORITHMS,
    NOT_AUDITED,
    bound_text,
    epsilon_parameter,
    estimator_trainer,
    make_estimator,
    not_audited_reason,
    outside_guarantee_label,
    phi_and_privacy,
    run_lira,
    sklearn_trainer,
    train_shadows,
)
from ..errors import DPTopicError, ParameterError
from ..evaluation import umass_coherence
from .zhao_local import paper_shape


# Every file these experiments write is computed from the attacked documents (the private data, outside the
# guarantee): created readable by its owner only (0600), as dptopic audit writes audit.json and roc.png.
def atomic_write_json(path, obj) -> None:
    _io.atomic_write_json(Path(path), obj, private=True)


def save_fig(fig, path) -> None:
    _io.save_fig(fig, path, private=True)


def write_csv(path, header, rows) -> None:
    """A CSV file written atomically, owner-only (0600)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    _io.atomic_write_bytes(Path(path), buf.getvalue().encode(), private=True)

# Manzonelli et al.'s published attack code on 20 Newsgroups (sklearn LDA, k=20, V=1000, 64 shadows,
# a 4,000-document subsample of the training set, targets in a random half).
PUBLISHED = {"auc": 0.75, "tpr_at_fpr_0.01": 0.12, "tpr_at_fpr_0.001": 0.04}
REPORTED = ("auc", "auc_se", "tpr_at_fpr_0.01", "tpr_at_fpr_0.001", "tpr_at_fpr_0")


def make_trainer(trainer: str, n_topics: int, cgs_iterations: int = 100):
    """``sklearn`` (LatentDirichletAllocation, default learning parameters) or ``cgs`` (dptopic's LDA)."""
    if trainer == "sklearn":
        return sklearn_trainer(n_topics)
    return estimator_trainer("lda", n_topics=n_topics, n_iter=cgs_iterations, alpha=1.0 / n_topics,
                             beta=1.0 / n_topics)


def _plt():
    import matplotlib  # matplotlib: heavy, loaded only to draw

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # matplotlib: heavy, loaded only to draw

    return plt


LOW_FPRS = {"tpr_at_fpr_0.01": 0.01, "tpr_at_fpr_0.001": 0.001}
"""The low false-positive rates the checks read, by the key of their TPR."""


def _n_nonmembers(res) -> int:
    """The non-member scores behind a run's pooled ROC curves."""
    return int((~np.asarray(res.pooled["lira_online"][1]).astype(bool)).sum())


def resolved(summary: dict, n_nonmembers: int) -> dict:
    """``summary`` with each TPR at a false-positive rate its ``n_nonmembers`` scores cannot resolve set to None (an
    empty cell in a CSV, "n/r" on the terminal, as ``dptopic audit`` shows it): with fewer than ``1/FPR`` non-member
    scores that figure would be the TPR at FPR 0."""
    return {m: (None if m in LOW_FPRS and not metrics.resolvable(n_nonmembers, LOW_FPRS[m]) else v) for m, v in summary.items()}


def lira_checks(attacks: dict, n_nonmembers: int) -> tuple[dict, dict]:
    """``(checks, untested)``: the published figures and the Huang et al. baselines against online LiRA, each
    ``True``/``False``, or ``None`` where the run cannot test it (fewer non-member scores than ``1/FPR``); ``untested``
    gives the reason for each ``None``."""
    on = attacks["lira_online"]
    checks, untested = {}, {}

    def why(m):
        fpr = LOW_FPRS.get(m)
        if fpr is None or metrics.resolvable(n_nonmembers, fpr):
            return None
        return (f"{n_nonmembers} non-member scores cannot resolve FPR {fpr:.1%}: it needs at least {round(1 / fpr):,}"
                " (more documents, or more attacked targets: n_targets up to n_shadows)")

    for m in PUBLISHED:
        name = f"online LiRA {m} >= published {PUBLISHED[m]:g}"
        reason = why(m)
        checks[name] = None if reason else bool(on[m] >= PUBLISHED[m])
        if reason:
            untested[name] = reason
    for h in ("huang_entropy", "huang_std", "huang_max"):
        name = f"online LiRA TPR@0.1% > {h}"
        reason = why("tpr_at_fpr_0.001")
        checks[name] = None if reason else bool(on["tpr_at_fpr_0.001"] > attacks[h]["tpr_at_fpr_0.001"])
        if reason:
            untested[name] = reason
    return checks, untested


def lira_experiment(corpus, out, trainer="sklearn", n_topics=20, n_shadows=64, seed=0, n_jobs=2, k_grid=(),
                    cgs_iterations=100, n_targets=None, verbose=1, started=None) -> dict:
    """Table 1 / Fig. 2 at ``n_topics``; Fig. 3 over ``k_grid`` (offline and online TPR at FPR 1%, 0.1%).
    ``started``: the ``time.perf_counter()`` the run began at (the caller's, to count loading the corpus), so that
    ``seconds`` is the whole run's time; by default this call's."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter() if started is None else started
    fn = make_trainer(trainer, n_topics, cgs_iterations)
    res = run_lira(corpus, fn, n_shadows=n_shadows, seed=seed, n_jobs=n_jobs, verbose=verbose, n_targets=n_targets)
    labels = np.asarray(res.pooled["lira_online"][1]).astype(bool)
    n_members, n_nonmembers = int(labels.sum()), int((~labels).sum())
    attacks = {k: resolved({m: v[m] for m in REPORTED}, n_nonmembers) for k, v in res.summaries.items()}
    write_csv(out / "table1.csv", ["attack", *REPORTED], [[k, *(v[m] for m in REPORTED)] for k, v in attacks.items()])
    res.plot(out / "fig2_roc.png", f"LiRA vs Huang et al., {corpus.n_docs} docs, k={n_topics}, {trainer}",
             private=True)
    checks, untested = lira_checks(attacks, n_nonmembers)
    summary = {"attacks": attacks, "published_reference": PUBLISHED, "checks": checks, "paper_shape_checks": checks,
               "untested": untested, "has_paper_shape": paper_shape(checks),
               "n_scores": {"members": n_members, "non_members": n_nonmembers},
               "empirical_epsilon": res.empirical_epsilon, "metrics_guarantee": outside_guarantee_label(),
               "settings": dict(res.settings, n_topics=n_topics, trainer=trainer, seed=seed, n_jobs=n_jobs,
                                cgs_iterations=cgs_iterations if trainer == "cgs" else None)}
    if k_grid:
        rows = [[n_topics, a, attacks[a]["auc"], attacks[a]["tpr_at_fpr_0.01"], attacks[a]["tpr_at_fpr_0.001"]]
                for a in ("lira_online", "lira_offline")]
        for k in k_grid:
            if k == n_topics:  # the main run is the k = n_topics point
                continue
            r = run_lira(corpus, make_trainer(trainer, k, cgs_iterations), n_shadows=n_shadows, seed=seed,
                         n_jobs=n_jobs, verbose=verbose, n_targets=n_targets)
            for a in ("lira_online", "lira_offline"):
                s = resolved(r.summaries[a], _n_nonmembers(r))
                rows.append([k, a, s["auc"], s["tpr_at_fpr_0.01"], s["tpr_at_fpr_0.001"]])
        summary["fig3"] = write_fig3(rows, out)
    summary["seconds"] = time.perf_counter() - t0   # the whole run: every model trained and scored, files written
    atomic_write_json(out / "results.json", summary)
    return summary


FIG3_HEADER = ["k", "attack", "auc", "tpr_at_fpr_0.01", "tpr_at_fpr_0.001"]


def write_fig3(rows, out) -> list:
    """``fig3_tpr_vs_k.csv`` and ``.png`` from rows ``[k, attack, auc, tpr@1%, tpr@0.1%]``; returns them as dicts."""
    rows = sorted(rows, key=lambda r: (r[0], r[1]))
    write_csv(Path(out) / "fig3_tpr_vs_k.csv", FIG3_HEADER, rows)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 4))
    for a in ("lira_online", "lira_offline"):
        for col, fpr, ls in ((3, "1%", "-"), (4, "0.1%", "--")):
            pts = [(r[0], r[col]) for r in rows if r[1] == a and r[col] is not None]    # None: not resolved
            if pts:
                ax.plot(*zip(*pts), ls, marker="o", label=f"{a} TPR@FPR={fpr}")
    ax.set_xlabel("number of topics k")
    ax.set_ylabel("TPR")
    ax.set_title("Fig. 3: TPR at low FPR against k")
    ax.legend(fontsize=7)
    save_fig(fig, Path(out) / "fig3_tpr_vs_k.png")
    plt.close(fig)
    return [dict(zip(FIG3_HEADER, r)) for r in rows]


def fdptm_trainer(base_fn, eps_v, delta_v, record: list):
    """FDPTM inside one shadow: DP set union on the shadow's own documents, then the base trainer on the
    restricted corpus; Φ comes back over the full vocabulary (zero columns for unreleased words)."""
    from ..training.fdptm import restrict_to_private_vocabulary  # looked up when called: tests patch it at its source

    def train(corpus, rng):
        # the candidate words are the pool's, cut once before any shadow is drawn: for a shadow, whose documents are a
        # random half of the pool, they are a fixed list whichever documents it holds (the caller's, as a public one)
        corpus = corpus.restrict(corpus.vocabulary, drop_empty=False)
        # the paper's setting: Laplace policy, frequency order, cap 50 (the library's default is the Gaussian policy)
        restricted, _ = restrict_to_private_vocabulary(corpus, eps_v, delta_v, delta0=50, mechanism="laplace",
                                                       order="frequency", seed=rng)
        phi, _ = phi_and_privacy(base_fn(restricted, rng))
        phi = np.maximum(phi, 0)
        phi = phi / phi.sum(axis=1, keepdims=True)
        full = np.zeros((phi.shape[0], corpus.vocab_size))
        full[:, [corpus.vocabulary.get(w) for w in restricted.vocabulary.words]] = phi
        top = min(10, restricted.vocab_size)
        record.append({"vocab_size": restricted.vocab_size,
                       "coherence": umass_coherence(phi, restricted, top) if top >= 2 else float("nan")})
        return full

    return train


def fdptm_experiment(corpus, out, eps_v_grid, delta_v=1e-4, trainer="sklearn", n_topics=20, n_shadows=64, seed=0,
                     n_jobs=2, cgs_iterations=100, dp_algorithm=None, eps_t_grid=(), dp_params=None,
                     verbose=1) -> dict:
    """Figs. 4-6: for each eps_V (and each eps_T when ``dp_algorithm`` is given): mean vocabulary size,
    mean UMass coherence of the shadow models on their private vocabularies, and online LiRA."""
    if bool(eps_t_grid) != bool(dp_algorithm):
        raise _needs_both(dp_algorithm, eps_t_grid)
    if dp_algorithm:
        # a private trainer with valid parameters, or a one-line error before any training
        make_estimator(dp_algorithm, n_topics=n_topics, **{epsilon_parameter(dp_algorithm): eps_t_grid[0]},
                       **(dp_params or {}))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    configs = [("public", None, None)] + [(f"eps_V={e:g}", e, None) for e in eps_v_grid]
    for et in eps_t_grid:
        configs += [(f"eps_V={e:g}, eps_T={et:g}", e, et) for e in eps_v_grid]
    rows, curves = [], {}
    for name, ev, et in configs:
        if et is None:
            base = make_trainer(trainer, n_topics, cgs_iterations)
        else:
            base = estimator_trainer(dp_algorithm, n_topics=n_topics, **{epsilon_parameter(dp_algorithm): et},
                                     **(dp_params or {}))
        record: list = []
        if ev is not None:
            fn = fdptm_trainer(base, ev, delta_v, record)
        else:  # public vocabulary: coherence of each shadow on its own documents
            def fn(c, rng, _b=base, _r=record):  # noqa: E731
                phi, _ = phi_and_privacy(_b(c, rng))
                phi = phi / phi.sum(axis=1, keepdims=True)
                _r.append({"vocab_size": c.vocab_size, "coherence": umass_coherence(phi, c, 10)})
                return phi
        sh = train_shadows(corpus, fn, n_shadows, seed, n_jobs, verbose, huang=False)
        res = run_lira(corpus, fn, shadows=sh, verbose=verbose)
        s = resolved(res.summaries["lira_online"], _n_nonmembers(res))
        vs = float(np.mean([r["vocab_size"] for r in record]))
        coh = float(np.nanmean([r["coherence"] for r in record]))
        rows.append([name, ev, et, vs, coh, s["auc"], s["tpr_at_fpr_0.01"], s["tpr_at_fpr_0.001"]])
        curves[name] = res.pooled["lira_online"]
    header = ["config", "eps_V", "eps_T", "mean_vocab_size", "umass_coherence", "auc", "tpr_at_fpr_0.01",
              "tpr_at_fpr_0.001"]
    write_csv(out / "fdptm.csv", header, rows)
    metrics.plot_roc(curves, out / "fig6_roc.png", "Fig. 6: online LiRA against FDPTM", private=True)
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for et in [None, *eps_t_grid]:
        pts = [(r[1], r[4], r[3]) for r in rows if r[1] is not None and r[2] == et]
        if pts:
            lab = "non-private LDA" if et is None else f"eps_T={et:g}"
            axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=lab)
            axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=lab)
    pub = rows[0]
    axes[0].axhline(pub[4], color="k", ls="--", lw=0.8, label="public vocabulary")
    axes[1].axhline(pub[3], color="k", ls="--", lw=0.8, label="public vocabulary")
    for ax, yl in zip(axes, ("mean UMass coherence (top 10)", "mean vocabulary size")):
        ax.set_xscale("log")
        ax.set_xlabel("eps_V")
        ax.set_ylabel(yl)
        ax.legend(fontsize=7)
    fig.suptitle("Figs. 4-5: utility of FDPTM against eps_V")
    fig.subplots_adjust(wspace=0.35)  # room for the right panel's label
    save_fig(fig, out / "fig4_5_coherence.png")
    plt.close(fig)
    if eps_t_grid:
        _plot_fig5(rows, eps_v_grid, eps_t_grid, dp_algorithm, trainer, out / "fig5_coherence_vs_eps_t.png")
    summary = {"rows": [dict(zip(header, r)) for r in rows], "delta_V": delta_v, "n_shadows": n_shadows,
               "n_topics": n_topics, "trainer": trainer, "dp_algorithm": dp_algorithm,
               "dp_params": dict(dp_params or {}), "metrics_guarantee": outside_guarantee_label()}
    atomic_write_json(out / "fdptm_results.json", summary)
    return summary


def _plot_fig5(rows, eps_v_grid, eps_t_grid, dp_algorithm, trainer, path):
    """Fig. 5: coherence (and online LiRA AUC) against eps_T at each fixed eps_V; the same vocabulary with the
    non-private trainer drawn dashed."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for i, ev in enumerate(eps_v_grid):
        pts = sorted((r[2], r[4], r[5]) for r in rows if r[1] == ev and r[2] is not None)
        ref = next(r for r in rows if r[1] == ev and r[2] is None)
        color = f"C{i}"
        axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=color, label=f"eps_V={ev:g}, {dp_algorithm}")
        axes[0].axhline(ref[4], color=color, ls="--", lw=0.8, label=f"eps_V={ev:g}, non-private {trainer}")
        axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", color=color, label=f"eps_V={ev:g}, {dp_algorithm}")
        axes[1].axhline(ref[5], color=color, ls="--", lw=0.8, label=f"eps_V={ev:g}, non-private {trainer}")
    for ax, yl in zip(axes, ("mean UMass coherence (top 10)", "online LiRA AUC")):
        ax.set_xscale("log")
        ax.set_xlabel("eps_T (topic model)")
        ax.set_ylabel(yl)
        ax.legend(fontsize=6)
    fig.subplots_adjust(wspace=0.35)
    fig.suptitle("Fig. 5: FDPTM utility and leakage against eps_T at fixed eps_V")
    save_fig(fig, path)
    plt.close(fig)


FIG7_HEADER = ["algorithm", "epsilon", "attack_accuracy", "attack_accuracy_se", "target_accuracy", "target_f1_macro",
               "target_accuracy_se", "target_f1_macro_se", "target_majority_class_accuracy"]
"""The columns of fig7.csv: the first six are the figure's; then the standard errors of the target's accuracy
(binomial) and macro F1 (bootstrap over test documents), and the accuracy of always guessing the most frequent class."""

SIGNIFICANCE_Z = 1.96
"""A difference counts only beyond this many standard errors of the difference (two-sided 95% for independent
estimates); within it a claim's check is inconclusive."""

_SE_OF = {"attack_accuracy": "attack_accuracy_se", "target_accuracy": "target_accuracy_se",
          "target_f1_macro": "target_f1_macro_se"}


def _se(point: dict, col: str):
    v = point.get(_SE_OF.get(col, ""))
    return float(v) if isinstance(v, (int, float)) and np.isfinite(v) else None


def compare(x, se_x, y, se_y) -> tuple[int, str]:
    """``(sign, text)``: +1 when ``x`` is significantly above ``y`` (by more than :data:`SIGNIFICANCE_Z` standard errors
    of the difference), -1 significantly below, 0 within; with a standard error unknown (None), the point estimates
    decide. ``text`` gives the difference and its threshold."""
    d = float(x) - float(y)
    if se_x is None or se_y is None:
        return (d > 0) - (d < 0), f"a difference of {d:+.3f} (no standard error recorded)"
    t = SIGNIFICANCE_Z * float(np.hypot(se_x, se_y))
    return (1 if d > t else -1 if d < -t else 0), f"a difference of {d:+.3f} against {SIGNIFICANCE_Z:g} standard errors {t:.3f}"


def at_chance(acc, se, chance=0.5) -> bool:
    """Whether an accuracy ``acc`` ± ``se`` is within :data:`SIGNIFICANCE_Z` standard errors of ``chance`` (or below)."""
    return se is not None and acc <= chance + SIGNIFICANCE_Z * se


def write_fig7(rows, algorithms, out, title=None) -> list:
    """``fig7.csv`` and ``fig7.png`` from rows in :data:`FIG7_HEADER` order (a non-private trainer drawn flat, with a
    band of ±1 standard error); error bars are ±1 standard error, panel (a) has the 0.5 chance line and panel (b) the
    accuracy of always guessing the most frequent class; ``title``: the settings, printed above the panels."""
    write_csv(Path(out) / "fig7.csv", FIG7_HEADER, rows)
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    eps = sorted({r[1] for r in rows if r[1] is not None})
    span = (min(eps), max(eps)) if eps else (1.0, 1.0)
    for i, algo in enumerate(algorithms):
        pts = [dict(zip(FIG7_HEADER, r)) for r in rows if r[0] == algo]
        if not pts:
            continue
        for ax, col in zip(axes, ("attack_accuracy", "target_accuracy", "target_f1_macro")):
            if pts[0]["epsilon"] is None:
                y, se = pts[0][col], _se(pts[0], col)
                ax.axhline(y, color="k", ls="--", label=f"{algo} (non-private)")
                if se:
                    ax.axhspan(y - se, y + se, color="k", alpha=0.1, lw=0)
            else:
                ses = [_se(p, col) for p in pts]
                ax.errorbar([p["epsilon"] for p in pts], [p[col] for p in pts],
                            yerr=None if any(v is None for v in ses) else ses, marker="o", color=f"C{i}", capsize=3,
                            label=algo)
    axes[0].axhline(0.5, color="0.4", ls=":", lw=1, label="chance (0.5)")
    chance = [r[8] for r in rows if len(r) > 8 and r[8] is not None]
    if chance:
        axes[1].axhline(max(chance), color="0.4", ls=":", lw=1, label="most frequent class")
    lo = min([0.45] + [r[2] - (r[3] or 0) for r in rows])
    hi = max([0.55] + [r[2] + (r[3] or 0) for r in rows])
    axes[0].set_ylim(lo - 0.01, hi + 0.01)     # never zoomed so far that noise around 0.5 looks like a trend
    for ax, t in zip(axes, ("(a) attack accuracy", "(b) prediction accuracy", "(c) prediction F1 (macro)")):
        ax.set_xscale("log")
        if eps:
            ax.set_xticks(eps, [f"{e:g}" for e in eps])
            ax.minorticks_off()
            ax.set_xlim(span[0] / 1.5, span[1] * 1.5)
        ax.set_xlabel("epsilon")
        ax.set_title(t)
        ax.legend(fontsize=7)
    fig.text(0.5, -0.06, "error bars and grey bands: ±1 standard error", ha="center", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
        fig.subplots_adjust(top=0.78)
    save_fig(fig, Path(out) / "fig7.png")
    plt.close(fig)
    return FIG7_HEADER


FIG7_BASELINE = "lda"
"""The non-private trainer the Fig. 7 claims compare the private ones with (collapsed Gibbs sampling, the paper's CGS)."""

INCONCLUSIVE = "inconclusive (not significant)"
"""How a claim whose difference lies within the standard errors is reported (its reason in ``untested`` starts with
this, and ``inconclusive`` lists it)."""


def fig7_checks(rows, algorithms) -> tuple[dict, dict]:
    """``(checks, untested)`` for the claims docs/experiments.md lists for Zhao et al.'s Fig. 7, each ``True``/
    ``False`` where the difference it reads is significant (beyond :data:`SIGNIFICANCE_Z` standard errors of the
    difference: :func:`compare`), or ``None`` where this run cannot test it or the difference is within the standard
    errors (``untested`` says why; an inconclusive one's reason starts with :data:`INCONCLUSIVE`): the private
    trainers' attack accuracy below non-private CGS's (inconclusive while CGS's own attack is at chance: there is no
    leakage to reduce); attack accuracy, prediction accuracy and F1 growing with eps (compared at the largest and the
    smallest eps of the grid); LP-LDA approaching CGS as eps grows; LP-LDA beating CDP-LDA at weak privacy. A row
    without standard errors is compared by its point estimates."""
    by = {}
    for r in rows:
        by.setdefault(r[0], {})[r[1]] = dict(zip(FIG7_HEADER, r))
    private = [a for a in dict.fromkeys(algorithms) if epsilon_parameter(a, required=False)]
    base = by.get(FIG7_BASELINE, {}).get(None)
    checks, untested = {}, {}

    def claim(name, value, reason):
        checks[name] = None if reason or value is None else bool(value)
        if reason:
            untested[name] = reason

    def verdict(sign, text):   # a claim that the first is higher: True, False, or inconclusive (None, reason)
        return (True, None) if sign > 0 else (False, None) if sign < 0 else (None, f"{INCONCLUSIVE}: {text}")

    no_private = "algorithms has no private trainer (e.g. cdp, lp)"
    if not private:
        for name in ("(a) private trainers' attack accuracy below non-private CGS at every eps",
                     "(a) attack accuracy grows with eps", "(b) prediction accuracy grows with eps",
                     "(c) prediction F1 grows with eps"):
            claim(name, None, no_private)
    base_se = _se(base, "attack_accuracy") if base else None
    base_chance = base is not None and at_chance(base["attack_accuracy"], base_se)
    for a in private:
        pts = by[a]
        lo, hi = min(pts), max(pts)
        name = f"(a) {a}: attack accuracy below non-private CGS ({FIG7_BASELINE}) at every eps"
        if base is None:
            claim(name, None, f"algorithms has no {FIG7_BASELINE} (non-private CGS) to compare with")
        elif base_chance:
            claim(name, None, f"{INCONCLUSIVE}: the non-private attack is at chance ({base['attack_accuracy']:.3f}"
                              f" ± {base_se:.3f}): there is no measured leakage for DP to reduce")
        else:
            signs = {e: compare(base["attack_accuracy"], base_se, p["attack_accuracy"], _se(p, "attack_accuracy"))
                     for e, p in pts.items()}
            if all(sg > 0 for sg, _ in signs.values()):
                claim(name, True, None)
            elif any(sg < 0 for sg, _ in signs.values()):
                claim(name, False, None)
            else:
                e, (_, text) = next((e, v) for e, v in signs.items() if v[0] == 0)
                claim(name, None, f"{INCONCLUSIVE}: at eps={e:g}, {text}")
        one = None if hi > lo else "eps_grid has one value: a trend needs two or more"
        for tag, col, what in (("(a)", "attack_accuracy", "attack accuracy"),
                               ("(b)", "target_accuracy", "prediction accuracy"),
                               ("(c)", "target_f1_macro", "prediction F1 (macro)")):
            name = f"{tag} {a}: {what} grows with eps (higher at the largest eps than at the smallest)"
            if one:
                claim(name, None, one)
                continue
            ok, why = verdict(*compare(pts[hi][col], _se(pts[hi], col), pts[lo][col], _se(pts[lo], col)))
            claim(name, ok, why and f"{why} (eps {hi:g} against eps {lo:g})")
    lp, cdp = by.get("lp"), by.get("cdp")
    name = ("LP-LDA approaches CGS as eps grows (its prediction-accuracy gap to CGS shrinks from the smallest eps to"
            " the largest)")
    reason = ("algorithms has no lp" if lp is None else f"algorithms has no {FIG7_BASELINE}" if base is None else
              "eps_grid has one value: a trend needs two or more" if len(lp) < 2 else None)
    if reason:
        claim(name, None, reason)
    else:
        far, near = lp[min(lp)], lp[max(lp)]
        ok, why = verdict(*compare(abs(far["target_accuracy"] - base["target_accuracy"]), _se(far, "target_accuracy"),
                                   abs(near["target_accuracy"] - base["target_accuracy"]), _se(near, "target_accuracy")))
        claim(name, ok, why and f"{why} (the gap at the smallest eps against the gap at the largest)")
    name = "LP-LDA beats CDP-LDA at weak privacy (prediction accuracy at the largest eps)"
    reason = "algorithms has no lp" if lp is None else "algorithms has no cdp" if cdp is None else None
    if reason:
        claim(name, None, reason)
    else:
        a_, b_ = lp[max(lp)], cdp[max(cdp)]
        ok, why = verdict(*compare(a_["target_accuracy"], _se(a_, "target_accuracy"), b_["target_accuracy"],
                                   _se(b_, "target_accuracy")))
        claim(name, ok, why)
    return checks, untested


def fig7_shape(checks: dict, untested: dict) -> bool | None:
    """``has_paper_shape`` of Fig. 7: False when a claim tested is contradicted; None (never True) when one is
    inconclusive or none was tested; True only when every claim tested holds and none is inconclusive."""
    tested = [v for v in checks.values() if v is not None]
    if any(v is False for v in tested):
        return False
    if any(str(untested.get(c, "")).startswith(INCONCLUSIVE) for c, v in checks.items() if v is None):
        return None
    return paper_shape(checks)


def chance_warnings(rows) -> list[str]:
    """One line for each thing at chance that makes the Fig. 7 claims meaningless: a non-private trainer's attack
    (no leakage measured, so none for DP to reduce) and target classifiers no better than always guessing the most
    frequent class."""
    out = []
    for r in (dict(zip(FIG7_HEADER, r)) for r in rows):
        if r["epsilon"] is None and at_chance(r["attack_accuracy"], r["attack_accuracy_se"]):
            out.append(f"the attack on the non-private {r['algorithm']} is at chance (accuracy {r['attack_accuracy']:.3f}"
                       f" ± {r['attack_accuracy_se']:.3f}, chance 0.5): this run measures no leakage, so it cannot show"
                       " that DP reduces it; use more documents, iterations or shadows, or fewer classes")
    weak = [dict(zip(FIG7_HEADER, r)) for r in rows]
    weak = [r for r in weak if r.get("target_majority_class_accuracy") is not None
            and at_chance(r["target_accuracy"], r.get("target_accuracy_se"), r["target_majority_class_accuracy"])]
    if weak and len(weak) == len(rows):
        out.append(f"the target classifiers are at chance (prediction accuracy"
                   f" {min(r['target_accuracy'] for r in weak):.3f}-{max(r['target_accuracy'] for r in weak):.3f},"
                   f" always guessing the most frequent class gives {max(r['target_majority_class_accuracy'] for r in weak):.3f}):"
                   " an attack on a classifier that learned nothing measures nothing; use more documents or"
                   " iterations, or fewer classes")
    elif weak:
        out.append(f"{len(weak)} of the {len(rows)} target classifiers are at chance ("
                   + ", ".join(f"{r['algorithm']}" + (f" eps={r['epsilon']:g}" if r["epsilon"] is not None else "")
                               for r in weak)
                   + "): their attack accuracy measures nothing")
    return out


def classifier_mia_experiment(corpus, out, algorithms=("lda", "cdp"), eps_grid=(0.5, 1.0, 2.0, 5.0), n_topics=50,
                              n_iter=100, n_shadows=5, seed=0, verbose=1, n_replicates=1) -> dict:
    """Zhao et al. Fig. 7: attack accuracy, target accuracy and F1 against eps for each trainer
    (non-private trainers are run once and drawn flat), and a verdict on the figure's claims (:func:`fig7_checks`,
    whose standard errors are one replicate's, or with ``n_replicates >= 2`` the spread of independent replicates:
    ``se_method`` says which),
    :func:`fig7_shape`); each of :func:`chance_warnings` is warned (UserWarning) and kept in ``warnings``. Every file
    is written owner-only (0600): the figures are computed from the documents."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for algo in algorithms:
        eps_param = epsilon_parameter(algo, required=False)
        for e in (eps_grid if eps_param else (None,)):
            params = dict(n_topics=n_topics, n_iter=n_iter)
            if eps_param:
                params[eps_param] = e
            r = classifier_mia(corpus, estimator_trainer(algo, **params), n_shadows=n_shadows, seed=seed,
                               verbose=verbose, n_replicates=n_replicates)
            se_method = r["se_method"]
            rows.append([algo, e, r["attack_accuracy"], r["attack_accuracy_se"], r["target_accuracy"],
                         r["target_f1_macro"], r["target_accuracy_se"], r["target_f1_macro_se"], r["target_majority_class_accuracy"]])
    labels = sorted(set(corpus.labels))
    title = (f"Zhao et al. Fig. 7: membership inference on a topic-model classifier\n{corpus.n_docs} docs,"
             f" {len(labels)} classes, k={n_topics}, {n_iter} iterations, {n_shadows} shadow classifiers, seed {seed}")
    header = write_fig7(rows, algorithms, out, title=title)
    checks, untested = fig7_checks(rows, algorithms)
    found = chance_warnings(rows)
    for w in found:
        _warnings.warn(w, UserWarning, stacklevel=2)
    inconclusive = [c for c, v in checks.items() if v is None and str(untested.get(c, "")).startswith(INCONCLUSIVE)]
    summary = {"rows": [dict(zip(header, r)) for r in rows], "n_docs": corpus.n_docs, "n_topics": n_topics,
               "n_iter": n_iter, "n_shadows": n_shadows, "seed": seed, "labels": labels,
               "paper_shape_checks": checks, "untested": untested, "inconclusive": inconclusive,
               "has_paper_shape": fig7_shape(checks, untested), "warnings": found,
               "n_replicates": int(n_replicates), "se_method": se_method,
               "checks_note": (f"a claim holds (or fails) only when its difference exceeds {SIGNIFICANCE_Z:g} standard"
                               " errors of the difference; within them it is inconclusive (not significant) and"
                               " counts as not tested. " + (
                                   "The standard errors are those of one replicate's evaluation (the documents"
                                   " scored), not of the models' training and noise, which only replicates over seeds"
                                   " measure (n_replicates): a claim significant here may not be across seeds"
                                   if int(n_replicates) == 1 else
                                   f"The standard errors are the spread of {int(n_replicates)} independent replicates"
                                   " (training, noise and the documents scored)")),
               "metrics_guarantee": outside_guarantee_label()}
    atomic_write_json(out / "fig7_results.json", summary)
    return summary


def subsample(corpus, n, seed):
    """``n`` documents of ``corpus`` drawn without replacement (all of them when it holds no more, or ``n`` is None),
    in their order, by the experiment's ``seed``."""
    if n and corpus.n_docs > n:
        idx = np.sort(np.random.default_rng([seed, 4000]).choice(corpus.n_docs, n, replace=False))
        corpus = corpus.subset(idx)
    return corpus


def check_lira_settings(*, shadows: int = 64, targets=None, private_vocabulary=None, dp_algorithm=None,
                        eps_t_grid=None, dp_params=None, n_topics: int = 20, names=None) -> None:
    """The settings of :func:`lira_experiment` and :func:`fdptm_experiment` (as ``dptopic experiment lira`` writes
    them), checked before any corpus is read or folder written; the FDPTM sweep's private trainer is built once.
    ``names``: how the caller writes ``shadows`` and ``targets`` (:func:`dptopic.attacks.audit.lira_settings`)."""
    lira_settings(shadows, targets, names=names)
    if (dp_algorithm or eps_t_grid or dp_params) and not private_vocabulary:
        raise ParameterError("{dp_algorithm}, {eps_t_grid} and {dp_params} belong to the FDPTM sweep: give"
                             " {private_vocabulary} too.", "private_vocabulary", private_vocabulary)
    if bool(eps_t_grid) != bool(dp_algorithm):
        raise _needs_both(dp_algorithm, eps_t_grid)
    if dp_algorithm:  # a private trainer with valid parameters
        make_estimator(dp_algorithm, n_topics=n_topics, **{epsilon_parameter(dp_algorithm): eps_t_grid[0]},
                       **(dp_params or {}))


def _needs_both(dp_algorithm, eps_t_grid) -> ParameterError:
    """The refusal of an eps_T sweep given one of its two settings only."""
    return ParameterError("the eps_T sweep needs both a private trainer ({dp_algorithm}, e.g. svi) and"
                          " {eps_t_grid}.", "eps_t_grid" if dp_algorithm else "dp_algorithm",
                          eps_t_grid if dp_algorithm else dp_algorithm)


def check_topics_fit(vocab_size: int, trainer: str, topics: dict, other: str = "trainer='sklearn'") -> None:
    """dptopic's Gibbs LDA (``trainer='cgs'``) takes at most V topics: refused before the first run, naming the
    setting that asked for more (``topics``: each setting's name and its numbers of topics; ``other``: how the caller
    chooses the other trainer)."""
    if trainer != "cgs":
        return
    for flag, ks in topics.items():
        over = [k for k in ks if k > vocab_size]
        if over:
            raise DPTopicError(f"{flag} {' '.join(map(str, over))} exceeds the vocabulary size {vocab_size} of the"
                               f" corpus read: the cgs trainer takes at most {vocab_size} topics; give fewer, a corpus"
                               f" with more distinct words, or {other}.")


def check_classifier_trainers(algorithms) -> None:
    """:func:`classifier_mia_experiment`'s trainers: each one the attack can train (not ``ldp-doc``)."""
    for algo in algorithms:
        if algo in NOT_AUDITED:
            raise DPTopicError(not_audited_reason(algo))
        if algo not in ALGORITHMS:
            raise ParameterError("unknown algorithm {value!r} in {algorithms}: choose among {choices}.", "algorithms",
                                 algo, choices=", ".join(ALGORITHMS))


def labelled_documents(corpus, classes=None):
    """The documents of ``corpus`` whose label is one of ``classes`` (every label when None; labels read as text),
    refused in one line when the corpus has no labels, a class no document has, or fewer than two classes are left."""
    if corpus.labels is None:
        raise ParameterError("the classifier attack needs labels: use 'demo' (party), '20newsgroups', or a JSONL/CSV"
                             " file read with its labels ({label_field=} NAME, the field or column holding each"
                             " document's label).", "label_field")
    labels = np.asarray([str(x) for x in corpus.labels])   # classes are given as text
    present = sorted(set(labels.tolist()))
    if classes is not None:
        unknown = [c for c in classes if c not in set(present)]
        if unknown:
            shown = ", ".join(present[:30]) + (f" and {len(present) - 30} more" if len(present) > 30 else "")
            which = "that label" if len(unknown) == 1 else "these labels"
            raise ParameterError("{classes} {unknown}: no document of the corpus has {which}; its classes are"
                                 " {shown}.", "classes", classes, unknown=" ".join(unknown), which=which, shown=shown)
    keep = np.arange(corpus.n_docs) if classes is None else np.flatnonzero(np.isin(labels, classes))
    if len(set(labels[keep])) < 2:
        which = "the corpus has" if classes is None else "{classes} {given} leaves"
        raise ParameterError(which + " fewer than two classes: the attack needs a labelled corpus of at least two"
                             " (its classes: {present}).", "classes", classes, given=" ".join(classes or ()),
                             present=", ".join(present[:30]))
    return corpus.subset(keep)


NOT_RESOLVED = ("n/r: fewer non-member scores than 1/FPR, so no threshold has an FPR between 0 and that rate (an empty"
                " cell in the CSV files; more documents or more attacked targets resolve it)")


def tpr_text(v, digits: int = 2) -> str:
    """A TPR at a low FPR as printed; None (not resolved by the run's non-member scores) is "n/r"."""
    return "n/r" if v is None else f"{v:.{digits}%}"


def lira_lines(s: dict, n_shadows: int) -> list[str]:
    """The figures of :func:`lira_experiment`'s summary ``s`` as ``dptopic experiment lira`` prints them: each
    attack's AUC and TPRs, the empirical epsilon bound, the published figures beside this run's, its time."""
    lines = [f"{name:>24}: AUC {v['auc']:.3f} ± {v['auc_se']:.3f}, TPR@1% {tpr_text(v['tpr_at_fpr_0.01'])},"
             f" TPR@0.1% {tpr_text(v['tpr_at_fpr_0.001'])}" for name, v in s["attacks"].items()]
    if any(v["tpr_at_fpr_0.01"] is None or v["tpr_at_fpr_0.001"] is None for v in s["attacks"].values()):
        lines.append(NOT_RESOLVED)
    eps = s.get("empirical_epsilon") or {}
    if isinstance(eps, dict) and eps.get("epsilon_lower_bound") is not None:
        kind = "approximate" if str(eps.get("confidence_note", "")).startswith("approximate") else "nominal"
        lines.append(f"empirical epsilon lower bound ({kind} {100 * eps.get('confidence', 0.95):.6g}% confidence, the"
                     f" strongest of {eps.get('n_attacks', '?')} attacks, Bonferroni; see docs/auditing.md):"
                     f" {bound_text(eps['epsilon_lower_bound'])}" + (f", from {eps['attack']}" if eps.get("attack")
                                                                     else ""))
    lines.append(f"for comparison, the published code's figures: AUC {PUBLISHED['auc']},"
                 f" TPR@1% {PUBLISHED['tpr_at_fpr_0.01']:.0%}, TPR@0.1% {PUBLISHED['tpr_at_fpr_0.001']:.0%}"
                 f" (64 shadows; this run: {n_shadows}, {s['n_scores']['non_members']} non-member scores)")
    lines.append(f"this run took {s['seconds']:.1f} s")
    return lines


def fdptm_lines(s: dict) -> list[str]:
    """The rows of :func:`fdptm_experiment`'s summary ``s`` as ``dptopic experiment lira`` prints them for a private
    vocabulary sweep."""
    lines = [f"{r['config']:>24}: vocabulary {r['mean_vocab_size']:.0f}, coherence {r['umass_coherence']:.3f},"
             f" online LiRA AUC {r['auc']:.3f}, TPR@1% {tpr_text(r['tpr_at_fpr_0.01'], 3)},"
             f" TPR@0.1% {tpr_text(r['tpr_at_fpr_0.001'], 3)}" for r in s["rows"]]
    if any(r["tpr_at_fpr_0.01"] is None or r["tpr_at_fpr_0.001"] is None for r in s["rows"]):
        lines.append(NOT_RESOLVED)
    return lines


def classifier_mia_lines(s: dict) -> list[str]:
    """The rows of :func:`classifier_mia_experiment`'s summary ``s`` as ``dptopic experiment classifier-mia`` prints
    them, then the heading of its claims."""
    return [f"{r['algorithm']:>6} eps={r['epsilon']}: attack accuracy {r['attack_accuracy']:.3f}"
            f" ± {r['attack_accuracy_se']:.3f}, target accuracy {r['target_accuracy']:.3f}"
            f" ± {r['target_accuracy_se']:.3f} (most frequent class: {r['target_majority_class_accuracy']:.3f}),"
            f" F1 {r['target_f1_macro']:.3f} ± {r['target_f1_macro_se']:.3f}" for r in s["rows"]] + [
        "Zhao et al. Fig. 7's claims (docs/experiments.md); " + s["checks_note"] + ":"]
