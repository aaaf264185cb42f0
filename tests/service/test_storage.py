"""What a database binds of FedLDA's settings on its first start (``service/storage.py``)."""
import re

import pytest

from dptopic.service.storage import StorageError, _check_fed

pytest.importorskip("sqlalchemy")
import json  # noqa: E402
import sqlite3  # noqa: E402
from pathlib import Path  # noqa: E402

from sqlalchemy import insert, select  # noqa: E402

from conftest import cli_ok  # noqa: E402
from dptopic.cli.main import main  # noqa: E402
from dptopic.service import ServiceConfig  # noqa: E402
from dptopic.service.storage import (  # noqa: E402
    SCHEMA_VERSION,
    Storage,
    Submission,
    foreign_tables,
    reports,
    schema_table,
    sqlite_synchronous,
    submissions,
)
from service_helpers import free_port, make_data, throwaway_postgres_url  # noqa: E402

BOUND = {"fed_epsilon": 2.0, "fed_topics": 5, "fed_failure_rate": 0.2, "fed_pad_length": 10}


def test_a_failure_rate_stored_by_an_earlier_start_binds_nothing():
    """serve refuses --fed-failure-rate (its rounds use the 'none' rule, which has none): a database first started
    with another value must still start with the default, or it could never be started again."""
    _check_fed(dict(BOUND), {**BOUND, "fed_failure_rate": 0.1}, lambda: True)


def test_a_setting_that_binds_the_rounds_is_still_checked():
    with pytest.raises(StorageError, match="fed_topics"):
        _check_fed(dict(BOUND), {**BOUND, "fed_failure_rate": 0.1, "fed_topics": 6}, lambda: True)


# ---------------------------------------------------------------------------------------------------------------------
# Storage layer and CLI of the service without a server: migrations, settings binding, group commit
# outcomes, the version-guarded training commit, and one-line CLI errors.


@pytest.fixture
def storage(tmp_path):
    st = Storage(f"sqlite:///{tmp_path / 's.db'}")
    yield st
    st.close()


def test_migrations_are_recorded_and_a_newer_schema_is_refused(tmp_path, storage):
    with storage.read() as c:
        versions = [r.version for r in c.execute(schema_table.select().order_by(schema_table.c.version))]
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert Storage(storage.url).schema_version() == SCHEMA_VERSION  # re-opening applies nothing twice
    with storage.write() as c:
        c.execute(insert(schema_table).values(version=SCHEMA_VERSION + 1, description="future", applied_at=0.0))
    with pytest.raises(StorageError, match="newer than this dptopic supports"):
        Storage(storage.url)


def test_settings_are_bound_on_first_start(storage):
    storage.bind_settings({"vocabulary_sha256": "abc", "f": 0.2})
    storage.bind_settings({"vocabulary_sha256": "abc", "f": 0.2})
    with pytest.raises(StorageError, match="same vocabulary, report_kind and epsilon, or use a new database") as e:
        storage.bind_settings({"vocabulary_sha256": "abc", "f": 0.3})
    assert {"vocabulary", "report_kind", "database"} <= set(e.value.parameters)       # the CLI writes their flags


def test_other_report_kind_is_refused_as_such_not_by_its_f(tmp_path):
    """Real settings of each kind: the kind differs first, f then differs only as its consequence."""
    from dptopic.service.app import Service
    words, _ = make_data(tmp_path, vocab_size=30, n_docs=5, n_prior=5)
    url = f"sqlite:///{tmp_path / 'k.db'}"
    word = Service(ServiceConfig(words, 0.2, database=url), start_trainer=False)
    doc = Service(ServiceConfig(words, None, database=url, report_kind="document", epsilon_doc=6.0),
                  start_trainer=False)
    word.preflight()
    with pytest.raises(StorageError) as e:
        doc.preflight()
    msg = str(e.value)
    assert "holds word-level reports" in msg and "document-level" in msg and "f=" not in msg and "\n" not in msg
    url2 = f"sqlite:///{tmp_path / 'k2.db'}"
    doc.cfg.database = word.cfg.database = url2
    doc.preflight()
    with pytest.raises(StorageError, match="holds document-level reports but the server was started for word") as e:
        word.preflight()
    # in Python's names; the command line writes the same line in its flags
    assert "(report_kind='word')" in str(e.value) and "start it with report_kind='document', or use a new database."\
        in str(e.value)
    assert e.value.parameter == "report_kind" and "database" in e.value.parameters
    flags = e.value.message({"report_kind": "--report-kind", "database": "--database"})
    assert "(--report-kind word)" in flags and flags.endswith("start it with --report-kind document, or use a new"
                                                              " --database.")


