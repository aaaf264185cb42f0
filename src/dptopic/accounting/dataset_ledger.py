"""The dataset ledger: every private release made from one dataset, kept across runs in a small SQLite file.

A fit's :class:`~dptopic.accounting.ledger.PrivacyLedger` composes what that fit spends and forgets it when the process
ends. This ledger keeps, per named dataset, each release (trainer, privacy unit, the events it spends as JSON that
re-creates them, its own (epsilon, delta), when, and the model folder it was saved to), and composes them all:
tightly, by privacy loss distributions and Renyi DP over every event of every release (the smaller figure is the
total), with basic composition (the releases' own epsilons and deltas added) beside it. A cap ``(epsilon, delta)`` per
dataset refuses a release that would take the total past it, before that release draws any noise.

Writes are SQLite transactions: the debit takes the write lock (``BEGIN IMMEDIATE``), reads the dataset's releases
and cap, checks the cap with the new release included and inserts it, in one transaction, so two processes debiting
the same dataset never both pass a cap that admits only one. A release is written before its noise is drawn: a run
that dies after the debit leaves its release recorded (the safe side: it may have drawn and shown its noise).

Nothing here reads a corpus: the models layer names the dataset and passes the events (``docs/budget.md``).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import sys
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BudgetExceededError, DPTopicError, ParameterError
from .verify import event_from_description, rounded_up

FORMAT = "dptopic-dataset-ledger"
VERSION = 1
APPLICATION_ID = 0x44505450
"""SQLite's application id of a dptopic ledger file ("DPTP"): a SQLite file without it is another program's."""

ENV = "DPTOPIC_LEDGER"
"""The environment variable naming the ledger file (the Python API's opt-in; the CLI's default file otherwise)."""

LOCK_TIMEOUT = 60.0
"""Seconds a write waits for another process's transaction before it gives up with one line."""

MAX_NAME = 200

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE datasets (name TEXT PRIMARY KEY, cap_epsilon REAL, cap_delta REAL, created TEXT NOT NULL)",
    "CREATE TABLE releases (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL REFERENCES datasets(name),"
    " kind TEXT NOT NULL, trainer TEXT NOT NULL, unit TEXT NOT NULL, events TEXT NOT NULL, epsilon REAL,"
    " delta REAL NOT NULL, guarantee INTEGER NOT NULL, time TEXT NOT NULL, model_path TEXT, note TEXT)",
)
_TABLES = {"meta", "datasets", "releases", "sqlite_sequence"}


def default_path() -> Path:
    """The ledger file used when none is named: ``$XDG_DATA_HOME/dptopic/ledger.sqlite`` (``~/.local/share`` without
    it; ``%LOCALAPPDATA%`` on Windows)."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "dptopic" / "ledger.sqlite"


def ledger_path(path=None, off: bool = False, must_exist: bool = False) -> Path | None:
    """The ledger file a run uses: none when ``off``, else ``path``, else ``$DPTOPIC_LEDGER``, else
    :func:`default_path` (``~`` expanded). ``must_exist``: for reading, a file that is not there is refused."""
    if off:
        if path is not None:
            raise ParameterError("give {ledger} or {no_ledger}, not both.", "ledger", path, others=("no_ledger",),
                                 flag_template="give {ledger} PATH or {no_ledger}, not both.")
        return None
    if path is not None and not str(path).strip():
        raise ParameterError("{ledger} needs a file path (or set {no_ledger}).", "ledger", path,
                             flag_template="{ledger} needs a file path (or give {no_ledger}).")
    env = os.environ.get(ENV, "").strip()
    chosen = Path(os.path.expanduser(path if path is not None else env)) if path is not None or env else default_path()
    if must_exist and not chosen.exists():
        raise ParameterError("no ledger at {path}: nothing has been recorded there yet (give {ledger} or {env} to"
                             " read another).", "ledger", path, flag_template="no ledger at {path}: nothing has been"
                             " recorded there yet (give {ledger} PATH or {env} to read another).", path=chosen, env=ENV)
    return chosen


def check_name(name, what: str = "dataset") -> str:
    """A dataset name: a non-empty line of printable text, at most :data:`MAX_NAME` characters."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        raise DPTopicError(f"invalid {what} name {str(name)[:60]!r}: give a non-empty name of printable characters, at"
                           f" most {MAX_NAME} long (--dataset NAME, dataset=).")
    return name.strip()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ------------------------------------------------------------------------------------------------- events as JSON
