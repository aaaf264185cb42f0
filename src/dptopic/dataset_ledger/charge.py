"""Charging a private fit to the dataset ledger (:mod:`dptopic.dataset_ledger`).

Every estimator whose fit spends a privacy budget takes two more parameters, ``ledger`` and ``dataset`` (kept by
``get_params``, so scikit-learn's ``clone`` keeps them and every fit of a search is charged):

- ``ledger``: a path to the ledger file (or a ``postgresql://`` URL), ``True`` (the default file), ``False`` (off,
  whatever the environment says) or None (the default: the ledger ``dptopic.train`` or the command line runs the fit
  under, else the one ``DPTOPIC_LEDGER`` names; otherwise none: in Python the ledger is opt-in);
- ``dataset``: the dataset's name; None names it by the content of the documents given to ``fit``.

Whatever the name, the release is recorded with **the documents it read** (each document's content digest, and its
person where the input carries one), so that the ledger charges the same documents wherever they were charged
before: in another file, another order, another format, or among others. Which documents an input holds is the
corpus's to say (:func:`dptopic.corpus.ledger_documents.documents_of`): a charge takes them as ``read_documents``, a
function of no arguments that reads them when a ledger is on (and only then), so that this module reads no input.

The one place a fit is charged is the moment its trainer reserves its plan on its in-fit
:class:`~dptopic.accounting.ledger.PrivacyLedger` (``reserve``), which every private trainer does before it draws
its first noise: the release is then written to the ledger, or refused by a cap with nothing spent. A fit that
reserves no plan and ends up claiming no guarantee (CDP-LDA, HDP-LDA's paper-literal and limited-inherent modes) is
recorded after it as a release without a guarantee, so that no total is claimed for documents that were released
from without one.
"""
from __future__ import annotations

import functools
import math
import os
import warnings
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .._memory import give_back
from ..accounting.ledger import RESERVE_HOOK
from ..errors import DPTopicError, ParameterError, user_stacklevel
from .identity import Documents
from .ledger import DatasetLedger
from .location import INHERIT, SESSION, default_path, location
from .names import MAX_NAME, check_name, no_ledger_error, valid_name
from .store import ENV
from .views import total_line

PARAMS = ("ledger", "dataset")
"""The parameters every budget-spending estimator takes besides its own (``TopicModel._param_names``)."""

REPORT_KEY = "dataset_ledger"
"""The key of ``privacy_`` that holds the total of the fit's documents when the fit was charged (the card's line)."""

_ACTIVE: ContextVar = ContextVar("dptopic_active_charge", default=None)


# -------------------------------------------------------------------------------------------- which ledger
def ledger_value(v):
    """A ``ledger=`` value as a location: None (not given), False (off), a Path or a ``postgresql://`` URL; anything
    else refused in one line naming the parameter."""
    if v is None or v is False:
        return v
    if v is True:
        return default_path()
    if isinstance(v, (str, os.PathLike)) and str(v).strip():
        return location(v)
    if isinstance(v, (str, os.PathLike)):
        raise ParameterError("{ledger=} names no ledger: give the path of a ledger file, True (the default file),"
                             " False (no ledger) or None (DPTOPIC_LEDGER, if set).", "ledger", v)
    raise ParameterError("invalid {ledger=}: give the path of a ledger file (or a postgresql:// URL), True (the"
                         " default file), False (no ledger) or None (DPTOPIC_LEDGER, if set).", "ledger", v)


def ledger_path(model):
    """The ledger ``model``'s fit is charged to, or None when it is off (module note for the precedence)."""
    v = ledger_value(getattr(model, "ledger", None))
    if v is False:
        return None
    if v is not None:
        return v
    s = SESSION.get()
    if s is not None and s[0] is not INHERIT:
        return s[0]
    env = os.environ.get(ENV, "").strip()
    return location(env, ENV) if env else None


_SHADOW: ContextVar = ContextVar("dptopic_shadow_runs", default=None)


class shadow_runs:
    """``with shadow_runs():`` the fits inside are an audit's shadow models: charged (when a ledger is on) to their own
    dataset, ``audit-shadow:NAME``, with no documents, so that they add to no total of the user's documents: the
    shadows are not released (``dptopic.attacks`` uses it around each shadow fit, in the thread that runs it)."""

    def __init__(self, label: str = "audit"):
        self.label = label

    def __enter__(self):
        self._token = _SHADOW.set(self.label)

    def __exit__(self, *exc):
        _SHADOW.reset(self._token)
        return False


