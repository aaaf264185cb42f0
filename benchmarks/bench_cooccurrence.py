"""Speed and memory of the document-level trainer (DocDPCooccurrence), against peers in the same run.

    PYTHONPATH=src python benchmarks/bench_cooccurrence.py speed             # 20 Newsgroups, every trainer, 2 threads
    PYTHONPATH=src python benchmarks/bench_cooccurrence.py scale --docs 1000000   # synthetic shards on disk
    PYTHONPATH=src python benchmarks/bench_cooccurrence.py speed --max-docs 500 --repeats 1   # smoke runs (seconds)
    PYTHONPATH=src python benchmarks/bench_cooccurrence.py scale --docs 2000 --shard-docs 200

``speed``: 20 Newsgroups train (11,287 documents, V = 2,000, K = 20, 2 threads): seconds per pass over the corpus
of DocDPCooccurrence (its two passes: the word counts and the co-occurrence matrix; and the whole fit, NMF
included), DocDPEM (one EM iteration), OnlineVB and scikit-learn's online LDA (one epoch each), and BigARTM 0.9.2
(one offline pass, C++; run in a separate virtual environment given by ``--artm-python``, with
PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python). Ratios to scikit-learn's epoch (measured in the same run) and to
BigARTM (when it runs) are printed.

``scale``: a synthetic LDA corpus (V = 2,000, K = 20, 100 tokens per document, seed 0) written as shards of 100,000
documents; DocDPCooccurrence (epsilon 1) streams them with 2 threads in a fresh process, for 10% of the documents
and for all of them: time and peak resident memory of each, so that the memory stays flat as documents grow (the
ratio of the two peaks is printed).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import machine, table

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent / "src")


def speed(a):
    import warnings

    from bench_docdp import load
    from dptopic import DocDPCooccurrence, DocDPEM, OnlineVB
    from dptopic.kernels.docdp import tokens_to_bow
    from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow
    warnings.filterwarnings("ignore")
    tr, _ = load()
    if a.max_docs:
        tr = tr.subset(range(min(a.max_docs, tr.n_docs)))
    X = tr.to_bow().tocsr()
    K, V, T = 20, tr.vocab_size, a.threads
    rows = []
    kept = np.arange(400)
    bow = tokens_to_bow(tr.doc_ptr, tr.word_ids, V)
    document_frequency_bow(bow, V, T)            # compile
    normalised_cooccurrence_bow(bow, kept, V, T)
    t = time.perf_counter()
    for _ in range(a.repeats):
        document_frequency_bow(bow, V, T)
        normalised_cooccurrence_bow(bow, kept, V, T)
    t_passes = (time.perf_counter() - t) / (2 * a.repeats)
    rows.append(["DocDPCooccurrence, one pass (mean of its 2)", t_passes])
    t = time.perf_counter()
    DocDPCooccurrence(n_topics=K, epsilon=1.0, n_jobs=T).fit(tr)
    rows.append(["DocDPCooccurrence, whole fit (2 passes + NMF)", time.perf_counter() - t])
    t = time.perf_counter()
    DocDPEM(n_topics=K, epsilon=1.0, n_iter=1).fit(tr)
    rows.append(["DocDPEM, one EM iteration", time.perf_counter() - t])
    t = time.perf_counter()
    OnlineVB(n_topics=K, n_epochs=1, seed=0, verbose=0).fit(tr)
    rows.append(["dptopic OnlineVB, one epoch", time.perf_counter() - t])
    from sklearn.decomposition import LatentDirichletAllocation
    t = time.perf_counter()
    LatentDirichletAllocation(K, learning_method="online", max_iter=1, n_jobs=T, random_state=0).fit(X)
    rows.append(["scikit-learn online LDA, one epoch", time.perf_counter() - t])
    artm = None
    if a.artm_python and Path(a.artm_python).exists():
        with tempfile.TemporaryDirectory() as tmp:
            np.savez(Path(tmp) / "bow.npz", data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape))
            r = subprocess.run([a.artm_python, str(HERE / "_artm_pass.py"), str(Path(tmp) / "bow.npz"), str(K), str(T),
                                "5"], capture_output=True, text=True, cwd=tmp,
                               env={**os.environ, "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"})
            if r.returncode == 0:
                artm = json.loads(r.stdout.strip().splitlines()[-1])["seconds_per_pass"]
                rows.append(["BigARTM 0.9.2 offline, one pass", artm])
            else:
                print("BigARTM failed:", r.stderr.strip().splitlines()[-1:])
    print(f"machine: {machine()}; 20 Newsgroups train {tr.n_docs} documents, {tr.n_tokens} tokens, V={V}, K={K},"
          f" {T} threads; passes: mean of {a.repeats} repeats, the rest one run each (EM 1 iteration, online 1 epoch)")
    sk = dict(rows)["scikit-learn online LDA, one epoch"]
    table([[n, f"{s:.3f}", f"{s / sk:.2f}", "-" if artm is None else f"{s / artm:.2f}"] for n, s in rows],
          ["trainer", "seconds", "ratio to scikit-learn epoch", "ratio to BigARTM pass"])
    if artm is None:
        print("BigARTM not run (give --artm-python, a python with bigartm 0.9.2 installed)")


def synthetic_shards(directory: Path, n_docs: int, V=2000, K=20, length=100, per_shard=100_000, seed=0):
    from dptopic.corpus import Corpus
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(V, 0.05), size=K)
    cphi = np.cumsum(phi, axis=1)
    words = [f"w{i}" for i in range(V)]
    directory.mkdir(parents=True, exist_ok=True)
    done, j = 0, 0
    while done < n_docs:
        n = min(per_shard, n_docs - done)
        theta = rng.dirichlet(np.full(K, 0.1), size=n)
        z = (rng.random((n, length))[:, :, None] > np.cumsum(theta, axis=1)[:, None, :]).sum(axis=2)
        z = np.minimum(z, K - 1).ravel()
        u = rng.random(z.size)
        w = np.empty(z.size, dtype=np.int32)
        for k in range(K):
            m = z == k
            w[m] = np.minimum(np.searchsorted(cphi[k], u[m]), V - 1)
        ptr = np.arange(0, (n + 1) * length, length, dtype=np.int64)
        Corpus(ptr, w, words).save(directory / f"shard-{j:05d}.npz")
        done, j = done + n, j + 1
    return j


CHILD = """
import resource, sys, time, warnings
warnings.filterwarnings("ignore")
from dptopic import DocDPCooccurrence
paths = sys.argv[2:]
t = time.perf_counter()
m = DocDPCooccurrence(n_topics=20, epsilon=1.0, n_jobs=int(sys.argv[1])).fit(paths)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def scale(a):
    with tempfile.TemporaryDirectory(prefix="dptopic-scale-") as tmp:
        d = Path(tmp)
        t = time.perf_counter()
        n_shards = synthetic_shards(d, a.docs, per_shard=a.shard_docs)
        print(f"machine: {machine()}; synthetic corpus: {a.docs:,} documents x 100 tokens, V=2000, K=20,"
              f" {n_shards} shards (written in {time.perf_counter() - t:.0f} s); {a.threads} threads")
        paths = sorted(str(p) for p in d.glob("shard-*.npz"))
        rows = []
        for share in (0.1, 1.0):
            use = paths[:max(1, round(share * len(paths)))]
            n = min(a.docs, len(use) * a.shard_docs)
            r = subprocess.run([sys.executable, "-c", CHILD, str(a.threads), *use], capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": SRC})
            if r.returncode != 0:
                raise SystemExit(r.stderr)
            secs, rss_kb = r.stdout.split()
            rows.append([f"{n:,}", f"{n * 100:,}", f"{float(secs):.1f}", f"{n * 100 / float(secs) / 1e6:.1f}",
                         f"{int(rss_kb) / 1024:.0f}"])
        table(rows, ["documents", "tokens", "seconds (whole fit: 2 passes + NMF)", "M tokens/s",
                     "peak memory MiB"])
        (n0, m0), (n1, m1) = [(int(r[0].replace(",", "")), float(r[4])) for r in (rows[0], rows[-1])]
        print(f"peak memory {n1:,} / {n0:,} documents: {m1 / m0:.2f}x for {n1 / n0:.0f}x the documents")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["speed", "scale"])
    ap.add_argument("--docs", type=int, default=1_000_000, help="scale: documents of the synthetic corpus")
    ap.add_argument("--shard-docs", type=int, default=100_000, help="scale: documents per shard")
    ap.add_argument("--max-docs", type=int, default=None,
                    help="speed: use only the first N training documents (a smoke run; default: all)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--artm-python", default="/tmp/artmvenv/bin/python")
    a = ap.parse_args(argv)
    speed(a) if a.what == "speed" else scale(a)


if __name__ == "__main__":
    main()