def events_to_json(groups) -> str:
    """``[(event, count), ...]`` as the JSON list a report's ``events`` holds (each event's description with its
    count): :func:`events_from_json` re-creates the same events from it."""
    return json.dumps([dict(e.describe(), count=int(n)) for e, n in groups], sort_keys=True, allow_nan=False)


def events_from_json(text: str) -> list:
    """The ``[(event, count), ...]`` a release's JSON describes (:func:`~dptopic.accounting.verify.
    event_from_description` rebuilds each event; its stated epsilon must agree with its parameters)."""
    items = json.loads(text)
    if not isinstance(items, list):
        raise DPTopicError("a release's events are not a list")
    out = []
    for d in items:
        n = d.get("count") if isinstance(d, dict) else None
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise DPTopicError("a release's event has no whole count >= 1")
        out.append((event_from_description(d), n))
    return out


def _merge(groups) -> list:
    merged: dict = {}
    for e, n in groups:
        merged[e] = merged.get(e, 0) + int(n)
    return list(merged.items())


def release_guarantee(groups, delta: float) -> tuple[float, float]:
    """A release's own ``(epsilon, delta)``: the smallest valid figure of its events at ``delta`` (PLD, RDP, or basic
    composition when its events are pure: then delta is 0), as a fit's report names it."""
    from .ledger import (  # loads numpy: 'dptopic budget' opens its ledger without it
        compose_pld, compose_rdp, pure_basic_bound)

    groups = _merge(groups)
    pure = pure_basic_bound(groups)
    d_events = sum(getattr(e, "delta_event", 0.0) * n for e, n in groups)
    if d_events >= delta:        # (epsilon, delta) steps whose own deltas add past delta: basic composition at theirs
        return float(sum(e.epsilon * n for e, n in groups)), float(d_events)
    tight = min(compose_pld(groups, delta), compose_rdp(groups, delta))
    if math.isfinite(pure) and pure <= tight * (1 + 1e-9):
        return pure, 0.0
    return float(tight), float(delta)


def compose_releases(releases: list, delta: float | None = None) -> dict:
    """The total of ``releases`` (dicts with ``groups``, ``epsilon``, ``delta``, ``guarantee``) at ``delta`` (None: the
    releases' deltas added): ``epsilon_total`` is the smallest of PLD and RDP over every event of every release and
    of basic composition (their epsilons added, valid when their deltas add to at most ``delta``);
    ``epsilon_basic``/``delta_basic`` are that sum. A release that claims no guarantee makes the total unbounded
    (``None``)."""
    from .ledger import compose_pld, compose_rdp  # loads numpy: 'dptopic budget' opens its ledger without it

    basic = float(sum(r["epsilon"] for r in releases if r["guarantee"]))
    d_basic = float(sum(r["delta"] for r in releases if r["guarantee"]))
    if delta is None:
        delta = d_basic if d_basic > 0 else max([r["delta"] for r in releases] + [0.0])
    out = {"epsilon_total": 0.0, "delta_total": float(delta), "epsilon_basic": basic, "delta_basic": d_basic,
           "epsilon_method": "no releases"}
    if not releases:
        return out
    without = [r for r in releases if not r["guarantee"]]
    if without:
        out.update(epsilon_total=None, epsilon_basic=None, delta_basic=None,
                   epsilon_method=(f"none: {len(without)} release(s) claim no differential privacy guarantee"
                                   f" (release {without[0]['id']}, {without[0]['trainer']}), so no total bounds"
                                   " what was released"))
        return out
    cands = []
    groups = _merge(g for r in releases for g in r["groups"])
    if 0 < delta < 1:
        cands += [(compose_pld(groups, delta), "PLD over every event of every release"),
                  (compose_rdp(groups, delta), "RDP over every event of every release")]
    if d_basic <= delta * (1 + 1e-12):
        cands.append((basic, "basic composition (the releases' epsilons added)"))
    cands = [(e, m) for e, m in cands if math.isfinite(e)]
    if not cands:
        out.update(epsilon_total=None, epsilon_method=f"none: no figure holds at delta = {delta:.3g}")
        return out
    eps, method = min(cands, key=lambda c: c[0])
    out.update(epsilon_total=float(eps), epsilon_method=method)
    return out


# ------------------------------------------------------------------------------------------------- the file
class LedgerFileError(DPTopicError):
    """The ledger file is not a dptopic ledger (corrupt, or another program's): nothing was spent."""


