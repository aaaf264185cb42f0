"""A person's side of a round in cohorts (:mod:`dptopic.protocol.secure_sum.cohorts`, read its note first).

A member of a cohort is a :class:`~dptopic.contributor.secure_sum.default.SecureContributor` of its cohort's round with
three differences: its noise share and quantization scale are the whole round's (:class:`CohortPlan`), not its
cohort's; a delegate subtracts its pad from what it masks; and it refuses to sign or reveal over a set of uploads that
holds fewer than ``t + 1`` of its cohort's delegates. A delegate also plays a :class:`BridgeContributor` in the
bridge round, uploading its pad and refusing a set of uploads that leaves any cohort with fewer than ``t + 1``
delegates. In a cohort with a committee (:class:`CohortCommitteeContributor`) that check is the committee's, made
before it signs or reveals anything.
"""
from __future__ import annotations

import os

import numpy as np

from ...accounting.skellam import rounded_norms
from ...errors import DPTopicError
from ...mechanisms.skellam import skellam_share
from ...protocol.secure_sum.cohorts import (
    CohortPlan,
    bridge_round_id,
    check_bridge,
    check_delegates,
    cohort_round_id,
    pad,
)
from ...protocol.secure_sum.messages import PHASES
from ...protocol.secure_sum.ring import from_ring, to_ring, triangle_size
from .checks import ServerLied
from .committee import CommitteeContributor
from .default import SecureContributor
from .person_statistics import quantize

_DELEGATES: dict = {}
"""Each cohort's delegates by ``(round, cohort, count)``, with the list of members they were drawn from: the
contributors a process plays in one cohort share the members' list (a process-wide one, :class:`SecureContributor`'s
``ids``), and the draw (a hash of every member) is made once for them, not once each."""


def _delegates(cohort_plan: CohortPlan, ids: list, round_id: str, cohort: int) -> list:
    """``cohort_plan.delegates(ids, round_id, cohort)``, made once for the same list of members."""
    key = (round_id, cohort, cohort_plan.n_delegates)
    found = _DELEGATES.get(key)
    if found is None or found[0] is not ids:
        if len(_DELEGATES) >= 256:
            _DELEGATES.clear()
        found = _DELEGATES[key] = (ids, cohort_plan.delegates(ids, round_id, cohort))
    return found[1]


class Pads:
    """A delegate's pad seeds, one per phase, from the OS CSPRNG: the same pads are subtracted in its cohort and
    added in the bridge."""

    def __init__(self, seeds=None):
        self.seeds = [os.urandom(32) for _ in range(PHASES)] if seeds is None else [bytes(s) for s in seeds]

    def vector(self, phase: int, dim: int, bits: int) -> np.ndarray:
        """The pad of ``phase`` as ``dim`` ring elements."""
        return pad(self.seeds[phase], dim, bits)


def _check_cohort_plan(c: SecureContributor, cohort_plan: CohortPlan, plan) -> None:
    if plan.to_dict() != c.plan.to_dict():
        raise ServerLied("the server's plan is not the one the round's cohort plan gives this cohort (its size,"
                         " tolerance, collusion or ring): refusing to take part.")


class _DelegatesChecked(SecureContributor):
    """A contributor of a round in cohorts: a set of uploads it signs or reveals over keeps enough delegates
    (:meth:`_delegates_problem`: a cohort's ``t + 1``, or each cohort's in the bridge), refused otherwise."""

    def _delegates_problem(self, uploaded) -> str | None:
        """What is wrong with the delegates among ``uploaded``, or None; each kind of contributor gives its rule. A
        contributor without one refuses every set (fail closed)."""
        return "no rule says which delegates it must keep"

    def _uploaded(self, phase: int, view: dict) -> list:
        uploaded = super()._uploaded(phase, view)
        why = self._delegates_problem(uploaded)
        if why is not None:
            raise ServerLied(f"the server names uploads of step {phase} where {why}: nothing signed or revealed.")
        return uploaded


