"""Charging a private fit to its dataset's ledger (:mod:`dptopic.accounting.dataset_ledger`).

Every estimator whose fit spends a privacy budget takes two more parameters, ``ledger`` and ``dataset`` (kept by
``get_params``, so scikit-learn's ``clone`` keeps them and every fit of a search is charged):

- ``ledger``: a path to the ledger file, ``True`` (the default file), ``False`` (off, whatever the environment says)
  or None (the default: the file ``DPTOPIC_LEDGER`` names, or the command line's; otherwise no ledger: in Python the
  ledger is opt-in);
- ``dataset``: the dataset's name; None names it by the content of the documents given to ``fit``.

The one place a fit is charged is the moment its trainer reserves its plan on its in-fit
:class:`~dptopic.accounting.ledger.PrivacyLedger` (``reserve``), which every private trainer does before it draws
its first noise: the release is then written to the dataset's ledger, or refused by the dataset's cap with nothing
spent. A fit that reserves no plan and ends up claiming no guarantee (CDP-LDA, HDP-LDA's paper-literal and
limited-inherent modes) is recorded after it as a release without a guarantee, so that no total is claimed for a
dataset that was released from without one.
"""
from __future__ import annotations

import functools
import hashlib
import math
import os
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import warnings

from ..accounting.dataset_ledger import (ENV, SESSION, DatasetLedger, check_name, default_path, total_line)
from ..accounting.ledger import RESERVE_HOOK
from ..errors import DPTopicError, user_stacklevel

PARAMS = ("ledger", "dataset")
"""The parameters every budget-spending estimator takes besides its own (``TopicModel._param_names``)."""

REPORT_KEY = "dataset_ledger"
"""The key of ``privacy_`` that holds the dataset's total when the fit was charged (the card's line)."""

_ACTIVE: ContextVar = ContextVar("dptopic_active_charge", default=None)


# -------------------------------------------------------------------------------------------- where and which dataset
def ledger_path(model) -> Path | None:
    """The ledger file ``model``'s fit is charged to, or None when it is off (module note for the precedence)."""
    v = getattr(model, "ledger", None)
    if v is False:
        return None
    if v is True:
        return default_path()
    if isinstance(v, (str, os.PathLike)) and str(v).strip():
        return Path(os.path.expanduser(str(v)))
    if v is not None:
        raise DPTopicError(f"invalid ledger={v!r}: give the path of a ledger file, True (the default file), False (no"
                           " ledger) or None (DPTOPIC_LEDGER, if set).")
    s = SESSION.get()
    if s is not None:
        return s[0]
    env = os.environ.get(ENV, "").strip()
    return Path(os.path.expanduser(env)) if env else None


def _digest(parts) -> str:
    h = hashlib.sha256()
    for p in sorted(parts):
        h.update(p)
    return h.hexdigest()[:16]


def _rows_digest(indptr, indices, data) -> list:
    """Each row's (column, value) pairs, in column order, hashed: an order-free fingerprint of the documents."""
    out = []
    for d in range(len(indptr) - 1):
        a, b = indptr[d], indptr[d + 1]
        order = np.argsort(indices[a:b], kind="stable")
        out.append(hashlib.blake2b(np.asarray(indices[a:b])[order].astype(np.int64).tobytes()
                                   + np.asarray(data[a:b])[order].astype(np.float64).tobytes(),
                                   digest_size=16).digest())
    return out


