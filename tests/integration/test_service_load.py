"""The collection service under load with a real database (SQLite and PostgreSQL):

1. OLP-LDA's prior-overlap warning is recorded: the batch's ``note`` (``/v1/admin/models``) names it, and the server
   logs it at WARNING once per batch.
2. A database role (or a read-only SQLite file) that may read but not write is refused at start-up in one line naming
   the table and the grant; a permission error while serving is 500 ``storage_misconfigured`` without Retry-After
   (not a retryable 503), and ``dptopic submit``'s client does not retry it.
3. ``/v1/model`` leaves out the prior's presence rows' SHA-256 and the overlap threshold computed from them; the
   published folder still loads (digests verified).
4. Reports made with another vocabulary of the same size get a 422 addressed to the uploader.
5. ``serve`` warns when the epsilon per report is above the clients' default --max-epsilon, and refuses a
   --max-body-bytes below the smallest upload.
6. ``/healthz`` says "database unavailable" only; storage errors are logged at most once per 10 s with a count.
7. The client's error says what a running server answered, and that an https:// URL met a plain-HTTP server.
8/9. The service guide's error table and the benchmark's help.
"""
from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.accounting.local import f_from_epsilon  # noqa: E402
from dptopic.cli.main import main  # noqa: E402
from dptopic.contributor.client import ServerError, ServiceClient  # noqa: E402
from dptopic.contributor.randomizer import Randomizer  # noqa: E402
from dptopic.service.config import ServiceConfig  # noqa: E402
from service_helpers import (
    PG_BIN,
    InProcessServer,
    NoServer,
    PostgresServer,
    Server,
    StubServer,
    admin,
    free_port,
    get_json,
    http,
    make_data,
    plain_report_body,
    post_reports,
    service_config,
    throwaway_postgres,
    upload_key,
)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SeededNoiseWarning")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _run_cli(capsys, argv):
    try:
        rc = main([str(x) for x in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return rc, err


def _one_error(capsys, argv) -> str:
    rc, err = _run_cli(capsys, argv)
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert rc == 2 and len(lines) == 1, (rc, err)
    return lines[0]


@pytest.fixture
def no_uvicorn(monkeypatch):
    """``dptopic serve`` in this process up to the point where it would serve (start-up checks run for real)."""
    import uvicorn

    monkeypatch.setattr(uvicorn, "Config", lambda *a, **k: None)
    monkeypatch.setattr(uvicorn, "Server", NoServer)


# ============================================================================ a live server with --prior (1, 3, 4)
@pytest.fixture(scope="module")
def prior_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prior")
    words, texts = make_data(tmp, vocab_size=120, n_docs=200, n_prior=80)
    # eps_word 3 (the last --epsilon-word wins over the helper's 2): members of the prior then stand out clearly
    srv = Server(tmp, f"sqlite:///{tmp / 'p.db'}", "--train-interval", "0", "--epsilon-word", "3").start()
    try:
        yield srv, words, texts, (tmp / "prior.txt").read_text().splitlines()
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def trained(prior_server):
    """One batch of contributors' documents, then two batches of the prior's own paragraphs, trained."""
    srv, words, texts, prior = prior_server
    assert post_reports(srv.url, plain_report_body(words, texts[:40], 3.0), upload_key(), "alice")[0] == 201
    assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
    assert post_reports(srv.url, plain_report_body(words, prior[:80], 3.0), upload_key(), "mallory")[0] == 201
    status, done = admin(srv.url, "/v1/admin/train", {"force": True})
    assert status == 200 and len(done["batches"]) == 2, done
    return prior_server


# ---------------------------------------------------------------------------- 1: the overlap warning is recorded
def test_a_batch_of_the_priors_own_paragraphs_carries_the_overlap_warning_in_its_note_and_the_log(trained):
    srv = trained[0]
    status, doc = admin(srv.url, "/v1/admin/models", method="GET")
    assert status == 200
    batches = doc["batches"]
    assert len(batches) == 3 and all(b["status"] == "trained" for b in batches), batches
    assert batches[0]["note"] is None, batches[0]      # the contributors' own documents: nothing to say
    for b in batches[1:]:
        assert b["note"] and "the prior corpus seems to overlap the stream" in b["note"], b
        assert "\n" not in b["note"]
    log = srv.log_text()
    warned = [ln for ln in log.splitlines() if "WARNING" in ln and "overlap the stream" in ln]
    assert len(warned) == 2, log[-3000:]        # once per batch
    assert f"reports {batches[1]['first_report_id']}-{batches[1]['last_report_id']}" in warned[0]


# ---------------------------------------------------------------------------- 3: /v1/model and the prior
def test_the_published_model_holds_no_digest_of_the_prior_and_still_loads(trained):
    from dptopic.service import codec

    srv = trained[0]
    status, doc = get_json(srv.url + "/v1/model")
    assert status == 200
    meta = json.loads(doc["model_json"])
    assert "prior_presence" not in doc["arrays"] and "prior_presence" not in meta["arrays"]
    assert "prior_presence" not in meta["array_sha256"], sorted(meta["array_sha256"])
    assert "prior_presence" not in doc["model_json"]
    import base64
    import hashlib

    arrays = {k: base64.b64decode(v) for k, v in doc["arrays"].items()}
    state = np.load(io.BytesIO(arrays["stream_state"]), allow_pickle=False)
    assert np.isnan(state[2:4]).all(), state    # the overlap threshold and rate, computed from the prior: blanked
    assert np.isfinite(state[0]) and state[1] == pytest.approx(f_from_epsilon(3.0))
    for name, data in arrays.items():           # every published digest is that of the published bytes
        assert meta["array_sha256"][name] == hashlib.sha256(data).hexdigest(), name
    model = codec.model_from_blobs(doc["model_json"], arrays)   # loads, digests verified
    assert model.topic_words(3) == [t["words"][:3] for t in get_json(srv.url + "/v1/topics?words=3")[1]["topics"]]


# ---------------------------------------------------------------------------- 4: another vocabulary, same size
def test_reports_of_another_vocabulary_of_the_same_size_are_told_to_randomize_again(prior_server):
    srv, words, texts, _ = prior_server
    other = words[:-1] + ["zzzother"]
    before = get_json(srv.url + "/v1/topics")[1]["reports_stored"]
    status, doc = post_reports(srv.url, plain_report_body(other, texts[:5], 3.0), upload_key())
    assert status == 422 and doc["error"]["code"] == "incompatible_reports", doc
    msg = doc["error"]["message"]
    assert "randomize again with the vocabulary /v1/config lists" in msg, msg
    assert "the reports were randomized with" not in msg and "same size" in msg
    assert get_json(srv.url + "/v1/topics")[1]["reports_stored"] == before


# ============================================================================ 2: a database that may not be written
def test_serve_refuses_a_read_only_sqlite_database_in_one_line(capsys, tmp_path, no_uvicorn):
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    db = tmp_path / "s.db"
    base = ["serve", "--vocabulary", tmp_path / "vocab.txt", "--epsilon-word", 2, "--topics", 3, "--port", free_port()]
    rc, err = _run_cli(capsys, base + ["--database", f"sqlite:///{db}"])
    assert rc == 0, err
    size = db.stat().st_size
    line = _one_error(capsys, base + ["--database", f"sqlite:///file:{db}?mode=ro&uri=true"])
    assert "may read but not write" in line and "table submissions" in line, line
    assert "every upload would be refused" in line
    assert db.stat().st_size == size


def test_the_write_probe_cannot_collide_with_an_upload_and_survives_a_row_with_its_key(tmp_path):
    # the start-up write check inserts (and rolls back) one submission row: an upload's Idempotency-Key must never be
    # able to take its key, and a constraint that refuses the probe row still shows the INSERT is allowed (the first
    # version used a key any client could send, after which every start-up failed)
    import re

    from dptopic.service.storage import Storage
    from dptopic.service.storage.schema import WRITE_PROBE_KEY, submissions

    assert not re.fullmatch(r"[A-Za-z0-9_\-.:]{8,128}", WRITE_PROBE_KEY)
    st = Storage(f"sqlite:///{tmp_path / 's.db'}")
    try:
        with st.write() as conn:
            conn.execute(submissions.insert().values(idempotency_key=WRITE_PROBE_KEY, body_sha256="0" * 64,
                                                     contributor=None, n_reports=0, received_at=0.0))
        st.check_writable()         # the unique key refuses the probe: still writable
    finally:
        st.close()


def test_serve_names_a_missing_folder_of_the_sqlite_database(capsys, tmp_path, no_uvicorn):
    # SQLite alone says "unable to open database file"; the folder that is missing is named, and nothing is created
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    missing = tmp_path / "no" / "such"
    line = _one_error(capsys, ["serve", "--vocabulary", tmp_path / "vocab.txt", "--epsilon-word", 2, "--topics", 3,
                               "--port", free_port(), "--database", f"sqlite:///{missing / 's.db'}"])
    assert f"the folder {str(missing)!r} does not exist" in line, line
    assert not (tmp_path / "no").exists()


def test_a_write_refused_while_serving_is_500_not_a_retryable_503(tmp_path):
    from dptopic.service.app import Service

    words, texts = make_data(tmp_path, vocab_size=60, n_docs=20, n_prior=5)
    db = tmp_path / "s.db"
    svc = Service(service_config(words, f"sqlite:///{db}"), start_trainer=False)
    svc.open()      # creates the tables, the settings and the first model
    svc.close()
    with InProcessServer(service_config(words, f"sqlite:///file:{db}?mode=ro&uri=true")) as srv:
        assert http("GET", srv.url + "/healthz")[0] == 200
        status, headers, data = http("POST", srv.url + "/v1/reports", plain_report_body(words, texts[:3]),
                                     {"Content-Type": "application/octet-stream", "Idempotency-Key": upload_key()})
        doc = json.loads(data)
        assert status == 500 and doc["error"]["code"] == "storage_misconfigured", doc
        assert "retry-after" not in headers and "\n" not in doc["error"]["message"]
        status, _, data = http("GET", srv.url + "/healthz")     # no longer "ok"
        assert status == 500 and json.loads(data)["error"]["code"] == "storage_misconfigured"
        client = ServiceClient(srv.url, retries=3, backoff=0.01)
        with pytest.raises(ServerError, match="storage_misconfigured") as e:
            client.post_bytes("/v1/reports", plain_report_body(words, texts[:3]), upload_key())
        assert client.attempts == 1 and e.value.status == 500     # not retried: retrying cannot help


# ---------------------------------------------------------------------------- 2 and 6 on PostgreSQL
@pytest.fixture(scope="module")
def pg():
    yield from throwaway_postgres()


def _sql(url: str, *statements: str) -> None:
    from sqlalchemy import create_engine, text

    eng = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as c:
            for s in statements:
                c.execute(text(s))
    finally:
        eng.dispose()


def _as(url: str, role: str) -> str:
    return url.replace("postgresql+psycopg://postgres@", f"postgresql+psycopg://{role}@")


def test_serve_refuses_a_select_only_postgres_role_naming_the_table_and_the_grant(capsys, tmp_path, pg, no_uvicorn):
    from dptopic.service.app import Service

    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    Service(service_config(words, pg.url)).preflight()        # the service's tables, made by their owner
    _sql(pg.url, "CREATE ROLE w47ro LOGIN", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO w47ro")
    base = ["serve", "--vocabulary", tmp_path / "vocab.txt", "--epsilon-word", 2, "--topics", 3, "--port", free_port()]
    line = _one_error(capsys, base + ["--database", _as(pg.url, "w47ro")])
    assert "role 'w47ro' may read but not write" in line, line
    assert "INSERT on " in line and "submissions" in line and "UPDATE on " in line and "models" in line
    assert "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO w47ro" in line
    assert "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO w47ro" in line
    # granted as the message says: it starts
    _sql(pg.url, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO w47ro",
         "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO w47ro")
    rc, err = _run_cli(capsys, base + ["--database", _as(pg.url, "w47ro")])
    assert rc == 0, err


def test_postgres_privileges_revoked_while_serving_give_500_then_recover(tmp_path, pg):
    from dptopic.service.app import Service

    words, texts = make_data(tmp_path, vocab_size=60, n_docs=20, n_prior=5)
    _sql(pg.url.replace("/dptopic", "/postgres"), "CREATE DATABASE w47revoke")
    url = pg.url.replace("/dptopic", "/w47revoke")
    Service(service_config(words, url)).preflight()
    _sql(url, "CREATE ROLE w47rw LOGIN", "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO w47rw",
         "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO w47rw")
    Service(service_config(words, _as(url, "w47rw"))).preflight()     # may write: passes
    with InProcessServer(service_config(words, _as(url, "w47rw"))) as srv:
        headers = {"Content-Type": "application/octet-stream"}
        assert http("POST", srv.url + "/v1/reports", plain_report_body(words, texts[:2]), {**headers, "Idempotency-Key": upload_key()})[0] \
            == 201
        _sql(url, "REVOKE INSERT ON submissions FROM w47rw")
        status, rh, data = http("POST", srv.url + "/v1/reports", plain_report_body(words, texts[:2]),
                                {**headers, "Idempotency-Key": upload_key()})
        assert status == 500 and json.loads(data)["error"]["code"] == "storage_misconfigured", data
        assert "retry-after" not in rh
        _sql(url, "GRANT INSERT ON submissions TO w47rw")
        assert http("POST", srv.url + "/v1/reports", plain_report_body(words, texts[:2]), {**headers, "Idempotency-Key": upload_key()})[0] \
            == 201
        assert http("GET", srv.url + "/healthz")[0] == 200


def test_healthz_hides_the_postgres_address_while_the_database_is_down(tmp_path, caplog):
    if PG_BIN is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    pytest.importorskip("psycopg")
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=20, n_prior=5)
    own = PostgresServer()     # stopped in this test: not the module's cluster
    try:
        own.start()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"could not start a throwaway PostgreSQL server: {' '.join(str(e).split())[:200]}")
    try:
        with InProcessServer(service_config(words, own.url)) as srv:
            assert http("GET", srv.url + "/healthz")[0] == 200
            own.stop()
            with caplog.at_level(logging.ERROR, logger="dptopic.service"):
                status, rh, data = http("GET", srv.url + "/healthz")
                for _ in range(5):
                    http("POST", srv.url + "/v1/reports", plain_report_body(words, texts[:1]),
                         {"Content-Type": "application/octet-stream", "Idempotency-Key": upload_key()})
            doc = json.loads(data)
            assert status == 503 and doc == {"error": {"code": "storage_unavailable",
                                                       "message": "database unavailable."}}, doc
            assert str(own.port) not in data.decode()
            logged = [r.getMessage() for r in caplog.records if r.name == "dptopic.service"]
            assert any(str(own.port) in m for m in logged), logged     # the detail is in the log
            assert sum(m.startswith("storage:") for m in logged) == 1, logged  # the 5 refused uploads: one line
    finally:
        own.stop()


# ============================================================================ 6: healthz and the log, SQLite
def test_healthz_says_database_unavailable_only(tmp_path, monkeypatch, caplog):
    from dptopic.service.storage import StorageError

    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with InProcessServer(service_config(words, f"sqlite:///{tmp_path / 'h.db'}")) as srv:
        detail = ('database error: connection failed: connection to server at "10.1.2.3", port 5432 failed:'
                  ' Connection refused')

        def down():
            raise StorageError(detail)

        monkeypatch.setattr(srv.service.storage, "schema_version", down)
        with caplog.at_level(logging.ERROR, logger="dptopic.service"):
            status, _, data = http("GET", srv.url + "/healthz")
        assert status == 503
        assert json.loads(data) == {"error": {"code": "storage_unavailable", "message": "database unavailable."}}
        assert "10.1.2.3" not in data.decode() and "5432" not in data.decode()
        assert any("10.1.2.3" in r.getMessage() for r in caplog.records)


def test_storage_errors_are_logged_once_then_at_most_every_ten_seconds_with_a_count(caplog):
    from dptopic.service.app import LogThrottle

    now = [100.0]
    throttle = LogThrottle(logging.getLogger("dptopic.service"), every=10.0, clock=lambda: now[0])
    with caplog.at_level(logging.ERROR, logger="dptopic.service"):
        logged = []
        for _ in range(50):             # 50 refused requests within 5 s
            logged.append(throttle.log("unavailable", logging.ERROR, "storage: %s", "connection refused"))
            now[0] += 0.1
        now[0] = 111.0
        logged.append(throttle.log("unavailable", logging.ERROR, "storage: %s", "connection refused"))
    assert logged.count(True) == 2 and logged[0] and logged[-1]
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["storage: connection refused",
                     "storage: connection refused (49 more like it in the last 11 s were not logged)"], lines


# ============================================================================ 5: serve's start-up
def test_serve_warns_when_the_epsilon_is_above_the_clients_default_limit(capsys, tmp_path, no_uvicorn):
    make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)

    def start(*flags):
        rc, err = _run_cli(capsys, ["serve", "--vocabulary", tmp_path / "vocab.txt", "--topics", 3, "--port",
                                    free_port(), "--database", f"sqlite:///{tmp_path / f'e{upload_key()}.db'}", *flags])
        assert rc == 0, err
        return [_flat(ln) for ln in err.splitlines() if ln.startswith("warning:") and "--max-epsilon" in ln]

    warned = start("--epsilon-word", 20)
    assert len(warned) == 1, warned
    assert "--epsilon-word 20 is above 16" in warned[0] and "dptopic submit" in warned[0]
    assert "--max-epsilon 20 or more" in warned[0]
    assert start("--epsilon-word", 16) == [] and start("--epsilon-word", 2) == []
    warned = start("--report-kind", "document", "--epsilon-doc", 20)
    assert len(warned) == 1 and "--epsilon-doc 20" in warned[0], warned
    warned = start("--epsilon-word", 2, "--fed-epsilon-per-entry", 30, "--fed-topics", 3, "--fed-pad-length", 4)
    assert len(warned) == 1 and "--fed-epsilon-per-entry 30" in warned[0] and "dptopic fed-client" in warned[0], warned


