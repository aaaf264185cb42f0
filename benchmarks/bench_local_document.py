"""Document-level local DP on 20 Newsgroups: topic quality against the number of contributors, and the choice of
frequency oracle.

    PYTHONPATH=src nice -n 10 python benchmarks/bench_local_document.py                 # eps_doc 8, V' 100, 200 and 400
    PYTHONPATH=src nice -n 10 python benchmarks/bench_local_document.py --epsilon 8 4 2 --contributors 100000 400000
    PYTHONPATH=src nice -n 10 python benchmarks/bench_local_document.py --mode oracles --epsilon 8 4 2
    PYTHONPATH=src python benchmarks/bench_local_document.py --words 50 --contributors 1000 --max-docs 1000 \
        --cgs-iterations 20 --out /tmp/bld                                                 # smoke run (seconds)

``curve`` (default): each contributor holds one document of the 20 Newsgroups training split (11,287; larger
numbers of contributors are simulated by drawing documents with replacement, which repeats documents but not their
randomization) and sends one report: two of its tokens among the V' most frequent words of the public 2,000-word
vocabulary, as a word pair through k-subset selection (:class:`dptopic.contributor.DocumentRandomizer`, simulation mode,
seed 1). The server (:class:`dptopic.models.LocalDocumentLDA`, fed 50,000 reports at a time by ``partial_fit``)
estimates the co-occurrence matrix and factorises it. Printed: NPMI (top 10 words, test split) and its ratio to
non-private CGS on the same 2,000 words (300 sweeps, seed 0), diversity, and the match to CGS's topics (mean cosine
after Hungarian matching; CGS seed 1 scores about 0.80). Two reference rows per V': ``ceiling``, the same server
on the exact, noise-free pair matrix of the 11,287 documents (what infinitely many contributors would reach), and
``null``, random topics over the same V' words (Dirichlet 0.1, seed 0), which learned nothing; and ``clear LDA``,
CGS (300 sweeps, seed 0) on the training documents restricted to the same V' words, in the clear: what a model
that reads whole documents learns from those words. A PNG of the match against contributors is written
(``--contributors`` with no number prints the reference rows only).

``oracles``: the frequency oracles that can carry one item of the pair domain (D = V'(V'+1)/2 + 1), each run on the
same reports (every report's item is item 0, so the D - 1 other items have true count 0): the variance of the
unbiased count of an absent item, per report, from the closed form and measured across those D - 1 items; the
report size; and the server's time to estimate all D counts from ``--reports`` reports, with its ratio to k-subset
selection measured in the same run. Oracles: k-subset selection (Wang et al. 2016; Ye & Barg 2018, the one
dptopic uses), optimised local hashing (OLH, Wang et al. USENIX Security 2017; universal hashes
``((a x + b) mod p) mod g``, g = round(e^eps) + 1), the one-bit-per-report Hadamard response (Acharya, Sun & Zhang
2019, sets of half the Hadamard domain, estimated by one fast Walsh-Hadamard transform) and direct k-ary randomized
response.
"""
from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)
from bench_docdp import diversity, load, npmi

CHUNK = 50_000


def exact_pair_matrix(corpus) -> np.ndarray:
    """``sum_d (c c^T - diag c) / (L (L - 1))`` over documents with >= 2 tokens: what the reports estimate."""
    import scipy.sparse as sp

    X = sp.csr_matrix(corpus.to_bow(), dtype=np.float64)
    L = np.asarray(X.sum(1)).ravel()
    w = np.where(L >= 2, 1.0 / np.maximum(L * (L - 1), 1.0), 0.0)
    W = sp.diags(w)
    return (X.T @ W @ X).toarray() - np.diag(np.asarray((W @ X).sum(0)).ravel())


