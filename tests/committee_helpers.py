"""A committee-mode secure-sum round in process: the real server (:class:`~dptopic.service.secure_sum.committee.
CommitteeRound`) and real contributors (:class:`~dptopic.contributor.secure_sum.committee.CommitteeContributor`), driven
step by step so that a test can stand between them (what the server *says* is what :meth:`say` returns)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from service_helpers import OverHttp


class InProcessCommitteeRound:
    """``n`` contributors with their invitations and state files, a plan with ``committee`` (default "auto"). Each
    contributor's noisy share of each step (what it masked) is recorded in ``shares`` to check the sum exactly."""

    absent: frozenset = frozenset()
    """Invited contributors who never registered (no-shows: :meth:`prekeys`)."""

    def __init__(self, tmp: Path, n: int = 20, dropouts: int = 2, collusion: int = 1, vocab: int = 30,
                 epsilon: float = 8.0, topics: int = 3, seed: int = 0, committee="auto", ids=None, ledger=None):
        from cohort_helpers import tiny_bows
        from dptopic.contributor.secure_sum.committee import CommitteeContributor
        from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory, read_invitation
        from dptopic.protocol.secure_sum.plan import SecureSumPlan
        from dptopic.service.secure_sum.committee import CommitteeRound

        self.tmp = Path(tmp)
        self.words = [f"w{i:03d}" for i in range(vocab)]
        make_invitations(self.tmp / "enroll.key", n, self.tmp / "inv", round_id="round1", committee=True,
                         dropouts=dropouts, collusion=collusion, ids=ids, ledger=ledger)
        self.directory = read_directory(self.tmp / "inv" / "directory.json")
        self.invitations = [read_invitation(f) for f in sorted((self.tmp / "inv").glob("invitation-*.json"))]
        self.plan = SecureSumPlan(epsilon, 1e-5, n, dropouts, vocab, collusion, committee=committee)
        self.server = CommitteeRound(self.plan, self.directory, self.words, topics)
        self.config = {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": self.words,
                       "vocab_size": vocab, "n_topics": topics, "round_id": self.server.round_id,
                       "secure_sum": self.plan.to_dict(), "epsilon": self.plan.epsilon, "delta": self.plan.delta,
                       "directory": self.directory}
        self.shares: dict = {}
        self.people = []
        for k, (b, inv) in enumerate(zip(tiny_bows(n, seed, vocab), self.invitations)):
            c = CommitteeContributor(self.config, b, inv, state=self.tmp / f"state-{inv['contributor']}.json",
                                     rng=np.random.default_rng([seed, k]))
            self._record(c)
            self.people.append(c)
        self.by_id = {c.me: c for c in self.people}
        self.refused: dict = {}
        self.requests: dict = {c.me: [] for c in self.people}

    @classmethod
    def cohorts(cls, tmp: Path, n: int = 40, cohort_size: int = 20, dropouts: int = 4, collusion: int = 1,
                vocab: int = 30, topics: int = 3, seed: int = 0, committee="auto"):
        """``(server, [round of each cohort])``: a round in committee cohorts
        (``dptopic.service.secure_sum.cohort_app``'s :class:`~dptopic.service.secure_sum.cohort_app.CohortServer`, not
        served: its coordinator is called by the test) and, for each cohort, this class over that cohort's
        :class:`~dptopic.service.secure_sum.committee_cohorts.CommitteeCohortRound` and its members as
        :class:`~dptopic.contributor.secure_sum.cohorts.CohortCommitteeContributor` (a delegate with its pads)."""
        from cohort_helpers import tiny_bows
        from dptopic.contributor.secure_sum.cohorts import CohortCommitteeContributor, Pads
        from dptopic.protocol.secure_sum.cohort_enrollment import (
            make_cohort_invitations,
            read_cohort_directory,
            read_cohort_invitation,
        )
        from dptopic.protocol.secure_sum.cohorts import CohortPlan
        from dptopic.service.secure_sum.cohort_app import CohortSumConfig, create_cohort_app

        tmp = Path(tmp)
        words = [f"w{i:03d}" for i in range(vocab)]
        make_cohort_invitations(tmp / "enroll.key", n, tmp / "inv", cohort_size, dropouts, collusion, "round1",
                                committee=True)
        plan = CohortPlan(8.0, 1e-5, n, dropouts, vocab, cohort_size, collusion, committee=committee)
        cfg = CohortSumConfig(words, plan, read_cohort_directory(tmp / "inv" / "directory.json"), n_topics=topics,
                              database=f"sqlite:///{tmp}/round.db")
        server = create_cohort_app(cfg, freeze_gc=False).state.cohort_server
        invitations = [read_cohort_invitation(f) for f in sorted((tmp / "inv").glob("invitation-*.json"))]
        bows = dict(zip((inv["contributor"] for inv in invitations), tiny_bows(n, seed, vocab)))
        rounds = []
        for c, (cohort, members) in enumerate(zip(server.rounds, server.groups)):
            rnd = cls.__new__(cls)
            rnd.tmp, rnd.words, rnd.plan, rnd.server = tmp, words, cohort.plan, cohort
            rnd.cohort_plan, rnd.delegates = plan, plan.delegates(members, "round1", c)
            rnd.directory = cohort.directory
            rnd.config = {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": words,
                          "vocab_size": vocab, "n_topics": topics, "round_id": cohort.round_id,
                          "secure_sum": cohort.plan.to_dict(), "epsilon": plan.epsilon, "delta": plan.delta,
                          "directory": cohort.directory}
            rnd.shares, rnd.people, rnd.refused = {}, [], {}
            for k, inv in enumerate(i for i in invitations if i["cohorts"]["cohort"] == c):
                who = CohortCommitteeContributor(
                    rnd.config, bows[inv["contributor"]], inv, plan, "round1", c,
                    Pads() if inv["bridge"] is not None else None, state=tmp / f"state-{inv['contributor']}.json",
                    rng=np.random.default_rng([seed, c, k]))
                rnd._record(who)
                rnd.people.append(who)
            rnd.by_id = {p.me: p for p in rnd.people}
            rnd.requests = {p.me: [] for p in rnd.people}
            rounds.append(rnd)
        return server, rounds

    def revealed(self, phase: int) -> dict:
        """``{member: answers}`` the honest committee members made for ``phase`` (kept in their state)."""
        out = {}
        for m in self.committee:
            sent = self.by_id[m].st["sent"].get(f"unmask{phase}")
            if isinstance(sent, dict):
                out[m] = sent["answers"]
        return out

    def _record(self, c):
        share = c._share

        def recorded(phase, x):
            out = share(phase, x)
            self.shares[(c.me, phase)] = np.asarray(out, dtype=np.int64)
            return out
        c._share = recorded

    def say(self, step: str, who: str, what: str, value):
        """What the server tells ``who`` at ``step`` (``what``: config, view, signatures, uploads); honest here."""
        return value

    def _run(self, c, step, f, *args):
        from dptopic.contributor.secure_sum.checks import LeftOut, ServerLied

        try:
            return f(*args)
        except ServerLied as e:
            self.refused[c.me] = (step, str(e))
        except LeftOut:
            pass
        return None

    @property
    def committee(self) -> list:
        return self.server.committee

    def prekeys(self, absent=()):
        """Every invited contributor posts its keys, but those in ``absent`` (no-shows, who never do)."""
        self.absent = set(absent)
        for c in self.people:
            if c.me not in self.absent:
                self.server.post_prekeys(c.me, [c.prekey()])

    def open(self):
        """Each contributor's first request: the configuration with the closed roster and the committee."""
        cfg = self.server.config_view()
        for c in self.people:
            if c.me in self.absent:       # never registered
                continue
            self.requests[c.me].append("GET /v1/config")
            v = self.say("config", c.me, "config", cfg)
            self._run(c, "config", c.check_round, v["roster"], v["committee"])

    def upload(self, phase: int, drop=()):
        view = self.server.view()
        for c in self.people:
            if c.me in drop or c.me in self.refused or c.me in self.absent:
                continue
            out = self._run(c, f"upload{phase}", c.committee_upload, phase, self.say(f"upload{phase}", c.me, "view",
                                                                                     view))
            if out is None:
                continue
            self.requests[c.me].append(f"POST /v1/secure/upload/{phase}")
            self.server.post_upload(phase, c.me, *out)
        if self.server.state == f"upload{phase}":
            self.server.close()

    def consistency(self, phase: int):
        for m in self.committee:
            c = self.by_id[m]
            if m in self.refused or m not in set(self.server.view().get("uploaded", ())):
                continue
            q = self._run(c, f"consistency{phase}", c.committee_consistency, phase,
                          self.say(f"consistency{phase}", m, "view", self.server.committee_view(phase, m)))
            if q is not None:
                self.requests[m].append(f"POST /v1/secure/consistency/{phase}")
                self.server.post_consistency(phase, m, q["signature"])
        if self.server.state == f"consistency{phase}":
            self.server.close()

    def unmask(self, phase: int):
        if self.server.state != f"unmask{phase}":
            return self.server.view()
        sigs = self.server.signatures(phase)
        for m in self.server.view()["signers"]:
            c = self.by_id[m]
            if m in self.refused:
                continue
            v = self.server.committee_view(phase, m)
            q = self._run(c, f"unmask{phase}", c.committee_unmask, phase, self.say(f"unmask{phase}", m, "view", v),
                          self.say(f"unmask{phase}", m, "signatures", sigs),
                          self.say(f"unmask{phase}", m, "uploads", v["uploads"]))
            if q is None:
                continue
            self.requests[m].append(f"POST /v1/secure/unmask/{phase}")
            if self.server.state == f"unmask{phase}":
                self.server.post_unmask(phase, m, q["answers"], q["signature"])
        if self.server.state == f"unmask{phase}":
            self.server.close()
        return self.server.view()

    def run(self, drop0=()):
        """Every step; ``drop0``: contributors that never upload in step 0. Returns the final view."""
        self.prekeys()
        self.open()
        return self.run_from_open(drop0)

    def run_from_open(self, drop0=()):
        """The steps after :meth:`open`."""
        for phase in (0, 1):
            if self.server.state != f"upload{phase}":
                break
            self.upload(phase, drop=drop0 if phase == 0 else ())
            if self.server.state != f"consistency{phase}":
                break
            self.consistency(phase)
            self.unmask(phase)
        return self.server.view()

    def plain_sum(self, phase: int) -> np.ndarray:
        """The sum of the noisy shares of the step's uploaders, as they masked them."""
        return np.sum([self.shares[(u, phase)] for u in self.server.uploaded[phase]], axis=0)


