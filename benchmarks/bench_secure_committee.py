"""The secure sum's committee mode (``dptopic.protocol.secure_committee``) in process at a realistic size: the real
contributors (:class:`~dptopic.contributor.secure_committee.CommitteeContributor`) and server
(:class:`~dptopic.service.secure_committee.CommitteeRound`) called directly, no HTTP, one process; ``--dropout`` of
the people leave after masking step 0. Prints, as JSON: the plan's committee and thresholds, the wall time, each
role's CPU seconds (an ordinary contributor's per step, a committee member's per step, the server's unmasking),
the bytes of one upload (its vector, its blobs and header, beside what the default protocol sends: its keys, shares
and vector) and the requests per contributor, and whether the sums are exact.

    python benchmarks/bench_secure_committee.py --people 1000 --dropout 0.1
"""
from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


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


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", type=int, default=1000)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--topics", type=int, default=20)
    a = ap.parse_args(argv)

    from dptopic.contributor.secure_committee import REQUESTS_COMMITTEE, REQUESTS_COMMITTEE_MEMBER, CommitteeContributor
    from dptopic.contributor.secure_sum import make_shares
    from dptopic.protocol.enrollment import make_invitations, read_directory, read_invitation
    from dptopic.protocol.secure_sum import SecureSumPlan
    from dptopic.service.secure_committee import CommitteeRound

    n, vocab = a.people, a.vocab
    tmp = Path(tempfile.mkdtemp())
    make_invitations(tmp / "enroll.key", n, tmp / "inv", round_id="bench")
    directory = read_directory(tmp / "inv" / "directory.json")
    invs = [read_invitation(f) for f in sorted((tmp / "inv").glob("invitation-*.json"))]
    F = int(round(a.dropout * n))
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
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
