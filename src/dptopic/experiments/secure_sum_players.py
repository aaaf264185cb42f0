"""The contributor processes of ``dptopic experiment secure-sum``'s pool: many people of one round played in
lock-step from one process, each its own real contributor (:mod:`dptopic.contributor.secure_sum`), their requests,
bytes and CPU counted where they are made.

This is an experiment's driver, not what a contributor runs (that is :func:`~dptopic.contributor.secure_sum.client
.take_part`, one person, long-polling): :class:`PartPlayer` sends a step's messages of every seat it plays, then waits
for the next step; :func:`play_part`, :func:`play_committee_part` and :func:`play_cohort_part` are what each spawned
process of :func:`~dptopic.experiments.secure_sum.play_round` runs. A spawned process imports this module (and the
package's ``__init__``, whose names load on first use), never the models (scikit-learn: two seconds a process).
Every person is built without a Generator (:func:`people`): its rounding, noise and pads come from the OS CSPRNG,
whatever the experiment's seed.
"""
from __future__ import annotations

import gc
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..contributor.client import ServerError, ServiceClient
from ..contributor.secure_sum.checks import LeftOut
from ..contributor.secure_sum.client import COMMITTEE_ORDER, ORDER, post_json, post_upload
from ..contributor.secure_sum.cohort_client import seat_person
from ..contributor.secure_sum.committee import CommitteeContributor
from ..contributor.secure_sum.default import SecureContributor
from ..errors import DPTopicError
from ..protocol.secure_sum.cohorts import CohortPlan

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


def _counted(client: CountingClient, i: int, send, *args):
    """``send(client, *args)`` (a contributor's :func:`~dptopic.contributor.secure_sum.client.post_json` or
    :func:`~dptopic.contributor.secure_sum.client.post_upload`), its request charged to person ``i``."""
    client.who = i
    try:
        return send(client, *args)
    finally:
        client.who = -1


def _post_counted(client: CountingClient, i: int, path: str, doc: dict) -> dict:
    return _counted(client, i, post_json, path, doc)[0]


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


def _upload_step(client: CountingClient, phase: int, order: tuple) -> tuple[dict, set]:
    """The view at step ``upload{phase}`` of a round of ``order``'s steps (one line if the round is past it), and the
    step's members."""
    view = _wait(client, f"upload{phase}", order)
    if view["state"] != f"upload{phase}":
        raise DPTopicError(f"the round is at {view['state']!r}, not upload{phase}.")
    return view, set(view["members"])


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
            view, members = _upload_step(client, phase, ORDER)

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
                answer = _counted(client, i, post_upload, phase, c.me, body, sig)
                self.upload_bytes.append(len(body))
                if phase == 0:
                    timed(i, c.take_shares, answer.get("shares") or {})
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
            view, members = _upload_step(client, phase, COMMITTEE_ORDER)

            def upload(i, c, phase=phase, view=view):
                if c.me not in members:
                    return False
                body, header, blobs, sig = timed(i, c.committee_upload, phase, view)
                if phase == 0 and dropped[i]:
                    return False        # masked, then gone
                before = client.up[i]
                _counted(client, i, post_upload, phase, c.me, body, sig, "", {"header": header, "blobs": blobs})
                self.upload_bytes.append(int(client.up[i] - before))        # the blobs' header and the vector
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
    people = build_people(cfg, bows, invitations, committee)
    player = PartPlayer(k, progress, threads)
    player.freeze()
    try:
        (player.play_committee if committee else player.play)(client, list(enumerate(people)), dropped)
    finally:
        out = player.close([client])
    return out


def build_people(config: dict, bows: list, invitations: list, committee: bool = False) -> list:
    """Each person of a part as its own contributor of the round ``config`` describes (a
    :class:`~dptopic.contributor.secure_sum.committee.CommitteeContributor` in committee mode, else a
    :class:`~dptopic.contributor.secure_sum.default.SecureContributor`), with its own invitation and no Generator:
    its rounding and noise come from the OS CSPRNG, whatever the experiment's seed (which chooses the dropouts
    only)."""
    person = CommitteeContributor if committee else SecureContributor
    return [person(config, b, inv) for b, inv in zip(bows, invitations)]


