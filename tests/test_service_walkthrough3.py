"""A third walk-through of the collection service (walk A), each finding pinned.

1/11. FedLDA's settings (per-entry epsilon, K, failure rate, entries per update, report words, rule) are bound to the
      database on its first start, like the vocabulary and f: a restart with other values, or without FedLDA after it
      ran, is refused in one line naming the flags; a database from before they were recorded records them then.
7.    A document-report header nested deeply is refused in one line (HTTP 400, CLI exit 2), never a RecursionError.
6.    A header's ``version`` must be a JSON integer: ``true`` and ``1.0`` are not version 1, ``"1"`` is mistyped.
8.    Another V is 422 even when the padding check would fail too; an f no server takes is 422 "another f", with no
      command-line flag in the HTTP reply; eps_doc 8.0000000001 against 8 is shown with the digits that differ.
5.    The word-level model's scope names how many reports a contributor sends and when, and states the composition
      over all of a contributor's reports that the server applies.
4.    The service guide says when the model's reports_per_contributor equals /v1/topics's maximum (and it does).
9.    ``serve`` warns about vocabulary words the contributors' tokeniser never produces.
10.   /v1/admin/rotate and /v1/admin/fed/close-round refuse unknown JSON keys (400), as /v1/admin/train does.
14.   The status page says "1 entry per update".
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.cli.main import main  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.local import Randomizer, ReportSet  # noqa: E402
from dptopic.local.document import DocumentRandomizer, DocumentReportSet  # noqa: E402

from service_helpers import (SRC, TOKEN, Server, admin, free_port, get_json, http, make_data,  # noqa: E402
                             post_reports)

ROOT = Path(__file__).resolve().parents[1]
# the tests' reports are simulations with fixed seeds (reproducible), which is what the warning is about
pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SeededNoiseWarning")


def _flat(text: str) -> str:
    return " ".join(text.split())


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


def _ok(capsys, argv) -> str:
    rc = main([str(x) for x in argv])
    err = capsys.readouterr().err
    assert rc == 0, err
    return err


def with_header(body: bytes, payload: bytes | None = None, **changes) -> bytes:
    """A report file (either kind) with header fields changed (``...`` drops one) and a valid checksum."""
    (n,) = struct.unpack("<I", body[8:12])
    head = json.loads(body[12:12 + n])
    for k, v in changes.items():
        if v is ...:
            head.pop(k, None)
        else:
            head[k] = v
    h = json.dumps(head).encode()
    core = body[:8] + struct.pack("<I", len(h)) + h + (body[12 + n:-32] if payload is None else payload)
    return core + hashlib.sha256(core).digest()


def with_raw_header(body: bytes, raw: bytes) -> bytes:
    (n,) = struct.unpack("<I", body[8:12])
    core = body[:8] + struct.pack("<I", len(raw)) + raw + body[12 + n:-32]
    return core + hashlib.sha256(core).digest()


def _settings(db: Path) -> dict:
    con = sqlite3.connect(db)
    try:
        return {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM service_settings")}
    finally:
        con.close()


# ============================================================================ 1/11: FedLDA bound to the database
class _NoServer:
    def __init__(self, config):
        self.started = False

    def run(self, sockets=None):
        self.started = True         # as if it served and was stopped


@pytest.fixture
def no_uvicorn(monkeypatch):
    """``dptopic serve`` runs in this process up to the point where it would serve: the start-up checks and the
    database binding run for real, uvicorn neither serves nor configures logging (its dictConfig would close the
    handlers other libraries left on pytest's captured streams)."""
    import uvicorn

    monkeypatch.setattr(uvicorn, "Config", lambda *a, **k: None)
    monkeypatch.setattr(uvicorn, "Server", _NoServer)


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


def test_a_restart_with_other_fed_settings_is_refused_naming_each_flag(capsys, serve_cli):
    base, db = serve_cli
    _ok(capsys, base + FED)
    bound = _settings(db)
    assert bound["fed_epsilon"] == 5.0 and bound["fed_topics"] == 3 and bound["fed_pad_length"] == 32
    assert bound["fed_failure_rate"] == 0.1 and bound["fed_exclusion"] == "none"
    _ok(capsys, base + FED)                                       # the same settings: starts
    _ok(capsys, base + FED + ["--fed-min-updates", 5])            # when a round closes is not bound
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
    assert "--fed-epsilon-per-entry 5.0" in line and "--fed-epsilon-per-entry 6.0" in line and "--fed-pad-length 5" in line, line
    assert "--fed-user-budget 30 chose --fed-epsilon-per-entry and --fed-pad-length" in line, line
    assert _settings(db) == bound                                  # a refused start changed nothing


def test_a_database_that_ran_fedlda_refuses_a_start_without_it_saying_fedlda_is_off(capsys, serve_cli):
    base, db = serve_cli
    _ok(capsys, base + FED + ["--fed-report-words", 30])
    line = _one_error(capsys, base)
    assert "FedLDA is off now" in line and "no --fed-epsilon-per-entry" in line, line
    assert "--fed-epsilon-per-entry 5.0" in line and "--fed-report-words 30" in line, line      # what it ran with
    assert "no --fed-report-words" not in line, line          # finding 11: not a --fed-report-words mismatch


def test_a_database_made_without_fedlda_refuses_a_start_with_it(capsys, serve_cli):
    base, db = serve_cli
    _ok(capsys, base)
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
    _ok(capsys, base + FED)          # opens, and records what it is started with
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
    _ok(capsys, base + FED)                                        # the K of its rounds: opens and records it
    assert _settings(db)["fed_topics"] == 3


def test_an_older_database_with_fed_report_words_restarted_without_fedlda_says_fedlda_is_off(capsys, serve_cli):
    base, db = serve_cli
    _ok(capsys, base + FED + ["--fed-report-words", 30])
    _as_before_fed_binding(db)
    line = _one_error(capsys, base)
    assert "FedLDA is off now" in line and "--fed-report-words 30" in line, line
    assert "no --fed-report-words" not in line, line


def test_an_older_database_that_never_ran_fedlda_opens_and_records_fedlda_off(capsys, serve_cli):
    base, db = serve_cli
    _ok(capsys, base)
    _as_before_fed_binding(db)
    _ok(capsys, base)
    assert _settings(db)["fed_epsilon"] is None


def test_a_live_fed_server_restarted_with_another_k_is_refused_and_its_round_stays_usable(tmp_path):
    """The walk-through's case: a server that ran a round restarted with --fed-topics 5 and --fed-epsilon-per-entry 2 started,
    left the round stuck and understated the users' epsilon. Now the restart is refused before it listens; the same
    flags serve the same round, and the status page states epsilon 5 x 32 = 160 per user."""
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=10, n_prior=10)
    db = f"sqlite:///{tmp_path / 'fed.db'}"
    fed = ["--train-interval", "0", "--fed-epsilon-per-entry", "5", "--fed-topics", "4", "--fed-pad-length", "32"]
    srv = Server(tmp_path, db, *fed).start()
    try:
        status, headers, msg = http("GET", srv.url + "/v1/fed/round")
        assert status == 200
    finally:
        srv.stop()
    again = Server(tmp_path, db, "--train-interval", "0", "--fed-epsilon-per-entry", "2", "--fed-topics", "5",
                   "--fed-pad-length", "32")
    with pytest.raises(RuntimeError, match="--fed-epsilon-per-entry 5.0, --fed-topics 4 but the server was started with"
                                           " --fed-epsilon-per-entry 2.0, --fed-topics 5"):
        again.start(timeout=60)
    assert "Traceback" not in again.log_text()
    srv = Server(tmp_path, db, *fed).start()
    try:
        status, headers2, msg2 = http("GET", srv.url + "/v1/fed/round")
        assert status == 200 and headers2["dptopic-round"] == headers["dptopic-round"] and msg2 == msg
        page = _flat(http("GET", srv.url + "/")[2].decode())
        assert "per-entry epsilon 5, 32 entries per update: epsilon 160 per user" in page
    finally:
        srv.stop()


