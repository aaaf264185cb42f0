"""What the collection service binds to its database and checks in what it is sent, each once broken.

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
import struct
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from conftest import flat  # noqa: E402
from dptopic.contributor.document_randomizer import DocumentRandomizer  # noqa: E402
from dptopic.contributor.randomizer import Randomizer  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.protocol.document_reports import DocumentReportSet  # noqa: E402
from dptopic.protocol.reports import ReportSet  # noqa: E402
from helpers import run_dptopic  # noqa: E402
from service_helpers import (  # noqa: E402
    InProcessServer,
    NoServer,
    Server,
    admin,
    corpus_of,
    get_json,
    http,
    make_data,
    plain_report_body,
    post_reports,
    service_config,
    upload_key,
)

ROOT = Path(__file__).resolve().parents[2]
# the tests' reports are simulations with fixed seeds (reproducible), which is what the warning is about
pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SeededNoiseWarning")


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


@pytest.mark.service
def test_a_live_fed_server_restarted_with_another_k_is_refused_and_its_round_stays_usable(tmp_path):
    """A server that ran a round restarted with --fed-topics 5 and --fed-epsilon-per-entry 2 started,
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
        again.start_refused(timeout=60)
    assert "Traceback" not in again.log_text()
    srv = Server(tmp_path, db, *fed).start()
    try:
        status, headers2, msg2 = http("GET", srv.url + "/v1/fed/round")
        assert status == 200 and headers2["dptopic-round"] == headers["dptopic-round"] and msg2 == msg
        page = flat(http("GET", srv.url + "/")[2].decode())
        assert "per-entry epsilon 5, 32 entries per update: epsilon 160 per user" in page
    finally:
        srv.stop()


# ============================================================================ live servers for items 4-10 and 14
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
@pytest.mark.service
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
    r = run_dptopic("train", "--algorithm", "ldp-doc", "--reports", str(path), "--topics", "3", "--out",
                    str(tmp_path / "out"), timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "RecursionError" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "deeper than 64 levels" in r.stderr, r.stderr


# ---------------------------------------------------------------------------- 6: version must be an integer
@pytest.mark.service
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
@pytest.mark.service
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


@pytest.mark.service
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


@pytest.mark.service
def test_a_document_epsilon_beyond_a_float_is_400_not_500(doc_server):
    srv, words, texts = doc_server
    status, reply = _post(srv, with_header(_doc_body(words, texts), epsilon=10 ** 400))
    assert status == 400 and "not a finite number" in reply["error"]["message"], (status, reply)


@pytest.mark.service
def test_eps_doc_that_differs_in_the_tenth_digit_is_shown_with_it(doc_server):
    srv, words, texts = doc_server
    status, reply = _post(srv, with_header(_doc_body(words, texts), epsilon=8.0000000001))
    msg = reply["error"]["message"]
    assert status == 422 and "eps_doc=8.0000000001 but this server takes 8:" in msg, msg


# ---------------------------------------------------------------------------- 5 and 4: scope, reports_per_contributor
@pytest.mark.service
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
    guide = flat((ROOT / "docs" / "service_guarantees.md").read_text())
    assert "its `reports_per_contributor` is `/v1/topics`'s `max_reports_from_one_contributor`." not in guide
    assert "`/v1/topics` showed when the model's last mini-batch was trained" in guide


# ---------------------------------------------------------------------------- 10: unknown admin keys
@pytest.mark.service
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
@pytest.mark.service
def test_status_page_says_one_entry_per_update(word_server):
    page = flat(http("GET", word_server[0].url + "/")[2].decode())
    assert "1 entry per update" in page and "1 entries" not in page


# ---------------------------------------------------------------------------------------------------------------------
# A restart with other trainer flags, the prior's sentence on the status
# page, FedLDA's idempotency order and its /v1/config.


def _trained(tmp_path, **kw):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=60, n_prior=30)
    prior = corpus_of((tmp_path / "prior.txt").read_text().splitlines(), words)
    cfg = service_config(words, f"sqlite:///{tmp_path / 's.db'}", prior=prior, prior_iter=5, n_iter=3, batch_size=20, **kw)
    with InProcessServer(cfg) as srv:
        assert post_reports(srv.url, plain_report_body(words, texts[:30]), upload_key(), "restart-a")[0] == 201
        srv.service.trainer.drain(True, 10)
        assert srv.service.model_view(3)["privacy"]["prior_data"] != "none"
    return words, texts


