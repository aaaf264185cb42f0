"""The secure sum from the command line: ``secure-sum invite``, ``serve --report-kind secure-sum``'s refusals,
``submit --invitation`` and ``experiment secure-sum``."""
import json
import os
import stat
import time

import pytest

from helpers import run_dptopic
from service_helpers import write_token

pytest.importorskip("cryptography")


WORDS = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(30)]
"""The vocabulary of the rounds played over HTTP here."""


def invite(tmp_path, count, *flags):
    """The operator's invitations to round "spring" (``secure-sum invite``) in ``tmp_path/inv``, beside a vocabulary
    of 30 words in ``tmp_path/v.txt``: ``tmp_path``."""
    (tmp_path / "v.txt").write_text("\n".join(f"word{i:02d}" for i in range(30)))
    r = run_dptopic("secure-sum", "invite", "--key", str(tmp_path / "enroll.key"), "--count", str(count), "--out",
                    str(tmp_path / "inv"), "--round-id", "spring", *flags)
    assert r.returncode == 0, r.stderr
    return tmp_path


@pytest.fixture
def invited(tmp_path):
    return invite(tmp_path, 100)


def serve(tmp_path, *extra, epsilon=1):
    """``dptopic serve`` of the round :func:`invite` wrote in ``tmp_path``."""
    return run_dptopic("serve", "--report-kind", "secure-sum", "--unit", "user", "--vocabulary",
                       str(tmp_path / "v.txt"), "--epsilon", str(epsilon), "--directory",
                       str(tmp_path / "inv" / "directory.json"), "--database", f"sqlite:///{tmp_path}/db", *extra)


def write_people(path, n_people):
    """A JSON-lines corpus of ``n_people`` authors (``a00``, ``a01`` ...), three documents of 12 of :data:`WORDS` each
    (seed 0)."""
    import numpy as np

    rng = np.random.default_rng(0)
    with open(path, "w") as f:
        for p in range(n_people):
            for _ in range(3):
                f.write(json.dumps({"author": f"a{p:02d}", "text": " ".join(rng.choice(WORDS, 12))}) + "\n")


def test_invite_writes_private_invitations_and_a_directory(invited):
    files = sorted((invited / "inv").glob("invitation-*.json"))
    assert len(files) == 100 and stat.S_IMODE(os.stat(files[0]).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(invited / "enroll.key").st_mode) == 0o600
    d = json.loads((invited / "inv" / "directory.json").read_text())
    assert d["round_id"] == "spring" and len(d["members"]) == 100 and "private" not in json.dumps(d)
    again = run_dptopic("secure-sum", "invite", "--key", str(invited / "enroll.key"), "--count", "5", "--out",
                        str(invited / "inv"), "--collusion", "1")
    assert again.returncode == 2 and "--out" in again.stderr and "never overwritten" in again.stderr
    small = run_dptopic("secure-sum", "invite", "--key", str(invited / "k2"), "--count", "2", "--out",
                        str(invited / "x"))
    assert small.returncode == 2 and "--count" in small.stderr


def test_serve_needs_the_user_unit_and_a_directory(invited):
    r = run_dptopic("serve", "--report-kind", "secure-sum", "--vocabulary", str(invited / "v.txt"), "--epsilon", "1",
                    "--directory", str(invited / "inv" / "directory.json"), "--database", f"sqlite:///{invited}/db")
    assert r.returncode == 2 and "--unit user" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run_dptopic("serve", "--report-kind", "secure-sum", "--unit", "user", "--vocabulary", str(invited / "v.txt"),
                    "--epsilon", "1", "--database", f"sqlite:///{invited}/db")
    assert r.returncode == 2 and "--directory" in r.stderr and "anyone could join" in r.stderr


def test_secure_sum_flags_are_refused_for_other_kinds(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(f"word{i:02d}" for i in range(30)))
    for flag, value in (("--min-contributors", "10"), ("--collusion", "2"), ("--directory", "d.json")):
        r = run_dptopic("serve", "--epsilon-word", "2", "--vocabulary", str(tmp_path / "v.txt"), flag, value,
                        "--database", f"sqlite:///{tmp_path}/db")
        assert r.returncode == 2 and "--report-kind secure-sum" in r.stderr and flag in r.stderr


@pytest.mark.parametrize("flags", [("--batch-size", "10"), ("--fed-epsilon-per-entry", "1"), ("--lam", "0.5"),
                                   ("--train-interval", "5"), ("--epsilon-word", "2"), ("--prior", "p.txt"),
                                   ("--max-reports-per-request", "5"), ("--database-timeout", "3")])
def test_the_flags_of_other_kinds_are_refused_not_ignored(invited, flags):
    r = serve(invited, *flags)
    assert r.returncode == 2 and flags[0] in r.stderr and "not read by --report-kind secure-sum" in r.stderr


@pytest.mark.parametrize("flags, why", [
    (("--epsilon", "1e308"), "--epsilon"),
    (("--min-contributors", "50"), "--directory lists 100"),
    (("--dropout-tolerance", "99"), "--dropout-tolerance"),
    (("--dropout-tolerance", "45", "--collusion", "10"), "no neighbour graph survives"),
    (("--max-body-bytes", "1000"), "--max-body-bytes 1000 cannot hold"),
    (("--host", "0.0.0.0"), "--allow-remote"),
    (("--topics", "40"), "--topics 40 must lie between 2 and the vocabulary's size (30)"),
    (("--max-words", "3000"), "--max-words 3000"),
    (("--max-words", "4", "--topics", "5"), "--topics 5 must be at most --max-words 4"),
])
def test_bad_round_settings_are_refused_in_one_line(invited, flags, why):
    r = serve(invited, *flags)
    assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_database_that_cannot_hold_the_round_is_refused_in_the_servers_flags(invited):
    """The round's refusals name the settings (``database=``, ``allow_foreign_tables=True``) in Python; serve writes
    them in its flags."""
    import sqlite3

    con = sqlite3.connect(invited / "db")
    con.execute("CREATE TABLE reports (x)")
    con.commit()
    con.close()
    r = serve(invited)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"--database sqlite:///{invited}/db already holds tables" in r.stderr
    assert "pass --allow-foreign-tables to add" in r.stderr and "=" not in r.stderr.split("sqlite:///")[0]