# ============================================================================ live servers for findings 5-10, 14
@pytest.fixture(scope="module")
def word_server(tmp_path_factory):
    """A word-level server (V = 60) with FedLDA at one entry per update, admin on, trainer only on demand."""
    tmp = tmp_path_factory.mktemp("walk3-word")
    words, texts = make_data(tmp, vocab_size=60, n_docs=80, n_prior=20)
    srv = Server(tmp, f"sqlite:///{tmp / 'w.db'}", "--train-interval", "0", "--fed-epsilon-per-entry", "5", "--fed-topics", "3",
                 "--fed-pad-length", "1", "--fed-min-updates", "0").start()
    try:
        yield srv, words, texts
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def doc_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("walk3-doc")
    words, texts = make_data(tmp, vocab_size=60, n_docs=40, n_prior=5)
    srv = Server(tmp, f"sqlite:///{tmp / 'd.db'}", "--train-interval", "0", document=True).start()
    try:
        yield srv, words, texts
    finally:
        srv.stop()


_KEYS = iter(range(10 ** 6))


def _post(srv, body: bytes, contributor: str | None = None):
    return post_reports(srv.url, body, f"walk3-key-{next(_KEYS):06d}", contributor)


def _word_body(words, texts, n: int = 5) -> bytes:
    return Randomizer.for_simulation(words, epsilon_word=2.0, seed=3).randomize(
        [t.split() for t in texts[:n]]).to_bytes(include_vocabulary=False)


