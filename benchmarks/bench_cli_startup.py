"""How long a command's ``--help`` and a mistyped flag take: the command line builds only the parser of the command
given (cli/parsers/), which loads no numpy, numba, scipy, scikit-learn or trainer (issue 95).

Each repetition runs, interleaved so that the machine's load hits all alike, new processes of:

- the peer: ``python -c "import argparse, json"`` (an interpreter that starts and imports argparse);
- ``dptopic --help``;
- each command's ``--help`` below, and a mistyped flag (``train --no-such-flag``, exit status 2).

The table gives each one's median over the repetitions, its ratio to the peer and to ``dptopic --help`` (target: a
command's help within about 2x ``dptopic --help``), and the number of modules the process holds at its exit. Other
work may share the machine: read the ratios, not the seconds.

Run:  python benchmarks/bench_cli_startup.py [--reps 7]
Smoke run (seconds, figures meaningless):  bench_cli_startup.py --reps 1
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import _common  # noqa: F401  (points the ledger at this run's own folder)

COMMANDS = [["--help"], ["train", "--help"], ["train", "--algorithm", "hdp", "--help"], ["topics", "--help"],
            ["report", "--help"], ["corpus", "info", "--help"], ["serve", "--help"], ["audit", "--help"],
            ["experiment", "lira", "--help"], ["train", "--no-such-flag"]]

# runs dptopic's entry point as ``python -m dptopic`` does, then writes how many modules the process imported
DPTOPIC = ("import atexit, runpy, sys\n"
           "atexit.register(lambda: sys.stderr.write(f'modules: {len(sys.modules)}\\n'))\n"
           "sys.argv = ['dptopic', *sys.argv[1:]]\nrunpy.run_module('dptopic', run_name='__main__')\n")


def _run(argv: list) -> tuple[float, int | None]:
    """(seconds, modules) of one new process."""
    code = "import argparse, json" if argv is None else DPTOPIC
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code, *(argv or [])], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "100"})
    seconds = time.perf_counter() - t
    if argv is not None and (r.returncode not in (0, 2) or "modules: " not in r.stderr):
        raise SystemExit(f"dptopic {' '.join(argv)} failed: {r.stderr[-2000:]}")
    modules = int(r.stderr.rpartition("modules: ")[2].split()[0]) if argv is not None else None
    return seconds, modules


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args(argv)
    runs = [None, *COMMANDS]
    times: dict = {i: [] for i in range(len(runs))}
    modules: dict = {}
    for _ in range(a.reps):
        for i, argv in enumerate(runs):
            seconds, n = _run(argv)
            times[i].append(seconds)
            modules[i] = n
    median = {i: statistics.median(ts) for i, ts in times.items()}
    peer, top = median[0], median[1]
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average); {a.reps} repetitions, medians")
    print(f"{'command':<38} {'seconds':>8} {'/ peer':>7} {'/ --help':>9} {'modules':>8}")
    print(f"{'python -c import argparse, json':<38} {peer:>8.3f} {1.0:>7.2f} {peer / top:>9.2f} {'':>8}")
    rows = []
    for i, argv in enumerate(COMMANDS, start=1):
        name = "dptopic " + " ".join(argv)
        print(f"{name:<38} {median[i]:>8.3f} {median[i] / peer:>7.2f} {median[i] / top:>9.2f} {modules[i]:>8}")
        rows.append({"command": name, "seconds": median[i], "over_peer": median[i] / peer,
                     "over_top_help": median[i] / top, "modules": modules[i]})
    worst = max(r["over_top_help"] for r in rows[1:])
    print(f"the slowest command's help or flag error: {worst:.2f}x 'dptopic --help' (target: about 2x at most)")
    print(json.dumps({"peer_seconds": peer, "rows": rows}))


if __name__ == "__main__":
    main()
