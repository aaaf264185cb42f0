"""Document-level DP on a 2-process Dask LocalCluster against one machine (docs/scaling.md, "Document-level DP on a
cluster").

Corpus: the synthetic shards of ``bench_docdp_scale.py`` (LDA: K=20 true topics, V=2000, Poisson(100) lengths,
document-topic Dirichlet(0.1), topic-word Dirichlet(0.01), seed 2024), ``--docs`` documents in shards of
``--shard-docs``. Each trainer (``DocDPCooccurrence``, epsilon=1, its defaults; ``DocDPEM``, K=20, ``--passes``
iterations) fits the shard folder twice, each run in a fresh process:

* one machine: ``n_jobs=2`` threads stream the shards one at a time (the peer);
* Dask: a ``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)`` started in that process, one task per
  shard, each worker reading its shards from the folder; the driver adds the partials and draws the noise.

Printed per run: fit seconds (compilation excluded: every process fits a tiny corpus first, and so does every
worker), documents per second (documents x passes over the data / fit seconds), the driver's peak RSS, and each
worker's peak RSS (read in the worker after the fit); then the ratio of the Dask time to one machine's. Both runs use
the same 2 cores, so the ratio measures the cost of the cluster (processes, messages, driver), not a speed-up: a
cluster gains where its workers are other machines.

Run:        PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp_dask.py --docs 100000
Smoke run:  PYTHONPATH=src python benchmarks/bench_docdp_dask.py --docs 2000 --shard-docs 500 --passes 1
Needs the optional package ``distributed`` (pip install 'dptopic[dask]'); without it the script says so and exits.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine, peak_rss_bytes, table  # noqa: E402
from bench_docdp_scale import make_shards  # noqa: E402

V, TRUE_K, LENGTH, SEED = 2000, 20, 100.0, 2024


def _model(trainer: str, passes: int, **kw):
    from dptopic.models import DocDPCooccurrence, DocDPEM

    if trainer == "cooc":
        return DocDPCooccurrence(n_topics=20, epsilon=1.0, delta=1e-5, seed=0, **kw)
    return DocDPEM(n_topics=20, epsilon=1.0, delta=1e-5, n_iter=passes, seed=0, **kw)


def _warm(**kw) -> None:
    """Compile (or load) the kernels outside the timing."""
    from dptopic.models import DocDPCooccurrence, DocDPEM

    X = np.random.default_rng(0).integers(0, 3, size=(30, 12))
    DocDPEM(n_topics=2, epsilon=1.0, n_iter=1, seed=0, **kw).fit(X)
    DocDPCooccurrence(n_topics=2, epsilon=1.0, n_words=5, seed=0, **kw).fit(X)


def _worker_peak_rss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _child(a) -> None:
    """One fit in this fresh process; prints a JSON line."""
    import warnings

    warnings.simplefilter("ignore")
    folder = a.dir
    if a.backend == "threads":
        _warm(n_jobs=2)
        t = time.perf_counter()
        _model(a.trainer, a.passes, n_jobs=2).fit(folder)
        fit_s = time.perf_counter() - t
        print(json.dumps({"fit_s": fit_s, "driver_rss": peak_rss_bytes(), "workers_rss": []}))
        return
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cl, \
            Client(cl) as client:
        _warm(backend="dask", client=client)
        client.run(_warm)           # each worker compiles before the timing, as the peer does
        t = time.perf_counter()
        _model(a.trainer, a.passes, backend="dask", client=client).fit(folder)
        fit_s = time.perf_counter() - t
        workers = sorted(client.run(_worker_peak_rss).values())
    print(json.dumps({"fit_s": fit_s, "driver_rss": peak_rss_bytes(), "workers_rss": workers}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--shard-docs", type=int, default=10_000)
    ap.add_argument("--passes", type=int, default=3, help="DocDPEM's iterations (DocDPCooccurrence reads twice)")
    ap.add_argument("--trainers", default="cooc,em")
    ap.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "dptopic-bench-docdp-dask"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--backend", default="threads", help=argparse.SUPPRESS)
    ap.add_argument("--trainer", default="cooc", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        return _child(a)
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("bench_docdp_dask: the optional package 'distributed' is not installed (pip install 'dptopic[dask]'):"
              " skipped")
        return 0
    root = Path(a.dir) / f"D{a.docs}-V{V}-K{TRUE_K}-L{LENGTH:g}-S{a.shard_docs}-seed{SEED}"
    make_shards(root, a.docs, a.shard_docs, V, TRUE_K, LENGTH, SEED)
    from dptopic.backends import ShardSet

    shards = ShardSet(sorted(root.glob("shard-*.npz")))
    print(f"machine: {machine()}")
    print(f"corpus: {shards.n_docs:,} documents, {shards.n_tokens / 1e6:.1f}M tokens, V={V}, {len(shards.paths)}"
          f" shards; K=20, epsilon=1, delta=1e-5; DocDPEM {a.passes} passes, DocDPCooccurrence 2 passes")
    rows = []
    for trainer in a.trainers.split(","):
        passes = a.passes if trainer == "em" else 2
        times = {}
        for backend in ("threads", "dask"):
            out = subprocess.run([sys.executable, __file__, "--child", "--backend", backend, "--trainer", trainer,
                                  "--dir", str(root), "--passes", str(a.passes)], check=True, capture_output=True,
                                 text=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            times[backend] = r["fit_s"]
            where = "one machine, 2 threads" if backend == "threads" else "LocalCluster, 2 worker processes"
            rows.append([{"cooc": "DocDPCooccurrence", "em": "DocDPEM"}[trainer], where, f"{r['fit_s']:.1f}",
                         f"{shards.n_docs * passes / r['fit_s']:,.0f}", f"{r['driver_rss'] / 2**20:.0f}",
                         " / ".join(f"{w / 2**20:.0f}" for w in r["workers_rss"]) or "-",
                         "1.00" if backend == "threads" else f"{times['dask'] / times['threads']:.2f}"])
            print("  ".join(rows[-1]), flush=True)
    print()
    table(rows, ["trainer", "where", "fit s", "documents/s (x passes)", "driver peak RSS MiB",
                 "worker peak RSS MiB", "time / one machine's"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
