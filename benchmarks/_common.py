"""Shared benchmark helpers (not part of the library). Importing it points the dataset ledger and the contributors'
state at a folder of this run's own, so that no benchmark writes the user's ~/.local/share/dptopic/ledger.sqlite
(every benchmark script imports it; tests/test_suite_isolation.py checks)."""
from __future__ import annotations

import atexit
import os
import platform
import resource
import shutil
import tempfile
import time

import numpy as np

_RUN_HOME = tempfile.mkdtemp(prefix="dptopic-bench-")
os.environ["XDG_DATA_HOME"] = os.path.join(_RUN_HOME, "data")
os.environ["XDG_STATE_HOME"] = os.path.join(_RUN_HOME, "state")
os.environ.pop("DPTOPIC_LEDGER", None)
atexit.register(shutil.rmtree, _RUN_HOME, ignore_errors=True)


def machine() -> str:
    import os

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def median_time(step, n: int) -> float:
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        step()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


class IterationClock:
    """A fit callback that times each iteration and gathers nothing (no counts, no assignments).

    ``times`` holds the wall time of every iteration whose index is at least ``start`` (compile and warm-up sweeps
    before it are left out); ``t`` may be reset just before the fit starts.
    """

    needs_release = False  # a timer reads neither the counts nor the assignments:
    needs_z = False        # the trainer need not copy or gather them for it

    def __init__(self, start: int = 0):
        self.start, self.times, self.t = start, [], time.perf_counter()

    def __call__(self, info):
        now = time.perf_counter()
        if info.iteration >= self.start:
            self.times.append(now - self.t)
        self.t = now


def draw_words(rng, phi: np.ndarray, theta: np.ndarray, lengths: np.ndarray):
    """Documents drawn from LDA's generative story with topics ``phi`` (K x V) known: document d has ``lengths[d]``
    tokens, their topics drawn from ``theta[d]`` and each word from its topic. Returns ``(doc_ptr, word_ids)``."""
    n_docs, (K, V) = len(lengths), phi.shape
    per_topic = rng.multinomial(lengths, theta)                       # D x K tokens of each topic
    topic = np.repeat(np.tile(np.arange(K, dtype=np.int32), n_docs), per_topic.ravel())
    words = np.empty(len(topic), dtype=np.int32)
    for k in range(K):
        idx = np.flatnonzero(topic == k)
        words[idx] = rng.choice(V, size=len(idx), p=phi[k])
    ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    return ptr, words


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = "  ".join(str(h).ljust(w) for h, w in zip(header, widths))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
