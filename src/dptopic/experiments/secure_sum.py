"""``dptopic experiment secure-sum``: a secure-sum round played by every person of a corpus over HTTP, beside the
central user-level trainer on the same documents (docs/secure_sum.md).

The contributors run in a pool of real processes (:func:`play_round`; a round in cohorts, :func:`play_cohort_round`),
each process playing its share of the people against one of the round's servers, so that a round of thousands can be
measured on one machine as it would run: every contributor's requests, bytes and CPU time are counted where they are
made, and each server process reports its own CPU seconds and peak memory (``GET /v1/secure/timings``)."""
from __future__ import annotations

import base64
import multiprocessing
import os
import queue as queue_module
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from .._progress import progress_bar
from ..contributor.client import ServiceClient
from ..contributor.secure_sum.client import ORDER
from ..errors import DPTopicError, ParameterError
from ..evaluation import topic_coverage
from ..models import DocDPCooccurrence, model_from_blobs
from ..protocol.secure_sum.cohorts import CohortPlan
from ..protocol.secure_sum.person_ids import seat_by_person
from .secure_sum_players import play_cohort_part, play_committee_part, play_part


def person_bows(corpus) -> list:
    """Each person's documents of ``corpus`` (read with its ``user_ids``) as
    :func:`~dptopic.contributor.secure_sum.client.person_bow`'s arrays, one tuple per person in the order of their
    sorted ids."""
    codes = np.unique(np.asarray(corpus.user_ids, dtype=str), return_inverse=True)[1]
    m = corpus.to_bow()
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(codes.max() + 2))
    bows = []
    for g in range(codes.max() + 1):
        sub = m[order[starts[g]:starts[g + 1]]]
        bows.append((sub.indptr.astype("int64"), sub.indices.astype("int64"), sub.data.astype("int64")))
    return bows


def default_workers() -> int:
    """Contributor processes by default: one per core this process may use, at most 8 (the server needs cores too)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:      # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


def server_usage(servers) -> dict:
    """Each server process's own CPU seconds and peak memory (``GET /v1/secure/timings``), summed over them."""
    procs = []
    for s in servers:
        t = ServiceClient(s, retries=3).get_json("/v1/secure/timings")
        if isinstance(t.get("process"), dict):
            procs.append(t["process"])
    return {"processes": len(procs), "cpu_s": float(sum(p["cpu_s"] for p in procs)),
            "peak_rss_bytes": int(max((p["peak_rss_bytes"] for p in procs), default=0)),
            "peak_rss_bytes_total": int(sum(p["peak_rss_bytes"] for p in procs))}


def _pool_settings(n: int, invitations, workers: int | None, threads: int) -> int:
    """The contributor processes a pool of ``workers`` starts for ``n`` people (None: :func:`default_workers`), after
    the checks of the pool's settings; one line for a bad one."""
    if n != len(invitations):
        raise ParameterError("{people} people but {count} {invitations}: one invitation per person.", "invitations",
                             people=n, count=len(invitations))
    workers = default_workers() if workers is None else int(workers)
    if not 1 <= workers <= 256:
        raise ParameterError("{workers=} must lie between 1 and 256.", "workers", workers)
    if not 1 <= int(threads) <= 64:
        raise ParameterError("{threads=} must lie between 1 and 64.", "threads", threads)
    return max(1, min(workers, n))