@pytest.mark.service
def test_a_restart_without_prior_keeps_the_status_pages_prior_sentence(tmp_path):
    """The page read the prior from this start's --prior: restarted without it, it said the output was
    post-processing of the reports alone, while the model it served was still started from the prior in the clear."""
    import html
    import re

    words, texts = _trained(tmp_path)
    cfg = service_config(words, f"sqlite:///{tmp_path / 's.db'}", n_iter=3, batch_size=20)        # no prior this time
    with InProcessServer(cfg) as srv:
        page = html.unescape(re.sub(r"\s+", " ", http("GET", srv.url + "/")[2].decode()))
        assert "and of the prior corpus, which it uses in the clear and no epsilon covers" in page
        kept = dict((k, (held, given)) for k, held, given in srv.service.settings_kept_by_model())
        assert kept["prior"] == (True, False) and kept["prior_iter"] == (5, 200)


@pytest.mark.service
def test_a_fresh_server_without_prior_says_nothing_of_one(tmp_path):
    import html
    import re

    words, _ = make_data(tmp_path, vocab_size=60, n_docs=10, n_prior=5)
    with InProcessServer(service_config(words, f"sqlite:///{tmp_path / 's.db'}")) as srv:
        page = html.unescape(re.sub(r"\s+", " ", http("GET", srv.url + "/")[2].decode()))
        assert "post-processing of the randomized reports." in page and "prior corpus" not in page
        assert srv.service.settings_kept_by_model() == []


@pytest.mark.service
def test_serve_warns_that_the_active_model_keeps_its_settings(tmp_path, monkeypatch, capsys):
    """The banner echoed --topics 7 while the server went on serving the 5-topic model; now a warning says so."""
    import uvicorn

    from dptopic.cli.main import main
    from service_helpers import free_port

    words, _ = _trained(tmp_path)
    monkeypatch.setattr(uvicorn, "Config", lambda *a, **k: None)
    monkeypatch.setattr(uvicorn, "Server", NoServer)
    rc = main(["serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--database",
               f"sqlite:///{tmp_path / 's.db'}", "--topics", "7", "--delta", "1e-7", "--port", str(free_port()),
               "--quiet"])
    err = " ".join(capsys.readouterr().err.split())
    assert rc in (0, None), err
    assert "the database's active model keeps n_topics=3" in err and "delta=1e-05" in err and "a prior corpus" in err
    assert "--topics" in err and "--delta" in err and "--prior" in err and "POST /v1/admin/rotate" in err


@pytest.mark.service
def test_fed_another_body_under_a_used_key_is_checked_before_the_key(tmp_path):
    import numpy as np

    from dptopic.contributor.fedlda import FedClient
    from dptopic.corpus import Corpus
    from dptopic.protocol import codec as protocol_codec

    words, texts = make_data(tmp_path, vocab_size=60, n_docs=20, n_prior=5)
    cfg = service_config(words, f"sqlite:///{tmp_path / 's.db'}", fed_epsilon_per_entry=5.0, fed_pad_length=16, fed_min_updates=2)
    with InProcessServer(cfg) as srv:
        status, conf = get_json(srv.url + "/v1/config")
        fed = conf["fed"]
        assert fed["subset_size"] == 0 and fed["words_per_report"] >= 1
        # every name it lists is a key of the fed settings it sends ("delta" was renamed failure_rate)
        assert fed["unused_by_this_rule"] == ["failure_rate", "gamma", "variant", "replacement", "local_iter"]
        assert set(fed["unused_by_this_rule"]) <= set(fed)
        rrp = protocol_codec.fed_config_from_dict(fed)
        c = Corpus.from_texts(texts[:5], vocabulary=cfg.fed_vocabulary.words, max_vocab=None)
        client = FedClient("u1", c, rrp, np.random.default_rng(0))
        _, _, broadcast = http("GET", srv.url + "/v1/fed/round")
        body = client.run_round(broadcast)
        key = upload_key()
        hdr = {"Content-Type": "application/octet-stream", "Idempotency-Key": key}
        assert http("POST", srv.url + "/v1/fed/updates", body, hdr)[0] in (200, 201)
        broken = bytearray(body)
        broken[-1] ^= 0xFF
        status, _, data = http("POST", srv.url + "/v1/fed/updates", bytes(broken), hdr)
        assert status == 400 and b"malformed_update" in data            # was 409 idempotency_key_reused
        assert http("POST", srv.url + "/v1/fed/updates", body, hdr)[0] == 200     # the retry is still a replay
