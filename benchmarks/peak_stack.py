"""Where a command's memory peaks: ``dptopic train --unit document --epsilon 1`` run in this process while a thread
records the resident size (``/proc/self/statm``) and the main thread's stack (``sys._current_frames``) every
``--every`` seconds, keeping the stack at the largest size seen; then the peak's stack and a timeline of the steps
(the innermost ``dptopic`` function on the stack, with the largest resident size while it ran).

The run is charged to a new, empty ledger in a temporary folder (``DPTOPIC_LEDGER``), never the user's.

    python benchmarks/peak_stack.py --corpus planted-1e6.jsonl           # the peak's stack and the steps
    python benchmarks/peak_stack.py --corpus planted-1e6.jsonl --top 40  # more of the peak's stack
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time
import traceback
import warnings
from pathlib import Path


def resident_mib() -> float:
    """This process's resident size now, MiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Sampler(threading.Thread):
    """Samples the resident size and ``thread``'s stack every ``every`` seconds until :meth:`stop`."""

    def __init__(self, thread: int, every: float):
        super().__init__(daemon=True)
        self.thread, self.every = thread, every
        self.peak, self.peak_stack, self.peak_at = 0.0, [], 0.0
        self.steps: list[list] = []          # [name, first seen s, last seen s, largest MiB]
        self._done = threading.Event()
        self.t0 = time.perf_counter()

    def run(self) -> None:
        while not self._done.is_set():
            rss = resident_mib()
            frame = sys._current_frames().get(self.thread)
            stack = traceback.extract_stack(frame) if frame is not None else []
            now = time.perf_counter() - self.t0
            if rss > self.peak:
                self.peak, self.peak_stack, self.peak_at = rss, stack, now
            mine = [f for f in stack if "dptopic" in f.filename]
            name = f"{Path(mine[-1].filename).stem}.{mine[-1].name}" if mine else "-"
            if self.steps and self.steps[-1][0] == name:
                self.steps[-1][2] = now
                self.steps[-1][3] = max(self.steps[-1][3], rss)
            else:
                self.steps.append([name, now, now, rss])
            time.sleep(self.every)

    def stop(self) -> None:
        self._done.set()
        self.join()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="a JSONL corpus (bench_pipeline.write_planted's)")
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--every", type=float, default=0.03, help="seconds between samples")
    ap.add_argument("--top", type=int, default=20, help="innermost frames of the peak's stack to print")
    ap.add_argument("--min-step", type=float, default=0.5, help="steps shorter than this many seconds not printed")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DPTOPIC_LEDGER"] = str(Path(tmp) / "ledger.sqlite")
        os.environ["XDG_DATA_HOME"] = str(Path(tmp) / "data")
        from dptopic.cli.main import main as cli

        sampler = Sampler(threading.get_ident(), a.every)
        sampler.start()
        t = time.perf_counter()
        cpu = time.process_time()
        with contextlib.redirect_stdout(open(os.devnull, "w")):      # the run's own report not printed
            cli(["train", "--corpus", str(a.corpus), "--unit", "document", "--epsilon", "1", "--topics", str(a.topics),
                 "--out", str(Path(tmp) / "m"), "--quiet"])
        sampler.stop()
    print(f"load {os.getloadavg()[0]:.1f}; wall {time.perf_counter() - t:.1f} s, CPU {time.process_time() - cpu:.1f} s")
    print(f"peak resident {sampler.peak:,.0f} MiB at {sampler.peak_at:.1f} s, in:")
    for f in sampler.peak_stack[-a.top:]:
        print(f"  {f.filename.split('src/')[-1]}:{f.lineno} {f.name}")
    print("steps (innermost dptopic function; seconds; largest resident MiB while in it):")
    for name, first, last, rss in sampler.steps:
        if last - first >= a.min_step or rss >= sampler.peak - 1:
            print(f"  {first:7.1f}-{last:7.1f} s  {rss:7,.0f} MiB  {name}")


if __name__ == "__main__":
    main()
