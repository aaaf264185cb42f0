"""Local DP: reproductions of Zhao et al.'s Sec. VII-C/D figures on the demo corpus and 20 Newsgroups.

* :func:`ldp_utility` — Fig. 6: held-out perplexity against eps_word for LP-LDA, CDP-LDA (central DP,
  nominal eps) and non-private CGS.
* :func:`olp_experiment` — Fig. 8 (perplexity after each mini-batch, several eps_word, and O-LDA),
  Fig. 9 (against the prior-set size at eps_word = 3) and Fig. 10 (against the mini-batch size, OLP-LDA
  with and without prior data, O-LDA).

The randomization of the training documents is simulated centrally (as in the paper). Held-out
documents keep their word counts; perplexity is evaluated by fold-in with Phi fixed. Each function
writes CSV + PNG + a ``summary.json`` whose ``paper_shape_checks`` say which qualitative claims hold.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from .._io import atomic_write_json
from ..contributor.randomizer import Randomizer
from ..models import CDPLDA, LDA, LPLDA, OLPLDA, OnlineLDA
from ..protocol.estimation import bits_to_corpus, presence_bits
from ._output import save_fig, write_csv


def _plt():
    import matplotlib  # matplotlib: heavy, loaded only to draw
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # matplotlib: heavy, loaded only to draw

    return plt


def _randomize(corpus, epsilon_word, seed):
    with warnings.catch_warnings():  # experiment seeds are for reproduction only
        warnings.simplefilter("ignore")
        return Randomizer.for_simulation(corpus.vocabulary, epsilon_word=epsilon_word, seed=seed).randomize(corpus)


def _binarized(corpus):
    return bits_to_corpus(presence_bits(corpus), corpus.vocabulary)


def untested_if(condition: bool, value):
    """``None`` (not tested: the run's grid cannot test the claim, e.g. one value where a trend is claimed) when
    ``condition``, else ``bool(value)``. A verdict counts only the claims tested (``has_paper_shape``)."""
    return None if condition else bool(value)


def paper_shape(checks: dict) -> bool | None:
    """Whether every claim the run tested holds (claims not tested, None, are left out); None when it tested none."""
    tested = [v for v in checks.values() if v is not None]
    return bool(all(tested)) if tested else None


def _ascending(grid, *series):
    """``series`` reordered by ascending ``grid`` (a grid given in any order), with the sorted grid first."""
    order = sorted(range(len(grid)), key=lambda i: grid[i])
    return [[grid[i] for i in order]] + [[s[i] for i in order] for s in series]


def ldp_checks(lp, cdp, np_ppl, np_bin, eps_grid=None) -> dict:
    """Fig. 6's qualitative claims (1% tolerance on monotonicity, 10% / 5% on "approaches"). ``lp`` and ``cdp`` in
    the order of ``eps_grid`` (default: ascending); with one epsilon the trends and the crossover (CDP-LDA ahead at
    the smallest epsilon, LP-LDA at the largest) are not tested (None)."""
    eps, lp, cdp = _ascending(list(range(len(lp))) if eps_grid is None else list(eps_grid), lp, cdp)
    one = len(set(eps)) < 2
    return {
        "lp_lda_falls_as_epsilon_grows": untested_if(one, all(b <= a * 1.01 for a, b in zip(lp, lp[1:]))),
        "cdp_lda_falls_as_epsilon_grows": untested_if(one, all(b <= a * 1.01 for a, b in zip(cdp, cdp[1:]))),
        # one crossover claim (CDP-LDA ahead at the smallest epsilon, LP-LDA at the largest): with one epsilon both
        # would compare the same point and contradict each other
        "cdp_better_at_smallest_epsilon": untested_if(one, cdp[0] < lp[0]),
        "lp_better_at_largest_epsilon": untested_if(one, lp[-1] < cdp[-1]),
        "lp_approaches_non_private": bool(lp[-1] <= 1.1 * np_ppl),
        # LP-LDA sees presence vectors only: its ceiling is non-private CGS on presence vectors
        "lp_approaches_non_private_on_presence_vectors": bool(lp[-1] <= 1.05 * np_bin),
    }


def ldp_utility(train, test, out_dir, eps_grid=(0.5, 1.0, 2.0, 3.0, 5.0, 8.0), n_topics: int = 50,
                n_iter: int = 100, seeds=(0, 1), alpha: float = 0.1, beta: float = 0.01, mode: str = "completion",
                progress=None) -> dict:
    """Fig. 6: perplexity against eps_word (LP-LDA) / nominal eps (CDP-LDA) and the non-private lines."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = dict(n_topics=n_topics, n_iter=n_iter, alpha=alpha, beta=beta, verbose=0)
    rows = []

    def run(name, eps, fit):
        vals = []
        for s in seeds:
            vals.append(fit(s).perplexity(test, mode=mode, seed=s))
            if progress:
                progress(name, eps, s)
        rows.append((name, "" if eps is None else eps, float(np.mean(vals)),
                     float(np.std(vals, ddof=1)) if len(vals) > 1 else None))   # one seed: an empty cell, not 0
        return float(np.mean(vals))

    binary = _binarized(train)
    np_ppl = run("non-private", None, lambda s: LDA(seed=s, eval_every=0, **common).fit(train))
    np_bin = run("non-private, presence only", None, lambda s: LDA(seed=s, eval_every=0, **common).fit(binary))
    lp, cdp = [], []
    for e in eps_grid:
        lp.append(run("LP-LDA", e, lambda s: LPLDA(seed=s, **common).fit(_randomize(train, e, 1000 + s))))
        cdp.append(run("CDP-LDA", e, lambda s: CDPLDA(paper_epsilon=e, seed=s, **common).fit(train)))
    write_csv(out / "ldp_utility.csv", ["algorithm", "epsilon", "perplexity_mean", "perplexity_std"], rows)

    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(eps_grid, lp, "o-", label="LP-LDA (local, x = eps_word)")
    ax.plot(eps_grid, cdp, "s-", label="CDP-LDA (central, x = nominal eps)")
    ax.axhline(np_ppl, color="k", ls=":", label="non-private CGS")
    ax.axhline(np_bin, color="C2", ls="--", label="non-private CGS on presence vectors")
    ax.set_xlabel("epsilon (eps_word for LP-LDA; eps_doc = V eps_word)")
    ax.set_ylabel(f"held-out perplexity ({mode})")
    ax.set_title(f"Fig. 6 reproduction: K={n_topics}, T={n_iter}, {len(seeds)} seed(s)")
    ax.legend(fontsize=8)
    save_fig(fig, out / "ldp_utility.png")
    plt.close(fig)

    n = len(eps_grid)
    checks = ldp_checks(lp, cdp, np_ppl, np_bin, eps_grid)
    summary = {"figure": "Zhao et al. Fig. 6", "perplexity_mode": mode, "n_topics": n_topics, "n_iter": n_iter,
               "alpha": alpha, "beta": beta, "seeds": list(seeds), "eps_grid": list(eps_grid), "n_eps": n,
               "non_private": np_ppl, "non_private_presence_only": np_bin, "lp_lda": lp, "cdp_lda": cdp,
               "epsilon_doc": [train.vocab_size * e for e in eps_grid],
               "paper_shape_checks": checks, "has_paper_shape": paper_shape(checks),
               "note": "LP-LDA is local DP (eps_word per word, V eps_word per document); CDP-LDA is central DP"
                       " with its nominal eps and covers only its count releases: equal x is not equal privacy."}
    atomic_write_json(out / "ldp_utility_summary.json", summary)
    return summary


def _stream(model, batches, test, mode, seed, every=True):
    """Feed batches; perplexity of Phi^l on the test set after each (``every``) or after the last only."""
    ppl = []
    for i, b in enumerate(batches):
        model.partial_fit(b)
        if every or i == len(batches) - 1:
            ppl.append(model.perplexity(test, mode=mode, seed=seed))
    return ppl


def olp_experiment(train, test, out_dir, eps_grid=(1.0, 3.0, 5.0, 8.0), n_topics: int = 50, n_iter: int = 50,
                   prior_iter: int = 100, batch_size: int = 160, n_batches: int = 15, prior_size: int = 500,
                   prior_sizes=(100, 250, 500, 1000), batch_sizes=(40, 80, 160, 320, 640), fig9_epsilon: float = 3.0,
                   lam: float = 0.5, omega: float = 0.4, alpha: float = 0.1, beta: float = 0.01, seed: int = 0,
                   mode: str = "completion", progress=None) -> dict:
    """Figs. 8-10. The prior corpus D_0 is drawn from the training documents and kept disjoint from
    the stream (the paper samples both from the same set; here they never overlap)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(train.n_docs)
    max_prior = max(max(prior_sizes), prior_size)
    stream_docs = n_batches * batch_size
    if train.n_docs < max_prior + max(stream_docs, max(batch_sizes) * 2):
        raise ValueError(f"training set too small ({train.n_docs} documents) for these sizes")
    prior_pool, stream = perm[:max_prior], train.subset(np.sort(perm[max_prior:max_prior + stream_docs]))
    common = dict(n_topics=n_topics, n_iter=n_iter, prior_iter=prior_iter, alpha=alpha, beta=beta, lam=lam,
                  verbose=0)

    def prior_of(size):
        return train.subset(np.sort(prior_pool[:size]))

    def olda_batches(docs, size):
        return [_binarized(docs.subset(np.arange(a, min(docs.n_docs, a + size)))) for a in range(0, docs.n_docs, size)]

    def olp(prior, reports, size, every=False):
        m = OLPLDA(prior, omega=omega, batch_size=size, seed=seed, **common)
        return _stream(m, list(reports.batches(size)), test, mode, seed, every)

    # -------- Fig. 8: perplexity after each mini-batch
    d0 = prior_of(prior_size)
    fig8 = {}
    for e in eps_grid:
        fig8[f"OLP-LDA eps_word={e:g}"] = olp(d0, _randomize(stream, e, 2000 + int(10 * e)), batch_size, True)
        if progress:
            progress("Fig. 8", e)
    fig8["O-LDA (non-private)"] = _stream(OnlineLDA(prior_corpus=d0, seed=seed, **common),
                                          olda_batches(stream, batch_size), test, mode, seed)
    rows8 = []
    for name, ppl in fig8.items():
        for i, p in enumerate(ppl):
            rows8.append((name, i + 1, p, float(np.mean(ppl[:i + 1]))))
    write_csv(out / "olp_batches.csv", ["algorithm", "n_batches", "perplexity", "running_mean"], rows8)

    # -------- Fig. 9: final perplexity against the prior size at eps_word = fig9_epsilon
    reports9 = _randomize(stream, fig9_epsilon, 3000)
    fig9 = {"OLP-LDA": [], "O-LDA": []}
    for size in prior_sizes:
        fig9["OLP-LDA"].append(olp(prior_of(size), reports9, batch_size)[-1])
        fig9["O-LDA"].append(_stream(OnlineLDA(prior_corpus=prior_of(size), seed=seed, **common),
                                     olda_batches(stream, batch_size), test, mode, seed, False)[-1])
        if progress:
            progress("Fig. 9", size)
    batch_cgs = LDA(n_topics=n_topics, n_iter=prior_iter, alpha=alpha, beta=beta, seed=seed, eval_every=0, verbose=0)
    batch_ppl = batch_cgs.fit(train).perplexity(test, mode=mode, seed=seed)
    rows9 = [(name, size, v) for name, vals in fig9.items() for size, v in zip(prior_sizes, vals)]
    rows9.append(("non-private batch CGS (all training documents)", "", batch_ppl))
    write_csv(out / "olp_prior_size.csv", ["algorithm", "prior_size", "final_perplexity"], rows9)

    # -------- Fig. 10: final perplexity against the mini-batch size, same stream length in documents
    fig10 = {"OLP-LDA": [], "OLP-LDA without prior data": [], "O-LDA": []}
    for size in batch_sizes:
        fig10["OLP-LDA"].append(olp(d0, reports9, size)[-1])
        fig10["OLP-LDA without prior data"].append(olp("none", reports9, size)[-1])
        fig10["O-LDA"].append(_stream(OnlineLDA(prior_corpus=d0, seed=seed, **common), olda_batches(stream, size),
                                      test, mode, seed, False)[-1])
        if progress:
            progress("Fig. 10", size)
    rows10 = [(name, size, v) for name, vals in fig10.items() for size, v in zip(batch_sizes, vals)]
    write_csv(out / "olp_batch_size.csv", ["algorithm", "batch_size", "final_perplexity"], rows10)

    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    for name, ppl in fig8.items():
        axes[0].plot(np.arange(1, len(ppl) + 1), ppl, "o-" if "OLP" in name else "k--", ms=3, label=name)
    axes[0].set_xlabel("number of mini-batches")
    axes[0].set_ylabel(f"held-out perplexity of Phi^l ({mode})")
    axes[0].set_title(f"Fig. 8: batch {batch_size}, prior {prior_size} docs")
    for name, vals in fig9.items():
        axes[1].plot(prior_sizes, vals, "o-", label=name)
    axes[1].axhline(batch_ppl, color="k", ls="--", label="non-private batch CGS")
    axes[1].set_xlabel("prior-set size |D_0| (documents)")
    axes[1].set_title(f"Fig. 9: eps_word={fig9_epsilon:g}, after {n_batches} batches")
    for name, vals in fig10.items():
        axes[2].plot(batch_sizes, vals, "o-", label=name)
    axes[2].set_xlabel("mini-batch size (stream of the same documents)")
    axes[2].set_title(f"Fig. 10: eps_word={fig9_epsilon:g}, prior {prior_size} docs")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.suptitle(f"OLP-LDA reproduction: K={n_topics}, {n_iter} sweeps per batch, lambda={lam:g}, omega={omega:g}")
    save_fig(fig, out / "olp.png")
    plt.close(fig)

    olp_names = [k for k in fig8 if k.startswith("OLP")]
    eps8, finals = _ascending(list(eps_grid), [fig8[k][-1] for k in olp_names])
    first_vs_last = {k: (v[0], v[-1]) for k, v in fig8.items()}
    f10 = fig10
    # a trend needs two values: one batch, one epsilon, one prior size or one batch size cannot test its claim, which
    # is then None (not tested) and left out of the verdict; sizes compared from the smallest to the largest given
    ps, bs = list(prior_sizes), list(batch_sizes)
    small9, large9, small10, large10 = ps.index(min(ps)), ps.index(max(ps)), bs.index(min(bs)), bs.index(max(bs))
    one_prior, one_batch = min(ps) == max(ps), min(bs) == max(bs)
    checks = {
        "fig8_all_curves_fall_with_batches": untested_if(n_batches < 2, all(v[-1] < v[0] for v in fig8.values())),
        "fig8_all_curves_fall_monotonically": untested_if(n_batches < 2, all(all(b <= a * 1.005 for a, b in
                                                                                 zip(v, v[1:]))
                                                                             for v in fig8.values())),
        "fig8_lower_epsilon_higher_perplexity": untested_if(len(set(eps8)) < 2,
                                                            all(b <= a for a, b in zip(finals, finals[1:]))),
        "fig9_larger_prior_better": untested_if(one_prior, fig9["OLP-LDA"][large9] < fig9["OLP-LDA"][small9]),
        "fig10_no_prior_worst": bool(all(n > max(p, o) for n, p, o in
                                         zip(f10["OLP-LDA without prior data"], f10["OLP-LDA"], f10["O-LDA"]))),
        "fig10_olp_close_to_olda": bool(all(abs(p - o) <= 0.1 * o for p, o in zip(f10["OLP-LDA"], f10["O-LDA"]))),
        "fig10_no_prior_improves_with_batch_size": untested_if(one_batch, f10["OLP-LDA without prior data"][large10]
                                                               < f10["OLP-LDA without prior data"][small10]),
        "fig10_olda_improves_with_batch_size": untested_if(one_batch, f10["O-LDA"][large10] < f10["O-LDA"][small10]),
    }
    summary = {"figures": "Zhao et al. Figs. 8, 9, 10", "perplexity_mode": mode, "n_topics": n_topics,
               "n_iter_per_batch": n_iter, "prior_iter": prior_iter, "batch_size": batch_size, "n_batches": n_batches,
               "prior_size": prior_size, "lam": lam, "omega": omega, "alpha": alpha, "beta": beta, "seed": seed,
               "fig8_first_last": first_vs_last, "fig9": {"prior_sizes": list(prior_sizes), **fig9,
                                                          "batch_cgs": batch_ppl},
               "fig10": {"batch_sizes": list(batch_sizes), **fig10},
               "paper_shape_checks": checks, "has_paper_shape": paper_shape(checks),
               "note": "D_0 is disjoint from the stream; Phi^l is evaluated on held-out documents after each batch"
                       " (the paper's 'average perplexity normalised by the number of mini-batches' is undefined;"
                       " the CSV also gives the running mean)."}
    atomic_write_json(out / "olp_summary.json", summary)
    return summary


def olda_drift(train, test, prior_size: int = 500, batch_size: int = 160, n_batches: int = 15, n_topics: int = 50,
               n_iter: int = 50, prior_iter: int = 100, alpha: float = 0.1, eval_at=(1, 5, 10, 15),
               settings=(("counts", 0.5), ("presence", 0.5), ("presence", 0.1)), seed: int = 0,
               mode: str = "completion") -> dict:
    """Diagnostic for Fig. 8: O-LDA's held-out perplexity along the stream, with word counts or presence-only
    batches and several lambda (same prior D_0, same stream, disjoint, as in :func:`olp_experiment`)."""
    perm = np.random.default_rng(seed).permutation(train.n_docs)
    d0 = train.subset(np.sort(perm[:prior_size]))
    start = max(prior_size, 1000)
    stream = train.subset(np.sort(perm[start:start + n_batches * batch_size]))
    out = {}
    for kind, lam in settings:
        m = OnlineLDA(n_topics=n_topics, n_iter=n_iter, prior_iter=prior_iter, alpha=alpha, lam=lam, prior_corpus=d0,
                      seed=seed, verbose=0)
        curve = {}
        for i in range(n_batches):
            b = stream.subset(np.arange(i * batch_size, (i + 1) * batch_size))
            m.partial_fit(_binarized(b) if kind == "presence" else b)
            if i + 1 in eval_at:
                curve[i + 1] = m.perplexity(test, mode=mode, seed=seed)
        out[f"{kind}, lambda={lam:g}"] = curve
    return out
