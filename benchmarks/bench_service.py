"""Collection-service ingest throughput: randomized reports stored per second, over loopback HTTP.

A real ``dptopic serve`` (uvicorn, one process, trainer off: ``--train-interval 0``) on 127.0.0.1;
``--clients`` concurrent client threads (keep-alive connections) post pre-randomized uploads of
``--reports-per-request`` reports at V=1000 for ``--seconds`` seconds; every upload is acknowledged
only after its transaction committed and reached the disk (SQLite: WAL, each commit followed by an fsync of the log
before its uploads are answered, as synchronous=FULL; with ``--synchronous normal`` no fsync, which survives a killed
server but not a power loss; PostgreSQL: synchronous_commit=on). With the
trainer on, training competes with ingest for the same cores.

Printed, one row per database and upload size, columns in this order:

* ``reports/request``, ``clients``: the upload size and the number of client threads (each upload built as
  ``dptopic submit`` builds it, with its own upload nonce, so the server checks it against the stored uploads);
* ``reports/s stored``: reports counted in the database afterwards, per second of the run;
* ``requests/s``, ``p50 ms``, ``p99 ms``: uploads answered per second and their latency percentiles;
* ``errors``: uploads not answered 201 (a refusal or a connection error);
* ``floor requests/s``: the same client against a bare uvicorn + Starlette server that stores nothing
  (benchmarks/_floor_app.py), run next to the service in every round (``--rounds``, the order alternating): the HTTP
  stack's ceiling on this machine;
* ``ratio to floor``: ``requests/s`` divided by ``floor requests/s`` of the same round (median over the rounds);
* ``direct SQL reports/s``: the same rows written straight into an empty database of the same kind
  with the service's own ``Storage.store`` (no HTTP, no validation, no group commit), one transaction per
  upload: what storing one upload per transaction costs, which the service's group commit beats under
  concurrency.

Target: >= 2,000 reports/s stored on SQLite at V=1000.

Run:  python benchmarks/bench_service.py [--seconds 10] [--clients 8] [--reports-per-request 1 25] [--no-postgres]
      [--rounds N]      (N rounds per row, the floor and the service alternating; medians)
Single-report target:  python benchmarks/bench_service.py --reports-per-request 1 --no-postgres --rounds 5 --seconds 6
                      [--synchronous full normal]
Smoke run (seconds):  bench_service.py --seconds 1 --clients 2 --reports-per-request 1 --no-postgres
"""
from __future__ import annotations

import argparse
import hashlib
import http.client
import itertools
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from _common import machine, table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from dptopic.contributor.randomizer import Randomizer  # noqa: E402
from service_helpers import PG_BIN, SYLLABLES, PostgresServer, Server, count_rows  # noqa: E402

V = 1000


def vocabulary() -> list[str]:
    return ["".join(p) for p in itertools.product(SYLLABLES, repeat=3)][:V]


def prepare(tmp: Path) -> list[str]:
    words = vocabulary()
    rng = np.random.default_rng(1)
    (tmp / "vocab.txt").write_text("\n".join(words) + "\n")
    (tmp / "prior.txt").write_text("\n".join(" ".join(words[j] for j in rng.integers(0, V, 40)) for _ in range(50)))
    (tmp / "token").write_text("bench-admin-token-0123456789\n")
    return words


def bodies(words, per_request: int, seconds: float) -> list[bytes]:
    """Upload bodies as ``dptopic submit`` builds them (each with its own upload nonce, so the server runs its
    duplicate-body lookup on every one), more than the clients can send in ``seconds``: upload s holds reports
    s .. s + per_request - 1 of one randomized set, so n uploads need only n + per_request - 1 reports."""
    from dptopic.protocol import codec as protocol_codec

    n = int(seconds * REQUESTS_PER_SECOND_CAP / max(1, per_request) ** 0.4)
    rng = np.random.default_rng(0)
    rz = Randomizer(words, epsilon_word=2.0, secure=True)
    docs = [[words[j] for j in rng.integers(0, V, 40)] for _ in range(n + per_request - 1)]
    rs = rz.randomize(docs)
    return [protocol_codec.encode_reports(rs[i:i + per_request]) for i in range(n)]


REQUESTS_PER_SECOND_CAP = 8000   # single-report uploads per second no stored run here comes near (SQLite: about
# 2,200; the floor, which stores nothing, cycles through its bodies)


