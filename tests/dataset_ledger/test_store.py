"""Where a dataset ledger lives (dataset_ledger.store). A file: corrupt, foreign, newer, locked, read-only or
unreachable files refused in one line, reading that never writes, a version-1 file upgraded. A PostgreSQL database
shared by several hosts: the same semantics as a file, debits that never overshoot a cap together, and a server that
goes away mid-debit (a throwaway cluster, as the service's tests start one)."""
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from dptopic.accounting import PureDPEvent
from dptopic.accounting.gaussian import SubsampledGaussianEvent, calibrate_noise_multiplier
from dptopic.dataset_ledger.identity import Documents
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.dataset_ledger.releases import events_to_json, release_guarantee
from dptopic.dataset_ledger.store import LedgerFileError
from dptopic.errors import BudgetExceededError, DPTopicError, ParameterError
from helpers import one_line_stderr, run_dptopic
from service_helpers import PG_BIN, _as_pg_user, throwaway_postgres

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(scope="module")
def pg():
    yield from throwaway_postgres()


@pytest.fixture
def url(pg):
    """A fresh database of the cluster for each test: ``postgresql://`` as a user writes it."""
    name = f"ledger_{os.getpid()}_{time.monotonic_ns()}"
    r = subprocess.run(_as_pg_user([str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(pg.port), "-U",
                                    "postgres", name]), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return f"postgresql://postgres@127.0.0.1:{pg.port}/{name}"


def _plan(eps=1.0):
    return [(SubsampledGaussianEvent(calibrate_noise_multiplier(eps, 1e-5, 1.0, 1), 1.0), 1)]


def _docs(n, start=1, persons=None):
    return Documents(np.arange(start, start + n, dtype=np.uint64) * np.uint64(7919), persons)


# ------------------------------------------------------------------ a file
@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b"\x00" * 50])
def test_a_corrupt_file_is_refused_in_one_line(tmp_path, content):
    p = tmp_path / "l.sqlite"
    p.write_bytes(content)
    with pytest.raises(LedgerFileError, match="nothing was spent") as e:
        DatasetLedger(p)
    assert "\n" not in str(e.value)
    assert p.read_bytes() == content


def test_another_programs_sqlite_file_is_refused(tmp_path):
    p = tmp_path / "other.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE things (x)")
    con.commit()
    con.close()
    with pytest.raises(LedgerFileError, match="another program"):
        DatasetLedger(p)
    con = sqlite3.connect(p)
    con.execute("PRAGMA application_id = 12345")
    con.close()
    with pytest.raises(LedgerFileError, match="another program"):
        DatasetLedger(p)


def test_a_ledger_of_a_newer_version_is_refused(tmp_path):
    p = tmp_path / "l.sqlite"
    DatasetLedger(p)
    con = sqlite3.connect(p)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'version'")
    con.commit()
    con.close()
    with pytest.raises(LedgerFileError, match="newer dptopic"):
        DatasetLedger(p)


def test_reading_never_creates_or_changes_a_ledger(tmp_path):
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(LedgerFileError, match="is an empty file, not a ledger"):
        DatasetLedger(empty, read_only=True)
    assert empty.read_bytes() == b""
    with pytest.raises(DPTopicError, match="no ledger at"):
        DatasetLedger(tmp_path / "none.sqlite", read_only=True)
    assert not (tmp_path / "none.sqlite").exists()


