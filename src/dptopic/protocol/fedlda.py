"""FedLDA's public protocol settings, checked the same way by a participant and by the server (Wang, Tong & Shi 2020).

:class:`RRPConfig` is what every client of one federation shares; a participant builds it from the ``/v1/config`` of
a server it does not trust, so every field is checked against the range ``FedLDA`` takes (:data:`PROTOCOL_RULES`,
the one place those ranges are written: ``FedLDA``'s parameter constraints read them) before anything is drawn.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import Int, Options, Real, validate_value
from ..accounting import eta as _eta
from ..accounting.events import EPSILON_MAX
from ..accounting.fedlda import subset_inclusion, subset_size, too_small_for_vocabulary
from ..accounting.fedlda import subset_size as _subset_size
from ..errors import DPTopicError, ParameterError
from ..mechanisms.rrp import cap_report


@dataclass(frozen=True)
class RRPConfig:
    """What every client of one federation shares (public protocol parameters). ``epsilon_per_entry`` is the
    epsilon of each randomized entry (``FedLDA(epsilon_per_entry=)``; a user's total is ``FedLDA``'s ``epsilon``);
    ``failure_rate`` the randomizer's failure rate (``FedLDA(failure_rate=)``), not the delta of a guarantee."""

    n_topics: int
    epsilon_per_entry: float
    failure_rate: float = 0.1
    gamma: float = 1.0
    pad_length: int = 512
    sample_ratio: float = 1.0
    alpha: float = 0.1
    local_iter: int = 1
    variant: str = "another"
    exclusion: str = "none"
    replacement: str = "mixture"
    subset_size: int = 0
    local_inference: str = "em"

    def __post_init__(self):
        # every setting in the range FedLDA takes, at construction: a participant builds this from the /v1/config of
        # a server it does not trust, and sizes memory, entries and its epsilon from it before any FedClient exists
        check_protocol(self)

    @property
    def words_per_report(self) -> int:
        """``"none"`` rule: words per randomized entry (``subset_size``, or 0 for the error-optimal size)."""
        return int(self.subset_size)

    def report_size(self, vocab_size: int) -> int:
        """``"none"`` rule: the words per report on a vocabulary of ``vocab_size`` words (resolved)."""
        return int(self.subset_size) or _subset_size(self.epsilon_per_entry, vocab_size)

    @property
    def n_entries(self) -> int:
        """Entries per update: ``max(1, round(sample_ratio * pad_length))`` (data-independent)."""
        return max(1, int(round(self.sample_ratio * self.pad_length)))


_dataclass_init = RRPConfig.__init__


@functools.wraps(_dataclass_init)
def _init_refusing_old_names(self, *args, **kwargs):
    # renamed because "epsilon" and "delta" read as the guarantee, which they are not: refused, never read silently
    for old, new, what in (("epsilon", "epsilon_per_entry", "the epsilon of each reported entry, not a total"),
                           ("delta", "failure_rate", "the randomizer's failure rate, not the delta of a guarantee")):
        if old in kwargs:
            raise DPTopicError(f"RRPConfig({old}=) is now {new}=: {what}.")
    _dataclass_init(self, *args, **kwargs)


RRPConfig.__init__ = _init_refusing_old_names


def rounds_to_no_entry(pad_length: int, sample_ratio: float) -> bool:
    """Whether ``sample_ratio * pad_length`` is too small to give an update one entry (``FedLDA`` and the service's
    federated rounds refuse such parameters, each naming its own flags)."""
    return sample_ratio * pad_length < 0.5


LOCAL_INFERENCE = ("em", "gibbs")


def entries_per_update(pad_length: int, sample_ratio: float) -> int:
    return RRPConfig(1, 1.0, pad_length=pad_length, sample_ratio=sample_ratio).n_entries


PROTOCOL_RULES = {
    "n_topics": [Int(1, 100_000)], "epsilon_per_entry": [Real(0, EPSILON_MAX, "right")],
    "failure_rate": [Real(0, 1, "neither")],
    "gamma": [Real(1, 1e6)], "pad_length": [Int(1, 10_000_000)], "sample_ratio": [Real(0, 1, "right")],
    "alpha": [Real(1e-8, 1e6, "both")], "local_iter": [Int(1, 100_000)],
    "variant": [Options(("another", "coincide"))], "exclusion": [Options(("none", "floor", "tail"))],
    "replacement": [Options(("mixture", "topic"))], "subset_size": [Int(0, 1_000_000_000)],
    "local_inference": [Options(LOCAL_INFERENCE)]}
"""The range of each :class:`RRPConfig` field, written once: a participant checks a server's settings against them,
and ``FedLDA``'s parameter constraints are built from them."""



def protocol_value_rule(name: str, value) -> str | None:
    """What the :class:`RRPConfig` setting ``name`` must be ("an integer in [1, 100000]"), when ``value`` is not
    that; None when it is. For a reader of settings from outside (a server's ``/v1/config``) that names the field
    itself."""
    rules = PROTOCOL_RULES[name]
    return None if any(c.accepts(value) for c in rules) else " or ".join(c.describe() for c in rules)


