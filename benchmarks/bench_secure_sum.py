"""The secure sum (``dptopic serve --report-kind secure-sum``) against the central ``--unit user`` trainer on planted
people (as ``bench_user_level.py``: its vocabulary, K = 20, epsilon = 1 per person), and its costs.

Recovery: every person's statistic is computed, quantized, given its Skellam noise share and summed as the
contributors would (the masks cancel exactly in the sum: ``tests/protocol/secure_sum/test_default.py``), with
``--dropout`` of the people dropping out after masking; the topics are read by ``dptopic.models.secure_sum``. Costs: one
contributor's upload at the largest size (the triangle over all V words) with the round's neighbours, and the
server's sum and unmasking of the survivors' uploads at the measured size.

    python benchmarks/bench_secure_sum.py --people 3000 10000 --dropout 0.1

``--http N``: a whole round of N planted people over HTTP instead, as a user runs it (``dptopic secure-sum invite``,
``dptopic serve --report-kind secure-sum`` and ``dptopic experiment secure-sum``, 10% dropping out after masking,
each command its own process), timed per contributor; with ``--baseline-src DIR`` the same round is also run with
another version's package (its ``src/``), alternated with this one ``--repeats`` times:

    python benchmarks/bench_secure_sum.py --http 1000 --baseline-src OLD/src --repeats 2

``--committee``: this version's round also in the committee mode (``serve --secure-committee auto``), alternated;
with ``--database URL`` also on PostgreSQL, served by one process and by ``--servers K``; with ``--baseline-src`` the
baseline's committee round beside (one process; what the per-message lock of several processes costs);
``--committee-only`` leaves the default protocol's rounds out:

    python benchmarks/bench_secure_sum.py --http 1000 --committee
    python benchmarks/bench_secure_sum.py --http 1000 --committee-only --servers 2 --baseline-src OLD/src \
        --database postgresql+psycopg://postgres@127.0.0.1:5432/dptopic

With ``--cohort-size S`` the round is one in cohorts of at most S (``invite`` and ``serve --cohort-size``); with
``--servers K --database URL`` this version's round is served by K processes sharing a fresh database on that
PostgreSQL server, alternated (``--peer-sqlite``) with one process on a SQLite file:

    python benchmarks/bench_secure_sum.py --http 10000 --cohort-size 2000 --workers 2
    python benchmarks/bench_secure_sum.py --http 1000 --servers 2 --peer-sqlite --workers 2 \
        --database postgresql+psycopg://postgres@127.0.0.1:5432/dptopic

``--plan``: the ring and the quantization scale the plan chooses at N = 10^3 to 10^7 (V = ``--vocab``, ε = 1,
10% dropping out), with the rounding's inflation of the per-entry noise (against the noise the same ε needs when
rounding costs nothing) and the wrap-around probability, beside the first version's rule (always modulo 2^32):

    python benchmarks/bench_secure_sum.py --plan

``--curves PNG``: the recovery curves instead of the costs, by number of people and dropout rate, beside the trainers
that need no trusted server and randomize every word, on the same people at the same epsilon per person:

- LP-LDA (``models/lplda.py``, word-presence reports): its budget is per word (per bit of a document's presence
  report), so epsilon per person = 1 becomes epsilon per word = 1 / W by group privacy, W the largest number of
  present words one person's documents hold together (the bits a person can set); reports drawn with the
  simulation generator; ``--lplda-iters`` Gibbs sweeps; only up to ``--local-max-people`` people.
- FedLDA (``models/fedlda.py``): one user per person (their documents as that user's corpus) and
  ``FedLDA(epsilon=1)``, the per-user total, over ``--fedlda-rounds`` rounds.
- the unigram: every topic the corpus's word frequencies, the coverage of a model that learned no topic.

    python benchmarks/bench_secure_sum.py --people 1000 3000 10000 --dropout 0 0.1 0.3 \
        --curves docs/img/secure_sum_curves.png
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
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
    from dptopic.contributor.secure_sum.person_statistics import person_cooccurrence, person_presence, quantize
    from dptopic.mechanisms.skellam import skellam_share
    from dptopic.models.secure_sum import released_words, secure_sum_topics
    from dptopic.person_bound import group_by_person, user_codes

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
            x = person_presence(bow(g), plan.vocab_size) if phase == 0 else \
                person_cooccurrence(bow(g), kept, plan.vocab_size)
            q = quantize(x, plan.scale, rounded_norms(plan.scale, len(x))[0], rng)
            y, _ = skellam_share(q, plan.mu_shares[phase], plan.scale, rng)
            s = y if s is None else s + y
        return s

    s0 = total(0)
    kept = released_words(plan, s0, int(stay.sum()), K)[0]
    s1 = total(1, kept)
    return secure_sum_topics(plan, corpus.vocabulary, K, s0, s1, (int(stay.sum()),) * 2, {}), len(kept)


def people_corpora(corpus, users):
    """Each person's documents as one corpus (FedLDA's users)."""
    u = np.unique(np.asarray(users), return_inverse=True)[1]
    order = np.argsort(u, kind="stable")
    return [corpus.subset(ix) for ix in np.split(order, np.flatnonzero(np.diff(u[order])) + 1)]


def largest_person_words(corpus, users) -> int:
    """The largest number of present words (word-presence bits set) over one person's documents together."""
    import scipy.sparse as sp

    u = np.unique(np.asarray(users), return_inverse=True)[1]
    pres = (corpus.to_bow() > 0).astype(np.int64)
    g = sp.csr_matrix((np.ones(len(u), np.int64), (u, np.arange(len(u)))))
    return int(np.asarray((g @ pres).sum(axis=1)).max())


