"""Uploads a server has seen before: an upload carrying an upload nonce whose bytes were already stored under
another Idempotency-Key is refused (409 ``duplicate_body``, nothing stored, race-free across servers on one database),
while two honest nonce-less uploads that coincide byte for byte are both stored; ``submit`` through another address of
the same server reports the pseudonym the server holds and that nothing new was stored; protocol-level 400s are
counted in ``/metrics``."""
from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.cli.main import main  # noqa: E402
from dptopic.contributor.client import submit  # noqa: E402
from service_helpers import (  # noqa: E402
    PG_BIN,
    InProcessServer,
    PostgresServer,
    ServedLikeServe,
    corpus_of,
    count_rows,
    http,
    make_data,
    metric,
    plain_report_body,
    post_reports,
    send_raw,
    service_config,
)


def _body(words, texts, eps: float = 2.0) -> bytes:
    """An upload as ``dptopic submit`` builds it: with a fresh upload nonce."""
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.protocol import codec as protocol_codec

    return protocol_codec.encode_reports(Randomizer(words, epsilon_word=eps, secure=True).randomize([t.split() for t in texts]))

pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SeededNoiseWarning")


# ============================================================================ the same body under a new key
@pytest.mark.service
def test_the_same_body_under_a_new_key_is_refused_and_nothing_is_stored(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=30, n_prior=5)
    db = f"sqlite:///{tmp_path / 'd.db'}"
    body = _body(words, texts[:20])
    with InProcessServer(service_config(words, db)) as srv:
        assert post_reports(srv.url, body, "walk48-carol-0001", "carol")[0] == 201
        before = count_rows(db)
        status, doc = post_reports(srv.url, body, "walk48-carol-0002", "carol")
        assert status == 409 and doc["error"]["code"] == "duplicate_body", doc
        msg = doc["error"]["message"]
        assert "\n" not in msg and "nothing was stored" in msg and "reuse its Idempotency-Key" in msg
        assert "20 reports" in msg and "walk48-carol-0001" not in msg and "carol" not in msg
        # another pseudonym (or none) does not make the same randomized reports new
        assert post_reports(srv.url, body, "walk48-mallory-0003", "mallory")[0] == 409
        assert post_reports(srv.url, body, "walk48-anon-000004")[0] == 409
        assert count_rows(db) == before                 # the database is unchanged
        assert metric(srv.url, "dptopic_errors_total", "duplicate_body") == 3
        # the retry under the first key is still a replay, answered as before, with the pseudonym it is tallied under
        status, ack = post_reports(srv.url, body, "walk48-carol-0001", "carol")
        assert status == 200 and ack["replayed"] is True and ack["reports"] == 20 and ack["contributor"] == "carol"
        # new reports (randomized anew) are stored as ever
        assert post_reports(srv.url, _body(words, texts[:20]), "walk48-carol-0005", "carol")[0] == 201
        assert count_rows(db)["n_reports"] == before["n_reports"] + 20


@pytest.mark.service
def test_two_honest_uploads_that_coincide_byte_for_byte_are_both_stored(tmp_path):
    """Without an upload nonce (a file from 'dptopic randomize', an older client) two contributors' single reports
    coincide often at a large epsilon: the server cannot tell a copy from a coincidence, so it stores both."""
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=30, n_prior=5)
    db = f"sqlite:///{tmp_path / 'h.db'}"
    body = plain_report_body(words, texts[:1])
    with InProcessServer(service_config(words, db)) as srv:
        assert post_reports(srv.url, body, "walk48-alice-0001", "alice")[0] == 201
        assert post_reports(srv.url, body, "walk48-bob-00001", "bob")[0] == 201      # the same bytes, honestly
        assert count_rows(db)["n_reports"] == 2
        # a nonce makes uploads of the same reports differ, and the refusal applies to those only
        from dptopic.protocol import codec as protocol_codec
        from dptopic.protocol.reports import ReportSet

        rs = ReportSet.from_bytes(body)
        one, two = protocol_codec.encode_reports(rs), protocol_codec.encode_reports(rs)
        assert one != two and ReportSet.from_bytes(one).upload_nonce != ReportSet.from_bytes(two).upload_nonce
        assert post_reports(srv.url, one, "walk48-alice-0002", "alice")[0] == 201
        assert post_reports(srv.url, two, "walk48-bob-00002", "bob")[0] == 201
        assert post_reports(srv.url, one, "walk48-bob-00003", "bob")[0] == 409


@pytest.mark.service
def test_submit_stops_for_good_on_a_copied_state_folder(tmp_path):
    """A copy of a state folder submitted under other keys: the server refuses the copied bytes, and submit says
    that running again cannot help (not "run the same command again")."""
    import shutil

    from dptopic.errors import DPTopicError

    words, texts = make_data(tmp_path, vocab_size=60, n_docs=30, n_prior=5)
    db = f"sqlite:///{tmp_path / 'c.db'}"
    state = tmp_path / "state"
    state.mkdir()
    with InProcessServer(service_config(words, db)) as srv:
        submit(srv.url, corpus_of(texts[:6], words), state=state)
        copy = tmp_path / "copy"
        shutil.copytree(state, copy)
        for f in copy.glob("submit-*.json"):        # as if the copy had never been acknowledged, under new keys
            doc = json.loads(f.read_text())
            doc["acknowledged"] = {}
            for u in doc["uploads"]:
                u["key"] = "walk48-copy-" + u["key"][-12:]
            f.write_text(json.dumps(doc))
        before = count_rows(db)
        with pytest.raises(DPTopicError) as e:
            submit(srv.url, corpus_of(texts[:6], words), state=copy)
        msg = str(e.value)
        assert "duplicate_body" in msg and "running again gets the same answer" in msg and "\n" not in msg
        assert "Run the same command again" not in msg
        assert count_rows(db) == before


