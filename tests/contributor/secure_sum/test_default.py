"""``dptopic.contributor.secure_sum.default`` and its parts (``checks``, ``state``, ``masks``, ``person_statistics``):
what a contributor checks of a server's configuration, directory and roster, its state file, and what it does with
one neighbour's undecryptable shares."""
import json

import numpy as np
import pytest

from dptopic.contributor.secure_sum.checks import ServerLied
from dptopic.contributor.secure_sum.client import state_path
from dptopic.contributor.secure_sum.default import SecureContributor, check_config
from dptopic.contributor.secure_sum.state import state_file_name
from dptopic.errors import DPTopicError
from service_helpers import InProcessRound, record_noise_draws

pytest.importorskip("cryptography")
pytest.importorskip("starlette")


@pytest.fixture
def rnd(tmp_path):
    return InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)


def test_a_malformed_configuration_is_refused_in_one_line_before_anything_is_sent(rnd, tmp_path):
    good = rnd.config_doc()
    bad = [None, [], {**good, "report_kind": "word"}, {k: v for k, v in good.items() if k != "secure_sum"},
           {**good, "secure_sum": []}, {**good, "secure_sum": {**good["secure_sum"], "epsilon": "1"}},
           {**good, "secure_sum": {**good["secure_sum"], "epsilon": None}}, {**good, "epsilon": 1.0},
           {**good, "vocabulary": good["vocabulary"][:-1]}, {**good, "vocab_size": 31},
           {**good, "round_id": "../../etc"}, {**good, "n_topics": "3"},
           {k: v for k, v in good.items() if k != "directory"}]
    for cfg in bad:
        with pytest.raises(DPTopicError) as e:
            SecureContributor(cfg, rnd.bows[0], rnd.invitations[0], state=tmp_path / "never.json")
        assert "\n" not in str(e.value)
    assert not (tmp_path / "never.json").exists()
    assert check_config(good)["round_id"] == "round1"


def test_a_directory_or_round_not_the_invitations_is_refused(rnd, tmp_path):
    other = InProcessRound(tmp_path / "other", n=10, dropouts=2, collusion=1)
    with pytest.raises(ServerLied, match="another enrollment key"):
        SecureContributor({**rnd.config_doc(), "directory": other.directory}, rnd.bows[0], rnd.invitations[0])
    with pytest.raises(ServerLied, match="your invitation is for round"):
        SecureContributor({**rnd.config_doc(), "round_id": "round2"}, rnd.bows[0], rnd.invitations[0])
    small = dict(rnd.invitations[0], count=9)
    with pytest.raises(ServerLied, match="round of 9"):
        SecureContributor(rnd.config_doc(), rnd.bows[0], small)


def test_one_undecryptable_share_is_dropped_alone(rnd):
    rnd.keys()
    rnd.shares()
    view = rnd.server.view()
    c = rnd.people[0]
    body, sig = c.upload(0, view)
    shares = rnd.server.post_upload(0, c.me, body, sig)[1]["shares"]
    sender = next(iter(shares))
    shares[sender] = shares[sender][:-4] + ("0000" if shares[sender][-4:] != "0000" else "1111")
    shares["9999"] = "00" * 40          # and one from no neighbour: ignored
    c.take_shares(shares)
    assert sender not in c.held and len(c.held) == len(c.graph[c.me]) - 1
    assert c.summary()["undecryptable_shares"] == 1


def test_a_person_with_no_vocabulary_word_takes_part_with_a_note(tmp_path):
    empty = (np.array([0, 0]), np.zeros(0, np.int64), np.zeros(0, np.int64))
    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    c = SecureContributor(rnd.config_doc(), empty, rnd.invitations[0])
    assert c.summary()["no_vocabulary_word"] is True
    from dptopic.cli.submit import secure_sum_lines

    lines = secure_sum_lines({**c.summary(), "steps": ["upload0"], "state": None})
    assert any("hold none of the round's words" in line for line in lines)


def test_the_state_file_holds_the_accepted_plan_and_loses_its_secrets_at_the_end(rnd):
    c = rnd.people[0]
    st = json.loads(c.path.read_text())
    assert st["plan"] == rnd.plan.to_dict() and st["secrets"] is not None
    c.finish("released")
    st = json.loads(c.path.read_text())
    assert st["secrets"] is None and st["finished"] == "released"
    again = SecureContributor(rnd.config_doc(), c.bow, rnd.invitations[0], state=c.path)
    assert again.finished == "released"
    with pytest.raises(DPTopicError, match="round is over for you"):
        again.registration()


