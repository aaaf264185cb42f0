"""Seconds per pass of the variational E-step against BigARTM, at equal work, on 20 Newsgroups (docs/scaling.md).

    PYTHONPATH=src nice -n 10 python benchmarks/bench_vb_pass.py --repeats 3 --bigartm-python /tmp/bigartm-venv/bin/python

Rows, each on 1 and on 2 threads:

* ``OnlineVB`` with its defaults (batches of 256, E-step until the mean change of γ is below 1e-3, at most 100
  iterations): a whole fit of ``--passes`` passes, its mini-batch M-steps included, divided by the passes;
* ``OnlineVB`` with the E-step capped at 10 iterations per document (BigARTM's default ``num_document_passes``): equal
  inner iterations;
* ``DocDPEM``'s E-step (``normalised_statistic``, the kernel of every pass of the private trainer) over the corpus under
  fixed topics, at its default ``inner = 30`` and at 10;
* BigARTM 0.9.2 ``fit_offline`` (10 inner iterations per document, its default), run in its own virtual environment
  through ``bench_docdp_scale._bigartm`` (see that file for how to build it); its batch preparation is not counted.

Each row prints seconds per pass (median over ``--repeats`` rounds; the rounds alternate the order of the systems so
that load from elsewhere hits them alike), the mean inner iterations per document and pass, the ratio to BigARTM's
pass on as many threads (the median over the rounds of each round's ratio: the load of a shared machine moves from
round to round, and a round's two runs see about the same), and, after ``--passes`` passes, NPMI (top 10 words,
document co-occurrence in the test split) and the held-out perplexity of the test split by document completion under
each model's topics, one fold-in for all (``dptopic.evaluation.perplexity``, mode ``completion``, α = 1/K, 50 Gibbs
sweeps; every model's topics mixed with 1e-6 of the uniform first, since BigARTM's hold exact zeros). DocDPEM's quality
is that of a private fit (ε = 1, δ = 1e-5, ``n_iter`` = passes), for reference only.

Where one pass of OnlineVB spends its time (CPU seconds of one thread, median of the rounds; the E-step under the
topics after 2 passes, γ started as a fit starts it; the rest per mini-batch of 256, times the 45 batches of a pass):

    PYTHONPATH=src nice -n 10 python benchmarks/bench_vb_pass.py --profile --repeats 3

Smoke run: ``PYTHONPATH=src python benchmarks/bench_vb_pass.py --max-docs 400 --passes 1 --repeats 1``.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine, table  # noqa: E402
from bench_docdp_scale import _bigartm  # noqa: E402

BIGARTM_INNER = 10      # BigARTM's default num_document_passes
SMOOTH = 1e-6           # every model's topics mixed with this much of the uniform before the perplexity: BigARTM's
                        # have exact zeros, which would make any held-out word outside them infinitely unlikely


class _Counter:
    """Counts the E-step's fixed-point iterations (both entry points of the kernel) while a fit runs."""

    def __init__(self):
        import dptopic.models._variational as svi

        self.svi, self.total = svi, 0
        self.orig = {n: getattr(svi, n) for n in ("vb_estep", "vb_estep_docs") if hasattr(svi, n)}

    def __enter__(self):
        for name, f in self.orig.items():
            def counted(*a, _f=f):
                it = _f(*a)
                self.total += int(it)
                return it
            setattr(self.svi, name, counted)
        return self

    def __exit__(self, *exc):
        for name, f in self.orig.items():
            setattr(self.svi, name, f)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-docs", type=int, default=None, help="the first N training documents only (a smoke run)")
    ap.add_argument("--bigartm-python", default=os.environ.get("BIGARTM_PYTHON"),
                    help="python of an environment with bigartm 0.9.2 installed")
    ap.add_argument("--profile", action="store_true", help="only the CPU-time profile of one OnlineVB pass")
    a = ap.parse_args(argv)

    from dptopic.datasets import load_20newsgroups
    from dptopic.evaluation import npmi_coherence, perplexity
    from dptopic.kernels.docdp import normalised_statistic
    from dptopic.models import DocDPEM, OnlineVB

    tr = load_20newsgroups("train", max_vocab=a.vocab)
    te = load_20newsgroups("test", vocabulary=tr.vocabulary)
    if a.max_docs:
        tr = tr.subset(range(min(a.max_docs, tr.n_docs)))
    X = tr.to_bow().tocsr()
    ptr, ids, cts = X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64)
    K, P, D = a.topics, a.passes, tr.n_docs
    print(f"{machine()}; 20 Newsgroups train: {D:,} documents, {tr.n_tokens:,} tokens, {X.nnz:,} (document, word)"
          f" entries, V={tr.vocab_size}, K={K}; {P} passes; median of {a.repeats} round(s), the order of the systems"
          f" alternating between rounds; load average {os.getloadavg()[0]:.1f} at the start")
    OnlineVB(n_topics=2, n_epochs=1, seed=0, verbose=0, n_jobs=2).fit(tr.subset(range(50)))   # JIT outside timings
    if a.profile:
        return profile(tr, ptr, ids.astype(np.int64), cts, K, a.repeats)
    normalised_statistic(ptr[:3], ids, cts, np.full((2, tr.vocab_size), 1 / tr.vocab_size), 0.1, 1, 2)
    beta = None                                 # DocDPEM's E-step runs under the topics of the first OnlineVB fit

    def online(jobs, cap):
        def run():
            nonlocal beta
            with _Counter() as c:
                t = time.perf_counter()
                m = OnlineVB(n_topics=K, n_epochs=P, seed=0, verbose=0, n_jobs=jobs, max_doc_update_iter=cap).fit(tr)
                s = (time.perf_counter() - t) / P
            if beta is None:
                beta = m.components_
            return s, c.total / (D * P), m.components_
        return run

    def docdp(jobs, inner):
        def run():
            b = beta if beta is not None else np.full((K, tr.vocab_size), 1 / tr.vocab_size)
            t = time.perf_counter()
            normalised_statistic(ptr, ids, cts, b, 0.1, inner, jobs)
            return time.perf_counter() - t, float(inner), None
        return run

    art_dir = tempfile.mkdtemp(prefix="dptopic-bench-vb-")

    def bigartm(jobs):
        def run():
            r, phi = _bigartm(a.bigartm_python, art_dir, X, P, jobs, K)
            return r["fit_s"] / P, float(BIGARTM_INNER), phi
        return run

    systems = {}
    for j in (1, 2):
        systems[f"OnlineVB, E-step to tol 1e-3 (<= 100), {j} thr"] = (j, "online", online(j, 100))
        systems[f"OnlineVB, E-step <= 10 iterations, {j} thr"] = (j, "online10", online(j, 10))
        systems[f"DocDPEM E-step, inner 30 (default), {j} thr"] = (j, "docdp", docdp(j, 30))
        systems[f"DocDPEM E-step, inner 10, {j} thr"] = (j, "docdp", docdp(j, 10))
        if a.bigartm_python:
            systems[f"BigARTM 0.9.2 fit_offline, {j} thr"] = (j, "bigartm", bigartm(j))
    names = list(systems)
    times = {n: [] for n in names}
    inner, phis = {}, {}
    for r in range(a.repeats):
        for n in (names if r % 2 == 0 else names[::-1]):
            s, it, phi = systems[n][2]()
            times[n].append(s)
            inner[n] = it
            if phi is not None:
                phis[n] = phi
        print(f"round {r + 1}: " + ", ".join(f"{times[n][-1]:.3f}" for n in names), flush=True)

    def quality(phi):
        phi = np.asarray(phi, dtype=np.float64)
        phi = (1 - SMOOTH) * phi / phi.sum(1, keepdims=True) + SMOOTH / phi.shape[1]
        return (npmi_coherence(phi, te),
                perplexity(phi, te, 1.0 / K, mode="completion", n_iter=50, burn_in=25, seed=0, n_jobs=2))

    dp = DocDPEM(n_topics=K, epsilon=1.0, delta=1e-5, n_iter=P, seed=0, n_jobs=2).fit(X)
    q = {"docdp": quality(dp.components_)}
    for n in names:
        if n in phis:
            q.setdefault(n, quality(phis[n]))
    rows = []
    for n in names:
        j, kind, _ = systems[n]
        s = float(np.median(times[n]))
        ref = next((times[m] for m in names if systems[m][:2] == (j, "bigartm")), None)
        npmi, ppl = q.get(n, q["docdp"] if kind == "docdp" else (float("nan"), float("nan")))
        rows.append([n, f"{s:.3f}", f"{inner[n]:.1f}", f"{s / inner[n] * 1e3:.1f}",
                     "-" if ref is None else f"{np.median(np.divide(times[n], ref)):.2f}", f"{npmi:.3f}", f"{ppl:.0f}"])
    print()
    table(rows, ["system", "s/pass", "inner it./doc", "ms per inner it.", "ratio to BigARTM (same threads)",
                 f"NPMI after {P}", f"perplexity after {P}"])
    print(f"\ns/pass: median wall seconds per pass; ratio: the median over the rounds of s/pass over BigARTM's on as many"
          f" threads in the same round (below 1 is faster); load average {os.getloadavg()[0]:.1f} at the end. DocDPEM"
          " rows: its E-step alone; their NPMI and perplexity are those of a private DocDPEM fit (epsilon = 1), for"
          " reference. Timings on a shared machine: compare rows of one run only.")