def test_serve_refuses_a_body_limit_below_the_smallest_upload(capsys, tmp_path, no_uvicorn):
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.service.startup import smallest_upload

    words, texts = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    from dptopic.protocol import codec as protocol_codec

    # the smallest upload is one report's file as the client sends it (with its upload nonce)
    one = protocol_codec.encode_reports(Randomizer(words, epsilon_word=2.0, secure=True).randomize([texts[0].split()]))
    need = smallest_upload(service_config(words, "sqlite:///x.db"))
    assert need == len(one) == len(plain_report_body(words, texts[:1])) + 50
    doc_cfg = ServiceConfig(words, None, report_kind="document", epsilon_doc=8.0, n_topics=3)
    assert smallest_upload(doc_cfg) == len(protocol_codec.encode_reports(DocumentRandomizer(words, 8.0).randomize(
        [texts[0].split()])))
    base = ["serve", "--vocabulary", tmp_path / "vocab.txt", "--epsilon-word", 2, "--topics", 3, "--port", free_port()]
    db = tmp_path / "b.db"
    line = _one_error(capsys, base + ["--database", f"sqlite:///{db}", "--max-body-bytes", 100])
    assert f"--max-body-bytes 100 is smaller than the smallest upload this server takes ({need} bytes" in line, line
    assert "413" in line
    assert not db.exists()      # refused before the database is created
    _one_error(capsys, base + ["--database", f"sqlite:///{db}", "--max-body-bytes", need - 1])
    rc, err = _run_cli(capsys, base + ["--database", f"sqlite:///{db}", "--max-body-bytes", need])
    assert rc == 0, err


