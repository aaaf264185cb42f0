"""The contributor's side of a secure-sum round (``dptopic submit`` against ``--report-kind secure-sum``).

:class:`SecureContributor` holds one person's documents and the round's secrets, and builds each step's request
(:mod:`dptopic.contributor.secure_sum`, :mod:`dptopic.protocol.secure_sum`); :func:`take_part` runs the steps against a server, waiting between them. With
a state file, everything a step sends is written there (atomically) before it is sent: a resumed run sends the same
keys, the same shares and the same masked uploads, never a second noise share or key set for one round.
"""
from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

import numpy as np

from .._io import atomic_write_bytes
from ..accounting.skellam import rounded_norms
from ..errors import DPTopicError
from ..mechanisms.skellam import skellam_share
from ..protocol.secure_sum import SecureSumPlan
from . import secure_sum as ss
from .client import ServerError, ServiceClient, default_state_folder

STATE_FORMAT = "dptopic-secure-sum-state"


class SecureContributor:
    """One person (all of ``bow``'s documents) in one round. ``rng``: the rounding and noise coins (default fresh OS
    entropy); ``state``: a JSON file path or None."""

    def __init__(self, config: dict, bow, state=None, rng=None, contributor: str | None = None,
                 max_epsilon: float | None = None):
        if config.get("report_kind") != "secure-sum":
            raise DPTopicError("this server does not run a secure sum.")
        self.plan = SecureSumPlan.from_dict(config.get("secure_sum") or {})
        if max_epsilon is not None and self.plan.epsilon > max_epsilon * (1 + 1e-12):
            raise DPTopicError(f"the server asks for epsilon {self.plan.epsilon:g} per person, above your --max-epsilon"
                               f" {max_epsilon:g}: nothing computed or sent.")
        self.round_id = str(config["round_id"])
        self.V = int(config["vocab_size"])
        self.bow = bow
        self.rng = rng if rng is not None else np.random.default_rng(int.from_bytes(os.urandom(16), "big"))
        self.path = None if state is None else Path(state)
        self.st = self._load() if self.path is not None else None
        if self.st is None:
            self.st = {"format": STATE_FORMAT, "round_id": self.round_id,
                       "contributor": contributor or os.urandom(8).hex(),
                       "secrets": ss.ContributorSecrets.new(ss_phases()).to_dict(), "sent": {}, "revealed": {}}
            self._write()
        self.me = self.st["contributor"]
        self.secrets = ss.ContributorSecrets.from_dict(self.st["secrets"])
        self.log = ss.RevealLog(self.st["revealed"])
        self.held: dict | None = None

    def _load(self):
        if not self.path.exists():
            return None
        try:
            st = json.loads(self.path.read_text())
        except (OSError, ValueError):
            raise DPTopicError(f"--state {self.path} is not a secure-sum state file: give another --state.") from None
        if not isinstance(st, dict) or st.get("format") != STATE_FORMAT:
            raise DPTopicError(f"--state {self.path} is not a secure-sum state file: give another --state.")
        if st.get("round_id") != self.round_id:
            raise DPTopicError(f"--state {self.path} belongs to round {st.get('round_id')!r}, not this server's round"
                               f" {self.round_id!r}: give a fresh --state for a new round.")
        return st

    def _write(self) -> None:
        if self.path is not None:
            atomic_write_bytes(self.path, json.dumps(self.st).encode(), private=True)   # it holds the round's secrets

    def _once(self, step: str, make):
        """What step ``step`` sends: made and kept the first time, the kept one afterwards."""
        if step not in self.st["sent"]:
            self.st["sent"][step] = make()
            self._write()
        return self.st["sent"][step]

    # ------------------------------------------------------------ steps
    def keys_request(self) -> dict:
        return {"contributor": self.me, "keys": self.secrets.public()}

    def shares_request(self, roster: dict) -> dict:
        roster = ss.check_roster(roster)
        if self.me not in roster or roster[self.me] != self.secrets.public():
            raise DPTopicError("the server's roster does not hold this contributor's keys: nothing sent.")
        shares = self._once("shares", lambda: ss.make_shares(self.me, self.secrets, roster, self.round_id))
        return {"contributor": self.me, "shares": shares}

    def take_shares(self, roster: dict, ciphertexts: dict) -> None:
        self.held = {s: ss.open_shares(self.me, self.secrets, roster, self.round_id, s, c)
                     for s, c in ciphertexts.items() if s in roster}

    def statistic(self, phase: int, kept=None) -> np.ndarray:
        if phase == 0:
            return ss.person_presence(self.bow, self.V)
        return ss.person_cooccurrence(self.bow, np.asarray(kept, dtype=np.int64), self.V)

    def upload_body(self, phase: int, roster: dict, members, kept=None) -> bytes:
        """The masked upload of ``phase`` (quantized statistic + noise share + masks), made once."""
        def make():
            x = self.statistic(phase, kept)
            q = ss.quantize(x, self.plan.scale, rounded_norms(self.plan.scale, len(x))[0], self.rng)
            noisy, _ = skellam_share(q, self.plan.mu_shares[phase], self.plan.scale, self.rng)
            y = ss.mask(noisy, self.me, self.secrets, roster, self.round_id, phase, members)
            return base64.b64encode(y.tobytes()).decode()
        return base64.b64decode(self._once(f"upload{phase}", make))

    def unmask_request(self, phase: int, uploaded, members) -> dict:
        def make():
            answers = self.log.answer(phase, self.held or {}, uploaded, set(members) - set(uploaded))
            self.st["revealed"] = self.log.revealed
            return answers
        return {"contributor": self.me, "answers": self._once(f"unmask{phase}", make)}


