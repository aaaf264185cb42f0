"""The contributor's commands against a real ``dptopic serve`` on 127.0.0.1: ``submit`` interrupted part-way (the kept
reports finish the job on the next run, nothing is randomized twice, one pseudonym per server), ``pull``, and Ctrl-C
during ``submit`` or ``fed-client``."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

import dptopic  # noqa: E402
from dptopic.cli.main import main  # noqa: E402
from dptopic.contributor.client import ServiceClient, fed_participate, submit  # noqa: E402
from dptopic.contributor.randomizer import Randomizer  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from helpers import run_dptopic
from service_helpers import Server, admin, corpus_of, count_rows, get_json, make_data, post_reports  # noqa: E402


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


@pytest.mark.service
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


@pytest.mark.service
def test_without_state_the_error_says_a_new_run_spends_again(env):
    docs = corpus_of(env["texts"][:30], env["words"])
    with pytest.raises(DPTopicError, match=r"10 of the 30 reports were acknowledged.*randomizes all these documents"
                                           r" anew, which spends their epsilon again"):
        submit(env["url"], docs, chunk_reports=10, client=Flaky(env["url"], ok=1))


@pytest.mark.service
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


@pytest.mark.service
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


@pytest.mark.service
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


@pytest.mark.service
def test_two_first_runs_share_one_randomization(env, tmp_path, monkeypatch):
    """Two runs that start together on the same documents: the second to keep its reports sends the first's."""
    from dptopic.contributor import client as client_module

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


# ---------------------------------------------------------------------------------------------------------------------
# `dptopic pull`: a collection server's current model into a model folder, against a live server on 127.0.0.1.


def _cli(*args):
    return run_dptopic(*args)


@pytest.mark.service
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


# ---------------------------------------------------------------------------------------------------------------------
# Ctrl-C on a contributor's command says what was sent and spent, as a failure does: ``submit`` keeps the
# acknowledged uploads in its state (before, a rerun replayed every upload the interrupted run had sent since its last
# state write) and names them; ``fed-client`` names the epsilon spent by the updates that left the device. Before, both
# printed only "interrupted".


class CtrlC(ServiceClient):
    """Posts ``ok`` uploads, then the user presses Ctrl-C."""

    def __init__(self, url, ok):
        super().__init__(url, retries=0)
        self.ok, self.bodies = ok, []

    def post_bytes(self, path, body, key, extra=None):
        self.bodies.append(body)
        if self.ok == 0:
            raise KeyboardInterrupt
        self.ok -= 1
        return super().post_bytes(path, body, key, extra)


@pytest.fixture(scope="module")
def ctrl_c_env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ctrl-c")
    words, texts = make_data(tmp, vocab_size=30, n_docs=60, n_prior=10)
    db = f"sqlite:///{tmp / 'service.db'}"
    srv = Server(tmp, db, "--train-interval", "0", "--fed-epsilon-per-entry", "3", "--fed-topics", "2", "--fed-pad-length", "8",
                 "--fed-min-updates", "1").start()
    yield {"words": words, "texts": texts, "db": db, "url": srv.url}
    srv.stop()


@pytest.mark.service
def test_ctrl_c_during_submit_keeps_and_names_the_acknowledged_reports(ctrl_c_env, tmp_path):
    docs = corpus_of(ctrl_c_env["texts"][:50], ctrl_c_env["words"])
    state = tmp_path / "state"
    state.mkdir()
    before = count_rows(ctrl_c_env["db"])["n_reports"]
    with pytest.raises(KeyboardInterrupt) as e:
        submit(ctrl_c_env["url"], docs, chunk_reports=10, client=CtrlC(ctrl_c_env["url"], ok=2), state=state)
    msg = str(e.value)
    assert msg.startswith("interrupted; 20 of the 50 reports were acknowledged") and "Run the same command" in msg
    assert count_rows(ctrl_c_env["db"])["n_reports"] == before + 20
    again = CtrlC(ctrl_c_env["url"], ok=100)
    s = submit(ctrl_c_env["url"], docs, chunk_reports=10, client=again, state=state)
    # the state knew the two acknowledged uploads: nothing replayed, the three others sent once
    assert s["already_acknowledged"] == 20 and s["replayed_acks"] == 0 and len(again.bodies) == 3
    assert count_rows(ctrl_c_env["db"])["n_reports"] == before + 50


@pytest.mark.service
def test_ctrl_c_during_fed_client_names_the_epsilon_spent(ctrl_c_env):
    docs = corpus_of(ctrl_c_env["texts"][:5], ctrl_c_env["words"])

    def press_ctrl_c(_round):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as e:
        fed_participate(ctrl_c_env["url"], docs, rounds=3, poll=0.05, timeout=30, state=None, on_round=press_ctrl_c)
    msg = str(e.value)
    assert msg.startswith("interrupted after 1 round (spent so far: epsilon") and "over 1 update that left" in msg
    assert "spends epsilon again" in msg


