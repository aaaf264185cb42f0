"""What a deployment walk-through of the collection service found (2026-11-23), each pinned against a real
``dptopic serve`` on 127.0.0.1: the released model states the worst contributor, not one report; uploads without a
pseudonym count one by one; the public page names no pseudonym; mistyped report headers are malformed, not another
version; FedLDA client ids are checked before they reach the database."""
from __future__ import annotations

import base64
import json
import struct

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.local import DocumentRandomizer, Randomizer  # noqa: E402

from service_helpers import (TOKEN, Server, admin, get_json, http, make_data, post_reports)  # noqa: E402


def _rewrite_header(body: bytes, **fields) -> bytes:
    """A report file whose header fields are replaced, checksum valid (what a foreign client could send)."""
    import hashlib

    (n,) = struct.unpack("<I", body[8:12])
    head = json.loads(body[12:12 + n])
    head.update(fields)
    h = json.dumps(head).encode()
    core = body[:8] + struct.pack("<I", len(h)) + h + body[12 + n:-32]
    return core + hashlib.sha256(core).digest()


def _post(url, body, key, contributor=None):
    headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": key}
    if contributor:
        headers["Dptopic-Contributor"] = contributor
    status, _, data = http("POST", url + "/v1/reports", body, headers)
    return status, json.loads(data)


