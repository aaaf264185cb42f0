"""``dptopic serve --report-kind secure-sum`` killed with SIGKILL in the middle of every step and started again on the
same SQLite file: the round resumes from its durable state (the running sums and the receipts) and releases what a
round never stopped releases."""
from __future__ import annotations

import json
import time

import pytest

from service_helpers import InProcessRound, Server, http

pytest.importorskip("uvicorn")
pytest.importorskip("cryptography")
pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")


class SecureServe(Server):
    """``dptopic serve --report-kind secure-sum`` for an :class:`InProcessRound`'s settings, in a subprocess."""

    def __init__(self, tmp, rnd: InProcessRound):
        (tmp / "words.txt").write_text("\n".join(rnd.words) + "\n")
        (tmp / "token").write_text("t" * 24)
        self.rnd = rnd
        super().__init__(tmp, f"sqlite:///{tmp}/served.sqlite")

    def argv(self) -> list[str]:
        p = self.rnd.plan
        return ["serve", "--report-kind", "secure-sum", "--unit", "user", "--epsilon", str(p.epsilon), "--delta",
                str(p.delta), "--min-contributors", str(p.n), "--dropout-tolerance", str(p.dropouts), "--collusion",
                str(p.collusion), "--topics", str(self.rnd.cfg.n_topics), "--vocabulary", str(self.tmp / "words.txt"),
                "--directory", str(self.rnd.tmp / "inv" / "directory.json"), "--database", self.database,
                "--token-file", str(self.tmp / "token"), "--port", str(self.port), "--quiet"]

    def start(self, timeout: float = 120.0) -> "SecureServe":
        import os
        import subprocess
        import sys

        from service_helpers import SRC
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.log = open(self.tmp / f"server-{self.port}.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "dptopic", *self.argv()], env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log_text()[-2000:]
            try:
                if http("GET", self.url + "/v1/config", timeout=2)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the secure-sum server did not start: {self.log_text()[-2000:]}")


class OverHttp:
    """The :class:`~dptopic.service.secure_sum.SecureRound` methods :class:`InProcessRound` calls, over HTTP."""

    def __init__(self, url: str):
        self.url = url

    def _call(self, method, path, doc=None, body=None, headers=None):
        from dptopic.service.secure_sum import ApiError
        if doc is not None:
            body, headers = json.dumps(doc).encode(), {"Content-Type": "application/json"}
        status, _, data = http(method, self.url + path, body, headers or {})
        out = json.loads(data)
        if status >= 400:
            raise ApiError(status, out["error"]["code"], out["error"]["message"])
        return status, out

    def view(self):
        return self._call("GET", "/v1/secure/round")[1]

    def roster_view(self):
        return self._call("GET", "/v1/secure/roster")[1]

    def post_keys(self, who, keys, signature):
        return self._call("POST", "/v1/secure/keys", {"contributor": who, "keys": keys, "signature": signature})

    def post_shares(self, who, shares):
        return self._call("POST", "/v1/secure/shares", {"contributor": who, "shares": shares})

    def post_upload(self, phase, who, body, signature):
        return self._call("POST", f"/v1/secure/upload/{phase}", body=body,
                          headers={"Dptopic-Contributor": who, "Dptopic-Signature": signature})

    def post_consistency(self, phase, who, signature):
        return self._call("POST", f"/v1/secure/consistency/{phase}", {"contributor": who, "signature": signature})

    def signatures(self, phase):
        return self._call("GET", f"/v1/secure/signatures/{phase}")[1]

    def post_unmask(self, phase, who, answers, signature):
        return self._call("POST", f"/v1/secure/unmask/{phase}", {"contributor": who, "answers": answers,
                                                                 "signature": signature})

    def close(self):
        return self._call("POST", "/v1/admin/secure/close", body=b"", headers={"Authorization": "Bearer " + "t" * 24})


EVERY = ("keys", "shares", "upload0", "consistency0", "unmask0", "answered0", "upload1", "consistency1", "unmask1",
         "answered1")


@pytest.mark.parametrize("points", [
    pytest.param(("upload0", "answered1"), id="in-an-upload-and-before-the-unmasking"),
    pytest.param(EVERY, id="in-every-step", marks=pytest.mark.slow)])
def test_a_server_killed_resumes_and_releases_the_same_sums(tmp_path, points):
    """``points``: where the server is killed (``answered{p}``: after the last answer, before the unmasking)."""
    plain = InProcessRound(tmp_path / "plain", n=10, dropouts=2, collusion=1, seed=4)
    assert plain.run(drop0=[plain.people[-1].me])["state"] == "released"
    direct = plain.server
    rnd = InProcessRound(tmp_path / "killed", n=10, dropouts=2, collusion=1, seed=4)
    srv = SecureServe(tmp_path, rnd).start()
    rnd.server = OverHttp(srv.url)
    kills = 0

    def kill_and_start(point):
        nonlocal kills
        if point not in points:
            return
        srv.kill()
        srv.start()
        kills += 1
    try:
        half = rnd.people[:5]
        for c in half:
            r = c.registration()
            rnd.server.post_keys(r["contributor"], r["keys"], r["signature"])
        kill_and_start("keys")                 # in the middle of the keys
        rnd.keys()                             # the first half again: replays
        roster = rnd.server.roster_view()
        for c in half:
            q = c.shares_request(roster)
            rnd.server.post_shares(q["contributor"], q["shares"])
        kill_and_start("shares")               # in the middle of the shares
        rnd.shares()
        for phase in (0, 1):
            view = rnd.server.view()
            for c in half:
                body, sig = c.upload(phase, view)
                answer = rnd.server.post_upload(phase, c.me, body, sig)[1]
                if phase == 0:
                    c.take_shares(answer["shares"])
            kill_and_start(f"upload{phase}")     # in the middle of an upload step: its running sum is on disk
            rnd.upload(phase, drop=[rnd.people[-1].me] if phase == 0 else ())
            assert rnd.server.view()["state"] == f"consistency{phase}"
            kill_and_start(f"consistency{phase}")
            rnd.consistency(phase)
            kill_and_start(f"unmask{phase}")
            rnd.unmask(phase, wait=False)
            kill_and_start(f"answered{phase}")    # the answers are in; the unmasking resumes on start
            deadline = time.monotonic() + 60
            while rnd.server.view()["state"] == f"unmask{phase}" and time.monotonic() < deadline:
                time.sleep(0.1)
        assert rnd.server.view()["state"] == "released", rnd.server.view()
        model = rnd.server._call("GET", "/v1/model")[1]
    finally:
        srv.stop()
    assert kills == len(points)
    assert json.loads(model["model_json"])["privacy"]["unit"] == "user"
    from sqlalchemy import create_engine, select

    from dptopic.service.secure_sum import t_state
    engine = create_engine(srv.database)
    with engine.connect() as a, direct.engine.connect() as b:
        for p in (0, 1):
            q = select(t_state.c.value).where(t_state.c.key == f"sum{p}")
            assert json.loads(a.execute(q).scalar()) == json.loads(b.execute(q).scalar())
    engine.dispose()