def _play_in_pool(target, servers: list, bows, invitations, dropped, workers: int, threads: int, total_msgs: int,
                  title: str, verbose: int, on_message, initializer=None) -> tuple[list, float]:
    """Every person of ``bows`` played from ``workers`` spawned contributor processes, each running ``target`` (a
    part's function: :func:`~dptopic.experiments.secure_sum_players.play_part`, or for a round in cohorts
    :func:`~dptopic.experiments.secure_sum_players.play_cohort_part`) on a contiguous part of the people against
    ``servers[w % len(servers)]``; the progress bar counts the ``total_msgs`` messages they report, and
    ``on_message(kind, count)`` is called with each message of a part and, with ``(None, 0)``, at least every quarter
    second (the coordinator's closes). ``initializer``: a function each process runs first (by name). Returns the
    parts' results, in order, and the wall-clock time."""
    parts = np.array_split(np.arange(len(bows)), workers)
    ctx = multiprocessing.get_context("spawn")      # no fork of a process that may hold threads and sockets
    t0 = time.perf_counter()
    with ctx.Manager() as manager, ProcessPoolExecutor(workers, mp_context=ctx, initializer=initializer) as pool, \
            progress_bar(total_msgs, title, verbose) as bar:
        progress = manager.Queue()
        futures = [pool.submit(target, servers[w % len(servers)], [bows[i] for i in part],
                               [invitations[i] for i in part], np.asarray(dropped)[part].tolist(), progress, threads)
                   for w, part in enumerate(parts)]
        done_msgs = 0
        while True:
            try:
                kind, count = progress.get(timeout=0.25)
            except queue_module.Empty:
                kind, count = None, 0
            if kind == "sent":
                step = min(count, total_msgs - done_msgs)
                done_msgs += step
                bar.advance(step, info=f"{done_msgs:,} messages")
            on_message(kind, count)
            failed = next((f for f in futures if f.done() and f.exception() is not None), None)
            if failed is not None:
                for f in futures:
                    f.cancel()
                raise failed.exception()
            if kind is None and all(f.done() for f in futures):
                break
        results = [f.result() for f in futures]
        bar.advance(total_msgs - done_msgs)
    return results, time.perf_counter() - t0


def _costs(results: list, n: int, wall: float, servers: list) -> dict:
    """What a pool's parts (``results``) report of their ``n`` people, per contributor (time, requests, bytes up and
    down, CPU, the cyclic collector's), with the servers' own CPU and peak memory (:func:`server_usage`)."""
    def per(key):
        return np.concatenate([np.asarray(r[key], float) for r in results])

    up, down, cpu, reqs, secs = per("up"), per("down"), per("cpu"), per("requests"), per("request_seconds")
    return {"seconds": wall, "seconds_per_contributor": wall / n,
            "request_seconds_per_contributor": float(np.mean(secs)),
            "bytes_per_contributor": float(np.mean(up)), "bytes_down_per_contributor": float(np.mean(down)),
            "requests_per_contributor": float(np.mean(reqs)), "requests_median": float(np.median(reqs)),
            "waiting": {k: sum(r["waiting"][k] for r in results) for k in ("up", "down", "requests")},
            "upload_bytes_max": int(max(r["upload_bytes_max"] for r in results)),
            "cpu_per_contributor_s": float(np.mean(cpu)), "cpu_per_contributor_max_s": float(np.max(cpu)),
            "collector_cpu_per_contributor_s": sum(sum(r["collector"]["seconds"]) for r in results) / n,
            "collector_runs": [int(sum(r["collector"]["runs"][g] for r in results)) for g in range(3)],
            "collector_frozen": int(min(r["collector"]["frozen"] for r in results)),
            "server_process": server_usage(servers)}


