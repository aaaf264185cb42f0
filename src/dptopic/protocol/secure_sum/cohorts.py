"""Rounds larger than one cohort: a secure sum of secure sums that pays the noise once.

A round of N contributors is split into C cohorts of a few thousand; each cohort is one round of the secure sum of
:mod:`dptopic.protocol.secure_sum.default` (its own roster, neighbour graph, threshold and server), and a second-level
round, the *bridge*, sums what makes the cohort totals readable. Read that module's note first.

**Why the cohort totals must stay hidden.** Every contributor's Skellam share is calibrated to the whole round (the
``N - sum F_c - t - 1`` honest shares besides the protected person's own), so one cohort's total carries about
``n_c / N`` of the noise: released, it would cost that cohort's people an epsilon many times the stated one. The
production pattern (each cohort's sum revealed to a master aggregator, Bonawitz et al. 2019, "Towards federated
learning at scale", Sec. 6) pays the noise once per cohort instead, so C times the variance.

**The design: pads that cancel only across the bridge.** In each cohort ``k`` public *delegates* (the first ``k`` of
the cohort in a hash order of the round id: :meth:`CohortPlan.delegates`) each draw a fresh pad seed per phase.

- In their cohort a delegate uploads ``x + noise - PRG(pad)`` (masked as usual); the cohort's server unmasks
  ``Y_c = S_c - P_c``: the cohort's total minus its delegates' pads, uniform in the ring while one honest delegate's
  pad is in it.
- In the bridge (a round of the ``C k`` delegates, with its own keys, graph and threshold) each uploads ``PRG(pad)``;
  its server unmasks ``B``, the sum of the pads of the delegates that uploaded there.
- The coordinator releases ``sum_c Y_c + B``: the round's total, exactly, when the delegates that uploaded in the
  cohorts are those that uploaded in the bridge (the server's
  :func:`~dptopic.service.secure_sum.cohorts.combine` checks it; otherwise nothing is released).

**What a lying operator learns** (it runs every cohort server and the bridge; at most ``t`` colluding contributors
in the whole round, anywhere). Two checks, made by the honest contributors before they reveal a share:

1. in a cohort, the set of uploads holds at least ``t + 1`` of the cohort's delegates (:func:`check_delegates`): one
   of them is honest, so ``Y_c`` is masked by a pad the operator does not hold;
2. in the bridge, the set of uploads holds at least ``t + 1`` delegates of *every* cohort (:func:`check_bridge`).

By the single-level argument the bridge reveals only the sum of all its honest uploaders' pads; by check 2 every
cohort has an honest delegate among them. An honest pad in ``B`` cancels only against the ``Y_c`` of its own cohort,
so the only combination of the ``Y_c`` and ``B`` free of honest pads is the sum over *every* cohort: the operator
learns the round's total of honest survivors and nothing smaller, as a single round's server does. Each cohort's
contributors check their set of uploads against ``n_c - F_c``, so the total holds at least ``N - sum F_c`` shares,
which is what the noise is calibrated for. Each cohort's threshold protects against the same ``t`` colluders (they
may all sit in one cohort).

**The price.** A contributor's work is that of a round of ``n_c``; a delegate's, two rounds. The noise is that of a
single round whose dropout tolerance is ``sum F_c``: each cohort needs its own margin for random dropouts
(:func:`cohort_dropouts`), a little above its share of ``F`` (:attr:`CohortPlan.noise_cost` gives the ratio; about
1.02 at 2,000 a cohort and 10% dropping out). The ring and the quantization scale are the whole round's: each cohort
sums in it, so the total cannot wrap around any more than a single round's.

**A committee in each cohort** (``CohortPlan(committee=...)``). Each cohort may be a committee-mode round
(:mod:`dptopic.protocol.secure_sum.committee`: an ordinary member makes 3 requests, a committee of the cohort checks and
unmasks), its committee sized for ``n_c`` and ``F_c``. Check 1 then moves to who reveals: every honest committee
member checks that the set of uploads it signs, and the set it answers for, holds ``t + 1`` of the cohort's delegates
(:func:`check_delegates`), and the committee's threshold ``T_c`` lets at most one set of a step gather signatures, so
the one ``Y_c`` the operator can unmask is padded by an honest delegate's pad, as above. The bridge (``C k``
delegates) stays a default round, its survivors making check 2: a delegate's extra requests are not the common case,
and its own checks are unchanged. Nothing else moves: the coordinator
(:func:`~dptopic.service.secure_sum.cohorts.combine`) still refuses a delegate counted on one side only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from ...errors import DPTopicError, ParameterError
from .crypto import hkdf, prg
from .graph import default_collusion, ring_order
from .plan import SecureSumPlan

LIVENESS_TARGET = 1e-3
"""A cohort plan keeps the probability that a round with its dropout rate fails for want of survivors (a cohort
above its tolerance, or short of delegates) at most this, over all cohorts together."""
DEFAULT_COHORT_SIZE = 2000
PAD_LABEL = b"dptopic-secure-sum/cohort-pad"


def _binomial_tail(n: int, p: float, f: int) -> float:
    """P(Bin(n, p) > f)."""
    if f >= n or p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for k in range(f + 1, n + 1):
        term = math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq)
        total += term
        if k > n * p and term <= total * 1e-17:      # past the mode the terms only fall
            break
    return min(1.0, total)


@lru_cache(maxsize=256)
def cohort_dropouts(size: int, rate: float, target: float) -> int:
    """The smallest tolerance ``f`` such that a cohort of ``size`` whose members drop out independently at ``rate``
    loses more than ``f`` with probability at most ``target``."""
    if rate <= 0:
        return 0
    f = int(math.floor(size * rate))
    while f < size and _binomial_tail(size, rate, f) > target:
        f += 1
    return f


def cohort_sizes(n: int, cohort_size: int) -> list[int]:
    """``n`` contributors in ``ceil(n / cohort_size)`` cohorts of near-equal size (the larger first)."""
    c = max(1, -(-int(n) // int(cohort_size)))
    return [n // c + (1 if i < n % c else 0) for i in range(c)]


def assign(ids, round_id: str, sizes) -> list[list[str]]:
    """The cohorts' members: the ids in their ring order of the round (:func:`~secure_sum.ring_order`, a hash of the
    round id and the id, so the operator cannot choose who sits together by naming them), cut into ``sizes``."""
    order = ring_order(ids, f"{round_id}/cohorts")
    out, at = [], 0
    for s in sizes:
        out.append(sorted(order[at:at + s]))
        at += s
    return out


COHORT_PATH = "/cohorts/{c}"
"""Where a server in cohorts serves cohort ``c``'s round (its routes are a single round's under that prefix): a
contributor of a committee cohort posts its keys there first, from its invitation alone."""
BRIDGE_PATH = "/bridge"


def cohort_round_id(round_id: str, cohort: int) -> str:
    """The round id of cohort ``cohort`` (each cohort is a round of its own: its keys and masks bind to it)."""
    return f"{round_id}-c{cohort}"


def bridge_round_id(round_id: str) -> str:
    """The round id of the bridge (the second-level sum of the delegates' pads)."""
    return f"{round_id}-bridge"


def pad(seed: bytes, dim: int, bits: int) -> np.ndarray:
    """A delegate's pad of ``dim`` ring elements from its 32-byte seed (the secure sum's PRG on a derived key)."""
    return prg(hkdf(seed, PAD_LABEL), dim, bits)


def check_delegates(uploaded, delegates, collusion: int) -> str | None:
    """Why a cohort's set of uploads must not be unmasked (fewer than ``collusion + 1`` of its delegates: its total
    might be masked by colluders' pads only), or None."""
    have = len(set(uploaded) & set(delegates))
    if have < collusion + 1:
        return (f"the uploads hold {have} of the cohort's {len(delegates)} delegates, fewer than {collusion + 1}: the"
                " cohort's total might be masked by colluders' pads only")
    return None


def check_bridge(uploaded, delegates_by_cohort, collusion: int) -> str | None:
    """Why the bridge's set of uploads must not be unmasked (some cohort has fewer than ``collusion + 1`` delegates
    in it: the bridge could then unmask a sum of pads that leaves that cohort out), or None."""
    up = set(uploaded)
    for c, ds in enumerate(delegates_by_cohort):
        have = len(up & set(ds))
        if have < collusion + 1:
            return (f"the bridge's uploads hold {have} delegates of cohort {c}, fewer than {collusion + 1}: its sum of"
                    " pads could leave that cohort out")
    return None


def delegates_per_cohort(sizes, rate: float, collusion: int, cohort_size=None) -> int:
    """Delegates per cohort of ``sizes`` with ``collusion`` colluders and dropout ``rate``: the fewest (at least
    ``collusion + 1``) that keep ``collusion + 1`` of them uploading, except with probability
    :data:`LIVENESS_TARGET` over all cohorts (what :attr:`CohortPlan.n_delegates` is, and what the operator's
    invitations need before any other setting of the round is known)."""
    t = int(collusion)
    target = LIVENESS_TARGET / (4 * len(sizes))
    k = t + 1
    while k < min(sizes) and _binomial_tail(k, rate, k - t - 1) > target:
        k += 1
    if k > min(sizes) or _binomial_tail(k, rate, k - t - 1) > target:
        raise ParameterError("{cohort_size=}: the smallest cohort cannot hold enough delegates for {t} colluders"
                             " at this dropout rate; give larger cohorts.", "cohort_size",
                             max(sizes) if cohort_size is None else cohort_size, t=t)
    return k


@dataclass(frozen=True)
class CohortPlan:
    """The plan of a round in cohorts (module note): the round's noise, ring and scale, each cohort's graph and
    dropout tolerance, the delegates and the bridge.

    ``n``: contributors in the round; ``dropouts``: how many the operator expects to drop out (the rate
    ``dropouts / n`` sets each cohort's tolerance, :func:`cohort_dropouts`); ``cohort_size``: the most contributors
    in a cohort; ``collusion``: ``t`` for the whole round (default :func:`~secure_sum.default_collusion` of ``n``),
    each cohort's and the bridge's threshold tolerate it; ``bits``: the ring (None: chosen for the whole round);
    ``max_words``: the most words the second sum holds (:attr:`~secure_sum.SecureSumPlan.max_words`; None: its
    default), the same in every cohort and the bridge; ``committee``: each cohort a committee-mode round (module note,
    "A committee in each cohort"): None or 0 for none, "auto" for each cohort's smallest committee that survives its
    own dropout tolerance (:func:`~secure_sum.committee_size` of ``n_c`` and ``F_c``), or a size every cohort
    carries; the bridge stays on the default protocol."""

    epsilon: float
    delta: float
    n: int
    dropouts: int
    vocab_size: int
    cohort_size: int = DEFAULT_COHORT_SIZE
    collusion: int | None = None
    bits: int | None = None
    max_words: int | None = None
    committee: int | str | None = None

    def __post_init__(self):
        for name in ("n", "dropouts", "cohort_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ParameterError("invalid {" + name + "=}: an integer.", name, v)
        if self.cohort_size < 3:
            raise ParameterError("invalid {cohort_size=}: a cohort is a secure sum of at least 3 contributors.",
                                 "cohort_size", self.cohort_size)
        if not 0 <= self.dropouts < self.n:
            raise ParameterError("{dropouts=} must lie in [0, {n}).", "dropouts", self.dropouts, n=self.n)
        if self.collusion is None:
            object.__setattr__(self, "collusion", default_collusion(int(self.n)))
        c = self.committee
        if c is None or (isinstance(c, (int, np.integer)) and not isinstance(c, bool) and c == 0):
            object.__setattr__(self, "committee", 0)
        elif c != "auto" and (isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 2):
            raise ParameterError("invalid {committee=}: 'auto', 0 (no committee) or a committee size for every"
                                 " cohort.", "committee", c)
        if len(self.sizes) < 2:
            raise ParameterError("{cohort_size=} holds the whole round of {n}: a round in one cohort is a plain secure"
                                 " sum (SecureSumPlan); give a smaller cohort size.", "cohort_size", self.cohort_size,
                                 n=self.n)
        self.round_plan      # noqa: B018 (each refuses what it cannot carry, in one line)
        self.cohort_plans    # noqa: B018
        self.bridge_plan     # noqa: B018

    @cached_property
    def sizes(self) -> list[int]:
        """The cohorts' sizes."""
        return cohort_sizes(int(self.n), int(self.cohort_size))

    @property
    def rate(self) -> float:
        """The dropout rate the tolerances are planned for."""
        return int(self.dropouts) / int(self.n)

    @cached_property
    def cohort_dropouts(self) -> list[int]:
        """Each cohort's dropout tolerance ``F_c`` (its contributors refuse a set of uploads smaller than
        ``n_c - F_c``)."""
        target = LIVENESS_TARGET / (2 * len(self.sizes))
        return [cohort_dropouts(s, self.rate, target) for s in self.sizes]

    @cached_property
    def round_plan(self) -> SecureSumPlan:
        """The whole round as one plan: its noise (calibrated for ``N - sum F_c - t - 1`` honest shares), ring and
        scale are every cohort's; its privacy events are the release's."""
        try:
            return SecureSumPlan(self.epsilon, self.delta, int(self.n), sum(self.cohort_dropouts), self.vocab_size,
                                    int(self.collusion), self.bits, self.max_words)
        except ParameterError as e:
            if e.parameter == "dropouts":
                raise ParameterError("{dropouts=} with cohorts of {size}: the cohorts' tolerances (their random"
                                     " dropouts' margins, {total} together) leave no honest noise share; give larger"
                                     " cohorts or fewer dropouts.", "dropouts", self.dropouts, size=max(self.sizes),
                                     total=sum(self.cohort_dropouts)) from None
            raise

    @property
    def ring_bits(self) -> int:
        """The ring every cohort and the bridge sum in."""
        return self.round_plan.bits

    @cached_property
    def cohort_plans(self) -> list[SecureSumPlan]:
        """Each cohort's plan: its graph, threshold and dropout tolerance, and its committee with :attr:`committee`
        (its noise figures are not used: the contributors take the round's, :attr:`mu_shares`)."""
        plans = []
        for c, (s, f) in enumerate(zip(self.sizes, self.cohort_dropouts)):
            try:
                plans.append(SecureSumPlan(self.epsilon, self.delta, s, f, self.vocab_size, int(self.collusion),
                                              self.ring_bits, self.max_words, committee=self.committee or None))
            except DPTopicError as e:
                raise ParameterError("{cohort_size=}: cohort {c} of {s} cannot carry its dropout tolerance {f} with {t}"
                                     " colluders ({why}); give larger cohorts.", "cohort_size", self.cohort_size, c=c,
                                     s=s, f=f, t=self.collusion, why=" ".join(str(e).split()).rstrip(".")) from None
        return plans

    @cached_property
    def n_delegates(self) -> int:
        """Delegates per cohort: the fewest (at least ``t + 1``) that keep ``t + 1`` of them uploading with the
        planned dropout rate (module note; :func:`delegates_per_cohort`)."""
        return delegates_per_cohort(self.sizes, self.rate, int(self.collusion), self.cohort_size)

    @cached_property
    def bridge_plan(self) -> SecureSumPlan:
        """The bridge's plan: a round of the ``C k`` delegates (their pads; no noise is added there)."""
        nb = len(self.sizes) * self.n_delegates
        fb = min(cohort_dropouts(nb, self.rate, LIVENESS_TARGET / 4),
                 len(self.sizes) * (self.n_delegates - int(self.collusion) - 1))
        # a small bridge may not survive the margin its dropout rate asks for: the largest tolerance its graph
        # carries (a delegate's dropout then fails the round more often; each cohort's t + 1 are needed anyway)
        for f in range(fb, 0, -1):
            try:
                return SecureSumPlan(self.epsilon, self.delta, nb, f, self.vocab_size, int(self.collusion),
                                        self.ring_bits, self.max_words)
            except DPTopicError:
                continue
        try:
            return SecureSumPlan(self.epsilon, self.delta, nb, 0, self.vocab_size, int(self.collusion),
                                    self.ring_bits, self.max_words)
        except DPTopicError as e:
            raise ParameterError("{cohort_size=}: the bridge of {nb} delegates cannot carry {fb} dropouts with {t}"
                                 " colluders ({why}); give more cohorts or a lower dropout rate.", "cohort_size",
                                 self.cohort_size, nb=nb, fb=fb, t=self.collusion,
                                 why=" ".join(str(e).split()).rstrip(".")) from None

    def cohorts(self, ids, round_id: str) -> list[list[str]]:
        """The cohorts' members (:func:`assign`)."""
        if len(ids) != self.n:
            raise DPTopicError(f"{len(ids)} contributors for a plan of {self.n}.")
        return assign(ids, round_id, self.sizes)

    def delegates(self, members, round_id: str, cohort: int) -> list[str]:
        """Cohort ``cohort``'s delegates: the first :attr:`n_delegates` of its members in a hash order of the round."""
        return sorted(ring_order(members, f"{round_id}/delegates/{cohort}")[:self.n_delegates])

    @property
    def scale(self) -> float:
        """The quantization scale (the whole round's)."""
        return self.round_plan.scale

    @property
    def mu_shares(self) -> list[float]:
        """Each contributor's noise share per phase: the whole round's (:attr:`round_plan`)."""
        return self.round_plan.mu_shares

    @cached_property
    def noise_cost(self) -> float:
        """The per-entry noise over that of a single round of ``n`` with ``dropouts`` (the price of the cohorts'
        dropout margins: their tolerances sum above ``dropouts``)."""
        single = SecureSumPlan(self.epsilon, self.delta, int(self.n), int(self.dropouts), self.vocab_size,
                                  int(self.collusion), self.ring_bits, self.max_words)
        # the noise in a sum of m shares is m mu / honest: the same survivors, fewer honest shares planned for
        return math.sqrt(self.round_plan.mu_shares[1] / single.mu_shares[1]) * single.scale / self.scale

    def to_dict(self) -> dict:
        """The plan's settings as a cohort server's ``/v1/config`` states them (the ring as chosen), for
        :meth:`from_dict`: a contributor recomputes everything else (the cohorts, their plans, the delegates)."""
        return {"epsilon": float(self.epsilon), "delta": float(self.delta), "n": int(self.n),
                "dropouts": int(self.dropouts), "vocab_size": int(self.vocab_size),
                "cohort_size": int(self.cohort_size), "collusion": int(self.collusion), "bits": int(self.ring_bits),
                "max_words": int(self.round_plan.max_words),
                **({"committee": self.committee if self.committee == "auto" else int(self.committee)}
                   if self.committee else {})}

    @classmethod
    def from_dict(cls, d) -> "CohortPlan":
        """The plan :meth:`to_dict` states, recomputed here; refused in one line when malformed or not a plan."""
        keys = ("epsilon", "delta", "n", "dropouts", "vocab_size", "cohort_size", "collusion", "bits", "max_words")
        if not isinstance(d, dict) or set(d) - {"committee"} != set(keys) or not (
                d.get("committee", 0) == "auto" or (isinstance(d.get("committee", 0), int)
                                                    and not isinstance(d.get("committee", 0), bool))):
            raise DPTopicError("the server's cohort plan is malformed (its settings): is it a dptopic server of this"
                               " version?")
        ints = [d[k] for k in keys[2:]]
        if any(isinstance(v, bool) or not isinstance(v, int) for v in ints) or any(
                isinstance(d[k], bool) or not isinstance(d[k], (int, float)) for k in keys[:2]):
            raise DPTopicError("the server's cohort plan is malformed (its settings): is it a dptopic server of this"
                               " version?")
        try:
            return cls(float(d["epsilon"]), float(d["delta"]), *ints, committee=d.get("committee", 0))
        except DPTopicError as e:
            raise DPTopicError(f"the server's cohort plan is refused: {' '.join(str(e).split())}") from None

    def describe(self) -> dict:
        """What the card and the release state about the cohorts."""
        rp, bp = self.round_plan, self.bridge_plan
        return {"cohorts": len(self.sizes), "cohort_sizes": [min(self.sizes), max(self.sizes)],
                "cohort_dropouts": [min(self.cohort_dropouts), max(self.cohort_dropouts)],
                "dropouts_total": sum(self.cohort_dropouts), "expected_dropouts": int(self.dropouts),
                "collusion": int(self.collusion),
                "cohort_degree": [min(p.degree for p in self.cohort_plans), max(p.degree for p in self.cohort_plans)],
                "cohort_threshold": [min(p.threshold for p in self.cohort_plans),
                                     max(p.threshold for p in self.cohort_plans)],
                **({"cohort_committee": [min(p.committee for p in self.cohort_plans),
                                         max(p.committee for p in self.cohort_plans)],
                    "cohort_committee_threshold": [min(p.committee_threshold for p in self.cohort_plans),
                                                   max(p.committee_threshold for p in self.cohort_plans)]}
                   if self.committee else {}),
                "delegates_per_cohort": self.n_delegates, "bridge": {"n": bp.n, "dropouts": bp.dropouts,
                                                                     "degree": bp.degree, "threshold": bp.threshold},
                "modulus_bits": rp.bits, "scale": rp.scale, "honest_shares": rp.honest, "max_words": rp.max_words,
                "noise_cost": self.noise_cost,
                "cohort_server_learns": ("its cohort's total minus the pads of at least one honest delegate: uniform in"
                                         " the ring, nothing"),
                "operator_learns": ("the round's total of honest survivors (at least N - sum F_c shares), nothing"
                                    " smaller, as a single round's server")}

    def trust_model(self) -> str:
        """The release's trust model in a sentence (the card's)."""
        d = self.describe()
        return (f"secure aggregation in {d['cohorts']} cohorts of {d['cohort_sizes'][0]}-{d['cohort_sizes'][1]}"
                f" contributors and a second-level sum over {d['delegates_per_cohort']} delegates a cohort (module"
                " dptopic.protocol.secure_sum.cohorts): the operator runs every cohort's server and may lie and drop;"
                " at most"
                f" {d['collusion']} enrolled contributors in the whole round collude with it; each cohort tolerates"
                f" {d['cohort_dropouts'][0]}-{d['cohort_dropouts'][1]} dropouts (threshold"
                f" {d['cohort_threshold'][0]}-{d['cohort_threshold'][1]} of {d['cohort_degree'][0]}-"
                f"{d['cohort_degree'][1]} neighbours); "
                + (f"each cohort is a committee-mode round: a committee of {d['cohort_committee'][0]}-"
                   f"{d['cohort_committee'][1]} of its members, chosen by a public hash of its roster, holds the"
                   " shares of its masks and reveals them only after"
                   f" {d['cohort_committee_threshold'][0]}-{d['cohort_committee_threshold'][1]} committee signatures"
                   f" over one set of uploads holding at least {d['collusion'] + 1} of its delegates (the bridge of"
                   " delegates runs the default protocol); " if self.committee else "")
                + "a cohort's server sees its total masked by an honest delegate's"
                f" pad; the noise is paid once, calibrated for the {d['honest_shares']} honest shares of the whole"
                " round besides the protected person's own")


__all__ = ["CohortPlan", "assign", "cohort_sizes", "cohort_dropouts", "check_delegates", "check_bridge",
           "pad", "cohort_round_id", "bridge_round_id", "COHORT_PATH", "BRIDGE_PATH", "delegates_per_cohort",
           "LIVENESS_TARGET", "DEFAULT_COHORT_SIZE"]
