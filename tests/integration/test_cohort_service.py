"""A round in cohorts through the front doors: ``dptopic secure-sum invite --cohort-size``, a live ``dptopic serve
--report-kind secure-sum --cohort-size`` on 127.0.0.1 (a real process), one person by ``dptopic submit`` (a delegate,
so that it plays its cohort and the bridge) and the others by the library's client in threads, then ``dptopic pull``
of the released model."""
from __future__ import annotations

import json
import threading
import time

import pytest

from cohort_helpers import WORDS, hold_noise_fixed, play_all, tiny_bows
from helpers import run_dptopic
from service_helpers import SecureServe, Server, get_json

pytest.importorskip("uvicorn")
pytest.importorskip("cryptography")
pytestmark = [pytest.mark.service, pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")]
N, SIZE = 24, 12


class CohortServe(Server):
    """``dptopic serve --report-kind secure-sum --cohort-size`` in a subprocess."""

    def __init__(self, tmp):
        (tmp / "words.txt").write_text("\n".join(WORDS) + "\n")
        super().__init__(tmp, f"sqlite:///{tmp}/round.db")

    def argv(self) -> list[str]:
        return ["serve", "--report-kind", "secure-sum", "--unit", "user", "--epsilon", "8", "--cohort-size",
                str(SIZE), "--topics", "3", "--vocabulary", str(self.tmp / "words.txt"), "--directory",
                str(self.tmp / "inv" / "directory.json"), "--database", self.database, "--port", str(self.port),
                "--quiet"]

    start = SecureServe.start


def test_a_round_in_cohorts_through_serve_submit_and_pull(tmp_path, monkeypatch):
    r = run_dptopic("secure-sum", "invite", "--key", tmp_path / "enroll.key", "--count", N, "--out", tmp_path / "inv",
                    "--cohort-size", SIZE, "--dropout-tolerance", 0, "--collusion", 1, "--round-id", "round1")
    assert r.returncode == 0, r.stderr
    assert "2 cohorts, 2 delegates each" in r.stdout and "--cohort-size 12" in r.stdout
    files = sorted((tmp_path / "inv").glob("invitation-*.json"))
    srv = CohortServe(tmp_path).start()
    try:
        cfg = get_json(srv.url + "/v1/config")[1]
        assert [len(m) for m in cfg["cohorts"]["members"]] == [12, 12]
        me = next(i for i, f in enumerate(files) if "bridge" in json.loads(f.read_text()))     # a delegate
        texts = ["w001 w002 w003 w004", "w002 w003 w005", "w001 w004 w005 w006"]
        (tmp_path / "mine.txt").write_text("\n".join(texts) + "\n")
        hold_noise_fixed(monkeypatch)       # the others' rounding and noise (in this process)
        bows = tiny_bows(N)
        out: list = []
        others = threading.Thread(target=lambda: out.extend(play_all(srv.url, files, bows, tmp_path, skip={me})))
        others.start()
        r = run_dptopic("submit", "--server", srv.url, "--corpus", tmp_path / "mine.txt", "--format", "text",
                        "--invitation", files[me], "--state", tmp_path / "mine.json", timeout=None)
        others.join(180)
        assert r.returncode == 0, r.stderr
        assert "took part in the secure sum" in r.stdout and "also took part in the bridge" in r.stdout
        assert all(isinstance(o, dict) for i, o in enumerate(out) if i != me), out
        assert get_json(srv.url + "/v1/secure/round")[1]["state"] == "released"
        r = run_dptopic("pull", "--server", srv.url, "--out", tmp_path / "model")
        assert r.returncode == 0, r.stderr
        from dptopic.models import load

        model = load(tmp_path / "model")
        assert model.components_.shape[0] == 3 and "cohorts" in json.dumps(model.privacy_)
        kept = get_json(srv.url + "/cohorts/1/v1/secure/round")[1]["kept"]
        assert kept and set(kept) <= set(range(len(WORDS)))
    finally:
        srv.stop()


def _killed_once_step_1_is_open(srv, files, n: int, tmp_path) -> None:
    """Every contributor of ``files`` plays against ``srv``; once step 1 is open the server is killed with SIGKILL and
    started again on its files (the contributors retry meanwhile); the round must then release."""
    out: list = []
    players = threading.Thread(target=lambda: out.extend(play_all(srv.url, files, tiny_bows(n), tmp_path)))
    players.start()
    deadline = time.monotonic() + 90
    state = "keys"
    while state in ("keys", "shares", "upload0", "consistency0", "unmask0"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
        state = get_json(srv.url + "/v1/secure/round")[1]["state"]
    assert state in ("upload1", "consistency1", "unmask1")
    srv.kill()          # SIGKILL after step 0's kept words: the contributors retry while it starts again
    srv.start()
    players.join(180)
    assert all(isinstance(o, dict) for o in out), [o for o in out if not isinstance(o, dict)]
    assert get_json(srv.url + "/v1/secure/round")[1]["state"] == "released"


def test_a_server_in_cohorts_killed_mid_round_resumes_from_its_files_and_releases(tmp_path, monkeypatch):
    r = run_dptopic("secure-sum", "invite", "--key", tmp_path / "enroll.key", "--count", N, "--out", tmp_path / "inv",
                    "--cohort-size", SIZE, "--dropout-tolerance", 0, "--collusion", 1, "--round-id", "round1")
    assert r.returncode == 0, r.stderr
    files = sorted((tmp_path / "inv").glob("invitation-*.json"))
    srv = CohortServe(tmp_path).start()
    try:
        hold_noise_fixed(monkeypatch)
        _killed_once_step_1_is_open(srv, files, N, tmp_path)
        assert sorted(p.name for p in tmp_path.glob("round-*.db")) == ["round-bridge.db", "round-c0.db",
                                                                        "round-c1.db"]
    finally:
        srv.stop()


class CommitteeCohortServe(CohortServe):
    """``dptopic serve --report-kind secure-sum --cohort-size 20 --secure-committee auto`` in a subprocess, charged
    to the dataset ledger ``tmp/ledger.sqlite`` (dataset ``clinic``)."""

    def argv(self) -> list[str]:
        argv = super().argv()
        argv[argv.index("--cohort-size") + 1] = "20"
        return [*argv, "--secure-committee", "auto", "--ledger", str(self.tmp / "ledger.sqlite"), "--dataset",
                "clinic"]


def test_a_server_in_committee_cohorts_killed_mid_round_resumes_from_its_files_and_releases(tmp_path):
    """Each cohort a committee round kept in its own SQLite file: SIGKILL once step 1 is open, started again on the
    same files, the round goes on (the contributors retry) and releases, charged to the dataset ledger once (before
    step 0 was unmasked, not again after the restart)."""
    from dptopic.dataset_ledger.ledger import DatasetLedger

    n = 40
    r = run_dptopic("secure-sum", "invite", "--key", tmp_path / "enroll.key", "--count", n, "--out", tmp_path / "inv",
                    "--cohort-size", 20, "--dropout-tolerance", 0, "--collusion", 1, "--round-id", "round1",
                    "--committee")
    assert r.returncode == 0, r.stderr
    files = sorted((tmp_path / "inv").glob("invitation-*.json"))
    srv = CommitteeCohortServe(tmp_path).start()
    try:
        _killed_once_step_1_is_open(srv, files, n, tmp_path)
        status, model = get_json(srv.url + "/v1/model")
        assert status == 200 and "each cohort is a committee-mode round" in model["model_json"]
        assert sorted(p.name for p in tmp_path.glob("round-*.db")) == ["round-bridge.db", "round-c0.db",
                                                                        "round-c1.db"]
        assert len(DatasetLedger(tmp_path / "ledger.sqlite").releases("clinic")) == 1
        assert DatasetLedger(tmp_path / "ledger.sqlite").person_summary()["persons"] == n
    finally:
        srv.stop()