def play_round(servers, bows, invitations, dropout: float, token: str | None, *, seed=None, workers: int | None = None,
               threads: int = 8, verbose: int = 1) -> dict:
    """Play every person of ``bows`` (one bag of words each, holding ``invitations`` in order) over HTTP against the
    round served at ``servers`` (one address, or several server processes sharing the round's database), from
    ``workers`` contributor processes (spawned; by default :func:`default_workers`), each playing a contiguous part of
    the people against ``servers[w % len(servers)]`` and sending their messages from ``threads`` threads. A share
    ``dropout`` of the people (chosen from ``seed``: the only random choice made here; the contributors' rounding and
    noise come from the OS CSPRNG) drops out after masking; ``token`` (the admin's) then closes each step left open
    once every process has sent its messages of it. Returns the wall-clock time,
    the time, requests, bytes up and down and CPU seconds per contributor, and the servers' own CPU and memory."""
    servers = [servers] if isinstance(servers, str) else list(servers)
    n = len(bows)
    workers = _pool_settings(n, invitations, workers, threads)
    if not servers:
        raise ParameterError("give at least one server address in {servers}.", "servers")
    rng = np.random.default_rng(seed)
    dropped = np.zeros(n, bool)
    n_drop = int(round(dropout * n))
    if n_drop:
        dropped[rng.choice(n, n_drop, replace=False)] = True
    if n_drop and token is None:
        raise ParameterError("contributors drop out, so step 0 closes by the admin only: give the server's admin"
                             " {token}.", "token")
    coordinator = ServiceClient(servers[0], retries=5)
    reported: dict = {}
    plan = coordinator.get_json("/v1/config").get("secure_sum") or {}
    committee = bool(plan.get("committee"))        # the committee mode: its own part player

    def on_message(kind, count):
        if kind == "done":       # a part has sent its messages of step ``count``
            reported[count] = reported.get(count, 0) + 1
            if reported[count] == workers and token is not None:
                # every part has sent them: a step still open waits for those who dropped out (or were left
                # out) and closes by the admin, as an operator closes it once the survivors are in
                view = coordinator.get_json("/v1/secure/round")
                if view["state"] == count:
                    coordinator.request("POST", "/v1/admin/secure/close", b"", {"Authorization": f"Bearer {token}"})

    messages = 2 * n + (n - n_drop) + 4 * int(plan.get("committee", 0)) if committee else 2 * n + 6 * (n - n_drop)
    results, wall = _play_in_pool(play_committee_part if committee else play_part, servers, bows, invitations,
                                  dropped, workers, threads, messages, "secure-sum round", verbose, on_message)
    view = coordinator.get_json("/v1/secure/round")
    timings = coordinator.get_json("/v1/secure/timings")
    return {"state": view["state"], "reason": view.get("reason"), "people": n, "dropped": n_drop,
            "workers": workers, "servers": len(servers), **_costs(results, n, wall, servers),
            "server": {k: v for k, v in timings.items() if k != "process"},
            "kept_words": len(view.get("kept", []) or []),
            "neighbours": int(plan.get("degree", 0)), "threshold": int(plan.get("threshold", 0)),
            **({"committee": int(plan["committee"]), "committee_threshold": int(plan["committee_threshold"])}
               if committee else {})}


SINGLE_ROUND_DROPOUT = 0.1
"""The share of people a single round played by :func:`secure_sum_experiment` drops after masking by default."""


def experiment_dropout(dropout: float | None) -> float:
    """The share of people who drop out after masking in a single round played by :func:`secure_sum_experiment`:
    ``dropout``, or by default (None) :data:`SINGLE_ROUND_DROPOUT` (in a round in cohorts:
    :func:`choose_cohort_dropouts`)."""
    if dropout is None:
        return SINGLE_ROUND_DROPOUT
    if not 0 <= dropout < 1:
        raise ParameterError("{dropout=} is a share of the people: give a number in [0, 1).", "dropout", dropout)
    return float(dropout)


def _drop_walk(order, cohort, delegate, plan: CohortPlan, want: int) -> list[int]:
    """The people of ``order`` taken in turn while the round tolerates each (its cohort below its dropout tolerance;
    a delegate only while its cohort keeps ``collusion + 1`` of its delegates and the bridge is below its own
    tolerance), until ``want`` are taken."""
    room = list(plan.cohort_dropouts)
    delegate_room = [plan.n_delegates - int(plan.collusion) - 1] * len(room)
    bridge_room = plan.bridge_plan.dropouts
    taken = []
    for i in order:
        if len(taken) >= want:
            break
        c = cohort[i]
        if room[c] <= 0 or (delegate[i] and (delegate_room[c] <= 0 or bridge_room <= 0)):
            continue
        room[c] -= 1
        if delegate[i]:
            delegate_room[c] -= 1
            bridge_room -= 1
        taken.append(int(i))
    return taken