def play_committee_part(server: str, bows: list, invitations: list, dropped: list, progress, threads: int = 8) -> dict:
    """:func:`play_part` for a committee-mode round (:meth:`PartPlayer.play_committee`)."""
    return _play_part(server, bows, invitations, dropped, progress, threads, committee=True)


def play_cohort_part(server: str, bows: list, invitations: list, dropped: list, progress, threads: int = 8) -> dict:
    """One contributor process of ``dptopic experiment secure-sum``'s pool in a round in cohorts (spawned; what
    :func:`~dptopic.experiments.secure_sum_players.play_part` is to a single round): every person of its part is seated
    (:func:`seat_person`, every check of :func:`take_part_in_cohorts`; rounding, noise and pads from the OS CSPRNG),
    and each round the part's people play (their cohorts' and the bridge's) is played in lock-step in a thread of its
    own by one :class:`~dptopic.experiments.secure_sum_players.PartPlayer`, whose threads send every round's messages: a
    delegate's cohort round and bridge round move at once, as a delegate's two rounds must. Those marked ``dropped``
    mask their step-0 uploads (a delegate's in its cohort and the bridge) and leave. A person whose message fails
    (or whose seating the server's word fails) takes no further part, in either round, and is returned with its
    reason (``"failed"``); the rest is
    :meth:`PartPlayer.close <dptopic.experiments.secure_sum_players.PartPlayer.close>`'s, with ``"delegates"``: the
    part's people who are delegates."""
    k = len(bows)
    base = server.rstrip("/")
    config = ServiceClient(base, retries=5).get_json("/v1/config")
    clients: dict = {}
    configs: dict = {}

    def round_config(path: str) -> dict:
        if path not in clients:
            clients[path] = CountingClient(base + path, k)
            configs[path] = clients[path].get_json("/v1/config")
        return configs[path]

    player = PartPlayer(k, progress, threads, keep_going=True)
    committee = bool(CohortPlan.from_dict(config["cohorts"]["plan"]).committee)
    seats, delegates = _seat_part(config, bows, invitations, round_config, player)
    player.freeze()
    errors: list = []

    def play(path):
        try:
            if path != config["cohorts"]["bridge"] and committee:       # a committee cohort: 3 requests each
                player.play_committee(clients[path], seats[path], dropped)
            else:
                player.play(clients[path], seats[path], dropped, "bridge" if path == config["cohorts"]["bridge"]
                            else "cohort")
        except BaseException as e:      # noqa: BLE001 (raised in the caller's thread below)
            errors.append(e)

    rounds = [threading.Thread(target=play, args=(path,), name=f"secure-sum-round{path}", daemon=True)
              for path in seats]
    for thread in rounds:       # every round at once: a delegate's two rounds each need the other's steps
        thread.start()
    for thread in rounds:
        thread.join()
    out = player.close(list(clients.values()))
    if errors:
        raise errors[0]
    return {**out, "delegates": delegates}


def _seat_part(config: dict, bows: list, invitations: list, round_config, player: PartPlayer) -> tuple[dict, list]:
    """Seat every person of a pool's part in the rounds their invitation names (:func:`seat_person`): ``(seats,
    delegates)``, the seats ``(person, contributor)`` of each round's path and the people who are delegates. A person
    the server's word fails to seat is marked failed in ``player`` and takes no part."""
    seats: dict = {}
    delegates = []
    for i, (bow, inv) in enumerate(zip(bows, invitations)):
        try:
            seated = seat_person(config, bow, inv, round_config)
        except DPTopicError as e:       # a refusal of what the server said: this person takes no part
            player.failed[i] = " ".join(str(e).split())[:300]
            continue
        for name, path, who, _ in seated:
            seats.setdefault(path, []).append((i, who))
            if name == "bridge":
                delegates.append(i)
    return seats, delegates


__all__ = ["CountingClient", "CollectorTime", "PartPlayer", "build_people", "play_part", "play_committee_part",
           "play_cohort_part"]
