"""The contributor-side commands (`submit`, `pull`, `fed-client`) against a server whose replies are not what a
dptopic server sends (a proxy's page, a cut-off body, missing fields): one line, exit 2, never a traceback. A real
HTTP server on 127.0.0.1 answers with canned bodies."""
from __future__ import annotations

import functools
import json

import pytest

pytest.importorskip("starlette")

from dptopic.cli import main as cli_main  # noqa: E402
from dptopic.contributor import client as client_mod  # noqa: E402
from dptopic.contributor.client import ServerError, ServiceClient, fed_participate  # noqa: E402
from dptopic.contributor.fedlda import fed_privacy  # noqa: E402
from dptopic.corpus import Corpus  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.protocol import codec as protocol_codec
from dptopic.service import codec  # noqa: E402
from dptopic.service.app import Service  # noqa: E402
from dptopic.service.config import ServiceConfig  # noqa: E402
from helpers import run_dptopic  # noqa: E402
from service_helpers import StubServer, free_port, make_words  # noqa: E402


def _canned_server():
    """A :class:`service_helpers.StubServer` that answers each path with the body ``bodies`` holds for it (``{}``
    else) and lists the paths of the POSTs it got under ``bodies["_posted"]``: ``(server, url, bodies)``."""
    bodies: dict = {}

    def answer(request):
        if request.command == "POST":
            bodies.setdefault("_posted", []).append(request.path)     # what a client sent: the tests read it
        return 200, bodies.get(request.path.split("?")[0], "{}")

    srv = StubServer(answer)
    return srv, srv.url, bodies


@pytest.fixture
def canned():
    srv, url, bodies = _canned_server()
    yield url, bodies
    srv.close()


@pytest.fixture(scope="module")
def canned_shared():
    """One canned server for a table of cases; each test sets its own bodies."""
    srv, url, bodies = _canned_server()
    yield url, bodies
    srv.close()


def _cli(*args, cwd=None):
    """``dptopic ARGS`` in this process (``helpers.run_dptopic``): a client command against a canned server needs no
    interpreter of its own, whose imports took seconds per call."""
    return run_dptopic(*args, timeout=120, cwd=cwd)


def _valid_config():
    from dptopic.protocol import codec as protocol_codec

    words = ["alpha", "beta", "gamma", "delta"]
    return {"api_version": "v1", "report_format": protocol_codec.report_format("word"), "report_kind": "word",
            "vocabulary": words, "vocabulary_sha256": protocol_codec.vocabulary_fingerprint(words), "f": 0.9,
            "max_reports_per_request": 100, "max_body_bytes": 1 << 20}