def curve(a):
    from dptopic import LDA
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.evaluation.topic_matching import topic_recovery
    from dptopic.models import LocalDocumentLDA
    from dptopic.moments import topics_from_cooccurrence
    tr, te = load()
    if a.max_docs:
        tr = tr.subset(range(min(a.max_docs, tr.n_docs)))
    ref, V, K = te.to_bow(), tr.vocab_size, a.topics
    cgs = LDA(n_topics=K, n_iter=a.cgs_iterations, seed=0, verbose=0).fit(tr).components_
    base = npmi(cgs, ref)
    print(f"20 Newsgroups train {tr.n_docs} documents, V=2000, K={K}; non-private CGS ({a.cgs_iterations} sweeps,"
          f" seed 0, this run) NPMI {base:.4f}; ratio = NPMI / that")
    print(f"{'eps_doc':>7} {'V_prime':>7} {'contributors':>12} {'k':>5} {'NPMI':>7} {'ratio':>6} {'divers.':>7}"
          f" {'match':>6} {'s':>5}")

    def row(eps, Vp, who, k, H, t):
        B = np.full((K, V), 1e-12)
        B[:, :Vp] = H
        B /= B.sum(1, keepdims=True)
        s, m = npmi(B, ref), topic_recovery(B, cgs)
        print(f"{eps:>7} {Vp:7d} {who:>12} {k:>5} {s:7.4f} {s / base:6.2f} {diversity(B):7.3f} {m:6.3f}"
              f" {time.time() - t:5.0f}", flush=True)
        return m

    curves, refs = {}, {}
    for Vp in a.words:
        words = tr.vocabulary.words[:Vp]           # the vocabulary is ordered by frequency
        sub = tr.restrict(words, drop_empty=False)
        t = time.time()
        ceiling = row("-", Vp, "ceiling", "-", topics_from_cooccurrence(exact_pair_matrix(sub), K, "nmf"), t)
        null = row("-", Vp, "null", "-", np.random.default_rng(0).dirichlet(np.full(Vp, 0.1), K), t)
        t = time.time()
        row("-", Vp, "clear LDA", "-",
            LDA(n_topics=K, n_iter=a.cgs_iterations, seed=0, verbose=0).fit(tr.restrict(words, drop_empty=True))
            .components_, t)
        refs[Vp] = (ceiling, null)
        for eps in a.epsilon:
            for n in a.contributors:
                t = time.time()
                rng = np.random.default_rng(0)
                idx = np.arange(sub.n_docs) if n == sub.n_docs else rng.integers(0, sub.n_docs, n)
                rz = DocumentRandomizer.for_simulation(words, eps, seed=1)
                model = LocalDocumentLDA(n_topics=K)
                for c in range(0, n, CHUNK):                  # bounded memory: k items per report
                    reports = rz.randomize(sub.subset(idx[c:c + CHUNK]))
                    model.partial_fit(reports)
                m = row(f"{eps:g}", Vp, f"{n:,d}", reports.subset_size, model.components_, t)
                curves.setdefault((eps, Vp), []).append((n, m))
    if not curves:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    colour = {Vp: f"C{i}" for i, Vp in enumerate(a.words)}
    styles = {eps: m for eps, m in zip(a.epsilon, ("o-", "s--", "^:", "v-."))}
    for (eps, Vp), pts in curves.items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], styles.get(eps, "o-"), c=colour[Vp],
                label=f"eps_doc {eps:g}, {Vp} words")
    for Vp, (ceiling, null) in refs.items():
        ax.axhline(ceiling, ls="--", lw=0.8, c=colour[Vp], label=f"no noise (exact pair matrix), {Vp} words")
    ax.axhline(min(r[1] for r in refs.values()), ls=":", c="grey", lw=0.8, label="random topics of the same words")
    ax.set_xscale("log")
    ax.set_xlabel("contributors (one document each)")
    ax.set_ylabel("match to non-private topics")
    ax.set_title("Document-level local DP (20 Newsgroups, K = %d)" % K)
    ax.legend(fontsize=7)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / "local_document_curve.png", dpi=120)
    print(f"written: {out / 'local_document_curve.png'}")


# ---------------------------------------------------------------------------------------------- frequency oracles
P31 = (1 << 31) - 1


def _zero_variance(p: float, q: float) -> float:
    """Variance per report of ``(c - n q)/(p - q)`` for an item nobody holds (c ~ Binomial(n, q))."""
    return q * (1 - q) / (p - q) ** 2


def oracle_subset(n, D, eps, rng):
    from dptopic.mechanisms.frequency_oracle import (
        inclusion_probabilities,
        subset_selection,
        subset_selection_counts,
        subset_size,
    )
    R, _ = subset_selection(np.zeros(n, dtype=np.int64), D, eps, rng)
    t = time.perf_counter()
    est, _ = subset_selection_counts(R, D, eps)
    dt = time.perf_counter() - t
    p, q = inclusion_probabilities(D, eps)
    return est, dt, _zero_variance(p, q), subset_size(D, eps) * math.ceil(math.log2(D))