def curves(a, phi, theta, lengths, vocab):
    import dptopic
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.evaluation import topic_coverage
    from dptopic.models.fedlda import FedLDA
    from dptopic.models.lplda import LPLDA
    from dptopic.protocol.secure_sum.plan import SecureSumPlan

    cov = lambda m: topic_coverage(m, (phi, vocab))["coverage"]  # noqa: E731
    rows, points = [], {}
    for P in a.people:
        corpus, users = draw_people(phi, theta, lengths, vocab, P, a.seed)
        uni = np.asarray(corpus.to_bow().sum(axis=0), dtype=float).ravel()
        base = cov((np.tile(uni, (a.topics, 1)), vocab))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            central = cov(dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=1.0, delta=DELTA, unit="user").fit(
                corpus, user_ids=users))
            t_c = time.perf_counter() - t
            t = time.perf_counter()
            fed = FedLDA(n_topics=a.topics, epsilon=1.0, rounds=a.fedlda_rounds, verbose=0)
            fed.fit(people_corpora(corpus, users))
            fed_cov, fed_entry, t_f = cov(fed), fed._entry_epsilon(), time.perf_counter() - t
            W = largest_person_words(corpus, users)
            lp_cov, t_l = float("nan"), 0.0
            if P <= a.local_max_people:
                t = time.perf_counter()
                try:
                    rep = Randomizer(vocab, epsilon_word=1.0 / W, simulation=True).randomize(corpus)
                    lp_cov = cov(LPLDA(n_topics=a.topics, n_iter=a.lplda_iters, verbose=0).fit(rep))
                except dptopic.DPTopicError as e:
                    print(f"  LP-LDA at epsilon_word=1/{W}: refused: {e}", flush=True)
                t_l = time.perf_counter() - t
        for d in a.dropout:
            plan = SecureSumPlan(1.0, DELTA, P, int(round(d * P)), len(vocab))
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model, n_kept = secure_topics(corpus, users, plan, a.topics, d, np.random.default_rng([a.seed, P]))
            s_cov = cov(model)
            points[(P, d)] = s_cov
            rows.append([f"{P:,}", f"{d:g}", f"{s_cov:.3f}", f"{central:.3f}", f"{s_cov - central:+.3f}",
                         f"{lp_cov:.3f}" if lp_cov == lp_cov else "not run", f"1/{W}", f"{fed_cov:.3f}",
                         f"{fed_entry:.3g}", f"{base:.3f}", f"{time.perf_counter() - t:.0f}",
                         f"{t_c:.0f}/{t_l:.0f}/{t_f:.0f}"])
            print("  ".join(rows[-1]), flush=True)
        points[(P, "central")], points[(P, "lplda")], points[(P, "fedlda")], points[(P, "unigram")] = \
            central, lp_cov, fed_cov, base
    print()
    table(rows, ["people", "dropout", "secure sum", "central", "difference", "LP-LDA", "LP-LDA eps/word", "FedLDA",
                 "FedLDA eps/entry", "unigram", "secure s", "central/LP-LDA/FedLDA s"])
    print("\ncoverage of the planted topics; one unseeded run each (the drawing and the secure sum's rounding and noise"
          " seeded by --seed); epsilon 1 per person for every trainer; FedLDA over"
          f" {a.fedlda_rounds} rounds, LP-LDA {a.lplda_iters} Gibbs sweeps.")
    draw_curves(a, points)


def draw_curves(a, points):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.0, 4.0), dpi=90)
    Ps = list(a.people)
    for d, style in zip(a.dropout, ["-o", "-s", "-^", "-v", "-D"]):
        ax.plot(Ps, [points[(P, d)] for P in Ps], style, label=f"secure sum, {d:.0%} drop out")
    ax.plot(Ps, [points[(P, "central")] for P in Ps], "k--", label="central --unit user (trusted server)")
    ax.plot(Ps, [points[(P, "fedlda")] for P in Ps], ":x", color="tab:purple", label="FedLDA (per-user eps 1)")
    lp = [(P, points[(P, "lplda")]) for P in Ps if points[(P, "lplda")] == points[(P, "lplda")]]
    if lp:
        ax.plot(*zip(*lp), ":+", color="tab:brown", label="LP-LDA (eps/word = 1/W)")
    ax.plot(Ps, [points[(P, "unigram")] for P in Ps], color="grey", lw=0.8, label="unigram (word frequencies as every topic)")
    ax.set_xscale("log")
    ax.set_xticks(Ps)
    ax.set_xticklabels([f"{P:,}" for P in Ps])
    ax.minorticks_off()
    ax.set_xlabel("contributors (people)")
    ax.set_ylabel("coverage of the planted topics")
    ax.set_title("epsilon = 1 per person, delta = 1e-5, K = 20, V = 1,000", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    Path(a.curves).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.curves)
    print(f"wrote {a.curves}")