def profile(tr, ptr, ids, cts, K, repeats) -> None:
    from scipy.special import psi

    from dptopic.kernels.vb import exp_dirichlet_expectation, gather_rows, svi_step, vb_estep
    from dptopic.models import OnlineVB

    m = OnlineVB(n_topics=K, n_epochs=2, seed=0, verbose=0).fit(tr)
    lam, D, V, B = m.lambda_, len(ptr) - 1, tr.vocab_size, 256
    n_batches = -(-D // B)
    rng = np.random.default_rng(0)
    eb = np.empty((V, K))
    exp_dirichlet_expectation(lam, psi(lam.sum(axis=1)), eb, 0, V)
    g0 = rng.gamma(100.0, 0.01, size=(D, K))
    rows = rng.permutation(D)[:B]
    ss, out = np.ones((V, K)), np.empty_like(lam)

    def estep():
        return vb_estep(ptr, ids, cts, eb, 1.0 / K, g0.copy(), 100, 1e-3, np.inf, np.zeros((V, K)), np.zeros(D))

    parts = {
        "E-step kernel, all documents (vb_estep)": (estep, 1),
        "exp(E[log beta]), V x K, per batch": (lambda: exp_dirichlet_expectation(lam, psi(lam.sum(axis=1)), eb, 0, V),
                                               n_batches),
        "the SVI step (statistics times exp(E[log beta])), per batch": (
            lambda: svi_step(lam, ss, eb, 0.1, 0.05, 44.0, out, 0, V), n_batches),
        "gather_rows of a batch": (lambda: gather_rows(ptr, ids, cts, rows, checked=True), n_batches),
        "gamma's start, Gamma(100, 1/100) per batch": (lambda: rng.gamma(100.0, 0.01, size=(B, K)), n_batches),
    }
    iters = estep()
    out_t = {n: [] for n in parts}
    for _ in range(repeats):
        for n, (f, times) in parts.items():
            t = time.process_time()
            for _ in range(times):
                f()
            out_t[n].append(time.process_time() - t)
    total = sum(float(np.median(v)) for v in out_t.values())
    print(f"OnlineVB pass, K={K}: {iters / D:.1f} fixed-point iterations per document; {n_batches} batches of {B}")
    table([[n, f"{np.median(v) * 1e3:.1f}", f"{np.median(v) / total:.0%}"] for n, v in out_t.items()],
          ["part of one pass", "CPU ms", "share"])


if __name__ == "__main__":
    main()
