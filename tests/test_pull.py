"""`dptopic pull`: a collection server's current model into a model folder, against a live server on 127.0.0.1."""
import http.server
import json
import subprocess
import sys
import threading

import pytest

pytest.importorskip("starlette")

import dptopic  # noqa: E402
from dptopic.local import Randomizer  # noqa: E402

from service_helpers import Server, admin, free_port, get_json, make_data, post_reports  # noqa: E402


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "dptopic", *args], capture_output=True, text=True, timeout=120)


def test_pull_writes_the_servers_model_folder(tmp_path):
    words, texts = make_data(tmp_path)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'p.db'}", "--train-interval", "0").start()
    out = tmp_path / "pulled"
    try:
        r = _cli("pull", "--server", srv.url, "--out", str(out))
        assert r.returncode == 2 and "no model" in r.stderr and not out.exists()
        body = Randomizer(words, epsilon_word=2.0, secure=True).randomize([t.split() for t in texts[:80]]) \
            .to_bytes(include_vocabulary=False)
        assert post_reports(srv.url, body, "pull-0000001", "ann")[0] == 201
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        served = get_json(srv.url + "/v1/topics?words=5")[1]
        r = _cli("pull", "--server", srv.url, "--out", str(out))
        assert r.returncode == 0, r.stderr
        r2 = _cli("pull", "--server", srv.url, "--out", str(out))
        assert r2.returncode == 2 and "--overwrite" in r2.stderr
    finally:
        srv.stop()
    model = dptopic.load(out)
    assert [t["words"] for t in served["topics"]] == model.topic_words(5)
    assert model.privacy_ == served["privacy"]
    r = _cli("topics", "--model", str(out))
    assert r.returncode == 0 and served["topics"][0]["words"][0] in r.stdout


def test_pull_from_a_server_that_is_down_or_speaks_another_version(tmp_path):
    out = tmp_path / "m"
    r = _cli("pull", "--server", f"http://127.0.0.1:{free_port()}", "--out", str(out), "--retries", "0", "--timeout", "2")
    assert r.returncode == 2 and "is the server" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()

    class Other(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            data = json.dumps({"api_version": "v9"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Other)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        r = _cli("pull", "--server", f"http://127.0.0.1:{httpd.server_port}", "--out", str(out))
    finally:
        httpd.shutdown()
    assert r.returncode == 2 and "v9" in r.stderr and "upgrade" in r.stderr and not out.exists()