def oracle_olh(n, D, eps, rng):
    g = int(round(math.exp(eps))) + 1
    a = rng.integers(1, P31, n)
    b = rng.integers(0, P31, n)
    h = (a * 0 + b) % P31 % g                                  # every report's item is 0
    p = math.exp(eps) / (math.exp(eps) + g - 1)
    keep = rng.random(n) < p
    y = np.where(keep, h, (h + rng.integers(1, g, n)) % g)    # another value uniformly
    t = time.perf_counter()
    c = np.zeros(D)
    items = np.arange(D, dtype=np.int64)
    for s in range(0, n, 256):                                 # support of each report: O(n D) hash evaluations
        c += ((a[s:s + 256, None] * items[None, :] + b[s:s + 256, None]) % P31 % g == y[s:s + 256, None]).sum(0)
    q = 1.0 / g
    est = (c - n * q) / (p - q)
    dt = time.perf_counter() - t
    return est, dt, _zero_variance(p, q), 62 + math.ceil(math.log2(g))


def _fwht(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64).copy()
    h = 1
    while h < len(x):
        x = x.reshape(-1, 2, h)
        x = np.stack([x[:, 0] + x[:, 1], x[:, 0] - x[:, 1]], axis=1).reshape(-1)
        h *= 2
    return x


def oracle_hadamard(n, D, eps, rng):
    K = 1 << math.ceil(math.log2(D + 1))
    row = 1                                                    # item x uses Hadamard row x + 1; item 0 -> row 1

    def in_set(r, y):                                          # H[r, y] = +1 iff popcount(r & y) is even
        v = np.bitwise_and(r, y)
        bits = np.zeros_like(v)
        while np.any(v):
            bits += v & 1
            v >>= 1
        return bits % 2 == 0

    want = rng.random(n) < math.exp(eps) / (1 + math.exp(eps))
    y = rng.integers(0, K, n)
    bad = in_set(row, y) != want
    while np.any(bad):                                         # rejection: uniform inside or outside the set
        y[bad] = rng.integers(0, K, int(bad.sum()))
        bad = in_set(row, y) != want
    t = time.perf_counter()
    counts = np.bincount(y, minlength=K).astype(np.float64)
    c = (n + _fwht(counts)[1:D + 1]) / 2.0                    # reports whose set contains item j
    p, q = math.exp(eps) / (1 + math.exp(eps)), 0.5
    est = (c - n * q) / (p - q)
    dt = time.perf_counter() - t
    return est, dt, _zero_variance(p, q), math.ceil(math.log2(K))


def oracle_krr(n, D, eps, rng):
    p = math.exp(eps) / (math.exp(eps) + D - 1)
    keep = rng.random(n) < p
    y = np.where(keep, 0, rng.integers(1, D, n))
    t = time.perf_counter()
    c = np.bincount(y, minlength=D).astype(np.float64)
    q = 1.0 / (math.exp(eps) + D - 1)
    est = (c - n * q) / (p - q)
    dt = time.perf_counter() - t
    return est, dt, _zero_variance(p, q), math.ceil(math.log2(D))


def oracles(a):
    from dptopic.protocol.document_reports import domain_size
    print(f"{a.reports:,d} reports, every one holding item 0; variance per report of an absent item's count")
    print(f"{'eps':>4} {'V_prime':>7} {'D':>7} {'oracle':>22} {'var (formula)':>13} {'var (measured)':>14}"
          f" {'bits/report':>11} {'server s':>9} {'vs subset':>9} {'item 0 est./n':>13}")
    for eps in a.epsilon:
        for Vp in a.words:
            D = domain_size(Vp)
            res = {}
            for name, fn in [("k-subset selection", oracle_subset), ("OLH", oracle_olh),
                             ("Hadamard response", oracle_hadamard), ("k-ary RR", oracle_krr)]:
                est, dt, var, bits = fn(a.reports, D, eps, np.random.default_rng(0))
                res[name] = dt
                print(f"{eps:4g} {Vp:7d} {D:7d} {name:>22} {var:13.4g} {est[1:].var() / a.reports:14.4g} {bits:11d}"
                      f" {dt:9.3f} {dt / res['k-subset selection']:8.2g}x {est[0] / a.reports:13.3f}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("curve", "oracles"), default="curve")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[8.0])
    ap.add_argument("--words", type=int, nargs="+", default=[100, 200, 400])
    ap.add_argument("--contributors", type=int, nargs="*", default=[2000, 11287, 50000, 100000, 200000, 400000])
    ap.add_argument("--reports", type=int, default=20_000, help="oracles: reports per oracle")
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--out", default="runs/bench_local_document")
    ap.add_argument("--max-docs", type=int, default=None,
                    help="curve: the first N training documents only (a smoke run; default: all 11,287)")
    ap.add_argument("--cgs-iterations", type=int, default=300, help="curve: sweeps of the non-private CGS models")
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message="an explicit seed")
    (curve if a.mode == "curve" else oracles)(a)


if __name__ == "__main__":
    main()