def _doc_body(words, texts, n: int = 5, epsilon: float = 8.0) -> bytes:
    return DocumentRandomizer.for_simulation(words, epsilon, seed=3).randomize(
        [t.split() for t in texts[:n]]).to_bytes(include_vocabulary=False)


def _stored(srv) -> int:
    return get_json(srv.url + "/v1/topics")[1]["reports_stored"]


# ---------------------------------------------------------------------------- 7: deep document header
def test_a_deeply_nested_document_header_is_refused_in_one_line(doc_server, tmp_path):
    srv, words, texts = doc_server
    good = _doc_body(words, texts)
    before = _stored(srv)
    for depth in (1000, 100_000):
        deep = with_raw_header(good, b"[" * depth + b"]" * depth)
        with pytest.raises(DPTopicError, match="deeper than 64 levels"):
            DocumentReportSet.from_bytes(deep)
        status, reply = _post(srv, deep)
        assert status == 400 and reply["error"]["code"] == "malformed_reports", (depth, status, reply)
        assert "deeper than 64 levels" in reply["error"]["message"]
    assert _stored(srv) == before
    assert "RecursionError" not in srv.log_text() and "Traceback" not in srv.log_text()
    path = tmp_path / "deep.bin"
    path.write_bytes(with_raw_header(good, b"[" * 2000 + b"]" * 2000))
    r = subprocess.run([sys.executable, "-m", "dptopic", "train", "--algorithm", "ldp-doc", "--reports", str(path),
                        "--topics", "3", "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": SRC})
    assert r.returncode == 2 and "Traceback" not in r.stderr and "RecursionError" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "deeper than 64 levels" in r.stderr, r.stderr


# ---------------------------------------------------------------------------- 6: version must be an integer
@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_mistyped_format_version_is_refused_for_both_kinds(word_server, doc_server, version):
    for srv, body, parse in ((word_server[0], _word_body(*word_server[1:]), ReportSet.from_bytes),
                             (doc_server[0], _doc_body(*doc_server[1:]), DocumentReportSet.from_bytes)):
        bad = with_header(body, version=version)
        with pytest.raises(DPTopicError, match="'version' is .*not a whole number"):
            parse(bad)
        before = _stored(srv)
        status, reply = _post(srv, bad)
        msg = reply["error"]["message"]
        assert status == 400 and reply["error"]["code"] == "malformed_reports", (version, status, reply)
        assert "not a whole number" in msg and "reads version" not in msg, msg     # not "'1'; reads version 1"
        assert _stored(srv) == before


# ---------------------------------------------------------------------------- 8: the class and the digits
def test_another_vocabulary_size_is_422_even_with_padding_bits_set(word_server):
    srv, words, texts = word_server
    body = _word_body(words, texts)
    (n,) = struct.unpack("<I", body[8:12])
    payload = bytearray(body[12 + n:-32])
    payload[7] |= 0x08              # bit 59 of the first report: the last word of V = 60, padding for V = 59
    for V, pl in ((59, bytes(payload)), (61, None)):
        status, reply = _post(srv, with_header(body, pl, vocab_size=V))
        assert status == 422 and reply["error"]["code"] == "incompatible_reports", (V, status, reply)
        assert f"vocabulary of {V} words" in reply["error"]["message"]


def test_an_f_no_server_takes_is_answered_as_another_f_without_a_cli_flag(word_server):
    srv, words, texts = word_server
    body = _word_body(words, texts)
    status, reply = _post(srv, with_header(body, f=1e-300, epsilon_word=...))
    msg = reply["error"]["message"]
    assert status == 422 and reply["error"]["code"] == "incompatible_reports", (status, reply)
    assert "f=1e-300" in msg and "--" not in msg, msg           # no command-line flag in an HTTP reply
    # beyond a float's range: a broken header (400), not an internal error
    status, reply = _post(srv, with_header(body, f=10 ** 400, epsilon_word=...))
    assert status == 400 and "not a finite number" in reply["error"]["message"], (status, reply)


def test_a_document_epsilon_beyond_a_float_is_400_not_500(doc_server):
    srv, words, texts = doc_server
    status, reply = _post(srv, with_header(_doc_body(words, texts), epsilon=10 ** 400))
    assert status == 400 and "not a finite number" in reply["error"]["message"], (status, reply)


