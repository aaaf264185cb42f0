"""Which ledger a run uses (dataset_ledger.location): the one named, else the environment's, else the default file."""
import pytest

from dptopic.dataset_ledger.location import default_path
from dptopic.errors import ParameterError


def test_default_file_is_in_the_users_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "dptopic" / "ledger.sqlite"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_path().parts[-4:] == (".local", "share", "dptopic", "ledger.sqlite")


def test_the_ledger_path_is_the_one_named_else_the_environment_s_else_the_default(tmp_path, monkeypatch):
    from dptopic.dataset_ledger.location import ledger_path
    from dptopic.dataset_ledger.store import ENV

    monkeypatch.delenv(ENV, raising=False)
    assert ledger_path() == default_path() and ledger_path(off=True) is None
    assert ledger_path(str(tmp_path / "l.sqlite")) == tmp_path / "l.sqlite"
    assert ledger_path("postgresql://me@db/ledger") == "postgresql://me@db/ledger"
    monkeypatch.setenv(ENV, str(tmp_path / "env.sqlite"))
    assert ledger_path() == tmp_path / "env.sqlite"
    names = {"ledger": "--ledger", "no_ledger": "--no-ledger"}
    for kw, line in (({"path": "x", "off": True}, "give --ledger PATH or --no-ledger, not both."),
                     ({"path": " "}, "--ledger needs a file path (or give --no-ledger)."),
                     ({"must_exist": True}, f"no ledger at {tmp_path / 'env.sqlite'}: nothing has been recorded there"
                                            f" yet (give --ledger PATH or {ENV} to read another).")):
        with pytest.raises(ParameterError) as e:
            ledger_path(**kw)
        assert e.value.message(names) == line
