"""From file to release: ``dptopic train --unit document --epsilon 1`` end to end on a planted JSONL corpus, against
one scikit-learn ``CountVectorizer(vocabulary=...).fit_transform`` of the same texts (the peer) in the same run, each
in a child process of its own: wall time (the ratio to the peer's is the figure to read on a loaded machine), CPU
time, and the child's peak memory (``ru_maxrss`` of ``os.wait4``). Each child is charged to a new, empty ledger in
the run's temporary folder (a first run's cost; never the user's default ledger).

Routes:

- ``sklearn``: the peer. The child reads the texts from the file first (not timed), then times ``fit_transform``
  against the corpus's V words;
- ``train``: ``dptopic train CORPUS --unit document --epsilon 1 --topics 20`` as a user runs it: the file read by
  the streaming reader (``dptopic.corpus.stream``: chunks of lines on every core, the text never held whole);
- ``train-whole``: the same command, the file read whole first (``Corpus.from_jsonl``, the reader before the
  stream), for the memory and time the stream saves, in the same run;
- ``read-1``, ``read-2``: the streaming reader alone (``stream.read_jsonl``) in 1 and 2 processes.

``--phases`` instead runs the ``train`` command once in a child that prints the time and memory (peak and resident)
after each of ``dptopic.training.run``'s steps.

The corpus (issue 94): ``--docs`` documents of about 60 words drawn from K = 20 planted topics over V = 2,000 made-up
words (``bench_tokenize.planted_texts``' draw), written to a JSONL file in pieces (never held whole).

    python benchmarks/bench_pipeline.py --docs 1000000                      # the 10^6 target, all routes
    python benchmarks/bench_pipeline.py --docs 10000000 --routes train      # 10^7: time and memory
    python benchmarks/bench_pipeline.py --docs 1000000 --phases             # where the time and memory go
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

from _common import draw_words, machine, table
from bench_tokenize import planted_words

ROUTES = ("sklearn", "train", "train-whole", "read-1", "read-2")
HERE = Path(__file__).resolve().parent


def write_planted(path: Path, n_docs: int, vocab_size: int = 2000, topics: int = 20, mean_length: int = 60,
                  seed: int = 0) -> None:
    """``bench_tokenize.planted_texts(n_docs)``' texts, one JSON object a line, written 50,000 at a time."""
    rng = np.random.default_rng(seed)
    words = planted_words(vocab_size)
    phi = rng.dirichlet(np.full(vocab_size, 0.05), size=topics)
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, n_docs, 50_000):
            n = min(50_000, n_docs - start)
            lengths = np.maximum(1, rng.poisson(mean_length, size=n))
            ptr, ids = draw_words(rng, phi, rng.dirichlet(np.full(topics, 0.1), size=n), lengths)
            flat = [words[i] for i in ids.tolist()]
            lines = []
            for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist()):
                doc = flat[a:b]
                doc[0] = doc[0].capitalize()
                lines.append(json.dumps({"text": " ".join(doc) + "."}))
            f.write("\n".join(lines) + "\n")


_SKLEARN = """
import json, sys, time
from sklearn.feature_extraction.text import CountVectorizer
sys.path.insert(0, {here!r})
from bench_tokenize import planted_words
with open({path!r}, encoding="utf-8") as f:
    texts = [json.loads(line)["text"] for line in f]
t = time.perf_counter()
X = CountVectorizer(vocabulary=planted_words({vocab})).fit_transform(texts)
print("TIMED", time.perf_counter() - t, X.nnz)
"""

_WHOLE = """
import sys
from dptopic.corpus import Corpus, stream
stream.read_jsonl = lambda path, **kw: Corpus.from_jsonl(path, **{{k: v for k, v in kw.items()
                                                                   if k not in ("processes", "progress")}})
from dptopic.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


_READ = """
import sys, time
from dptopic.corpus import stream
t = time.perf_counter()
c = stream.read_jsonl({path!r}, processes={processes})
print("TIMED", time.perf_counter() - t, c.n_docs)
"""

_PHASES = """
import resource, sys, tempfile, time, warnings
warnings.simplefilter("ignore")
from dptopic.training import run
T0 = time.perf_counter()

def say(what):
    rss = int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{time.perf_counter() - T0:7.1f} s  peak {peak:7.0f} MiB  resident {rss:7.0f} MiB  after {what}",
          flush=True)

for name in ("check_inputs", "charge_run", "choose_vocabulary", "split", "fit", "held_out_metrics", "save"):
    def wrap(*a, _f=getattr(run, name), _n=name, **k):
        r = _f(*a, **k)
        say(_n)
        return r
    setattr(run, name, wrap)
