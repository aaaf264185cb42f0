"""The status page rendered by a real headless Chromium (``make test-browser`` installs Debian's chromium)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

pytest.importorskip("starlette")

from dptopic.contributor.randomizer import Randomizer  # noqa: E402
from service_helpers import Server, admin, get_json, make_data, post_reports  # noqa: E402

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH: run 'make test-browser' (installs"
                                                         " Debian's chromium) to render the status page")


@pytest.mark.browser
@pytest.mark.service
def test_status_page_shows_topics_in_headless_chromium(tmp_path):
    words, texts = make_data(tmp_path)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'b.db'}", "--train-interval", "0").start()
    try:
        body = Randomizer(words, epsilon_word=2.0, secure=True).randomize([t.split() for t in texts[:80]]) \
            .to_bytes(include_vocabulary=False)
        assert post_reports(srv.url, body, "browser-000001", "dana")[0] == 201
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        topics = get_json(srv.url + "/v1/topics")[1]["topics"]
        assert topics
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                              "--virtual-time-budget=5000", "--dump-dom", srv.url + "/"],
                             capture_output=True, text=True, timeout=120).stdout
    finally:
        srv.stop()
    assert '<table id="topics">' in dom
    for t in topics:
        assert " ".join(t["words"]) in dom  # every topic's top words, as rendered
    assert 'id="reports-stored">80<' in dom and "Epsilon per contributor" in dom
