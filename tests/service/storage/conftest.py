"""The fixture the tests of ``dptopic.service.storage`` share."""
import pytest

pytest.importorskip("sqlalchemy")

from dptopic.service.storage import Storage  # noqa: E402


@pytest.fixture
def storage(tmp_path):
    """A :class:`Storage` on a new SQLite file."""
    st = Storage(f"sqlite:///{tmp_path / 's.db'}")
    yield st
    st.close()
