"""``submit`` interrupted part-way (2026-11-24 walk-through): the kept reports finish the job on the next run, nothing
is randomized twice, and the contributor keeps one pseudonym per server."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.cli.main import main  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.service.client import ServiceClient, submit  # noqa: E402

from service_helpers import Server, corpus_of, count_rows, make_data  # noqa: E402


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("submit-state")
    words, texts = make_data(tmp)
    db = f"sqlite:///{tmp / 'service.db'}"
    srv = Server(tmp, db, "--train-interval", "0").start()
    yield {"tmp": tmp, "words": words, "texts": texts, "db": db, "url": srv.url}
    srv.stop()


def stored(env) -> int:
    return count_rows(env["db"])["n_reports"]


class Flaky(ServiceClient):
    """Posts ``ok`` uploads, then fails: before sending (``lose_ack=False``) or after the server stored the upload
    (its acknowledgement lost on the way back)."""

    def __init__(self, url, ok, lose_ack=False):
        super().__init__(url, retries=0)
        self.ok, self.lose_ack, self.bodies = ok, lose_ack, []

    def post_bytes(self, path, body, key, extra=None):
        self.bodies.append(body)
        if self.ok == 0:
            if self.lose_ack:
                super().post_bytes(path, body, key, extra)
            raise DPTopicError("POST /v1/reports failed (URLError: connection refused); is the server running?")
        self.ok -= 1
        return super().post_bytes(path, body, key, extra)


@pytest.mark.parametrize("lose_ack", [False, True])
def test_an_interrupted_submit_is_finished_without_randomizing_again(env, tmp_path, lose_ack):
    docs = corpus_of(env["texts"][:50], env["words"])
    state = tmp_path / "state"
    state.mkdir()
    before = stored(env)
    flaky = Flaky(env["url"], ok=2, lose_ack=lose_ack)
    with pytest.raises(DPTopicError) as e:
        submit(env["url"], docs, chunk_reports=10, client=flaky, state=state)
    msg = str(e.value)
    assert "20 of the 50 reports were acknowledged" in msg and "nothing is randomized again" in msg
    assert "\n" not in msg
    assert stored(env) == before + (30 if lose_ack else 20)
    first = flaky.bodies

    again = Flaky(env["url"], ok=100)
    s = submit(env["url"], docs, chunk_reports=10, client=again, state=state)
    assert stored(env) == before + 50                        # every document once, the lost acknowledgement replayed
    assert s["already_acknowledged"] == 20 and s["reports"] == 30 and s["replayed_acks"] == (1 if lose_ack else 0)
    assert len(again.bodies) == 3 and again.bodies[0] == first[2]     # the kept bytes, not new ones
    # a third run on the same documents sends nothing
    third = Flaky(env["url"], ok=100)
    s3 = submit(env["url"], docs, client=third, state=state)
    assert third.bodies == [] and s3["already_acknowledged"] == 50 and stored(env) == before + 50
    assert s3["contributor"] == s["contributor"]


def test_without_state_the_error_says_a_new_run_spends_again(env):
    docs = corpus_of(env["texts"][:30], env["words"])
    with pytest.raises(DPTopicError, match=r"10 of the 30 reports were acknowledged.*randomizes all these documents"
                                           r" anew, which spends their epsilon again"):
        submit(env["url"], docs, chunk_reports=10, client=Flaky(env["url"], ok=1))


def test_one_pseudonym_per_server_across_runs_and_documents(env, tmp_path, capsys):
    (tmp_path / "a.txt").write_text("\n".join(env["texts"][:5]) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(env["texts"][5:9]) + "\n")
    names = []
    for f in ("a.txt", "b.txt"):
        assert main(["submit", "--server", env["url"], "--corpus", str(tmp_path / f), "--format", "text"]) in (0, None)
        out = " ".join(capsys.readouterr().out.split())
        names.append(out.split("contributor pseudonym ")[1].split()[0])
        assert "kept in" in out
    assert names[0] == names[1]
    # the same documents again: nothing randomized or sent
    before = stored(env)
    assert main(["submit", "--server", env["url"], "--corpus", str(tmp_path / "a.txt"), "--format", "text"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "had been acknowledged by an earlier run" in out and "nothing was sent, nothing more spent" in out
    assert "uploaded to" not in out and stored(env) == before
    # --state none: a fresh pseudonym, said so
    assert main(["submit", "--server", env["url"], "--corpus", str(tmp_path / "a.txt"), "--format", "text",
                 "--state", "none"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "reports not kept" in out and out.split("contributor pseudonym ")[1].split()[0] != names[0]
    assert stored(env) == before + 5


def test_a_state_file_of_other_documents_is_refused(env, tmp_path):
    state = tmp_path / "one.json"
    submit(env["url"], corpus_of(env["texts"][:3], env["words"]), state=state)
    doc = json.loads(state.read_text())
    assert doc["format"] == "dptopic-submit-state" and doc["acknowledged"][env["url"]] == [0]
    assert set(doc["contributors"]) == {env["url"]} and len(doc["salt"]) == 32
    assert oct(state.stat().st_mode & 0o777) == "0o600"
    with pytest.raises(DPTopicError, match="other documents or of other report settings"):
        submit(env["url"], corpus_of(env["texts"][3:6], env["words"]), state=state)
    with pytest.raises(DPTopicError, match="were sent to http://127.0.0.1:[0-9]+ as"):
        submit(env["url"], corpus_of(env["texts"][:3], env["words"]), state=state, contributor="someone-else")


def test_the_same_server_under_another_name_gets_the_kept_reports_again(env, tmp_path):
    """The reports were kept per server address: 127.0.0.1 and localhost gave two files, two randomizations and
    twice the epsilon. They are kept per documents and settings now; another address replays the same bytes under
    the same keys, which the server does not store twice."""
    docs = corpus_of(env["texts"][100:104], env["words"])
    state = tmp_path / "state"
    state.mkdir()
    before = stored(env)
    first = submit(env["url"], docs, state=state)
    alias = env["url"].replace("127.0.0.1", "localhost")
    second = submit(alias, docs, state=state)
    assert stored(env) == before + 4
    assert second["replayed_acks"] == 1 and second["reports"] == 4
    assert len(list(state.glob("submit-*.json"))) == 1
    assert first["reports"] == 4 and first["replayed_acks"] == 0


def test_two_first_runs_share_one_randomization(env, tmp_path, monkeypatch):
    """Two runs that start together on the same documents: the second to keep its reports sends the first's."""
    from dptopic.service import client as client_module

    docs = corpus_of(env["texts"][110:113], env["words"])
    state = tmp_path / "state"
    state.mkdir()
    real = client_module._create_submit_state
    seen = {}

    def racing(path, kept):                 # another run keeps its reports in the same file just before this one
        other = dict(kept, uploads=[dict(u, key="race-" + u["key"][:20]) for u in kept["uploads"]])
        assert real(path, other) is None
        seen["key"] = other["uploads"][0]["key"]
        return real(path, kept)

    monkeypatch.setattr(client_module, "_create_submit_state", racing)
    s = submit(env["url"], docs, state=state)
    doc = json.loads(next(state.glob("submit-*.json")).read_text())
    assert doc["uploads"][0]["key"] == seen["key"] and s["reports"] == 3