def check_protocol(config: RRPConfig) -> None:
    """Refuse (one line) a setting outside the range ``FedLDA`` takes for it (an integer ``pad_length`` in [1, 10^7],
    a ``sample_ratio`` in (0, 1], a known ``exclusion``, ...), before anything is drawn. A participant's settings come
    from a server it does not trust (``/v1/config``): without this, a malformed one failed deep inside NumPy with a
    traceback (``sample_ratio`` 2, ``pad_length`` 0, ``n_topics`` 0) or exhausted the device's memory
    (``pad_length`` 10^9); a fractional ``subset_size`` was truncated, a negative ``alpha`` taken."""
    for name, rules in PROTOCOL_RULES.items():
        validate_value(name, getattr(config, name), rules)
    if rounds_to_no_entry(config.pad_length, config.sample_ratio):
        raise ParameterError("{pad_length=} is too small for {sample_ratio=:g}: an update would round to no entry;"
                             " raise {pad_length} or {sample_ratio}.", "pad_length", config.pad_length,
                             values={"sample_ratio": config.sample_ratio})


def check_config(config: RRPConfig, vocab_size: int) -> None:
    """Refuse (one line) a configuration the protocol cannot run on a vocabulary of ``vocab_size`` words:
    a setting out of its range (:func:`check_protocol`), more topics than words, or an ``epsilon`` so small that no
    replacement distribution keeps every likelihood ratio within ``e^epsilon`` (``variant="another"``,
    ``exclusion="floor"``)."""
    check_protocol(config)
    K, V = int(config.n_topics), int(vocab_size)
    if config.local_inference not in LOCAL_INFERENCE:
        raise ParameterError("invalid {local_inference=}: must be one of {choices}.", "local_inference",
                             config.local_inference, choices=", ".join(LOCAL_INFERENCE))
    if config.exclusion == "none" and V < 2:
        raise DPTopicError(f"a vocabulary of {V} word(s) cannot be randomized: give a corpus with at least two words.")
    if config.exclusion == "none" and not 0 <= int(config.subset_size) <= V - 1:
        raise ParameterError("{subset_size=} must be between 1 and V - 1 = {most} words (0 picks the size from"
                             " epsilon).", "subset_size", config.subset_size, most=V - 1)
    if K > V:
        raise ParameterError("{n_topics=} exceeds the vocabulary size {V}: give at most {V} topics or a corpus with"
                             " more distinct words.", "n_topics", K, V=V)
    if config.exclusion == "none":
        s = int(config.subset_size) or subset_size(config.epsilon_per_entry, V)
        a, b = subset_inclusion(config.epsilon_per_entry, V, s)
        if a - b < 1e-6:  # the true word is hardly likelier than any other: the reports would carry nothing
            raise too_small_for_vocabulary(config.epsilon_per_entry, V, "a report would say almost nothing about its"
                                           " word (the true word is at most 1e-6 likelier to be in it than any"
                                           " other)")
    if config.variant == "another" and config.exclusion == "floor" and not cap_fits(config.epsilon_per_entry, config, V):
        lo, hi = config.epsilon_per_entry, max(2.0 * config.epsilon_per_entry, 1.0)
        while not cap_fits(hi, config, V):
            lo, hi = hi, 2.0 * hi
        for _ in range(40):  # the cap grows with epsilon: bisect for the smallest epsilon that fits
            lo, hi = (lo, (lo + hi) / 2) if cap_fits((lo + hi) / 2, config, V) else ((lo + hi) / 2, hi)
        raise ParameterError("{epsilon=:g} is too small for a vocabulary of {V} words: a replacement would need more"
                             " words than there are; use {epsilon} >= {least:.4g} or {variant=coincide}.", "epsilon",
                             config.epsilon_per_entry, V=V, least=hi * 1.001, coincide="coincide")


def cap_fits(epsilon: float, config: RRPConfig, V: int) -> bool:
    """Whether the 'another word' replacement can keep its largest probability under the cap with ``V`` words."""
    cap = cap_report(epsilon, _eta(epsilon, config.failure_rate, config.gamma, config.variant))
    return cap > 0 and int(math.floor(1.0 / cap)) + 1 <= V

def check_broadcast_phi(phi: np.ndarray, shape: tuple, who: str = "the client") -> None:
    """Refuse a broadcast Φ unless it is ``shape``, finite, positive, rows summing to 1 (before any state change)."""
    if phi.shape != shape:
        raise DPTopicError(f"{who}: the broadcast phi has shape {phi.shape}, expected {shape}.")
    if not (np.all(np.isfinite(phi)) and np.all(phi > 0) and np.allclose(phi.sum(axis=1), 1.0, atol=1e-6)):
        raise DPTopicError(f"{who}: the broadcast phi must hold finite, positive probabilities with rows summing"
                           " to 1; refused, local state unchanged.")
