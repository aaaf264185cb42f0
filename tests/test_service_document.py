"""``dptopic serve --report-kind document``: a real server on 127.0.0.1 taking document-level local-DP reports."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.local import DocumentRandomizer, Randomizer  # noqa: E402

from service_helpers import (Server, admin, count_rows, get_json, http, make_data, post_reports,  # noqa: E402
                             with_format_version)


@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_document_kind_server_stores_trains_and_refuses_the_other_kind(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=600)
    db = f"sqlite:///{tmp_path / 'doc.db'}"
    srv = Server(tmp_path, db, "--train-interval", "0", document=True).start()
    try:
        cfg = get_json(srv.url + "/v1/config")[1]
        assert cfg["report_kind"] == "document" and cfg["report_format"]["kind"] == "document"
        assert cfg["epsilon_doc"] == 8.0 and cfg["f"] is None
        rz = DocumentRandomizer(words, 8.0)
        body = rz.randomize([t.split() for t in texts]).to_bytes(include_vocabulary=False)
        assert post_reports(srv.url, body, "doc-upload-0001", "dora")[0] == 201
        before = count_rows(db)
        # word-level reports, other epsilon, other vocabulary: 422 with one line, nothing stored
        word_body = Randomizer(words, epsilon_word=2.0).randomize([texts[0].split()]).to_bytes(include_vocabulary=False)
        other_eps = DocumentRandomizer(words, 4.0).randomize([texts[0].split()]).to_bytes(include_vocabulary=False)
        other_vocab = DocumentRandomizer(list(reversed(words)), 8.0).randomize([texts[0].split()]).to_bytes(
            include_vocabulary=False)
        other_version = with_format_version(body, 2)
        for i, bad in enumerate((word_body, other_eps, other_vocab, other_version)):
            status, _, data = http("POST", srv.url + "/v1/reports", bad,
                                   {"Content-Type": "application/octet-stream", "Idempotency-Key": f"doc-bad-{i:04d}"})
            err = json.loads(data)["error"]
            assert status == 422 and err["code"] == "incompatible_reports" and "\n" not in err["message"]
        assert "word-level" in json.loads(http("POST", srv.url + "/v1/reports", word_body, {
            "Content-Type": "application/octet-stream", "Idempotency-Key": "doc-bad-9999"})[2])["error"]["message"]
        after = count_rows(db)
        assert after["n_reports"] == before["n_reports"] == 600 and after["submissions"] == before["submissions"]
        # the trainer turns the stored reports into LocalDocumentLDA topics, exactly once
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        topics = get_json(srv.url + "/v1/topics")[1]
        assert topics["reports_used"] == 600 and len(topics["topics"]) == 4
        assert topics["privacy"]["epsilon_doc"] == 8.0
        assert topics["per_contributor"]["privacy_of_that_contributor"]["epsilon_contributor_doc_basic"] == 8.0 * 600
        page = http("GET", srv.url + "/")[2].decode()
        assert "eps_doc = 8 per document" in page and "LocalDocumentLDA" in page
        # no word-level wording or column on a document-level server's page
        assert "eps, word level" not in page and "presence of one word" not in page
        assert "Each report protects one whole document" in page
    finally:
        srv.stop()
    # the same database refuses to be served for word-level reports
    word_srv = Server(tmp_path, db, "--train-interval", "0")
    with pytest.raises(RuntimeError, match="--report-kind"):
        word_srv.start(timeout=60)


def test_submit_to_a_document_kind_server(tmp_path, capsys):
    from dptopic.cli.main import main
    words, texts = make_data(tmp_path, vocab_size=40, n_docs=50)
    db = f"sqlite:///{tmp_path / 'doc.db'}"
    srv = Server(tmp_path, db, "--train-interval", "0", document=True).start()
    try:
        assert main(["submit", "--server", srv.url, "--corpus", str(tmp_path / "docs.txt"), "--contributor", "eve"]) == 0
        out = capsys.readouterr().out
        assert "50 randomized reports" in out and "eps_doc=8 per document" in out and "eps_word" not in out
        assert count_rows(db)["n_reports"] == 50
        # documents with fewer than two vocabulary words: the document-level note, not the word-level one
        (tmp_path / "short.txt").write_text(f"{words[0]}\nnothing known here\n{texts[0]}\n")
        assert main(["submit", "--server", srv.url, "--corpus", str(tmp_path / "short.txt")]) == 0
        err = capsys.readouterr().err
        assert "note: 2 of 3 documents have fewer than two vocabulary words" in err and "they report 'no pair'" in err
        assert "outside the guarantee" in err
        assert "contain no word of the vocabulary" not in err
    finally:
        srv.stop()
