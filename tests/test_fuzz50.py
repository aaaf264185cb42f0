"""Stop 48's second fuzz run (the service and the loaders): what gave a 500, was read two ways or blamed the wrong
line."""
from __future__ import annotations

import hashlib
import http.client
import json
import struct

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from service_helpers import count_rows, http as request  # noqa: E402
from test_walk47a import InProcessServer, _body, _cfg, make_data  # noqa: E402

TOKEN = "A" * 32


def _raw(port: int, method: str, path: str, headers: list, body: bytes = b"") -> tuple[int, dict]:
    """A request whose headers may repeat (urllib folds them)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.putrequest(method, path)
    for k, v in headers:
        c.putheader(k, v)
    c.putheader("Content-Length", str(len(body)))
    c.endheaders(body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data)


def _with_header(raw: bytes, edit) -> bytes:
    (H,) = struct.unpack("<I", raw[8:12])
    head = edit(raw[12:12 + H].decode())
    body = raw[:8] + struct.pack("<I", len(head.encode())) + head.encode() + raw[12 + H:-32]
    return body + hashlib.sha256(body).digest()


@pytest.fixture()
def served(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=30, n_prior=5)
    db = f"sqlite:///{tmp_path / 'f.db'}"
    with InProcessServer(_cfg(words, db, admin_token=TOKEN)) as srv:
        yield srv, words, texts, db


def test_a_lone_surrogate_in_an_echoed_value_or_a_json_body_is_a_4xx_not_a_500(served):
    srv, words, texts, db = served
    before = count_rows(db)
    bad = _with_header(_body(words, texts[:2]), lambda t: t.replace(json.loads(t)["vocabulary_sha256"], "\\ud800"))
    status, _, data = request("POST", srv.url + "/v1/reports", bad,
                              {"Content-Type": "application/octet-stream", "Idempotency-Key": "fuzz50-sur-0001"})
    doc = json.loads(data)
    assert status == 422 and doc["error"]["code"] == "incompatible_reports", doc
    status, _, data = request("POST", srv.url + "/v1/admin/rotate", b'{"note": "\\ud800"}',
                              {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    doc = json.loads(data)
    assert status == 400 and doc["error"]["code"] == "bad_json" and "surrogate" in doc["error"]["message"], doc
    assert count_rows(db) == before


@pytest.mark.parametrize("name, values", [("Idempotency-Key", ["fuzz50-key-AAAA", "fuzz50-key-BBBB"]),
                                          ("Content-Type", ["application/octet-stream", "text/plain"]),
                                          ("Dptopic-Contributor", ["alice", "mallory"])])
def test_a_header_sent_twice_is_refused(served, name, values):
    srv, words, texts, db = served
    port = int(srv.url.rsplit(":", 1)[1])
    base = {"Content-Type": "application/octet-stream", "Idempotency-Key": "fuzz50-key-CCCC"}
    headers = [(k, v) for k, v in base.items() if k != name] + [(name, v) for v in values]
    before = count_rows(db)
    status, doc = _raw(port, "POST", "/v1/reports", headers, _body(words, texts[:2]))
    assert status == 400 and f"the {name.lower()} header is sent 2 times" in doc["error"]["message"].lower(), doc
    assert count_rows(db) == before


def test_two_content_encoding_headers_are_one_list_of_codings(served):
    srv, words, texts, db = served
    port = int(srv.url.rsplit(":", 1)[1])
    headers = [("Content-Type", "application/octet-stream"), ("Idempotency-Key", "fuzz50-enc-0001"),
               ("Content-Encoding", "identity"), ("Content-Encoding", "gzip")]
    status, doc = _raw(port, "POST", "/v1/reports", headers, _body(words, texts[:2]))
    assert status == 415 and doc["error"]["code"] == "unsupported_content_encoding", doc


def test_a_fedlda_message_with_a_repeated_or_extra_array_or_a_surrogate_is_refused():
    from dptopic.federated.messages import MessageError, _encode, decode_message

    t = np.zeros(4, np.int32)
    w = np.ones((4, 1), np.int32)
    good = {"kind": "update", "round": 0, "client": "abcd", "vocab": "0" * 16}
    decode_message(_encode(good, {"topics": t, "words": w}))
    with pytest.raises(MessageError, match="carries the arrays topics, words only"):
        decode_message(_encode(good, {"topics": t, "words": w, "x": t}))
    raw = _encode(good, {"topics": t, "words": w})
    (hlen,) = struct.unpack("<I", raw[5:9])
    head = json.loads(raw[9:9 + hlen])
    head["arrays"].append(head["arrays"][1])            # "words" listed twice
    hb = json.dumps(head).encode()
    payload = raw[9 + hlen:-4] + w.astype("<i4").tobytes()
    import zlib

    body = raw[:5] + struct.pack("<I", len(hb)) + hb + payload
    with pytest.raises(MessageError, match="'words' is listed twice"):
        decode_message(body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF))
    with pytest.raises(MessageError, match="lone surrogate"):
        decode_message(_encode(dict(good, client="\ud800"), {"topics": t, "words": w}))


@pytest.mark.parametrize("first, then, line, got", [("1 1 2 7", "1 2 1", 4, 4), ("1 1", "1 2 1", 4, 2),
                                                    ("1 1 2", "1 2", 5, 2)])
def test_a_uci_line_with_the_wrong_number_of_fields_is_the_one_named(tmp_path, first, then, line, got):
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

    (tmp_path / "vocab.txt").write_text("apple\nbanana\ncherry\ndate\nfig\n")
    (tmp_path / "docword.txt").write_text(f"3\n5\n5\n{first}\n{then}\n2 3 1\n3 4 2\n3 5 1\n")
    with pytest.raises(DPTopicError, match=rf"line {line} has {got} fields, not 3 \('docID wordID count'\)"):
        Corpus.from_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")


def test_a_query_parameter_given_twice_is_refused(served):
    srv, *_ = served
    for query in ("words=abc&words=5", "words=5&words=abc", "words=5&words=5"):
        status, _, data = request("GET", srv.url + "/v1/topics?" + query)
        doc = json.loads(data)
        assert status == 400 and "words is given 2 times" in doc["error"]["message"], (query, doc)
    assert request("GET", srv.url + "/v1/topics?words=5")[0] in (200, 404)