class CohortContributor(_DelegatesChecked):
    """One person in cohort ``cohort`` of a round in cohorts (``round_id``: the whole round's id;
    ``cohort_plan``: the round's :class:`CohortPlan`, which the contributor holds from the operator, as its
    invitation). ``pads``: this person's :class:`Pads` when it is one of the cohort's delegates. The other arguments
    are :class:`SecureContributor`'s."""

    PINNED = False      # its plan is the cohort plan's, which the invitation's cohort layout pins

    def __init__(self, config: dict, bow, invitation: dict, cohort_plan: CohortPlan, round_id: str, cohort: int,
                 pads: Pads | None = None, **kw):
        super().__init__(config, bow, invitation, **kw)
        self.cohort_plan, self.cohort = cohort_plan, int(cohort)
        if self.round_id != cohort_round_id(round_id, cohort) or not 0 <= self.cohort < len(cohort_plan.sizes):
            raise ServerLied(f"the server runs round {self.round_id!r}, not cohort {cohort} of round {round_id!r}:"
                             " refusing to take part.")
        _check_cohort_plan(self, cohort_plan, cohort_plan.cohort_plans[self.cohort])
        self.delegates = _delegates(cohort_plan, self.ids, round_id, self.cohort)
        if (self.me in self.delegates) != (pads is not None):
            raise DPTopicError(f"{self.me!r} is {'' if self.me in self.delegates else 'not '}one of its cohort's"
                               " delegates: give its pads exactly when it is.")
        self.pads = pads
        if pads is not None and self.secrets is not None:     # the pads are kept, as the round's secrets are
            kept = self.st.get("pads")
            if kept is None:
                self.st["pads"] = [seed.hex() for seed in pads.seeds]
                self._write()
            else:                   # a resumed run uploads with the pads it drew first (the bridge's copy too)
                pads.seeds = [bytes.fromhex(seed) for seed in kept]

    def finish(self, outcome: str) -> None:
        """The round is over: the pads are wiped with the other secrets."""
        self.st.pop("pads", None)
        super().finish(outcome)

    def _share(self, phase: int, x: np.ndarray) -> np.ndarray:
        """Quantized at the round's scale with the round's noise share; minus the pad for a delegate."""
        cp = self.cohort_plan
        q = quantize(x, cp.scale, rounded_norms(cp.scale, len(x))[0], self._coins())
        noisy, _ = skellam_share(q, cp.mu_shares[phase], cp.scale, None if self.rng is None else self.rng,
                                 secure=self.rng is None)
        if self.pads is None:
            return noisy
        bits = self.plan.bits
        return from_ring(to_ring(noisy, bits) - self.pads.vector(phase, len(noisy), bits), bits)

    def _delegates_problem(self, uploaded) -> str | None:
        return check_delegates(uploaded, self.delegates, int(self.cohort_plan.collusion))


class BridgeContributor(_DelegatesChecked):
    """A delegate in the bridge round: it uploads its pads (no statistic, no noise) and refuses a set of uploads that
    leaves any cohort with fewer than ``t + 1`` delegates. The bridge's ids are ``c{cohort}-{id}``."""

    PINNED = False      # its plan is the cohort plan's bridge plan, which the invitation's cohort layout pins

    def __init__(self, config: dict, invitation: dict, cohort_plan: CohortPlan, round_id: str, pads: Pads, **kw):
        empty = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        super().__init__(config, empty, invitation, **kw)
        self.cohort_plan, self.pads = cohort_plan, pads
        if self.round_id != bridge_round_id(round_id):
            raise ServerLied(f"the server runs round {self.round_id!r}, not the bridge of round {round_id!r}: refusing"
                             " to take part.")
        _check_cohort_plan(self, cohort_plan, cohort_plan.bridge_plan)
        by = [[] for _ in cohort_plan.sizes]
        for i in self.ids:
            head = i.split("-", 1)[0]
            if not (head[:1] == "c" and head[1:].isdigit() and int(head[1:]) < len(by)):
                raise ServerLied(f"the bridge's directory names {i[:40]!r}, not a delegate of a cohort: refusing to"
                                 " take part.")
            by[int(head[1:])].append(i)
        if any(len(d) != cohort_plan.n_delegates for d in by):
            raise ServerLied("the bridge's directory does not hold each cohort's delegates: refusing to take part.")
        self.delegates_by_cohort = by

    def statistic(self, phase: int, kept=None) -> np.ndarray:
        """Zeros of the phase's size (the pad is the upload)."""
        return np.zeros(self.V + 1 if phase == 0 else triangle_size(len(kept)))

    def _share(self, phase: int, x: np.ndarray) -> np.ndarray:
        bits = self.plan.bits
        return from_ring(self.pads.vector(phase, len(x), bits), bits)

    def _delegates_problem(self, uploaded) -> str | None:
        return check_bridge(uploaded, self.delegates_by_cohort, int(self.cohort_plan.collusion))


class CohortCommitteeContributor(CohortContributor, CommitteeContributor):
    """One person in a committee-mode cohort (``CohortPlan(committee=...)``;
    :mod:`dptopic.protocol.secure_sum.cohorts`'s note,
    "A committee in each cohort"): a :class:`~dptopic.contributor.secure_sum.committee.CommitteeContributor` of its
    cohort's round with :class:`CohortContributor`'s differences (the round's noise and scale, a delegate's pad). On
    the committee, it signs and answers only for a set of uploads that holds at least ``t + 1`` of its cohort's
    delegates. The arguments are :class:`CohortContributor`'s (and ``secrets``, the keys posted before the
    configuration was known, as :class:`~dptopic.contributor.secure_sum.committee.CommitteeContributor`'s)."""

    def _checked_set(self, phase: int, view: dict) -> frozenset:
        up = super()._checked_set(phase, view)
        why = check_delegates(up, self.delegates, int(self.cohort_plan.collusion))
        if why is not None:
            raise ServerLied(f"the server names uploads of step {phase} where {why}: nothing signed or revealed.")
        return up


__all__ = ["Pads", "CohortContributor", "BridgeContributor", "CohortCommitteeContributor"]
