"""The secure sum's committee mode (``dptopic.protocol.secure_sum.committee``) in process at a realistic size: the real
contributors (:class:`~dptopic.contributor.secure_sum.committee.CommitteeContributor`) and server
(:class:`~dptopic.service.secure_sum.committee.CommitteeRound`) called directly, no HTTP, one process; ``--dropout`` of
the people leave after masking step 0. Prints, as JSON: the plan's committee and thresholds, the wall time, each
role's CPU seconds (an ordinary contributor's per step, a committee member's per step, the server's unmasking),
the bytes of one upload (its vector, its blobs and header, beside what the default protocol sends: its keys, shares
and vector) and the requests per contributor, and whether the sums are exact.

    python benchmarks/bench_secure_committee.py --people 1000 --dropout 0.1

``--http N``: a round of N over HTTP on 127.0.0.1, the default protocol (its server app on a SQLite file) and the
committee mode (its app, in memory), alternated ``--repeats`` times, each server a process of its own and the
contributors played by ``--workers`` processes in lock-step (the default: ``experiments.secure_sum_players.play_part``,
as ``dptopic experiment secure-sum`` plays them; the committee: the same schedule for its messages), the same people,
10% leaving after masking step 0; the committee's prekeys posted ahead, timed apart; an admin closes a step once its
survivors are in. Prints the wall time, the messages (requests charged to a person; the part's shared waits are not) and
bytes sent per surviving contributor, and the server process's CPU seconds, with ``uptime`` beside each:

    python benchmarks/bench_secure_committee.py --http 1000 --repeats 1
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402 (points the ledger and contributor state at this run's own folder)


def bows(n: int, vocab: int, seed: int = 0) -> list:
    """``n`` people of five documents of 30 random words each."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        ptr, ids = [0], []
        for _ in range(5):
            ids += list(np.unique(rng.integers(0, vocab, 30)))
            ptr.append(len(ids))
        out.append((np.array(ptr), np.array(ids, dtype=np.int64), np.ones(len(ids), np.int64)))
    return out