class CommitteeServer:
    """A committee-mode round's app (:func:`~dptopic.service.secure_sum.committee_app.create_committee_app`) under a
    real uvicorn in a thread of this process, on 127.0.0.1: ``n`` invitations in ``tmp/inv``, ``words`` its
    vocabulary."""

    def __init__(self, tmp: Path, words, n: int, dropouts: int = 0, collusion: int = 0, topics: int = 3,
                 registration_s: float | None = None):
        from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory
        from dptopic.protocol.secure_sum.plan import SecureSumPlan
        from dptopic.service.secure_sum.committee_app import create_committee_app
        from service_helpers import free_port

        make_invitations(Path(tmp) / "enroll.key", n, Path(tmp) / "inv", round_id="round1", committee=True,
                         dropouts=dropouts, collusion=collusion)
        self.invitation_files = sorted((Path(tmp) / "inv").glob("invitation-*.json"))
        self.plan = SecureSumPlan(8.0, 1e-5, n, dropouts, len(words), collusion, committee="auto")
        self.app = create_committee_app(self.plan, read_directory(Path(tmp) / "inv" / "directory.json"), list(words),
                                        topics, admin_token="t" * 24, registration_s=registration_s)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def round(self):
        return self.app.state.served.rnd

    def __enter__(self) -> "CommitteeServer":
        import uvicorn

        from service_helpers import start_uvicorn

        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_config=None,
                                                    log_level="warning", access_log=False))
        self.thread = start_uvicorn(self.server, "the committee server")
        return self

    def __exit__(self, *exc) -> None:
        from service_helpers import stop_uvicorn

        stop_uvicorn(self.server, self.thread)


