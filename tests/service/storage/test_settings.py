"""What a database binds on its first start (``service/storage/settings.py``): the settings its reports were made
with, and FedLDA's, each refusal one line naming the setting (in the flags of ``dptopic serve`` on the command line)."""
import json
import re
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from conftest import cli_ok  # noqa: E402
from dptopic.cli.main import main  # noqa: E402
from dptopic.service import ServiceConfig  # noqa: E402
from dptopic.service.storage import StorageError  # noqa: E402
from dptopic.service.storage.settings import _check_fed  # noqa: E402
from service_helpers import free_port, make_data  # noqa: E402

BOUND = {"fed_epsilon": 2.0, "fed_topics": 5, "fed_failure_rate": 0.2, "fed_pad_length": 10}


def test_a_failure_rate_stored_by_an_earlier_start_binds_nothing():
    """serve refuses --fed-failure-rate (its rounds use the 'none' rule, which has none): a database first started
    with another value must still start with the default, or it could never be started again."""
    _check_fed(dict(BOUND), {**BOUND, "fed_failure_rate": 0.1}, lambda: True)


def test_a_setting_that_binds_the_rounds_is_still_checked():
    with pytest.raises(StorageError, match="fed_topics"):
        _check_fed(dict(BOUND), {**BOUND, "fed_failure_rate": 0.1, "fed_topics": 6}, lambda: True)


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


# ============================================================================ FedLDA bound to the database


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
