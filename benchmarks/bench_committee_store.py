"""What storing a committee-mode round costs per message (``dptopic.service.secure_sum.committee``), without HTTP: the
same N contributors' prekeys and step-0 uploads (made once, by the real contributor code) posted straight into the
round's server object, in memory (``CommitteeRound``) and stored (``StoredCommitteeRound``) on a SQLite file and on
PostgreSQL, by one server process and, on PostgreSQL, by K processes sharing the round (each message under the round's
advisory lock, each process reading in what the others stored). With ``--baseline-src`` another version's package
(its ``src/``) is run beside on the same stores, one process (a version whose committee round holds its copy in
memory and refuses a second process). Each store is a fresh database; the versions alternate ``--repeats`` times.
Prints each run's wall time of the uploads (first to last, all processes) per upload and the server processes' CPU
seconds per upload, with ``uptime`` beside each:

    python benchmarks/bench_committee_store.py --people 1000 --processes 2 --baseline-src OLD/src \\
        --database postgresql+psycopg://postgres@127.0.0.1:5432/dptopic
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402 (points the ledger and contributor state at this run's own folder)
from bench_secure_sum import fresh_database, uptime  # noqa: E402


def make_messages(n: int, vocab: int, work: Path) -> None:
    """``n`` contributors' prekeys and step-0 uploads, as they send them (the roster closed in a round in memory),
    written to ``work/messages.json`` with the plan and the directory."""
    import base64

    from bench_secure_committee import bows
    from dptopic.contributor.secure_sum.committee import CommitteeContributor
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory, read_invitation
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.service.secure_sum.committee import CommitteeRound

    make_invitations(work / "enroll.key", n, work / "inv", round_id="bench", committee=True, dropouts=n // 10,
                     collusion=n // 100 + 1)
    directory = read_directory(work / "inv" / "directory.json")
    plan = SecureSumPlan(1.0, 1e-5, n, n // 10, vocab, n // 100 + 1, committee="auto")
    words = [f"w{i:04d}" for i in range(vocab)]
    rnd = CommitteeRound(plan, directory, words, 20)
    config = {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": words,
              "vocab_size": vocab, "n_topics": 20, "round_id": "bench", "secure_sum": plan.to_dict(),
              "epsilon": plan.epsilon, "delta": plan.delta, "directory": directory}
    people = [CommitteeContributor(config, b, read_invitation(f))
              for b, f in zip(bows(n, vocab), sorted((work / "inv").glob("invitation-*.json")))]
    prekeys = [(c.me, [c.prekey()]) for c in people]
    for who, bundles in prekeys:
        rnd.post_prekeys(who, bundles)
    view = rnd.config_view()
    uploads = []
    for c in people:
        c.check_round(view["roster"], view["committee"])
        body, header, blobs, sig = c.committee_upload(0, view)
        uploads.append([c.me, base64.b64encode(body).decode(), header, blobs, sig])
    (work / "messages.json").write_text(json.dumps({"plan": plan.to_dict(), "directory": directory, "words": words,
                                                    "prekeys": prekeys, "uploads": uploads}))


def child(work: str, database: str, part: int, parts: int) -> None:
    """One server process: its share (every ``parts``-th from ``part``) of the prekeys, then, once the roster has
    closed, of the uploads; prints its timings as JSON."""
    import base64
    import resource

    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.service.secure_sum.committee import CommitteeRound
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound

    doc = json.loads((Path(work) / "messages.json").read_text())
    plan = SecureSumPlan.from_dict(doc["plan"])
    rnd = (CommitteeRound(plan, doc["directory"], doc["words"], 20) if database == "memory" else
           StoredCommitteeRound(plan, doc["directory"], doc["words"], 20, database))
    for who, bundles in doc["prekeys"][part::parts]:
        rnd.post_prekeys(who, bundles)
    while rnd.view()["state"] == "keys":        # the other processes' prekeys
        time.sleep(0.01)
    uploads = [(who, base64.b64decode(body), header, blobs, sig)
               for who, body, header, blobs, sig in doc["uploads"][part::parts]]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.time()
    for who, body, header, blobs, sig in uploads:
        rnd.post_upload(0, who, body, header, blobs, sig)
    t1 = time.time()
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"start": t0, "end": t1, "uploads": len(uploads),
                      "cpu_s": cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime}))


def run(src: Path, work: Path, database: str, processes: int, name: str) -> dict:
    """One store: ``processes`` server processes of the package at ``src`` on a fresh ``database`` (a PostgreSQL
    server's URL, ``sqlite``, or ``memory``)."""
    if database == "sqlite":
        db = f"sqlite:///{work}/{name}.db"
        Path(f"{work}/{name}.db").unlink(missing_ok=True)
    elif database == "memory":
        db = "memory"
    else:
        db = fresh_database(database, name.replace("-", "_"))
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{Path(__file__).resolve().parent}",
           "PYTHONDONTWRITEBYTECODE": "1"}
    procs = [subprocess.Popen([sys.executable, __file__, "--child", str(work), db, str(k), str(processes)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(processes)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode:
            raise RuntimeError(f"{name}: {err[-2000:]}")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    n = sum(o["uploads"] for o in outs)
    wall = max(o["end"] for o in outs) - min(o["start"] for o in outs)
    return {"ms_per_upload": wall / n * 1e3, "cpu_ms_per_upload": sum(o["cpu_s"] for o in outs) / n * 1e3}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--people", type=int, default=1000)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--processes", type=int, default=2, metavar="K",
                    help="server processes sharing the round on PostgreSQL (besides one)")
    ap.add_argument("--database", default=None, metavar="URL", help="a PostgreSQL server's URL (fresh databases)")
    ap.add_argument("--baseline-src", default=None, metavar="DIR")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--work", default=None, metavar="DIR")
    ap.add_argument("--child", nargs=4, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        return child(a.child[0], a.child[1], int(a.child[2]), int(a.child[3]))
    print(machine())
    print("command: python benchmarks/bench_committee_store.py " + " ".join(sys.argv[1:] if argv is None else argv))
    work = Path(a.work or tempfile.mkdtemp(prefix="dptopic-bench-committee-store-"))
    if a.work and work.exists():        # a scratch folder: this run's own
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    mine = Path(__file__).resolve().parents[1] / "src"
    t = time.perf_counter()
    make_messages(a.people, a.vocab, work)
    print(f"messages of {a.people} contributors made in {time.perf_counter() - t:.0f} s")
    versions = {"memory": (mine, "memory", 1), "base-sqlite": (a.baseline_src, "sqlite", 1),
                "sqlite": (mine, "sqlite", 1)}
    if a.database:
        versions.update({"base-pg": (a.baseline_src, a.database, 1), "pg-1": (mine, a.database, 1),
                         f"pg-{a.processes}": (mine, a.database, a.processes)})
    versions = {k: v for k, v in versions.items() if v[0] is not None}
    runs: dict = {k: [] for k in versions}
    for r in range(a.repeats):
        for name, (src, database, k) in versions.items():
            s = run(src, work, database, k, f"store-{name}-{r}")
            runs[name].append(s)
            print(f"  {name:12s} run {r}: {s['ms_per_upload']:.2f} ms an upload (wall), server CPU"
                  f" {s['cpu_ms_per_upload']:.2f} ms an upload; uptime: {uptime()}", flush=True)
    print("\nmedians: " + "; ".join(f"{k} {np.median([s['ms_per_upload'] for s in v]):.2f} ms wall,"
                                    f" {np.median([s['cpu_ms_per_upload'] for s in v]):.2f} ms CPU"
                                    for k, v in runs.items()))


if __name__ == "__main__":
    main()
