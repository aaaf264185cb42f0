"""The accountants' bounds on one event, which the events and the ledger enforce (:mod:`.events`, :mod:`.ledger`): a
module of constants, which imports nothing, so that the command line's parsers state them without loading numpy."""
from __future__ import annotations

EPSILON_MAX = 500.0
"""Largest per-event epsilon the events accept: beyond it ``exp(eps)`` overflows in the PLD/RDP
computations, and a step that loose protects nothing anyway."""
MAX_COUNT = 10**7
"""Most repetitions of one event the accountants compose (the estimators' largest n_iter)."""
