"""CPU per single-report upload of the service's ASGI app, in this process, against the floor's app.

No HTTP and no client: ``--concurrent`` uploads at a time are handed straight to the app (``dptopic serve``'s
``create_app``, trainer off, V = 1,000, SQLite under ``--folder``) as uvicorn would hand them, each a body of its own
built as ``dptopic submit`` builds it, and the process's CPU time (``time.process_time``: the event loop, the writer
thread and the fsync threads together) is divided by the uploads. The peer is benchmarks/_floor_app.py's app (reads
the upload, stores nothing, answers JSON) under the same driver. What it measures is the app's own work per upload,
the part of the server's CPU that the code decides; bench_service.py measures the whole server over loopback HTTP.

Printed per round (the floor and the service alternating): microseconds of CPU per upload and uploads a second of
wall time; then the medians and the service's CPU over the floor's.

Run:  python benchmarks/bench_upload_cpu.py [--uploads 4000] [--rounds 3] [--synchronous full] [--folder /dev/shm]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import machine

HERE = Path(__file__).resolve().parent


def _scope(i: int, body: bytes) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": "/v1/reports", "raw_path": b"/v1/reports", "query_string": b"", "root_path": "",
            "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/octet-stream"),
                        (b"idempotency-key", b"bench-cpu-%08d" % i), (b"content-length", b"%d" % len(body))],
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2), "state": {}}


async def _drive(app, bodies: list[bytes], concurrent: int) -> tuple[float, float, dict]:
    """``(CPU seconds, wall seconds, answers by status)`` of posting every body, ``concurrent`` at a time."""
    statuses: dict = {}

    async def one(i: int) -> None:
        body, given = bodies[i], []

        async def receive():
            if not given:
                given.append(1)
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)

        async def send(message):
            if message["type"] == "http.response.start":
                statuses[message["status"]] = statuses.get(message["status"], 0) + 1

        await app(_scope(i, body), receive, send)

    async def worker(c: int) -> None:
        for i in range(c, len(bodies), concurrent):
            await one(i)

    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(c) for c in range(concurrent)))
    return time.process_time() - c0, time.perf_counter() - t0, statuses


async def _with_lifespan(app, bodies, concurrent):
    if not hasattr(app, "router") or app.router.lifespan_context is None:
        return await _drive(app, bodies, concurrent)
    async with app.router.lifespan_context(app):
        return await _drive(app, bodies, concurrent)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uploads", type=int, default=4000, help="uploads per run (default 4000)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, the floor and the service alternating (default 3)")
    ap.add_argument("--concurrent", type=int, default=8, help="uploads in flight at once (default 8)")
    ap.add_argument("--synchronous", choices=["full", "normal"], default="full",
                    help="SQLite's synchronous setting of the service's database (default full)")
    ap.add_argument("--folder", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                    help="where the databases go (default /dev/shm, a memory file system: the disk's wait left out)")
    args = ap.parse_args(argv)
    try:
        import starlette  # noqa: F401
    except ImportError as e:
        print(f"bench_upload_cpu: the service's optional packages are not installed ({e.name}; pip install"
              " 'dptopic[service]'): skipped")
        return 0
    sys.path.insert(0, str(HERE))
    import _floor_app
    from bench_service import bodies, vocabulary
    from dptopic.corpus import Vocabulary
    from dptopic.service.app import create_app
    from dptopic.service.startup import serve_config

    try:
        import uvloop
        run = uvloop.run
    except ImportError:
        run = asyncio.run
    words = vocabulary()
    payloads = bodies(words, 1, args.uploads / 8000 + 0.5)[:args.uploads]
    print(f"machine: {machine()}; V={len(words)}, {len(payloads)} single-report uploads per run, {args.concurrent} at a"
          f" time, SQLite synchronous={args.synchronous} under {args.folder or 'the temporary folder'};"
          f" load average {os.getloadavg()[0]:.1f} at the start")
    floor, service = [], []
    for r in range(args.rounds):
        for which in (("floor", "service") if r % 2 == 0 else ("service", "floor")):
            if which == "floor":
                cpu, wall, statuses = run(_with_lifespan(_floor_app.app, payloads, args.concurrent))
                floor.append(cpu / len(payloads))
            else:
                tmp = Path(tempfile.mkdtemp(prefix="dptopic-bench-cpu-", dir=args.folder))
                q = "" if args.synchronous == "full" else f"?synchronous={args.synchronous}"
                cfg = serve_config(Vocabulary(words), epsilon_word=2.0, database=f"sqlite:///{tmp / 's.db'}{q}",
                                   train_interval=0)
                cpu, wall, statuses = run(_with_lifespan(create_app(cfg, start_trainer=False), payloads,
                                                         args.concurrent))
                service.append(cpu / len(payloads))
                for f in tmp.iterdir():
                    f.unlink()
                tmp.rmdir()
            print(f"  round {r + 1}: {which}: {cpu / len(payloads) * 1e6:,.0f} us of CPU per upload,"
                  f" {len(payloads) / wall:,.0f} uploads/s, answers {statuses}", flush=True)
    f, s = float(np.median(floor)), float(np.median(service))
    print(f"\nmedian CPU per upload: floor {f * 1e6:,.0f} us, service {s * 1e6:,.0f} us: the service {s / f:.1f}x the"
          f" floor; load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