def test_the_state_files_name_comes_from_the_invitation_never_from_the_server(rnd, tmp_path):
    inv = rnd.invitations[0]
    assert state_path(str(tmp_path), inv) == tmp_path / "secure-sum-round1-0001.json"
    assert state_path("none", inv) is None
    for rid in ("x/../../../config/settings", "..", "a b", ""):
        with pytest.raises(DPTopicError):
            state_file_name(rid, "0001")


def test_a_contributor_built_without_a_generator_draws_its_noise_from_the_csprng(rnd, monkeypatch):
    """A contributor built without a Generator (``submit``, and every person of ``experiment secure-sum``'s pool:
    tests/experiments/test_secure_sum_players.py) draws its rounding and noise from the OS CSPRNG."""
    calls = record_noise_draws(monkeypatch)
    rnd.keys()
    rnd.shares()
    live = SecureContributor(rnd.config_doc(), rnd.bows[0], rnd.invitations[0], state=rnd.people[0].path)
    live.check_roster(rnd.server.roster_view())
    live.upload(0, rnd.server.view())
    assert calls == [(None, True)]


def test_a_roster_checked_for_one_contributor_is_checked_again_when_changed_in_place(tmp_path, monkeypatch):
    """A process playing many contributors checks one roster's N entries once (they compare theirs with a copy); a
    roster changed in place after that is not the copy, and is refused as it would be the first time."""
    from dptopic.contributor.secure_sum import default as cs
    from dptopic.contributor.secure_sum.checks import _ROSTERS

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    roster = rnd.server.roster_view()
    _ROSTERS.clear()
    shapes = []
    real = cs.SecureContributor._check_roster_shape
    monkeypatch.setattr(cs.SecureContributor, "_check_roster_shape", lambda self, r: shapes.append(1) or real(self, r))
    a, b, c = rnd.people[:3]
    assert a.check_roster(roster) is roster and b.check_roster(roster) is roster
    assert len(shapes) == 1
    roster[a.me]["s"][0] = roster[c.me]["c"]        # in place: one public key given to two uses
    with pytest.raises(ServerLied, match="two uses"):
        c.check_roster(roster)
    assert len(shapes) == 2


def test_rounding_computes_its_norms_without_blas(monkeypatch):
    """``np.dot`` of a long vector goes to OpenBLAS's thread pool, which spins when many threads of one process call
    it (a pool process plays many contributors from 8 threads): the rounding's norms are numpy's own sums."""
    from dptopic.contributor.secure_sum.person_statistics import quantize, squared_norm

    def no_blas(*args, **kwargs):
        raise AssertionError("np.dot called")

    x = np.random.default_rng(0).random(23_000)
    x /= np.sqrt(np.square(x).sum())
    monkeypatch.setattr(np, "dot", no_blas)
    bound = 200.0 + np.sqrt(23_000)
    q = quantize(x, 200.0, bound, np.random.default_rng(1))
    assert q.dtype == np.int64 and int(np.square(q).sum()) <= bound ** 2
    assert np.all(np.abs(q - 200.0 * x) < 1)
    assert squared_norm(np.array([3.0, 4.0])) == 25.0


def _stateless(rnd, k: int):
    """Contributor ``k`` of ``rnd`` again, with no state file (a simulation's), registered in its place."""
    c = SecureContributor(rnd.config, rnd.bows[k], rnd.invitations[k], rng=np.random.default_rng([9, k]))
    rnd.people[k] = rnd.by_id[c.me] = c
    return c


def test_an_acknowledged_message_is_dropped_and_never_made_a_second_time(rnd):
    c = _stateless(rnd, 0)
    rnd.keys()
    roster = rnd.server.roster_view()
    first = c.shares_request(roster)
    assert c.shares_request(roster) == first            # kept until acknowledged: a resend is the same
    c.acknowledged("shares")
    assert c.st["sent"]["shares"] == "acknowledged"     # the copy is gone
    with pytest.raises(DPTopicError, match="acknowledged") as e:
        c.shares_request(roster)                        # never a second, different set of shares
    assert "\n" not in str(e.value)
    c.acknowledged("upload0")                           # a step not sent yet: nothing to drop, nothing refused later
    assert "upload0" not in c.st["sent"]


def test_with_a_state_file_an_acknowledged_message_stays_for_a_resumed_run(rnd):
    rnd.keys()
    roster = rnd.server.roster_view()
    c = rnd.people[0]
    first = c.shares_request(roster)
    c.acknowledged("shares")
    assert c.shares_request(roster) == first
    again = SecureContributor(rnd.config, rnd.bows[0], rnd.invitations[0], state=c.path)
    assert again.shares_request(roster) == first        # a resumed run resends the same bytes from its file


