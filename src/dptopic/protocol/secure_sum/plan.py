"""A secure-sum round's public plan: its settings, the neighbour graph and thresholds they need, the ring and
quantization scale it sums in, and the Skellam noise each contributor adds (what ``/v1/config`` states and a
contributor recomputes, :meth:`SecureSumPlan.from_dict`)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...accounting.events import EPSILON_MAX
from ...accounting.skellam import SkellamRelease, calibrate_skellam, rounded_norms, skellam_epsilon, wrap_probability
from ...errors import DPTopicError, ParameterError
from .graph import (
    LIVENESS_TARGET,
    committee_fails,
    committee_size,
    committee_threshold,
    default_collusion,
    plan_degree,
    threshold_of,
)
from .messages import PROTOCOL
from .ring import MODULUS_BITS, RING_BITS, ring_dtype, triangle_size

RANKING_RATIO = 3.0     # the ranking release's noise over the co-occurrence release's, as the user unit's default
MAX_WORDS = 2000        # the co-occurrence release's words at most (n_words="auto"'s bound)
DEFAULT_MAX_WORDS = 256
"""The words a plan's second phase sums at most by default (:attr:`SecureSumPlan.max_words`): the triangle over 256
words is 32,896 entries (128 KiB an upload modulo 2^32, 257 KiB modulo 2^64, and as much PRG output per
neighbour's mask), whatever the round's size. The noisy ranking keeps more words as the round grows (200 at 10,000
people, 239 at 20,000, every one of V = 1,000 at 100,000: ``docs/research/secure_sum_cohorts.md``), and with them
each contributor's upload and mask expansion: the cap keeps both bounded at about what 20,000 people cost."""
WRAP_SHARE = 1e-3       # at most this share of delta may go to a modular wrap-around
MAX_INFLATION = 1.01
"""The ring and scale a plan chooses keep the quantization's inflation of the noise at most this (1%)."""
MAX_SCALE_LOG2 = 16     # the quantization scale is at most 2^16
IDEAL_SCALE = 2.0 ** 40
"""A scale at which rounding costs nothing measurable: the reference of :attr:`SecureSumPlan.noise_inflation`."""


def ring_scale(bits: int, n: int) -> float:
    """The quantization scale of a round of ``n`` summed modulo ``2^bits``: the largest power of two up to 2^16 (at
    least 2^4) that keeps ``n`` persons' bounded entries 8 times inside half the modulus (2^(bits-4) / n)."""
    return float(2 ** max(4, min(MAX_SCALE_LOG2, int(math.floor(math.log2(2.0 ** (int(bits) - 4) / int(n)))))))


@dataclass(frozen=True)
class SecureSumPlan:
    """The public settings of a round, the graph they need and the noise they imply.

    ``n``: contributors in the round (the roster closes at ``n``, the invitations' count); ``dropouts``: how many
    may drop out, at any step, with the sum still released; ``vocab_size``: V; ``collusion``: ``t``, how many enrolled
    contributors may collude with the server (default :func:`default_collusion`). The degree is the smallest that
    survives ``dropouts`` random dropouts (:data:`LIVENESS_TARGET`), the threshold ``degree // 2 + t + 1`` (module
    note). The noise is calibrated for the ``n - dropouts - t - 1`` honest shares besides the protected person's own:
    with every share that survives the dropout tolerance, any ``t`` of them known, and the person's own share left out
    (it leaves with the person under add/remove), the release still has ``epsilon`` per person.

    ``bits``: the ring, modulo 2^32 or 2^64. By default (None) the plan chooses it: 32 bits (half the bytes) when
    the scale they allow (:func:`ring_scale`) inflates the noise by at most :data:`MAX_INFLATION` and keeps the
    wrap-around probability within its share of delta, else 64 bits (where the scale is 2^16 up to 2^44
    contributors); a plan that neither ring can carry is refused. Given, the plan uses that ring (a stated plan's
    ring is checked for its wrap-around, not its inflation: the noise is accounted at whatever scale it gives).

    ``max_words``: the most words the second phase sums (2 to :data:`MAX_WORDS`; None:
    :data:`DEFAULT_MAX_WORDS`). The server keeps the words of highest noisy count in the first sum, at most this many
    (post-processing of a released sum: it spends nothing); the noise is calibrated for the triangle over
    ``min(vocab_size, max_words)`` words, so a cap also lowers it a little. It bounds what a contributor uploads and
    expands into masks in the second phase, whatever the round's size.

    ``committee``: the committee mode (:mod:`dptopic.protocol.secure_sum.committee`): None or 0 (default) for none,
    "auto" for the smallest committee whose threshold ``T_c`` survives ``dropouts`` random dropouts with probability
    ``1 -`` :data:`LIVENESS_TARGET` (:func:`committee_size`), or a size, checked the same way; stored as the size."""

    epsilon: float
    delta: float
    n: int
    dropouts: int
    vocab_size: int
    collusion: int | None = None
    bits: int | None = None
    max_words: int | None = None
    committee: int | str | None = None

    def __post_init__(self):
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) \
                or not 0 < self.epsilon <= EPSILON_MAX:
            raise ParameterError("invalid {epsilon=}: a number in (0, {most:g}] per person.", "epsilon", self.epsilon,
                                 most=EPSILON_MAX)
        if isinstance(self.delta, bool) or not isinstance(self.delta, (int, float)) or not 0 < self.delta < 1:
            raise ParameterError("invalid {delta=}: a number in (0, 1).", "delta", self.delta)
        for name in ("n", "dropouts", "vocab_size") + (("bits",) if self.bits is not None else ()):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ParameterError("invalid {" + name + "=}: an integer.", name, v)
        if self.collusion is None:
            object.__setattr__(self, "collusion", default_collusion(int(self.n)))
        if isinstance(self.collusion, bool) or not isinstance(self.collusion, (int, np.integer)) or self.collusion < 0:
            raise ParameterError("invalid {collusion=}: an integer >= 0.", "collusion", self.collusion)
        if self.max_words is None:
            object.__setattr__(self, "max_words", DEFAULT_MAX_WORDS)
        if isinstance(self.max_words, bool) or not isinstance(self.max_words, (int, np.integer)) \
                or not 2 <= self.max_words <= MAX_WORDS:
            raise ParameterError("invalid {max_words=}: the words the second sum may hold, an integer in [2, {most}].",
                                 "max_words", self.max_words, most=MAX_WORDS)
        object.__setattr__(self, "max_words", int(self.max_words))
        if self.n < 3:
            raise ParameterError("{n=}: a secure sum needs at least 3 contributors.", "n", self.n)
        if not 0 <= self.dropouts < self.n:
            raise ParameterError("{dropouts=} must lie in [0, {n}).", "dropouts", self.dropouts, n=self.n)
        if self.vocab_size < 2:
            raise ParameterError("{vocab_size=}: the vocabulary needs at least 2 words.", "vocab_size",
                                 self.vocab_size)
        if self.bits is not None and self.bits not in RING_BITS:
            raise ParameterError("{bits=}: the secure sum sums modulo 2^32 or 2^64 (bits 32 or 64, or None to let"
                                 " the plan choose).", "bits", self.bits)
        if self.honest < 1:
            raise ParameterError("{dropouts=} and {collusion=} with {n} contributors leave no honest noise share"
                                 " besides the protected person's own: lower them (their sum at most {most}).",
                                 "dropouts", self.dropouts, values={"collusion": self.collusion}, n=self.n,
                                 most=self.n - 2)
        self.degree     # noqa: B018 (refuses a plan whose graph cannot survive its dropouts)
        object.__setattr__(self, "committee", self._choose_committee())
        if self.bits is None:
            object.__setattr__(self, "bits", self._choose_bits())
        else:
            object.__setattr__(self, "bits", int(self.bits))

    def _choose_committee(self) -> int:
        """The committee's size (:mod:`dptopic.protocol.secure_sum.committee`): 0 (off) for None or 0; for "auto" the
        smallest that survives the plan's dropouts (:func:`committee_size`); a size given is checked the same way."""
        c = self.committee
        if c is None or (isinstance(c, (int, np.integer)) and not isinstance(c, bool) and c == 0):
            return 0
        n, F, t = int(self.n), int(self.dropouts), int(self.collusion)
        if c == "auto":
            return committee_size(n, F, t)
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not t + 2 <= c <= n:
            raise ParameterError("invalid {committee=}: 'auto', 0 (no committee) or an integer in [collusion + 2,"
                                 " {n}].", "committee", c, n=n)
        if committee_fails(n, F, int(c), committee_threshold(int(c), t)) > LIVENESS_TARGET:
            raise ParameterError("{committee=} with {dropouts=} among {n} contributors: its threshold {need} would"
                                 " fail with probability above {target:g}: a larger committee, or 'auto'.",
                                 "committee", c, values={"dropouts": F}, n=n,
                                 need=committee_threshold(int(c), t), target=LIVENESS_TARGET)
        return int(c)

    @property
    def committee_threshold(self) -> int:
        """``T_c``: the committee's signatures and shares a step needs (0 without a committee)."""
        return committee_threshold(int(self.committee), int(self.collusion)) if self.committee else 0

    def _ring_noise(self, bits: int) -> tuple[list[float], float, float]:
        """``(mu per phase, wrap-around probability, noise inflation)`` in the ring modulo ``2^bits``, memoised."""
        key = ("ring", self.epsilon, self.delta, self.n, self.dropouts, self.vocab_size, self.collusion, int(bits),
               self.max_words)
        if key not in _PLAN_MEMO:
            scale, dims = ring_scale(bits, self.n), list(self.dims)
            budget = self.delta * (1 - WRAP_SHARE)
            mus = calibrate_skellam(self.epsilon, budget, [scale] * 2, dims, [RANKING_RATIO, 1.0])
            # the sum of every contributor's share (no dropout) is the noisiest a wrap-around can meet
            wrap = sum(wrap_probability(mu / self.honest * self.n, self.n * rounded_norms(scale, d)[0], d, bits)
                       for mu, d in zip(mus, dims))
            ideal = calibrate_skellam(self.epsilon, budget, [IDEAL_SCALE] * 2, dims, [RANKING_RATIO, 1.0])
            inflation = math.sqrt(mus[1] / ideal[1]) * IDEAL_SCALE / scale
            _PLAN_MEMO[key] = (mus, wrap, inflation)
        return _PLAN_MEMO[key]

    def _choose_bits(self) -> int:
        """The ring (:class:`SecureSumPlan`): 32 bits when they cost no accuracy, else 64."""
        for bits in RING_BITS:
            _, wrap, inflation = self._ring_noise(bits)
            if wrap <= self.delta * WRAP_SHARE and inflation <= MAX_INFLATION:
                return bits
        _, wrap, inflation = self._ring_noise(RING_BITS[-1])
        raise DPTopicError(f"{self.n} contributors at epsilon {self.epsilon:g} fit no ring: modulo 2^64 the rounding"
                           f" inflates the noise {inflation:.3f} times and the wrap-around probability is {wrap:.2g}:"
                           " fewer contributors per round, or a larger epsilon.")

    @property
    def degree(self) -> int:
        """Neighbours per contributor (:func:`plan_degree` of ``n``, ``dropouts`` and ``collusion``)."""
        return plan_degree(int(self.n), int(self.dropouts), int(self.collusion))

    @property
    def threshold(self) -> int:
        """Shares to reconstruct a seed, consistency signatures a survivor needs, neighbours a set must hold."""
        return threshold_of(self.degree, int(self.collusion))

    @property
    def honest(self) -> int:
        """Honest noise shares the guarantee rests on, besides the protected person's own."""
        return int(self.n) - int(self.dropouts) - int(self.collusion) - 1

    @property
    def scale(self) -> float:
        """Quantization scale of the plan's ring (:func:`ring_scale`)."""
        return ring_scale(self.bits, self.n)

    @property
    def dtype(self) -> np.dtype:
        """The ring's element type: little-endian uint32 or uint64 (an upload's entries)."""
        return ring_dtype(self.bits)

    def upload_bytes(self, dim: int) -> int:
        """Bytes of a masked upload of ``dim`` entries."""
        return self.dtype.itemsize * int(dim)

    @property
    def noise_inflation(self) -> float:
        """The per-entry noise of the plan's releases (in units of the statistic) over the noise the same epsilon
        needs when rounding costs nothing (the scale 2^40): the quantization's price, at most :data:`MAX_INFLATION`
        for a ring the plan chose."""
        return self._ring_noise(self.bits)[2]

    @property
    def dims(self) -> tuple[int, int]:
        """The largest vector of each phase: the ranking release (V + 1) and the co-occurrence release's triangle over
        at most :attr:`max_kept_words` words."""
        return self.vocab_size + 1, triangle_size(self.max_kept_words)

    @property
    def max_kept_words(self) -> int:
        """The most words the second phase may sum: ``min(vocab_size, max_words)``."""
        return min(int(self.vocab_size), int(self.max_words))

    def calibrated(self) -> tuple[list[float], float]:
        """``(mu per phase for the honest shares' sum, wrap-around probability)``, memoised; refused (one line) when
        the wrap-around would take more than its share of delta."""
        mus, wrap, _ = self._ring_noise(self.bits)
        if wrap > self.delta * WRAP_SHARE:
            raise DPTopicError(f"{self.n} contributors at epsilon {self.epsilon:g} would risk a modular wrap-around"
                               f" modulo 2^{self.bits} (probability {wrap:.2g}): fewer contributors per round, a"
                               " larger epsilon, or the ring the plan chooses (bits=None).")
        return mus, wrap

    @property
    def mu_shares(self) -> list[float]:
        """Each contributor's share of the noise, per phase."""
        return [mu / self.honest for mu in self.calibrated()[0]]

    def releases(self, dims=None, shares=None):
        """The Skellam events of the two releases with ``shares`` noise shares summed (default: the honest shares the
        guarantee rests on) and vectors of ``dims`` entries (default: the largest)."""
        shares = self.honest if shares is None else shares
        dims = self.dims if dims is None else dims
        labels = ("secure sum of per-person L2-normalised word-presence vectors (with a document entry)",
                  "secure sum of per-person Frobenius-normalised word co-occurrence matrices")
        return [SkellamRelease(m * shares, self.scale, int(d), label)
                for m, d, label in zip(self.mu_shares, dims, labels)]

    def epsilon_with_colluders(self, colluders: int, dims=None) -> float:
        """epsilon per person (at the plan's delta for the noise) when ``colluders`` enrolled contributors collude with
        the server (up to ``n - dropouts - 2``; beyond ``collusion`` the masks' secrecy is not covered either)."""
        shares = int(self.n) - int(self.dropouts) - int(colluders) - 1
        if shares < 1:
            return math.inf
        return skellam_epsilon(self.releases(dims=dims, shares=shares), self.delta * (1 - WRAP_SHARE))

    def epsilon_by_colluders(self, dims=None) -> list[list]:
        """``[[colluders, epsilon], ...]`` for 0 to ``collusion`` colluders (the card's table)."""
        return [[c, self.epsilon_with_colluders(c, dims)] for c in range(int(self.collusion) + 1)]

    def to_dict(self) -> dict:
        """The plan as ``/v1/config`` states it (its settings, and what follows from them, for a contributor to check)."""
        mus, wrap = self.calibrated()
        return {"epsilon": self.epsilon, "delta": self.delta, "min_contributors": self.n,
                "dropout_tolerance": self.dropouts, "vocab_size": self.vocab_size, "modulus_bits": self.bits,
                "collusion": self.collusion, "degree": self.degree, "threshold": self.threshold,
                "honest_shares": self.honest, "scale": self.scale, "mu_shares": self.mu_shares,
                "noise_inflation": self.noise_inflation, "ranking_ratio": RANKING_RATIO, "max_words": self.max_words,
                "wrap_probability": wrap, "protocol": PROTOCOL,
                **({"committee": self.committee, "committee_threshold": self.committee_threshold}
                   if self.committee else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "SecureSumPlan":
        """The plan a server's ``/v1/config`` names, recomputed here; refused (one line) when anything it states
        (degree, threshold, noise shares, protocol) is not what its settings give: a contributor computes the graph,
        the threshold and its noise share itself."""
        if not isinstance(d, dict):
            raise DPTopicError("the server's secure-sum settings are not an object: is it a dptopic server?")
        try:
            plan = cls(_number(d["epsilon"]), _number(d["delta"]), _integer(d["min_contributors"]),
                       _integer(d["dropout_tolerance"]), _integer(d["vocab_size"]), _integer(d["collusion"]),
                       _integer(d.get("modulus_bits", MODULUS_BITS)), _integer(d.get("max_words", MAX_WORDS)),
                       _integer(d.get("committee", 0)))
        except (KeyError, TypeError, ValueError):
            raise DPTopicError("the server's secure-sum settings are incomplete or malformed: is it a dptopic server"
                               " of this version?") from None
        except DPTopicError as e:
            raise DPTopicError(f"the server's secure-sum settings are refused ({' '.join(str(e).split()).rstrip('.')})"
                               ": refusing to take part.") from None
        if d.get("protocol") != PROTOCOL:
            raise DPTopicError(f"the server speaks secure-sum protocol {str(d.get('protocol'))[:40]!r}, not {PROTOCOL!r}:"
                               " update dptopic on one side.")
        for name, mine in (("degree", plan.degree), ("threshold", plan.threshold), ("honest_shares", plan.honest),
                           ("scale", plan.scale)) + ((("committee_threshold", plan.committee_threshold),)
                                                     if plan.committee else ()):
            if d.get(name) != mine:
                raise DPTopicError(f"the server states {name} {str(d.get(name))[:20]} but its settings give {mine}:"
                                   " refusing to take part.")
        stated = d.get("mu_shares")
        if not isinstance(stated, list) or len(stated) != 2 or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isclose(x, y, rel_tol=1e-6)
                for x, y in zip(stated, plan.mu_shares)):
            raise DPTopicError("the server's secure-sum noise shares differ from what its epsilon, delta and round"
                               " size give: refusing to take part.")
        return plan


def _number(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        raise ValueError(v)
    return float(v)


def _integer(v) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(v)
    return int(v)


_PLAN_MEMO: dict = {}
