"""JSON text: plain numbers out (NumPy scalars, non-finite floats), depth-bounded parsing in, repeated keys
noted."""
from __future__ import annotations

import json

import numpy as np

from ..errors import DPTopicError


def plain_numbers(obj):
    """``obj`` with NumPy scalars and arrays turned into Python numbers and lists (dicts, lists and tuples walked),
    so that ``json.dumps`` takes a report built from parameters a user gave as ``np.float32`` or ``np.int64``."""
    if isinstance(obj, dict):
        return {k: plain_numbers(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(plain_numbers(v) for v in obj)
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return obj


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return str(obj)
    return obj


_NONFINITE = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def restore_nonfinite(obj):
    """The inverse of :func:`_jsonable` for the numbers JSON cannot hold: the strings ``"inf"``, ``"-inf"`` and
    ``"nan"`` it wrote for a float become that float again (a saved report's epsilon of a non-private run)."""
    if isinstance(obj, dict):
        return {k: restore_nonfinite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [restore_nonfinite(v) for v in obj]
    if isinstance(obj, str) and obj in _NONFINITE:
        return _NONFINITE[obj]
    return obj


MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays/objects any JSON input may have (ours never exceeds a handful of levels)."""


def json_depth_exceeds(text, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``text`` (str or bytes) nests arrays/objects deeper than ``limit``, found by one scan that skips
    strings; a text with fewer brackets than the limit needs no scan."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if text.count("[") + text.count("{") <= limit:
        return False
    depth, in_str, esc = 0, False, False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def pairs_noting_repeats(repeated: set):
    """A ``json.loads`` ``object_pairs_hook`` that builds the dict as usual (the last value of a key wins) and leaves
    in ``repeated`` the keys the outermost object (the record) holds twice; nested objects are not its fields."""
    def hook(pairs):
        # called for every object, innermost first: what is left after the last (outermost) call is its own
        repeated.clear()
        seen = set()
        for k, _ in pairs:
            if k in seen:
                repeated.add(k)
            seen.add(k)
        return dict(pairs)
    return hook


def load_json(text, what: str = "JSON input", object_pairs_hook=None):
    """``json.loads`` for input from outside: nesting bounded before parsing, so no input can exhaust the stack;
    a ``ValueError`` (:class:`DPTopicError`) for anything that is not valid JSON within the bound.
    ``object_pairs_hook`` as in ``json.loads``."""
    if json_depth_exceeds(text):
        raise DPTopicError(f"{what} nests arrays or objects deeper than {MAX_JSON_DEPTH} levels: not a dptopic"
                           " document; check the input.")
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise DPTopicError(f"{what} nests arrays or objects too deeply: not a dptopic document.") from None
    except json.JSONDecodeError:
        raise  # callers name the file and line
    except UnicodeDecodeError as e:  # bytes that are not UTF-8 (a UnicodeDecodeError is a ValueError too)
        raise DPTopicError(f"{what} is not UTF-8: byte 0x{e.object[e.start]:02x} at offset {e.start} cannot be read;"
                           " send UTF-8 JSON.") from None
    except ValueError:  # an integer of more than 4,300 digits (Python's guard against quadratic parsing)
        raise DPTopicError(f"{what} holds a number too long to read: not a dptopic document; check the input.") from None