def test_a_round_whose_contributors_drop_what_was_acknowledged_releases_the_same(tmp_path):
    plain = InProcessRound(tmp_path / "a", n=10, dropouts=2, collusion=1)
    dropping = InProcessRound(tmp_path / "b", n=10, dropouts=2, collusion=1)
    for k in range(10):
        _stateless(plain, k)
        _stateless(dropping, k)
    server = dropping.server
    steps = {"post_shares": "shares", "post_upload": "upload{}", "post_unmask": "unmask{}"}
    for name, step in steps.items():
        real = getattr(server, name)

        def acked(*args, real=real, step=step):
            try:
                return real(*args)
            finally:        # answered, or refused as late (round_closed): never sent again either way
                who = args[1] if step != "shares" else args[0]
                dropping.by_id[who].acknowledged(step.format(args[0]))
        setattr(server, name, acked)
    views = [r.run(drop0={r.people[3].me}) for r in (plain, dropping)]
    assert views[0]["state"] == views[1]["state"] == "released"
    from sqlalchemy import select

    from dptopic.service.secure_sum.database import t_state

    def released(r):        # the unmasked sums the server keeps (the masks differ, the sums do not)
        with r.server.engine.connect() as conn:
            return {k: json.loads(v) for k, v in conn.execute(select(t_state.c.key, t_state.c.value).where(
                t_state.c.key.in_(["sum0", "sum1"])))}
    assert released(plain) == released(dropping) and len(released(plain)) == 2
    assert all(v == "acknowledged" for c in dropping.people for k, v in c.st["sent"].items() if k != "keys")
    assert any(c.st["sent"] for c in dropping.people)


def test_the_contributors_of_one_process_share_their_lists_of_ids(rnd):
    for k in range(len(rnd.people)):
        _stateless(rnd, k)
    rnd.run()
    a, b = rnd.people[0], rnd.people[1]
    assert a.ids is b.ids and a.ids == sorted(a.members)
    for phase in ("0", "1"):
        assert a.st["masked_with"][phase] is b.st["masked_with"][phase]
        assert a.st["signed"][phase]["uploaded"] is b.st["signed"][phase]["uploaded"]
        assert a._masked_set(int(phase)) is b._masked_set(int(phase)) == frozenset(a.st["masked_with"][phase])
    # a list read back from a state file is the contributor's own, and its set is made from it
    st = json.loads(json.dumps(a.st))
    a.st["masked_with"]["0"] = st["masked_with"]["0"]
    a._sets.clear()
    assert a._masked_set(0) == b._masked_set(0) and a._masked_set(0) is not b._masked_set(0)


def test_held_shares_read_as_the_hex_of_each_phases_secret():
    from dptopic.contributor.secure_sum.masks import HeldShares

    parts = [bytes([k]) * 32 for k in range(4)]       # s_0 b_0 s_1 b_1
    held = HeldShares(b"".join(parts))
    assert dict(held) == {"s": [parts[0].hex(), parts[2].hex()], "b": [parts[1].hex(), parts[3].hex()]}
    with pytest.raises(KeyError):
        held["c"]


def test_under_a_cap_on_the_words_the_server_keeps_the_top_words_and_a_longer_list_is_refused(tmp_path):
    """With ``max_words`` 5 of V = 30, step 1 sums the 5 words of highest noisy count in step 0's sum (the server's
    choice, post-processing of that sum); a contributor refuses a sixth word before sending anything."""
    import base64

    from sqlalchemy import select

    from dptopic.models.secure_sum import released_words
    from dptopic.protocol.secure_sum.ring import triangle_size
    from dptopic.service.secure_sum.database import t_state

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1, epsilon=200.0, max_words=5)
    assert rnd.plan.max_kept_words == 5 and rnd.plan.dims == (31, triangle_size(5))
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    rnd.consistency(0)
    rnd.unmask(0)
    view = rnd.server.view()
    kept = view["kept"]
    with rnd.server.engine.connect() as conn:       # step 0's sum as the server unmasked it
        s0 = json.loads(conn.execute(select(t_state.c.value).where(t_state.c.key == "sum0")).scalar())
    total = np.frombuffer(base64.b64decode(s0["sum"]), dtype="<i8")
    assert len(kept) == 5
    counts = total[:30].astype(float)
    assert set(kept) == set(np.argsort(-counts, kind="stable")[:5].tolist())
    assert kept == [int(k) for k in released_words(rnd.plan, total, s0["shares"], 3)[0]]
    c = rnd.people[0]
    sixth = sorted(set(range(30)) - set(kept))[0]
    with pytest.raises(ServerLied, match="2 to 5 distinct word ids"):
        c.upload(1, {**view, "kept": sorted(kept + [sixth])})
    assert "upload1" not in c.st["sent"]
    assert c.upload(1, view) is not None


