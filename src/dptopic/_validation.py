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

from .errors import ParameterError


@dataclass(frozen=True)
class Interval:
    kind: type  # numbers.Integral or numbers.Real
    left: float | None
    right: float | None
    closed: str = "both"  # "left", "right", "both", "neither"
    flags: bool = True  # offered to a caller who sets the parameter by a flag (the command line); see validate_value

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
    flags = False   # a flag given on the command line is never None: "None or" is for a Python caller

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
# scikit-learn's convention: None is 1, -1 every core, -2 all but one; a command line's job count is a count of threads
N_JOBS = [IsNone(), Interval(numbers.Integral, -256, -1, flags=False), Int(1, 256)]


def resolve_n_jobs(n_jobs) -> int:
    """Threads for ``n_jobs`` under scikit-learn's convention: ``None`` is 1, ``-1`` every core, ``-2`` all but one."""
    if n_jobs is None:
        return 1
    n = int(n_jobs)
    return max(1, (os.cpu_count() or 1) + 1 + n) if n < 0 else n


def plain_number(value: Any) -> Any:
    """``value`` as Python's number where it is NumPy's (``np.float32(2.0)`` -> ``2.0``, ``np.int64(3)`` -> ``3``,
    ``np.True_`` -> ``True``); anything else as it is. A front door that takes a number takes NumPy's too, and passes
    Python's on (a float32 widened exactly), so that no rule further in refuses it as "not a number"."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def validate_value(name: str, value: Any, constraints: Iterable) -> Any:
    """Raise a one-line :class:`~dptopic.errors.ParameterError` unless some constraint accepts ``value``; return it.

    The line lists every accepted form; written for a caller who sets ``name`` by a flag (``e.message(names)``) it
    lists only those a flag can give (``flags`` true: not ``None``, not ``n_jobs``'s negative counts)."""
    constraints = list(constraints)
    if any(c.accepts(value) for c in constraints):
        return value
    allowed = " or ".join(c.describe() for c in constraints)
    for_flags = [c for c in constraints if getattr(c, "flags", True)] or constraints
    flag_allowed = " or ".join(c.describe() for c in for_flags)
    raise ParameterError("invalid {parameter=}: must be {allowed}.", name, value, allowed=allowed,
                         key=None if flag_allowed == allowed else "_validation.validate_value",
                         flag_allowed=flag_allowed)


def validate_params(params: dict, constraints: dict) -> None:
    for name, cons in constraints.items():
        if name in params:
            validate_value(name, params[name], cons)