def run_clients(port: int, payloads: list[bytes], clients: int, seconds: float, cycle: bool = False):
    """``clients`` threads posting ``payloads`` for ``seconds``; ``cycle``: a client starts its bodies again when it
    has sent them all (the floor stores nothing, so a repeated body costs it the same), else it stops."""
    lat, lock, stop = [], threading.Lock(), time.monotonic() + seconds
    errors, exhausted = [0], [False]

    def worker(c):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine, i, own = [], 0, payloads[c::clients]   # every request a body of its own
        while time.monotonic() < stop:
            if i == len(own) and not cycle:
                exhausted[0] = True
                break
            body = own[i % len(own)]
            headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": f"bench-{port}-{c}-{i:08d}"}
            t = time.perf_counter()
            try:
                conn.request("POST", "/v1/reports", body, headers)
                r = conn.getresponse()
                r.read()
                ok = r.status == 201
            except OSError:
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            mine.append(time.perf_counter() - t)
            if not ok:
                errors[0] += 1
            i += 1
        conn.close()
        with lock:
            lat.extend(mine)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if exhausted[0]:
        print("  warning: a client ran out of distinct bodies before the time was up; raise REQUESTS_PER_SECOND_CAP",
              flush=True)
    return time.perf_counter() - t0, np.asarray(lat), errors[0]


def peer_direct(database: str, payload_rows: list[list[bytes]], seconds: float) -> float:
    """Reports/s written straight into the database with ``Storage.store`` (no HTTP), one transaction per upload."""
    from dptopic.service.storage import Storage, Submission

    st = Storage(database)
    n, i, stop = 0, 0, time.monotonic() + seconds
    t0 = time.perf_counter()
    while time.monotonic() < stop and i < len(payload_rows):
        digest, rows = payload_rows[i]
        st.store([Submission(f"peer-{i:09d}", digest, None, rows, unique_body=True)])   # the same lookup
        n += len(rows)
        i += 1
    el = time.perf_counter() - t0
    st.close()
    return n / el


