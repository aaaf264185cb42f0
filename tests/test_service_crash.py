"""kill -9 the server while clients post and the trainer trains; restart; every acknowledged report is
stored exactly once and no report is trained twice or skipped. SQLite here; PostgreSQL in
test_service_postgres.py."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")

from dptopic.local import Randomizer  # noqa: E402

from service_helpers import Server, admin, check_exactly_once, count_rows, make_data, post_reports  # noqa: E402


def crash_scenario(tmp, database, n_clients=4, uploads_per_client=12, reports_per_upload=5):
    words, texts = make_data(tmp)
    rz = Randomizer(words, epsilon_word=2.0, secure=True)
    bodies = [[rz.randomize([t.split() for t in texts[(c * 50 + u * 3) % 300:][:reports_per_upload]])
               .to_bytes(include_vocabulary=False) for u in range(uploads_per_client)] for c in range(n_clients)]
    srv = Server(tmp, database, "--train-interval", "0.05", "--batch-size", "10").start()
    acked, lock = {}, threading.Lock()
    deadline = time.monotonic() + 150

    def client(c):
        for u, body in enumerate(bodies[c]):
            key = f"crash-c{c}-u{u:03d}"
            while time.monotonic() < deadline:  # retry the same key and body until acknowledged
                try:
                    status, doc = post_reports(srv.url, body, key, f"client{c}", timeout=10)
                except OSError:
                    time.sleep(0.1)
                    continue
                if status in (200, 201):
                    with lock:
                        acked[key] = doc["reports"]
                    break
                assert status >= 500, doc  # only unavailability may be retried
                time.sleep(0.1)
            time.sleep(0.01)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(n_clients)]
    for t in threads:
        t.start()
    total = n_clients * uploads_per_client
    while len(acked) < total // 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    srv.kill()  # SIGKILL: no shutdown handler runs
    n_acked_at_kill = len(acked)
    srv.start()
    for t in threads:
        t.join(max(1.0, deadline - time.monotonic()))
    assert len(acked) == total, f"only {len(acked)} of {total} uploads acknowledged"
    assert 0 < n_acked_at_kill < total
    status, _ = admin(srv.url, "/v1/admin/train", {"force": True})
    assert status == 200
    srv.stop()

    rows = count_rows(database)
    assert set(rows["submissions"]) == set(acked)  # nothing lost, nothing unacknowledged-but-invented
    for key, n in acked.items():
        assert rows["submissions"][key] == n == reports_per_upload
        assert rows["per_key"][key] == n  # stored exactly once
    assert rows["n_reports"] == total * reports_per_upload
    check_exactly_once(rows)
    active = [m for m in rows["models"] if m["status"] == "active"][0]
    assert active["n_reports_used"] == rows["n_reports"]  # after the final drain, every report used once
    assert np.all(np.diff(rows["ids"]) > 0)


def test_kill_9_while_posting_and_training_sqlite(tmp_path):
    crash_scenario(tmp_path, f"sqlite:///{tmp_path / 'crash.db'}")