def test_eps_doc_that_differs_in_the_tenth_digit_is_shown_with_it(doc_server):
    srv, words, texts = doc_server
    status, reply = _post(srv, with_header(_doc_body(words, texts), epsilon=8.0000000001))
    msg = reply["error"]["message"]
    assert status == 422 and "eps_doc=8.0000000001 but this server takes 8:" in msg, msg


# ---------------------------------------------------------------------------- 5 and 4: scope, reports_per_contributor
def test_word_level_scope_and_the_model_figure_against_topics(word_server):
    srv, words, texts = word_server
    body = _word_body(words, texts, n=40)
    assert _post(srv, body, contributor="alice")[0] == 201
    assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
    topics = get_json(srv.url + "/v1/topics")[1]
    scope = topics["privacy"]["scope"]
    assert "how many reports a contributor sends and when" in scope, scope
    assert "several windows" not in scope and "up to reports_per_contributor of them in all" in scope, scope
    most = topics["per_contributor"]["max_reports_from_one_contributor"]
    assert topics["reports_pending"] == 0 and topics["privacy"]["reports_per_contributor"] == most
    # more of alice's reports, not yet trained on: /v1/topics runs ahead of the model until the next batch, as the
    # guide says
    assert _post(srv, _word_body(words, texts, n=5), contributor="alice")[0] == 201
    topics = get_json(srv.url + "/v1/topics")[1]
    assert topics["reports_pending"] == 5
    assert topics["per_contributor"]["max_reports_from_one_contributor"] == most + 5
    assert topics["privacy"]["reports_per_contributor"] == most
    assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
    topics = get_json(srv.url + "/v1/topics")[1]
    assert topics["privacy"]["reports_per_contributor"] == most + 5
    guide = _flat((ROOT / "docs" / "service.md").read_text())
    assert "its `reports_per_contributor` is `/v1/topics`'s `max_reports_from_one_contributor`." not in guide
    assert "`/v1/topics` showed when the model's last mini-batch was trained" in guide


# ---------------------------------------------------------------------------- 10: unknown admin keys
def test_rotate_and_close_round_refuse_unknown_keys(word_server):
    srv = word_server[0]
    models = admin(srv.url, "/v1/admin/models", method="GET")[1]["models"]
    rnd = http("GET", srv.url + "/v1/fed/round")[1]["dptopic-round"]
    status, reply = admin(srv.url, "/v1/admin/rotate", {"note": "test", "bogus": 1})
    assert status == 400 and reply["error"]["code"] == "bad_request" and "'bogus'" in reply["error"]["message"]
    assert "'note'" in reply["error"]["message"]
    assert admin(srv.url, "/v1/admin/models", method="GET")[1]["models"] == models     # nothing rotated
    status, reply = admin(srv.url, "/v1/admin/fed/close-round", {"force": True})
    assert status == 400 and reply["error"]["code"] == "bad_request" and "'force'" in reply["error"]["message"]
    assert http("GET", srv.url + "/v1/fed/round")[1]["dptopic-round"] == rnd
    status, reply = admin(srv.url, "/v1/admin/fed/close-round", {})     # no keys: on to the round (no update yet)
    assert status == 409 and reply["error"]["code"] == "round_not_closable", reply


# ---------------------------------------------------------------------------- 14: singular on the status page
def test_status_page_says_one_entry_per_update(word_server):
    page = _flat(http("GET", word_server[0].url + "/")[2].decode())
    assert "1 entry per update" in page and "1 entries" not in page


# ---------------------------------------------------------------------------- 9: vocabulary words never counted
def test_serve_warns_about_vocabulary_words_the_tokeniser_never_produces(capsys, tmp_path, no_uvicorn):
    words, _ = make_data(tmp_path, vocab_size=40, n_docs=5, n_prior=5)
    (tmp_path / "v.txt").write_text("\n".join(words + ["tax war", "is", "a"]) + "\n")
    err = _ok(capsys, ["serve", "--vocabulary", tmp_path / "v.txt", "--database",
                       f"sqlite:///{tmp_path / 'v.db'}", "--epsilon-word", 2, "--topics", 3, "--port", free_port()])
    warning = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1 and "3 that the tokeniser never produces" in warning[0], err
    assert "'tax war'" in warning[0]
    (tmp_path / "ok.txt").write_text("\n".join(words) + "\n")
    err = _ok(capsys, ["serve", "--vocabulary", tmp_path / "ok.txt", "--database",
                       f"sqlite:///{tmp_path / 'ok.db'}", "--epsilon-word", 2, "--topics", 3, "--port", free_port()])
    assert "warning:" not in err, err
