"""The contributor's side of a secure-sum round over HTTP (``dptopic submit`` with an invitation, against a secure-sum
server), and a whole round played by many people in one process (``dptopic experiment secure-sum``).

:class:`~dptopic.contributor.secure_sum.default.SecureContributor` builds and checks every step's message;
:func:`take_part` runs the steps against a server, waiting between them (``GET /v1/secure/round``); :func:`play_part`
plays a part of a simulated round's people in one process of ``dptopic experiment secure-sum``'s pool. With a state
file, everything a step sends is written there (atomically) before it is sent: a resumed run sends the same keys,
shares, uploads, signature and answers, never a second noise share, key set or signed set for one round; a step the
server lost (it does not list this contributor) is sent again from there.
"""
from __future__ import annotations

import gc
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ...errors import DPTopicError
from ...protocol.secure_sum.enrollment import read_invitation
from ..client import ServerError, ServiceClient, default_state_folder
from .default import LeftOut, SecureContributor, state_file_name

ORDER = ("keys", "shares", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released")


def _post_json(client: ServiceClient, path: str, doc: dict) -> tuple[dict, int]:
    body = json.dumps(doc).encode()
    _, _, data = client.request("POST", path, body, {"Content-Type": "application/json"})
    return json.loads(data), len(body)


def _post_upload(client: ServiceClient, phase: int, me: str, body: bytes, signature: str, query: str = "") -> dict:
    _, _, data = client.request("POST", f"/v1/secure/upload/{phase}{query}", body,
                                {"Content-Type": "application/octet-stream", "Dptopic-Contributor": me,
                                 "Dptopic-Signature": signature})
    return json.loads(data)


def _closed(e: ServerError) -> bool:
    """The step closed before this request (the others sufficed): nothing to send any more."""
    return e.code == "round_closed"


REQUESTS = ("GET /v1/config", "POST /v1/secure/keys", "POST /v1/secure/shares", "POST /v1/secure/upload/0",
            "POST /v1/secure/consistency/0", "POST /v1/secure/unmask/0", "POST /v1/secure/upload/1",
            "POST /v1/secure/consistency/1", "POST /v1/secure/unmask/1")
"""A contributor's requests in a round where no step outlasts a long poll (:func:`take_part`): the configuration, then
one post-and-wait per message (docs/research/secure_sum_round_trips.md says why no fewer)."""


LONG_POLL_S = 20.0
"""The longest a contributor asks the server to hold a request (a post-and-wait or a long poll): below its client's
30 s read timeout."""


STOP_HOLD_S = 2.0
"""The longest the server holds a request of a part that another thread may stop (:func:`take_part`'s ``stop``)."""


class Stopped(DPTopicError):
    """A part of a round ended by another thread (:func:`take_part`'s ``stop``): the state file keeps what was sent."""


def take_part(server: str, bow, invitation, state=None, max_epsilon: float | None = None, client=None,
              poll: float = 0.5, timeout: float = 3600.0, contributor: SecureContributor | None = None,
              stop: threading.Event | None = None, leave_after_masking: bool = False) -> dict:
    """Run every step of the server's round for one person holding ``invitation`` (a file path or
    :func:`~dptopic.protocol.secure_sum.enrollment.read_invitation`'s dict); returns a summary. Each message is posted
    with
    ``?wait=NEXT`` (post-and-wait): its answer, once the round reaches the next step, carries that step's view (with
    the roster, or the neighbours' consistency signatures, where they are needed next), so a round whose steps each
    close within a long poll (:data:`LONG_POLL_S`) takes :data:`REQUESTS`, 9 requests per contributor: the
    configuration and one per message. A step that takes longer is waited for with ``GET
    /v1/secure/round?wait=STEP`` (one request per long poll); ``timeout``: the most seconds each step is waited for,
    counted from the message that waits for it (a post-and-wait is held no longer than that either). The connection
    is kept open between the requests. ``contributor``: the person's side already made from this server's
    configuration (a cohort's member or a bridge's delegate, :mod:`dptopic.contributor.secure_sum.cohort_client`);
    ``bow``, ``invitation``, ``state`` and ``max_epsilon`` are then its. ``stop``: an event another thread sets to end
    this one's part (:class:`Stopped`, raised before the next request; the server then holds each request at most
    :data:`STOP_HOLD_S` seconds, so the part ends that soon).
    ``leave_after_masking``: the person masks its upload of step 0 and leaves without sending it (a dropout, as
    ``dptopic experiment secure-sum`` plays one); the summary then says ``"left": "step 0"``."""
    client = client or ServiceClient(server)
    client.keep_alive = True        # a round is a dozen requests to one server: one connection for them all
    if contributor is None:
        invitation = read_invitation(invitation) if not isinstance(invitation, dict) else invitation
        contributor = SecureContributor(client.get_json("/v1/config"), bow, invitation, state=state,
                                        max_epsilon=max_epsilon)
    c = contributor
    if c.finished:
        return {**c.summary(), "steps": [], "finished": c.finished, "state": None if state is None else str(state)}

    def reached(view, step) -> bool:
        """Whether ``view`` (the server's) is at ``step`` or beyond; one line if the round failed."""
        st = view.get("state") if isinstance(view, dict) else None
        if st == "failed":
            c.finish(f"failed: {str(view.get('reason'))[:300]}")
            raise DPTopicError(f"the round failed: {view.get('reason')}.")
        if st not in ORDER:
            raise DPTopicError(f"the server's round is at an unknown step {str(st)[:40]!r}.")
        return ORDER.index(st) >= ORDER.index(step)

    since = [time.monotonic()]      # when the wait for the next step began: the last message sent or step reached

    def wait_for(step, include="", view=None):
        """The round's view at ``step`` or beyond: ``view`` (a post-and-wait's) when it got there, else long polls,
        until ``timeout`` seconds after the wait began (a post-and-wait's hold counts)."""
        if view is None or not reached(view, step):
            view = poll_for(step, include)
        since[0] = time.monotonic()
        return view

    def poll_for(step, include):
        t0 = since[0]
        while True:     # long polling: the server answers once the step is reached (or after at most a long poll)
            stopped()
            asked = time.monotonic()
            hold = max(0.0, min(LONG_POLL_S if stop is None else STOP_HOLD_S, timeout - (asked - t0)))
            view = client.get_json(f"/v1/secure/round?wait={step}&timeout={hold:g}&contributor={c.me}"
                                   + (f"&include={include}" if include else ""))
            if reached(view, step):
                return view
            if time.monotonic() - t0 > timeout:
                raise DPTopicError(f"the round did not reach step {step!r} within {timeout:g} s: run again later"
                                   " (the state file keeps what was sent).")
            if time.monotonic() - asked < poll:        # a server that does not hold the request: poll
                if stop is None:
                    time.sleep(poll)
                else:
                    stop.wait(poll)

    def stopped() -> None:
        if stop is not None and stop.is_set():
            raise Stopped("stopped: another part of this contributor's round ended it (the state file keeps what was"
                          " sent).")

    def then(step, include=""):
        """The query of a post-and-wait whose answer brings the view at ``step`` (held at most ``timeout``)."""
        stopped()
        since[0] = time.monotonic()
        hold = min(LONG_POLL_S if stop is None else STOP_HOLD_S, timeout)
        held = "" if hold == LONG_POLL_S else f"&timeout={hold:g}"      # the server's own longest hold is 20 s
        return f"?wait={step}" + (f"&include={include}" if include else "") + held

    sent = []
    answer, _ = _post_json(client, "/v1/secure/keys" + then("shares", "roster"), c.registration())
    view = wait_for("shares", "roster", answer.get("view"))
    roster = view.get("roster")
    c.check_roster(roster if roster is not None else client.get_json("/v1/secure/roster"))
    if view["state"] == "shares":
        answer, _ = _post_json(client, "/v1/secure/shares" + then("upload0"), c.shares_request(c.roster))
        view = answer.get("view") or view
        sent.append("shares")
    for phase in (0, 1):        # view: the latest the server gave (a step may have passed while this one waited)
        view = wait_for(f"upload{phase}", view=view)
        if view["state"] == f"upload{phase}":
            try:
                body, sig = c.upload(phase, view)
            except LeftOut:
                return {**c.summary(), "steps": sent, "left_out": f"step {phase}"}
            if phase == 0 and leave_after_masking:
                return {**c.summary(), "steps": sent, "left": "step 0"}        # masked, then gone
            answer = _post_upload(client, phase, c.me, body, sig, then(f"consistency{phase}"))
            if phase == 0 and isinstance(answer.get("shares"), dict):
                c.take_shares(answer["shares"])
            view = answer.get("view") or view
            sent.append(f"upload{phase}")
        view = wait_for(f"consistency{phase}", view=view)
        if view["state"] == f"consistency{phase}":
            try:
                path = f"/v1/secure/consistency/{phase}" + then(f"unmask{phase}", "signatures")
                answer, _ = _post_json(client, path, c.consistency(phase, view))
                view = answer.get("view") or view
                if not answer.get("late"):
                    sent.append(f"consistency{phase}")
            except LeftOut:
                return {**c.summary(), "steps": sent, "left_out": f"step {phase}"}
            except ServerError as e:
                if not _closed(e):
                    raise
        view = wait_for(f"unmask{phase}", "signatures", view)
        if view["state"] == f"unmask{phase}" and str(phase) in c.st["signed"] and c.me in view.get("signers", ()):
            if c.held is None:
                c.take_shares(client.get_json(f"/v1/secure/shares?contributor={c.me}"))
            signatures = view.get("signatures")
            if signatures is None:
                signatures = client.get_json(f"/v1/secure/signatures/{phase}")
            try:
                path = f"/v1/secure/unmask/{phase}" + then("upload1" if phase == 0 else "released")
                answer, _ = _post_json(client, path, c.unmask(phase, view, signatures))
                view = answer.get("view") or view
                if not answer.get("late"):
                    sent.append(f"unmask{phase}")
            except ServerError as e:     # the others' shares sufficed: the step closed before this answer
                if not _closed(e):
                    raise
    wait_for("released", view=view)
    c.finish("released")
    return {**c.summary(), "steps": sent, "state": None if state is None else str(state)}


def simulate_round(server: str, bows, invitations, dropout: float, token: str | None, seed=None, client=None) -> dict:
    """Play every person of ``bows`` (one bag of words each) as its own contributor holding its own invitation
    (``invitations``: one per person, in order), over HTTP, in lock-step; a share ``dropout`` of them (chosen at random
    from ``seed``) drops out after masking, without uploading. Each contributor's rounding and noise come from the OS
    CSPRNG, whatever the seed. Returns the timings, the bytes and CPU seconds per contributor, and the server's
    sum-and-unmask times. ``token``: the server's admin token, to close a step once the survivors are in."""
    client = client or ServiceClient(server, retries=3)
    client.keep_alive = True        # thousands of requests to one server: one connection for them all
    rng = np.random.default_rng(seed)
    cfg = client.get_json("/v1/config")
    n = len(bows)
    if n != len(invitations):
        raise DPTopicError(f"{n} people but {len(invitations)} invitations: one invitation per person.")
    people = [SecureContributor(cfg, b, inv) for b, inv in zip(bows, invitations)]
    dropped = set(rng.choice(n, int(round(dropout * n)), replace=False).tolist()) if dropout > 0 else set()
    cpu = np.zeros(n)
    sent = np.zeros(n)
    requests = np.zeros(n)
    t0 = time.perf_counter()

    def timed(i, f, *args):
        t = time.process_time()
        out = f(*args)
        cpu[i] += time.process_time() - t
        return out

    def post(i, path, doc):
        answer, size = _post_json(client, path, doc)
        sent[i] += size
        requests[i] += 1
        return answer

    def settled(*states, deadline=3600.0):      # the server unmasks off the request's thread
        end = time.monotonic() + deadline
        while True:
            view = client.get_json("/v1/secure/round")
            if view["state"] in states or view["state"] == "failed" or time.monotonic() > end:
                return view
            time.sleep(0.2)

    def close_step(view, step):
        if view["state"] == step:
            if token is None:
                raise DPTopicError("contributors dropped out: a step then closes by the admin only; give the server's"
                                   " token file.")
            client.request("POST", "/v1/admin/secure/close", b"", {"Authorization": f"Bearer {token}"})
            view = client.get_json("/v1/secure/round")
        return view

    for i, c in enumerate(people):
        post(i, "/v1/secure/keys", timed(i, c.registration))
    roster = client.get_json("/v1/secure/roster")
    for i, c in enumerate(people):
        post(i, "/v1/secure/shares", timed(i, c.shares_request, roster))
    upload_bytes, upload_cpu = [], []
    for phase in (0, 1):
        view = settled(f"upload{phase}")
        if view["state"] != f"upload{phase}":
            raise DPTopicError(f"the round is at {view['state']!r} ({view.get('reason')}), not upload{phase}.")
        member = set(view["members"])
        for i, c in enumerate(people):
            if c.me not in member:
                continue
            t = time.process_time()
            body, sig = timed(i, c.upload, phase, view)
            upload_cpu.append(time.process_time() - t)
            if phase == 0 and i in dropped:
                continue            # masked, then gone
            upload_bytes.append(len(body))
            answer = _post_upload(client, phase, c.me, body, sig)
            requests[i] += 1
            sent[i] += len(body)
            if phase == 0:
                timed(i, c.take_shares, answer.get("shares") or {})
        view = close_step(client.get_json("/v1/secure/round"), f"upload{phase}")
        if view["state"] != f"consistency{phase}":
            raise DPTopicError(f"the round is at {view['state']!r} ({view.get('reason')}), not consistency{phase}.")
        uploaded = set(view["uploaded"])
        for i, c in enumerate(people):
            if c.me in uploaded:
                post(i, f"/v1/secure/consistency/{phase}", timed(i, c.consistency, phase, view))
        view = close_step(client.get_json("/v1/secure/round"), f"consistency{phase}")
        if view["state"] != f"unmask{phase}":
            raise DPTopicError(f"the round is at {view['state']!r} ({view.get('reason')}), not unmask{phase}.")
        signatures = client.get_json(f"/v1/secure/signatures/{phase}")
        for i, c in enumerate(people):
            if c.me in uploaded:
                try:
                    post(i, f"/v1/secure/unmask/{phase}", timed(i, c.unmask, phase, view, signatures))
                except ServerError as e:
                    if not _closed(e):
                        raise
                    break
    view = settled("released")
    wall = time.perf_counter() - t0
    timings = client.get_json("/v1/secure/timings")
    return {"state": view["state"], "reason": view.get("reason"), "people": n, "dropped": len(dropped),
            "seconds": wall, "seconds_per_contributor": wall / n, "bytes_per_contributor": float(np.mean(sent)),
            "requests_per_contributor": float(np.mean(requests)),
            "upload_bytes_max": int(max(upload_bytes)) if upload_bytes else 0,
            "cpu_per_contributor_s": float(np.mean(cpu)), "upload_cpu_max_s": float(max(upload_cpu)),
            "server": timings, "kept_words": len(view.get("kept", []) or []),
            "neighbours": people[0].plan.degree, "threshold": people[0].plan.threshold}


# ----------------------------------------------------------------------------- a pool's contributor process
STEP_TIMEOUT_S = 3600.0


class CountingClient(ServiceClient):
    """A :class:`ServiceClient` that counts the bytes it sends and receives (bodies only), the requests and the
    seconds spent in them, charged to the contributor named by :attr:`who` (or to the process's waiting, ``-1``).

    Each thread that sends keeps its own HTTP/1.1 connection open between its requests (``keep_alive``, as one
    contributor's ``submit`` keeps one): a connection a request cost the pool process and the server a TCP set-up,
    urllib's request machinery and uvicorn's protocol set-up for each of a contributor's messages
    (docs/research/secure_sum_cpu.md)."""

    def __init__(self, server: str, people: int):
        self._local = threading.local()     # each sending thread's contributor and kept connection
        super().__init__(server, retries=5, keep_alive=True)
        self.up, self.down = np.zeros(people + 1), np.zeros(people + 1)
        self.requests, self.seconds = np.zeros(people + 1), np.zeros(people + 1)

    @property
    def _conn(self):
        """The calling thread's kept connection (None: opened on its next request)."""
        return getattr(self._local, "conn", None)

    @_conn.setter
    def _conn(self, conn) -> None:
        self._local.conn = conn

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


def _post_counted(client: CountingClient, i: int, path: str, doc: dict) -> dict:
    client.who = i
    try:
        _, _, data = client.request("POST", path, json.dumps(doc).encode(), {"Content-Type": "application/json"})
    finally:
        client.who = -1
    return json.loads(data)


def _wait(client: CountingClient, step: str, order: tuple) -> dict:
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


class CollectorTime:
    """The CPU time (``time.thread_time`` of the thread it ran on) and number of the cyclic garbage collector's runs
    in this process, by generation, from creation until :meth:`close`: what of a pool process's CPU the collector
    took (and so charged to whichever contributor's call set it off)."""

    def __init__(self):
        self.runs = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._started = threading.local()
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started.t = time.thread_time()
            return
        started = getattr(self._started, "t", None)
        if started is not None:
            g = min(int(info.get("generation", 2)), 2)
            self.runs[g] += 1
            self.seconds[g] += time.thread_time() - started
            self._started.t = None

    def close(self) -> None:
        """Stop counting."""
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def summary(self) -> dict:
        """``{"runs": [gen 0, 1, 2], "seconds": [...], "frozen": objects out of the collector's reach}``."""
        return {"runs": list(self.runs), "seconds": [float(x) for x in self.seconds], "frozen": gc.get_freeze_count()}


class PartPlayer:
    """The people of one contributor process of ``dptopic experiment secure-sum``'s pool, played in lock-step round
    by round (:meth:`play`: every seat of a round sends its message of a step, then the process waits for the next
    step), their messages of a step sent from ``threads`` threads shared by every round the process plays (so that
    the server is never idle while this process computes). ``k``: the people of the part, numbered ``0 .. k - 1``;
    each person's CPU time is counted where it is spent (:meth:`timed`), and ``progress`` (a queue) is told of the
    messages sent (``("sent", count)``) and, once per round played and step, that the part has sent its messages of
    the step (``("done", step)``). ``keep_going``: a person whose message fails (a refusal of what the server said,
    or a request refused) is set aside with the reason (:attr:`failed`) and takes no further part in any round, as a
    contributor that stops; otherwise (a single round) the failure ends the part."""

    def __init__(self, k: int, progress, threads: int = 8, keep_going: bool = False):
        self.k, self.progress, self.keep_going = k, progress, keep_going
        self.cpu = np.zeros(k)
        self.upload_bytes: list = []
        self.failed: dict = {}          # person -> why it stopped
        self.left_out: set = set()      # (person, round's label): the step closed before the person took part
        self.collector: CollectorTime | None = None
        self._pool = ThreadPoolExecutor(threads)
        self._told = threading.Lock()
        self._pending = 0

    def freeze(self) -> None:
        """What lives as long as the part (imports, the configurations, every person's contributor) goes out of the
        cyclic collector's full scans (:func:`gc.freeze`), from here on counted (:class:`CollectorTime`)."""
        self.collector = CollectorTime()
        gc.collect()
        gc.freeze()

    def timed(self, i: int, f, *args):
        """``f(*args)``, its CPU time charged to person ``i``."""
        t = time.thread_time()
        out = f(*args)
        self.cpu[i] += time.thread_time() - t
        return out

    def _tell(self, n: int, final: bool = False) -> None:
        with self._told:
            self._pending += n
            if self._pending >= 50 or (final and self._pending):
                self.progress.put(("sent", self._pending))
                self._pending = 0

    def _each(self, seats, send) -> int:
        def one(seat):
            i = seat[0]
            if i in self.failed:
                return False
            try:
                ok = bool(send(*seat))
            except Exception as e:      # noqa: BLE001 (a person that stops, kept with its reason)
                if not self.keep_going:
                    raise
                self.failed[i] = " ".join(str(e).split())[:300] or type(e).__name__
                ok = False
            self._tell(int(ok))
            return ok
        sent = sum(self._pool.map(one, seats))
        self._tell(0, final=True)
        return sent

    def play(self, client: CountingClient, seats: list, dropped, label: str = "") -> None:
        """Play every seat ``(person, contributor)`` of ``seats`` (each a :class:`SecureContributor` of the round
        ``client`` speaks to) through the round's steps; those ``dropped`` (by person) mask their step-0 upload and
        leave without sending it. ``label`` names the round in :attr:`left_out`."""
        timed, each = self.timed, self._each
        each(seats, lambda i, c: _post_counted(client, i, "/v1/secure/keys", timed(i, c.registration)) or True)
        _wait(client, "shares", ORDER)
        roster = client.get_json("/v1/secure/roster")
        each(seats, lambda i, c: _post_counted(client, i, "/v1/secure/shares", timed(i, c.shares_request, roster))
             or True)
        for phase in (0, 1):
            view = _wait(client, f"upload{phase}", ORDER)
            if view["state"] != f"upload{phase}":
                raise DPTopicError(f"the round is at {view['state']!r}, not upload{phase}.")
            members = set(view["members"])

            def upload(i, c, phase=phase, view=view):
                if c.me not in members:
                    return False
                try:
                    body, sig = timed(i, c.upload, phase, view)
                except LeftOut:
                    self.left_out.add((i, label))
                    return False
                if phase == 0 and dropped[i]:
                    return False        # masked, then gone
                client.who = i
                try:
                    _, _, data = client.request("POST", f"/v1/secure/upload/{phase}", body,
                                                {"Content-Type": "application/octet-stream",
                                                 "Dptopic-Contributor": c.me, "Dptopic-Signature": sig})
                finally:
                    client.who = -1
                self.upload_bytes.append(len(body))
                if phase == 0:
                    timed(i, c.take_shares, json.loads(data).get("shares") or {})
                return True

            each(seats, upload)
            self.progress.put(("done", f"upload{phase}"))
            view = _wait(client, f"consistency{phase}", ORDER)
            uploaded = set(view.get("uploaded") or ())
            if view["state"] == f"consistency{phase}":
                each(seats, lambda i, c, phase=phase, view=view: c.me in uploaded and _post_counted(
                    client, i, f"/v1/secure/consistency/{phase}", timed(i, c.consistency, phase, view)) is not None)
            self.progress.put(("done", f"consistency{phase}"))
            view = _wait(client, f"unmask{phase}", ORDER)
            if view["state"] != f"unmask{phase}":
                continue
            signatures = client.get_json(f"/v1/secure/signatures/{phase}")
            closed = threading.Event()

            def answer(i, c, phase=phase, view=view, signatures=signatures, closed=closed):
                if closed.is_set() or c.me not in uploaded or str(phase) not in c.st["signed"]:
                    return False
                try:
                    _post_counted(client, i, f"/v1/secure/unmask/{phase}", timed(i, c.unmask, phase, view,
                                                                                 signatures))
                except ServerError as e:
                    if e.code != "round_closed":
                        raise
                    closed.set()        # the others' shares sufficed: the step closed before this answer
                    return False
                return True

            each(seats, answer)
        _wait(client, "released", ORDER)

    def play_committee(self, client: CountingClient, seats: list, dropped) -> None:
        """Play every seat ``(person, contributor)`` of ``seats`` (each a
        :class:`~dptopic.contributor.secure_sum.committee.CommitteeContributor`) through a committee-mode round: the
        prekeys, one upload per step, and for the committee's members their signature and answers of each step;
        those ``dropped`` mask their step-0 upload and leave without sending it."""
        timed, each = self.timed, self._each
        each(seats, lambda i, c: _post_counted(client, i, "/v1/secure/prekeys",
                                               {"contributor": c.me, "bundles": [timed(i, c.prekey)]}) or True)
        view = _wait(client, "upload0", COMMITTEE_ORDER)
        view = client.get_json("/v1/secure/round?contributor=-&include=roster")
        each(seats, lambda i, c: timed(i, c.check_round, view["roster"], view["committee"]) and False)
        for phase in (0, 1):
            view = _wait(client, f"upload{phase}", COMMITTEE_ORDER)
            if view["state"] != f"upload{phase}":
                raise DPTopicError(f"the round is at {view['state']!r}, not upload{phase}.")
            members = set(view["members"])

            def upload(i, c, phase=phase, view=view):
                if c.me not in members:
                    return False
                body, header, blobs, sig = timed(i, c.committee_upload, phase, view)
                if phase == 0 and dropped[i]:
                    return False        # masked, then gone
                meta = json.dumps({"header": header, "blobs": blobs}).encode()
                client.who = i
                try:
                    client.request("POST", f"/v1/secure/upload/{phase}", meta + body,
                                   {"Content-Type": "application/octet-stream", "Dptopic-Contributor": c.me,
                                    "Dptopic-Signature": sig, "Dptopic-Meta-Length": str(len(meta))})
                finally:
                    client.who = -1
                self.upload_bytes.append(len(meta) + len(body))
                return True

            each(seats, upload)
            self.progress.put(("done", f"upload{phase}"))
            sitting = [(i, c) for i, c in seats if c.me in view["committee"] and c.me in members
                       and not (phase == 0 and dropped[i])]
            view = _wait(client, f"consistency{phase}", COMMITTEE_ORDER)
            if view["state"] == f"consistency{phase}":
                each(sitting, lambda i, c, phase=phase, view=view: _post_counted(
                    client, i, f"/v1/secure/consistency/{phase}", timed(i, c.committee_consistency, phase, view))
                    is not None)
            self.progress.put(("done", f"consistency{phase}"))
            if _wait(client, f"unmask{phase}", COMMITTEE_ORDER)["state"] != f"unmask{phase}":
                continue

            def answer(i, c, phase=phase):
                client.who = i
                try:
                    v = client.get_json(f"/v1/secure/round?contributor={c.me}&include=committee,signatures")
                finally:
                    client.who = -1
                if v["state"] != f"unmask{phase}" or c.me not in v.get("signers", ()):
                    return False
                q = timed(i, c.committee_unmask, phase, v, v["signatures"], v["uploads"])
                try:
                    _post_counted(client, i, f"/v1/secure/unmask/{phase}", q)
                except ServerError as e:
                    if e.code != "round_closed":
                        raise
                    return False
                return True

            each(sitting, answer)
            self.progress.put(("done", f"unmask{phase}"))
        _wait(client, "released", COMMITTEE_ORDER)

    def close(self, clients) -> dict:
        """Stop the threads and the collector's count; the part's costs, each person's summed over ``clients``
        (each a :class:`CountingClient` of ``k`` people): CPU, bytes up and down, requests and their seconds, what
        the process's own waiting cost, the largest upload, the collector's runs, the people set aside."""
        self._pool.shutdown()
        if self.collector is not None:
            self.collector.close()
        k = self.k

        def total(name, person=True):
            return sum(((getattr(c, name)[:k] if person else getattr(c, name)[-1]) for c in clients),
                       np.zeros(k) if person else 0.0)

        for c in clients:
            c.close()
        return {"cpu": self.cpu.tolist(),
                "collector": (self.collector.summary() if self.collector is not None
                              else {"runs": [0, 0, 0], "seconds": [0.0] * 3, "frozen": gc.get_freeze_count()}),
                "up": np.asarray(total("up"), float).tolist(), "down": np.asarray(total("down"), float).tolist(),
                "requests": np.asarray(total("requests"), float).tolist(),
                "request_seconds": np.asarray(total("seconds"), float).tolist(),
                "waiting": {"up": float(total("up", False)), "down": float(total("down", False)),
                            "requests": int(total("requests", False))},
                "upload_bytes_max": max(self.upload_bytes, default=0), "pid": os.getpid(),
                "failed": {str(i): why for i, why in self.failed.items()},
                "left_out": sorted([int(i), label] for i, label in self.left_out)}


def play_part(server: str, bows: list, invitations: list, dropped: list, progress, threads: int = 8) -> dict:
    """One contributor process of ``dptopic experiment secure-sum`` (spawned: it imports this module, not the
    experiment's, whose models load scikit-learn): every person of its part plays the round in lock-step with the
    others of the part (each its own :class:`SecureContributor`, with its own invitation; rounding and noise from the
    OS CSPRNG), as a :class:`PartPlayer` plays them; those marked ``dropped`` mask their step-0 upload and leave
    without sending it. ``progress``: :class:`PartPlayer`'s. What lives as long as the part (its contributors) is
    frozen out of the cyclic collector's full scans once they are built; the collector's runs and CPU in the part
    are returned beside each person's CPU (``"collector"``, :class:`CollectorTime`)."""
    return _play_part(server, bows, invitations, dropped, progress, threads, committee=False)


def _play_part(server: str, bows: list, invitations: list, dropped: list, progress, threads: int,
               committee: bool) -> dict:
    k = len(bows)
    client = CountingClient(server, k)
    cfg = client.get_json("/v1/config")
    if committee:
        from .committee import CommitteeContributor as person  # committee.py imports this module
    else:
        person = SecureContributor
    people = [person(cfg, b, inv) for b, inv in zip(bows, invitations)]
    player = PartPlayer(k, progress, threads)
    player.freeze()
    try:
        (player.play_committee if committee else player.play)(client, list(enumerate(people)), dropped)
    finally:
        out = player.close([client])
    return out


COMMITTEE_ORDER = ("keys", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released")
"""The steps of a committee-mode round (:mod:`dptopic.service.secure_sum.committee`)."""


def play_committee_part(server: str, bows: list, invitations: list, dropped: list, progress, threads: int = 8) -> dict:
    """:func:`play_part` for a committee-mode round (:meth:`PartPlayer.play_committee`)."""
    return _play_part(server, bows, invitations, dropped, progress, threads, committee=True)


def person_bow(corpus) -> tuple:
    """One person's documents (all of ``corpus``) as the ``(indptr, indices, data)`` int64 arrays a contributor sums."""
    m = corpus.to_bow()
    return m.indptr.astype("int64"), m.indices.astype("int64"), m.data.astype("int64")


def person_bows(corpus) -> list:
    """Each person's documents of ``corpus`` (read with its ``user_ids``) as :func:`person_bow`'s arrays, one tuple per
    person in the order of their sorted ids."""
    codes = np.unique(np.asarray(corpus.user_ids, dtype=str), return_inverse=True)[1]
    m = corpus.to_bow()
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(codes.max() + 2))
    bows = []
    for g in range(codes.max() + 1):
        sub = m[order[starts[g]:starts[g + 1]]]
        bows.append((sub.indptr.astype("int64"), sub.indices.astype("int64"), sub.data.astype("int64")))
    return bows


def state_path(given, invitation: dict):
    """Where a contributor keeps a round's secrets and what it sent: ``given`` (a file, or a folder that gets
    :func:`~dptopic.contributor.secure_sum.default.state_file_name`), by default the state folder ``submit`` uses (None
    given); None for ``"none"`` (a rerun then cannot resume). The name comes from the contributor's own invitation,
    never from what a server sends."""
    if given is not None and str(given).strip().lower() == "none":
        return None
    name = state_file_name(invitation["round_id"], invitation["contributor"])
    if given is None:
        return Path(default_state_folder()) / name
    p = Path(given)
    return p / name if p.is_dir() else p