def test_a_version_one_ledger_is_read_and_upgraded_on_its_first_write(tmp_path):
    p = tmp_path / "v1.sqlite"
    con = sqlite3.connect(p)
    con.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE datasets (name TEXT PRIMARY KEY, cap_epsilon REAL, cap_delta REAL, created TEXT NOT NULL);
        CREATE TABLE releases (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL REFERENCES datasets(name),
          kind TEXT NOT NULL, trainer TEXT NOT NULL, unit TEXT NOT NULL, events TEXT NOT NULL, epsilon REAL,
          delta REAL NOT NULL, guarantee INTEGER NOT NULL, time TEXT NOT NULL, model_path TEXT, note TEXT);
        INSERT INTO meta VALUES ('format', 'dptopic-dataset-ledger'), ('version', '1');
        INSERT INTO datasets VALUES ('old', NULL, NULL, '2026-01-01T00:00:00Z');
        PRAGMA application_id = 1146115152;
    """)
    eps, d = release_guarantee(_plan(), 1e-5)
    con.execute("INSERT INTO releases (dataset, kind, trainer, unit, events, epsilon, delta, guarantee, time) VALUES"
                " ('old', 'fit', 'T', 'document', ?, ?, ?, 1, '2026-01-01T00:00:00Z')",
                (events_to_json(_plan()), eps, d))
    con.commit()
    con.close()
    before = p.read_bytes()
    assert DatasetLedger(p, read_only=True).total("old")["n_releases"] == 1
    assert p.read_bytes() == before
    led = DatasetLedger(p)
    led.debit("old", "T", "document", _plan(), 1e-5, documents=_docs(5))
    tot = led.total("old")
    assert tot["n_releases"] == 2 and 1.0 < tot["epsilon_total"] < 2.0


def test_a_symbolic_link_loop_and_a_long_path_are_one_line(tmp_path):
    loop = tmp_path / "loop.sqlite"
    os.symlink(loop, loop)
    for ro in (False, True):
        with pytest.raises(LedgerFileError, match="symbolic link that leads nowhere"):
            DatasetLedger(loop, read_only=ro)
    with pytest.raises(LedgerFileError, match="too long") as e:
        DatasetLedger(tmp_path / ("x" * 300) / "l.sqlite")
    assert "OSError" not in str(e.value)


def test_a_locked_ledger_gives_up_in_one_line_with_nothing_spent(tmp_path, monkeypatch):
    from dptopic.dataset_ledger import store

    p = tmp_path / "l.sqlite"
    DatasetLedger(p).debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
    monkeypatch.setattr(store, "LOCK_TIMEOUT", 0.4)
    holder = sqlite3.connect(p, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with warnings.catch_warnings(record=True) as said, pytest.raises(DPTopicError, match="stayed locked") as e:
            warnings.simplefilter("always")
            DatasetLedger(p).debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
        assert "nothing was spent" in str(e.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(DatasetLedger(p).releases("d")) == 1
    waits = [str(w.message) for w in said if issubclass(w.category, store.LedgerWaitWarning)]
    assert waits == [f"ledger {p} is held by another run's transaction: waiting up to 0.4 s for it to end (nothing"
                     " is spent while it waits)."]


def _released_once_said(monkeypatch, release):
    """``store.say_waiting`` that, once it has said so, ends the other run's transaction (``release``): the wait
    that follows then finds the ledger free."""
    from dptopic.dataset_ledger import store

    say = store.say_waiting

    def then_release(where):
        say(where)
        release()

    monkeypatch.setattr(store, "say_waiting", then_release)


def test_a_write_that_finds_the_file_held_says_so_once_and_goes_on_when_it_is_free(tmp_path, monkeypatch):
    from dptopic.dataset_ledger import store

    p = tmp_path / "l.sqlite"
    led = DatasetLedger(p)
    monkeypatch.setattr(store, "LOCK_TIMEOUT", 30.0)
    holder = sqlite3.connect(p, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    _released_once_said(monkeypatch, lambda: holder.execute("ROLLBACK"))
    plan, docs = _plan(), _docs(3)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        led.debit("d", "T", "document", plan, 1e-5, documents=docs)
    holder.close()
    assert [issubclass(w.category, store.LedgerWaitWarning) for w in said] == [True]
    assert len(led.releases("d")) == 1


@pytest.mark.parametrize("text, where", [("sqlite:///rel/l.sqlite", "rel/l.sqlite"), ("SQLite:////abs/l.sqlite",
                                                                                        "/abs/l.sqlite"),
                                         ("l.sqlite", "l.sqlite"), ("C://x", "C://x"), ("  ~/l.sqlite ", None)])
def test_a_file_is_named_by_a_path_or_a_sqlite_url_in_any_case(text, where):
    from dptopic.dataset_ledger.store import is_url, location_of

    got = location_of(text)
    assert isinstance(got, Path) and not is_url(text)
    assert got == (Path(where) if where is not None else Path.home() / "l.sqlite")


@pytest.mark.parametrize("text", ["postgresql://me@db/l", "POSTGRESQL://me@db/l", "Postgres://me@db/l",
                                  "postgresql+psycopg2://me@db/l", "PostgreSQL+PG8000://me@db/l"])
def test_a_database_is_named_by_its_scheme_in_any_case_and_with_any_driver(text):
    from dptopic.dataset_ledger.store import is_url, location_of

    assert is_url(text) and location_of(text) == text.split("://")[0].lower() + "://me@db/l"


@pytest.mark.parametrize("text, says", [
    ("mysql://x@y/z", "is a mysql:// URL"), ("HTTP://host/l.sqlite", "is a http:// URL"),
    ("file:///tmp/l.sqlite", "is a file:// URL"), ("postgres+psycopg://x@y/z", "is a postgres+psycopg:// URL"),
    ("sqlite://host/l.sqlite", "names no file"), ("sqlite:///:memory:", "names no file"),
    ("sqlite://", "names no file"),
])
def test_a_url_of_another_scheme_is_refused_in_one_line_and_creates_nothing(text, says, tmp_path, monkeypatch):
    """``--ledger mysql://x@y/z`` created a SQLite file at ./mysql:/x@y/z: every scheme but SQLite's and
    PostgreSQL's is refused, naming the ledger, before anything is opened."""
    from dptopic.dataset_ledger.location import ledger_path
    from dptopic.dataset_ledger.store import ENV

    monkeypatch.chdir(tmp_path)
    for open_it in (lambda: DatasetLedger(text), lambda: DatasetLedger(text, read_only=True),
                    lambda: ledger_path(text)):
        with pytest.raises(ParameterError, match=says.replace("+", "\\+")) as e:
            open_it()
        assert e.value.parameter == "ledger" and "\n" not in str(e.value)
        assert e.value.message({"ledger": "--ledger"}).startswith(f"--ledger {text.strip()} ")
    monkeypatch.setenv(ENV, text)
    with pytest.raises(DPTopicError, match=f"^{ENV}=") as e:
        ledger_path()
    assert says in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_ledger_is_read_and_refused_for_writing_in_one_line(tmp_path):
    p = tmp_path / "l.sqlite"
    DatasetLedger(p).debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
    os.chmod(p, 0o444)
    os.chmod(tmp_path, 0o555)
    try:
        if os.access(p, os.W_OK):
            pytest.skip("this user writes read-only files (root)")
        assert DatasetLedger(p, read_only=True).total("d")["n_releases"] == 1
        with pytest.raises(LedgerFileError, match="read-only|cannot be opened|could not be read or written"):
            DatasetLedger(p).debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
    finally:
        os.chmod(tmp_path, 0o755)
        os.chmod(p, 0o644)


