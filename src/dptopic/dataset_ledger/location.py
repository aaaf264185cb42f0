"""Which ledger a run uses: the one named, else ``$DPTOPIC_LEDGER``, else the default file in the user's data folder;
and the session a command or a training run charges its fits in."""
from __future__ import annotations

import contextlib
import os
import sys
from contextvars import ContextVar
from pathlib import Path

from ..errors import ParameterError
from .names import check_name, no_ledger_error
from .store import ENV, is_url, location_of


def default_path() -> Path:
    """The ledger file used when none is named: ``$XDG_DATA_HOME/dptopic/ledger.sqlite`` (``~/.local/share`` without
    it; ``%LOCALAPPDATA%`` on Windows)."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "dptopic" / "ledger.sqlite"


def location(value, given_as: str | None = None):
    """A ledger named by the user: a ``postgresql://`` URL, or a path with ``~`` expanded (a :class:`~pathlib.Path`
    as given; text read by its scheme, :func:`~dptopic.dataset_ledger.store.location_of`, which refuses a URL of
    another scheme in one line; ``given_as``: the environment variable it came from)."""
    if isinstance(value, os.PathLike):
        return Path(os.path.expanduser(str(value).strip()))
    return location_of(value, given_as)


def ledger_path(path=None, off: bool = False, must_exist: bool = False):
    """The ledger a run uses: none when ``off``, else ``path``, else ``$DPTOPIC_LEDGER``, else :func:`default_path`
    (``~`` expanded; a ``postgresql://`` URL kept as a string). ``must_exist``: for reading, a file that is not
    there is refused."""
    if off:
        if path is not None:
            raise ParameterError("give {ledger} or {no_ledger}, not both.", "ledger", path, others=("no_ledger",),
                                 key="dataset_ledger.location.ledger_path.3")
        return None
    if path is not None and (not isinstance(path, (str, os.PathLike)) or not str(path).strip()):
        raise ParameterError("{ledger} needs a file path (or set {no_ledger}).", "ledger", path,
                             key="dataset_ledger.location.ledger_path")
    env = os.environ.get(ENV, "").strip()
    chosen = location(path) if path is not None else location(env, ENV) if env else default_path()
    if must_exist and not is_url(chosen) and not os.path.lexists(chosen):
        raise ParameterError("no ledger at {path}: nothing has been recorded there yet (give {ledger} or {env} to"
                             " read another).", "ledger", path, key="dataset_ledger.location.ledger_path.2",
                             path=chosen, env=ENV)
    return chosen


# ------------------------------------------------------------------------------------------------- this process's charge
INHERIT = object()
"""A session's ledger left as the environment names it (``DPTOPIC_LEDGER``), not turned off."""

SESSION: ContextVar = ContextVar("dptopic_ledger_session", default=None)
"""The ledger for the fits a command or a training run makes: ``(path, None when off, or INHERIT; dataset name or
None; aliases, pairs of person ids that are one person, or ())``."""


@contextlib.contextmanager
def session(path=INHERIT, dataset: str | None = None, aliases=()):
    """Fits inside charge ``path`` (None: the ledger is off, whatever ``DPTOPIC_LEDGER`` says; :data:`INHERIT`: as
    the environment says) on ``dataset`` unless a model names its own; the command line runs each command in one.
    ``dataset`` is checked now (:func:`~dptopic.dataset_ledger.names.check_name`), and refused with the ledger
    off. ``aliases``: pairs of person ids (:func:`~dptopic.dataset_ledger.people.read_aliases`) the ledger links as
    one person when it records the fits' release (before its caps are checked)."""
    if dataset is not None:
        dataset = check_name(dataset)
        if path is None:
            raise no_ledger_error(dataset)
    token = SESSION.set((path if path is None or path is INHERIT else location(path), dataset, tuple(aliases or ())))
    try:
        yield
    finally:
        SESSION.reset(token)

