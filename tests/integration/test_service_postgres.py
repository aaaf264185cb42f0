"""The service on PostgreSQL: a throwaway cluster (initdb + pg_ctl in a temp dir, 127.0.0.1 only)."""
from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("psycopg")

from dptopic.local import Randomizer  # noqa: E402
from dptopic.service.client import submit  # noqa: E402

from service_helpers import (PG_BIN, Server, throwaway_postgres, admin, check_exactly_once, corpus_of, count_rows,  # noqa: E402
                             get_json, make_data, post_reports)
from test_service_crash import crash_scenario  # noqa: E402

pytestmark = pytest.mark.skipif(PG_BIN is None, reason="PostgreSQL server binaries (initdb, pg_ctl) are not installed:"
                                                       " apt-get install postgresql")


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    yield from throwaway_postgres()


def test_submit_replay_and_train_on_postgres(pg, tmp_path):
    words, texts = make_data(tmp_path)
    srv = Server(tmp_path, pg.url, "--train-interval", "0").start()
    try:
        s = submit(srv.url, corpus_of(texts[:100], words), contributor="pg-alice")
        assert s["reports"] == 100
        body = Randomizer(words, epsilon_word=2.0, secure=True).randomize([t.split() for t in texts[100:110]]) \
            .to_bytes(include_vocabulary=False)
        assert post_reports(srv.url, body, "pg-key-000001")[0] == 201
        status, doc = post_reports(srv.url, body, "pg-key-000001")
        assert status == 200 and doc["replayed"]
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        status, topics = get_json(srv.url + "/v1/topics")
        assert status == 200 and topics["reports_used"] == topics["reports_stored"] == 110
        assert len(topics["topics"]) == 4
        status, health = get_json(srv.url + "/healthz")
        assert health["database"] == "postgresql" and health["schema_version"] >= 2
    finally:
        srv.stop()
    check_exactly_once(count_rows(pg.url))


def test_kill_9_while_posting_and_training_postgres(pg, tmp_path):
    from sqlalchemy import create_engine, text

    eng = create_engine(pg.url.replace("/dptopic", "/postgres"), isolation_level="AUTOCOMMIT")
    with eng.connect() as c:
        c.execute(text("CREATE DATABASE crash"))
    eng.dispose()
    crash_scenario(tmp_path, pg.url.replace("/dptopic", "/crash"))
