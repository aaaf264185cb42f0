"""Stop 48: the collection service (walk-throughs and the list left by stop 47), one test each."""
from __future__ import annotations

import logging

from test_walk47a import InProcessServer, _cfg, http, make_data


def test_status_page_answers_html_while_the_database_is_down(tmp_path, monkeypatch, caplog):
    from dptopic.service.storage import StorageError

    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with InProcessServer(_cfg(words, f"sqlite:///{tmp_path / 's.db'}")) as srv:
        status, headers, data = http("GET", srv.url + "/")
        assert status == 200 and "text/html" in headers["content-type"]

        def down(*a, **k):
            raise StorageError('database error: connection to server at "10.1.2.3", port 5432 failed')

        monkeypatch.setattr(srv.service.storage, "counts", down)
        with caplog.at_level(logging.ERROR, logger="dptopic.service"):
            status, headers, data = http("GET", srv.url + "/")
        page = data.decode()
        assert status == 503 and "text/html" in headers["content-type"], (status, headers)
        assert page.startswith("<!doctype html>") and "unavailable" in page and 'http-equiv="refresh"' in page
        assert "10.1.2.3" not in page and "5432" not in page        # the detail stays in the log
        assert any("10.1.2.3" in r.getMessage() for r in caplog.records)
        monkeypatch.undo()
        assert http("GET", srv.url + "/")[0] == 200                  # back when the database is
