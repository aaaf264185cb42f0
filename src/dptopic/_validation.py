"""Declarative parameter validation, in one place.

Each estimator declares ``_parameter_constraints``: a mapping from parameter name
to a list of constraints; a value is valid when any constraint accepts it. This is
the scikit-learn pattern, kept small. Errors name the parameter, the valid range
and the value given.
"""
from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .errors import DPTopicError


@dataclass(frozen=True)
class Interval:
    kind: type  # numbers.Integral or numbers.Real
    left: float | None
    right: float | None
    closed: str = "both"  # "left", "right", "both", "neither"

    def accepts(self, v: Any) -> bool:
        # NumPy scalars (np.float32, np.int64, ...) are numbers.Real/Integral too and get the same
        # checks as Python's; NaN and +-inf are never accepted; booleans are not numbers here.
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, self.kind):
            return False
        if not isinstance(v, (int, float, np.integer, np.floating)):  # Fraction, Decimal-likes: the kernels take floats
            return False
        try:
            if not math.isfinite(float(v)):
                return False
        except (OverflowError, TypeError, ValueError):  # e.g. an int beyond the float range
            if self.right is not None or self.kind is not numbers.Integral:
                return False
        if self.left is not None:
            if v < self.left or (v == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if v > self.right or (v == self.right and self.closed in ("left", "neither")):
                return False
        return True

    def describe(self) -> str:
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        lo = "-inf" if self.left is None else f"{self.left:g}"
        hi = "inf" if self.right is None else f"{self.right:g}"
        what = "an integer" if self.kind is numbers.Integral else "a finite number"
        return f"{what} in {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Options:
    values: tuple

    def accepts(self, v: Any) -> bool:
        return isinstance(v, (str, bool, type(None), numbers.Number)) and v in self.values

    def describe(self) -> str:
        return "one of " + ", ".join(repr(x) for x in self.values)


@dataclass(frozen=True)
class IsNone:
    def accepts(self, v: Any) -> bool:
        return v is None

    def describe(self) -> str:
        return "None"


@dataclass(frozen=True)
class IsType:
    types: tuple
    label: str

    def accepts(self, v: Any) -> bool:
        return isinstance(v, self.types) and not isinstance(v, bool)

    def describe(self) -> str:
        return self.label


@dataclass(frozen=True)
class IsBool:
    """Python's True or False only (not 1, 1.0 or 1+0j, which equal True)."""

    def accepts(self, v: Any) -> bool:
        return isinstance(v, bool)

    def describe(self) -> str:
        return "a bool"


def Int(lo=None, hi=None, closed="both") -> Interval:
    return Interval(numbers.Integral, lo, hi, closed)


def Real(lo=None, hi=None, closed="both") -> Interval:
    return Interval(numbers.Real, lo, hi, closed)


SEED = [IsNone(), Int(0, None), IsType((np.random.Generator,), "a numpy Generator")]
VERBOSE = [Int(0, 2), IsBool()]  # scikit-learn's estimators take a bool as well
N_JOBS = [IsNone(), Int(-256, -1), Int(1, 256)]  # scikit-learn's convention: None is 1, -1 every core, -2 all but one


def resolve_n_jobs(n_jobs) -> int:
    """Threads for ``n_jobs`` under scikit-learn's convention: ``None`` is 1, ``-1`` every core, ``-2`` all but one."""
    if n_jobs is None:
        return 1
    n = int(n_jobs)
    return max(1, (os.cpu_count() or 1) + 1 + n) if n < 0 else n


def _show(value: Any) -> str:
    """``repr`` of a user value for an error line: one line, at most 60 characters."""
    r = " ".join(repr(value).split())
    return r if len(r) <= 60 else r[:57] + "..."


def validate_value(name: str, value: Any, constraints: Iterable) -> Any:
    """Raise a one-line :class:`DPTopicError` unless some constraint accepts ``value``; return it."""
    constraints = list(constraints)
    if any(c.accepts(value) for c in constraints):
        return value
    allowed = " or ".join(c.describe() for c in constraints)
    raise DPTopicError(f"invalid {name}={_show(value)}: must be {allowed}.")


def validate_params(params: dict, constraints: dict) -> None:
    for name, cons in constraints.items():
        if name in params:
            validate_value(name, params[name], cons)
