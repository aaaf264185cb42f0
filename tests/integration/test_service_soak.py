"""Soak test: a real ``dptopic serve`` on 127.0.0.1 under steady load for 60 s (slow set: ``pytest -m slow``).

Memory stays flat (the server's resident set after warm-up grows by less than 25% + 30 MB), no request fails,
and the database holds exactly the reports that were acknowledged, each once.
"""
import http.client
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from service_helpers import Server, count_rows, make_data

pytestmark = pytest.mark.slow
SECONDS = 60


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


@pytest.mark.service
def test_sixty_seconds_of_steady_load(tmp_path):
    from dptopic.contributor.randomizer import Randomizer

    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to read the server's memory")
    words, texts = make_data(tmp_path)
    db = f"sqlite:///{tmp_path / 'soak.db'}"
    srv = Server(tmp_path, db, "--train-interval", "1").start()
    rz = Randomizer(words, epsilon_word=2.0)
    # one body per request, as real contributors send (only bodies with an upload nonce are refused when repeated);
    # one randomization of many documents, cut into single-report uploads, any repeated body dropped
    many = rz.randomize([texts[i % len(texts)].split() for i in range(240_000)])
    bodies = list(dict.fromkeys(many[i:i + 1].to_bytes(include_vocabulary=False) for i in range(240_000)))
    acked, errors, stop = [], [], time.monotonic() + SECONDS
    lock = threading.Lock()

    def client(c):
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        i = 0
        mine = bodies[c::4]
        while time.monotonic() < stop and i < len(mine):
            key = f"soak-{c}-{i:09d}"
            try:
                conn.request("POST", "/v1/reports", mine[i],
                             {"Content-Type": "application/octet-stream", "Idempotency-Key": key})
                r = conn.getresponse()
                r.read()
                with lock:
                    (acked if r.status == 201 else errors).append(key if r.status == 201 else r.status)
            except OSError as e:
                with lock:
                    errors.append(repr(e))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
            i += 1
        conn.close()

    try:
        threads = [threading.Thread(target=client, args=(c,)) for c in range(4)]
        for t in threads:
            t.start()
        samples = []
        while time.monotonic() < stop:
            time.sleep(5)
            samples.append(_rss_kb(srv.proc.pid))
        for t in threads:
            t.join()
        assert srv.proc.poll() is None, "the server died under load"
    finally:
        srv.stop()
    assert not errors, errors[:5]
    rows = count_rows(db)
    assert rows["n_reports"] == len(acked) == len(set(acked)) > 10_000
    assert set(rows["submissions"]) == set(acked)
    warm = np.median(samples[1:4])
    assert max(samples[4:]) < warm * 1.25 + 30_000, samples