DocumentsReader = Callable[[], "Documents | None"]
"""What a charge reads the fit's documents with (``lambda: documents_of(X, user_ids)``): None for an input that
cannot be read twice."""


def dataset_name(model, read_documents: DocumentsReader) -> tuple[str | None, Documents | None]:
    """``(name, documents)`` a fit is charged under: the name is ``model.dataset``, the command line's dataset
    name or ``dptopic.train``'s ``dataset=``, else None (the ledger names it by content); the documents those
    ``read_documents`` reads. Inside :class:`shadow_runs`, the shadows' own name and no documents."""
    shadow = _SHADOW.get()
    if shadow is not None:
        s = SESSION.get()
        base = getattr(model, "dataset", None) or (s[1] if s is not None else None) or "unnamed"
        return valid_name(f"{shadow}-shadow:{base}"[:MAX_NAME]), None
    given = getattr(model, "dataset", None)
    s = SESSION.get()
    name = check_name(given) if given is not None else (check_name(s[1]) if s is not None and s[1] else None)
    docs = read_documents()
    aliases = s[2] if s is not None and len(s) > 2 else ()
    if docs is not None and aliases:
        docs.aliases = list(aliases)
    if name is None and docs is None:
        raise DPTopicError(f"{type(model).__name__}: the ledger is on but this input cannot be known by its content"
                           " (an iterator or a function is read once): give dataset=NAME.")
    return name, docs


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
    on the ledger), ``"capture"`` (raise :class:`PlanCaptured`), ``"covered"`` (the fit runs inside a search whose
    release was recorded: nothing to record). ``documents``: what the release read (None: its dataset's name
    alone, or the release is open and recorded them: ``release_id`` then names them)."""

    ledger: DatasetLedger | None
    dataset: str | None
    trainer: str
    delta: float
    mode: str = "debit"
    release_id: int | None = None
    kind: str = "fit"
    reserved: list = field(default_factory=list)
    documents: Documents | None = None

    def __call__(self, privacy_ledger, groups) -> None:
        if self.mode == "capture":
            raise PlanCaptured(list(groups), privacy_ledger.unit)
        self.reserved.extend(groups)
        if self.mode == "covered":
            return
        self.debit(privacy_ledger.unit, groups)

    def debit(self, unit, groups, **kw) -> int:
        """Record ``groups`` on this charge's release (the first call opens it, and records its documents). Once the
        release is open its id is all the next calls give, so the documents (at 10^6 of them, 380 MB of keys) are
        let go, and the heap the record freed is given back (:mod:`dptopic._memory`)."""
        recording = self.release_id is None and self.documents is not None
        if recording:
            give_back()         # the steps before (the split, the counts) freed blocks the record can reuse
        self.release_id = self.ledger.debit(self.dataset, self.trainer, unit, groups, self.delta, kind=self.kind,
                                            release_id=self.release_id, documents=self.documents, **kw)
        if recording:
            self.documents = None
            give_back()
        return self.release_id


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


def open_charge(model, read_documents: DocumentsReader, trainer: str | None = None,
                delta: float | None = None) -> Charge | None:
    """The charge of a fit of ``model`` on the documents ``read_documents`` reads (no release recorded yet: its first
    reservation records it), or None when no ledger is on. The ledger is opened (checked, or created) now, before
    any document is read."""
    check_params(model)
    path = ledger_path(model)
    if path is None:
        s = SESSION.get()
        named = getattr(model, "dataset", None) or (s[1] if s is not None else None)
        if named is not None and _SHADOW.get() is None:     # a name with no ledger to record it: not silently idle
            raise ParameterError("{dataset=} names the release a ledger records, and no ledger is on ({ledger} not"
                                 " given, and {env} not set): give {ledger} (a file, or True for the default one),"
                                 " or drop {dataset}.", "dataset", named, others=("ledger",), env=ENV)
        return None
    ledger = DatasetLedger(path)        # a corrupt, foreign or newer file: one line, before any document is read
    name, docs = dataset_name(model, read_documents)
    s = SESSION.get()
    if docs is None and s is not None and len(s) > 2 and s[2]:      # a release known by its name: aliases now
        ledger.add_aliases(s[2])
    return Charge(ledger, name, trainer or type(model).__name__, model_delta(model) if delta is None else delta,
                  documents=docs)


def charged(fit, documents_of: Callable):
    """Wrap a budget-spending estimator's ``fit`` so that it is charged to the ledger (module note); the fit's
    documents are ``documents_of(X, user_ids)``."""
    if getattr(fit, "_dptopic_charged", False):
        return fit

    @functools.wraps(fit)
    def charged_fit(self, X, *args, **kw):
        if charging_active():               # inside a charged run or a private search: that one records it
            return fit(self, X, *args, **kw)
        charge = open_charge(self, lambda: documents_of(X, kw.get("user_ids")))
        if charge is None:
            return fit(self, X, *args, **kw)
        with hook(charge):
            out = fit(self, X, *args, **kw)
        after_fit(self, charge)
        return out

    charged_fit._dptopic_charged = True
    return charged_fit


def after_fit(model, charge: Charge) -> None:
    """A charged fit ended: record what it spent without reserving (module note), and put the total of its documents
    in its report (``privacy_["dataset_ledger"]``, the card's line)."""
    rep = getattr(model, "privacy_", None)
    if not isinstance(rep, dict):
        return
    claims = bool(rep.get("private")) and rep.get("epsilon") is not None
    led = getattr(model, "ledger_", None)
    spent = led.groups() if led is not None and hasattr(led, "groups") else []
    unit = str(rep.get("unit") or "word")
    if charge.release_id is None:
        if not claims:
            charge.debit(unit, spent, guarantee=False, note="claims no differential privacy guarantee: what it"
                                                            " released is bounded by no epsilon")
        elif spent:         # a trainer that spent without reserving its plan first: recorded now, after its noise
            charge.debit(unit, spent, note="recorded after its noise was drawn (its trainer reserves no plan)")
    elif not charge.reserved and claims and spent:      # a run's release opened before its fit (a private vocabulary)
        charge.debit(unit, spent)
    elif not claims:
        charge.ledger.mark_no_guarantee(charge.release_id, "claims no differential privacy guarantee: what it"
                                                           " released is bounded by no epsilon")
    if charge.release_id is None:
        return
    model._dataset_release_ = (str(charge.ledger.path), charge.release_id)
    annotate(model, charge.ledger, charge.release_id)


def annotate(model, ledger: DatasetLedger, release_id: int | None, dataset: str | None = None) -> None:
    """Put the total of the release's documents into ``model.privacy_`` (the card's and the report's line)."""
    model.privacy_[REPORT_KEY] = total_entry(ledger, release_id)


def total_entry(ledger: DatasetLedger, release_id: int) -> dict:
    """What a model's report keeps of its documents' total: the dataset, the release, the ledger, the total (its
    unit, delta and which delta), the datasets it composes and the card's line."""
    total = ledger.release_total(release_id)
    total["ledger"] = ledger.where
    eps = total["epsilon_total"]
    return {
        "dataset": total.get("dataset"), "release": release_id, "ledger": ledger.where,
        "n_releases": total["n_releases"], "unit": total["unit"],
        "epsilon_total": eps if eps is None or math.isfinite(eps) else None, "delta_total": total["delta_total"],
        "delta_source": total["delta_source"], "epsilon_method": total["epsilon_method"], "cap": total["cap"],
        "datasets": total["datasets"], "line": total_line(total),
    }


def current_total(report: dict) -> dict:
    """``report`` (a model's ``privacy_``) with the total of its documents read from its ledger again (``dptopic
    report``: a model saved five releases ago states the total of its own fit, not today's), or, when the ledger
    cannot be read, its saved line with a note that it was not. Reads; writes nothing."""
    led = report.get(REPORT_KEY) if isinstance(report, dict) else None
    if not isinstance(led, dict) or not led.get("ledger") or led.get("release") is None:
        return report
    try:
        fresh = total_entry(DatasetLedger(led["ledger"], read_only=True), int(led["release"]))
        fresh["read_at"] = "read again from the ledger when this was written"
    except (DPTopicError, TypeError, ValueError) as e:
        fresh = dict(led, line=f"{led.get('line')} (as of the fit: the ledger was not read now:"
                               f" {' '.join(str(e).split())[:160]})", stale=True)
    return {**report, REPORT_KEY: fresh}


def record_saved(model, path) -> None:
    """``model.save``: the release's model folder, on its ledger (nothing when the fit was not charged)."""
    rel = getattr(model, "_dataset_release_", None)
    if not rel:
        return
    try:
        DatasetLedger(rel[0]).set_model_path(rel[1], Path(path).resolve())
    except DPTopicError as e:        # the model is saved; the ledger's path column is a convenience
        warnings.warn(f"the model was saved, but its folder could not be written to the ledger: {e}", UserWarning,
                      stacklevel=user_stacklevel())


def check_params(model) -> None:
    """``ledger=`` and ``dataset=``, checked with the other parameters (before anything is read): a dataset name by
    the one rule (:func:`~dptopic.dataset_ledger.names.check_name`), and none with ``ledger=False``."""
    off = ledger_value(getattr(model, "ledger", None)) is False
    if getattr(model, "dataset", None) is not None:
        check_name(model.dataset)
        if off:
            raise no_ledger_error(model.dataset)


_NO_MODEL = type("_NoModel", (), {"ledger": None, "dataset": None})


def debit_outside_fit(what: str, unit: str, groups, delta: float, read_documents: DocumentsReader,
                      model=None) -> int | None:
    """Record a private release made outside an estimator's fit (DP set union choosing a vocabulary, before the
    trainer's fit) on the ledger that ``model`` (or the command line, or ``DPTOPIC_LEDGER``) names, before its noise
    is drawn; a cap refuses it with nothing spent. Returns its id, or None when no ledger is on (or a charged fit,
    run or search around it records its own)."""
    if charging_active():
        return None
    charge = open_charge(model if model is not None else _NO_MODEL(), read_documents, trainer=what, delta=delta)
    if charge is None:
        return None
    charge.kind = "vocabulary"
    return charge.debit(unit, groups)


def open_run_charge(model, read_documents: DocumentsReader, groups, planned, delta: float, unit: str = "document",
                    note: str | None = None):
    """A run that releases from its documents before its trainer's fit (a vocabulary chosen by DP set union) is one
    release on the ledger: its caps checked now for the whole run, ``groups`` (released before the fit) and
    ``planned`` (the fit's plan), before any noise is drawn, and refused with nothing written; ``groups`` is written
    now, and the fit, run inside ``hook(charge)`` and ended by :func:`after_fit`, adds what it reserves to the same
    release. ``read_documents`` reads the data the user gave (the documents the release read), and ``delta`` is the
    whole run's.
    Returns the :class:`Charge`, or None when no ledger is on (or a charged fit or search around the run records its
    own)."""
    if charging_active():
        return None
    charge = open_charge(model, read_documents, delta=float(delta))
    if charge is None:
        return None
    if groups:
        charge.debit(unit, groups, planned=planned, note=note)
    return charge


def charge_served(ledger, trainer: str, unit: str, groups, persons, *, dataset: str | None = None,
                  delta: float = 1e-5, kind: str = "served", note: str | None = None,
                  context: str | None = None) -> int:
    """Record a release a service made from people whose documents never left them (local reports, a FedLDA round,
    a secure-sum round): ``groups`` (``[(event, count), ...]``) is what **one** report or contribution spends, in
    ``unit``; ``persons`` maps each person (as the collection names them: a contributor's pseudonym; give them the
    ids your corpora's person field holds, and their totals join) to their number of reports or contributions in
    this release. The ledger charges each person for their count (group privacy of the unit, as for documents), so
    that their total spans the central releases that held their documents and the served ones. ``ledger``: a path,
    URL or :class:`~dptopic.dataset_ledger.ledger.DatasetLedger`; ``dataset``: the collection's name (default:
    ``people:`` and a keyed digest of the persons). Returns the release's id. The contributors drew their own noise
    before the service saw anything, so a cap cannot stop this release: a release a cap refuses raises
    :class:`~dptopic.errors.BudgetExceededError` and is not recorded, and the service should not use it.
    ``context``: the route's (a secure-sum round's id, or ``"collection"``): a person named by a pseudonym the
    ledger made for it (:meth:`~dptopic.dataset_ledger.ledger.DatasetLedger.pseudonyms`) is charged as the person
    it stands for, whom the server never learns; any other name as given."""
    led = ledger if isinstance(ledger, DatasetLedger) else DatasetLedger(ledger)
    items = sorted((str(p), int(n)) for p, n in dict(persons).items() if int(n) > 0)
    if not items:
        raise DPTopicError("a served release covers no person: nothing to record.")
    docs = Documents(None, [p for p, _ in items], counts=[n for _, n in items], context=context)
    return led.debit(dataset, trainer, unit, groups, delta, kind=kind, documents=docs,
                     note=note or "served: the contributors drew its noise on their side")
