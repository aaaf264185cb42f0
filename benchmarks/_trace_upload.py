"""Where a single-report upload's time goes: ``dptopic serve`` with timestamps on the upload's path, under
bench_service.py's client (a research tool beside bench_service.py, not a benchmark: no peer, no ratio).

    python benchmarks/_trace_upload.py [--seconds 4] [--clients 8] [--synchronous full] [--switch-interval S]

The server runs in a subprocess of this script with the service's own code, wrapped (in that process only) to record
when each upload reaches the app, is checked and queued, is handed to the writer thread, is taken into a group,
when the group's transaction and its fsync end, when the event loop learns it and when the answer is sent. Printed:
requests/s and p50 as the client saw them; each server thread's CPU per upload (``/proc``) and the client's; the
median, mean and p90 of each step; the gap between an answer sent and the same connection's next upload (the
client's own turn-around, with the kernel's); the transactions, their mean group size and the medians of a
transaction and of an fsync; a transaction's mean and p99, and the share of the writer's time in transactions spent
in those over 1 ms (SQLite's checkpoints of the log, a disk busy with other work). The wrappers cost a few
microseconds per step: compare runs of this script, not its requests/s with bench_service.py's.
"""
from __future__ import annotations

import argparse
import contextvars
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = ["recv", "queued", "handover", "taken", "settle", "loop_resolve", "sent"]


def _serve(out: str, switch: float | None, argv: list[str]) -> None:
    """In the server's process: wrap the upload's path, run ``dptopic serve``; at SIGTERM, write the events."""
    from dptopic.service import app as appmod
    from dptopic.service import ingest
    from dptopic.service import storage as stmod

    pc, events, ids, cur, count = time.perf_counter, [], {}, contextvars.ContextVar("upload"), itertools.count()
    names: dict = {}        # thread id -> the Python thread's name, as each first records a step

    def named():
        names.setdefault(str(threading.get_native_id()), threading.current_thread().name)

    def ev(kind, key=None):
        events.append((kind, pc(), key))

    def evf(kind, fut):
        events.append((kind, pc(), ids.get(id(fut))))

    W = ingest.GroupCommitWriter
    submit_async, hand_over, take, settle = W.submit_async, W._hand_over, W._take, W._settle
    store, sync, resolve = stmod.Storage.store, stmod.Storage.sync, ingest._resolve
    call = appmod.UploadEndpoint.__call__

    def w_submit_async(self, sub):
        f = submit_async(self, sub)
        ids[id(f)] = cur.get(None)
        evf("queued", f)
        return f

    def w_hand_over(self, loop, *a):
        for item in self._held.get(loop, []):
            evf("handover", item[1])
        return hand_over(self, loop, *a)

    def w_take(self):
        named()
        items = take(self)
        for item in items:
            evf("taken", item[1])
        return items

    def w_settle(live, results, error):
        for _, f, _ in live:
            evf("settle", f)
        return settle(live, results, error)

    def w_store(self, batch, *a, **k):
        t = pc()
        try:
            return store(self, batch, *a, **k)
        finally:
            events.append(("store", t, pc() - t, len(batch)))

    def w_sync(self):
        named()
        t = pc()
        try:
            return sync(self)
        finally:
            events.append(("sync", t, pc() - t, 0))

    def w_resolve(pairs, error):
        for f, _ in pairs:
            evf("loop_resolve", f)
        return resolve(pairs, error)

    async def w_call(self, scope, receive, send):
        named()
        n = next(count)
        ev("recv", n)
        events.append(("conn", n, scope["client"][1]))
        cur.set(n)
        await call(self, scope, receive, send)
        ev("sent", n)

    W.submit_async, W._hand_over, W._take, W._settle = w_submit_async, w_hand_over, w_take, staticmethod(w_settle)
    stmod.Storage.store, stmod.Storage.sync, ingest._resolve = w_store, w_sync, w_resolve
    appmod.UploadEndpoint.__call__ = w_call

    def dump(*_):
        with open(out, "w") as fh:
            json.dump({"events": events, "threads": names}, fh)
        os._exit(0)

    signal.signal(signal.SIGTERM, dump)
    if switch:
        sys.setswitchinterval(switch)
    from dptopic.cli.main import main
    sys.exit(main(argv))