def ss_phases() -> int:
    return 2


def take_part(server: str, bow, state=None, max_epsilon: float | None = None, client=None, poll: float = 0.5,
              timeout: float = 3600.0, contributor: str | None = None) -> dict:
    """Run every step of the server's round for one person; returns a summary. Waits (polling ``GET
    /v1/secure/round``) between steps, at most ``timeout`` seconds for each."""
    client = client or ServiceClient(server)
    cfg = client.get_json("/v1/config")
    c = SecureContributor(cfg, bow, state=state, max_epsilon=max_epsilon, contributor=contributor)
    order = ["keys", "shares", "upload0", "unmask0", "upload1", "unmask1", "released"]

    def post_json(path, doc):
        _, _, data = client.request("POST", path, json.dumps(doc).encode(), {"Content-Type": "application/json"})
        return json.loads(data)

    def wait_for(step):
        t0 = time.monotonic()
        while True:
            view = client.get_json("/v1/secure/round")
            if view["state"] == "failed":
                raise DPTopicError(f"the round failed: {view.get('reason')}.")
            if order.index(view["state"]) >= order.index(step):
                return view
            if time.monotonic() - t0 > timeout:
                raise DPTopicError(f"the round did not reach step {step!r} within {timeout:g} s: run again later"
                                   " (--state keeps what was sent).")
            time.sleep(poll)

    post_json("/v1/secure/keys", c.keys_request())
    view = wait_for("shares")
    roster = view["roster"]
    if view["state"] == "shares":
        post_json("/v1/secure/shares", c.shares_request(roster))
    sent = []
    for phase in (0, 1):
        view = wait_for(f"upload{phase}")
        if c.me not in view.get("members", []) and view["state"] == f"upload{phase}":
            return {"contributor": c.me, "steps": sent, "left_out": f"step {phase}"}
        if view["state"] == f"upload{phase}":
            body = c.upload_body(phase, roster, view["members"], view.get("kept"))
            client.request("POST", f"/v1/secure/upload/{phase}", body,
                           {"Content-Type": "application/octet-stream", "Dptopic-Contributor": c.me})
            sent.append(f"upload{phase}")
        view = wait_for(f"unmask{phase}")
        if view["state"] == f"unmask{phase}" and c.me in view["uploaded"]:
            if c.held is None:
                c.take_shares(roster, client.get_json(f"/v1/secure/shares?contributor={c.me}"))
            try:
                post_json(f"/v1/secure/unmask/{phase}", c.unmask_request(phase, view["uploaded"], view["members"]))
                sent.append(f"unmask{phase}")
            except ServerError as e:     # the others' shares sufficed: the step closed before this answer
                if e.code != "round_closed":
                    raise
    return {"contributor": c.me, "steps": sent, "epsilon": c.plan.epsilon, "delta": c.plan.delta,
            "state": None if state is None else str(state)}