from dptopic.corpus import readers
read = readers.read_corpus

def read_timed(*a, **k):
    c = read(*a, **k)
    say("reading")
    return c
readers.read_corpus = read_timed
import dptopic.datasets
dptopic.datasets.read_corpus = read_timed
from dptopic.cli.main import main
main(sys.argv[1:])
"""


def fresh_ledger(tmp: Path) -> dict:
    """The environment of a child: a new, empty ledger file in ``tmp`` (``DPTOPIC_LEDGER``) and ``tmp`` as the data
    folder, so a run is charged to a ledger of its own, as a first run is (never the user's default ledger, and never
    one that earlier runs filled: its recorded keys would be read back and matched)."""
    fd, path = tempfile.mkstemp(suffix=".sqlite", dir=tmp)
    os.close(fd)
    os.unlink(path)
    return {**os.environ, "DPTOPIC_LEDGER": path, "XDG_DATA_HOME": str(tmp / "data")}


def timed_child(argv: list[str], env: dict | None = None) -> dict:
    """Run ``argv``: its wall time (or the ``TIMED`` seconds it printed), CPU time and peak memory (MiB) from
    ``wait4`` (the child's own; a worker it forked and waited for counts in its CPU time)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status:
        raise SystemExit(f"{' '.join(argv[:5])} failed:\n{err.decode()[-2000:]}")
    timed = [ln.split() for ln in out.decode().splitlines() if ln.startswith("TIMED")]
    return dict(wall=float(timed[0][1]) if timed else wall, cpu=usage.ru_utime + usage.ru_stime,
                rss_mib=usage.ru_maxrss / 1024)


def route_argv(route: str, path: Path, out_dir: Path, vocab: int, topics: int) -> list[str]:
    if route == "sklearn":
        return [sys.executable, "-c", _SKLEARN.format(here=str(HERE), path=str(path), vocab=vocab)]
    cli = ["train", "--corpus", str(path), "--unit", "document", "--epsilon", "1", "--topics", str(topics), "--out",
           str(out_dir / f"{route}.model"), "--overwrite"]
    if route.startswith("read-"):
        return [sys.executable, "-c", _READ.format(path=str(path), processes=int(route[5:]))]
    if route == "train":
        return [sys.executable, "-m", "dptopic", *cli]
    if route == "phases":
        return [sys.executable, "-c", _PHASES, *cli, "--quiet"]
    return [sys.executable, "-c", _WHOLE.format(), *cli]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000, help="documents of the planted corpus")
    ap.add_argument("--routes", nargs="+", choices=ROUTES, default=["sklearn", "train", "train-whole"])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--phases", action="store_true", help="time each step of one train run instead")
    ap.add_argument("--corpus", type=Path, help="an existing planted JSONL file (default: written to a temp folder)")
    a = ap.parse_args(argv)
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = a.corpus or tmp / "planted.jsonl"
        if a.corpus is None:
            t = time.perf_counter()
            write_planted(path, a.docs, a.vocab)
            print(f"wrote {a.docs:,} documents, {path.stat().st_size / 1e6:.0f} MB, in {time.perf_counter() - t:.0f} s")
        if a.phases:
            print(f"load {os.getloadavg()[0]:.1f}")
            out = subprocess.run(route_argv("phases", path, tmp, a.vocab, a.topics), capture_output=True, text=True,
                                 env=fresh_ledger(tmp))
            print("\n".join(ln for ln in out.stdout.splitlines() if " after " in ln) or out.stderr[-2000:])
            return
        rows, seen = [], {r: [] for r in a.routes}
        for rep in range(a.repeats):
            order = a.routes[rep % len(a.routes):] + a.routes[:rep % len(a.routes)]      # rotated, interleaved
            for route in order:
                load = os.getloadavg()[0]
                r = timed_child(route_argv(route, path, tmp, a.vocab, a.topics), env=fresh_ledger(tmp))
                r["load"] = load
                seen[route].append(r)
        peer = float(np.median([r["wall"] for r in seen["sklearn"]])) if "sklearn" in seen else None
        for route, rs in seen.items():
            wall = float(np.median([r["wall"] for r in rs]))
            rows.append([route, f"{wall:.1f}", f"{np.median([r['cpu'] for r in rs]):.1f}",
                         "-" if peer is None else f"{wall / peer:.2f}",
                         f"{max(r['rss_mib'] for r in rs):,.0f}", f"{min(r['load'] for r in rs):.1f}"
                         f"-{max(r['load'] for r in rs):.1f}"])
        table(rows, ["route", "wall s", "CPU s", "wall / peer", "peak MiB", "load"])


if __name__ == "__main__":
    main()