@pytest.mark.parametrize("config, expect", [
    ("<html><body>proxy login</body></html>", "not JSON"),
    ('{"api_version": "v1", ', "not JSON"),
    ("[1, 2]", "JSON list, not an object"),
    ({"api_version": "v1", "report_format": "word-report"}, 'has report_format = "word-report"'),
    ({"api_version": "v1", "report_format": {"name": "x", "version": 1}, "vocabulary": 5}, "has vocabulary = 5"),
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
    from dptopic.contributor.client import ServiceClient

    class Counting(ServiceClient):
        posts = 0

        def post_bytes(self, path, body, key, extra=None):
            type(self).posts += 1
            return super().post_bytes(path, body, key, extra)

    return Counting(url, retries=0)


def test_submit_refuses_a_server_asking_for_reports_above_the_contributors_limit(canned):
    # a server is not trusted: at eps_word = 40 the "randomized" presence vectors went out exact, and were sent
    import math

    from dptopic.contributor.client import submit
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

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
    from dptopic.contributor.client import ServiceClient, submit
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

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
    with StubServer(lambda request: (404, {"error": "not_found", "detail": "no such endpoint"})) as srv:
        root = srv.url
        (tmp_path / "docs.txt").write_text("alpha beta gamma\n")
        r = _cli("submit", "--server", root + "/v1", "--corpus", "docs.txt", "--retries", "0", cwd=tmp_path)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert r.returncode == 2 and len(lines) == 1 and "404" in lines[0], r.stderr
        assert f"give the server's root, e.g. {root}," in " ".join(lines[0].split()), r.stderr
        r = _cli("submit", "--server", root, "--corpus", "docs.txt", "--retries", "0", cwd=tmp_path)
        assert r.returncode == 2 and "404" in r.stderr and "has a path" not in r.stderr, r.stderr


# ---------------------------------------------------------------------------------------------------------------------
# The FedLDA participant's retries and the service's database deadlines, in this process (with a real PostgreSQL:
# tests/integration/test_service_postgres.py):
#
# * a FedLDA participant whose update is refused as ``stale_round`` (its round closed while it was computed) takes part
#   in the next round after a pause that grows, with jitter, and gives up in one line after a few refusals in a row;
#   before, it sent a new update at once, for ever, each one spending epsilon;
# * an update redone after such a refusal is not sent when it would bring the run above ``max_user_epsilon`` (the limit
#   was checked for ``rounds`` updates only);
# * ``dptopic serve --database-timeout`` reaches the storage; a transaction of the group-commit writer must end within
#   that limit counted from when its oldest upload was queued.


def _fed_server_doc():
    """``/v1/config`` and the round-0 broadcast of a FedLDA server (built, not served)."""
    words = make_words(40)
    cfg = ServiceConfig(words, 0.3, database="sqlite:///unused.db", n_topics=3, fed_epsilon_per_entry=3.0, fed_topics=3,
                        fed_pad_length=16)
    svc = Service(cfg, start_trainer=False)
    return words, svc.config_doc(), codec.fed_initial_broadcast(cfg.fed_vocabulary, svc.rrp)


class _StaleServer(ServiceClient):
    """A FedLDA server whose rounds close before any update of this client arrives: every update is refused with
    409 ``stale_round`` (except those listed in ``accept``, by upload number); it gives up after ``cap`` uploads so
    that a participant that never stops fails the test instead of hanging it."""

    def __init__(self, doc, msg, accept=(), cap=40):
        super().__init__("http://127.0.0.1:9", retries=0)
        self.doc, self.msg, self.accept, self.cap = doc, msg, set(accept), cap
        self.posts, self.round = 0, 0

    def config(self):
        return self.doc

    def request(self, method, path, body=None, headers=None):
        assert (method, path) == ("GET", "/v1/fed/round")
        return 200, {"Dptopic-Round": str(self.round)}, self.msg

    def post_bytes(self, path, body, key, extra=None):
        self.posts += 1
        if self.posts > self.cap:
            raise RuntimeError(f"the participant sent {self.posts} updates without stopping")
        if self.posts in self.accept:
            return {"round": self.round, "round_closed": False}
        raise ServerError("the server refused POST /v1/fed/updates: 409 stale_round: update refused: round 0 closed"
                          " meanwhile; fetch /v1/fed/round.", 409, "stale_round")


@pytest.fixture
def sleeps(monkeypatch):
    calls = []
    monkeypatch.setattr(client_mod.time, "sleep", calls.append)
    return calls


def _corpus(words):
    return Corpus.from_texts([" ".join(words[i:i + 8]) for i in range(0, 32, 4)], vocabulary=words, max_vocab=None)


def test_stale_round_refusals_are_retried_after_growing_pauses_then_given_up_in_one_line(sleeps):
    words, doc, msg = _fed_server_doc()
    server = _StaleServer(doc, msg)
    with pytest.raises(ServerError) as e:
        fed_participate(server.server, _corpus(words), rounds=1, poll=0.01, timeout=30, client=server)
    message = str(e.value)
    assert e.value.code == "stale_round" and "\n" not in message
    assert f"{client_mod.STALE_RETRIES + 1} times in a row" in message and "wait for more updates" in message
    # what the updates that left the device spent is said, as for any failure after one left
    assert f"over {client_mod.STALE_RETRIES + 1} updates that left this device" in message
    # a bounded number of retries, each after a pause: the k-th in [P 2^k / 2, P 2^k] (at most the cap), jittered
    assert server.posts == client_mod.STALE_RETRIES + 1
    assert len(sleeps) == client_mod.STALE_RETRIES
    for k, pause in enumerate(sleeps):
        full = min(client_mod.STALE_MAX_PAUSE, client_mod.STALE_PAUSE * 2 ** k)
        assert full / 2 <= pause <= full, (k, pause)
    assert sleeps[-1] > sleeps[0]
    assert len(set(sleeps)) == len(sleeps)      # jittered: no two pauses alike
    assert sum(sleeps) <= sum(min(client_mod.STALE_MAX_PAUSE, client_mod.STALE_PAUSE * 2 ** k)
                              for k in range(client_mod.STALE_RETRIES))


def test_a_stored_update_resets_the_stale_back_off(sleeps):
    words, doc, msg = _fed_server_doc()
    # round 1: two refusals, then stored; round 2 (the same round number is served: the participant asks again
    # after each stored update only once the round moved on, so the fake moves it on): one refusal, then stored
    server = _StaleServer(doc, msg, accept={3, 5})
    real_post = server.post_bytes

    def post(path, body, key, extra=None):
        ack = real_post(path, body, key, extra)
        server.round += 1
        return ack

    server.post_bytes = post
    s = fed_participate(server.server, _corpus(words), rounds=2, poll=0.01, timeout=30, client=server)
    assert [r["round"] for r in s["rounds"]] == [0, 1] and s["updates_sent"] == 5
    base = client_mod.STALE_PAUSE
    assert len(sleeps) == 3
    assert base / 2 <= sleeps[0] <= base and base <= sleeps[1] <= 2 * base
    assert base / 2 <= sleeps[2] <= base        # the back-off started over after the stored update


def test_a_redone_update_above_the_users_epsilon_limit_is_not_sent(sleeps):
    words, doc, msg = _fed_server_doc()
    # a rule that draws new entries for every update (dptopic's own server uses "none", whose reports are drawn once
    # and spent once: redone updates spend nothing more; a participant takes the rule of a server it need not trust)
    doc["fed"]["exclusion"] = "floor"
    rrp = protocol_codec.fed_config_from_dict(doc["fed"])
    one = float(fed_privacy(rrp, 1, vocab_size=len(words))["epsilon_basic"])
    two = float(fed_privacy(rrp, 2, vocab_size=len(words))["epsilon_basic"])
    assert two > one
    server = _StaleServer(doc, msg)
    with pytest.raises(DPTopicError) as e:
        fed_participate(server.server, _corpus(words), rounds=1, poll=0.01, timeout=30, client=server,
                        max_user_epsilon=(one + two) / 2)
    assert server.posts == 1 and len(sleeps) == 1      # the first update, refused; the second was never sent
    assert "above your limit" in str(e.value) and "\n" not in str(e.value)


# ----------------------------------------------------------------------------- --database-timeout
def test_database_timeout_flag_reaches_the_storage(tmp_path):
    import argparse

    from dptopic.cli import serve as serve_cli
    from dptopic.cli.parsers import serve as serve_parser

    p = argparse.ArgumentParser()
    serve_parser.register(p.add_subparsers())
    words = make_words(20)
    (tmp_path / "v.txt").write_text("\n".join(words) + "\n")
    base = ["serve", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--topics", "2",
            "--database", f"sqlite:///{tmp_path / 'x.db'}"]
    cfg = serve_cli.build_config(p.parse_args(base))
    assert cfg.database_timeout == 15.0
    pg = base[:-1] + ["postgresql+psycopg://nobody@127.0.0.1:1/none"]     # built, never connected to
    assert serve_cli.build_config(p.parse_args(pg + ["--database-timeout", "4.5"])).database_timeout == 4.5
    with pytest.raises(DPTopicError, match="--database-timeout has no effect"):   # SQLite: it limits nothing
        serve_cli.build_config(p.parse_args(base + ["--database-timeout", "4.5"]))
    with pytest.raises(SystemExit):
        p.parse_args(base + ["--database-timeout", "0"])
    from dataclasses import replace

    svc = Service(replace(cfg, database_timeout=4.5), start_trainer=False)
    svc.open()
    try:
        assert svc.storage.timeout == 4.5 and svc.storage.long_timeout >= 300
    finally:
        svc.close()


def test_the_writers_deadline_counts_from_the_oldest_queued_upload():
    import time

    from dptopic.service.ingest import GroupCommitWriter
    from dptopic.service.storage import Submission

    seen = []

    class Recording:
        timeout = 7.0

        def store(self, batch, deadline=None):
            seen.append((len(batch), deadline))
            return [("stored", {})] * len(batch)

    writer = GroupCommitWriter(Recording())
    t0 = time.monotonic()
    futs = [writer.submit(Submission(f"key-{i:08d}", f"{i:064x}", None, [b"\x01"])) for i in range(3)]
    writer.start()
    try:
        assert [f.result(10)[0] for f in futs] == ["stored"] * 3
    finally:
        writer.stop()
    assert sum(n for n, _ in seen) == 3
    assert all(d is not None and t0 + 7.0 <= d <= time.monotonic() + 7.0 for _, d in seen)


def test_pull_from_a_server_that_is_down_or_speaks_another_version(tmp_path):
    out = tmp_path / "m"
    r = _cli("pull", "--server", f"http://127.0.0.1:{free_port()}", "--out", str(out), "--retries", "0", "--timeout", "2")
    assert r.returncode == 2 and "is the server" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()

    with StubServer(lambda request: (200, {"api_version": "v9"})) as httpd:
        r = _cli("pull", "--server", httpd.url, "--out", str(out))
    assert r.returncode == 2 and "v9" in r.stderr and "upgrade" in r.stderr and not out.exists()


@pytest.mark.parametrize("raised,shown", [(KeyboardInterrupt(), "interrupted"),
                                          (KeyboardInterrupt("interrupted; 3 of 5 sent"), "interrupted; 3 of 5 sent")])
def test_the_cli_prints_what_the_interrupted_command_said(monkeypatch, capsys, raised, shown):
    def run(argv):
        raise raised

    monkeypatch.setattr(cli_main, "_run", run)
    assert cli_main.main(["submit"]) == 130
    assert capsys.readouterr().err.strip() == shown
"""``dptopic.contributor.client``."""
import pytest


def test_a_server_url_with_credentials_is_refused_without_echoing_them():
    from dptopic.contributor.client import ServiceClient

    with pytest.raises(DPTopicError) as e:
        ServiceClient("http://alice:s3cret@127.0.0.1:9")
    assert "s3cret" not in str(e.value) and "USER:PASSWORD@HOST" in str(e.value)
    assert ServiceClient("http://bücher.example:80").server == "http://bücher.example:80"


# ---------------------------------------------------------------------------------------------------------------------
# The clients' bad-configuration harness: every kind of malformed ``/v1/config`` (a field of the wrong type, out of its
# range, missing, or a protocol this dptopic does not speak), given to each client (``submit``, ``fed-client``,
# ``pull``, ``pull --fed``). A client that reads the field refuses in one line that names the server and the key, exit
# status 2, and sends nothing; a client that does not read it ends in one line or succeeds, never a traceback. One
# function checks the configuration for all of them (``client.check_server_config``).

@functools.lru_cache(maxsize=1)
def _fed_config_text():
    words = make_words(40)
    cfg = ServiceConfig(words, 0.3, database="sqlite:///unused.db", n_topics=3, fed_epsilon_per_entry=3.0, fed_topics=3,
                        fed_pad_length=16)
    return json.dumps(Service(cfg, start_trainer=False).config_doc()), tuple(words)


def _fed_config_doc():
    """A valid ``/v1/config`` of a word-level server with FedLDA on, as JSON (the one dptopic serve sends)."""
    text, words = _fed_config_text()
    return json.loads(text), list(words)


def _set(key, value):
    def change(doc):
        *path, last = key.split(".")
        for p in path:
            doc = doc[p]
        if value is _DROP:
            doc.pop(last)
        else:
            doc[last] = value
    return change


_DROP = object()
SUBMIT, FED, PULL, PULL_FED = "submit", "fed-client", "pull", "pull --fed"
EVERY = (SUBMIT, FED, PULL, PULL_FED)
# (id, change to a valid config, the key the refusal names, the clients that read it)
BAD_CONFIGS = [
    ("fed a list", _set("fed", [1, 2]), "fed", EVERY),
    ("fed a string", _set("fed", "yes"), "fed", EVERY),
    ("fed true", _set("fed", True), "fed", EVERY),
    ("fed a number", _set("fed", 5), "fed", EVERY),
    ("report_words a string", _set("fed.report_words", "abc"), "fed.report_words", (FED,)),
    ("report_words zero", _set("fed.report_words", 0), "fed.report_words", (FED,)),
    ("report_words beyond the vocabulary", _set("fed.report_words", 10 ** 9), "fed.report_words", (FED,)),
    ("report_words true", _set("fed.report_words", True), "fed.report_words", (FED,)),
    ("report_words fractional", _set("fed.report_words", 2.5), "fed.report_words", (FED,)),
    ("n_topics a string", _set("fed.n_topics", "yes"), "fed.n_topics", (FED,)),
    ("n_topics missing", _set("fed.n_topics", _DROP), "fed.n_topics", (FED,)),
    ("n_topics above the words", _set("fed.n_topics", 1000), "n_topics=1000", (FED,)),
    ("epsilon_per_entry a string", _set("fed.epsilon_per_entry", "5"), "fed.epsilon_per_entry", (FED,)),
    ("epsilon_per_entry missing", _set("fed.epsilon_per_entry", _DROP), "fed.epsilon_per_entry", (FED,)),
    ("epsilon_per_entry negative", _set("fed.epsilon_per_entry", -1), "fed.epsilon_per_entry", (FED,)),
    ("pad_length zero", _set("fed.pad_length", 0), "fed.pad_length", (FED,)),
    ("pad_length a list", _set("fed.pad_length", [16]), "fed.pad_length", (FED,)),
    ("sample_ratio above 1", _set("fed.sample_ratio", 2), "fed.sample_ratio", (FED,)),
    ("failure_rate null", _set("fed.failure_rate", None), "fed.failure_rate", (FED,)),
    ("exclusion unknown", _set("fed.exclusion", "sometimes"), "fed.exclusion", (FED,)),
    ("subset_size fractional", _set("fed.subset_size", 1.5), "fed.subset_size", (FED,)),
    ("local_inference an object", _set("fed.local_inference", {"a": 1}), "fed.local_inference", (FED,)),
    ("updates larger than max_body_bytes", lambda doc: (_set("max_body_bytes", 1000)(doc),
                                                        _set("fed.pad_length", 200)(doc)), "max_body_bytes", (FED,)),
    ("api_version v2", _set("api_version", "v2"), "v2", EVERY),
    ("api_version missing", _set("api_version", _DROP), "api_version", EVERY),
    ("api_version a number", _set("api_version", 1), "API 1", EVERY),
    ("vocabulary of numbers", _set("vocabulary", [1, 2]), "vocabulary", (SUBMIT, FED)),
    ("vocabulary missing", _set("vocabulary", _DROP), "vocabulary", (SUBMIT, FED)),
    ("vocabulary fingerprint wrong", _set("vocabulary_sha256", "0" * 64), "vocabulary_sha256", (SUBMIT, FED)),
    ("f a string", _set("f", "abc"), "f=", (SUBMIT,)),
    ("f above 1", _set("f", 2), "f=2", (SUBMIT,)),
    ("f missing", _set("f", _DROP), "no f ", (SUBMIT,)),
    ("report_kind unknown", _set("report_kind", "sentence"), "report_kind", (SUBMIT,)),
    ("report_kind a list", _set("report_kind", ["word"]), "report_kind", (SUBMIT,)),
    ("report_format missing", _set("report_format", _DROP), "report_format", (SUBMIT,)),
    ("report_format another version", _set("report_format.version", 99), "report_format", (SUBMIT,)),
    ("max_body_bytes a string", _set("max_body_bytes", "1000000"), "max_body_bytes", (SUBMIT,)),
    ("max_reports_per_request zero", _set("max_reports_per_request", 0), "max_reports_per_request", (SUBMIT,)),
]


def _client_argv(client, url, tmp_path):
    corpus = tmp_path / "docs.txt"
    if client in (SUBMIT, FED):
        return [client.split()[0], "--server", url, "--corpus", str(corpus), "--state", "none", "--retries", "0"] + (
            ["--rounds", "1", "--poll", "0.01", "--round-timeout", "5"] if client == FED else [])
    return ["pull", "--server", url, "--out", str(tmp_path / "pulled"), "--retries", "0"] + (
        ["--fed"] if client == PULL_FED else [])


@pytest.mark.parametrize("client", EVERY)
@pytest.mark.parametrize("name, change, key, readers", BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_a_malformed_config_is_refused_in_one_line_naming_the_server_and_the_key(canned_shared, tmp_path, capsys,
                                                                                client, name, change, key, readers):
    url, bodies = canned_shared
    bodies.clear()
    doc, words = _fed_config_doc()
    change(doc)
    bodies["/v1/config"] = doc
    (tmp_path / "docs.txt").write_text(" ".join(words[:12]) + "\n" + " ".join(words[5:20]) + "\n")
    try:
        rc = cli_main.main(_client_argv(client, url, tmp_path))
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err and rc in (0, 2, None), err
    assert rc in (0, None) or len(lines) == 1, err
    if client in readers:
        assert rc == 2 and len(lines) == 1, err
        assert url in lines[0] and key in lines[0], lines[0]
        assert not bodies.get("_posted"), f"{client} sent {bodies['_posted']} before refusing"
        assert not (tmp_path / "pulled").exists()


def test_the_config_harness_can_fail(canned, tmp_path, capsys):
    # the valid configuration is taken by every client up to its first request after /v1/config (which the canned
    # server answers with nothing useful): the refusals above are the changed field's, not the setup's
    url, bodies = canned
    doc, words = _fed_config_doc()
    bodies["/v1/config"] = doc
    bodies["/v1/reports"] = {"reports": 2}
    (tmp_path / "docs.txt").write_text(" ".join(words[:12]) + "\n" + " ".join(words[5:20]) + "\n")
    assert cli_main.main(_client_argv(SUBMIT, url, tmp_path)) in (0, None), capsys.readouterr().err
    assert bodies["_posted"] == ["/v1/reports"]
    assert cli_main.main(_client_argv(FED, url, tmp_path)) == 2
    assert "round number" in capsys.readouterr().err          # it went on to ask for the round


def test_a_report_format_of_another_name_says_both_names(canned, tmp_path, capsys):
    # a document-level server whose report_format names the word-level format said "speaks v1 but this writes v1"
    url, bodies = canned
    doc, words = _fed_config_doc()
    doc.update(report_kind="document", f=None, epsilon_doc=4.0)          # report_format stays the word-level one
    bodies["/v1/config"] = doc
    (tmp_path / "docs.txt").write_text(" ".join(words[:12]) + "\n")
    line = _err_line(capsys, _client_argv(SUBMIT, url, tmp_path))
    assert protocol_codec.report_format("word")["name"] in line and protocol_codec.report_format("document")["name"] in line, line
    assert "document reports" in line and url in line and not bodies.get("_posted")


def _err_line(capsys, argv) -> str:
    rc = cli_main.main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_state_file_is_refused_naming_the_state_parameter_and_serves_flags_write_it(tmp_path):
    """The library names its parameter (``state='…'``, ``state=None``); submit and fed-client write their flags."""
    from dptopic.cli.submit import CLIENT_FLAGS
    from dptopic.errors import ParameterError

    bad = tmp_path / "notes.json"
    bad.write_text("my own notes\n")
    with pytest.raises(ParameterError, match=r"^state='.* is not a submit state file: it is not JSON") as e:
        client_mod._read_state_file(bad, "submit state file", client_mod.SUBMIT_STATE_FORMAT,
                                    client_mod.SUBMIT_STATE_VERSION)
    assert e.value.parameter == "state" and "--" not in str(e.value)
    assert e.value.message(CLIENT_FLAGS).startswith(f"--state {bad} is not a submit state file")
    folder = tmp_path / "file-not-folder"
    folder.write_text("")
    with pytest.raises(ParameterError) as e:
        client_mod._write_submit_state(folder / "s.json", {"settings": {}, "salt": "00", "documents": "",
                                                           "n_reports": 0, "acknowledged": {}, "contributors": {},
                                                           "uploads": []})
    assert str(e.value).endswith("give state a path you can write to, or state=None.") and "s.json" in str(e.value)
    assert e.value.message(CLIENT_FLAGS).endswith("give --state a path you can write to, or --state none.")


def test_a_refusal_noted_with_what_was_sent_keeps_the_parameters_it_names():
    from dptopic.errors import ParameterError

    e = client_mod._noted(ParameterError("give another {state}.", "state", "s.json"), "; 3 of 9 sent.", strip=True)
    assert isinstance(e, ParameterError) and str(e) == "give another state; 3 of 9 sent."
    assert e.message({"state": "--state"}) == "give another --state; 3 of 9 sent."
    plain = client_mod._noted(ServerError("refused.", 409, "stale_round"), " (spent: 1)")
    assert isinstance(plain, ServerError) and plain.code == "stale_round" and str(plain) == "refused. (spent: 1)"


def test_a_kept_connection_serves_many_requests_and_is_opened_again_once_the_server_closes_it():
    """``keep_alive``: one connection for a run of requests (a secure-sum round is a dozen), and a connection the server
    closed while idle is opened again without a lost request; without it, one connection a request."""
    def answer(request):
        # "close": said in the reply; "drop": closed without a word, as an idle connection is
        if request.path.endswith("drop"):
            request.close_connection = True
        return 200, {"path": request.path}, {"Connection": "close"} if request.path.endswith("close") else {}

    with StubServer(answer, keep_alive=True) as server:
        connections, url = server.connections, server.url
        kept = ServiceClient(url, keep_alive=True, retries=0)
        assert [kept.get_json(f"/v1/{i}")["path"] for i in range(5)] == [f"/v1/{i}" for i in range(5)]
        assert len(connections) == 1
        kept.get_json("/v1/close")                  # the server says it closes: the next request opens anew
        assert kept.get_json("/v1/after")["path"] == "/v1/after" and len(connections) == 2
        kept.get_json("/v1/drop")                   # closed without a word: opened again, the request not lost
        assert kept.get_json("/v1/again")["path"] == "/v1/again" and len(connections) == 3
        plain = ServiceClient(url, retries=0)
        for i in range(3):
            plain.get_json(f"/v1/plain{i}")
        assert len(connections) == 6