def plan_main(a):
    """``--plan``: per N, the 32-bit rule's scale and inflation (or its refusal) beside the plan's choice."""
    from dptopic.errors import DPTopicError
    from dptopic.protocol.secure_sum.plan import MAX_INFLATION, MAX_WORDS, SecureSumPlan

    rows, words = [], MAX_WORDS if a.max_words is None else a.max_words
    for N in a.plan_sizes:
        t = time.perf_counter()
        plan = SecureSumPlan(1.0, DELTA, N, N // 10, a.vocab, max_words=words)
        chose = time.perf_counter() - t
        old = SecureSumPlan(1.0, DELTA, N, N // 10, a.vocab, bits=32, max_words=words)
        try:
            old_wrap = old.calibrated()[1]
            old_cells = [f"2^{int(old.scale).bit_length() - 1}", f"{old.noise_inflation:.4f}", f"{old_wrap:.2g}"]
        except DPTopicError:
            old_cells = [f"2^{int(old.scale).bit_length() - 1}", f"{old.noise_inflation:.4f}", "refused (wrap-around)"]
        rows.append([f"{N:,}", *old_cells, str(plan.bits), f"2^{int(plan.scale).bit_length() - 1}",
                     f"{plan.noise_inflation:.4f}", f"{plan.calibrated()[1]:.2g}", f"{plan.upload_bytes(1)}",
                     f"{chose * 1e3:.0f}"])
        print("  ".join(rows[-1]), flush=True)
    print()
    table(rows, ["people", "32-bit scale", "32-bit inflation", "32-bit wrap", "plan bits", "plan scale",
                 "plan inflation", "plan wrap", "bytes an entry", "plan ms"])
    print(f"\ninflation: the per-entry noise (in units of the statistic) over the noise epsilon 1 needs at scale 2^40"
          f" (no rounding cost), V = {a.vocab} (the co-occurrence triangle over {min(words, a.vocab)} words:"
          " --max-words),"
          " 10% dropping out,"
          f" delta = {DELTA:g}; the plan keeps it at most {MAX_INFLATION} and the wrap-around within 1e-3 of delta.")


def upload_cost(plan, V, rng):
    """CPU seconds and bytes of one upload over all V words (the largest), with the round's neighbours."""
    from dptopic.contributor.secure_sum.masks import ContributorSecrets, mask
    from dptopic.contributor.secure_sum.person_statistics import quantize
    from dptopic.protocol.secure_sum.graph import neighbour_graph
    from dptopic.protocol.secure_sum.ring import triangle_size

    n = min(plan.n, plan.degree + 1)
    ids = [f"c{i:05d}" for i in range(n)]
    sec = {i: ContributorSecrets.new(1) for i in ids}
    roster = {i: sec[i].public("r", i) for i in ids}
    graph = neighbour_graph(ids, "r", n - 1)
    dim = triangle_size(V)
    x = rng.random(dim)
    x /= np.linalg.norm(x)
    t = time.process_time()
    from dptopic.accounting.skellam import rounded_norms
    from dptopic.mechanisms.skellam import skellam_share

    q = quantize(x, plan.scale, rounded_norms(plan.scale, dim)[0], rng)
    y, _ = skellam_share(q, plan.mu_shares[1], plan.scale, rng)
    body = mask(y, ids[0], sec[ids[0]], roster, "r", 0, ids, graph, plan.bits).tobytes()
    return time.process_time() - t, len(body)


def server_cost(plan, dim, dropout):
    """Seconds to sum the survivors' uploads in the plan's ring and to unmask them: each survivor's self-mask seed
    reconstructed from its threshold of Shamir shares, checked against its commitment and expanded, and each dropped
    contributor's pairwise key reconstructed and its masks with its neighbours agreed (X25519, HKDF) and expanded."""
    from dptopic.contributor.secure_sum.masks import ContributorSecrets
    from dptopic.protocol.secure_sum import default as ss
    from dptopic.protocol.secure_sum.crypto import pair_seed, prg, seed_commitment
    from dptopic.protocol.secure_sum.ring import ring_sum

    n = plan.n
    up = n - int(round(dropout * n))
    rng = np.random.default_rng(0)
    block = rng.integers(0, 2**63, (64, dim), dtype=np.uint64).astype(plan.dtype)
    t = time.process_time()
    total = ring_sum((block[i % 64] for i in range(up)), plan.bits)
    t_sum = time.process_time() - t
    from dptopic.protocol.secure_sum import shamir

    secret = bytes(range(32))
    shares = shamir.share(secret, range(1, plan.degree + 1), plan.threshold)
    want = seed_commitment("r", "a", 0, secret)
    peer = ContributorSecrets.new(1)
    peer_public = bytes.fromhex(peer.public("r", "p")["s"][0])
    t = time.process_time()
    for _ in range(up):         # each survivor's self-mask seed from its shares, checked, expanded and removed
        seed = ss.reconstruct_checked(shares, plan.threshold, lambda s: seed_commitment("r", "a", 0, s) == want,
                                      "a")
        total -= prg(seed, dim, plan.bits)
    for _ in range(n - up):     # each dropped contributor's key, and its masks with its neighbours
        key = shamir.reconstruct(shares, plan.threshold, 32)
        for k in range(plan.degree):
            total -= prg(pair_seed(key, peer_public, "r", 0, "a", str(k)), dim, plan.bits)
    return t_sum, time.process_time() - t


def free_port(count: int = 1) -> int:
    """A port on 127.0.0.1 that no one listens on now, nor on the ``count - 1`` ports after it (other benchmarks run
    servers on this machine too)."""
    import socket

    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            for k in range(1, count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port + k))
        except OSError:
            continue
        return port
    raise RuntimeError(f"no {count} free consecutive ports on 127.0.0.1")


def uptime() -> str:
    """The load averages as ``uptime`` gives them."""
    return "load average: {:.2f}, {:.2f}, {:.2f}".format(*os.getloadavg())


def fresh_database(url: str, name: str) -> str:
    """A new empty database ``name`` on the PostgreSQL server of ``url`` (dropped first if it exists): its URL."""
    from sqlalchemy import create_engine, text

    head, _ = url.rsplit("/", 1)
    eng = create_engine(f"{head}/postgres", isolation_level="AUTOCOMMIT")
    with eng.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        c.execute(text(f'CREATE DATABASE "{name}"'))
    eng.dispose()
    return f"{head}/{name}"


def postgres_cpu(url: str) -> float:
    """CPU seconds the PostgreSQL server of ``url`` has used (its postmaster's, with every backend it has reaped; a
    backend still open is not counted): read from ``/proc`` of the postmaster that ``data_directory`` names."""
    from sqlalchemy import create_engine, text

    eng = create_engine(url)
    with eng.connect() as c:
        data = c.execute(text("SHOW data_directory")).scalar()
    eng.dispose()
    time.sleep(1.0)     # the backend just closed is reaped
    pid = (Path(data) / "postmaster.pid").read_text().split()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")     # utime, stime, cutime, cstime


def http_round(src, people: Path, words: Path, n: int, work: Path, port: int, invitations: bool,
               workers: int | None = None, cohort_size: int | None = None, servers: int = 1,
               database: str | None = None, committee: bool = False) -> dict:
    """One round of ``n`` people over HTTP on this machine, as a user runs it: ``dptopic serve --report-kind
    secure-sum`` and ``dptopic experiment secure-sum`` (10% dropping out after masking), each its own process, with
    the package at ``src`` (this tree's, or a baseline's). ``invitations``: the round takes invited contributors
    (``dptopic secure-sum invite``), as this version's does. ``cohort_size``: a round in cohorts of at most that many
    (``invite`` and ``serve --cohort-size``). ``servers``: server processes sharing the round's ``database`` (a
    PostgreSQL server's URL: a fresh database on it for this round; None: a SQLite file), on consecutive ports from
    ``port``. ``committee``: the round in the committee mode (``serve --secure-committee auto``). Returns the
    experiment's summary."""
    import json
    import resource
    import shutil
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    dptopic = [sys.executable, "-m", "dptopic"]
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    (work / "token").write_text("bench-token-" + "x" * 20)
    extra = []
    cohorts = ["--cohort-size", str(cohort_size)] if cohort_size else []
    if invitations or cohort_size:
        subprocess.run([*dptopic, "secure-sum", "invite", "--key", str(work / "enroll.key"), "--count", str(n),
                        *cohorts, *(["--dropout-tolerance", str(n // 10)] if cohort_size else []),
                        *(["--committee"] if committee else []),
                        "--out", str(work / "inv")], env=env, check=True, capture_output=True)
        extra = ["--directory", str(work / "inv" / "directory.json")]
    # the invitations pin the tolerance and collusion (a single round's and a round in cohorts'); the server takes them
    size = [] if cohort_size else ["--min-contributors", str(n)]
    db = f"sqlite:///{work}/round.db" if database is None else fresh_database(database,
                                                                             f"bench_{work.name}".replace("-", "_"))
    store = (["--secure-committee", "auto"] if committee else []) + ["--database", db]
    ports = [port + k for k in range(servers)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)      # the server's and the contributors' CPU, from here
    db_before = None if database is None else postgres_cpu(db)
    procs = []
    try:
        for p in ports:
            procs.append(subprocess.Popen(
                [*dptopic, "serve", "--report-kind", "secure-sum", "--unit", "user", "--epsilon", "1", "--delta",
                 "1e-5", "--topics", "20", "--vocabulary", str(words), *size, *cohorts, "--token-file",
                 str(work / "token"), *store, "--port", str(p), "--quiet", *extra],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            for _ in range(600):
                try:
                    import urllib.request

                    urllib.request.urlopen(f"http://127.0.0.1:{p}/v1/config", timeout=2).read()
                    break
                except OSError:
                    if procs[-1].poll() is not None:
                        raise RuntimeError(procs[-1].stderr.read().decode()[-2000:])
                    time.sleep(0.2)
        log = work / "experiment.log"
        with open(log, "wb") as err:
            run = subprocess.run([*dptopic, "experiment", "secure-sum", "--server",
                                  *(f"http://127.0.0.1:{p}" for p in ports),
                                  "--corpus", str(people), "--user-field", "author", "--dropout", "0.1",
                                  "--token-file", str(work / "token"), "--out", str(work / "run"), "--seed", "0",
                                  *(["--quiet", "--workers", str(workers)] if workers else []),     # this tree's
                                  *(["--invitations", str(work / "inv")] if invitations or cohort_size else [])],
                                 env=env, check=False, stdout=subprocess.DEVNULL, stderr=err)
        if run.returncode:
            raise RuntimeError(f"the experiment failed: {log.read_text(errors='replace')[-2000:]}")
        summary = json.loads((work / "run" / "summary.json").read_text())
    finally:
        for server in procs:
            server.terminate()
        for server in procs:
            server.wait(30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary["processes_cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if database is not None:     # the database server is no child: its CPU is counted apart
        summary["database_cpu_s"] = postgres_cpu(db) - db_before
    return summary


def http_main(a, vocab, phi, theta, lengths):
    """``--http N``: the round's wall-clock time per contributor, this tree against ``--baseline-src`` (alternated,
    ``--repeats`` times each), on the planted people of ``--people``'s first size."""
    import json

    out = Path(a.work) if a.work else Path(tempfile.gettempdir()) / "dptopic-bench-secure-sum"
    out.mkdir(parents=True, exist_ok=True)
    (out / "words.txt").write_text("\n".join(vocab) + "\n")
    corpus, users = draw_people(phi, theta, lengths, vocab, a.http, a.seed)
    people = out / f"people-{a.http}.jsonl"
    with open(people, "w") as f:
        for d in range(corpus.n_docs):
            f.write(json.dumps({"author": users[d], "text": " ".join(vocab[w] for w in corpus.doc(d))}) + "\n")
    mine = Path(__file__).resolve().parents[1] / "src"
    # each version: (package, server processes, database, committee mode); --servers K: this tree's K processes on
    # the PostgreSQL server of --database, beside (--peer-sqlite) this tree's one process on a SQLite file;
    # --committee: the committee mode's round (SQLite, and with --database one process and K on PostgreSQL; with
    # --baseline-src the baseline's committee round on the same stores, one process)
    default = not a.committee_only
    versions = {"baseline": (a.baseline_src, 1, None, False) if default else None,
                "sqlite": (mine, 1, None, False) if a.peer_sqlite and default else None,
                "this": (mine, a.servers, a.database, False) if default else None}
    if a.committee or a.committee_only:
        versions.update({"c-base": (a.baseline_src, 1, None, True), "c-sqlite": (mine, 1, None, True)})
        if a.database:
            versions.update({"c-base-pg": (a.baseline_src, 1, a.database, True),
                             "c-pg-1": (mine, 1, a.database, True),
                             f"c-pg-{a.servers}": (mine, a.servers, a.database, True) if a.servers > 1 else None})
    versions = {k: v for k, v in versions.items() if v is not None and v[0] is not None}
    runs = {name: [] for name in versions}
    nan = float("nan")
    for r in range(a.repeats):
        for name, (src, servers, database, committee) in versions.items():
            inv = (Path(src) / "dptopic" / "protocol" / "enrollment.py").exists()    # a version with invitations
            print(f"  {name:8s} run {r} starts; uptime: {uptime()}", flush=True)
            s = http_round(src, people, out / "words.txt", a.http, out / f"{name}-{r}", free_port(servers), inv,
                           a.workers if src == mine or committee else None, a.cohort_size, servers,
                           database, committee)
            runs[name].append(s)
            print(f"  {name:8s} run {r}: {s['seconds']:.1f} s, {s['seconds'] / a.http * 1e3:.1f} ms a contributor,"
                  f" CPU {s.get('cpu_per_contributor_s', nan) * 1e3:.1f} ms"
                  + (f", the contributor processes' garbage collector"
                     f" {s['collector_cpu_per_contributor_s'] * 1e3:.2f} ms"
                     if "collector_cpu_per_contributor_s" in s else "")
                  + f" (server and every process"
                  f" {s['processes_cpu_s'] / a.http * 1e3:.1f} ms), {s.get('bytes_per_contributor', nan) / 1e3:.1f} kB,"
                  f" {s.get('requests_per_contributor', float('nan')):.1f} requests a contributor (median"
                  f" {s.get('requests_median', float('nan')):.0f}), state {s['state']}"
                  + (f", server CPU {s['server_process']['cpu_s']:.0f} s, peak memory"
                     f" {s['server_process']['peak_rss_bytes'] / 2**20:.0f} MiB" if s.get("server_process") else "")
                  + (f", PostgreSQL CPU {s['database_cpu_s']:.0f} s" if "database_cpu_s" in s else "")
                  + (f", {s['cohorts']} cohorts, {s['delegates']} delegates, {s['dropped']} dropped"
                     if "cohorts" in s else "")
                  + f", {s.get('workers', 1)} contributor processes, {s.get('servers', 1)} server processes"
                  + f"; uptime: {uptime()}", flush=True)
    rows = []
    for name, ss_ in runs.items():
        if ss_:
            per = [s["seconds"] / a.http * 1e3 for s in ss_]
            # a version's round in cohorts before the pool counted no costs per contributor (nan)
            cpu = np.median([s.get("cpu_per_contributor_s", nan) for s in ss_]) * 1e3
            sent = np.median([s.get("bytes_per_contributor", nan) for s in ss_]) / 1e3
            every = np.median([s["processes_cpu_s"] for s in ss_]) / a.http * 1e3
            rows.append([name, f"{len(ss_)}", f"{np.median(per):.1f}", f"{cpu:.1f}", f"{every:.1f}", f"{sent:.1f}"])
    print()
    table(rows, ["code", "runs", "ms a contributor (median)", "contributor CPU ms", "all processes' CPU ms",
                 "kB sent"])
    pairs = [("this", "baseline"), ("this", "sqlite"), ("c-sqlite", "c-base"), ("c-pg-1", "c-base-pg"),
             (f"c-pg-{a.servers}", "c-pg-1"), ("c-pg-1", "c-sqlite")]
    for mine_, peer in pairs:
        if runs.get(mine_) and runs.get(peer):
            ratio = (np.median([s["seconds"] for s in runs[mine_]])
                     / np.median([s["seconds"] for s in runs[peer]]))
            cpu = (np.median([s["processes_cpu_s"] for s in runs[mine_]])
                   / np.median([s["processes_cpu_s"] for s in runs[peer]]))
            print(f"\n{mine_} / {peer}: {ratio:.2f}; the two alternated on one machine shared with other work. CPU of"
                  f" the servers and the contributors' processes together: {cpu:.2f}.")


def cohort_recovery_main(a, vocab_size):
    """``--cohort-size S`` (without ``--simulate``): recovery of a round in cohorts of at most S (the noise of
    :class:`~dptopic.protocol.secure_sum.cohorts.CohortPlan`, calibrated for the whole round with each cohort's dropout
    margin),
    beside one single round (:class:`SecureSumPlan`) and the central ``--unit user`` trainer, for each ``--seeds``
    (the planted topics, the drawing and the rounding and noise); the masks and pads cancel exactly
    (``tests/protocol/secure_sum/test_cohorts.py``), so the sums are drawn as the survivors' statistics plus their
    shares. The
    cohorts' and the single round's noise come from one seed but are independent draws (the Poisson sampler's use of
    the stream depends on its mean): ``--hold-noise`` pairs them."""
    import dptopic
    from dptopic.evaluation import topic_coverage
    from dptopic.protocol.secure_sum.cohorts import CohortPlan
    from dptopic.protocol.secure_sum.plan import SecureSumPlan

    rows, diffs = [], {}
    for seed in a.seeds:
        real = source("sotu", vocab_size)
        phi, theta, lengths, _ = plant(real, a.topics, a.iters, seed, 1)
        vocab = list(real.vocabulary)
        for P in a.people:
            corpus, users = draw_people(phi, theta, lengths, vocab, P, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                central = dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=1.0, delta=DELTA, unit="user").fit(
                    corpus, user_ids=users)
            c_cov = topic_coverage(central, (phi, vocab))["coverage"]
            for d in a.dropout:
                F = int(round(d * P))
                cplan = CohortPlan(1.0, DELTA, P, F, len(vocab), a.cohort_size)
                for name, plan in (("cohorts", cplan.round_plan), ("single", SecureSumPlan(1.0, DELTA, P, F,
                                                                                           len(vocab)))):
                    t = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model, n_kept = secure_topics(corpus, users, plan, a.topics, d,
                                                      np.random.default_rng([seed, P]))
                    cov = topic_coverage(model, (phi, vocab))["coverage"]
                    diffs.setdefault((P, d, name), []).append(cov - c_cov)
                    rows.append([str(seed), f"{P:,}", f"{d:g}", name, f"{len(cplan.sizes) if name == 'cohorts' else 1}",
                                 f"{plan.honest:,}", f"{c_cov:.3f}", f"{cov:.3f}", f"{cov - c_cov:+.3f}", str(n_kept),
                                 f"{time.perf_counter() - t:.0f}"])
                    print("  ".join(rows[-1]), flush=True)
    print()
    table(rows, ["seed", "people", "dropout", "round", "cohorts", "honest shares", "central", "secure sum",
                 "difference", "kept words", "s"])
    print()
    table([[f"{P:,}", f"{d:g}", name, f"{np.mean(v):+.3f}", f"{len(v)}"] for (P, d, name), v in diffs.items()],
          ["people", "dropout", "round", "mean difference to central", "seeds"])
    print(f"\ncoverage of the planted topics; cohorts of at most {a.cohort_size}; central ="
          " DocDPCooccurrence(unit='user') unseeded; the target: the cohorts' mean difference within 0.03 of central.")


def cohort_gap_main(a, vocab_size):
    """``--cohort-size S --hold-noise R``: the cohorts' release against one round's on the same people, rounding and
    noise: each plan's sum of Skellam shares over the ``m`` survivors is ``Sk(m mu)``, drawn as the single round's
    ``Sk(m mu_single)`` plus an independent ``Sk(m (mu_cohorts - mu_single))`` (the same law as the sum of the
    cohorts' shares), so the two releases differ only by the cohorts' extra noise; ``R`` noise draws per seed. Prints
    the paired difference in coverage and the spread of one round's coverage over noise draws alone."""
    from dptopic.accounting.skellam import rounded_norms
    from dptopic.contributor.secure_sum.person_statistics import person_cooccurrence, person_presence, quantize
    from dptopic.evaluation import topic_coverage
    from dptopic.models.secure_sum import released_words, secure_sum_topics
    from dptopic.person_bound import group_by_person, user_codes
    from dptopic.protocol.secure_sum.cohorts import CohortPlan
    from dptopic.protocol.secure_sum.plan import MAX_WORDS, SecureSumPlan

    rows, paired, spread = [], [], {}
    for seed in a.seeds:
        real = source("sotu", vocab_size)
        phi, theta, lengths, _ = plant(real, a.topics, a.iters, seed, 1)
        vocab = list(real.vocabulary)
        for P in a.people:
            corpus, users = draw_people(phi, theta, lengths, vocab, P, seed)
            F = int(round(a.dropout[0] * P))
            if a.max_words is None:
                cplan = CohortPlan(1.0, DELTA, P, F, len(vocab), a.cohort_size)
                plans = (("one round", SecureSumPlan(1.0, DELTA, P, F, len(vocab))), ("cohorts", cplan.round_plan))
            else:       # the cohorts' plan without a cap (MAX_WORDS) against the cap --max-words
                plans = tuple((name, CohortPlan(1.0, DELTA, P, F, len(vocab), a.cohort_size, max_words=w).round_plan)
                              for name, w in (("no cap", MAX_WORDS), (f"cap {a.max_words}", a.max_words)))
            (_, single), (_, coh) = plans
            if single.scale != coh.scale:
                raise SystemExit("the two plans quantize at different scales; this comparison assumes one")
            rng = np.random.default_rng([seed, P])
            m = corpus.to_bow()
            (ptr, ids, cts), gptr, _ = group_by_person((m.indptr, m.indices, m.data.astype(np.int64)),
                                                       user_codes(users, corpus.n_docs), None, rng)
            n_people = len(gptr) - 1
            stay = np.ones(n_people, bool)
            stay[rng.choice(n_people, F, replace=False)] = False
            survivors = np.flatnonzero(stay)
            bows = [(ptr[gptr[g]:gptr[g + 1] + 1] - ptr[gptr[g]], ids[ptr[gptr[g]]:ptr[gptr[g + 1]]],
                     cts[ptr[gptr[g]]:ptr[gptr[g + 1]]]) for g in survivors]
            scale = single.scale

            def quantized_sum(stat, bows=bows, scale=scale, seed=seed):
                qrng, s = np.random.default_rng([seed, 11]), None
                for b in bows:
                    x = stat(b)
                    q = quantize(x, scale, rounded_norms(scale, len(x))[0], qrng)
                    s = q if s is None else s + q
                return s

            q0 = quantized_sum(lambda b: person_presence(b, len(vocab)))
            q1_cache: dict = {}
            shares = len(survivors)
            for r in range(a.hold_noise):
                out = {}

                def noise(plan, phase, dim, r=r, seed=seed, P=P):
                    # fresh generators for each release: the common part is the same draw for both plans (at the
                    # smaller of their noise shares), each plan's extra share an independent draw
                    low = min(p.mu_shares[phase] for _, p in plans)
                    base = np.random.default_rng([seed, P, r, phase]).poisson(shares * low, (2, dim))
                    extra = shares * (plan.mu_shares[phase] - low)
                    if extra > 0:
                        base = base + np.random.default_rng([seed, P, r, 2 + phase]).poisson(extra, (2, dim))
                    return base[0] - base[1]

                for name, plan in plans:
                    s0 = q0 + noise(plan, 0, len(q0))
                    kept = released_words(plan, s0, shares, a.topics)[0]
                    key = tuple(int(k) for k in kept)
                    if key not in q1_cache:
                        q1_cache[key] = quantized_sum(lambda b, kept=kept: person_cooccurrence(b, kept, len(vocab)))
                    s1 = q1_cache[key] + noise(plan, 1, len(q1_cache[key]))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = secure_sum_topics(plan, vocab, a.topics, s0, s1, (shares, shares), {})
                    out[name] = (topic_coverage(model, (phi, vocab))["coverage"], len(kept))
                first, second = (out[name] for name, _ in plans)
                paired.append(second[0] - first[0])
                spread.setdefault(seed, []).append(first[0])
                rows.append([str(seed), f"{P:,}", str(r), f"{first[0]:.3f}", f"{second[0]:.3f}",
                             f"{paired[-1]:+.3f}", f"{first[1]}/{second[1]}"])
                print("  ".join(rows[-1]), flush=True)
    print()
    (n1, _), (n2, _) = plans
    table(rows, ["seed", "people", "noise draw", n1, n2, f"{n2} - {n1}", "kept words"])
    sd = np.std(paired, ddof=1) if len(paired) > 1 else float("nan")
    print(f"\npaired difference ({n2} - {n1}, noise held fixed): mean {np.mean(paired):+.4f}, standard error"
          f" {sd / np.sqrt(len(paired)):.4f} over {len(paired)} draws")
    for seed, v in spread.items():
        print(f"seed {seed}: {n1}: coverage over {len(v)} noise draws: mean {np.mean(v):.3f}, standard deviation"
              f" {np.std(v, ddof=1) if len(v) > 1 else float('nan'):.4f}")


def people_bows(phi, theta, lengths, vocab, n: int, seed: int) -> list:
    """``n`` planted people (:func:`draw_people`), each as its documents' bag of words ``(indptr, indices, data)``."""
    corpus, users = draw_people(phi, theta, lengths, vocab, n, seed)
    u = np.unique(np.asarray(users), return_inverse=True)[1]
    order = np.argsort(u, kind="stable")
    m = corpus.to_bow()
    bows = []
    for ix in np.split(order, np.flatnonzero(np.diff(u[order])) + 1):
        sub = m[ix]
        bows.append((sub.indptr.astype("int64"), sub.indices.astype("int64"), sub.data.astype("int64")))
    return bows


def cohort_simulation_main(a, vocab, phi, theta, lengths):
    """``--simulate N --cohort-size S``: a whole round of N planted people in cohorts of at most S, the cohorts dealt
    to ``--workers`` processes (the bridge and coordinator here), with the real server code (every cohort's
    :class:`~dptopic.service.secure_sum.cohorts.CohortRound` and the bridge's, on SQLite files) and the real contributor
    code (``benchmarks/_cohort_round.py``), 10% of the people dropping out after masking; prints each stage's time, each
    process's wall, CPU and peak memory, the servers' sums and the recovery."""
    from _cohort_round import CohortSimulation, usage
    from dptopic.evaluation import topic_coverage
    from dptopic.models.secure_sum import secure_sum_topics
    from dptopic.protocol.secure_sum.cohorts import CohortPlan

    t0 = time.perf_counter()
    bows = people_bows(phi, theta, lengths, vocab, a.simulate, a.seed)
    F = int(round(a.dropout[0] * a.simulate))
    plan = CohortPlan(1.0, DELTA, a.simulate, F, len(vocab), a.cohort_size, max_words=a.max_words)
    d = plan.describe()
    print(f"plan: {d['cohorts']} cohorts of {d['cohort_sizes'][0]}-{d['cohort_sizes'][1]}, tolerance"
          f" {d['cohort_dropouts'][1]} a cohort, degree {d['cohort_degree'][1]}, threshold {d['cohort_threshold'][1]},"
          f" {d['delegates_per_cohort']} delegates a cohort, bridge of {d['bridge']['n']} (degree"
          f" {d['bridge']['degree']}), modulus 2^{d['modulus_bits']}, noise cost {d['noise_cost']:.4f}, at most"
          f" {d['max_words']} words in step 1;"
          f" people drawn in {time.perf_counter() - t0:.0f} s", flush=True)
    rng = np.random.default_rng([a.seed, 7])
    workers = (os.cpu_count() or 1) if a.workers is None else a.workers
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(dir=a.work if a.work and Path(a.work).is_dir() else None) as tmp:
        t = time.perf_counter()
        sim = CohortSimulation(tmp, plan, bows, vocab, topics=a.topics, seed=a.seed, workers=workers or None,
                               progress=lambda line: print(f"  {line} (at {time.perf_counter() - t:.0f} s, load"
                                                           f" {os.getloadavg()[0]:.1f}, this process's peak"
                                                           f" {usage()['peak_rss_bytes'] / 2**20:.0f} MiB)",
                                                           flush=True), verbose=True)
        del bows        # the workers hold their cohorts' people
        ids = [i for g in sim.groups for i in g]
        drop = set(rng.choice(ids, F, replace=False).tolist()) if F else set()
        outcome = sim.run(drop0=drop)
        wall = time.perf_counter() - t
        server = sim.server_report["timings"]
    here = usage()
    procs = [{"process": "this process (bridge, coordinator, planting)", **here, "wall_s": wall}, *sim.processes]
    cpu = sum(p["cpu_s"] for p in procs)
    print(f"\n{a.simulate:,} people in cohorts of {a.cohort_size}, {workers or 'no'} worker processes: {outcome};"
          f" {wall:.0f} s wall ({wall / a.simulate * 1e3:.1f} ms a contributor), CPU {cpu:.0f} s in all"
          f" ({cpu / a.simulate * 1e3:.1f} ms a contributor); load (1 min) {load:.1f} at the start,"
          f" {os.getloadavg()[0]:.1f} at the end; stages {', '.join(f'{k} {v:.0f} s' for k, v in sim.timings.items())}")
    table([[p["process"], f"{p.get('wall_s', float('nan')):.0f}", f"{p['cpu_s']:.0f}",
            f"{p['peak_rss_bytes'] / 2**20:.0f}"] for p in procs]
          + [["total", f"{wall:.0f}", f"{cpu:.0f}", f"{sum(p['peak_rss_bytes'] for p in procs) / 2**20:.0f}"]],
          ["process", "wall s", "CPU s", "peak memory MiB"])
    sums = sum(v.get("sum_s", 0) + v.get("unmask_s", 0) for t_ in server.values() for v in t_.values())
    print(f"servers' sum and unmask: {sums:.1f} s over {len(server)} rounds; the total's peak memory is the sum of"
          " each process's peak (an upper bound)")
    co = sim.coordinator
    if co.model_doc is not None:
        model = secure_sum_topics(plan.round_plan, vocab, a.topics, co.sums[0], co.sums[1],
                                  (co.shares[0], co.shares[1]), {})
        print(f"coverage of the planted topics: {topic_coverage(model, (phi, vocab))['coverage']:.3f}; kept words"
              f" {int(round((np.sqrt(8 * len(co.sums[1]) + 1) - 1) / 2))}")


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
    ap.add_argument("--plan", action="store_true",
                    help="only the ring and scale the plan chooses at --plan-sizes people, beside the 32-bit rule")
    ap.add_argument("--plan-sizes", nargs="+", type=int, default=[10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7],
                    metavar="N", help="--plan: the round sizes")
    ap.add_argument("--curves", default=None, metavar="PNG",
                    help="recovery only, beside LP-LDA, FedLDA and the unigram, drawn to PNG (no costs)")
    ap.add_argument("--local-max-people", type=int, default=3000, help="LP-LDA only up to this many people")
    ap.add_argument("--lplda-iters", type=int, default=50)
    ap.add_argument("--fedlda-rounds", type=int, default=10)
    ap.add_argument("--http", type=int, default=None, metavar="N",
                    help="only time a round of N planted people over HTTP (serve and experiment secure-sum processes)")
    ap.add_argument("--baseline-src", default=None, metavar="DIR",
                    help="--http: also time the same round with the package at DIR (another version's src/),"
                         " alternated")
    ap.add_argument("--repeats", type=int, default=1, help="--http: rounds of each version")
    ap.add_argument("--committee", action="store_true",
                    help="--http: also run this version's round in the committee mode (serve --secure-committee"
                         " auto), alternated")
    ap.add_argument("--committee-only", action="store_true",
                    help="--http: only the committee mode's rounds (--committee's), not the default protocol's")
    ap.add_argument("--workers", type=int, default=None,
                    help="--http: contributor processes of this version's experiment (default: its own, one per core);"
                         " --simulate: processes the cohorts are dealt to (default one per core; 0: this process)")
    ap.add_argument("--servers", type=int, default=1, metavar="K",
                    help="--http: this version's round served by K processes sharing --database (PostgreSQL)")
    ap.add_argument("--database", default=None, metavar="URL",
                    help="--http: a PostgreSQL server's URL (postgresql+psycopg://USER@HOST:PORT/DB): each round of"
                         " this version gets a fresh database there (default: a SQLite file)")
    ap.add_argument("--peer-sqlite", action="store_true",
                    help="--http: also run this version with one server process on a SQLite file, alternated")
    ap.add_argument("--work", default=None, metavar="DIR",
                    help="a scratch folder (default: dptopic-bench-secure-sum under the system's temporary folder)")
    ap.add_argument("--cohort-size", type=int, default=None, metavar="S",
                    help="a round in cohorts of at most S: recovery beside one round and central (with --seeds), or"
                         " with --simulate a whole round in process, or with --http a round over HTTP")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="--cohort-size: the seeds, each a run")
    ap.add_argument("--simulate", type=int, default=None, metavar="N",
                    help="with --cohort-size: only simulate a round of N planted people in process (real server and"
                         " contributor code), timed")
    ap.add_argument("--hold-noise", type=int, default=None, metavar="R",
                    help="with --cohort-size: the cohorts' release against one round's with the noise held fixed, R"
                         " noise draws a seed (no central run)")
    ap.add_argument("--max-words", type=int, default=None, metavar="W",
                    help="with --cohort-size and --hold-noise: the cohorts' plan with at most W words in the second"
                         " sum against the same plan without a cap, the noise held fixed; with --simulate: the plan's"
                         " cap (default: the plan's)")
    a = ap.parse_args(argv)
    if a.cohort_size and a.hold_noise:
        print(machine())
        print("command: python benchmarks/bench_secure_sum.py " + " ".join(sys.argv[1:] if argv is None else argv))
        return cohort_gap_main(a, a.vocab)
    if a.servers > 1 and not a.database:
        ap.error("--servers K > 1 needs --database (a PostgreSQL server's URL): SQLite serves one process")
    if a.cohort_size and not a.simulate and not a.http:
        print(machine())
        print("command: python benchmarks/bench_secure_sum.py " + " ".join(sys.argv[1:] if argv is None else argv))
        return cohort_recovery_main(a, a.vocab)
    if a.plan:
        print(machine())
        print("command: python benchmarks/bench_secure_sum.py " + " ".join(sys.argv[1:] if argv is None else argv))
        return plan_main(a)
    import dptopic
    from dptopic.evaluation import topic_coverage
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.protocol.secure_sum.ring import triangle_size

    print(f"{machine()}; secure sum vs central --unit user, epsilon 1 per person, delta={DELTA:g}, K={a.topics},"
          f" V={a.vocab}")
    print("command: python benchmarks/bench_secure_sum.py " + " ".join(sys.argv[1:] if argv is None else argv))
    real = source("sotu", a.vocab)
    phi, theta, lengths, _ = plant(real, a.topics, a.iters, a.seed, 1)
    vocab = list(real.vocabulary)
    rows = []
    if a.curves:
        return curves(a, phi, theta, lengths, vocab)
    if a.http:
        return http_main(a, vocab, phi, theta, lengths)
    if a.simulate:
        return cohort_simulation_main(a, vocab, phi, theta, lengths)
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
