"""Which database URLs the service takes and how it opens them (``service/storage/engine.py``)."""
import pytest

pytest.importorskip("sqlalchemy")

from dptopic.service.storage import (  # noqa: E402
    Storage,
    StorageError,
    Submission,
    check_backend,
    foreign_tables,
    sqlite_synchronous,
)


def test_a_missing_folder_of_a_sqlite_database_is_refused_naming_the_database(tmp_path):
    from dptopic.errors import ParameterError

    url = f"sqlite:///{tmp_path / 'no' / 's.db'}"
    with pytest.raises(ParameterError) as e:
        check_backend(url)
    assert isinstance(e.value, StorageError) and e.value.parameter == "database" and "--" not in str(e.value)
    assert str(e.value).startswith(f"cannot use database {url!r}: the folder")
    assert str(e.value).endswith("give a database path in an existing folder.")


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