def _cpu(pid: int) -> dict:
    """CPU seconds of each thread of ``pid``, by thread id."""
    out, tick = {}, os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _analyse(doc: dict, per_thread: dict, n: int) -> None:
    import numpy as np

    events, names = doc["events"], doc["threads"]
    cpu: dict = {}
    for tid, seconds in per_thread.items():
        name = names.get(tid, f"thread {tid}").split("_")[0]
        cpu[name] = cpu.get(name, 0.0) + seconds / n * 1e6
    print("  server CPU per upload (us): " + ", ".join(f"{k} {v:.0f}" for k, v in cpu.items() if v >= 0.5))
    at: dict = {}
    conn = {}
    stores, syncs = [], []
    for e in events:
        if e[0] == "conn":
            conn[e[1]] = e[2]
        elif e[0] == "store":
            stores.append((e[2], e[3]))
        elif e[0] == "sync":
            syncs.append(e[2])
        elif e[2] is not None:
            at.setdefault(e[2], {})[e[0]] = e[1]
    rows = np.array([[a[s] for s in STEPS] for _, a in sorted(at.items()) if all(s in a for s in STEPS)])
    rows = rows[len(rows) // 10:]                       # the first tenth: warm-up
    if len(rows) == 0:
        print("  no upload went through every step")
        return
    d = np.diff(rows, axis=1) * 1e6
    for i in range(len(STEPS) - 1):
        step = f"{STEPS[i]} -> {STEPS[i + 1]}"
        print(f"  {step:24s} median {np.median(d[:, i]):6.0f} us, mean {d[:, i].mean():6.0f},"
              f" p90 {np.percentile(d[:, i], 90):6.0f}")
    total = (rows[:, -1] - rows[:, 0]) * 1e6
    print(f"  {'recv -> sent (server)':24s} median {np.median(total):6.0f} us, mean {total.mean():6.0f}")
    by_conn: dict = {}
    for k, a in at.items():
        if k in conn and "recv" in a and "sent" in a:
            by_conn.setdefault(conn[k], []).append((a["recv"], a["sent"]))
    gaps = np.array([lst[i + 1][0] - lst[i][1] for lst in map(sorted, by_conn.values()) for i in range(len(lst) - 1)])
    if len(gaps):
        gaps = gaps[len(gaps) // 10:] * 1e6
        print(f"  {'sent -> next recv':24s} median {np.median(gaps):6.0f} us, mean {gaps.mean():6.0f}"
              " (the client's turn)")
    if stores:
        s = np.array(stores)
        print(f"  transactions {len(s)}, mean group {s[:, 1].mean():.2f} uploads, transaction median"
              f" {np.median(s[:, 0]) * 1e6:.0f} us" + (f", fsync median {np.median(syncs) * 1e6:.0f} us"
                                                        if syncs else ""))
        slow = s[:, 0] > 1e-3
        print(f"  transaction mean {s[:, 0].mean() * 1e6:.0f} us, p99 {np.percentile(s[:, 0], 99) * 1e6:.0f} us;"
              f" {slow.sum()} over 1 ms, {s[slow, 0].sum() / s[:, 0].sum():.0%} of the writer's time in transactions")


def main(argv=None):
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "--serve":      # the server's process
        return _serve(sys.argv[2], float(sys.argv[3]) or None, sys.argv[4:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds of uploads (default 4)")
    ap.add_argument("--clients", type=int, default=8, help="client threads (default 8)")
    ap.add_argument("--synchronous", choices=["full", "normal"], default="full", help="SQLite's setting (default full)")
    ap.add_argument("--switch-interval", type=float, default=0.0,
                    help="the server's sys.setswitchinterval in seconds (default: Python's, 0.005)")
    args = ap.parse_args(argv)
    import numpy as np

    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent / "tests"))
    import bench_service as bs
    from service_helpers import Server, http

    tmp = Path(tempfile.mkdtemp(prefix="dptopic-trace-"))
    words = bs.prepare(tmp)
    db = f"sqlite:///{tmp / 'trace.db'}" + ("" if args.synchronous == "full" else "?synchronous=normal")
    srv = Server(tmp, db, "--train-interval", "0", "--max-reports-per-request", "10000")
    out = tmp / "events.json"
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with open(tmp / "server.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", str(out),
                                 str(args.switch_interval), *srv.argv()], env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if http("GET", srv.url + "/healthz", timeout=2)[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    payloads = bs.bodies(words, 1, args.seconds)
    c0, m0 = _cpu(proc.pid), os.times()
    elapsed, lat, errors = bs.run_clients(srv.port, payloads, args.clients, args.seconds)
    c1, m1 = _cpu(proc.pid), os.times()
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    n = len(lat)
    print(f"{n / elapsed:,.0f} requests/s, p50 {np.median(lat) * 1e3:.2f} ms, {errors} errors ({args.clients} clients,"
          f" synchronous={args.synchronous}, load average {os.getloadavg()[0]:.1f});"
          f" the client's CPU per upload {((m1.user + m1.system) - (m0.user + m0.system)) / n * 1e6:.0f} us")
    _analyse(json.loads(out.read_text()), {k: v - c0.get(k, 0.0) for k, v in c1.items()}, n)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    main()
