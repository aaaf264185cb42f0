"""Ctrl-C on a contributor's command says what was sent and spent, as a failure does: ``submit`` keeps the
acknowledged uploads in its state (before, a rerun replayed every upload the interrupted run had sent since its last
state write) and names them; ``fed-client`` names the epsilon spent by the updates that left the device. Before, both
printed only "interrupted"."""
from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.cli import main as cli_main  # noqa: E402
from dptopic.service.client import ServiceClient, fed_participate, submit  # noqa: E402

from service_helpers import Server, corpus_of, count_rows, make_data  # noqa: E402


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
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ctrl-c")
    words, texts = make_data(tmp, vocab_size=30, n_docs=60, n_prior=10)
    db = f"sqlite:///{tmp / 'service.db'}"
    srv = Server(tmp, db, "--train-interval", "0", "--fed-epsilon-per-entry", "3", "--fed-topics", "2", "--fed-pad-length", "8",
                 "--fed-min-updates", "1").start()
    yield {"words": words, "texts": texts, "db": db, "url": srv.url}
    srv.stop()


def test_ctrl_c_during_submit_keeps_and_names_the_acknowledged_reports(env, tmp_path):
    docs = corpus_of(env["texts"][:50], env["words"])
    state = tmp_path / "state"
    state.mkdir()
    before = count_rows(env["db"])["n_reports"]
    with pytest.raises(KeyboardInterrupt) as e:
        submit(env["url"], docs, chunk_reports=10, client=CtrlC(env["url"], ok=2), state=state)
    msg = str(e.value)
    assert msg.startswith("interrupted; 20 of the 50 reports were acknowledged") and "Run the same command" in msg
    assert count_rows(env["db"])["n_reports"] == before + 20
    again = CtrlC(env["url"], ok=100)
    s = submit(env["url"], docs, chunk_reports=10, client=again, state=state)
    # the state knew the two acknowledged uploads: nothing replayed, the three others sent once
    assert s["already_acknowledged"] == 20 and s["replayed_acks"] == 0 and len(again.bodies) == 3
    assert count_rows(env["db"])["n_reports"] == before + 50


def test_ctrl_c_during_fed_client_names_the_epsilon_spent(env):
    docs = corpus_of(env["texts"][:5], env["words"])

    def press_ctrl_c(_round):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as e:
        fed_participate(env["url"], docs, rounds=3, poll=0.05, timeout=30, state=None, on_round=press_ctrl_c)
    msg = str(e.value)
    assert msg.startswith("interrupted after 1 round (spent so far: epsilon") and "over 1 update that left" in msg
    assert "spends epsilon again" in msg


@pytest.mark.parametrize("raised,shown", [(KeyboardInterrupt(), "interrupted"),
                                          (KeyboardInterrupt("interrupted; 3 of 5 sent"), "interrupted; 3 of 5 sent")])
def test_the_cli_prints_what_the_interrupted_command_said(monkeypatch, capsys, raised, shown):
    def run(argv):
        raise raised

    monkeypatch.setattr(cli_main, "_run", run)
    assert cli_main.main(["submit"]) == 130
    assert capsys.readouterr().err.strip() == shown
