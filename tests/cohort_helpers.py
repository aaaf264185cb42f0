"""A round in cohorts for the tests: benchmarks/_cohort_round.py's in-process simulation (the real cohort servers,
bridge, coordinator and contributors) on tiny people, with what every contributor masked recorded."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
WORDS = [f"w{i:03d}" for i in range(30)]


def simulation_class():
    """``CohortSimulation`` from benchmarks/_cohort_round.py."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    from _cohort_round import CohortSimulation

    return CohortSimulation


def tiny_bows(n: int, seed: int = 0, vocab: int = len(WORDS)) -> list:
    """``n`` people of three short documents each."""
    rng = np.random.default_rng(seed)
    bows = []
    for _ in range(n):
        ptr, ids = [0], []
        for _ in range(3):
            ids += list(np.unique(rng.integers(0, vocab, 8)))
            ptr.append(len(ids))
        bows.append((np.array(ptr), np.array(ids, dtype=np.int64), np.ones(len(ids), np.int64)))
    return bows


def record_shares(monkeypatch) -> dict:
    """Record ``{(round_id, contributor, phase): (quantized statistic, what it masked before its pad)}`` for every
    cohort member's upload."""
    from dptopic.contributor.secure_sum import cohorts as cc
    from dptopic.protocol.secure_sum.ring import from_ring, to_ring

    seen: dict = {}
    last: dict = {}
    quantize, share = cc.quantize, cc.CohortContributor._share

    def quantize_(*args, **kw):
        last["q"] = quantize(*args, **kw)
        return last["q"]

    def share_(self, phase, x):
        out = share(self, phase, x)
        y = out
        if self.pads is not None:
            bits = self.plan.bits
            y = from_ring(to_ring(out, bits) + self.pads.vector(phase, len(out), bits), bits)
        seen[(self.round_id, self.me, phase)] = (last["q"], y)
        return out

    monkeypatch.setattr(cc, "quantize", quantize_)
    monkeypatch.setattr(cc.CohortContributor, "_share", share_)
    return seen


def exact_sum(sim, seen: dict, phase: int, bits: int) -> np.ndarray:
    """The sum, in the ring, of what the survivors of ``phase`` (each cohort's uploads) masked."""
    from dptopic.protocol.secure_sum.ring import from_ring, ring_dtype, to_ring

    total = None
    for server in sim.servers:
        for u in server.padded[phase][1]:
            y = to_ring(seen[(server.round_id, u, phase)][1], bits)
            total = y.astype(ring_dtype(bits)) if total is None else total + y
    return from_ring(total, bits)


class FixedCoins:
    """Coins that always read one half: the randomized rounding then rounds to nearest (noise held fixed)."""

    def random(self, n):
        return np.full(n, 0.5)


def hold_noise_fixed(monkeypatch) -> None:
    """Every cohort member (in this process) rounds to nearest and adds no noise share: two rounds of the same people
    then release the same sums, whatever their keys, masks and pads."""
    from dptopic.contributor.secure_sum import cohorts as cc

    quantize = cc.quantize
    monkeypatch.setattr(cc, "quantize", lambda x, scale, bound, rng: quantize(x, scale, bound, FixedCoins()))
    monkeypatch.setattr(cc, "skellam_share", lambda q, mu, scale, rng, secure=False: (np.asarray(q), None))


def hold_noise_fixed_here() -> None:
    """:func:`hold_noise_fixed` for the rest of this process's life: the initializer of a spawned contributor process
    (``experiments.secure_sum.play_cohort_round(initializer=...)``), where no test's monkeypatch reaches."""
    from dptopic.contributor.secure_sum import cohorts as cc

    quantize = cc.quantize
    cc.quantize = lambda x, scale, bound, rng: quantize(x, scale, bound, FixedCoins())
    cc.skellam_share = lambda q, mu, scale, rng, secure=False: (np.asarray(q), None)


