"""Watching the releases of a fit: every Gaussian or Laplace release made in this thread while :func:`observing` is
active is handed to an observer, which may record it.

An auditor's and a tester's tool, never a trainer's: the privacy tests (``tests/privacy/``) record each release's
statistic before the noise and the sensitivity the noise was calibrated for, and the white-box audit
(:mod:`dptopic.attacks.release_audit`) records the noisy statistic a model released. An observer may also *replace*
the output (``replay``): the auditor's second fit, on the documents it knows, then follows the audited run's own
releases, so its statistics are those of the known documents under the same public history. A model fitted while an
observer replaces outputs has released nothing of its documents and is not a private model.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass

import numpy as np

from ..errors import DPTopicError

_OBSERVER: contextvars.ContextVar = contextvars.ContextVar("dptopic_release_observer", default=None)


@dataclass
class Release:
    """One release: the statistic before the noise (``values``), the output (``noisy``), the sensitivity the noise was
    calibrated for and its norm (``"l2"``: Gaussian, ``"l1"``: Laplace), the noise's standard deviation (Gaussian) or
    scale (Laplace), and the release's label."""
    values: np.ndarray
    noisy: np.ndarray
    sensitivity: float
    norm: str
    scale: float
    label: str
    event: object = None


@contextlib.contextmanager
def observing(observer):
    """Within the block, ``observer(release)`` is called for every release made in this thread (not in threads that
    the block starts); what it returns, if not None, replaces the release's output."""
    token = _OBSERVER.set(observer)
    try:
        yield observer
    finally:
        _OBSERVER.reset(token)


def active() -> bool:
    """Whether an observer is watching (the mechanisms then keep a copy of the statistic before the noise)."""
    return _OBSERVER.get() is not None


def observe(values, noisy, sensitivity: float, norm: str, scale: float, label: str, event=None):
    """Called by the mechanisms after the noise is drawn; returns the output to release (``noisy`` unless the observer
    replaces it)."""
    obs = _OBSERVER.get()
    if obs is None:
        return noisy
    out = obs(Release(np.array(values, copy=True), np.array(noisy, copy=True), float(sensitivity), norm, float(scale),
                      str(label), event))
    if out is None:
        return noisy
    out = np.asarray(out)
    if out.shape != np.shape(noisy):
        raise DPTopicError(f"a replayed release has shape {out.shape}, the fit's has {np.shape(noisy)}: the runs"
                           " diverged before this release.")
    return out.astype(np.asarray(noisy).dtype, copy=True)