@dataclass
class DatasetLedger:
    """One ledger file. Opening it checks that it is a dptopic ledger (or creates a new one)."""

    path: Path
    _checked: bool = field(default=False, repr=False)

    def __post_init__(self):
        self.path = Path(os.path.expanduser(str(self.path)))
        if self.path.is_dir():
            raise LedgerFileError(f"ledger {self.path} is a folder: give a file (--ledger PATH, {ENV}).")
        with self._connection() as con:
            self._check_or_create(con)

    def _bad(self, why: str) -> LedgerFileError:
        return LedgerFileError(f"ledger {self.path} {why}: nothing was spent; give another file with --ledger PATH or"
                               f" {ENV}, or move this one away (docs/budget.md).")

    @contextlib.contextmanager
    def _connection(self):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise self._bad(f"cannot be created ({e.strerror or e})") from None
        try:
            con = sqlite3.connect(str(self.path), timeout=LOCK_TIMEOUT, isolation_level=None)
        except sqlite3.Error as e:
            raise self._bad(f"cannot be opened ({e})") from None
        try:
            yield con
        except sqlite3.OperationalError as e:
            if "locked" in str(e) or "busy" in str(e):
                raise DPTopicError(f"ledger {self.path} stayed locked by another run for {LOCK_TIMEOUT:g} s: nothing"
                                   " was spent; run again when it ends.") from None
            raise self._bad(f"could not be read or written ({e})") from None
        except sqlite3.DatabaseError as e:
            raise self._bad(f"is not a dptopic ledger ({e})") from None
        finally:
            con.close()

    def _check_or_create(self, con) -> None:
        app = con.execute("PRAGMA application_id").fetchone()[0]
        if app == APPLICATION_ID:
            self._check_meta(con)
            return
        if app != 0:
            raise self._bad("belongs to another program (its SQLite application id is not dptopic's)")
        con.execute("BEGIN IMMEDIATE")
        try:
            app = con.execute("PRAGMA application_id").fetchone()[0]
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if app == APPLICATION_ID:         # another process created it while this one waited
                con.execute("COMMIT")
                self._check_meta(con)
                return
            if tables:
                raise self._bad("is another program's SQLite file (it has tables of its own)")
            for stmt in _SCHEMA:
                con.execute(stmt)
            con.executemany("INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("version", str(VERSION))])
            con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise

    def _check_meta(self, con) -> None:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"meta", "datasets", "releases"} <= tables:
            raise self._bad("is damaged (its tables are missing)")
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("format") != FORMAT:
            raise self._bad(f"is not a dptopic ledger (its format is {str(meta.get('format'))[:40]!r})")
        try:
            version = int(meta.get("version", ""))
        except ValueError:
            raise self._bad("is damaged (no version)") from None
        if version > VERSION:
            raise self._bad(f"was written by a newer dptopic (ledger version {version}; this one reads up to"
                            f" {VERSION}): upgrade dptopic")

    # ------------------------------------------------------------------------------ reading
    @staticmethod
    def _release(row) -> dict:
        rid, dataset, kind, trainer, unit, events, eps, delta, guarantee, when, path, note = row
        try:
            groups = events_from_json(events)
        except (ValueError, DPTopicError) as e:
            raise DPTopicError(f"release {rid} of dataset {dataset!r} has damaged events ({str(e)[:120]})") from None
        return {"id": rid, "dataset": dataset, "kind": kind, "trainer": trainer, "unit": unit, "groups": groups,
                "events": json.loads(events), "epsilon": eps if eps is not None else math.inf, "delta": delta,
                "guarantee": bool(guarantee), "time": when, "model_path": path, "note": note}

    def _releases(self, con, dataset: str) -> list:
        rows = con.execute("SELECT id, dataset, kind, trainer, unit, events, epsilon, delta, guarantee, time,"
                           " model_path, note FROM releases WHERE dataset = ? ORDER BY id", (dataset,)).fetchall()
        return [self._release(r) for r in rows]

    @staticmethod
    def _cap(con, dataset: str):
        row = con.execute("SELECT cap_epsilon, cap_delta FROM datasets WHERE name = ?", (dataset,)).fetchone()
        return None if row is None or row[0] is None else (float(row[0]), float(row[1]))

    def datasets(self) -> list[str]:
        with self._connection() as con:
            return [r[0] for r in con.execute("SELECT name FROM datasets ORDER BY created, name")]

    def releases(self, dataset: str) -> list:
        with self._connection() as con:
            return self._releases(con, dataset)

    def cap(self, dataset: str):
        with self._connection() as con:
            return self._cap(con, dataset)

    def total(self, dataset: str) -> dict:
        """The dataset's total (:func:`compose_releases`; at the cap's delta when it has a cap) and its number of
        releases (``n_releases``)."""
        with self._connection() as con:
            releases, cap = self._releases(con, dataset), self._cap(con, dataset)
        out = compose_releases(releases, cap[1] if cap else None)
        out["n_releases"] = len(releases)
        out["cap"] = None if cap is None else {"epsilon": cap[0], "delta": cap[1]}
        return out

    def show(self, dataset: str | None = None) -> dict:
        """``{"datasets": [{"name", "releases", "epsilon_total", "delta_total", "cap", ...}]}``, the JSON of
        ``dptopic budget show --json`` (its fields: docs/privacy.md)."""
        with self._connection() as con:
            names = ([r[0] for r in con.execute("SELECT name FROM datasets ORDER BY created, name")]
                     if dataset is None else [dataset])
            if dataset is not None and con.execute("SELECT 1 FROM datasets WHERE name = ?",
                                                   (dataset,)).fetchone() is None:
                raise DPTopicError(f"ledger {self.path} has no dataset {dataset!r}: 'dptopic budget show' lists the"
                                   " datasets it has.")
            per = [(n, self._releases(con, n), self._cap(con, n)) for n in names]
        out = []
        for name, releases, cap in per:
            tot = compose_releases(releases, cap[1] if cap else None)
            out.append({
                "name": name,
                "releases": [{"id": r["id"], "time": r["time"], "kind": r["kind"], "trainer": r["trainer"],
                              "unit": r["unit"], "epsilon": r["epsilon"] if r["guarantee"] else None,
                              "delta": r["delta"] if r["guarantee"] else None, "guarantee": r["guarantee"],
                              "model_path": r["model_path"], "note": r["note"], "events": r["events"]}
                             for r in releases],
                "epsilon_total": tot["epsilon_total"], "delta_total": tot["delta_total"],
                "epsilon_basic": tot["epsilon_basic"], "delta_basic": tot["delta_basic"],
                "epsilon_method": tot["epsilon_method"],
                "units": sorted({r["unit"] for r in releases}),
                "cap": None if cap is None else {"epsilon": cap[0], "delta": cap[1]},
            })
        return {"datasets": out}

    # ------------------------------------------------------------------------------ writing
    @contextlib.contextmanager
    def _write(self):
        with self._connection() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise

    @staticmethod
    def _ensure_dataset(con, dataset: str) -> None:
        con.execute("INSERT OR IGNORE INTO datasets (name, created) VALUES (?, ?)", (dataset, _now()))

    def set_cap(self, dataset: str, epsilon, delta) -> None:
        """Cap ``dataset`` at ``(epsilon, delta)``; ``epsilon`` None removes its cap. A cap below what the dataset has
        already spent is kept (it refuses every later release) and the caller may say so."""
        from .._validation import Real, validate_value  # loads numpy: 'dptopic budget' opens its ledger without it

        dataset = check_name(dataset)
        if epsilon is not None:
            epsilon = float(validate_value("epsilon", epsilon, [Real(0, None, "neither")]))
            delta = float(validate_value("delta", delta, [Real(0, 1, "neither")]))
        with self._write() as con:
            self._ensure_dataset(con, dataset)
            con.execute("UPDATE datasets SET cap_epsilon = ?, cap_delta = ? WHERE name = ?",
                        (epsilon, None if epsilon is None else delta, dataset))

    def debit(self, dataset: str, trainer: str, unit: str, groups, delta: float, *, kind: str = "fit",
              guarantee: bool = True, release_id: int | None = None, note: str | None = None,
              planned=()) -> int:
        """Record a release of ``groups`` (``[(event, count), ...]``) from ``dataset`` and return its id; with
        ``release_id``, add ``groups`` to that release instead (more of one fit, such as replayed sweeps). Refused
        with :class:`~dptopic.errors.BudgetExceededError`, nothing written, when the dataset's cap would be
        exceeded. Call it before the release's noise is drawn. ``planned``: the rest of this release, added later
        with ``release_id`` (a run's fit after its private vocabulary): counted in the cap's check now, not
        written."""
        dataset = check_name(dataset)
        groups = [(e, int(n)) for e, n in groups]
        planned = [(e, int(n)) for e, n in planned]
        text = events_to_json(groups)
        with self._write() as con:
            self._ensure_dataset(con, dataset)
            releases = self._releases(con, dataset)
            if release_id is not None:
                mine = next((r for r in releases if r["id"] == release_id), None)
                if mine is None:
                    raise DPTopicError(f"release {release_id} is not in dataset {dataset!r} of ledger {self.path}")
                groups = _merge(mine["groups"] + groups)
                text = events_to_json(groups)
                releases = [r for r in releases if r["id"] != release_id]
            eps, d = release_guarantee(groups, delta) if guarantee else (math.inf, float(delta))
            new = {"id": release_id or -1, "trainer": trainer, "groups": groups, "epsilon": eps, "delta": d,
                   "guarantee": guarantee}
            cap = self._cap(con, dataset)
            if cap is not None:
                if planned:     # the whole release, as it will be once its planned part is added
                    whole = _merge(groups + planned)
                    e_w, d_w = release_guarantee(whole, delta) if guarantee else (math.inf, float(delta))
                    new = dict(new, groups=whole, epsilon=e_w, delta=d_w)
                tot = compose_releases(releases + [new], cap[1])
                spent = tot["epsilon_total"]
                if spent is None or spent > cap[0] * (1 + 1e-9):
                    before = compose_releases(releases, cap[1])["epsilon_total"] if releases else 0.0
                    raise BudgetExceededError(
                        f"dataset {dataset!r} is capped at epsilon = {cap[0]:g} (delta = {cap[1]:g}) and has spent"
                        f" {_fmt(before)} over {len(releases)} release(s); this {trainer} run would bring it to"
                        f" {_fmt(spent)}: refused before any noise was drawn, nothing written (raise the cap with"
                        " 'dptopic budget cap', or spend less; docs/budget.md).")
            if release_id is not None:
                con.execute("UPDATE releases SET events = ?, epsilon = ?, delta = ?, guarantee = ? WHERE id = ?",
                            (text, eps if math.isfinite(eps) else None, d, int(guarantee), release_id))
                return release_id
            cur = con.execute(
                "INSERT INTO releases (dataset, kind, trainer, unit, events, epsilon, delta, guarantee, time, note)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (dataset, kind, trainer, unit, text, eps if math.isfinite(eps) else None, d, int(guarantee), _now(),
                 note))
            return int(cur.lastrowid)

    def mark_no_guarantee(self, release_id: int, note: str) -> None:
        """Mark a recorded release as claiming no guarantee (its fit turned out to claim none)."""
        with self._write() as con:
            con.execute("UPDATE releases SET guarantee = 0, epsilon = NULL, note = ? WHERE id = ?", (note, release_id))

    def set_model_path(self, release_id: int, path) -> None:
        """Where the release's model was saved (``model.save``)."""
        with self._write() as con:
            con.execute("UPDATE releases SET model_path = ? WHERE id = ?", (str(path), int(release_id)))