def test_a_missing_folder_of_a_sqlite_database_is_refused_naming_the_database(tmp_path):
    from dptopic.errors import ParameterError
    from dptopic.service.storage import check_backend

    url = f"sqlite:///{tmp_path / 'no' / 's.db'}"
    with pytest.raises(ParameterError) as e:
        check_backend(url)
    assert isinstance(e.value, StorageError) and e.value.parameter == "database" and "--" not in str(e.value)
    assert str(e.value).startswith(f"cannot use database {url!r}: the folder")
    assert str(e.value).endswith("give a database path in an existing folder.")


def test_group_commit_outcomes_in_one_transaction(storage):
    a = Submission("key-aaaaaaaa", "h1", "p", [b"\x01", b"\x02"])
    out = storage.store([a, Submission("key-aaaaaaaa", "h1", "p", [b"\x01", b"\x02"]),
                         Submission("key-aaaaaaaa", "h2", "p", [b"\x03"]), Submission("key-bbbbbbbb", "h3", None, [b"\x04"])])
    assert [o for o, _ in out] == ["stored", "replayed", "conflict", "stored"]
    assert storage.count_reports() == 3
    assert [p for _, p in storage.fetch_reports(0, 10)] == [b"\x01", b"\x02", b"\x04"]


def test_training_commit_is_guarded_by_the_model_version(storage):
    storage.store([Submission("key-cccccccc", "h", None, [b"\x00"] * 5)])
    m = storage.active_model()
    assert storage.commit_batch(m["id"], m["version"], 1, 3, 3, None, None, "skipped", "test", 0.0)
    # a second writer holding the old version (or an old cursor) changes nothing
    assert not storage.commit_batch(m["id"], m["version"], 1, 3, 3, None, None, "skipped", "again", 0.0)
    assert not storage.commit_batch(m["id"], m["version"] + 1, 2, 3, 2, None, None, "skipped", "back", 0.0)
    m2 = storage.active_model()
    assert (m2["version"], m2["last_report_id"], m2["n_reports_used"]) == (m["version"] + 1, 3, 3)
    assert len(storage.batches()) == 1
    info = storage.rotate("test")
    assert info["starts_after_report"] == 3 and storage.active_model()["last_report_id"] == 3


def test_config_refuses_a_short_admin_token():
    with pytest.raises(Exception, match="shorter than 16"):
        ServiceConfig(["a", "b"], 0.2, admin_token="short")


@pytest.mark.parametrize("key, value", [("fed_pad_length", 10**11), ("fed_topics", 10**6), ("train_interval", 1e300),
                                        ("n_iter", 10**9), ("fed_report_words", 10**10)])
def test_config_bounds_what_would_exhaust_memory_or_timers(key, value):
    with pytest.raises(Exception, match=f"invalid {key}"):
        ServiceConfig(["a", "b"], 0.2, **{key: value})


