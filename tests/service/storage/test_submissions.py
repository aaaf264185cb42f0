"""Uploads stored in group commits (``service/storage/submissions.py``): the outcomes of each upload, on SQLite and
on a throwaway PostgreSQL, and the commits that leave their fsync to a thread of their own."""
import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import select  # noqa: E402

from dptopic.service.storage import Storage, StorageError, Submission  # noqa: E402
from dptopic.service.storage.schema import SCHEMA_VERSION, reports, submissions  # noqa: E402
from service_helpers import throwaway_postgres_url  # noqa: E402


def test_group_commit_outcomes_in_one_transaction(storage):
    a = Submission("key-aaaaaaaa", "h1", "p", [b"\x01", b"\x02"])
    out = storage.store([a, Submission("key-aaaaaaaa", "h1", "p", [b"\x01", b"\x02"]),
                         Submission("key-aaaaaaaa", "h2", "p", [b"\x03"]), Submission("key-bbbbbbbb", "h3", None, [b"\x04"])])
    assert [o for o, _ in out] == ["stored", "replayed", "conflict", "stored"]
    assert storage.count_reports() == 3
    assert [p for _, p in storage.fetch_reports(0, 10)] == [b"\x01", b"\x02", b"\x04"]


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


def test_storage_refuses_a_stored_body_inside_its_transaction_and_within_one_batch(tmp_path):
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


def test_a_commit_left_to_sync_leaves_the_connection_syncing_and_sync_fsyncs_the_log(tmp_path, monkeypatch):
    """store(durable=False) on a SQLite file with synchronous=full commits without waiting for the disk, and its
    pooled connection is back at FULL for every other write; sync() is an fsync of the write-ahead log. A file with
    synchronous=normal has nothing to sync separately."""
    import os

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