@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_document_server_releases_the_worst_contributors_epsilon_and_names_no_pseudonym(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=300)
    db = f"sqlite:///{tmp_path / 'doc.db'}"
    srv = Server(tmp_path, db, "--train-interval", "0", document=True).start()
    try:
        rz = DocumentRandomizer(words, 8.0)

        def body(docs):
            return rz.randomize([t.split() for t in docs]).to_bytes(include_vocabulary=False)

        assert post_reports(srv.url, body(texts[:40]), "walk-upload-0001", "contributor-0001")[0] == 201
        assert post_reports(srv.url, body(texts[40:60]), "walk-upload-0002", "contributor-0002")[0] == 201
        # one upload of 90 documents without a pseudonym, one of 10: each is a contributor of its own
        assert post_reports(srv.url, body(texts[60:150]), "walk-upload-0003")[0] == 201
        assert post_reports(srv.url, body(texts[150:160]), "walk-upload-0004")[0] == 201
        per = get_json(srv.url + "/v1/topics")[1]["per_contributor"]
        assert per["max_reports_from_one_contributor"] == 90     # not the 40 of the largest pseudonym
        assert "each upload without one counts as a contributor of its own" in per["note"]
        for path in ("/v1/config", "/v1/topics", "/healthz"):   # HEAD is answered where GET is, with no body
            assert http("HEAD", srv.url + path)[::2] == (200, b"")
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        status, doc = get_json(srv.url + "/v1/model")
        assert status == 200
        privacy = json.loads(doc["model_json"])["privacy"]
        # the model pulled from the server states what /v1/topics states: 90 reports of eps_doc 8, composed
        assert privacy["reports_per_contributor"] == 90 and privacy["epsilon_contributor"] == pytest.approx(720.0)
        assert privacy["epsilon"] == pytest.approx(720.0, rel=1e-3) and privacy["epsilon_doc"] == 8.0
        card = json.loads(doc["model_json"])["privacy_card"]
        assert card["trust_model"].startswith("local") and card["epsilon"] == pytest.approx(720.0, rel=1e-3)
        page = http("GET", srv.url + "/")[2].decode()
        assert "contributor-" not in page                          # pseudonyms are not published
        assert "2 pseudonymous contributors and 2 uploads without a pseudonym" in " ".join(page.split())
        assert "(one upload without a pseudonym)" in page and "All 4 contributors" in " ".join(page.split())
        # a header that mistypes a field is malformed (400), not "another version" (422), and nothing is stored
        good = body(texts[160:170])
        before = get_json(srv.url + "/v1/topics")[1]["reports_stored"]
        for i, fields in enumerate(({"version": "1"}, {"n_reports": "10"}, {"n_reports": True}, {"epsilon": "8"},
                                    {"subset_size": 4.0})):
            status, err = _post(srv.url, _rewrite_header(good, **fields), f"walk-bad-{i:04d}")
            assert status == 400 and err["error"]["code"] == "malformed_reports", (fields, err)
            assert "\n" not in err["error"]["message"]
        assert get_json(srv.url + "/v1/topics")[1]["reports_stored"] == before
        # an admin body that is not UTF-8 is named as such
        status, _, data = http("POST", srv.url + "/v1/admin/train", b'{"force":"\xff"}',
                               {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        assert status == 400 and "not UTF-8" in json.loads(data)["error"]["message"]
    finally:
        srv.stop()


@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_word_server_keeps_the_prior_documents_rows_and_mistyped_headers_are_malformed(tmp_path, capsys):
    from dptopic.cli.main import main
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=120, n_prior=40)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'w.db'}", "--train-interval", "0").start()
    try:
        rz = Randomizer(words, epsilon_word=2.0)
        good = rz.randomize([t.split() for t in texts[:50]]).to_bytes(include_vocabulary=False)
        for i, fields in enumerate(({"n_reports": "50"}, {"version": "1"}, {"epsilon_word": 5.0}, {"f": True})):
            status, err = _post(srv.url, _rewrite_header(good, **fields), f"word-bad-{i:04d}")
            assert status == 400 and err["error"]["code"] == "malformed_reports", (fields, err)
        assert post_reports(srv.url, good, "word-good-0001", "wendy")[0] == 201
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        doc = get_json(srv.url + "/v1/model")[1]
        meta = json.loads(doc["model_json"])
        assert "prior_presence" not in doc["arrays"] and "prior_presence" not in meta["arrays"]
        assert meta["privacy"]["reports_per_contributor"] == 50
        arrays = {k: np.frombuffer(base64.b64decode(v), np.uint8) for k, v in doc["arrays"].items()}
        assert set(arrays) == set(meta["arrays"])                   # what is listed is what is sent
        page = " ".join(http("GET", srv.url + "/")[2].decode().split())
        assert "of the prior corpus, which it uses in the clear and no epsilon covers" in page
        # submit's summary composes both guarantees a word-level report gives, not only the nominal document one
        (tmp_path / "mine.txt").write_text("\n".join(texts[50:53]) + "\n")
        assert main(["submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--retries", "0"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert ("Privacy of these 3 documents (V=60; eps_word=2, eps_doc=120 per document; together eps_word=6 for one"
                " word's presence in each and eps=360 for the documents") in out
    finally:
        srv.stop()


def test_a_fedlda_client_id_outside_the_pseudonym_rule_is_refused_before_storage():
    from dptopic.federated import ClientUpdate
    from dptopic.service import codec
    from dptopic.service.client import fed_participate
    from dptopic.errors import DPTopicError

    t, w = np.zeros(3, np.int32), np.zeros(3, np.int32)
    for bad in ("x" * 200, "a\x00b", "name with spaces"):
        msg = ClientUpdate(0, bad, "v", t, w).encode()
        with pytest.raises(codec.IncompatibleReports, match="client id must be 1-128 characters"):
            codec.fed_check_update(msg, None, None, 0)
        with pytest.raises(DPTopicError, match="invalid client id"):     # the CLI's --client-id, before any request
            fed_participate("http://127.0.0.1:9", None, client_id=bad)


def test_topics_words_takes_ascii_digits_only(tmp_path):
    make_data(tmp_path, vocab_size=60, n_docs=10, n_prior=10)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'q.db'}", "--train-interval", "0", document=True).start()
    try:
        assert http("GET", srv.url + "/v1/topics?words=5")[0] == 200
        for bad in ("%D9%A1%D9%A0", "1_0", "%205", "-1", "0", "101", "x"):
            status, _, data = http("GET", srv.url + f"/v1/topics?words={bad}")
            assert status == 400 and json.loads(data)["error"]["code"] == "bad_request", bad
    finally:
        srv.stop()


def _planted_docs(words, n_docs=200):
    from dptopic.corpus import lda_corpus

    c = lda_corpus(n_docs=n_docs, vocab_size=len(words), n_topics=3, doc_length=20, seed=1).corpus
    return [[words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]] for d in range(c.n_docs)]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", ["document", "word"])