def test_cli_errors_are_one_line(tmp_path, capsys):
    make_data(tmp_path)
    args = ["serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--host", "0.0.0.0"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "--allow-remote" in err
    port = free_port()  # nothing listens there
    assert main(["submit", "--server", f"http://127.0.0.1:{port}", "--corpus", str(tmp_path / "docs.txt"),
                 "--retries", "0", "--timeout", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "running" in err
    # FedLDA parameters with which an update would carry no entry: refused at start-up, before any database
    db = tmp_path / "never.db"
    assert main(["serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--database",
                 f"sqlite:///{db}", "--fed-epsilon-per-entry", "5", "--fed-pad-length", "10", "--fed-sample-ratio",
                 "0.0001"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "--fed-pad-length 10 is too small" in err
    assert not db.exists()


def test_writer_acknowledges_each_request_after_its_commit_with_one_loop_call_per_transaction(storage):
    """Requests wait on asyncio futures; each is resolved only once the transaction holding it committed, and a
    transaction wakes the event loop once, not once per request. A failed commit fails every request it held."""
    import asyncio
    import threading

    from dptopic.service.ingest import GroupCommitWriter

    committed, gate = set(), threading.Event()

    class GatedStorage:
        fail = False

        def store(self, batch):
            gate.wait(10)  # let the requests pile up behind the first transaction
            if self.fail:
                raise RuntimeError("disk full")
            out = storage.store(batch)
            committed.update(s.idempotency_key for s in batch)
            return out

    async def run(fail):
        loop = asyncio.get_running_loop()
        calls = []
        real = loop.call_soon_threadsafe
        loop.call_soon_threadsafe = lambda *a, **k: (calls.append(a[0]), real(*a, **k))[1]
        backend = GatedStorage()
        backend.fail = fail
        writer = GroupCommitWriter(backend).start()
        try:
            subs = [Submission(f"{'f' if fail else 'k'}-key-{i:04d}", f"{i:064x}", None, [bytes([i])]) for i in range(20)]
            futs = [writer.submit_async(s) for s in subs]

            async def acked(sub, fut):
                outcome, ack = await fut
                assert sub.idempotency_key in committed  # the commit came first
                return outcome

            waits = [asyncio.ensure_future(acked(s, f)) for s, f in zip(subs, futs)]
            await asyncio.sleep(0.05)
            gate.set()
            results = await asyncio.gather(*waits, return_exceptions=True)
            return results, len(calls), writer.transactions
        finally:
            writer.stop()
            gate.clear()

    results, calls, transactions = asyncio.run(run(False))
    assert results == ["stored"] * 20 and 1 <= transactions < 20 and calls == transactions
    results, calls, _ = asyncio.run(run(True))
    assert all(isinstance(r, RuntimeError) and str(r) == "disk full" for r in results) and 1 <= calls < 20
    with storage.read() as c:
        from dptopic.service.storage import submissions
        assert {r.idempotency_key for r in c.execute(submissions.select())} >= {f"k-key-{i:04d}" for i in range(20)}


def test_fed_report_words_refuse_an_alphabetical_vocabulary():
    """The first N words must be the most common: an alphabetical --vocabulary would keep those that sort first."""
    words = [f"{c}{d}" for c in "abcdefgh" for d in "xyz"]                  # 24 words in alphabetical order
    with pytest.raises(Exception, match="^fed_report_words=10 keeps .* but vocabulary is in alphabetical order"):
        ServiceConfig(words, 0.2, fed_epsilon_per_entry=5.0, fed_topics=2, fed_report_words=10)
    ServiceConfig(words[::-1], 0.2, fed_epsilon_per_entry=5.0, fed_topics=2, fed_report_words=10)    # another order: taken
    ServiceConfig(words, 0.2, fed_epsilon_per_entry=5.0, fed_topics=2)                # every word: the order does not matter


# ---------------------------------------------------------------------------------------------------------------------
# ``Storage.store`` sends its statements straight to the database driver (the upload path): the same outcomes as
# before on SQLite and on a throwaway PostgreSQL, every report under the submission that sent it, and a driver error
# is a one-line ``StorageError`` that leaves nothing of its batch behind.


@pytest.fixture(scope="module")
def pg_url():
    yield from throwaway_postgres_url()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def storage_on_both(request, tmp_path):
    if request.param == "sqlite":
        st = Storage(f"sqlite:///{tmp_path / 's.db'}")
    else:
        st = Storage(request.getfixturevalue("pg_url"))
        with st.engine.begin() as conn:      # one database for the module: start each test empty
            conn.execute(reports.delete())
            conn.execute(submissions.delete())
    yield st
    st.close()


def _reports_by_key(st: Storage) -> dict[str, list[bytes]]:
    with st.read() as conn:
        rows = conn.execute(select(submissions.c.idempotency_key, reports.c.packed)
                            .join(reports, reports.c.submission_id == submissions.c.id).order_by(reports.c.id)).all()
    out: dict[str, list[bytes]] = {}
    for key, packed in rows:
        out.setdefault(key, []).append(bytes(packed))
    return out


def test_outcomes_across_batches_and_each_report_under_its_submission(storage_on_both):
    first = storage_on_both.store([Submission("key-first-01", "sha-x", "alice", [b"\x01", b"\x02"], unique_body=True),
                           Submission("key-other-02", "sha-y", None, [b"\x03"], unique_body=True)])
    assert [o for o, _ in first] == ["stored", "stored"]
    stored_at = first[0][1]["stored_at"]
    # a second copy of sha-x under a new key is stored only when it carries no nonce (two honest uploads may
    # coincide); a later nonce-carrying copy names the FIRST upload of those bytes
    assert storage_on_both.store([Submission("key-plain-03", "sha-x", None, [b"\x09"])])[0][0] == "stored"
    out = storage_on_both.store([
        Submission("key-first-01", "sha-x", "ignored", [b"\x01", b"\x02"], unique_body=True),   # a retry
        Submission("key-new-04", "sha-z", "bob", [b"\x04", b"\x05", b"\x06"], unique_body=True),
        Submission("key-new-05", "sha-x", None, [b"\x07"], unique_body=True),                    # bytes seen before
        Submission("key-other-02", "sha-q", None, [b"\x08"], unique_body=True),                  # key reused
        Submission("key-new-06", "sha-w", None, [b"\x0a"], unique_body=True),
        Submission("key-new-07", "sha-w", None, [b"\x0a"], unique_body=True),                    # within the batch
    ])
    assert [o for o, _ in out] == ["replayed", "stored", "duplicate", "conflict", "stored", "duplicate"]
    assert out[0][1]["contributor"] == "alice" and out[0][1]["stored_at"] == pytest.approx(stored_at)
    assert out[2][1] == {"reports": 2, "stored_at": pytest.approx(stored_at)}
    assert out[5][1]["reports"] == 1
    assert _reports_by_key(storage_on_both) == {"key-first-01": [b"\x01", b"\x02"], "key-other-02": [b"\x03"],
                                        "key-plain-03": [b"\x09"], "key-new-04": [b"\x04", b"\x05", b"\x06"],
                                        "key-new-06": [b"\x0a"]}
    assert storage_on_both.count_reports() == 8


def test_a_driver_error_is_one_line_and_leaves_nothing_of_its_batch(storage_on_both):
    storage_on_both.store([Submission("key-before-1", "sha-a", None, [b"\x01"])])
    bad = [Submission("key-good-002", "sha-b", None, [b"\x02"]),
           Submission("key-bad-0003", "sha-c", None, [None])]          # packed is NOT NULL: the driver refuses it
    with pytest.raises(StorageError) as err:
        storage_on_both.store(bad)
    message = str(err.value)
    assert message.startswith("database error:") and "\n" not in message and "packed" in message.lower()
    assert storage_on_both.count_reports() == 1
    assert storage_on_both.counts()["submissions"] == 1
    # the connection is usable again at once
    assert [o for o, _ in storage_on_both.store(bad[:1])] == ["stored"]


def _one_error(capsys, argv) -> str:
    """Run the CLI in this process; its one ``error:`` line (exit status 2, no traceback)."""
    try:
        rc = main([str(x) for x in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert rc == 2 and len(lines) == 1, (rc, err)
    return lines[0]


def _settings(db: Path) -> dict:
    con = sqlite3.connect(db)
    try:
        return {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM service_settings")}
    finally:
        con.close()


# ============================================================================ 1/11: FedLDA bound to the database


@pytest.fixture
def serve_cli(tmp_path, no_uvicorn):
    """The base arguments of an in-process ``dptopic serve`` (:func:`no_uvicorn`) and its database file."""
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=10, n_prior=10)
    (tmp_path / "vocab.txt").write_text("\n".join(words[::-1]) + "\n")   # not alphabetical: --fed-report-words
    db = tmp_path / "s.db"
    base = ["serve", "--vocabulary", tmp_path / "vocab.txt", "--database", f"sqlite:///{db}", "--topics", 3,
            "--epsilon-word", 2, "--port", free_port()]
    return base, db


FED = ["--fed-epsilon-per-entry", 5, "--fed-topics", 3, "--fed-pad-length", 32]


def test_a_restart_for_another_report_kind_is_refused_in_the_flags_of_serve(capsys, serve_cli):
    base, db = serve_cli
    cli_ok(capsys, base)
    line = _one_error(capsys, [x for x in base if x not in ("--epsilon-word", 2)] + ["--report-kind", "document",
                                                                                     "--epsilon-doc", 6])
    assert "(--report-kind document)" in line and line.endswith("start it with --report-kind word, or use a new"
                                                                " --database."), line
    assert "report_kind" not in line, line


def test_a_restart_with_other_fed_settings_is_refused_naming_each_flag(capsys, serve_cli):
    base, db = serve_cli
    cli_ok(capsys, base + FED)
    bound = _settings(db)
    assert bound["fed_epsilon"] == 5.0 and bound["fed_topics"] == 3 and bound["fed_pad_length"] == 32
    assert bound["fed_failure_rate"] == 0.1 and bound["fed_exclusion"] == "none"
    cli_ok(capsys, base + FED)                                       # the same settings: starts
    cli_ok(capsys, base + FED + ["--fed-min-updates", 5])            # when a round closes is not bound
    line = _one_error(capsys, base + ["--fed-epsilon-per-entry", 2, "--fed-topics", 4, "--fed-pad-length", 32])
    for part in ("--fed-epsilon-per-entry 5.0", "--fed-epsilon-per-entry 2.0", "--fed-topics 3", "--fed-topics 4", "new --database"):
        assert part in line, line
    assert "fed_" not in line and "--fed-pad-length" not in line, line    # only what differs, by its flag
    for extra, old, new in ((["--fed-sample-ratio", 0.5], "--fed-sample-ratio 1.0", "--fed-sample-ratio 0.5"),
                            (["--fed-report-words", 40], "no --fed-report-words", "--fed-report-words 40")):
        line = _one_error(capsys, base + FED + extra)
        assert old in line and new in line, line
    line = _one_error(capsys, base + ["--fed-epsilon-per-entry", 5, "--fed-topics", 3])     # the default 512 entries
    assert "--fed-pad-length 32" in line and "--fed-pad-length 512" in line, line
    # --fed-user-budget chooses the epsilon and the entries: the line names those and says so
    line = _one_error(capsys, base + ["--fed-user-budget", 30, "--fed-topics", 3])
    # the budget chose 5 entries at just under 6 each (FedLDA spends at most the total it was given)
    assert "--fed-epsilon-per-entry 5.0" in line and re.search(r"--fed-epsilon-per-entry 5\.99999\d*,", line), line
    assert "--fed-pad-length 5" in line, line
    assert "--fed-user-budget 30 chose --fed-epsilon-per-entry and --fed-pad-length" in line, line
    assert _settings(db) == bound                                  # a refused start changed nothing


def test_a_database_that_ran_fedlda_refuses_a_start_without_it_saying_fedlda_is_off(capsys, serve_cli):
    base, db = serve_cli
    cli_ok(capsys, base + FED + ["--fed-report-words", 30])
    line = _one_error(capsys, base)
    assert "FedLDA is off now" in line and "no --fed-epsilon-per-entry" in line, line
    assert "--fed-epsilon-per-entry 5.0" in line and "--fed-report-words 30" in line, line      # what it ran with
    assert "no --fed-report-words" not in line, line          # not a --fed-report-words mismatch


def test_a_database_made_without_fedlda_refuses_a_start_with_it(capsys, serve_cli):
    base, db = serve_cli
    cli_ok(capsys, base)
    assert _settings(db)["fed_epsilon"] is None
    line = _one_error(capsys, base + FED)
    assert "made without FedLDA" in line and "no --fed-epsilon-per-entry" in line and "--fed-epsilon-per-entry 5.0" in line, line


def _as_before_fed_binding(db: Path) -> None:
    """The database as a dptopic before this change left it: of FedLDA's settings only fed_report_words recorded."""
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM service_settings WHERE key LIKE 'fed\\_%' ESCAPE '\\' AND key != 'fed_report_words'")
    con.close()
    assert "fed_epsilon" not in _settings(db)


def test_an_older_database_records_the_fed_settings_of_its_next_start_and_is_bound_from_then(capsys, tmp_path,
                                                                                           serve_cli):
    from dptopic.service.app import Service
    from dptopic.service.config import ServiceConfig

    base, db = serve_cli
    words = (tmp_path / "vocab.txt").read_text().split()
    from dptopic.accounting.local import f_from_epsilon

    svc = Service(ServiceConfig(words, f_from_epsilon(2.0), database=f"sqlite:///{db}", n_topics=3,
                                fed_epsilon_per_entry=5.0, fed_topics=3, fed_pad_length=32), start_trainer=False)
    svc.open()                      # FedLDA ran: its round 0 is in the database
    svc.close()
    _as_before_fed_binding(db)
    line = _one_error(capsys, base)  # recognised by its FedLDA round
    assert "FedLDA is off now" in line, line
    assert "fed_epsilon" not in _settings(db)
    cli_ok(capsys, base + FED)          # opens, and records what it is started with
    assert _settings(db)["fed_epsilon"] == 5.0 and _settings(db)["fed_topics"] == 3
    line = _one_error(capsys, base + ["--fed-epsilon-per-entry", 2, "--fed-topics", 3, "--fed-pad-length", 32])
    assert "--fed-epsilon-per-entry 5.0" in line and "--fed-epsilon-per-entry 2.0" in line, line


def test_an_older_database_that_ran_fedlda_is_held_to_the_k_of_its_rounds_model(capsys, tmp_path, serve_cli):
    # an older database did not record fed_topics: its first start under this version must not record another K,
    # which would leave its open round (a K x V model) stuck
    from dptopic.accounting.local import f_from_epsilon
    from dptopic.service.app import Service
    from dptopic.service.config import ServiceConfig

    base, db = serve_cli
    words = (tmp_path / "vocab.txt").read_text().split()
    svc = Service(ServiceConfig(words, f_from_epsilon(2.0), database=f"sqlite:///{db}", n_topics=3,
                                fed_epsilon_per_entry=5.0, fed_topics=3, fed_pad_length=32), start_trainer=False)
    svc.open()
    svc.close()
    _as_before_fed_binding(db)
    line = _one_error(capsys, base + ["--fed-epsilon-per-entry", 5, "--fed-topics", 4, "--fed-pad-length", 32])
    assert "--fed-topics 3" in line and "--fed-topics 4" in line, line
    assert "fed_topics" not in _settings(db)                       # refused: nothing recorded
    cli_ok(capsys, base + FED)                                        # the K of its rounds: opens and records it
    assert _settings(db)["fed_topics"] == 3


def test_an_older_database_with_fed_report_words_restarted_without_fedlda_says_fedlda_is_off(capsys, serve_cli):
    base, db = serve_cli
    cli_ok(capsys, base + FED + ["--fed-report-words", 30])
    _as_before_fed_binding(db)
    line = _one_error(capsys, base)
    assert "FedLDA is off now" in line and "--fed-report-words 30" in line, line
    assert "no --fed-report-words" not in line, line


def test_an_older_database_that_never_ran_fedlda_opens_and_records_fedlda_off(capsys, serve_cli):
    base, db = serve_cli
    cli_ok(capsys, base)
    _as_before_fed_binding(db)
    cli_ok(capsys, base)
    assert _settings(db)["fed_epsilon"] is None


def test_storage_refuses_a_stored_body_inside_its_transaction_and_within_one_batch(tmp_path):
    from dptopic.service.storage import Storage, Submission

    st = Storage(f"sqlite:///{tmp_path / 's.db'}")
    try:
        a = Submission("walk48-k-000001", "a" * 64, "p1", [b"\x01"], unique_body=True)
        b = Submission("walk48-k-000002", "a" * 64, "p2", [b"\x01"], unique_body=True)      # same body, another key, in one batch
        c = Submission("walk48-k-000003", "c" * 64, None, [b"\x03"], unique_body=True)
        out = st.store([a, b, c])
        assert [o for o, _ in out] == ["stored", "duplicate", "stored"]
        assert out[1][1]["reports"] == 1 and "idempotency_key" not in out[1][1] and "contributor" not in out[1][1]
        assert [o for o, _ in st.store([b, a])] == ["duplicate", "replayed"]
        assert st.store([a])[0][1]["contributor"] == "p1"
        assert st.counts()["reports_stored"] == 2 and st.counts()["submissions"] == 2
    finally:
        st.close()


def test_a_database_that_stored_a_body_twice_still_opens_and_refuses_a_third_copy(tmp_path):
    """A database from before the check (schema 2) may hold duplicate bodies: the migration adds a plain index, not
    a unique one, so it opens. Such bodies predate upload nonces, so a re-post of one is stored as before; a body that
    carries a nonce (``unique_body``) is refused under a new key even where its digest is stored twice."""
    from sqlalchemy import create_engine, text

    from dptopic.service.storage import SCHEMA_VERSION, Storage, Submission

    url = f"sqlite:///{tmp_path / 'old.db'}"
    Storage(url).close()
    eng = create_engine(url)
    with eng.begin() as c:          # back to schema 2, with one body stored twice
        c.execute(text("DROP INDEX ix_submissions_body_sha256"))
        c.execute(text("DELETE FROM dptopic_schema WHERE version > 2"))
        for i in (1, 2):
            c.execute(text("INSERT INTO submissions (idempotency_key, body_sha256, contributor, n_reports,"
                           " received_at) VALUES (:k, :s, 'p', 1, 0)"), {"k": f"walk48-old-{i:04d}", "s": "b" * 64})
    eng.dispose()
    st = Storage(url)
    try:
        assert st.schema_version() == SCHEMA_VERSION >= 3
        assert st.store([Submission("walk48-old-0003", "b" * 64, "p", [b"\x01"], unique_body=True)])[0][0] == "duplicate"
        assert st.store([Submission("walk48-old-0001", "b" * 64, "p", [b"\x01"], unique_body=True)])[0][0] == "replayed"
        assert st.counts()["submissions"] == 2
        # the old nonce-less body posted again under a new key is stored, as before the check
        assert st.store([Submission("walk48-old-0004", "b" * 64, "p", [b"\x01"])])[0][0] == "stored"
        assert st.counts()["submissions"] == 3
    finally:
        st.close()
    eng = create_engine(url)
    with eng.connect() as c:
        assert c.execute(text("SELECT COUNT(*) FROM sqlite_master WHERE name = 'ix_submissions_body_sha256'")).scalar()
    eng.dispose()


@pytest.mark.parametrize("query, pragma", [("", 2), ("?synchronous=full", 2), ("?synchronous=normal", 1),
                                           ("?synchronous=NORMAL", 1)])
def test_sqlite_syncs_every_commit_unless_the_url_asks_for_normal(tmp_path, query, pragma):
    # 2 is FULL (an fsync of the log per commit: an acknowledged upload survives a power loss), 1 NORMAL (only a kill of
    # the process); the option is the service's own: SQLAlchemy's driver would warn about it and ignore it
    url = f"sqlite:///{tmp_path / 's.db'}{query}"
    assert foreign_tables(url) == []
    st = Storage(url)
    try:
        assert st.synchronous == ("normal" if pragma == 1 else "full")
        with st.read() as c:
            assert c.exec_driver_sql("PRAGMA synchronous").scalar() == pragma
            assert c.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert st.store([Submission("k1", "a" * 64, None, [b"\x01"])])[0][0] == "stored"
        with st.read() as c:    # the writer's own pooled connection runs the same set-up
            assert c.exec_driver_sql("PRAGMA synchronous").scalar() == pragma
    finally:
        st.close()
    assert sqlite_synchronous(url)[0] == f"sqlite:///{tmp_path / 's.db'}"


def test_an_unknown_synchronous_is_refused_in_one_line(tmp_path):
    with pytest.raises(StorageError, match=r"synchronous='off' is not one of full, normal") as e:
        Storage(f"sqlite:///{tmp_path / 's.db'}?synchronous=off")
    assert "\n" not in str(e.value)
    assert not (tmp_path / "s.db").exists()


def test_a_commit_left_to_sync_leaves_the_connection_syncing_and_sync_fsyncs_the_log(tmp_path, monkeypatch):
    """store(durable=False) on a SQLite file with synchronous=full commits without waiting for the disk, and its
    pooled connection is back at FULL for every other write; sync() is an fsync of the write-ahead log. A file with
    synchronous=normal has nothing to sync separately."""
    import os

    from dptopic.service.storage import Storage, Submission

    st = Storage(f"sqlite:///{tmp_path / 'f.db'}")
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real_fsync(fd)))
    try:
        assert st.syncs_separately
        assert st.store([Submission("key-left-0001", "a" * 64, None, [b"\x01"])], durable=False)[0][0] == "stored"
        with st.read() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2
        assert synced == []
        st.sync()
        assert synced == [str(tmp_path / "f.db") + "-wal"]
    finally:
        st.close()
    normal = Storage(f"sqlite:///{tmp_path / 'n.db'}?synchronous=normal")
    assert not normal.syncs_separately
    normal.close()


def test_a_sqlite_file_made_read_only_refuses_every_write_and_takes_the_first_one_after(tmp_path):
    """An operator makes the database file read-only while the server runs: every write is refused from the next one
    on, though the connections opened before could still write the log (SQLite writes the file itself only at its
    checkpoints); and once the file is writable again, every write is stored from the first one on, though the reads
    meanwhile made the pool open connections that SQLite opened read-only."""
    from dptopic.service.storage import StoragePermissionError
    from service_helpers import read_only

    path = tmp_path / "ro.db"
    st = Storage(f"sqlite:///{path}")
    n = iter(range(100))

    def sub():
        i = next(n)
        return Submission(f"key-read-only-{i:04d}", f"{i:064x}", None, [b"\x01"])

    try:
        for durable in (True, False):                       # the pool now holds connections opened read-write
            assert st.store([sub()], durable=durable)[0][0] == "stored"
        with st.write() as conn:
            conn.execute(insert(schema_table).values(version=900, description="before", applied_at=0.0))
        undo = read_only(path)
        try:
            for durable in (True, False, True):
                with pytest.raises(StoragePermissionError, match="read-only"):
                    st.store([sub()], durable=durable)
            with pytest.raises(StoragePermissionError, match="read-only"):
                with st.write() as conn:
                    conn.execute(insert(schema_table).values(version=901, description="during", applied_at=0.0))
            with st.read() as a, st.read() as b, st.read() as c:    # new connections, opened read-only by SQLite
                assert {x.execute(select(schema_table.c.version).where(schema_table.c.version == 900)).scalar()
                        for x in (a, b, c)} == {900}
        finally:
            undo()
        for i in range(6):      # each connection of the pool in turn: none fails for having been opened read-only
            assert st.store([sub()], durable=i % 2 == 0)[0][0] == "stored"
            with st.write() as conn:
                conn.execute(insert(schema_table).values(version=910 + i, description="after", applied_at=0.0))
    finally:
        st.close()
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 2 + 6
        assert [v for (v,) in con.execute("SELECT version FROM dptopic_schema WHERE version >= 900")] == \
            [900, *range(910, 916)]
    finally:
        con.close()


def test_commits_left_to_sync_take_a_connection_of_their_own_with_no_check_out_or_pragma_each(tmp_path):
    """store(durable=False), the writer's path on a SQLite file with synchronous=full, commits on one connection kept
    out of the pool at synchronous=NORMAL: after the first, no pool check-out and no PRAGMA per commit; every pooled
    connection keeps FULL."""
    import sqlite3 as driver

    from sqlalchemy import event

    st = Storage(f"sqlite:///{tmp_path / 'own.db'}")
    checkouts, statements = [], []
    event.listen(st.engine, "checkout", lambda *a: checkouts.append(1))
    try:
        assert st.store([Submission("key-own-0000", "0" * 64, None, [b"\x01"])], durable=False)[0][0] == "stored"
        own = st._lazy_conn.driver_connection
        assert isinstance(own, driver.Connection)
        own.set_trace_callback(statements.append)
        checkouts.clear()
        for i in range(1, 4):
            assert st.store([Submission(f"key-own-{i:04d}", f"{i:064x}", None, [b"\x01"])],
                            durable=False)[0][0] == "stored"
        assert checkouts == []
        assert not [s for s in statements if "PRAGMA" in s.upper()]
        assert [s for s in statements if s in ("BEGIN IMMEDIATE", "COMMIT")] == ["BEGIN IMMEDIATE", "COMMIT"] * 3
        assert own.execute("PRAGMA synchronous").fetchone()[0] == 1
        with st.read() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2
        assert st.count_reports() == 4
    finally:
        st.close()