class FloorServer:
    """benchmarks/_floor_app.py in a subprocess: uvicorn + Starlette, an endpoint that stores nothing."""

    def __init__(self):
        from service_helpers import free_port, http
        self.port, self._http = free_port(), http

    def start(self) -> "FloorServer":
        import os
        import subprocess
        here = Path(__file__).resolve().parent
        env = {**os.environ, "PYTHONPATH": str(here.parent / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen([sys.executable, str(here / "_floor_app.py"), str(self.port)], env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self._http("GET", f"http://127.0.0.1:{self.port}/healthz", timeout=2)[0] == 200:
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the floor server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)


def run_floor(words, per: int, seconds: float, clients: int) -> tuple[float, float]:
    """Requests/s and p99 ms of the bare floor for one upload size, with the same client."""
    srv = FloorServer().start()
    try:
        elapsed, lat, errors = run_clients(srv.port, bodies(words, per, seconds), clients, seconds, cycle=True)
    finally:
        srv.stop()
    return len(lat) / elapsed, np.percentile(lat, 99) * 1e3


def run_service(make_db, words, per: int, args, tmp: Path, name: str):
    """One run of ``dptopic serve`` on a fresh database: ``(reports/s stored, requests/s, latencies, errors,
    payloads)``."""
    db, cleanup = make_db(tmp, name)
    srv = Server(tmp, db, "--train-interval", "0", "--max-reports-per-request", "10000").start()
    try:
        payloads = bodies(words, per, args.seconds)
        elapsed, lat, errors = run_clients(srv.port, payloads, args.clients, args.seconds)
    finally:
        srv.stop()
    stored = count_rows(db)["n_reports"]
    cleanup()
    return stored / elapsed, len(lat) / elapsed, lat, errors, payloads


def bench_backend(name, make_db, words, args):
    """One row per upload size: the service and the floor in ``--rounds`` rounds, their order alternating (floor
    first in even rounds), medians over the rounds; the ratio is the median of each round's service over its floor."""
    out = []
    for per in args.reports_per_request:
        tmp = Path(tempfile.mkdtemp(prefix="dptopic-bench-"))
        prepare(tmp)
        svc, flo, lats, errs = [], [], [], 0
        for r in range(args.rounds):
            for which in (("floor", "service") if r % 2 == 0 else ("service", "floor")):
                if which == "floor":
                    flo.append(run_floor(words, per, args.seconds, args.clients))
                    print(f"  round {r + 1}: floor x{per}: {flo[-1][0]:,.0f} requests/s, p99 {flo[-1][1]:.1f} ms",
                          flush=True)
                else:
                    rps, req_s, lat, errors, payloads = run_service(make_db, words, per, args, tmp, f"svc{per}r{r}")
                    svc.append((rps, req_s))
                    lats.append(lat)
                    errs += errors
                    print(f"  round {r + 1}: {name} x{per}: {rps:,.0f} reports/s stored, {req_s:,.0f} requests/s,"
                          f" p99 {np.percentile(lat, 99) * 1e3:.1f} ms", flush=True)
        peer_db, peer_cleanup = make_db(tmp, f"peer{per}")
        from dptopic.protocol.reports import ReportSet
        rows = [(hashlib.sha256(b).hexdigest(), [r.tobytes() for r in ReportSet.from_bytes(b).packed])
                for b in payloads]
        peer = peer_direct(peer_db, rows, min(args.seconds, 5.0))
        peer_cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
        lat = np.concatenate(lats)
        ratio = float(np.median([s[1] / f[0] for s, f in zip(svc, flo)]))
        out.append([name, per, args.clients, f"{np.median([s[0] for s in svc]):,.0f}",
                    f"{np.median([s[1] for s in svc]):,.0f}", f"{np.percentile(lat, 50) * 1e3:.1f}",
                    f"{np.percentile(lat, 99) * 1e3:.1f}", errs, f"{np.median([f[0] for f in flo]):,.0f}",
                    f"{ratio:.2f}", f"{peer:,.0f}"])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0,
                    help="seconds each run posts uploads for (default 10; the direct SQL run takes at most 5)")
    ap.add_argument("--clients", type=int, default=8,
                    help="concurrent client threads, each on its own keep-alive connection (default 8)")
    ap.add_argument("--reports-per-request", type=int, nargs="+", default=[1, 25, 100], metavar="N",
                    help="reports in each upload; one run per value given, for each database (default 1 25 100)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="rounds of each row: the service and the floor alternate, floor first in odd rounds; medians"
                         " over the rounds (default 1)")
    ap.add_argument("--synchronous", nargs="+", choices=["full", "normal"], default=["full"],
                    help="SQLite's synchronous setting, one SQLite row per value (the service's ?synchronous= in the"
                         " database URL): full (the default: an fsync per commit, an acknowledged upload survives a"
                         " power loss) or normal (no wait for the disk: it survives the server being killed, not a"
                         " power loss)")
    ap.add_argument("--no-postgres", action="store_true",
                    help="SQLite only; by default PostgreSQL is measured too when its server binaries are installed"
                         " (a throwaway cluster in a temporary folder)")
    args = ap.parse_args(argv)
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        print(f"bench_service: the service's optional packages are not installed ({e.name}; pip install"
              " 'dptopic[service]'): skipped")
        return 0
    words = vocabulary()
    import os
    print(f"machine: {machine()}; V={V}, {args.clients} client threads, {args.seconds:g} s per run, loopback HTTP;"
          f" {args.rounds} round(s); load average {os.getloadavg()[0]:.1f} at the start")
    rows = []
    for sync in args.synchronous:
        query = "" if sync == "full" else f"?synchronous={sync}"
        rows += bench_backend("sqlite" if sync == "full" else f"sqlite, synchronous={sync}",
                              lambda tmp, n, q=query: (f"sqlite:///{tmp / (n + '.db')}{q}", lambda: None), words, args)
    if not args.no_postgres and PG_BIN is None:
        print("PostgreSQL: no server binaries under /usr/lib/postgresql: skipped (SQLite only)", flush=True)
    if not args.no_postgres and PG_BIN is not None:
        pg = PostgresServer().start()
        from sqlalchemy import create_engine, text

        def make_pg(tmp, n):
            eng = create_engine(pg.url, isolation_level="AUTOCOMMIT")
            with eng.connect() as c:
                c.execute(text(f"CREATE DATABASE {n}"))
            eng.dispose()
            return pg.url.replace("/dptopic", f"/{n}"), lambda: None

        try:
            rows += bench_backend("postgresql", make_pg, words, args)
        finally:
            pg.stop()
    print()
    table(rows, ["database", "reports/request", "clients", "reports/s stored", "requests/s", "p50 ms", "p99 ms",
                 "errors", "floor requests/s", "ratio to floor", "direct SQL reports/s"])
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; medians over the rounds; ratio to floor: the median"
          " over the rounds of requests/s over the floor's of the same round (target on SQLite with one report per upload:"
          " >= 0.5)")


if __name__ == "__main__":
    main()
