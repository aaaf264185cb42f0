"""Review 53 of the service, the parts that need no PostgreSQL (those are in ``test_service_pg53.py``):

* a FedLDA participant whose update is refused as ``stale_round`` (its round closed while it was computed) takes part
  in the next round after a pause that grows, with jitter, and gives up in one line after a few refusals in a row;
  before, it sent a new update at once, for ever, each one spending epsilon;
* an update redone after such a refusal is not sent when it would bring the run above ``max_user_epsilon`` (the limit
  was checked for ``rounds`` updates only);
* ``dptopic serve --database-timeout`` reaches the storage; a transaction of the group-commit writer must end within
  that limit counted from when its oldest upload was queued.
"""
from __future__ import annotations

import pytest

pytest.importorskip("starlette")

from dptopic.corpus import Corpus  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.service import client as client_mod, codec  # noqa: E402
from dptopic.service.app import Service  # noqa: E402
from dptopic.service.client import ServerError, ServiceClient, fed_participate  # noqa: E402
from dptopic.service.config import ServiceConfig  # noqa: E402

from service_helpers import make_words  # noqa: E402


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
    assert f"{client_mod.STALE_RETRIES + 1} times in a row" in message and "--fed-min-updates" in message
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
    rrp = codec.fed_config_from_dict(doc["fed"])
    one = float(codec.fed_privacy(rrp, 1, vocab_size=len(words))["epsilon_basic"])
    two = float(codec.fed_privacy(rrp, 2, vocab_size=len(words))["epsilon_basic"])
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

    p = argparse.ArgumentParser()
    serve_cli.register(p.add_subparsers())
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


def test_watchdog_never_shuts_down_a_socket_that_took_a_closed_descriptor_s_number():
    """libpq may close its descriptor inside a watched wait (the server ended the connection); a socket opened then
    may get the same number. The watchdog holds its own copy, so the deadline shuts down only the watched socket."""
    import socket
    import time

    from dptopic.service.storage import _WATCHDOG

    a, b = socket.socketpair()
    entry = _WATCHDOG.watch(a.fileno(), time.monotonic() + 0.3)
    number = a.fileno()
    a.close()                               # the owner closes it while the wait is still registered
    c, d = socket.socketpair()
    try:
        if c.fileno() != number:
            pytest.skip("the new socket did not reuse the closed descriptor's number here")
        time.sleep(1.0)                     # past the deadline: the watchdog fires
        c.sendall(b"x")                     # the new socket still works
        assert d.recv(1) == b"x"
        assert _WATCHDOG.unwatch(entry) is True
        assert b.recv(1) == b""             # the watched socket was shut down (its peer reads end of file)
    finally:
        for s in (b, c, d):
            s.close()