def _race(urls, body, n_per_server: int = 6):
    """Post ``body`` under a new key from many threads at once, spread over ``urls``; the statuses."""
    start = threading.Barrier(len(urls) * n_per_server)
    statuses = []

    def one(url, i):
        start.wait()
        statuses.append(post_reports(url, body, f"walk48-race-{i:06d}", f"racer{i}")[0])

    threads = [threading.Thread(target=one, args=(u, j * len(urls) + k)) for j in range(n_per_server)
               for k, u in enumerate(urls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return sorted(statuses)


@pytest.mark.service
def test_concurrent_copies_to_two_servers_on_one_sqlite_database_are_stored_once(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=30, n_prior=5)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    body = _body(words, texts[:10])
    with InProcessServer(service_config(words, db)) as one, InProcessServer(service_config(words, db)) as two:
        assert _race([one.url, two.url], body) == [201] + [409] * 11
    rows = count_rows(db)
    assert len(rows["submissions"]) == 1 and rows["n_reports"] == 10


@pytest.fixture(scope="module")
def pg():
    if PG_BIN is None:
        pytest.skip("PostgreSQL server binaries not installed")
    pytest.importorskip("psycopg")
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.postgres
@pytest.mark.service
def test_concurrent_copies_to_two_servers_on_one_postgres_database_are_stored_once(tmp_path, pg):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=30, n_prior=5)
    body = _body(words, texts[:10])
    with InProcessServer(service_config(words, pg.url)) as one, InProcessServer(service_config(words, pg.url)) as two:
        assert _race([one.url, two.url], body) == [201] + [409] * 11
        rows = count_rows(pg.url)
        assert len(rows["submissions"]) == 1 and rows["n_reports"] == 10
        (key,) = rows["submissions"]
        for url in (one.url, two.url):      # the winner's retry is a replay on either server
            status, ack = post_reports(url, body, key, "racer" + str(int(key.rsplit("-", 1)[1])))
            assert status == 200 and ack["replayed"] is True and ack["contributor"] == "racer" + str(int(key[-6:]))
    assert count_rows(pg.url) == rows


# ============================================================================ submit through another address
@pytest.mark.service
def test_submit_through_another_address_keeps_the_pseudonym_the_server_holds(tmp_path, capsys):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=30, n_prior=5)
    db = f"sqlite:///{tmp_path / 'a.db'}"
    (tmp_path / "alice.txt").write_text("\n".join(texts[:12]) + "\n")
    state = tmp_path / "state"
    state.mkdir()
    with InProcessServer(service_config(words, db)) as srv:
        alias = srv.url.replace("127.0.0.1", "localhost")
        first = submit(srv.url, corpus_of(texts[:12], words), state=state)
        before = count_rows(db)
        second = submit(alias, corpus_of(texts[:12], words), state=state)
        assert count_rows(db) == before                         # nothing stored: the server replayed
        assert second["contributor"] == first["contributor"] and second["contributor_from_server"] is True
        assert first["stored_reports"] == 12 and first["replayed_reports"] == 0
        assert second["replayed_reports"] == 12 and second["stored_reports"] == 0
        kept = json.loads((state / "contributor-pseudonyms.json").read_text())
        assert kept[alias] == kept[srv.url] == first["contributor"]
        # the CLI prints the pseudonym the server holds (the one to pass on another machine)
        (state / "contributor-pseudonyms.json").unlink()
        for f in state.glob("submit-*.json"):
            doc = json.loads(f.read_text())
            doc["contributors"].pop(alias)
            doc["acknowledged"].pop(alias)
            f.write_text(json.dumps(doc))
        assert main(["submit", "--server", alias, "--corpus", str(tmp_path / "alice.txt"), "--format", "text",
                     "--state", str(state)]) in (0, None)
        out = " ".join(capsys.readouterr().out.split())
        name = first["contributor"]
        assert out.split("contributor pseudonym ")[1].split()[0] == name and f"pass --contributor {name} " in out
        assert "(the one the server holds for these reports)" in out
        assert "12 reports had already been stored by" in out and "replayed, nothing new stored" in out
        assert "uploaded to" not in out     # nothing new was stored: no upload is claimed
        assert count_rows(db) == before
        tally = json.loads(http("GET", srv.url + "/v1/topics")[2])["per_contributor"]
        assert tally["max_reports_from_one_contributor"] == 12


# ============================================================================ protocol-level 400s are counted
@pytest.mark.service
@pytest.mark.parametrize("fast", [True, False], ids=["httptools", "h11"])
def test_protocol_level_400s_are_counted_as_bad_request(tmp_path, fast):
    if fast:
        pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with ServedLikeServe(service_config(words, f"sqlite:///{tmp_path / 'm.db'}"), fast) as srv:
        before = metric(srv.url, "dptopic_errors_total", "bad_request")
        for raw in (b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
                    b"GARBAGE\r\n\r\n"):
            head, _, body = send_raw(srv.port, raw).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400") and json.loads(body)["error"]["code"] == "bad_request"
        assert metric(srv.url, "dptopic_errors_total", "bad_request") == before + 2