# ============================================================================ 7: the client's hint
@pytest.fixture
def canned():
    """A plain-HTTP server on 127.0.0.1 answering every request with the status and JSON body set in ``reply``."""
    reply = {"status": 503, "body": {"error": {"code": "storage_unavailable",
                                               "message": "the database is unavailable; retry later."}}}

    with StubServer(lambda request: (reply["status"], reply["body"])) as srv:
        yield srv.port, reply


def test_a_server_that_answers_503_is_not_asked_whether_it_runs(canned):
    port, _ = canned
    client = ServiceClient(f"http://127.0.0.1:{port}", retries=1, backoff=0.01)
    with pytest.raises(ServerError) as e:
        client.request("GET", "/v1/config")
    msg = str(e.value)
    assert f"the server at http://127.0.0.1:{port} answered 503 storage_unavailable" in msg, msg
    assert "running?" not in msg and "failed after 2 attempts" in msg
    assert e.value.status == 503 and e.value.code == "storage_unavailable"


def test_an_https_url_for_a_plain_http_server_says_use_http(canned):
    port, _ = canned
    client = ServiceClient(f"https://127.0.0.1:{port}", retries=0, timeout=5)
    with pytest.raises(ServerError) as e:
        client.request("GET", "/v1/config")
    msg = str(e.value)
    assert "speaks plain HTTP" in msg and f"give its address as http://127.0.0.1:{port}" in msg, msg
    assert "running?" not in msg


def test_a_server_nobody_answers_for_is_still_asked_whether_it_runs():
    client = ServiceClient(f"http://127.0.0.1:{free_port()}", retries=0, timeout=2)
    with pytest.raises(ServerError, match=r"failed after 1 attempt \(.*is the server at .* running\?"):
        client.request("GET", "/v1/config")


# ============================================================================ 8/9: the guide and the benchmark
def test_the_guide_lists_every_upload_error_and_says_validation_comes_before_the_key():
    guide = _flat("\n".join((ROOT / "docs" / page).read_text() for page in ("service.md", "service_guarantees.md")))
    row = next(ln for ln in (ROOT / "docs" / "service_api.md").read_text().splitlines()
               if ln.startswith("| `POST /v1/reports`"))
    for code in ("bad_contributor", "truncated_body", "storage_misconfigured", "storage_unavailable"):
        assert f"`{code}`" in row, code
    assert "the body is checked before the key is looked up" in row
    assert "The body is validated before the key is looked up" in guide
    assert "measured with the trainer off" in guide and "compete with ingest" in guide
    assert "../shared" not in guide