def test_a_read_only_file_is_refused_for_writing_in_one_line(tmp_path, monkeypatch):
    """As a user who may not write it finds it (whatever user runs the tests): SQLite's own refusal, in one line."""
    from dptopic.dataset_ledger.store import SQLiteStore

    p = tmp_path / "l.sqlite"
    DatasetLedger(p).debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
    monkeypatch.setattr(SQLiteStore, "_connect", lambda self: sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                                                               isolation_level=None))
    with pytest.raises(LedgerFileError, match="is read-only") as e:
        DatasetLedger(p).debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
    assert "nothing was spent" in str(e.value) and "\n" not in str(e.value)


def test_a_ledger_that_cannot_be_used_is_refused_in_the_ledger_parameter(tmp_path):
    """The ledger's file refusals told a Python caller to "give --ledger PATH": they name the parameter ``ledger``,
    which the command line writes as its flag."""
    from dptopic.dataset_ledger.store import LedgerMissing

    (tmp_path / "folder").mkdir()
    for path, read_only, cls in ((tmp_path / "folder", False, LedgerFileError),
                                 (tmp_path / "none.sqlite", True, LedgerMissing)):
        with pytest.raises(cls) as e:
            DatasetLedger(path, read_only=read_only).show()
        assert isinstance(e.value, ParameterError) and e.value.parameter == "ledger", e.value
        assert "ledger= PATH" in str(e.value) and "--" not in str(e.value), str(e.value)
        assert "--ledger PATH" in e.value.message({"ledger": "--ledger"})


# ------------------------------------------------------------------ a shared PostgreSQL database
@pytest.mark.postgres
def test_a_shared_ledger_keeps_the_same_totals_as_a_file(url, tmp_path):
    docs = Documents(np.arange(1, 121, dtype=np.uint64), [f"p{i % 30}" for i in range(120)])
    both = [DatasetLedger(url), DatasetLedger(tmp_path / "l.sqlite")]
    for led in both:
        led.debit("posts", "T", "document", _plan(), 1e-5, documents=docs)
        led.debit(None, "T", "user", _plan(0.5), 1e-5, documents=Documents(docs.digests[10:], docs.persons[10:]))
        led.set_cap("posts", 30.0, 1e-5)
        led.set_person_cap(30.0, 1e-5)
    totals = [led.total("posts") for led in both]
    assert totals[0]["epsilon_total"] == pytest.approx(totals[1]["epsilon_total"], rel=1e-9)
    assert totals[0]["unit"] == "person" and totals[0]["n_releases"] == 2
    assert both[0].person_total("p3")["epsilon"] == pytest.approx(both[1].person_total("p3")["epsilon"])
    shows = [led.show("posts")["datasets"][0] for led in both]
    for x in shows:
        x.pop("overlaps")           # the other dataset's name is keyed: each ledger has its own key
        for r in x["releases"]:
            r.pop("time"), r.pop("documents")
    assert shows[0] == shows[1]
    with pytest.raises(BudgetExceededError):
        both[0].debit("posts", "T", "document", _plan(30.0), 1e-5, documents=docs)
    plan = DatasetLedger(url, read_only=True).plan("posts", "T", "document", _plan(), 1e-5)
    assert not plan["refused"] and len(plan["caps"]) == 3