class LiveCohortRound:
    """A round in cohorts (``dptopic.service.secure_sum.cohort_app``) under a real uvicorn in a thread of this process,
    on 127.0.0.1, with the operator's invitations (files in ``tmp/inv``); ``ledger`` and ``dataset``: the dataset ledger
    the round is charged to; ``database``: the round's (default a SQLite file in ``tmp``); ``ids``: the people the
    invitations name (their pseudonyms made by ``ledger``)."""

    TOKEN = "t" * 24

    def __init__(self, tmp, n: int = 24, cohort_size: int = 12, dropouts: int = 0, collusion: int = 1,
                 round_id: str = "round1", topics: int = 3, words=WORDS, ledger=None, dataset=None, database=None,
                 committee=None, ids=None):
        import uvicorn

        from dptopic.protocol.secure_sum.cohort_enrollment import make_cohort_invitations, read_cohort_directory
        from dptopic.protocol.secure_sum.cohorts import CohortPlan
        from dptopic.service.secure_sum.cohort_app import CohortSumConfig, create_cohort_app
        from service_helpers import free_port

        self.tmp = Path(tmp)
        make_cohort_invitations(self.tmp / "enroll.key", n, self.tmp / "inv", cohort_size, dropouts, collusion,
                                round_id, committee=bool(committee), ids=ids, ledger=ledger if ids else None)
        self.files = sorted((self.tmp / "inv").glob("invitation-*.json"))
        self.plan = CohortPlan(8.0, 1e-5, n, dropouts, len(words), cohort_size, collusion, committee=committee)
        self.cfg = CohortSumConfig(words, self.plan, read_cohort_directory(self.tmp / "inv" / "directory.json"),
                                   n_topics=topics, database=database or f"sqlite:///{self.tmp}/round.db",
                                   admin_token=self.TOKEN,
                                   ledger=None if ledger is None else str(ledger), ledger_dataset=dataset)
        self.app = create_cohort_app(self.cfg, freeze_gc=False)
        self.server = self.app.state.cohort_server
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.uvicorn = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_config=None,
                                                     log_level="error", access_log=False,
                                                     timeout_graceful_shutdown=2))

    def __enter__(self) -> "LiveCohortRound":
        from service_helpers import start_uvicorn

        self.thread = start_uvicorn(self.uvicorn, "the cohort server")
        return self

    def __exit__(self, *exc) -> None:
        from service_helpers import stop_uvicorn

        stop_uvicorn(self.uvicorn, self.thread)


def record_unmaskings(monkeypatch, led, dataset: str = "clinic") -> list:
    """Every unmasking any round of this process makes (a default cohort's or the bridge's, a committee cohort's):
    ``(round id, step, releases of ``dataset`` on the dataset ledger ``led`` then)``."""
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.service.secure_sum import committee_state
    from dptopic.service.secure_sum import default as secure_sum

    seen: list = []

    def recorded(module, name):
        real = getattr(module, name)

        def unmask(total, keys, round_id, phase, *a, **k):
            seen.append((round_id, phase, len(DatasetLedger(led).releases(dataset)) if Path(led).exists() else 0))
            return real(total, keys, round_id, phase, *a, **k)
        monkeypatch.setattr(module, name, unmask)
    recorded(committee_state, "unmask_committee_sum")
    recorded(secure_sum.ss, "unmask_sum")
    return seen


def check_the_ledgers_refusal_fails_every_round(tmp, monkeypatch, n: int, cohort_size: int, **kw) -> None:
    """A round in cohorts (``kw``: :class:`LiveCohortRound`'s, a committee) charged to a dataset ledger whose cap
    (epsilon 0.5) is below the round's epsilon (8), every person playing: no play ends with a summary, the cohorts and
    the bridge fail with a reason naming the ledger and saying nothing was revealed, no round unmasks anything and the
    ledger holds no release."""
    import time

    from dptopic.dataset_ledger.ledger import DatasetLedger

    led = Path(tmp) / "ledger.sqlite"
    DatasetLedger(led).set_cap("clinic", 0.5, 1e-5)
    seen = record_unmaskings(monkeypatch, led)
    with LiveCohortRound(Path(tmp) / "live", n, cohort_size, ledger=led, dataset="clinic", **kw) as live:
        out = play_all(live.url, live.files, tiny_bows(n), Path(tmp) / "live", timeout=60)
        deadline = time.monotonic() + 30     # the players may give up before the coordinator has failed every round
        while live.server.view()["bridge"] != "failed" and time.monotonic() < deadline:
            time.sleep(0.05)
        view = live.server.view()
        padded = [r.padded for r in live.server.parts()]
    assert not any(isinstance(o, dict) for o in out)
    assert view["state"] == "failed" and view["cohorts"] == ["failed", "failed"] and view["bridge"] == "failed"
    assert "ledger" in view["reason"] and "nothing revealed" in view["reason"], view["reason"]
    assert seen == [] and padded == [{}, {}, {}]
    assert DatasetLedger(led).releases("clinic") == []


