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
    from dptopic.contributor import cohorts as cc
    from dptopic.protocol.secure_sum import from_ring, to_ring

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
    from dptopic.protocol.secure_sum import from_ring, ring_dtype, to_ring

    total = None
    for server in sim.servers:
        for u in server.padded[phase][1]:
            y = to_ring(seen[(server.round_id, u, phase)][1], bits)
            total = y.astype(ring_dtype(bits)) if total is None else total + y
    return from_ring(total, bits)
