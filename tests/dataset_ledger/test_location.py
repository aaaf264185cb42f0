"""Which ledger a run uses (dataset_ledger.location): the one named, else the environment's, else the default file."""
from pathlib import Path

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


def test_the_environment_s_ledger_is_read_by_its_scheme_too(tmp_path, monkeypatch):
    from dptopic.dataset_ledger.location import ledger_path
    from dptopic.dataset_ledger.store import ENV
    from dptopic.errors import DPTopicError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV, "sqlite:///env.sqlite")
    assert ledger_path() == Path("env.sqlite")
    monkeypatch.setenv(ENV, "MySQL://x@y/z")
    with pytest.raises(DPTopicError) as e:
        ledger_path()
    assert str(e.value).startswith(f"{ENV}='MySQL://x@y/z' is a mysql:// URL: a ledger is a SQLite file")
    assert list(tmp_path.iterdir()) == []


def test_a_session_checks_its_dataset_by_the_one_rule_and_refuses_it_with_the_ledger_off(tmp_path):
    from dptopic.dataset_ledger.location import INHERIT, SESSION, session

    for path, name, says in ((INHERIT, "", "invalid dataset name"), (tmp_path / "l.sqlite", "content:abc",
                                                                      "the ledger names datasets itself"),
                             (None, "posts", "ledger=False records none")):
        with pytest.raises(ParameterError, match=says) as e:
            with session(path, name):
                pytest.fail("entered")
        assert e.value.parameter == "dataset"
    with session(tmp_path / "l.sqlite", " posts "):
        assert SESSION.get() == (tmp_path / "l.sqlite", "posts", ())


@pytest.mark.parametrize("kw, says", [({"dataset": ""}, "invalid dataset name dataset=''"),
                                      ({"dataset": "posts", "ledger": False}, "ledger=False records none"),
                                      ({"dataset": "audit-shadow:x", "ledger": True}, "names datasets itself")])
def test_train_refuses_a_dataset_name_the_command_line_refuses(kw, says, tiny, tmp_path, monkeypatch):
    """``dptopic.train`` took ``dataset=''`` and ``dataset=`` with ``ledger=False`` (the command line refuses both),
    and names that mimic the ledger's own: refused before anything is read or spent."""
    import dptopic

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    with pytest.raises(ParameterError, match=says):
        dptopic.train(tiny.corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=2, metrics=False, **kw)
    assert not (tmp_path / "dptopic").exists()