def choose_cohort_dropouts(plan: CohortPlan, cohort, delegate, dropout: float | None = None, seed=None) -> np.ndarray:
    """Who drops out after masking in a round in cohorts played by :func:`secure_sum_experiment` (a boolean per
    person): ``round(dropout * n)`` people (``dropout`` None: the ``dropouts`` the round's ``plan`` expects) chosen at
    random from ``seed`` among those the plan tolerates, person ``i`` being in cohort ``cohort[i]`` and one of its
    delegates when ``delegate[i]``: each cohort at most its dropout tolerance (:attr:`CohortPlan.cohort_dropouts
    <dptopic.protocol.secure_sum.cohorts.CohortPlan.cohort_dropouts>`), keeping ``collusion + 1`` of its delegates, and
    the bridge at most its own. A share above what the plan tolerates is refused in one line."""
    cohort = np.asarray(cohort, dtype=np.int64)
    delegate = np.asarray(delegate, dtype=bool)
    n = len(cohort)
    if n != plan.n or len(delegate) != n:
        raise ParameterError("{people} people for a round in cohorts of {n}: one per invitation.", "invitations",
                             people=n, n=plan.n)
    # the most the plan tolerates: every cohort's other members first, then delegates within the bridge's tolerance
    most = len(_drop_walk(np.argsort(delegate, kind="stable"), cohort, delegate, plan, n))
    if dropout is None:
        want = min(int(plan.dropouts), most)
    else:
        want = int(round(experiment_dropout(dropout) * n))
        if want > most:
            low, high = min(plan.cohort_dropouts), max(plan.cohort_dropouts)
            tol = f"{low}" if low == high else f"{low}-{high}"
            if most == 0:
                raise ParameterError("{dropout=} drops {want} of {n} people, but the round's plan tolerates no"
                                     " dropouts (its invitations expect none): give {dropout} 0.", "dropout", dropout,
                                     want=want, n=n)
            raise ParameterError("{dropout=} drops {want} of {n} people, more than the round's plan tolerates"
                                 " ({most}: at most {tol} in a cohort, keeping {keep} of each cohort's delegates,"
                                 " at most {bridge} delegates in all): give {dropout} {share:g} or less.", "dropout",
                                 dropout, want=want, n=n, most=most, tol=tol, keep=int(plan.collusion) + 1,
                                 bridge=plan.bridge_plan.dropouts, share=np.floor(most / n * 1000) / 1000)
    rng = np.random.default_rng(seed)
    dropped = np.zeros(n, bool)
    dropped[_drop_walk(rng.permutation(n), cohort, delegate, plan, want)] = True
    if dropped.sum() < want:        # only where delegates took up the room others needed: the others first
        dropped[:] = False
        order = rng.permutation(n)
        dropped[_drop_walk(order[np.argsort(delegate[order], kind="stable")], cohort, delegate, plan, want)] = True
    return dropped


