"""``dptopic experiment secure-sum``: a secure-sum round played by every person of a corpus over HTTP, beside the
central user-level trainer on the same documents (docs/secure_sum.md).

The contributors run in a pool of real processes (:func:`play_round`), each process playing its share of the people
against one of the round's servers, so that a round of thousands can be measured on one machine as it would run:
every contributor's requests, bytes and CPU time are counted where they are made, and each server process reports
its own CPU seconds and peak memory (``GET /v1/secure/timings``)."""
from __future__ import annotations

import base64
import json
import multiprocessing
import os
import queue as queue_module
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .._progress import progress_bar
from ..contributor.client import ServerError, ServiceClient
from ..contributor.secure_client import ORDER, person_bows
from ..contributor.secure_sum import LeftOut, SecureContributor
from ..errors import DPTopicError, ParameterError
from ..evaluation import topic_coverage
from ..models import DocDPCooccurrence, model_from_blobs

STEP_TIMEOUT_S = 3600.0
"""The longest a contributor process waits for the round to reach its next step."""


def default_workers() -> int:
    """Contributor processes by default: one per core this process may use, at most 8 (the server needs cores too)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:      # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


class _CountingClient(ServiceClient):
    """A :class:`ServiceClient` that counts the bytes it sends and receives (bodies only), the requests and the
    seconds spent in them, charged to the contributor named by :attr:`who` (or to the process's waiting, ``-1``)."""

    def __init__(self, server: str, people: int):
        super().__init__(server, retries=5)
        self._local = threading.local()     # each sending thread's contributor
        self.up, self.down = np.zeros(people + 1), np.zeros(people + 1)
        self.requests, self.seconds = np.zeros(people + 1), np.zeros(people + 1)

    @property
    def who(self) -> int:
        """The contributor the calling thread's requests are charged to (``-1``: the process's waiting)."""
        return getattr(self._local, "who", -1)

    @who.setter
    def who(self, i: int) -> None:
        self._local.who = i

    def _once(self, method, path, body, headers):
        t = time.perf_counter()
        status, rh, data = super()._once(method, path, body, headers)
        self.seconds[self.who] += time.perf_counter() - t
        self.up[self.who] += len(body or b"")
        self.down[self.who] += len(data or b"")
        self.requests[self.who] += 1
        return status, rh, data


def _post_json(client: _CountingClient, i: int, path: str, doc: dict) -> dict:
    client.who = i
    try:
        _, _, data = client.request("POST", path, json.dumps(doc).encode(), {"Content-Type": "application/json"})
    finally:
        client.who = -1
    return json.loads(data)


def _wait(client: _CountingClient, step: str, order: tuple) -> dict:
    """Long-poll the round until it has reached ``step`` (or failed)."""
    end = time.monotonic() + STEP_TIMEOUT_S
    while True:
        view = client.get_json(f"/v1/secure/round?wait={step}&timeout=20")
        state = view.get("state")
        if state == "failed":
            raise DPTopicError(f"the round failed: {view.get('reason')}.")
        if state in order and order.index(state) >= order.index(step):
            return view
        if time.monotonic() > end:
            raise DPTopicError(f"the round did not reach step {step!r} within {STEP_TIMEOUT_S:g} s.")


def _play_part(server: str, bows: list, invitations: list, dropped: list, progress, threads: int = 8) -> dict:
    """One contributor process: every person of its part plays the round in lock-step with the others of the part
    (each its own :class:`SecureContributor`, with its own invitation; rounding and noise from the OS CSPRNG), their
    messages of a step sent from ``threads`` threads (so that the server is never idle while this process computes);
    those marked ``dropped`` mask their step-0 upload and leave without sending it. ``progress``: a queue told of the
    messages sent (``("sent", count)``) and, once per process and step, that it has sent its messages of the step
    (``("done", step)``)."""
    k = len(bows)
    client = _CountingClient(server, k)
    cfg = client.get_json("/v1/config")
    people = [SecureContributor(cfg, b, inv) for b, inv in zip(bows, invitations)]
    cpu = np.zeros(k)
    upload_bytes = []

    pool = ThreadPoolExecutor(threads)
    told = threading.Lock()
    pending = [0]

    def timed(i, f, *args):
        t = time.thread_time()
        out = f(*args)
        cpu[i] += time.thread_time() - t
        return out

    def tell(n: int, final: bool = False) -> None:
        with told:
            pending[0] += n
            if pending[0] >= 50 or (final and pending[0]):
                progress.put(("sent", pending[0]))
                pending[0] = 0

    def each(ids, send):
        def one(i):
            ok = bool(send(i))
            tell(int(ok))
            return ok
        sent = sum(pool.map(one, ids))
        tell(0, final=True)
        return sent

    each(range(k), lambda i: _post_json(client, i, "/v1/secure/keys", timed(i, people[i].registration)) or True)
    _wait(client, "shares", ORDER)
    roster = client.get_json("/v1/secure/roster")
    each(range(k), lambda i: _post_json(client, i, "/v1/secure/shares", timed(i, people[i].shares_request, roster))
         or True)
    for phase in (0, 1):
        view = _wait(client, f"upload{phase}", ORDER)
        if view["state"] != f"upload{phase}":
            raise DPTopicError(f"the round is at {view['state']!r}, not upload{phase}.")
        members = set(view["members"])

        def upload(i, phase=phase, view=view):
            c = people[i]
            if c.me not in members:
                return False
            try:
                body, sig = timed(i, c.upload, phase, view)
            except LeftOut:
                return False
            if phase == 0 and dropped[i]:
                return False        # masked, then gone
            client.who = i
            try:
                _, _, data = client.request("POST", f"/v1/secure/upload/{phase}", body,
                                            {"Content-Type": "application/octet-stream", "Dptopic-Contributor": c.me,
                                             "Dptopic-Signature": sig})
            finally:
                client.who = -1
            upload_bytes.append(len(body))
            if phase == 0:
                timed(i, c.take_shares, json.loads(data).get("shares") or {})
            return True

        each(range(k), upload)
        progress.put(("done", f"upload{phase}"))
        view = _wait(client, f"consistency{phase}", ORDER)
        uploaded = set(view.get("uploaded") or ())
        if view["state"] == f"consistency{phase}":
            each(range(k), lambda i, phase=phase, view=view: people[i].me in uploaded and _post_json(
                client, i, f"/v1/secure/consistency/{phase}", timed(i, people[i].consistency, phase, view)) is not None)
        progress.put(("done", f"consistency{phase}"))
        view = _wait(client, f"unmask{phase}", ORDER)
        if view["state"] != f"unmask{phase}":
            continue
        signatures = client.get_json(f"/v1/secure/signatures/{phase}")
        closed = threading.Event()

        def answer(i, phase=phase, view=view, signatures=signatures, closed=closed):
            c = people[i]
            if closed.is_set() or c.me not in uploaded or str(phase) not in c.st["signed"]:
                return False
            try:
                _post_json(client, i, f"/v1/secure/unmask/{phase}", timed(i, c.unmask, phase, view, signatures))
            except ServerError as e:
                if e.code != "round_closed":
                    raise
                closed.set()        # the others' shares sufficed: the step closed before this answer
                return False
            return True

        each(range(k), answer)
    _wait(client, "released", ORDER)
    pool.shutdown()
    return {"cpu": cpu.tolist(), "up": client.up[:k].tolist(), "down": client.down[:k].tolist(),
            "requests": client.requests[:k].tolist(), "request_seconds": client.seconds[:k].tolist(),
            "waiting": {"up": float(client.up[-1]), "down": float(client.down[-1]),
                        "requests": int(client.requests[-1])},
            "upload_bytes_max": max(upload_bytes, default=0), "pid": os.getpid()}


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
    if n != len(invitations):
        raise ParameterError("{people} people but {count} {invitations}: one invitation per person.", "invitations",
                             people=n, count=len(invitations))
    if not servers:
        raise ParameterError("give at least one server address in {servers}.", "servers")
    workers = default_workers() if workers is None else int(workers)
    if not 1 <= workers <= 256:
        raise ParameterError("{workers=} must lie between 1 and 256.", "workers", workers)
    workers = min(workers, n)
    if not 1 <= int(threads) <= 64:
        raise ParameterError("{threads=} must lie between 1 and 64.", "threads", threads)
    rng = np.random.default_rng(seed)
    dropped = np.zeros(n, bool)
    n_drop = int(round(dropout * n))
    if n_drop:
        dropped[rng.choice(n, n_drop, replace=False)] = True
    if n_drop and token is None:
        raise ParameterError("contributors drop out, so step 0 closes by the admin only: give the server's admin"
                             " {token}.", "token")
    coordinator = ServiceClient(servers[0], retries=5)
    parts = np.array_split(np.arange(n), workers)
    ctx = multiprocessing.get_context("spawn")      # no fork of a process that may hold threads and sockets
    survivors = n - n_drop
    total_msgs = 2 * n + 6 * survivors
    t0 = time.perf_counter()
    with ctx.Manager() as manager, ProcessPoolExecutor(workers, mp_context=ctx) as pool, \
            progress_bar(total_msgs, "secure-sum round", verbose) as bar:
        progress = manager.Queue()
        futures = [pool.submit(_play_part, servers[w % len(servers)], [bows[i] for i in part],
                               [invitations[i] for i in part], dropped[part].tolist(), progress, threads)
                   for w, part in enumerate(parts)]
        reported, done_msgs = {}, 0
        while True:
            try:
                kind, count = progress.get(timeout=0.25)
            except queue_module.Empty:
                kind, count = None, 0
            if kind == "sent":
                step = min(count, total_msgs - done_msgs)
                done_msgs += step
                bar.advance(step, info=f"{done_msgs:,} messages")
            elif kind == "done":       # a part has sent its messages of step ``count``
                reported[count] = reported.get(count, 0) + 1
                if reported[count] == len(futures) and token is not None:
                    # every part has sent them: a step still open waits for those who dropped out (or were left
                    # out) and closes by the admin, as an operator closes it once the survivors are in
                    view = coordinator.get_json("/v1/secure/round")
                    if view["state"] == count:
                        coordinator.request("POST", "/v1/admin/secure/close", b"",
                                            {"Authorization": f"Bearer {token}"})
            failed = next((f for f in futures if f.done() and f.exception() is not None), None)
            if failed is not None:
                for f in futures:
                    f.cancel()
                raise failed.exception()
            if kind is None and all(f.done() for f in futures):
                break
        results = [f.result() for f in futures]
        bar.advance(total_msgs - done_msgs)
    wall = time.perf_counter() - t0
    view = coordinator.get_json("/v1/secure/round")
    timings = coordinator.get_json("/v1/secure/timings")

    def per(key):
        return np.concatenate([np.asarray(r[key], float) for r in results])

    up, down, cpu, reqs, secs = per("up"), per("down"), per("cpu"), per("requests"), per("request_seconds")
    cfg = coordinator.get_json("/v1/config")
    plan = cfg["secure_sum"]
    return {"state": view["state"], "reason": view.get("reason"), "people": n, "dropped": n_drop,
            "workers": workers, "servers": len(servers), "seconds": wall, "seconds_per_contributor": wall / n,
            "request_seconds_per_contributor": float(np.mean(secs)),
            "bytes_per_contributor": float(np.mean(up)), "bytes_down_per_contributor": float(np.mean(down)),
            "requests_per_contributor": float(np.mean(reqs)),
            "waiting": {k: sum(r["waiting"][k] for r in results) for k in ("up", "down", "requests")},
            "upload_bytes_max": int(max(r["upload_bytes_max"] for r in results)),
            "cpu_per_contributor_s": float(np.mean(cpu)), "cpu_per_contributor_max_s": float(np.max(cpu)),
            "server": {k: v for k, v in timings.items() if k != "process"},
            "server_process": server_usage(servers),
            "kept_words": len(view.get("kept", []) or []),
            "neighbours": int(plan.get("degree", 0)), "threshold": int(plan.get("threshold", 0))}


def secure_sum_experiment(server, corpus, out, invitations, *, dropout: float = 0.1, token: str | None = None,
                          seed=None, client=None, workers: int | None = None, verbose: int = 1) -> dict:
    """A secure-sum round played by every person of ``corpus`` (read in the server's vocabulary with its
    ``user_ids``) against ``server`` (an address, or several server processes of one round), from ``workers``
    contributor processes (:func:`play_round`); the released model is saved to ``out/model`` and set beside a central
    user-level :class:`~dptopic.models.DocDPCooccurrence` of the same epsilon on the same documents
    (``recovery_of_central_topics``: outside the guarantee, computed from the private documents). The summary is
    written to ``out/summary.json`` and returned."""
    from .._io import atomic_write_json  # looked up when called: tests patch it at its source
    servers = [server] if isinstance(server, str) else list(server)
    client = client or ServiceClient(servers[0], retries=3)
    cfg = client.get_json("/v1/config")
    s = play_round(servers, person_bows(corpus), invitations, dropout, token, seed=seed, workers=workers,
                   verbose=verbose)
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