class CommitteeOverHttp(OverHttp):
    """The :class:`~dptopic.service.secure_sum.committee.CommitteeRound` calls :class:`InProcessCommitteeRound` makes,
    over HTTP to the server at ``url`` (its admin token ``token``): a served round driven step by step."""

    def __init__(self, url: str, token: str = "t" * 24):
        super().__init__(url)
        self.token = token

    def _call(self, method, path, doc=None, body=None, headers=None):
        """The answer's document (:meth:`OverHttp._call` without its status); an error answer raised as ApiError."""
        return super()._call(method, path, doc, body, headers)[1]

    def view(self) -> dict:
        return self._call("GET", "/v1/secure/round")

    @property
    def state(self) -> str:
        return self.view()["state"]

    @property
    def committee(self) -> list:
        return self.view().get("committee", [])

    def config_view(self) -> dict:
        return self._call("GET", "/v1/secure/round?include=roster")

    def committee_view(self, phase: int, member: str) -> dict:
        return self._call("GET", f"/v1/secure/round?contributor={member}&include=committee")

    def signatures(self, phase: int) -> dict:
        return self._call("GET", "/v1/secure/round?include=signatures")["signatures"]

    def post_prekeys(self, who, bundles):
        return self._call("POST", "/v1/secure/prekeys", {"contributor": who, "bundles": bundles})

    def post_upload(self, phase, who, body, header, blobs, signature):
        import json

        meta = json.dumps({"header": header, "blobs": blobs}).encode()
        return self._call("POST", f"/v1/secure/upload/{phase}", body=meta + body,
                          headers={"Content-Type": "application/octet-stream", "Dptopic-Contributor": who,
                                   "Dptopic-Signature": signature, "Dptopic-Meta-Length": str(len(meta))})

    def post_consistency(self, phase, who, signature):
        return self._call("POST", f"/v1/secure/consistency/{phase}", {"contributor": who, "signature": signature})

    def post_unmask(self, phase, who, answers, signature):
        return self._call("POST", f"/v1/secure/unmask/{phase}", {"contributor": who, "answers": answers,
                                                                  "signature": signature})

    def close(self) -> dict:
        return self._call("POST", "/v1/admin/secure/close", headers={"Authorization": f"Bearer {self.token}"})