def test_serve_takes_the_plan_its_invitations_pin_and_refuses_another_or_another_mode(tmp_path, monkeypatch):
    """The operator's F and t are pinned by ``invite`` in every invitation and the directory: ``serve`` takes them,
    refuses others, and serves only the mode the directory names."""
    from service_helpers import free_port

    invite(tmp_path, 100, "--dropout-tolerance", "5", "--collusion", "3")
    got = served_app(monkeypatch)
    r = serve(tmp_path, "--port", str(free_port()))
    assert r.returncode == 0, r.stderr
    plan = got["app"].state.round.cfg.plan
    assert (plan.dropouts, plan.collusion) == (5, 3) and "up to 5 dropping out and 3 colluding" in r.stderr
    for flags, why in ((("--collusion", "2"), "--collusion 2 differs from the 3 the invitations pin (--directory):"
                                              " leave it out"),
                       (("--dropout-tolerance", "6"), "--dropout-tolerance 6 differs from the 5 the invitations pin"),
                       (("--secure-committee", "auto"), "--directory names a round without a committee: drop"
                                                        " --secure-committee")):
        r = serve(tmp_path, *flags, "--database", f"sqlite:///{tmp_path}/other.db")
        assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "other.db").exists()         # nothing created before the settings are known good
    (tmp_path / "c").mkdir()
    committee = invite(tmp_path / "c", 100, "--committee")
    r = serve(committee)
    assert r.returncode == 2 and "--directory names a committee round" in r.stderr, r.stderr
    assert "serve it with --secure-committee auto" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_stored_round_restarts_only_in_the_mode_it_was_stored_in(tmp_path, monkeypatch):
    """A plain round's database is refused in the committee mode, and a committee round's without it, in one line
    (the directories here name the same round in each mode, as two invitations of one round id would)."""
    from service_helpers import free_port

    (tmp_path / "plain").mkdir()
    (tmp_path / "committee").mkdir()
    plain = invite(tmp_path / "plain", 100)
    committee = invite(tmp_path / "committee", 100, "--committee")
    got = served_app(monkeypatch)
    db = f"sqlite:///{tmp_path}/round.db"
    assert serve(plain, "--database", db, "--port", str(free_port())).returncode == 0
    got["app"].state.round.engine.dispose()
    r = serve(committee, "--secure-committee", "auto", "--database", db)
    assert r.returncode == 2 and "holds a secure-sum round without a committee: restart the server without the" \
        " committee mode" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    db2 = f"sqlite:///{tmp_path}/committee.db"
    r = serve(committee, "--secure-committee", "auto", "--database", db2, "--port", str(free_port()))
    assert r.returncode == 0, r.stderr
    r = serve(plain, "--database", db2)
    assert r.returncode == 2 and "--database" in r.stderr and "holds a committee-mode round: restart the server in" \
        " the committee mode" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_submit_refuses_a_server_whose_plan_or_mode_is_not_its_invitations(tmp_path):
    """A single round's contributors pin the operator's F and t and the mode: a server that states t = 0 where the
    invitation pins 1, or runs the other mode, is refused in one line before the corpus is read or anything is
    sent."""
    from committee_helpers import CommitteeServer
    from service_helpers import SecureSumServer

    (tmp_path / "mine.txt").write_text("waax wabx wacx\n")
    (tmp_path / "plain").mkdir()
    (tmp_path / "committee").mkdir()

    def submit(url, invitation, state):
        return run_dptopic("submit", "--server", url, "--corpus", str(tmp_path / "mine.txt"), "--invitation",
                           str(invitation), "--state", str(state), "--retries", "0")

    def edited(path, **changes):
        doc = json.loads(path.read_text())
        for k, v in changes.items():
            doc[k] = {**doc[k], **v} if isinstance(v, dict) else v
        out = tmp_path / f"edited-{len(list(tmp_path.glob('edited-*')))}.json"
        out.write_text(json.dumps(doc))
        out.chmod(0o600)        # as invite writes it (one readable by others is used with a warning)
        return out

    with SecureSumServer(tmp_path / "plain", WORDS, n=6, dropouts=1, collusion=0) as srv:
        pinned_t1 = edited(srv.invitation_files[0], layout={"collusion": 1})        # the operator planned t = 1
        r = submit(srv.url, pinned_t1, tmp_path / "s1.json")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "the server's plan differs from the one your invitation pins: collusion 0 (your invitation: 1)" \
            in r.stderr
        r = submit(srv.url, edited(srv.invitation_files[0], committee=True), tmp_path / "s2.json")
        assert r.returncode == 2 and "this is a round without a committee" in r.stderr, r.stderr
        assert srv.call("GET", "/v1/secure/round")[1]["state"] == "keys"
    with CommitteeServer(tmp_path / "committee", WORDS, n=4) as srv:
        r = submit(srv.url, edited(srv.invitation_files[0], committee=False), tmp_path / "s3.json")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "error: this is a committee round: the server runs round 'round1' with a committee of" in r.stderr
        assert not srv.round.keys        # nothing posted: the plain invitation read the configuration first
    assert not any((tmp_path / f"s{k}.json").exists() for k in (1, 2, 3))


def test_experiment_plays_a_round_over_http(tmp_path):
    from service_helpers import SecureSumServer

    write_people(tmp_path / "people.jsonl", 8)
    with SecureSumServer(tmp_path, WORDS, n=8, dropouts=2) as srv:
        r = run_dptopic("experiment", "secure-sum", "--server", srv.url, "--corpus", str(tmp_path / "people.jsonl"),
                        "--user-field", "author", "--dropout", "0.2", "--token-file", str(tmp_path / "token"),
                        "--invitations", str(tmp_path / "invitations"), "--out", str(tmp_path / "out"), "--seed", "1",
                        "--workers", "2", "--quiet")
        assert r.returncode == 0, r.stderr
        assert "released" in r.stdout and "outside the guarantee" in r.stdout
        assert "from 2 contributor process(es)" in r.stdout and "kB received" in r.stdout
        assert "server processes: 1," in r.stdout and "peak memory" in r.stdout
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["dropped"] == 2 and summary["state"] == "released" and summary["workers"] == 2
        r = run_dptopic("pull", "--server", srv.url, "--out", str(tmp_path / "pulled"))
        assert r.returncode == 0, r.stderr