class EndedParts(dict):
    """``{(round id, contributor id): (time.monotonic(), summary or what it raised)}``: every part of a round in
    cohorts a person of this process played (its cohort's round, a delegate's bridge round) that has ended
    (:func:`record_parts`); :attr:`settled` is set once every part :meth:`watch` names has ended."""

    def __init__(self):
        import threading

        super().__init__()
        self.watched: set = set()
        self.settled = threading.Event()
        self._lock = threading.Lock()

    def watch(self, parts) -> None:
        """Set :attr:`settled` once each of ``parts`` (``(round id, contributor id)`` pairs) has ended."""
        with self._lock:
            self.watched |= set(parts)

    def ended(self, part, outcome) -> None:
        """``part`` ended with ``outcome`` now."""
        import time

        with self._lock:
            self[part] = (time.monotonic(), outcome)
            if self.watched and self.watched <= set(self):
                self.settled.set()


def record_parts(monkeypatch) -> EndedParts:
    """Record when and how each part (:func:`dptopic.contributor.secure_sum.client.take_part`) of every person a
    :func:`play_all` plays ends, each raised or returned as before."""
    from dptopic.contributor.secure_sum import cohort_client

    parts = EndedParts()
    take_part = cohort_client.take_part

    def recorded(*args, contributor, **kw):
        try:
            out = take_part(*args, contributor=contributor, **kw)
        except Exception as e:      # noqa: BLE001 (recorded, then raised as before)
            parts.ended((contributor.round_id, contributor.me), e)
            raise
        parts.ended((contributor.round_id, contributor.me), out)
        return out

    monkeypatch.setattr(cohort_client, "take_part", recorded)
    return parts


def bridge_parts(files) -> set:
    """The bridge round's part, ``(round id, contributor id)``, of every delegate holding one of ``files``."""
    import json

    docs = [json.loads(Path(f).read_text()) for f in files]
    return {(d["bridge"]["round_id"], d["bridge"]["contributor"]) for d in docs if "bridge" in d}


def play_all(url: str, files, bows, tmp, skip=(), timeout: float = 120.0, stop=None, leave=()) -> list:
    """Every person (``bows[i]`` holding ``files[i]``) plays the round at ``url`` in a thread of its own
    (:func:`dptopic.contributor.secure_sum.cohort_client.take_part_in_cohorts`); their summaries, or what each raised.
    ``stop``: an event that ends every part still playing once set (:class:`~dptopic.contributor.secure_sum.client
    .Stopped`): a test whose checks are settled (:attr:`EndedParts.settled`) ends the waits of those it does not look
    at, rather than have them wait out their ``timeout`` for steps that never come. ``leave``: the people (indices)
    who mask step 0 and leave without sending it."""
    import threading

    from dptopic.contributor.secure_sum.cohort_client import take_part_in_cohorts

    out: list = [None] * len(files)

    def one(i):
        try:
            out[i] = take_part_in_cohorts(url, bows[i], files[i], state=Path(tmp) / f"state-{i}.json", poll=0.05,
                                          timeout=timeout, stop=stop, leave_after_masking=i in leave)
        except Exception as e:      # noqa: BLE001 (the caller looks)
            out[i] = e

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(files)) if i not in skip]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 30)
    return out


class Lying:
    """An ASGI wrapper of one round's app (a cohort's or the bridge's) whose every JSON answer goes through ``lie``
    (a view and a post-and-wait's ``view`` alike): the server's own state stays honest, what it says does not."""

    def __init__(self, app, lie):
        self.app, self.lie = app, lie

    async def __call__(self, scope, receive, send):
        import json

        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, chunks = {}, []

        async def capture(message):
            if message["type"] == "http.response.start":
                start.update(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            try:
                doc = json.loads(body)
            except ValueError:
                doc = None
            if isinstance(doc, dict):
                if isinstance(doc.get("view"), dict):
                    doc["view"] = self.lie(doc["view"])
                body = json.dumps(self.lie(doc)).encode()
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)


def lie_at(live, prefix: str, lie) -> None:
    """Make the round at ``prefix`` (``/cohorts/C`` or ``/bridge``) of ``live`` (a :class:`LiveCohortRound`) say
    what ``lie`` makes of each of its answers (:class:`Lying`)."""
    from starlette.routing import Mount

    route = next(r for r in live.app.routes if isinstance(r, Mount) and r.path == prefix)
    route.app = Lying(route.app, lie)