DEBITS = textwrap.dedent("""
    import os, sys, time
    from dptopic.accounting import PureDPEvent
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.errors import BudgetExceededError
    led = DatasetLedger(sys.argv[1])
    open(sys.argv[2] + "." + str(os.getpid()), "w").close()     # ready
    while not os.path.exists(sys.argv[2]):                        # start together
        time.sleep(0.002)
    said = []
    for _ in range(int(sys.argv[3])):
        try:
            led.debit("shared", "T", "document", [(PureDPEvent(0.25), 1)], 1e-5)
            said.append("a")
        except BudgetExceededError:
            said.append("r")
    print("".join(said))
""")


@pytest.mark.parametrize("processes, debits, cap", [(3, 10, 2.0),
                                                    pytest.param(8, 50, 10.0, marks=pytest.mark.slow)])
@pytest.mark.postgres
def test_concurrent_processes_never_overshoot_one_cap(url, tmp_path, processes, debits, cap):
    """Debits of a pure 0.25 from several processes at once race against one cap (8 processes x 50 debits against
    a cap of 10 in the slow run, which admits 68 of the 400 at delta 1e-5): the cap admits exactly as many as it
    holds, and never more, across processes."""
    DatasetLedger(url).set_cap("shared", cap, 1e-5)
    go = tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-c", DEBITS, url, str(go), str(debits)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(processes)]
    deadline = time.time() + 120
    while len(list(tmp_path.glob("go.*"))) < len(procs) and time.time() < deadline \
            and all(p.poll() is None for p in procs):
        time.sleep(0.05)
    go.touch()
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-800:] for o in outs]
    admitted = sum(o[0].count("a") for o in outs)
    led = DatasetLedger(url)
    n = len(led.releases("shared"))
    assert n == admitted and 0 < admitted < processes * debits
    total = led.total("shared")
    assert total["epsilon_total"] <= cap * (1 + 1e-9)
    with pytest.raises(BudgetExceededError):      # the cap was reached, not merely approached
        led.debit("shared", "T", "document", [(PureDPEvent(0.25), 1)], 1e-5)


