"""The service's database connection (``service/storage/database.py``): the migrations, and a SQLite file made
read-only while the server runs."""
import sqlite3

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import insert, select  # noqa: E402

from dptopic.service.storage import Storage, StorageError, StoragePermissionError, Submission  # noqa: E402
from dptopic.service.storage.schema import SCHEMA_VERSION, schema_table  # noqa: E402


def test_migrations_are_recorded_and_a_newer_schema_is_refused(tmp_path, storage):
    with storage.read() as c:
        versions = [r.version for r in c.execute(schema_table.select().order_by(schema_table.c.version))]
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert Storage(storage.url).schema_version() == SCHEMA_VERSION  # re-opening applies nothing twice
    with storage.write() as c:
        c.execute(insert(schema_table).values(version=SCHEMA_VERSION + 1, description="future", applied_at=0.0))
    with pytest.raises(StorageError, match="newer than this dptopic supports"):
        Storage(storage.url)


def test_a_sqlite_file_made_read_only_refuses_every_write_and_takes_the_first_one_after(tmp_path):
    """An operator makes the database file read-only while the server runs: every write is refused from the next one
    on, though the connections opened before could still write the log (SQLite writes the file itself only at its
    checkpoints); and once the file is writable again, every write is stored from the first one on, though the reads
    meanwhile made the pool open connections that SQLite opened read-only."""
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