def play_cohort_round(server: str, bows, invitations, dropout: float | None = None, token: str | None = None, *,
                      seed=None, workers: int | None = None, threads: int = 8, verbose: int = 1,
                      initializer=None) -> dict:
    """Play every person of ``bows`` (holding ``invitations``, :func:`~dptopic.protocol.secure_sum.cohort_enrollment.
    read_cohort_invitation`'s, in order) over HTTP against the round in cohorts served at ``server``, from ``workers``
    contributor processes (spawned; by default :func:`default_workers`), each playing a contiguous part of the people
    (:func:`~dptopic.experiments.secure_sum_players.play_cohort_part`: every round its people play, their cohorts'
    and the bridge's, in lock-step in a thread of its own, their messages sent from ``threads`` threads; a delegate
    plays its cohort's round and the bridge's). The people :func:`choose_cohort_dropouts` chooses from ``dropout`` and
    ``seed`` (the only random choice made here; the contributors' rounding, noise and pads come from the OS CSPRNG)
    mask their step-0 uploads and leave (a delegate in its cohort and the bridge); ``token`` (the admin's) then
    closes step 0 once every survivor's upload is in every round. ``initializer``: a function each contributor
    process runs before it plays (importable by name; tests hold the noise fixed there). Returns the round's
    outcome, its wall-clock time, the dropped count by cohort, the cohorts and delegates, every person's outcome
    counted (``left_out``, ``refused``), and per contributor the time, requests, bytes sent and received and CPU,
    with the server's own CPU and peak memory (:func:`_costs`)."""
    n = len(bows)
    workers = _pool_settings(n, invitations, workers, threads)
    coordinator = ServiceClient(server, retries=3)
    cfg = coordinator.get_json("/v1/config")
    if not isinstance(cfg, dict) or not isinstance(cfg.get("cohorts"), dict):
        raise DPTopicError(f"the server at {server} runs no round in cohorts (its /v1/config names no cohort plan).")
    plan = CohortPlan.from_dict(cfg["cohorts"]["plan"])
    cohort = [int(inv["cohorts"]["cohort"]) for inv in invitations]
    delegate = [inv["bridge"] is not None for inv in invitations]
    dropped = choose_cohort_dropouts(plan, cohort, delegate, dropout, seed)
    if dropped.any() and token is None:
        raise ParameterError("contributors drop out, so step 0 closes by the admin only: give the server's admin"
                             " {token}.", "token")
    by_cohort = np.bincount(np.asarray(cohort)[dropped], minlength=len(plan.sizes))
    # the uploads of step 0 each round holds once its survivors are in: every cohort's, then the bridge's
    survivors = [*(np.bincount(np.asarray(cohort)[~dropped], minlength=len(plan.sizes))).tolist(),
                 int(np.sum(np.asarray(delegate) & ~dropped))]
    paths = [*cfg["cohorts"]["paths"], cfg["cohorts"]["bridge"]]
    closed = [not dropped.any()]

    def on_message(kind, count):
        if not closed[0]:
            closed[0] = _close_step_0(coordinator, server, paths, survivors, token)
        elif plan.committee and dropped.any():
            _close_committee_signatures(server, paths[:-1], token)

    seats, kept = n + sum(delegate), int(np.sum(~dropped)) + survivors[-1]
    results, wall = _play_in_pool(play_cohort_part, [server], bows, invitations, dropped, workers, threads,
                                  2 * seats + 6 * kept, "secure-sum round in cohorts", verbose, on_message,
                                  initializer)
    view = coordinator.get_json("/v1/secure/round")
    failed = [why for r in results for why in r["failed"].values()]
    left_out = {(w, int(i)) for w, r in enumerate(results) for i, name in r["left_out"] if name == "cohort"}
    reason = view.get("reason") or (failed[0] if failed else None)
    return {"state": view["state"], "reason": reason, "people": n, "dropped": int(dropped.sum()),
            "dropped_by_cohort": by_cohort.tolist(), "tolerance_by_cohort": list(plan.cohort_dropouts),
            "dropped_delegates": int(np.sum(dropped & np.asarray(delegate))), "left_out": len(left_out),
            # the server process's CPU and memory, as any of its rounds reports them (the root serves no timings)
            "workers": workers, "servers": 1, **_costs(results, n, wall, [server.rstrip("/") + paths[0]]),
            "cohorts": len(view.get("cohorts") or ()), "delegates": sum(len(r["delegates"]) for r in results),
            "refused": len(failed)}


def _close_committee_signatures(server: str, paths, token: str) -> None:
    """In a round in committee cohorts, the admin's close of each cohort's consistency step once every committee
    member among its uploads has signed (the members who masked and left sign nothing: the step would wait for them),
    at the cohort's own address, as an operator closes it."""
    for path in paths:
        client = ServiceClient(server.rstrip("/") + path, retries=3)
        view = client.get_json("/v1/secure/round")
        if str(view.get("state")).startswith("consistency"):
            sitting = set(view.get("committee") or ()) & set(view.get("uploaded") or ())
            if len(sitting) < len(view.get("committee") or ()) and view.get("received", 0) >= len(sitting):
                client.request("POST", "/v1/admin/secure/close", b"", {"Authorization": f"Bearer {token}"})