def simulate_round(server: str, bows, dropout: float, token: str | None, seed=None, client=None) -> dict:
    """Play every person of ``bows`` (one bag of words each) as its own contributor, with its own keys, over HTTP, in
    lock-step; a share ``dropout`` of them (chosen at random) drops out after masking, without uploading. Returns the
    timings, the bytes and CPU seconds per contributor, and the server's sum-and-unmask times. ``token``: the server's
    admin token, to close the upload step once the survivors are in."""
    client = client or ServiceClient(server, retries=3)
    rng = np.random.default_rng(seed)
    cfg = client.get_json("/v1/config")
    n = len(bows)
    if n != int(cfg["secure_sum"]["min_contributors"]):
        raise DPTopicError(f"the corpus holds {n} people, but the server's round takes {cfg['secure_sum']['min_contributors']}"
                           f" (--min-contributors): start the server with --min-contributors {n}.")
    people = [SecureContributor(cfg, b, rng=np.random.default_rng([int(rng.integers(2**62)), i]),
                                contributor=f"p{i:06d}") for i, b in enumerate(bows)]
    dropped = set(rng.choice(n, int(round(dropout * n)), replace=False).tolist()) if dropout > 0 else set()
    cpu = np.zeros(n)
    sent = np.zeros(n)
    t0 = time.perf_counter()

    def post_json(path, doc):
        body = json.dumps(doc).encode()
        client.request("POST", path, body, {"Content-Type": "application/json"})
        return len(body)

    for i, c in enumerate(people):
        sent[i] += post_json("/v1/secure/keys", c.keys_request())
    roster = client.get_json("/v1/secure/round")["roster"]
    for i, c in enumerate(people):
        t = time.process_time()
        req = c.shares_request(roster)
        cpu[i] += time.process_time() - t
        sent[i] += post_json("/v1/secure/shares", req)
    for c in people:
        c.take_shares(roster, client.get_json(f"/v1/secure/shares?contributor={c.me}"))
    upload_bytes, upload_cpu = [], []
    def settled(*states, timeout=3600.0):      # the server unmasks off the request's thread
        deadline = time.monotonic() + timeout
        while True:
            view = client.get_json("/v1/secure/round")
            if view["state"] in states or view["state"] == "failed" or time.monotonic() > deadline:
                return view
            time.sleep(0.2)

    for phase in (0, 1):
        view = settled(f"upload{phase}")
        if view["state"] != f"upload{phase}":
            raise DPTopicError(f"the round is at {view['state']!r} ({view.get('reason')}), not upload{phase}.")
        members = view["members"]
        member = set(members)
        for i, c in enumerate(people):
            if c.me not in member:
                continue
            t = time.process_time()
            body = c.upload_body(phase, roster, members, view.get("kept"))
            dt = time.process_time() - t
            cpu[i] += dt
            upload_cpu.append(dt)
            if phase == 0 and i in dropped:
                continue            # masked, then gone
            upload_bytes.append(len(body))
            client.request("POST", f"/v1/secure/upload/{phase}", body,
                           {"Content-Type": "application/octet-stream", "Dptopic-Contributor": c.me})
            sent[i] += len(body)
        view = client.get_json("/v1/secure/round")
        if view["state"] == f"upload{phase}":
            if token is None:
                raise DPTopicError("contributors dropped out: the upload step closes by the admin only; give the"
                                   " server's --token-file.")
            client.request("POST", "/v1/admin/secure/close", b"", {"Authorization": f"Bearer {token}"})
            view = client.get_json("/v1/secure/round")
        if view["state"] != f"unmask{phase}":
            raise DPTopicError(f"the round is at {view['state']!r} ({view.get('reason')}), not unmask{phase}.")
        for i, c in enumerate(people):
            if c.me in set(view["uploaded"]):
                try:
                    sent[i] += post_json(f"/v1/secure/unmask/{phase}",
                                         c.unmask_request(phase, view["uploaded"], view["members"]))
                except ServerError as e:
                    if e.code != "round_closed":
                        raise
                    break
    view = settled("released")
    wall = time.perf_counter() - t0
    timings = client.get_json("/v1/secure/timings")
    return {"state": view["state"], "reason": view.get("reason"), "people": n, "dropped": len(dropped),
            "seconds": wall, "bytes_per_contributor": float(np.mean(sent)),
            "upload_bytes_max": int(max(upload_bytes)) if upload_bytes else 0,
            "cpu_per_contributor_s": float(np.mean(cpu)), "upload_cpu_max_s": float(max(upload_cpu)),
            "server": timings, "kept_words": len(view.get("kept", []) or [])}


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


def state_path(given, round_id: str):
    """Where a contributor keeps a round's secrets and what it sent: ``given`` (a file, or a folder that gets
    ``secure-sum-ROUND.json``), by default the state folder ``submit`` uses (None given); None for ``"none"`` (a rerun
    then joins as a new contributor while the roster is open, so keep the default)."""
    if given is not None and given.strip().lower() == "none":
        return None
    name = f"secure-sum-{round_id}.json"
    if given is None:
        return Path(default_state_folder()) / name
    p = Path(given)
    return p / name if p.is_dir() else p
