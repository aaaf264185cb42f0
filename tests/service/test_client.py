"""The contributor-side commands (`submit`, `pull`, `fed-client`) against a server whose replies are not what a
dptopic server sends (a proxy's page, a cut-off body, missing fields): one line, exit 2, never a traceback. A real
HTTP server on 127.0.0.1 answers with canned bodies."""
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture
def canned():
    bodies: dict = {}

    class H(http.server.BaseHTTPRequestHandler):
        def _send(self):
            b = bodies.get(self.path.split("?")[0], "{}")
            b = b.encode() if isinstance(b, str) else json.dumps(b).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def do_GET(self):
            self._send()

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self._send()

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", bodies
    srv.shutdown()
    srv.server_close()


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd)


def _valid_config():
    from dptopic.service import codec

    words = ["alpha", "beta", "gamma", "delta"]
    return {"api_version": "v1", "report_format": codec.report_format("word"), "report_kind": "word",
            "vocabulary": words, "vocabulary_sha256": codec.vocabulary_fingerprint(words), "f": 0.9,
            "max_reports_per_request": 100, "max_body_bytes": 1 << 20}


@pytest.mark.parametrize("config, expect", [
    ("<html><body>proxy login</body></html>", "not JSON"),
    ('{"api_version": "v1", ', "not JSON"),
    ("[1, 2]", "JSON list, not an object"),
    ({"api_version": "v1", "report_format": "word-report"}, "names no report format"),
    ({"api_version": "v1", "report_format": {"name": "x", "version": 1}, "vocabulary": 5}, "has no vocabulary"),
    ("no max", "max_reports_per_request"),
])
def test_submit_reads_a_bad_configuration_in_one_line(canned, tmp_path, config, expect):
    url, bodies = canned
    if config == "no max":
        config = _valid_config()
        del config["max_reports_per_request"]
    bodies["/v1/config"] = config
    (tmp_path / "docs.txt").write_text("alpha beta gamma\nbeta delta alpha\n")
    r = _cli("submit", "--server", url, "--corpus", "docs.txt", "--retries", "0", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and expect in lines[0], r.stderr


def test_submit_reads_a_bad_acknowledgement_in_one_line(canned, tmp_path):
    url, bodies = canned
    bodies["/v1/config"] = _valid_config()
    (tmp_path / "docs.txt").write_text("alpha beta gamma\nbeta delta alpha\n")
    for ack, expect in (("<html>ok</html>", "not JSON"), ({"ok": True}, "without a count of reports")):
        bodies["/v1/reports"] = ack
        r = _cli("submit", "--server", url, "--corpus", "docs.txt", "--retries", "0", cwd=tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr and expect in r.stderr, r.stderr
    bodies["/v1/reports"] = {"reports": 2}
    r = _cli("submit", "--server", url, "--corpus", "docs.txt", "--retries", "0", cwd=tmp_path)
    assert r.returncode == 0, r.stderr                         # the canned server is otherwise good enough


def test_pull_reads_a_malformed_or_damaged_model_in_one_line(canned, tmp_path):
    url, bodies = canned
    bodies["/v1/config"] = {"api_version": "v1"}
    bodies["/v1/model"] = {"model_json": {"a": 1}, "arrays": {}}
    r = _cli("pull", "--server", url, "--out", "m", "--retries", "0", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "malformed model" in r.stderr, r.stderr
    bodies["/v1/model"] = {"model_json": json.dumps({"format": "dptopic-model", "version": 1}), "arrays": {}}
    r = _cli("pull", "--server", url, "--out", "m", "--retries", "0", cwd=tmp_path)
    assert r.returncode == 2 and "does not load" in r.stderr and "dptopic-model-" not in r.stderr, r.stderr
    assert not (tmp_path / "m").exists()
    bodies["/v1/config"] = "<html/>"
    r = _cli("pull", "--server", url, "--out", "m", "--retries", "0", cwd=tmp_path)
    assert r.returncode == 2 and "not JSON" in r.stderr and "Traceback" not in r.stderr, r.stderr


def _posting_client(url):
    from dptopic.service.client import ServiceClient

    class Counting(ServiceClient):
        posts = 0

        def post_bytes(self, path, body, key, extra=None):
            type(self).posts += 1
            return super().post_bytes(path, body, key, extra)

    return Counting(url, retries=0)


def test_submit_refuses_a_server_asking_for_reports_above_the_contributors_limit(canned):
    # a server is not trusted: at eps_word = 40 the "randomized" presence vectors went out exact, and were sent
    import math

    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError
    from dptopic.service.client import submit

    url, bodies = canned
    cfg = _valid_config()
    bodies["/v1/config"] = dict(cfg, f=2 / (1 + math.exp(40)))
    bodies["/v1/reports"] = {"reports": 2}   # the canned acknowledgement of the one upload
    docs = Corpus.from_texts(["alpha beta", "gamma delta"], vocabulary=cfg["vocabulary"], max_vocab=None)
    c = _posting_client(url)
    with pytest.raises(DPTopicError, match=r"eps_word \(per word\) = 40, above your limit of 16 .*nothing was"
                                           r" randomized or sent"):
        submit(url, docs, client=c)
    assert c.posts == 0
    assert submit(url, docs, client=c, max_epsilon=50)["reports"] == 2 and c.posts == 1   # the user's own choice
    bodies["/v1/config"] = cfg                                                             # f = 0.9: eps_word 0.2
    with pytest.raises(DPTopicError, match="above your limit of 0.1"):
        submit(url, docs, client=c, max_epsilon=0.1)
    for bad in (0, -1, float("nan"), float("inf"), True, "16"):
        with pytest.raises(DPTopicError, match="invalid max_epsilon"):
            submit(url, docs, client=c, max_epsilon=bad)
    assert c.posts == 1


@pytest.mark.parametrize("name", ["bob smith/ü", "", "x" * 129])
def test_submit_checks_the_pseudonym_before_asking_the_server_anything(name):
    # the reports were randomized and sent, then refused with 400 bad_contributor; "" silently became a random one
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError
    from dptopic.service.client import ServiceClient, submit

    class NoNetwork(ServiceClient):
        def request(self, *a, **k):
            raise AssertionError("no request may be made")

    docs = Corpus.from_texts(["alpha beta"], vocabulary=["alpha", "beta"], max_vocab=None)
    with pytest.raises(DPTopicError, match="invalid pseudonym"):
        submit("http://127.0.0.1:9", docs, contributor=name, client=NoNetwork("http://127.0.0.1:9"))


def test_submit_cli_max_epsilon(canned, tmp_path):
    url, bodies = canned
    bodies["/v1/config"] = _valid_config()                        # f = 0.9: eps_word 0.2 per word
    (tmp_path / "docs.txt").write_text("alpha beta\ngamma delta\n")
    r = _cli("submit", "--server", url, "--corpus", "docs.txt", "--retries", "0", "--max-epsilon", "0.1", cwd=tmp_path)
    err = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(err) == 1 and "above your limit of 0.1" in err[0], r.stderr


def test_a_server_url_with_a_path_gets_a_hint_on_404(tmp_path):
    # `submit --server http://host:port/v1` asked for /v1/v1/config: the 404 alone did not say what was wrong
    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            b = json.dumps({"error": "not_found", "detail": "no such endpoint"}).encode()
            self.send_response(404)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        root = f"http://127.0.0.1:{srv.server_address[1]}"
        (tmp_path / "docs.txt").write_text("alpha beta gamma\n")
        r = _cli("submit", "--server", root + "/v1", "--corpus", "docs.txt", "--retries", "0", cwd=tmp_path)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert r.returncode == 2 and len(lines) == 1 and "404" in lines[0], r.stderr
        assert f"--server {root}" in " ".join(lines[0].split()), r.stderr
        r = _cli("submit", "--server", root, "--corpus", "docs.txt", "--retries", "0", cwd=tmp_path)
        assert r.returncode == 2 and "404" in r.stderr and "has a path" not in r.stderr, r.stderr
    finally:
        srv.shutdown()
        srv.server_close()