def test_experiment_help_says_workers_apply_to_both_kinds_of_round():
    r = run_dptopic("experiment", "secure-sum", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "--workers" in text and "in a single round or a round in cohorts alike" in text, text


def test_experiment_refuses_a_bad_workers_count_in_its_flag(tmp_path):
    r = run_dptopic("experiment", "secure-sum", "--server", "http://127.0.0.1:9", "--corpus", "x.jsonl",
                    "--user-field", "author", "--invitations", "inv", "--out", str(tmp_path / "o"), "--workers", "0")
    assert r.returncode == 2 and "--workers" in r.stderr and "Traceback" not in r.stderr


def test_submit_needs_an_invitation_and_refuses_a_larger_epsilon(tmp_path):
    from service_helpers import SecureSumServer

    (tmp_path / "mine.txt").write_text("waax wabx wacx\n")
    with SecureSumServer(tmp_path, WORDS) as srv:
        r = run_dptopic("submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"))
        assert r.returncode == 2 and "--invitation" in r.stderr
        r = run_dptopic("submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--max-epsilon", "1",
                        "--invitation", str(srv.invitation_files[0]), "--state", str(tmp_path / "state.json"))
        assert r.returncode == 2 and "above your --max-epsilon" in r.stderr
    assert not (tmp_path / "state.json").exists()


def test_recommend_user_names_the_secure_sum_for_many_people():
    many = run_dptopic("recommend", "--unit", "user", "--epsilon", "1", "--docs", "5000")
    few = run_dptopic("recommend", "--unit", "user", "--epsilon", "1", "--docs", "300")
    assert "--report-kind secure-sum" in many.stdout and "same guarantee without one" in many.stdout
    assert "needs thousands of people" in few.stdout