def _fmt(x) -> str:
    if x is None or not math.isfinite(x):
        return "no bound"
    return f"{rounded_up(x, 4):g}"


def total_line(total: dict) -> str:
    """``this dataset's total so far: epsilon = X over N releases`` (the card's and the report's line)."""
    n = total.get("n_releases", 0)
    eps = total.get("epsilon_total")
    what = f"epsilon = {_fmt(eps)}" if eps is not None else "no bound (a release claims no guarantee)"
    d = total.get("delta_total")
    if eps is not None and d:
        what += f" (delta = {d:.3g})"
    return f"this dataset's total so far: {what} over {n} release{'s' if n != 1 else ''}"


# ------------------------------------------------------------------------------------------------- this process's charge
SESSION: ContextVar = ContextVar("dptopic_ledger_session", default=None)
"""The command line's ledger for the fits it runs: ``(path or None when off, dataset name or None)``."""


@contextlib.contextmanager
def session(path, dataset: str | None = None):
    """Fits inside charge ``path`` (None: the ledger is off, whatever ``DPTOPIC_LEDGER`` says) on ``dataset`` unless a
    model names its own; the command line runs each command in one."""
    token = SESSION.set((None if path is None else Path(path), dataset))
    try:
        yield
    finally:
        SESSION.reset(token)


def open_ledger(path) -> DatasetLedger:
    return DatasetLedger(Path(path))
