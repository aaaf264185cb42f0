"""``Storage.store`` sends its statements straight to the database driver (the upload path): the same outcomes as
before on SQLite and on a throwaway PostgreSQL, every report under the submission that sent it, and a driver error
is a one-line ``StorageError`` that leaves nothing of its batch behind."""
from __future__ import annotations

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import select  # noqa: E402

from dptopic.service.storage import Storage, StorageError, Submission, reports, submissions  # noqa: E402

from service_helpers import throwaway_postgres_url  # noqa: E402


@pytest.fixture(scope="module")
def pg_url():
    yield from throwaway_postgres_url()


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request, tmp_path):
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


def test_outcomes_across_batches_and_each_report_under_its_submission(storage):
    first = storage.store([Submission("key-first-01", "sha-x", "alice", [b"\x01", b"\x02"], unique_body=True),
                           Submission("key-other-02", "sha-y", None, [b"\x03"], unique_body=True)])
    assert [o for o, _ in first] == ["stored", "stored"]
    stored_at = first[0][1]["stored_at"]
    # a second copy of sha-x under a new key is stored only when it carries no nonce (two honest uploads may
    # coincide); a later nonce-carrying copy names the FIRST upload of those bytes
    assert storage.store([Submission("key-plain-03", "sha-x", None, [b"\x09"])])[0][0] == "stored"
    out = storage.store([
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
    assert _reports_by_key(storage) == {"key-first-01": [b"\x01", b"\x02"], "key-other-02": [b"\x03"],
                                        "key-plain-03": [b"\x09"], "key-new-04": [b"\x04", b"\x05", b"\x06"],
                                        "key-new-06": [b"\x0a"]}
    assert storage.count_reports() == 8


def test_a_driver_error_is_one_line_and_leaves_nothing_of_its_batch(storage):
    storage.store([Submission("key-before-1", "sha-a", None, [b"\x01"])])
    bad = [Submission("key-good-002", "sha-b", None, [b"\x02"]),
           Submission("key-bad-0003", "sha-c", None, [None])]          # packed is NOT NULL: the driver refuses it
    with pytest.raises(StorageError) as err:
        storage.store(bad)
    message = str(err.value)
    assert message.startswith("database error:") and "\n" not in message and "packed" in message.lower()
    assert storage.count_reports() == 1
    assert storage.counts()["submissions"] == 1
    # the connection is usable again at once
    assert [o for o, _ in storage.store(bad[:1])] == ["stored"]