def _plan(n: int, vocab: int, committee):
    from dptopic.protocol.secure_sum.plan import SecureSumPlan

    return SecureSumPlan(1.0, 1e-5, n, n // 10, vocab, committee=committee)


def serve(work: str, n: int, vocab: int, committee: bool, port: int) -> None:
    """Run one round's server (``--serve``: a process of its own) on ``port``."""
    import uvicorn

    from dptopic.protocol.secure_sum.enrollment import read_directory

    work_ = Path(work)
    words = [f"w{i:04d}" for i in range(vocab)]
    directory = read_directory(work_ / "inv" / "directory.json")
    if committee:
        from dptopic.service.secure_sum.committee_app import create_committee_app

        app = create_committee_app(_plan(n, vocab, "auto"), directory, words, 20, admin_token="t" * 24,
                                   database=f"sqlite:///{work_}/committee.db")
    else:
        from dptopic.service.secure_sum.config import SecureSumConfig
        from dptopic.service.secure_sum.default_app import create_secure_sum_app

        cfg = SecureSumConfig(words, _plan(n, vocab, None), directory, n_topics=20,
                              database=f"sqlite:///{work_}/round-{port}.db", admin_token="t" * 24,
                              max_body_bytes=64 * 2 ** 20)
        app = create_secure_sum_app(cfg, freeze_gc=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _prekeys(url: str, work: str, people: list, vocab: int) -> float:
    """Post the prekeys of ``people`` (indices) ahead of the round, each with its state file; the seconds taken."""
    from dptopic.contributor.secure_sum.client import post_prekey

    n = int(json.loads((Path(work) / "n.json").read_text()))
    all_bows, files = bows(n, vocab), sorted((Path(work) / "inv").glob("invitation-*.json"))
    t = time.perf_counter()
    for i in people:
        post_prekey(url, all_bows[i], files[i], Path(work) / f"state-{i}.json")
    return time.perf_counter() - t


def _part(url: str, work: str, committee: bool, people: list, dropped: list, vocab: int, threads: int = 8) -> dict:
    """One contributor process, its people played in lock-step from ``threads`` threads (the default protocol:
    ``experiments.secure_sum_players.play_part``, as ``dptopic experiment secure-sum`` plays it; the committee mode: the
    same schedule for its messages). Returns each person's messages (requests charged to it) and bytes sent."""
    from concurrent.futures import ThreadPoolExecutor

    from dptopic.contributor.secure_sum.committee import CommitteeContributor
    from dptopic.experiments.secure_sum_players import CountingClient, play_part
    from dptopic.protocol.secure_sum.enrollment import read_invitation

    n = int(json.loads((Path(work) / "n.json").read_text()))
    all_bows = bows(n, vocab)
    files = sorted((Path(work) / "inv").glob("invitation-*.json"))
    invs = [read_invitation(files[i]) for i in people]
    drop = [bool(dropped[i]) for i in people]
    if not committee:
        class Quiet:
            def put(self, _):
                pass
        r = play_part(url, [all_bows[i] for i in people], invs, drop, Quiet(), threads)
        return {"requests": r["requests"], "up": r["up"]}
    k = len(people)
    client = CountingClient(url, k)
    cfg = client.get_json("/v1/config")
    seats = [(j, CommitteeContributor(cfg, all_bows[i], inv, state=Path(work) / f"state-{i}.json"))
             for j, (i, inv) in enumerate(zip(people, invs))]
    pool = ThreadPoolExecutor(threads)
    order = ("keys", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released")

    def wait(step, query=""):
        while True:
            v = client.get_json(f"/v1/secure/round?wait={step}&timeout=20{query}")
            if v.get("state") == "failed":
                raise RuntimeError(v.get("reason"))
            if order.index(v["state"]) >= order.index(step):
                return v

    def get(j, path):
        client.who = j
        try:
            return client.get_json(path)
        finally:
            client.who = -1

    def post(j, path, body, headers):
        client.who = j
        try:
            return json.loads(client.request("POST", path, body, headers)[2])
        finally:
            client.who = -1

    view = wait("upload0", "&contributor=x&include=roster")
    list(pool.map(lambda s: s[1].check_round(view["roster"], view["committee"]), seats))
    for phase in (0, 1):
        view = wait(f"upload{phase}")

        def upload(s, phase=phase, view=view):
            j, c = s
            if drop[j] or c.me not in view["members"]:
                return
            body, header, blobs, sig = c.committee_upload(phase, view)
            meta = json.dumps({"header": header, "blobs": blobs}).encode()
            post(j, f"/v1/secure/upload/{phase}", meta + body,
                 {"Content-Type": "application/octet-stream", "Dptopic-Contributor": c.me, "Dptopic-Signature": sig,
                  "Dptopic-Meta-Length": str(len(meta))})
        list(pool.map(upload, seats))
        members = [s for s in seats if s[1].me in view["committee"] and not drop[s[0]]]
        if wait(f"consistency{phase}")["state"] == f"consistency{phase}":
            for j, c in members:
                v = get(j, "/v1/secure/round")
                if v["state"] == f"consistency{phase}":
                    post(j, f"/v1/secure/consistency/{phase}", json.dumps(c.committee_consistency(phase, v)).encode(),
                         {"Content-Type": "application/json"})
        if wait(f"unmask{phase}")["state"] == f"unmask{phase}":
            for j, c in members:
                v = get(j, f"/v1/secure/round?contributor={c.me}&include=committee,signatures")
                if v["state"] == f"unmask{phase}" and c.me in v.get("signers", ()):
                    q = c.committee_unmask(phase, v, v["signatures"], v["uploads"])
                    post(j, f"/v1/secure/unmask/{phase}", json.dumps(q).encode(), {"Content-Type": "application/json"})
    wait("released")
    pool.shutdown()
    return {"requests": client.requests[:k].tolist(), "up": client.up[:k].tolist()}


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def http_round(n: int, vocab: int, committee: bool, workers: int, work: Path, port: int) -> dict:
    """One round of ``n`` over HTTP (module note); returns its figures."""
    import subprocess
    import urllib.request
    from concurrent.futures import ProcessPoolExecutor

    from dptopic.protocol.secure_sum.committee import committee_of

    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(work), str(n), str(vocab),
                             str(int(committee)), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/v1/config", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode()[-2000:]) from None
            time.sleep(0.2)
    rng = np.random.default_rng(0)
    dropped = np.zeros(n, bool)
    dropped[rng.choice(n, n // 10, replace=False)] = True
    survivors = int(n - dropped.sum())
    ahead = 0.0
    parts = np.array_split(np.arange(n), workers)
    if committee:       # the prekeys, posted before the round (at enrolment)
        from concurrent.futures import ProcessPoolExecutor as Pool

        with Pool(workers) as pool:
            ahead = max(pool.map(_prekeys, [url] * workers, [str(work)] * workers, [p.tolist() for p in parts],
                                 [vocab] * workers))
    cpu0 = _cpu_of(proc.pid)
    t0 = time.perf_counter()
    from dptopic.contributor.client import ServiceClient

    admin = ServiceClient(url)
    with ProcessPoolExecutor(workers) as pool:
        futs = [pool.submit(_part, url, str(work), committee, p.tolist(), dropped.tolist(), vocab) for p in parts]
        alive_members = None
        seen: dict = {}
        while not all(f.done() for f in futs):
            time.sleep(0.5)
            v = admin.get_json("/v1/secure/round")
            st = v.get("state")
            seen.setdefault(st, round(time.perf_counter() - t0, 1))
            want = None
            if st == "upload0":
                want = survivors
            elif committee and st and st[:-1] in ("consistency", "unmask"):
                if alive_members is None:
                    ids = sorted(json.loads(Path(f).read_text())["contributor"]
                                 for f in sorted((work / "inv").glob("invitation-*.json")))
                    alive_members = sum(1 for m in committee_of(ids, v["round_id"], len(v["committee"]))
                                        if not dropped[ids.index(m)])
                want = alive_members
            got = v.get("uploads_received", v.get("received"))
            if want is not None and got is not None and got >= want:
                admin.request("POST", "/v1/admin/secure/close", b"", {"Authorization": "Bearer " + "t" * 24})
        res = [f.result() for f in futs]
    wall = time.perf_counter() - t0
    state = admin.get_json("/v1/secure/round")["state"]
    cpu = _cpu_of(proc.pid) - cpu0
    proc.terminate()
    proc.wait(30)
    reqs = np.concatenate([r["requests"] for r in res])
    up = np.concatenate([r["up"] for r in res])
    kept = ~dropped
    return {"committee": committee, "state": state, "wall_s": wall, "prekeys_ahead_s": ahead,
            "messages_per_survivor": float(np.mean(reqs[kept])), "bytes_up_per_survivor": float(np.mean(up[kept])),
            "server_cpu_s": cpu, "steps_seen_at_s": seen}


def http_main(a) -> dict:
    """``--http N``: the default protocol and the committee mode over HTTP, alternated."""
    import subprocess

    from dptopic.protocol.secure_sum.enrollment import make_invitations

    out = []
    for r in range(a.repeats):
        for committee in (False, True):
            work = Path(tempfile.mkdtemp(prefix="bench-committee-"))
            make_invitations(work / "enroll.key", a.http, work / "inv", round_id="bench", committee=committee)
            (work / "n.json").write_text(json.dumps(a.http))
            up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
            s = http_round(a.http, a.vocab, committee, a.workers, work, 18000 + 10 * r + int(committee))
            s["uptime_before"] = up
            s["uptime_after"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
            print(json.dumps(s), flush=True)
            out.append(s)
    return {"runs": out}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", type=int, default=1000)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--http", type=int, default=None, metavar="N")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--serve", nargs=5, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.serve:
        work, n, vocab, committee, port = a.serve
        serve(work, int(n), int(vocab), bool(int(committee)), int(port))
        return {"served": True}
    if a.http:
        return http_main(a)

    from dptopic.contributor.secure_sum.client import REQUESTS_COMMITTEE, REQUESTS_COMMITTEE_MEMBER
    from dptopic.contributor.secure_sum.committee import CommitteeContributor
    from dptopic.contributor.secure_sum.masks import make_shares
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory, read_invitation
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.service.secure_sum.committee import CommitteeRound

    n, vocab = a.people, a.vocab
    tmp = Path(tempfile.mkdtemp())
    F = int(round(a.dropout * n))
    make_invitations(tmp / "enroll.key", n, tmp / "inv", round_id="bench", committee=True, dropouts=F)
    directory = read_directory(tmp / "inv" / "directory.json")
    invs = [read_invitation(f) for f in sorted((tmp / "inv").glob("invitation-*.json"))]
    plan = SecureSumPlan(1.0, 1e-5, n, F, vocab, committee="auto")
    words = [f"w{i:04d}" for i in range(vocab)]
    server = CommitteeRound(plan, directory, words, a.topics)
    config = {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": words,
              "vocab_size": vocab, "n_topics": a.topics, "round_id": "bench", "secure_sum": plan.to_dict(),
              "epsilon": plan.epsilon, "delta": plan.delta, "directory": directory}
    people = [CommitteeContributor(config, b, inv, rng=np.random.default_rng([0, k]))
              for k, (b, inv) in enumerate(zip(bows(n, vocab), invs))]
    shares = {}
    for c in people:
        share = c._share

        def recorded(phase, x, c=c, share=share):
            out = share(phase, x)
            shares[(c.me, phase)] = np.asarray(out, np.int64)
            return out
        c._share = recorded
    cpu = {"contributor": [0.0, 0.0], "member": [0.0, 0.0], "server_unmask": [0.0, 0.0], "server_uploads": [0.0, 0.0]}
    t_wall = time.perf_counter()
    for c in people:
        server.post_prekeys(c.me, [c.prekey()])
    roster = server.roster()
    for c in people:
        c.check_round(roster, server.committee)
    committee = set(server.committee)
    drop = {c.me for c in people[::max(1, n // F)][:F] if c.me not in committee} if F else set()
    upload_bytes = {}
    for phase in (0, 1):
        view = server.view()
        t_c, t_s = 0.0, 0.0
        for c in people:
            if c.me in drop:
                continue
            t = time.thread_time()
            body, header, blobs, sig = c.committee_upload(phase, view)
            t_c += time.thread_time() - t
            upload_bytes.setdefault(phase, {"vector": len(body), "blobs": sum(len(b) for b in blobs.values()),
                                            "header": len(json.dumps(header))})
            t = time.thread_time()
            server.post_upload(phase, c.me, body, header, blobs, sig)
            t_s += time.thread_time() - t
        cpu["contributor"][phase] = t_c / (n - len(drop))
        cpu["server_uploads"][phase] = t_s
        if server.state == f"upload{phase}":
            server.close()
        member_cpu = []
        for m in sorted(committee):
            t = time.thread_time()
            q = people[[p.me for p in people].index(m)].committee_consistency(phase, server.committee_view(phase, m))
            member_cpu.append(time.thread_time() - t)
            server.post_consistency(phase, m, q["signature"])
        sigs = server.signatures(phase)
        for k, m in enumerate(sorted(committee)):
            v = server.committee_view(phase, m)
            t = time.thread_time()
            q = people[[p.me for p in people].index(m)].committee_unmask(phase, v, sigs, v["uploads"])
            member_cpu[k] += time.thread_time() - t
            t = time.thread_time()
            server.post_unmask(phase, m, q["answers"], q["signature"])
            if server.state != f"unmask{phase}":
                cpu["server_unmask"][phase] = time.thread_time() - t
        cpu["member"][phase] = float(np.median(member_cpu))
        assert server.state in ("upload1", "released"), (server.state, server.reason)
    wall = time.perf_counter() - t_wall
    exact = [bool(np.array_equal(server.sums[p], np.sum([shares[(u, p)] for u in server.uploaded[p]], axis=0)))
             for p in (0, 1)]
    # the default protocol's bytes for the same contributor: its keys message, its shares (one ciphertext per
    # neighbour) and its vector
    ref = people[0]
    default_shares = make_shares(ref.me, ref.secrets, roster, "bench", ref.graph, plan.threshold)
    out = {"people": n, "dropouts": F, "committee": plan.committee, "committee_threshold": plan.committee_threshold,
           "degree": plan.degree, "threshold": plan.threshold, "wall_s": wall, "exact": exact,
           "cpu_s": cpu, "upload_bytes": upload_bytes,
           "default_shares_bytes": sum(len(base64.b64decode(v)) for v in default_shares.values()),
           "requests": {"ordinary": len(REQUESTS_COMMITTEE), "committee_member": len(REQUESTS_COMMITTEE_MEMBER),
                        "default": 9}}
    print(machine())
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