def test_a_stated_reports_per_contributor_survives_save_load_and_more_training(tmp_path, kind):
    import dptopic
    from dptopic.models import OLPLDA, LocalDocumentLDA

    from service_helpers import make_words

    words = make_words(50)
    docs = _planted_docs(words)
    if kind == "document":
        rz = DocumentRandomizer(words, 8.0)
        m = LocalDocumentLDA(n_topics=3).fit(rz.randomize(docs[:100]))
    else:
        rz = Randomizer(words, epsilon_word=2.0)
        m = OLPLDA(prior_corpus="none", n_topics=3, n_iter=3, batch_size=100).partial_fit(rz.randomize(docs[:100]))
    m.for_contributors(9)
    stated = m.privacy_["epsilon"]
    m.save(tmp_path / "m")
    back = dptopic.load(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    if kind == "document":       # the saved parameters agree with the report
        assert meta["params"]["reports_per_contributor"] == 9
    back.partial_fit(rz.randomize(docs[100:]))
    assert back.privacy_["reports_per_contributor"] == 9 and back.privacy_["epsilon"] == pytest.approx(stated)
    back.for_contributors(2)                                        # never lowered
    assert back.privacy_["reports_per_contributor"] == 9
    back.for_contributors(np.int64(12))                             # a count from NumPy or SQL is a count
    assert back.privacy_["reports_per_contributor"] == 12
    for bad in (0, 2.5, True, "3", None):                           # the same one-line refusal in both classes
        with pytest.raises(dptopic.DPTopicError, match="invalid reports"):
            back.for_contributors(bad)
    assert back.privacy_["reports_per_contributor"] == 12


def test_a_stated_fraction_of_reports_is_read_up_never_down():
    import dptopic
    from dptopic.models._contributors import stated_reports

    assert stated_reports({"reports_per_contributor": 2.5}) == 3 and stated_reports({"reports_per_contributor": 4}) == 4
    for junk in ({}, None, {"reports_per_contributor": True}, {"reports_per_contributor": "9"},
                 {"reports_per_contributor": 0}, {"reports_per_contributor": float("nan")}):
        assert stated_reports(junk) == 1
    with pytest.raises(dptopic.DPTopicError, match="not a count"):
        stated_reports({"reports_per_contributor": float("inf")})


@pytest.mark.filterwarnings("ignore")
def test_a_failed_store_read_leaves_the_batch_untrained_not_logged_as_skipped(tmp_path):
    import hashlib
    import secrets

    from dptopic.service import ServiceConfig, codec
    from dptopic.service.app import Service
    from dptopic.service.storage import StorageError, Submission

    from service_helpers import make_words

    words = make_words(50)
    docs = _planted_docs(words, 100)
    cfg = ServiceConfig(words, None, database=f"sqlite:///{tmp_path / 't.db'}", report_kind="document",
                        epsilon_doc=8.0, batch_size=50)
    svc = Service(cfg, start_trainer=False)
    svc.open()
    rz = DocumentRandomizer(words, 8.0)
    for i in range(2):
        body = codec.encode_reports(rz.randomize(docs[i * 50:(i + 1) * 50]))
        rows = codec.report_rows(svc.kind.decode(body, cfg, svc.fingerprint))
        svc.storage.store([Submission(secrets.token_hex(8), hashlib.sha256(body).hexdigest(), f"c{i}", rows)])
    real, calls = svc.storage.max_reports_per_contributor, []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise StorageError("database error: connection reset (simulated)")
        return real()

    svc.storage.max_reports_per_contributor = flaky
    with pytest.raises(StorageError):
        svc.trainer.step()
    assert svc.trainer.step()["status"] == "trained" and svc.trainer.step()["status"] == "trained"
    assert [b["status"] for b in svc.storage.batches()] == ["trained", "trained"]
    row, arrays = svc.storage.active_model_with_arrays()
    assert codec.model_from_blobs(row["meta_json"], arrays).n_reports_ == 100


def test_a_pseudonym_with_a_final_newline_is_refused():
    from dptopic.service import codec

    assert codec.PSEUDONYM.fullmatch("alice") and not codec.PSEUDONYM.fullmatch("alice\n")
    with pytest.raises(codec.IncompatibleReports):
        codec.fed_check_update(__import__("dptopic.federated", fromlist=["ClientUpdate"]).ClientUpdate(
            0, "alice\n", "v", np.zeros(3, np.int32), np.zeros(3, np.int32)).encode(), None, None, 0)