def _count_requests(monkeypatch) -> list:
    """Every request the test's own thread makes through ServiceClient, as ``"METHOD /path"``, appended as made."""
    import threading

    from dptopic.contributor.client import ServiceClient

    sent, send = [], ServiceClient.request

    def counted(self, method, path, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            sent.append(f"{method} {path.split('?')[0]}")
        return send(self, method, path, *args, **kwargs)
    monkeypatch.setattr(ServiceClient, "request", counted)
    return sent


def test_submit_takes_part_and_a_rerun_sends_nothing_new(tmp_path, monkeypatch):
    import threading

    import numpy as np

    from dptopic.contributor.secure_sum.client import take_part
    from service_helpers import SecureSumServer

    sent = _count_requests(monkeypatch)

    (tmp_path / "mine.txt").write_text("waax wabx wacx wadx\nwaax wafx wagx\n")
    with SecureSumServer(tmp_path, WORDS, n=3, dropouts=0) as srv:
        def other(k):
            rng = np.random.default_rng(k)
            ids = np.unique(rng.integers(0, 30, 8))
            take_part(srv.url, (np.array([0, len(ids)]), ids, np.ones(len(ids), np.int64)),
                      srv.invitation_files[k], poll=0.05, timeout=60)

        threads = [threading.Thread(target=other, args=(k,)) for k in (1, 2)]
        for t in threads:
            t.start()
        state = tmp_path / "state.json"
        r = run_dptopic("submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--state", str(state),
                        "--invitation", str(srv.invitation_files[0]))
        for t in threads:
            t.join(60)
        assert r.returncode == 0, r.stderr
        assert "took part in the secure sum" in r.stdout and "upload0" in r.stdout and "wiped" in r.stdout
        assert srv.wait_state("released", "failed")["state"] == "released"    # released off the request's thread
        # an invitation that does not say "committee" reads the configuration first: no probe of the committee mode
        assert sent[0] == "GET /v1/config" and not any("prekeys" in x for x in sent), sent
        again = run_dptopic("submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--state",
                            str(state), "--invitation", str(srv.invitation_files[0]))
        assert again.returncode == 0, again.stderr
        assert "nothing new sent" in again.stdout and "round is over" in again.stdout


# ----------------------------------------------------------------------------- rounds in cohorts
@pytest.fixture
def cohorts_invited(tmp_path):
    return invite(tmp_path, 24, "--cohort-size", "12", "--dropout-tolerance", "0", "--collusion", "1")


def serve_cohorts(tmp_path, *extra):
    """``dptopic serve`` of the round in cohorts ``cohorts_invited`` wrote."""
    return serve(tmp_path, *extra, epsilon=8)


def test_invite_with_a_cohort_size_seats_each_person_in_a_cohort_and_each_delegate_in_the_bridge(cohorts_invited):
    files = sorted((cohorts_invited / "inv").glob("invitation-*.json"))
    docs = [json.loads(f.read_text()) for f in files]
    assert len(files) == 24 and stat.S_IMODE(os.stat(files[0]).st_mode) == 0o600
    assert sorted({d["round_id"] for d in docs}) == ["spring-c0", "spring-c1"]
    assert sum("bridge" in d for d in docs) == 4 and all(d["count"] == 12 for d in docs)
    d = json.loads((cohorts_invited / "inv" / "directory.json").read_text())
    assert [len(c["members"]) for c in d["cohorts"]] == [12, 12] and len(d["bridge"]["members"]) == 4
    assert "private" not in json.dumps(d) and "signing_key" not in json.dumps(d)


@pytest.mark.parametrize("flags, why", [
    (("--cohort-size", "2"), "--cohort-size"),
    (("--cohort-size", "24"), "--cohort-size 24 holds the whole round of 24"),
    (("--cohort-size", "12", "--dropout-tolerance", "24"), "--dropout-tolerance 24 must lie in [0, 24)"),
    (("--dropout-tolerance", "24"), "--dropout-tolerance 24 must lie in [0, 24)"),
    (("--dropout-tolerance", "10", "--collusion", "10"), "no neighbour graph survives"),
    (("--collusion", "23"), "--collusion 23 with 24 contributors leave no honest noise share"),
])
def test_invite_refuses_a_bad_round_setting_in_one_line(tmp_path, flags, why):
    r = run_dptopic("secure-sum", "invite", "--key", str(tmp_path / "k"), "--count", "24", "--out",
                    str(tmp_path / "inv"), *flags)
    assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_cohort_size_is_in_the_help_of_serve_and_invite_only():
    serve_help = run_dptopic("serve", "--help").stdout
    assert "--cohort-size S" in serve_help and "--report-kind secure-sum: a round in cohorts" in " ".join(
        serve_help.split())
    assert "--cohort-size" in run_dptopic("secure-sum", "invite", "--help").stdout
    assert "--cohort-size" not in run_dptopic("submit", "--help").stdout


@pytest.mark.parametrize("flags, why", [
    (("--cohort-size", "2"), "--cohort-size"),
    ((), "give --cohort-size S"),
    (("--cohort-size", "8"), "--cohort-size 8 differs from the invitations' cohort size 12"),
    (("--cohort-size", "12", "--collusion", "2"), "layout of the round: collusion 1 in the invitations, 2 in the plan"),
    (("--cohort-size", "12", "--database", "postgresql+psycopg://u@localhost/x"), "--database"),
])
def test_serve_refuses_a_bad_round_in_cohorts_in_one_line(cohorts_invited, flags, why):
    r = serve_cohorts(cohorts_invited, *flags)
    assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_cohort_size_is_refused_with_a_single_rounds_directory_and_for_other_kinds(invited):
    r = serve(invited, "--cohort-size", "50")
    assert r.returncode == 2 and "is not one" in r.stderr and "invite --cohort-size" in r.stderr, r.stderr
    r = run_dptopic("serve", "--epsilon-word", "2", "--vocabulary", str(invited / "v.txt"), "--cohort-size", "10",
                    "--database", f"sqlite:///{invited}/db2")
    assert r.returncode == 2 and "--cohort-size is for --report-kind secure-sum" in r.stderr


def served_app(monkeypatch) -> dict:
    """Stand in for uvicorn: ``dptopic serve`` builds its app, which is kept here, and returns at once."""
    from dptopic.service import startup

    got: dict = {}

    def run_server(app, *args, **kw):
        got["app"] = app
        return True
    monkeypatch.setattr(startup, "run_server", run_server)
    return got


def test_serve_a_single_secure_sum_round_takes_the_dataset_ledger(invited, monkeypatch):
    from service_helpers import free_port

    got = served_app(monkeypatch)
    r = serve(invited, "--ledger", str(invited / "people.ledger"), "--dataset", "clinic", "--port", str(free_port()))
    assert r.returncode == 0, r.stderr
    cfg = got["app"].state.round.cfg
    assert cfg.ledger.endswith("people.ledger") and cfg.ledger_dataset == "clinic"


def test_serve_takes_the_plans_cap_on_the_words_of_the_second_sum(invited, monkeypatch):
    from service_helpers import free_port

    got = served_app(monkeypatch)
    r = serve(invited, "--max-words", "12", "--topics", "3", "--port", str(free_port()))
    assert r.returncode == 0, r.stderr
    plan = got["app"].state.round.cfg.plan
    assert plan.max_words == 12 and plan.max_kept_words == 12 and plan.to_dict()["max_words"] == 12
    r = run_dptopic("serve", "--epsilon-word", "2", "--vocabulary", str(invited / "v.txt"), "--max-words", "10",
                    "--database", f"sqlite:///{invited}/db2")
    assert r.returncode == 2 and "--max-words is for --report-kind secure-sum" in r.stderr


def test_serve_a_round_in_cohorts_takes_the_plans_cap_on_the_words(cohorts_invited, monkeypatch):
    from service_helpers import free_port

    got = served_app(monkeypatch)
    r = serve_cohorts(cohorts_invited, "--cohort-size", "12", "--max-words", "12", "--topics", "3", "--port",
                      str(free_port()))
    assert r.returncode == 0, r.stderr
    assert got["app"].state.cohort_server.cfg.plan.round_plan.max_words == 12
    r = serve_cohorts(cohorts_invited, "--cohort-size", "12", "--max-words", "4", "--topics", "5", "--port",
                      str(free_port()))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--topics 5 must be at most --max-words 4" in r.stderr, r.stderr


def test_serve_a_round_in_cohorts_takes_the_dataset_ledger_of_a_single_round(cohorts_invited, monkeypatch):
    from service_helpers import free_port

    got = served_app(monkeypatch)
    r = serve_cohorts(cohorts_invited, "--cohort-size", "12", "--ledger", str(cohorts_invited / "people.ledger"),
                      "--dataset", "clinic", "--port", str(free_port()))
    assert r.returncode == 0, r.stderr
    server = got["app"].state.cohort_server
    assert server.cfg.ledger.endswith("people.ledger") and server.cfg.ledger_dataset == "clinic"
    assert server.coordinator.ledger == server.cfg.ledger and not server.rounds[0].charged.is_set()
    r = serve_cohorts(cohorts_invited, "--cohort-size", "12", "--dataset", "clinic")
    assert r.returncode == 2 and "add --ledger PATH" in r.stderr, r.stderr


@pytest.mark.service
def test_experiment_plays_a_round_in_cohorts_with_dropouts_over_http(tmp_path):
    from cohort_helpers import LiveCohortRound

    write_people(tmp_path / "people.jsonl", 24)
    write_token(tmp_path / "token", LiveCohortRound.TOKEN)
    # 24 people in two cohorts of 12, each tolerating 4 dropouts (the invitations expect 1)
    with LiveCohortRound(tmp_path / "round", 24, 12, dropouts=1, words=WORDS) as live:
        args = ["experiment", "secure-sum", "--server", live.url, "--corpus", str(tmp_path / "people.jsonl"),
                "--user-field", "author", "--invitations", str(tmp_path / "round" / "inv"), "--out",
                str(tmp_path / "out"), "--quiet", "--seed", "2"]
        r = run_dptopic(*args, "--dropout", "0.4", "--token-file", str(tmp_path / "token"))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "--dropout 0.4 drops 10 of 24 people, more than the round's plan tolerates (8:" in r.stderr
        assert "give --dropout 0.333 or less" in r.stderr
        r = run_dptopic(*args, "--dropout", "0.25")
        assert r.returncode == 2 and "give the server's admin --token-file" in r.stderr, r.stderr
        assert live.server.view()["state"] == "keys"        # refused before anyone played
        r = run_dptopic(*args, "--dropout", "0.25", "--token-file", str(tmp_path / "token"), "--workers", "2")
        assert r.returncode == 0, r.stderr
        line = " ".join(r.stdout.split())
        assert "24 people in 2 cohorts (10 delegates" in line and "released in" in line, line
        # --workers applies to a round in cohorts too: the people played from that many processes, with the costs
        assert "from 2 contributor process(es)" in line and "kB received" in line, line
        assert "ms of CPU per contributor" in line and "server processes: 1," in line and "peak memory" in line
        assert "6 dropped after masking (2, 4 by cohort, each cohort's tolerance 4; 3 delegates among them)" in line
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["state"] == "released" and summary["refused"] == 0 and summary["cohorts"] == 2
        assert summary["dropped"] == 6 and summary["dropped_by_cohort"] == [2, 4] and summary["workers"] == 2
        assert summary["bytes_per_contributor"] > 0 and summary["server_process"]["peak_rss_bytes"] > 0
        assert live.server.view()["state"] == "released"


def test_serve_a_committee_round_in_its_database_with_a_ledger_and_refuse_it_in_cohorts(tmp_path, monkeypatch):
    from service_helpers import free_port

    invited = invite(tmp_path, 100, "--committee")
    got = served_app(monkeypatch)
    r = serve(invited, "--secure-committee", "auto", "--topics", "3", "--ledger", str(invited / "l"), "--dataset", "d",
              "--port", str(free_port()))
    assert r.returncode == 0, r.stderr      # the round charged to the ledger before its first unmasking
    rnd = got["app"].state.served.rnd
    assert rnd.ledger.endswith("l") and rnd.ledger_dataset == "d"
    rnd.dispose()
    r = serve(invited, "--secure-committee", "auto", "--topics", "3", "--port", str(free_port()))
    assert r.returncode == 0, r.stderr
    rnd = got["app"].state.served.rnd
    assert rnd.database == f"sqlite:///{invited}/db" and f"in sqlite:///{invited}/db" in r.stderr
    rnd.dispose()
    plan = rnd.plan
    assert plan.committee > 0 and plan.to_dict()["committee"] == plan.committee
    assert f"committee of {plan.committee}" in r.stderr
    r = serve(invited, "--secure-committee", "1")
    assert r.returncode == 2 and "--secure-committee" in r.stderr and "collusion" in r.stderr
    r = serve(invited, "--secure-committee", "auto", "--cohort-size", "40")     # a single round's directory
    assert r.returncode == 2 and "is not one" in r.stderr and "invite --cohort-size" in r.stderr, r.stderr
    r = run_dptopic("serve", "--epsilon-word", "2", "--vocabulary", str(invited / "v.txt"), "--secure-committee",
                    "auto", "--database", f"sqlite:///{invited}/db2")
    assert r.returncode == 2 and "--secure-committee is for --report-kind secure-sum" in r.stderr


def test_submit_takes_part_in_a_committee_round_in_four_requests_the_configuration_first(tmp_path, monkeypatch):
    """The configuration first (its epsilon checked against --max-epsilon, the documents read, before any key is
    sent), then the committee mode's 3 requests."""
    import threading

    import numpy as np

    from committee_helpers import CommitteeServer
    from dptopic.contributor.secure_sum.client import REQUESTS_COMMITTEE, take_part_committee

    sent = _count_requests(monkeypatch)

    (tmp_path / "mine.txt").write_text("waax wabx wacx wadx\nwaax wafx wagx\n")
    with CommitteeServer(tmp_path, WORDS, n=4) as srv:
        def other(k):
            rng = np.random.default_rng(k)
            ids = np.unique(rng.integers(0, 30, 8))
            take_part_committee(srv.url, (np.array([0, len(ids)]), ids, np.ones(len(ids), np.int64)),
                                srv.invitation_files[k], tmp_path / f"s{k}.json", timeout=60)

        threads = [threading.Thread(target=other, args=(k,)) for k in (1, 2, 3)]
        for t in threads:
            t.start()
        r = run_dptopic("submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--state",
                        str(tmp_path / "state.json"), "--invitation", str(srv.invitation_files[0]))
        for t in threads:
            t.join(60)
        assert r.returncode == 0, r.stderr
        assert "took part in the secure sum" in r.stdout and "upload0" in r.stdout and "wiped" in r.stdout
        assert srv.round.state == "released"
        from dptopic.protocol.secure_sum.enrollment import read_invitation

        if read_invitation(srv.invitation_files[0])["contributor"] not in srv.round.committee:
            assert sent == ["GET /v1/config", *REQUESTS_COMMITTEE]
        else:
            assert sent[:2] == ["GET /v1/config", "POST /v1/secure/prekeys"] and len(sent) == 8


@pytest.mark.service
def test_experiment_plays_a_round_in_committee_cohorts_with_dropouts_over_http(tmp_path):
    from cohort_helpers import LiveCohortRound

    write_people(tmp_path / "people.jsonl", 40)
    write_token(tmp_path / "token", LiveCohortRound.TOKEN)
    with LiveCohortRound(tmp_path / "round", 40, 20, dropouts=4, words=WORDS, committee="auto") as live:
        r = run_dptopic("experiment", "secure-sum", "--server", live.url, "--corpus", str(tmp_path / "people.jsonl"),
                        "--user-field", "author", "--invitations", str(tmp_path / "round" / "inv"), "--out",
                        str(tmp_path / "out"), "--quiet", "--seed", "2", "--dropout", "0.1", "--token-file",
                        str(tmp_path / "token"), "--workers", "2")
        assert r.returncode == 0, r.stderr
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["state"] == "released" and summary["refused"] == 0 and summary["dropped"] == 4, summary
        assert live.server.view()["state"] == "released"
        assert any(r.uploaded[0] != sorted(r.keys) for r in live.server.rounds)     # the four left after masking


@pytest.mark.service
def test_submit_takes_part_in_a_committee_cohort_in_four_requests_the_configuration_first(tmp_path, monkeypatch):
    import threading

    from cohort_helpers import LiveCohortRound, play_all, tiny_bows
    from dptopic.contributor.client import ServiceClient
    from dptopic.contributor.secure_sum.client import REQUESTS_COMMITTEE
    from dptopic.protocol.secure_sum.committee import committee_of

    sent = []
    request = ServiceClient.request

    def counted(self, method, path, *a, **k):
        if threading.current_thread() is threading.main_thread():
            sent.append(f"{method} {path.split('?')[0]}")
        return request(self, method, path, *a, **k)
    monkeypatch.setattr(ServiceClient, "request", counted)
    with LiveCohortRound(tmp_path / "round", 40, 20, dropouts=0, words=WORDS, committee="auto") as live:
        files = live.files
        ids = [json.loads(f.read_text())["contributor"] for f in files]
        on = {m for c, (g, p) in enumerate(zip(live.server.groups, live.plan.cohort_plans))
              for m in committee_of(g, f"round1-c{c}", p.committee) + live.plan.delegates(g, "round1", c)}
        me = next(i for i, who in enumerate(ids) if who not in on)
        out: list = []
        others = threading.Thread(target=lambda: out.extend(play_all(live.url, files, tiny_bows(40, 0, len(WORDS)),
                                                                     tmp_path, skip={me})))
        others.start()
        (tmp_path / "mine.txt").write_text(f"{WORDS[1]} {WORDS[2]} {WORDS[3]}\n{WORDS[2]} {WORDS[4]}\n")
        r = run_dptopic("submit", "--server", live.url, "--corpus", str(tmp_path / "mine.txt"), "--format", "text",
                        "--invitation", str(files[me]), "--state", str(tmp_path / "mine.json"))
        others.join(120)
        assert r.returncode == 0, r.stderr
        assert "cohort " in r.stdout
        assert sent == ["GET /v1/config", *REQUESTS_COMMITTEE], sent
        assert live.server.view()["state"] == "released"


def test_experiment_plays_a_committee_round_over_http(tmp_path):
    from committee_helpers import CommitteeServer

    write_people(tmp_path / "people.jsonl", 8)
    write_token(tmp_path / "token", "t" * 24)
    with CommitteeServer(tmp_path, WORDS, n=8, dropouts=2) as srv:
        r = run_dptopic("experiment", "secure-sum", "--server", srv.url, "--corpus", str(tmp_path / "people.jsonl"),
                        "--user-field", "author", "--dropout", "0.2", "--token-file", str(tmp_path / "token"),
                        "--invitations", str(tmp_path / "inv"), "--out", str(tmp_path / "out"), "--seed", "1",
                        "--workers", "2", "--quiet")
        assert r.returncode == 0, r.stderr
        assert "released" in r.stdout and "server processes: 1," in r.stdout
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["dropped"] == 2 and summary["committee"] == srv.plan.committee
        assert srv.round.uploaded[0] != sorted(srv.round.keys)      # the two left after masking


def test_invite_committee_writes_invitations_that_say_so_and_with_cohorts_each_cohorts(tmp_path):
    from dptopic.protocol.secure_sum.cohort_enrollment import read_cohort_invitation
    from dptopic.protocol.secure_sum.enrollment import read_invitation

    r = run_dptopic("secure-sum", "invite", "--key", str(tmp_path / "k"), "--count", "3", "--out",
                    str(tmp_path / "inv"), "--committee", "--collusion", "0")
    assert r.returncode == 0, r.stderr
    assert "--secure-committee auto" in r.stdout
    assert all(read_invitation(f)["committee"] for f in (tmp_path / "inv").glob("invitation-*.json"))
    r = run_dptopic("secure-sum", "invite", "--key", str(tmp_path / "k"), "--count", "40", "--out",
                    str(tmp_path / "inv2"), "--committee", "--cohort-size", "20", "--collusion", "1")
    assert r.returncode == 0, r.stderr
    assert "--cohort-size 20 --secure-committee auto" in r.stdout and "2 cohorts" in r.stdout
    invitations = [read_cohort_invitation(f) for f in (tmp_path / "inv2").glob("invitation-*.json")]
    assert len(invitations) == 40 and all(i["committee"] and i["cohorts"] is not None for i in invitations)


def test_serve_a_round_in_cohorts_with_a_committee_in_each(tmp_path, monkeypatch):
    from service_helpers import free_port

    invite(tmp_path, 40, "--cohort-size", "20", "--collusion", "1", "--committee")
    got = served_app(monkeypatch)
    r = serve(tmp_path, "--cohort-size", "20", "--secure-committee", "auto", "--port", str(free_port()), epsilon=8)
    assert r.returncode == 0, r.stderr
    server = got["app"].state.cohort_server
    assert server.plan.committee == "auto" and all(p.committee for p in server.plan.cohort_plans)
    assert "each cohort a committee-mode round (committees of 18-18" in r.stderr
    assert "committee-mode round" in server.plan.trust_model()
    r = serve(tmp_path, "--cohort-size", "20", "--secure-committee", "auto", "--ledger", str(tmp_path / "l"),
              "--dataset", "d", "--database", f"sqlite:///{tmp_path}/db2", "--port", str(free_port()), epsilon=8)
    assert r.returncode == 0 and "charged to the dataset ledger" in r.stderr, r.stderr
    server = got["app"].state.cohort_server     # each cohort's unmasking waits for the coordinator's one debit
    assert server.coordinator.ledger and not any(rnd.charged.is_set() for rnd in server.rounds)
    r = serve(tmp_path, "--cohort-size", "20", "--secure-committee", "3", epsilon=8)
    assert r.returncode == 2 and "--cohort-size 20: cohort 0 of 20" in r.stderr, r.stderr


# ----------------------------------------------------------------------------- the round's files
def test_a_key_directory_or_invitation_that_is_not_json_is_one_line_naming_the_file(invited):
    """``invite --key``, ``serve --directory`` and ``submit --invitation`` given a file that is not JSON (or a folder)
    answer one line naming it; ``submit`` says so before it sends a request (no server runs here)."""
    from helpers import one_line_error

    (invited / "junk.json").write_text("<html>not JSON</html>\n")
    junk = str(invited / "junk.json")
    r = run_dptopic("secure-sum", "invite", "--key", junk, "--count", "3", "--out", str(invited / "x"), "--collusion",
                    "0")
    one_line_error(r, "the enrollment key", junk, "not JSON")
    assert not (invited / "x").exists()
    one_line_error(serve(invited, "--directory", junk), "the directory", junk, "not JSON")
    for bad in (junk, str(invited / "inv")):
        r = run_dptopic("submit", "--server", "http://127.0.0.1:9", "--corpus", junk, "--invitation", bad,
                        "--retries", "0")
        one_line_error(r, "the invitation", bad)
        assert "127.0.0.1:9" not in r.stderr


def test_invite_into_a_folder_it_cannot_write_is_one_line_naming_out_and_the_folder(tmp_path, monkeypatch):
    """``invite --out`` under a folder this user may not write is one line naming --out, the folder and what to do
    (not "error: PermissionError: ..."), found before the enrollment key is made."""
    from dptopic.protocol.secure_sum import enrollment
    from helpers import one_line_error

    ro, access = tmp_path / "ro", os.access
    ro.mkdir()
    monkeypatch.setattr(enrollment.os, "access", lambda p, mode: False if str(p) == str(ro) else access(p, mode))
    r = run_dptopic("secure-sum", "invite", "--key", str(tmp_path / "enroll.key"), "--count", "3", "--out",
                    str(ro / "inv"), "--collusion", "0")
    one_line_error(r, f"cannot write --out {ro / 'inv'}", f"the folder {ro} is read-only", f"chmod u+w {ro}")
    assert "PermissionError" not in r.stderr and not (tmp_path / "enroll.key").exists()


def test_an_enrollment_key_readable_by_others_is_used_with_a_warning_naming_chmod(invited):
    """The enrollment key readable by other users: invite still writes the invitations, with one warning line naming
    the key and ``chmod 600``."""
    key = invited / "enroll.key"
    os.chmod(key, 0o644)
    r = run_dptopic("secure-sum", "invite", "--key", str(key), "--count", "3", "--out", str(invited / "again"),
                    "--collusion", "0")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [f"warning: the enrollment key {key} is readable by other users (mode 0644) and"
                                     " holds the key that enrolls the round's contributors: make it yours only with"
                                     f" chmod 600 {key}."]


# ----------------------------------------------------------------------------- submit: retries and local limits
def test_submit_with_an_invitation_retries_its_first_request_as_every_other(invited):
    """``submit --retries N --invitation`` retries the first ``GET /v1/config`` N times, as every request of a
    round (a server that is starting answers 503 for a while), and then says how many attempts failed."""
    from service_helpers import StubServer

    (invited / "mine.txt").write_text("word01 word02\n")
    seen = []

    def starting(request):
        seen.append(f"{request.command} {request.path}")
        return 503, {"error": {"code": "starting", "message": "the server is starting."}}
    with StubServer(starting) as stub:
        r = run_dptopic("submit", "--server", stub.url, "--corpus", str(invited / "mine.txt"), "--invitation",
                        str(invited / "inv" / "invitation-0001.json"), "--state", str(invited / "s.json"),
                        "--retries", "2")
    assert r.returncode == 2 and "failed after 3 attempts" in r.stderr, r.stderr
    assert seen == ["GET /v1/config"] * 3


def test_submit_refuses_state_none_with_an_invitation_before_any_request(invited):
    """``submit --state none --invitation`` is refused before any request: a run stopped after registering its keys
    could never finish without the state file, and the invitation (one key set) would be spent."""
    from helpers import one_line_error
    from service_helpers import StubServer

    (invited / "mine.txt").write_text("word01 word02\n")
    with StubServer(lambda request: (500, {})) as stub:
        r = run_dptopic("submit", "--server", stub.url, "--corpus", str(invited / "mine.txt"), "--invitation",
                        str(invited / "inv" / "invitation-0001.json"), "--state", "none", "--retries", "0")
        assert stub.connections == []
    one_line_error(r, "--state none", "invitation", "--state FILE")


def test_submit_to_a_committee_round_checks_max_epsilon_and_the_documents_before_its_keys(tmp_path, monkeypatch):
    """With an invitation to a committee round, ``submit`` checks the server's epsilon against ``--max-epsilon`` and
    reads the documents before its keys go out: a refusal registers nothing, so the round does not count the person
    among its registered contributors (a dropout to come), and no state file is begun."""
    from committee_helpers import CommitteeServer
    from helpers import one_line_error

    sent = _count_requests(monkeypatch)
    (tmp_path / "mine.txt").write_text("waax wabx wacx\n")
    with CommitteeServer(tmp_path, WORDS, n=4) as srv:
        base = ["submit", "--server", srv.url, "--invitation", str(srv.invitation_files[0]), "--state",
                str(tmp_path / "state.json")]
        r = run_dptopic(*base, "--corpus", str(tmp_path / "mine.txt"), "--max-epsilon", "1")
        one_line_error(r, "above your --max-epsilon 1")
        r = run_dptopic(*base, "--corpus", str(tmp_path / "missing.txt"))
        assert r.returncode == 2 and "missing.txt" in r.stderr, r.stderr
        assert srv.round.keys == {} and srv.round.state == "keys"
    assert sent == ["GET /v1/config"] * 2 and not (tmp_path / "state.json").exists()


# ----------------------------------------------------------------------------- no-shows
def test_serve_says_what_a_no_show_does_and_takes_a_registration_deadline(invited, monkeypatch):
    """At start the server says when its roster closes and that a contributor who never registers is one of the F
    dropouts (and, with neither a deadline nor an admin token, that one no-show holds the round); with
    ``--registration-deadline`` the roster closes that many seconds after the round first opened, in a single round
    and in a committee round; a bad value or a round in cohorts is refused in one line."""
    from service_helpers import free_port

    got = served_app(monkeypatch)
    r = serve(invited, "--port", str(free_port()))
    assert r.returncode == 0, r.stderr
    assert ("roster: it closes once all 100 invited contributors have registered; a contributor who never registers"
            " is one of the 10 dropouts the plan tolerates: without a registration deadline or an admin token, one"
            " no-show holds the round at its keys step.") in r.stderr
    write_token(invited / "token", "t" * 32)
    r = serve(invited, "--port", str(free_port()), "--registration-deadline", "3600", "--token-file",
              str(invited / "token"), "--database", f"sqlite:///{invited}/db2")
    assert r.returncode == 0, r.stderr
    rnd = got["app"].state.round
    assert rnd.cfg.registration_s == 3600 and abs(rnd.registration_deadline - time.time() - 3600) < 60
    assert "at its registration deadline (" in r.stderr and "when the admin closes it" in r.stderr
    assert "with those registered so far: at least 90 (N - F)" in r.stderr
    (invited / "committee").mkdir()
    committee = invite(invited / "committee", 100, "--committee")       # the mode its directory names
    r = serve(committee, "--port", str(free_port()), "--registration-deadline", "60", "--secure-committee", "auto",
              "--database", f"sqlite:///{invited}/db3")
    assert r.returncode == 0, r.stderr
    assert got["app"].state.served.rnd.registration_s == 60 and "up to 10 dropping out" in r.stderr
    assert "at its registration deadline (" in r.stderr
    for bad in ("0", "-5", "nan", "soon"):
        r = serve(invited, "--registration-deadline", bad)
        assert r.returncode == 2 and "--registration-deadline" in r.stderr, r.stderr


# ----------------------------------------------------------------------------- invite --ids: the people of a round
PEOPLE = [f"dev{i}@example.org" for i in range(6)]


def _ids(tmp_path, lines, name="ids.txt", encoding="utf-8"):
    (tmp_path / name).write_bytes(("\n".join(lines) + "\n").encode(encoding))
    return tmp_path / name


def test_invite_with_ids_names_each_person_in_their_invitation_and_no_one_in_the_directory(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(f"word{i:02d}" for i in range(30)))
    r = run_dptopic("secure-sum", "invite", "--key", tmp_path / "k", "--out", tmp_path / "inv", "--ids",
                    _ids(tmp_path, PEOPLE), "--ledger", tmp_path / "l.sqlite", "--collusion", "1", "--round-id", "r1")
    assert r.returncode == 0, r.stderr
    assert "6 invitations" in r.stdout and f"serve with --ledger {tmp_path / 'l.sqlite'}" in " ".join(r.stdout.split())
    people = [json.loads(f.read_text())["person"] for f in sorted((tmp_path / "inv").glob("invitation-*.json"))]
    assert sorted(people) == sorted(PEOPLE)
    assert not any(p in (tmp_path / "inv" / "directory.json").read_text() for p in PEOPLE)


@pytest.mark.parametrize("flags, says", [
    (("--ids", "dup.txt"), "lines 2 and 6 name one person"),
    (("--ids", "ids.txt", "--count", "7"), "--ids names 6 people and --count 7"),
    (("--ids", "ids.txt", "--count", "5"), "--ids names 6 people and --count 5"),
    (("--ids", "gap.txt"), "the id on line 3 is empty"),
    (("--ids", "latin1.txt"), "not UTF-8 text"),
    (("--ids", "none.txt"), "cannot read the ids file"),
    (("--ids", "."), "it is a folder"),
    (("--ids", "ids.txt", "--user-field", "author"), "no column 'author'"),
    (("--count", "6", "--user-field", "author"), "--user-field is read with --ids FILE"),
    (("--count", "6", "--ledger", "l.sqlite"), "--ledger is read with --ids FILE"),
    ((), "needs --count N"),
])
def test_invite_with_bad_ids_is_one_line_and_writes_nothing(tmp_path, flags, says):
    from helpers import one_line_error

    _ids(tmp_path, PEOPLE)
    _ids(tmp_path, PEOPLE[:5] + [PEOPLE[1].upper()], "dup.txt")
    _ids(tmp_path, PEOPLE[:2] + [""] + PEOPLE[2:], "gap.txt")
    _ids(tmp_path, ["d\u00e9v@example.org"] + PEOPLE, "latin1.txt", "latin-1")
    before = sorted(p.name for p in tmp_path.iterdir())
    flags = [str(tmp_path / f) if f.endswith((".txt", ".sqlite")) or f == "." else f for f in flags]
    r = run_dptopic("secure-sum", "invite", "--key", tmp_path / "k", "--out", tmp_path / "inv", "--collusion", "1",
                    *(flags if "--ledger" in flags or "--ids" not in flags else [*flags, "--ledger",
                                                                                  str(tmp_path / "l.sqlite")]))
    one_line_error(r, says)
    assert sorted(p.name for p in tmp_path.iterdir()) == before     # no key, no invitations, no ledger


def test_serve_refuses_invitations_naming_people_without_their_ledger(tmp_path):
    from helpers import one_line_error

    (tmp_path / "v.txt").write_text("\n".join(f"word{i:02d}" for i in range(30)))
    r = run_dptopic("secure-sum", "invite", "--key", tmp_path / "k", "--out", tmp_path / "inv", "--ids",
                    _ids(tmp_path, PEOPLE), "--ledger", tmp_path / "l.sqlite", "--collusion", "1")
    assert r.returncode == 0, r.stderr
    one_line_error(serve(tmp_path, "--collusion", "1"), "--directory", "give --ledger, the ledger they were written")
    one_line_error(serve(tmp_path, "--collusion", "1", "--ledger", str(tmp_path / "other.sqlite")), "--directory",
                   "did not make for this round")