def _close_step_0(coordinator: ServiceClient, server: str, paths, survivors, token: str) -> bool:
    """The admin's close of step 0's upload in a round in cohorts, once every round at that step (each cohort's, then
    the bridge's, at ``paths``) holds its ``survivors``' uploads, as an operator closes it. Whether nothing is left to
    close (the step closed, or the round moved past it or failed)."""
    view = coordinator.get_json("/v1/secure/round")
    if view["state"] != "upload0":
        return view["state"] not in ORDER[:ORDER.index("upload0")]        # past it, or failed
    for path, want, state in zip(paths, survivors, [*view["cohorts"], view["bridge"]]):
        if state == "upload0":
            got = ServiceClient(server.rstrip("/") + path, retries=3).get_json("/v1/secure/round")
            if got.get("state") == "upload0" and got.get("uploads_received", got.get("received", 0)) < want:
                return False
    coordinator.request("POST", "/v1/admin/secure/close", b"", {"Authorization": f"Bearer {token}"})
    return True


def secure_sum_experiment(server, corpus, out, invitations, *, dropout: float | None = None,
                          token: str | None = None, seed=None, client=None, workers: int | None = None,
                          verbose: int = 1) -> dict:
    """A secure-sum round played by every person of ``corpus`` (read in the server's vocabulary with its
    ``user_ids``) against ``server`` (an address, or several server processes of one round), from ``workers``
    contributor processes (:func:`play_round`; in a round in cohorts, served by one process,
    :func:`play_cohort_round`); the released model is saved to ``out/model`` and set beside a central
    user-level :class:`~dptopic.models.DocDPCooccurrence` of the same epsilon on the same documents
    (``recovery_of_central_topics``: outside the guarantee, computed from the private documents). The summary is
    written to ``out/summary.json`` and returned. ``dropout``: the share of people who drop out after masking (None:
    a tenth in a single round, :func:`experiment_dropout`; in a round in cohorts the dropouts its plan expects, at
    most each cohort's tolerance, :func:`choose_cohort_dropouts`). Invitations that name their people (written with
    ``ids``) go each to its person; others to the people in the order of their sorted ids."""
    from .._io import atomic_write_json  # looked up when called: tests patch it at its source
    servers = [server] if isinstance(server, str) else list(server)
    client = client or ServiceClient(servers[0], retries=3)
    cfg = client.get_json("/v1/config")
    invitations = seat_by_person(list(invitations), np.unique(np.asarray(corpus.user_ids, dtype=str)).tolist())
    if isinstance(cfg.get("cohorts"), dict):        # a round in cohorts: one server process
        if len(servers) != 1:
            raise ParameterError("{servers}: a round in cohorts is served by one process; give its address once.",
                                 "servers")
        s = play_cohort_round(servers[0], person_bows(corpus), invitations, dropout, token, seed=seed,
                              workers=workers, verbose=verbose)
    else:
        s = play_round(servers, person_bows(corpus), invitations, experiment_dropout(dropout), token,
                       seed=seed, workers=workers, verbose=verbose)
    if s["state"] != "released":
        raise DPTopicError(f"the round ended {s['state']!r} ({s.get('reason')}): nothing released.")
    doc = client.get_json("/v1/model")
    model = model_from_blobs(doc["model_json"], {k: base64.b64decode(v) for k, v in doc["arrays"].items()})
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model")
    central = DocDPCooccurrence(n_topics=model.n_topics, epsilon=float(cfg["epsilon"]), delta=float(cfg["delta"]),
                                unit="user", seed=seed).fit(corpus, user_ids=corpus.user_ids)
    s["recovery_of_central_topics"] = topic_coverage(model, (central.components_, list(cfg["vocabulary"])))["coverage"]
    atomic_write_json(out / "summary.json", s)
    return s