def committee_serve_class():
    """:class:`service_helpers.SecureServe` for an :class:`InProcessCommitteeRound`'s committee round: ``dptopic serve
    --report-kind secure-sum --secure-committee auto`` in a subprocess (a function: service_helpers loads numpy and
    the server's helpers only where a test serves)."""
    from service_helpers import SecureServe

    class CommitteeServe(SecureServe):
        def argv(self) -> list[str]:
            p = self.rnd.plan
            return ["serve", "--report-kind", "secure-sum", "--unit", "user", "--epsilon", str(p.epsilon), "--delta",
                    str(p.delta), "--min-contributors", str(p.n), "--dropout-tolerance", str(p.dropouts),
                    "--collusion", str(p.collusion), "--topics", "3", "--vocabulary", str(self.tmp / "words.txt"),
                    "--directory", str(self.rnd.tmp / "inv" / "directory.json"), "--secure-committee", "auto",
                    "--database", self.database, "--token-file", str(self.tmp / "token"), "--port", str(self.port),
                    "--quiet"]
    return CommitteeServe


class Spread:
    """The server calls :class:`InProcessCommitteeRound` makes, each sent to the next of several servers
    (:class:`CommitteeOverHttp`): a round whose requests are spread across server processes."""

    def __init__(self, *servers: CommitteeOverHttp):
        import itertools

        self.servers = itertools.cycle(servers)

    def __getattr__(self, name):
        return getattr(next(self.servers), name)
