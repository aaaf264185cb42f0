"""Process-wide warning filters held by many threads at once.

``warnings.catch_warnings`` is not thread-safe: fits run in parallel threads would restore one another's filter lists
and let the warnings through. :class:`SharedFilters` adds its filters once, under a lock, when the first holder
enters, and removes exactly those (and only those it added) when the last one leaves.
"""
from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager


def same_filter(a, b) -> bool:
    """Whether two entries of ``warnings.filters`` are the same rule (compiled patterns compared by their text)."""
    pat = lambda m: getattr(m, "pattern", m)  # noqa: E731
    return a[0] == b[0] and pat(a[1]) == pat(b[1]) and a[2] is b[2] and pat(a[3]) == pat(b[3]) and a[4] == b[4]


def filters_changed() -> None:
    """Tell the warnings machinery its filters changed (as ``warnings.filterwarnings`` does), so that a warning it
    already showed once is judged by the new filters."""
    changed = getattr(warnings, "_filters_mutated", None)
    if changed is not None:
        changed()


class SharedFilters:
    """A reference-counted set of filters: ``with shared(): ...`` from any number of threads. ``make()`` builds the
    filter entries (``(action, message regex, category, module regex, lineno)``) when the first holder enters; one
    already in ``warnings.filters`` is not added twice. ``depth`` and ``added`` show the current state."""

    def __init__(self, make):
        self._make = make
        self._lock = threading.Lock()
        self.depth = 0
        self.added: list = []

    @contextmanager
    def __call__(self):
        with self._lock:
            if self.depth == 0:
                present = list(warnings.filters)
                self.added = [f for f in self._make() if not any(same_filter(f, g) for g in present)]
                warnings.filters[:0] = self.added
                filters_changed()
            self.depth += 1
        try:
            yield
        finally:
            with self._lock:
                self.depth -= 1
                if self.depth == 0:
                    warnings.filters[:] = [f for f in warnings.filters if not any(f is a for a in self.added)]
                    self.added = []
                    filters_changed()