# ----------------------------------------------------------------------------- a roster without its no-shows
def test_a_roster_without_a_no_show_is_taken_and_the_shares_go_to_the_registered_neighbours(rnd):
    """A roster that lacks an invited contributor who never registered (one of the F dropouts) is taken: each
    contributor checks and shares with its registered neighbours only, and a share the server claims came from the
    no-show is ignored (it has no keys to have made one)."""
    x = rnd.people[0]
    rnd.keys(absent=[x.me])
    rnd.server.close()
    roster = rnd.server.roster_view()
    assert x.me not in roster and len(roster) == rnd.plan.n - 1
    for c in rnd.people[1:]:
        shares = c.shares_request(roster)["shares"]
        assert sorted(shares) == sorted(v for v in c.graph[c.me] if v != x.me)
    c = next(c for c in rnd.people[1:] if x.me in c.graph[c.me])
    c.take_shares({x.me: "AAAA" * 8})
    assert x.me not in c.held and c.dropped_shares == []


def test_a_roster_with_fewer_than_n_minus_f_or_too_few_neighbours_is_refused(tmp_path):
    """A contributor refuses a roster of fewer than N - F (the noise was planned for that many), one that leaves it
    fewer than the threshold of its neighbours (its shares could not be completed), and step members outside the
    roster: each in one line (``ServerLied``), never a ``KeyError``."""
    rnd = InProcessRound(tmp_path, n=30, dropouts=3, collusion=1)      # 10 neighbours each, threshold 7
    rnd.keys()
    roster = rnd.server.roster_view()
    me = rnd.people[0]
    far = [v for v in sorted(roster) if v != me.me and v not in me.graph[me.me]]
    few = {k: v for k, v in roster.items() if k not in far[:4]}        # 26 of 30, N - F = 27
    with pytest.raises(ServerLied, match="fewer than the 27 the noise was planned for"):
        me.check_roster(few)
    gone = far[0]
    me.shares_request({k: v for k, v in roster.items() if k != gone})
    members = sorted(roster)
    with pytest.raises(ServerLied, match=f"{gone!r} among the members of step 0, who is not in the round's roster"):
        me.upload(0, {"state": "upload0", "members": members})
    wide = InProcessRound(tmp_path / "wide", n=60, dropouts=18, collusion=0)      # 36 neighbours, threshold 19
    wide.keys()
    roster, me, T = wide.server.roster_view(), wide.people[0], wide.plan.threshold
    short = {k: v for k, v in roster.items() if k not in me.graph[me.me][:len(me.graph[me.me]) - T + 1]}
    assert len(short) >= wide.plan.n - wide.plan.dropouts
    with pytest.raises(ServerLied, match=f"only {T - 1} of your 36 neighbours, fewer than the threshold {T}"):
        me.check_roster(short)


def test_n_minus_f_of_a_roster_without_its_no_shows_is_the_invitations_f_not_the_servers(tmp_path, monkeypatch):
    """N - F, the fewest a roster (or a step's members) may hold, is counted with the dropouts the invitation pins:
    were a server's plan stating more dropouts (6 where the invitation pins 3) let through, a roster of 25 of 30 is
    still refused (27 needed), and so are step members that count 25."""
    from dptopic.contributor.secure_sum import default as cs
    from dptopic.protocol.secure_sum.plan import SecureSumPlan

    rnd = InProcessRound(tmp_path, n=30, dropouts=3, collusion=1)
    rnd.keys()
    roster = rnd.server.roster_view()
    monkeypatch.setattr(cs, "check_invitation", lambda plan, invitation: None)     # the plan check let through
    stated = SecureSumPlan(rnd.plan.epsilon, rnd.plan.delta, 30, 6, rnd.plan.vocab_size, 1)
    me = SecureContributor({**rnd.config_doc(), "secure_sum": stated.to_dict()}, rnd.bows[0], rnd.invitations[0])
    me.st["secrets"], me.secrets = rnd.people[0].st["secrets"], rnd.people[0].secrets      # the keys it registered
    assert me.plan.dropouts == 6 and me.least == 27
    far = [v for v in sorted(roster) if v != me.me and v not in me.graph[me.me]]
    with pytest.raises(ServerLied, match="roster has 25 entries, fewer than the 27 the noise was planned for"):
        me.check_roster({k: v for k, v in roster.items() if k not in far[:5]})
    me.shares_request(roster)
    with pytest.raises(ServerLied, match="names 25 members for step 0, fewer than the 27"):
        me.upload(0, {"state": "upload0", "members": sorted(set(roster) - set(far[:5]))})
