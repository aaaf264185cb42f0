"""The dataset ledger on a PostgreSQL database shared by several hosts (accounting.ledger_store): the same semantics
as a file, debits that never overshoot a cap together, and a server that goes away mid-debit (a throwaway cluster,
as the service's tests start one)."""
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from dptopic.accounting import PureDPEvent
from dptopic.accounting.dataset_ledger import DatasetLedger, Documents
from dptopic.accounting.gaussian import SubsampledGaussianEvent, calibrate_noise_multiplier
from dptopic.errors import BudgetExceededError, DPTopicError
from helpers import one_line_stderr, run_dptopic
from service_helpers import PG_BIN, _as_pg_user, throwaway_postgres

pytestmark = pytest.mark.postgres
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
    from dptopic.accounting.dataset_ledger import DatasetLedger
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


def test_a_newer_shared_ledger_is_refused(url):
    from sqlalchemy import create_engine, text

    DatasetLedger(url)
    eng = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with eng.begin() as c:
        c.execute(text("UPDATE dptopic_ledger.meta SET value = '99' WHERE key = 'version'"))
    eng.dispose()
    with pytest.raises(DPTopicError, match="newer dptopic"):
        DatasetLedger(url)


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