def _restart(pg, stop: bool = True, start: bool = True) -> None:
    opts = f"-p {pg.port} -k {pg.root} -c listen_addresses=127.0.0.1"
    if stop:
        subprocess.run(_as_pg_user([str(PG_BIN / "pg_ctl"), "-D", str(pg.data), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, timeout=60)
    if start:
        r = subprocess.run(_as_pg_user([str(PG_BIN / "pg_ctl"), "-D", str(pg.data), "-o", opts, "-l",
                                        str(pg.root / "pg.log"), "-w", "-t", "60", "start"]),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr


@pytest.mark.postgres
def test_a_server_that_goes_away_mid_debit_spends_nothing_and_draws_no_noise(pg, url, planted, monkeypatch):
    from dptopic.models import DocDPCooccurrence, docdp_cooc

    led = DatasetLedger(url)
    led.debit("posts", "T", "document", _plan(), 1e-5, documents=Documents(np.arange(1, 10, dtype=np.uint64)))
    drawn = []
    real = docdp_cooc.gaussian_mechanism
    monkeypatch.setattr(docdp_cooc, "gaussian_mechanism", lambda *a, **k: drawn.append(1) or real(*a, **k))
    original = DatasetLedger._check_caps

    def dies_midway(self, tx, state, new, trainer):
        _restart(pg, start=False)         # the server goes away inside the transaction, before its commit
        return original(self, tx, state, new, trainer)

    monkeypatch.setattr(DatasetLedger, "_check_caps", dies_midway)
    m = DocDPCooccurrence(n_topics=3, epsilon=1.0, ledger=url, dataset="posts")
    try:
        with warnings.catch_warnings(), pytest.raises(DPTopicError, match="went away") as e:
            warnings.simplefilter("ignore")
            m.fit(planted.corpus)
    finally:
        _restart(pg, stop=False)
    monkeypatch.setattr(DatasetLedger, "_check_caps", original)
    assert "nothing was spent" in str(e.value) and "\n" not in str(e.value)
    assert drawn == [] and not hasattr(m, "components_")
    assert len(DatasetLedger(url).releases("posts")) == 1        # the debit did not commit: nothing recorded


@pytest.mark.postgres
def test_an_unreachable_or_foreign_database_is_one_line(pg, url):
    from sqlalchemy import create_engine, text

    with pytest.raises(DPTopicError, match="could not be reached") as e:
        DatasetLedger(f"postgresql://postgres@127.0.0.1:{pg.port + 1}/none").total("x")
    assert "\n" not in str(e.value) and "nothing was spent" in str(e.value)
    with pytest.raises(DPTopicError, match="no ledger at"):
        DatasetLedger(url, read_only=True)
    eng = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with eng.begin() as c:
        c.execute(text("CREATE SCHEMA dptopic_ledger"))
        c.execute(text("CREATE TABLE dptopic_ledger.things (x int)"))
    eng.dispose()
    with pytest.raises(DPTopicError, match="of another program"):
        DatasetLedger(url)


@pytest.mark.postgres
def test_a_shared_ledger_is_reached_whatever_the_case_of_its_scheme_and_its_driver(url):
    """``--ledger POSTGRESQL://...`` was a SQLAlchemy traceback; any driver is read with psycopg."""
    DatasetLedger(url).debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
    rest = url.split("://", 1)[1]
    for text in (f"POSTGRESQL://{rest}", f"Postgres://{rest}", f"postgresql+psycopg2://{rest}"):
        assert len(DatasetLedger(text, read_only=True).releases("d")) == 1


@pytest.mark.postgres
def test_a_held_shared_ledger_is_waited_for_once_said_and_at_most_its_timeout(url, monkeypatch):
    """A PostgreSQL ledger waited out another transaction's lock in silence, for as long as it was held: a write now
    says once that it waits and for what, waits at most LOCK_TIMEOUT, and gives up in one line with nothing spent;
    a lock released within the wait lets it through."""
    import psycopg

    from dptopic.dataset_ledger import store

    led = DatasetLedger(url)
    led.debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
    monkeypatch.setattr(store, "LOCK_TIMEOUT", 1.0)
    holder = psycopg.connect(url)
    holder.execute("LOCK TABLE dptopic_ledger.meta IN SHARE ROW EXCLUSIVE MODE")      # a transaction, held open
    try:
        with warnings.catch_warnings(record=True) as said, pytest.raises(DPTopicError, match="stayed locked") as e:
            warnings.simplefilter("always")
            led.debit("d", "T", "document", _plan(), 1e-5, documents=_docs(3))
        assert "nothing was spent" in str(e.value) and "\n" not in str(e.value)
        assert [str(w.message) for w in said if issubclass(w.category, store.LedgerWaitWarning)] == [
            f"ledger {led.where} is held by another run's transaction: waiting up to 1 s for it to end (nothing is"
            " spent while it waits)."]
        assert len(led.releases("d")) == 1
        monkeypatch.setattr(store, "LOCK_TIMEOUT", 30.0)
        _released_once_said(monkeypatch, holder.rollback)
        plan, docs = _plan(), _docs(3)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            led.debit("d", "T", "document", plan, 1e-5, documents=docs)
        assert [issubclass(w.category, store.LedgerWaitWarning) for w in said] == [True]
        assert len(led.releases("d")) == 2
    finally:
        holder.close()


@pytest.mark.postgres
def test_a_newer_shared_ledger_is_refused(url):
    from sqlalchemy import create_engine, text

    DatasetLedger(url)
    eng = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with eng.begin() as c:
        c.execute(text("UPDATE dptopic_ledger.meta SET value = '99' WHERE key = 'version'"))
    eng.dispose()
    with pytest.raises(DPTopicError, match="newer dptopic"):
        DatasetLedger(url)


@pytest.mark.postgres
def test_the_command_line_trains_against_a_shared_ledger(url, tmp_path):
    (tmp_path / "docs.txt").write_text("\n".join(["apple banana cherry grape lemon", "river mountain valley ocean"]
                                                 * 40))
    for i in range(2):
        r = run_dptopic("train", "--algorithm", "docdp-cooc", "--corpus", tmp_path / "docs.txt", "--epsilon", "1",
                        "--topics", "2", "--test-size", "0", "--quiet", "--ledger", url, "--out", tmp_path / f"m{i}")
        assert r.returncode == 0, r.stderr
    r = run_dptopic("budget", "show", "--ledger", url)
    assert r.returncode == 0 and "over 2 release(s)" in r.stdout and "postgres@127.0.0.1" in r.stdout
    r = run_dptopic("budget", "show", "--ledger", url.replace("/ledger_", "/nope_"))
    assert "could not be reached" in one_line_stderr(r)