def _path_digest(p: Path) -> str:
    files = sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p]
    h = hashlib.sha256()
    for q in files:
        h.update(str(q.relative_to(p) if p.is_dir() else q.name).encode())
        with open(q, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


def file_fingerprint(path) -> str:
    """The dataset name the command line gives a corpus file or folder: ``sha256:`` and the first 16 hex digits of the
    hash of its bytes (a folder: of its files' names and bytes)."""
    return "sha256:" + _path_digest(Path(path))


def fingerprint(X) -> str | None:
    """The default dataset name of a fit's input: a hash of its content, the same whatever the order of its documents
    (``content:`` and 16 hex digits); None for an input that cannot be read twice (an iterator, a function)."""
    import scipy.sparse as sp  # scipy.sparse: kept off this module's import (a light start)

    from ..corpus import Corpus  # start-up: corpus loads numba

    if isinstance(X, (str, os.PathLike)) and not (isinstance(X, str) and ("\n" in X or len(X) > 4096)) \
            and os.path.exists(X):
        return "sha256:" + _path_digest(Path(X))
    if isinstance(X, Corpus):
        words = hashlib.blake2b("\n".join(X.vocabulary.words).encode(), digest_size=16).digest()
        rows = _rows_digest(X.doc_ptr, X.word_ids, np.ones(len(X.word_ids)))
        return "content:" + _digest(rows + [b"vocabulary", words])
    if sp.issparse(X) or isinstance(X, np.ndarray):
        m = sp.csr_matrix(X)
        return "content:" + _digest(_rows_digest(m.indptr, m.indices, m.data))
    if hasattr(X, "to_numpy") and hasattr(X, "columns"):      # a DataFrame of counts
        m = sp.csr_matrix(np.asarray(X.to_numpy(), dtype=float))
        cols = hashlib.blake2b("\n".join(map(str, X.columns)).encode(), digest_size=16).digest()
        return "content:" + _digest(_rows_digest(m.indptr, m.indices, m.data) + [b"columns", cols])
    if isinstance(X, (list, tuple)) and X and all(isinstance(d, str) for d in X):
        return "content:" + _digest([hashlib.blake2b(d.encode(), digest_size=16).digest() for d in X])
    if isinstance(X, (list, tuple)) and X and all(isinstance(d, (list, tuple)) and all(isinstance(w, str) for w in d)
                                                  for d in X):
        return "content:" + _digest([hashlib.blake2b("\x00".join(sorted(d)).encode(), digest_size=16).digest()
                                     for d in X])
    paths = getattr(X, "paths", None)      # a shard set
    if isinstance(paths, (list, tuple)) and paths and all(os.path.exists(str(p)) for p in paths):
        return "sha256:" + _digest([_path_digest(Path(str(p))).encode() for p in paths])
    return None


_SHADOW: ContextVar = ContextVar("dptopic_shadow_runs", default=None)


class shadow_runs:
    """``with shadow_runs():`` the fits inside are an audit's shadow models: charged (when a ledger is on) to their own
    dataset, ``audit-shadow:NAME``, never to the user's dataset NAME itself (``dptopic.attacks`` uses it around each
    shadow fit, in the thread that runs it)."""

    def __init__(self, label: str = "audit"):
        self.label = label

    def __enter__(self):
        self._token = _SHADOW.set(self.label)

    def __exit__(self, *exc):
        _SHADOW.reset(self._token)
        return False


def dataset_name(model, X) -> str:
    """``model.dataset``, the command line's ``--dataset``/input fingerprint, or the fingerprint of ``X``; inside
    :class:`shadow_runs`, the shadows' own name."""
    shadow = _SHADOW.get()
    if shadow is not None:
        s = SESSION.get()
        base = getattr(model, "dataset", None) or (s[1] if s is not None else None) or "unnamed"
        return check_name(f"{shadow}-shadow:{base}"[:200])
    given = getattr(model, "dataset", None)
    if given is not None:
        return check_name(given)
    s = SESSION.get()
    if s is not None and s[1] is not None:
        return check_name(s[1])
    name = fingerprint(X)
    if name is None:
        raise DPTopicError(f"{type(model).__name__}: the ledger is on but this input cannot be named by its content"
                           f" (a {type(X).__name__} is read once): give dataset=NAME.")
    return name


def model_delta(model) -> float:
    d = getattr(model, "delta", None)
    try:
        d = float(d)
    except (TypeError, ValueError):
        return 1e-5
    return d if 0 < d < 1 else 1e-5


# -------------------------------------------------------------------------------------------- the charge
class PlanCaptured(Exception):
    """Raised at a fit's reservation when only its plan was wanted (a private search plans every candidate before any
    noise): the fit stops there, having drawn nothing."""

    def __init__(self, groups, unit):
        super().__init__("plan captured")
        self.groups, self.unit = groups, unit


@dataclass
class Charge:
    """The hook a charged fit puts on :data:`~dptopic.accounting.ledger.RESERVE_HOOK`. ``mode``: ``"debit"`` (record
    on the dataset's ledger), ``"capture"`` (raise :class:`PlanCaptured`), ``"covered"`` (the fit runs inside a search
    whose release was recorded: nothing to record)."""

    ledger: DatasetLedger | None
    dataset: str | None
    trainer: str
    delta: float
    mode: str = "debit"
    release_id: int | None = None
    kind: str = "fit"
    reserved: list = field(default_factory=list)

    def __call__(self, privacy_ledger, groups) -> None:
        if self.mode == "capture":
            raise PlanCaptured(list(groups), privacy_ledger.unit)
        self.reserved.extend(groups)
        if self.mode == "covered":
            return
        self.release_id = self.ledger.debit(self.dataset, self.trainer, privacy_ledger.unit, groups, self.delta,
                                            kind=self.kind, release_id=self.release_id)


def charging_active() -> bool:
    return RESERVE_HOOK.get() is not None


class hook:
    """``with hook(charge):`` the fits inside report their plans to ``charge``."""

    def __init__(self, charge):
        self.charge = charge

    def __enter__(self):
        self._tokens = (RESERVE_HOOK.set(self.charge), _ACTIVE.set(self.charge))
        return self.charge

    def __exit__(self, *exc):
        RESERVE_HOOK.reset(self._tokens[0])
        _ACTIVE.reset(self._tokens[1])
        return False


def charged(fit):
    """Wrap a budget-spending estimator's ``fit`` so that it is charged to its dataset's ledger (module note)."""
    if getattr(fit, "_dptopic_charged", False):
        return fit

    @functools.wraps(fit)
    def charged_fit(self, X, *args, **kw):
        if charging_active():               # inside a charged fit or a private search: that one records it
            return fit(self, X, *args, **kw)
        check_params(self)
        path = ledger_path(self)
        if path is None:
            return fit(self, X, *args, **kw)
        ledger = DatasetLedger(path)         # a corrupt or foreign file: one line, before any document is read
        charge = Charge(ledger, dataset_name(self, X), type(self).__name__, model_delta(self))
        with hook(charge):
            out = fit(self, X, *args, **kw)
        after_fit(self, charge)
        return out

    charged_fit._dptopic_charged = True
    return charged_fit


def after_fit(model, charge: Charge) -> None:
    """A charged fit ended: record what it spent without reserving (module note), and put the dataset's total in its
    report (``privacy_["dataset_ledger"]``, the card's line)."""
    rep = getattr(model, "privacy_", None)
    if not isinstance(rep, dict):
        return
    claims = bool(rep.get("private")) and rep.get("epsilon") is not None
    led = getattr(model, "ledger_", None)
    spent = led.groups() if led is not None and hasattr(led, "groups") else []
    if charge.release_id is None:
        if not claims:
            charge.release_id = charge.ledger.debit(
                charge.dataset, charge.trainer, str(rep.get("unit") or "word"), spent, charge.delta,
                guarantee=False, note="claims no differential privacy guarantee: what it released is bounded by no"
                                      " epsilon")
        elif spent:         # a trainer that spent without reserving its plan first: recorded now, after its noise
            charge.release_id = charge.ledger.debit(
                charge.dataset, charge.trainer, str(rep.get("unit") or "word"), spent, charge.delta,
                note="recorded after its noise was drawn (its trainer reserves no plan)")
    elif not charge.reserved and claims and spent:      # a run's release opened before its fit (open_run_charge)
        charge.ledger.debit(charge.dataset, charge.trainer, str(rep.get("unit") or "word"), spent, charge.delta,
                            release_id=charge.release_id)
    elif not claims:
        charge.ledger.mark_no_guarantee(charge.release_id, "claims no differential privacy guarantee: what it"
                                                           " released is bounded by no epsilon")
    if charge.release_id is None:
        return
    model._dataset_release_ = (str(charge.ledger.path), charge.release_id)
    annotate(model, charge.ledger, charge.dataset, charge.release_id)


def annotate(model, ledger: DatasetLedger, dataset: str, release_id: int | None) -> None:
    """Put ``dataset``'s total into ``model.privacy_`` (the card's and the report's line)."""
    total = ledger.total(dataset)
    eps = total["epsilon_total"]
    model.privacy_[REPORT_KEY] = {
        "dataset": dataset, "release": release_id, "n_releases": total["n_releases"],
        "epsilon_total": eps if eps is None or math.isfinite(eps) else None, "delta_total": total["delta_total"],
        "epsilon_basic": total["epsilon_basic"], "epsilon_method": total["epsilon_method"], "cap": total["cap"],
        "line": total_line(total),
    }


def record_saved(model, path) -> None:
    """``model.save``: the release's model folder, on its ledger (nothing when the fit was not charged)."""
    rel = getattr(model, "_dataset_release_", None)
    if not rel:
        return
    try:
        DatasetLedger(Path(rel[0])).set_model_path(rel[1], Path(path).resolve())
    except DPTopicError as e:        # the model is saved; the ledger's path column is a convenience
        warnings.warn(f"the model was saved, but its folder could not be written to the ledger: {e}", UserWarning,
                      stacklevel=user_stacklevel())


def check_params(model) -> None:
    """``ledger=`` and ``dataset=``, checked with the other parameters (before anything is read)."""
    ledger_path(model)
    if getattr(model, "dataset", None) is not None:
        check_name(model.dataset)


def debit_outside_fit(what: str, unit: str, groups, delta: float, X, model=None) -> int | None:
    """Record a private release made outside an estimator's fit (DP set union choosing a vocabulary, before the
    trainer's fit) on the ledger that ``model`` (or the command line, or ``DPTOPIC_LEDGER``) names, before its noise
    is drawn; the cap refuses it with nothing spent. Returns its id, or None when no ledger is on (or a charged fit
    or search around it records its own)."""
    if charging_active():
        return None
    probe = model if model is not None else type("_NoModel", (), {"ledger": None, "dataset": None})()
    path = ledger_path(probe)
    if path is None:
        return None
    ledger = DatasetLedger(path)
    return ledger.debit(dataset_name(probe, X), what, unit, groups, delta, kind="vocabulary")


def open_run_charge(model, X, groups, planned, delta: float, unit: str = "document", note: str | None = None):
    """A run that releases from its dataset before its trainer's fit (a vocabulary chosen by DP set union) is one
    release on the dataset's ledger: its cap checked now for the whole run, ``groups`` (released before the fit)
    and ``planned`` (the fit's plan), before any noise is drawn, and refused with nothing written; ``groups`` is
    written now, and the fit, run inside ``hook(charge)`` and ended by :func:`after_fit`, adds what it reserves to
    the same release. ``X`` is the data the user gave (the dataset's name, as a fit of it is charged under), and
    ``delta`` the whole run's. Returns the :class:`Charge`, or None when no ledger is on (or a charged fit or
    search around the run records its own)."""
    if charging_active():
        return None
    check_params(model)
    path = ledger_path(model)
    if path is None:
        return None
    ledger = DatasetLedger(path)
    name = dataset_name(model, X)
    trainer = type(model).__name__
    charge = Charge(ledger, name, trainer, float(delta))
    charge.release_id = ledger.debit(name, trainer, unit, groups, float(delta), planned=planned, note=note)
    return charge
