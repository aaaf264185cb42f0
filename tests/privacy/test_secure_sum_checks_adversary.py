"""Every check a contributor makes of what the server says, against a server that lies, and a search of what such a
server can read.

**The search.** A lying server controls every message (each contributor may be told something else) and up to ``t``
colluding contributors. For a target of one, two or three contributors (neighbours on the ring, or a place apart) it
plays each of its lies at step 0 against the real contributors (:class:`~dptopic.contributor.secure_sum.default
.SecureContributor`), keeps everything it is sent, and :func:`readable` then finds every sum of honest uploads it
can unmask: any set whose self-mask seeds it holds and whose pairwise masks with the rest it holds or that cancel
inside the set. A sum of fewer honest uploads than the plan's noise was calibrated for (``N - F - t``) is an
exposure; one, two or three contributors alone are the cases searched for. With every check on, the search finds
none; with a planted defect it finds the pair the defect exposes (:func:`test_the_search_finds_the_pair_a_loosened
_check_exposes`), so it can fail.

**Every check, disabled in turn.** :data:`CHECKS` lists each check the contributor's code makes in the default mode
(the method that makes it, a seam of :class:`~dptopic.contributor.secure_sum.default.SecureContributor`) and in the
committee mode (:class:`~dptopic.contributor.secure_sum.committee.CommitteeContributor`), with the lie it stops. Each is
played twice: with the check the lie gets the server nothing; with the check removed (or loosened as a reviewer
found it once: consistency signatures counted from any member of the round), the server reads a sum smaller than
planned, or gets a share or a signature the protocol forbids. The checks made when a contributor joins (the
configuration, the plan recomputed from its settings, the directory against the invitation's enrollment key, its own
key and the round's size in it, the epsilon) are refusals tested where they are made:
``tests/contributor/secure_sum/test_default.py`` and ``tests/protocol/secure_sum/test_default.py``
(``test_a_stated_plan_is_recomputed_and_a_tampered_one_refused``), ``tests/privacy/test_secure_sum_adversary.py``
(``test_a_changed_plan_is_refused_by_a_contributor_who_accepted_another``); the plan the invitation pins is in
:data:`CHECKS`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from dptopic.contributor.secure_sum import default as cs
from dptopic.contributor.secure_sum.committee import CommitteeContributor
from dptopic.contributor.secure_sum.default import LeftOut, SecureContributor, ServerLied
from dptopic.protocol import secure_sum as ss
from dptopic.protocol.secure_sum import committee as sc
from dptopic.protocol.secure_sum import shamir

pytestmark = pytest.mark.service
pytest.importorskip("cryptography")
pytest.importorskip("starlette")


# ----------------------------------------------------------------------------- the lying server
@dataclass
class Outcome:
    """What a lying server holds after step 0 of one play: each contributor (the real code), who refused where and
    why, the uploads and their noisy statistics (to check a sum read), every answer, the colluders' and forged
    shares, and the pairwise seeds it knows otherwise (a key of its own in a member's place)."""

    adv: "Adversary"
    people: dict
    refused: dict = field(default_factory=dict)
    bodies: dict = field(default_factory=dict)
    noisy: dict = field(default_factory=dict)
    answers: list = field(default_factory=list)
    shares: dict = field(default_factory=dict)        # (sender, kind) -> {holder index: share bytes}
    pairs: dict = field(default_factory=dict)         # (u, v) -> the pairwise seed u masked with, known otherwise


class Adversary:
    """A round (``InProcessRound``'s invitations, contributors and server) registered up to the closed roster; from
    there on the server is this class, which tells each contributor what a play decides and keeps what it is sent.
    Each play starts from new contributors holding the keys registered (:meth:`play`), so many lies are tried on one
    round. ``colluders``: contributors whose every secret and signature the server holds."""

    def __init__(self, tmp: Path, n: int, dropouts: int, collusion: int, vocab: int = 12):
        from service_helpers import InProcessRound

        self.tmp = Path(tmp)
        self.rnd = InProcessRound(self.tmp / "setup", n=n, dropouts=dropouts, collusion=collusion, vocab=vocab)
        self.rnd.keys()
        self.roster = self.rnd.server.roster_view()
        self.plan = self.rnd.plan
        self.ids = sorted(self.roster)
        self.ring = ss.ring_order(self.ids, "round1")
        self.colluders: set = set()
        self.plays = 0

    def at(self, k: int) -> str:
        """The contributor ``k`` places along the ring from the first (negative: the other way)."""
        return self.ring[k % len(self.ring)]

    def config(self, plan=None) -> dict:
        """``/v1/config`` with ``plan`` (default the round's)."""
        doc = self.rnd.config_doc()
        if plan is not None:
            doc = {**doc, "secure_sum": plan.to_dict(), "epsilon": plan.epsilon, "delta": plan.delta}
        return doc

    def play(self, members=None, views=None, roster=None, plan=None, sign_all=False, colluders=(),
             asked=None) -> Outcome:
        """Step 0 of a round in which the server tells each contributor ``me``: ``members(me)`` at the upload
        (default everyone), ``roster(me)`` at the shares (default the real one; ``(roster, forged)``: with keys of the
        server's own for the members in ``forged``, ``{id: secrets}``), and ``views(me)``: the set of uploads it signs
        first and acts on (default every upload). ``sign_all``: every set of the play shown to everyone for signing
        after its own. The server hands each contributor, with its set, every
        signature it holds over that set; ``asked(me)``: the set it is asked to unmask over, when not that one.
        ``plan``: the plan the server states (default the round's). ``colluders``: contributors whose every secret
        and signature the server holds in this play."""
        self.plays += 1
        self.colluders = set(colluders)
        config = self.config(plan)
        out = Outcome(self, {})
        for k, (c0, inv, bow) in enumerate(zip(self.rnd.people, self.rnd.invitations, self.rnd.bows)):
            try:        # no state file (nothing to sync to disk): the keys it registered, as a fresh state
                c = SecureContributor(config, bow, inv, rng=np.random.default_rng([0, k]))
            except ServerLied as e:
                out.refused[c0.me] = ("config", str(e))
                continue
            c.st["secrets"] = c0.st["secrets"]
            c.secrets = c0.secrets
            share = c._share

            def recorded(phase, x, c=c, share=share):
                got = share(phase, x)
                out.noisy[(c.me, phase)] = np.asarray(got, dtype=np.int64)
                return got
            c._share = recorded
            out.people[c.me] = c
        people = out.people
        index = ss.holder_index(self.ids)
        # shares: each encrypted to its neighbours as the roster it was shown names them
        cts = {}
        for me, c in people.items():
            told, forged = (self.roster, {}) if roster is None else roster(me)
            try:
                cts[me] = c.shares_request(told)["shares"]
            except ServerLied as e:
                out.refused[me] = ("shares", str(e))
                continue
            for v, secrets in forged.items():       # the server opens what was encrypted to its own key
                got = cs.open_shares(v, secrets, told, "round1", me, cts[me][v])
                for kind in ("b", "s"):
                    out.shares.setdefault((me, kind), {})[index[v]] = bytes.fromhex(got[kind][0])
                    out.pairs[(me, v)] = ss.pair_seed(secrets.s[0], bytes.fromhex(self.roster[me]["s"][0]), "round1",
                                                      0, me, v)
        for me, c in people.items():
            if me in cts:
                c.take_shares({s: ct[me] for s, ct in cts.items() if me in ct})
        # step 0's uploads
        for me, c in people.items():
            if me in out.refused:
                continue
            try:
                body, _ = c.upload(0, {"members": sorted(self.ids) if members is None else members(me)})
            except (ServerLied, LeftOut) as e:
                out.refused[me] = ("upload0", str(e))
                continue
            out.bodies[me] = body
        truth = sorted(out.bodies)
        honest = [me for me in truth if me not in self.colluders]
        acting = {me: sorted(truth if views is None else views(me)) for me in honest}
        every = {ss.set_digest(v): v for v in acting.values()}
        # consistency: each signs its own set first, then (sign_all) every other
        sigs: dict = {}
        for me in honest:
            c = people[me]
            for k, v in enumerate([acting[me], *(every.values() if sign_all else ())]):
                try:
                    sigs[(me, ss.set_digest(v))] = c.consistency(0, {"uploaded": v})["signature"]
                except (ServerLied, LeftOut) as e:
                    if k == 0:
                        out.refused[me] = ("consistency0", str(e))
        for me in self.colluders & set(truth):
            for dg, v in every.items():
                sigs[(me, dg)] = ss.sign(self.rnd.by_id[me].key, ss.consistency_message("round1", 0, v))
        # unmasking: each is handed every signature the server holds over its own set
        for me in honest:
            if me in out.refused:
                continue
            v = acting[me] if asked is None else sorted(asked(me))
            dg = ss.set_digest(v)
            handed = {w: s for (w, d), s in sigs.items() if d == dg}
            try:
                ans = people[me].unmask(0, {"uploaded": v}, handed)["answers"]
            except (ServerLied, LeftOut) as e:
                out.refused[me] = ("unmask0", str(e))
                continue
            out.answers.append((me, ans))
            for sender, a in ans.items():
                out.shares.setdefault((sender, a["kind"]), {})[index[me]] = bytes.fromhex(a["share"])
        for me in self.colluders & set(people):      # a colluder hands over every share it holds
            for sender, sh in (people[me].held or {}).items():
                for kind in ("b", "s"):
                    out.shares.setdefault((sender, kind), {})[index[me]] = bytes.fromhex(sh[kind][0])
        return out


# ----------------------------------------------------------------------------- what the server can read
def _known(out: Outcome, who: str, kind: str) -> bool:
    return who in out.adv.colluders or len(out.shares.get((who, kind), {})) >= out.people[who].T


def _pair_known(out: Outcome, u: str, v: str) -> bool:
    return (u, v) in out.pairs or _known(out, u, "s") or (v in out.people and _known(out, v, "s"))


def readable(out: Outcome) -> list:
    """Every smallest set of honest uploads of step 0 whose sum the server can unmask from what it holds: it holds
    each one's self-mask seed, and each pairwise mask on them either cancels inside the set (both masked with each
    other) or is one whose seed it holds (a pairwise key reconstructed, a colluder's, one of its own). Any sum it
    can read is a union of these (a mask it cannot remove ties the two uploads into every sum it reads)."""
    uploaded = {u for u in out.bodies if u not in out.adv.colluders}
    if not uploaded:
        return []
    graph = next(iter(out.people.values())).graph
    masked = {u: set(out.people[u].st["masked_with"]["0"]) for u in uploaded}
    need = {u: {v for v in graph[u] if v in masked[u] and not _pair_known(out, u, v)} for u in uploaded}
    found = set()
    for start in sorted(uploaded):
        group, todo, ok = {start}, [start], True
        while todo and ok:
            u = todo.pop()
            ok = _known(out, u, "b")
            for v in need[u]:
                if v not in uploaded or u not in masked[v]:     # a mask on u alone, never cancelled
                    ok = False
                elif v not in group:
                    group.add(v)
                    todo.append(v)
        if ok:
            found.add(frozenset(group))
    return sorted(found, key=lambda g: (len(g), sorted(g)))


def exposure(out: Outcome) -> list:
    """The sums :func:`readable` finds of fewer honest uploads than the plan's noise was calibrated for (``N - F -
    t``): one, two or three contributors alone among them."""
    p = out.adv.plan
    return [g for g in readable(out) if len(g) < p.n - p.dropouts - p.collusion]


def read_sum(out: Outcome, group) -> np.ndarray:
    """The sum of ``group``'s uploads of step 0 unmasked with what the server holds (the seeds reconstructed from
    their shares, the colluders' own, the server's own keys), as signed integers: what :func:`readable` says it can
    read, read."""
    adv, group = out.adv, set(group)
    people = out.people
    graph = next(iter(people.values())).graph
    T = next(iter(people.values())).T

    def secret(who, kind):
        if who in adv.colluders:
            return (people[who].secrets.b if kind == "b" else people[who].secrets.s)[0]
        got = out.shares[(who, kind)]
        return shamir.reconstruct({h: got[h] for h in sorted(got)[:T]}, T, ss.SEED_BYTES)

    def seed(u, v):
        if (u, v) in out.pairs:
            return out.pairs[(u, v)]
        if _known(out, u, "s"):
            return ss.pair_seed(secret(u, "s"), bytes.fromhex(adv.roster[v]["s"][0]), "round1", 0, u, v)
        return ss.pair_seed(secret(v, "s"), bytes.fromhex(adv.roster[u]["s"][0]), "round1", 0, u, v)

    bits = adv.plan.bits
    y = ss.ring_sum((np.frombuffer(out.bodies[u], dtype=adv.plan.dtype) for u in sorted(group)), bits)
    for u in sorted(group):
        y -= ss.prg(secret(u, "b"), len(y), bits)
        masked = set(people[u].st["masked_with"]["0"])
        for v in graph[u]:
            if v not in masked or (v in group and u in set(people[v].st["masked_with"]["0"])):
                continue            # no mask, or one that cancels inside the group
            m = ss.prg(seed(u, v), len(y), bits)
            if u < v:
                y -= m
            else:
                y += m
    return ss.from_ring(y, bits)


def assert_read(out: Outcome, group) -> None:
    """The sum :func:`readable` says the server reads is the group's noisy statistics' sum, exactly."""
    want = np.sum([out.noisy[(u, 0)] for u in group], axis=0)
    assert np.array_equal(read_sum(out, group), want)


# ----------------------------------------------------------------------------- the lies of the search
def outside(adv: Adversary, S) -> list:
    """The neighbours of the targets ``S`` that are not targets, nearest first along the ring."""
    graph = ss.neighbour_graph(adv.ids, "round1", adv.plan.degree)
    place = {i: k for k, i in enumerate(adv.ring)}
    first = place[sorted(S, key=lambda i: place[i])[0]]
    mates = {v for u in S for v in graph[u]} - set(S)
    return sorted(mates, key=lambda v: min((place[v] - first) % len(adv.ring), (first - place[v]) % len(adv.ring)))


def lies(adv: Adversary, S, colluders=()) -> dict:
    """The lies a server with ``colluders`` plays against the targets ``S`` (each a :meth:`Adversary.play`'s keyword
    arguments)."""
    S = set(S)
    mates = outside(adv, S)
    honest_mates = [v for v in mates if v not in set(colluders)]
    every = set(adv.ids)
    place = {i: k for k, i in enumerate(adv.ring)}
    first = min(place[u] for u in S)
    left = {v for v in mates if (place[v] - first) % len(adv.ring) > len(adv.ring) // 2}
    F = adv.plan.dropouts
    few = set(honest_mates[:F])
    return {
        "none": {},
        # each neighbour of the targets told: the targets uploaded, the targets' other neighbours dropped
        "split": {"views": lambda me: every - (set(mates) - {me}) if me in mates else every},
        # one set for all: as many of the targets' neighbours dropped as the tolerance allows
        "drop": {"views": lambda me: every - few},
        # the targets' neighbours on one side told they uploaded, on the other that they dropped
        "halves": {"views": lambda me: every - S if me in mates and me not in left else every},
        # the targets masked with as few of their neighbours as the tolerance allows, then split views
        "members": {"members": lambda me: sorted(every - few) if me in S else sorted(every),
                    "views": lambda me: every - (set(mates) - {me}) if me in mates else every},
        **({} if not _padded_sets(adv, S) else {
            # per-revealer sets found for this shape (PADDED), with far-away contributors signing each
            "padded": {"views": lambda me: padded_view(adv, S, me)},
            # the same sets, each shown to every contributor for signing after its own
            "sign everything": {"views": lambda me: padded_view(adv, S, me), "sign_all": True}}),
    }


PADDED = {
    1: {-6: (-3, -2), -5: (-3, -2), -4: (-2, -1), -3: (-2, -1), -2: (-3, 1), -1: (-3, -2), 0: (-1, 1), 1: (2, 3),
        2: (-1, 1), 3: (1, 2), 4: (2, 3), 5: (2, 3), 6: (2, 3)},
    2: {-6: (-3, -2), -5: (-3, -2), -4: (-3, -2), -3: (-2, -1), -2: (-1, 4), -1: (-3, -2), 0: (2, 3), 1: (-1, 4),
        2: (-1, 4), 3: (2, 4), 4: (2, 3), 5: (2, 3), 6: (2, 3), 7: (-1, 4)},
    3: {-6: (-3, -2), -5: (-3, -2), -4: (-3, -2), -3: (-1, 3), -2: (-1, 4), -1: (-3, -2), 0: (-1, 3), 1: (-2, 3),
        2: (-1, 4), 3: (4, 5), 4: (-2, 3), 5: (-2, 3), 6: (4, 5), 7: (4, 5), 8: (4, 5)},
}
"""For degree 6 and no colluder (threshold 4, at most 2 of a contributor's neighbours left out of a set): the set of
uploads each contributor near 1, 2 or 3 targets in a row (at places 0, 1, 2) acts on, as the places it leaves out
(relative to the first target). Each set passes every check its holder makes but the signatures; every neighbour of
the targets is left out of the sets of 4 of its neighbours, who reveal its pairwise key's shares, while every
neighbour of a target reveals the target's self-mask seed's. Found by a search over each contributor's set (simulated
annealing); the test checks them. Signed by their holders alone, each set lacks signatures: a server that can count
others' (far-away contributors', :func:`_padded_sets`) reads the targets' sum."""


def _padded_sets(adv: Adversary, S) -> dict:
    """``{holder: the uploads it leaves out}`` of :data:`PADDED`'s attack on ``S`` (targets in a row on the ring), with
    the far-away contributors who sign each set so that each holder has the threshold of signatures besides its own
    (one set each: they sign one per step)."""
    place = {i: k for k, i in enumerate(adv.ring)}
    first = min(place[u] for u in S)
    if sorted(place[u] - first for u in S) != list(range(len(S))) or adv.plan.degree != 6 or adv.plan.collusion:
        return {}
    sets = {adv.at(first + k): frozenset(adv.at(first + o) for o in drop) for k, drop in PADDED[len(S)].items()}
    need = []
    for drop in sorted(set(sets.values()), key=sorted):
        need += [drop] * max(0, adv.plan.threshold + 1 - sum(1 for d in sets.values() if d == drop))
    half = len(adv.ring) // 2
    far = [adv.at(first + half + (k + 1) // 2 * (1 if k % 2 else -1)) for k in range(len(need))]
    return {**sets, **dict(zip(far, need))}


def padded_view(adv: Adversary, S, me) -> set:
    """``me``'s set in :data:`PADDED`'s attack on ``S``: every upload but those it leaves out."""
    return set(adv.ids) - _padded_sets(adv, S).get(me, frozenset())


# ----------------------------------------------------------------------------- the search
def loosened_signatures(self, phase, uploaded, signatures):
    """:meth:`SecureContributor._confirmed` as a reviewer found it could be written: ``T`` valid signatures over its
    set from any member of the round, not from its own neighbours."""
    msg = ss.consistency_message(self.round_id, phase, uploaded)
    valid = sum(1 for w, sig in signatures.items() if w in self.members and w != self.me
                and ss.verify(bytes.fromhex(self.members[w]), sig, msg))
    if valid < self.T:
        raise ServerLied(f"fewer than the threshold {self.T}")


@pytest.fixture(scope="module")
def round_of_40(tmp_path_factory):
    """40 contributors, 2 may drop out, no colluder: degree 6, threshold 4 (the plan :data:`PADDED` is for)."""
    adv = Adversary(tmp_path_factory.mktemp("forty"), n=40, dropouts=2, collusion=0)
    assert (adv.plan.degree, adv.plan.threshold) == (6, 4)
    return adv


def test_the_search_finds_the_pair_a_loosened_check_exposes(round_of_40, monkeypatch):
    """A planted defect: consistency signatures counted from any member of the round. A server that shows each
    contributor near two neighbours a set of its own (:data:`PADDED`) and has far-away contributors sign each reads
    the pair's sum exactly, and no one alone; with the real check every such set is refused."""
    adv = round_of_40
    S = {adv.at(20), adv.at(21)}
    out = adv.play(**lies(adv, S)["padded"])
    assert exposure(out) == []
    monkeypatch.setattr(SecureContributor, "_confirmed", loosened_signatures)
    out = adv.play(**lies(adv, S)["padded"])
    small = [g for g in exposure(out) if len(g) <= 3]
    assert small == [frozenset(S)], small       # the pair, and no one alone
    assert_read(out, S)


@pytest.fixture(scope="module")
def round_of_24(tmp_path_factory):
    """24 contributors, 3 may drop out, 1 colluder: degree 10, threshold 7."""
    adv = Adversary(tmp_path_factory.mktemp("twentyfour"), n=24, dropouts=3, collusion=1)
    assert (adv.plan.degree, adv.plan.threshold) == (10, 7)
    return adv


SHAPES = {"one": (0,), "two in a row": (0, 1), "two a place apart": (0, 2), "three in a row": (0, 1, 2),
          "three a place apart": (0, 2, 4)}
"""The targets searched, as places on the ring."""


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("size", [40, 24])
def test_no_lie_of_the_search_unmasks_one_two_or_three_contributors(round_of_40, round_of_24, size, shape):
    """Every lie of :func:`lies` against every target of :data:`SHAPES`, with no colluder or one beside the targets
    on either side (where the plan tolerates one): the server reads no sum of fewer honest uploads than planned, so
    none of one, two or three contributors (told no lie, it reads the sum of all of them, and no other)."""
    adv = round_of_40 if size == 40 else round_of_24
    S = {adv.at(10 + k) for k in SHAPES[shape]}
    placements = [()] + ([(adv.at(9),), (adv.at(10 + max(SHAPES[shape]) + 1),)] if adv.plan.collusion else [])
    for colluders in placements:
        for name, lie in lies(adv, S, colluders).items():
            out = adv.play(**lie, colluders=colluders)
            assert exposure(out) == [], (name, colluders)
            if name == "none":
                assert readable(out) == [frozenset(out.bodies) - set(colluders)]


# ----------------------------------------------------------------------------- every check, disabled in turn
@pytest.fixture(scope="module")
def round_pinning_two(tmp_path_factory):
    """24 contributors invited with 3 dropping out and 2 colluders pinned in their invitations."""
    return Adversary(tmp_path_factory.mktemp("pinned"), n=24, dropouts=3, collusion=2)


def _places(adv: Adversary, me: str, x: str) -> int:
    place = {i: k for k, i in enumerate(adv.ring)}
    return (place[me] - place[x]) % len(adv.ring)


def alone(out: Outcome, x: str):
    """What the server got of ``x``: its upload read alone (checked against its statistic), or None."""
    if frozenset({x}) not in exposure(out):
        return None
    assert_read(out, {x})
    return f"{x}'s upload read alone"


def stated_fewer_colluders(request, tmp_path):
    """The server states t = 0 where the invitations pin t = 2, and 2 colluders sit beside the target: with the
    threshold t = 0 gives (5 of 8), half its honest neighbours reveal its self-mask seed's shares and half its pairwise
    key's (each group told a set of its own, each with enough of its own neighbours' signatures), and the colluders
    give both."""
    adv = request.getfixturevalue("round_pinning_two")
    stated = ss.SecureSumPlan(adv.plan.epsilon, adv.plan.delta, adv.plan.n, adv.plan.dropouts, adv.plan.vocab_size, 0)
    x = adv.at(10)
    every = set(adv.ids)
    out = adv.play(plan=stated, colluders=(adv.at(9), adv.at(11)),
                   views=lambda me: every - {x} if 2 <= _places(adv, me, x) <= 11 else every)
    return alone(out, x)


def forged_neighbours(request, tmp_path):
    """The roster shown to the target holds the server's own keys for each of its neighbours: the target's shares
    go to the server, and its masks are agreed with it."""
    adv = request.getfixturevalue("round_of_24")
    x = adv.at(10)
    forged = {v: cs.ContributorSecrets.new() for v in ss.neighbour_graph(adv.ids, "round1", adv.plan.degree)[x]}
    told = {**adv.roster, **{v: {**adv.roster[v], "c": ss.public_key(f.c).hex(),
                                 "s": [ss.public_key(k).hex() for k in f.s]} for v, f in forged.items()}}
    out = adv.play(roster=lambda me: (told, forged) if me == x else (adv.roster, {}))
    return alone(out, x)


def refused_at(out: Outcome, x: str, step: str, what: str):
    """``what`` when ``x`` did not refuse at ``step`` (the lie got through), else None."""
    return None if out.refused.get(x, ("",))[0] == step else what


def _far(adv: Adversary, x: str) -> list:
    """The contributors that are not ``x`` nor its neighbours, farthest from ``x`` on the ring first."""
    mine = set(ss.neighbour_graph(adv.ids, "round1", adv.plan.degree)[x]) | {x}
    return sorted((v for v in adv.ids if v not in mine), key=lambda v: -min(_places(adv, v, x), _places(adv, x, v)))


def roster_of_too_few(request, tmp_path):
    """The roster shown to the target holds 20 of the 24 (4 far-away members left out as if they never registered),
    where the invitations pin 3 dropouts: fewer than the N - F the noise was planned for."""
    adv = request.getfixturevalue("round_of_24")
    x = adv.at(10)
    told = {k: v for k, v in adv.roster.items() if k not in _far(adv, x)[:4]}
    out = adv.play(roster=lambda me: (told, {}) if me == x else (adv.roster, {}))
    return refused_at(out, x, "shares", f"sent its shares against a roster of {len(told)}, fewer than N - F")


def phantoms_among_members(request, tmp_path):
    """The roster shown to the target holds 21 of the 24 (N - F: 3 far-away members never registered); its step's
    members are 19 of those and 2 who never registered, so that they count 21: the target masks with 19 registered
    contributors where the noise was planned for 21."""
    adv = request.getfixturevalue("round_of_24")
    x = adv.at(10)
    far = _far(adv, x)
    told = {k: v for k, v in adv.roster.items() if k not in far[:3]}
    members = sorted((set(told) - set(far[3:5])) | set(far[:2]))
    out = adv.play(roster=lambda me: (told, {}) if me == x else (adv.roster, {}),
                   members=lambda me: members if me == x else sorted(adv.ids))
    return refused_at(out, x, "upload0", "masked with 19 registered members, 2 who never registered counted toward"
                                         " N - F")


def own_entry_replaced(request, tmp_path):
    adv = request.getfixturevalue("round_of_24")
    x = adv.at(10)
    other = cs.ContributorSecrets.new().public("round1", x)
    told = {**adv.roster, x: {**adv.roster[x], **other}}
    out = adv.play(roster=lambda me: (told, {}) if me == x else (adv.roster, {}))
    return refused_at(out, x, "shares", "sent its shares against a roster that does not hold its keys")


def stranger_among_members(request, tmp_path):
    adv = request.getfixturevalue("round_of_24")
    x = adv.at(10)
    out = adv.play(members=lambda me: sorted(adv.ids) + ["9999"] if me == x else sorted(adv.ids))
    return refused_at(out, x, "upload0", "masked with members that name a stranger")


def members_of_few(request, tmp_path):
    adv = request.getfixturevalue("round_of_24")
    x = adv.at(10)
    mine = sorted({x, *ss.neighbour_graph(adv.ids, "round1", adv.plan.degree)[x]})
    out = adv.play(members=lambda me: mine if me == x else sorted(adv.ids))
    return refused_at(out, x, "upload0", f"masked with {len(mine)} members, fewer than N - F")


def uploads_not_masked_with(request, tmp_path):
    adv = request.getfixturevalue("round_of_24")
    x, v = adv.at(10), adv.at(11)
    out = adv.play(members=lambda me: sorted(set(adv.ids) - {v}) if me == x else sorted(adv.ids))
    return refused_at(out, x, "consistency0", "signed a set naming a member it did not mask with")


def dropped_beyond_the_tolerance(request, tmp_path):
    """One set for everyone that counts every fourth contributor as dropped (6, where 3 may drop): every check of
    the neighbours passes, and the server reads the sum of 18 honest uploads where the noise was planned for 20."""
    adv = request.getfixturevalue("round_of_24")
    gone = {adv.at(k) for k in range(0, 24, 4)}
    out = adv.play(views=lambda me: set(adv.ids) - gone)
    small = exposure(out)
    return f"read a sum of {len(small[0])} honest uploads" if small else None


def sign_everything(request, tmp_path):
    adv = request.getfixturevalue("round_of_40")
    x = adv.at(20)
    return alone(adv.play(**lies(adv, {x})["sign everything"]), x)


def padded_signatures(request, tmp_path):
    adv = request.getfixturevalue("round_of_40")
    x = adv.at(20)
    return alone(adv.play(**lies(adv, {x})["padded"]), x)


def unmask_over_another_set(request, tmp_path):
    adv = request.getfixturevalue("round_of_24")
    x, far = adv.at(10), adv.at(22)
    other = set(adv.ids) - {far}
    out = adv.play(views=lambda me: set(adv.ids) if me == x else other, asked=lambda me: other)
    return refused_at(out, x, "unmask0", "answered over a set it did not sign")


def answers_for_a_member_not_masked_with(request, tmp_path):
    adv = request.getfixturevalue("round_of_24")
    x, v = adv.at(10), adv.at(11)
    out = adv.play(members=lambda me: sorted(set(adv.ids) - {v}) if me == x else sorted(adv.ids),
                   views=lambda me: set(adv.ids) - {v})
    mine = next((a for who, a in out.answers if who == x), {})
    return f"revealed {v}'s {mine[v]['kind']} share, a member it did not mask with" if v in mine else None


def other_members_on_a_resend(request, tmp_path):
    adv = request.getfixturevalue("round_of_24")
    x = adv.at(10)
    out = adv.play()
    try:
        out.people[x].upload(0, {"members": sorted(set(adv.ids) - {adv.at(22)})})
    except ServerLied:
        return None
    return "accepted other members for a step it had masked"


def step1_members_that_did_not_upload_in_step0(request, tmp_path):
    from service_helpers import InProcessRound

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    gone = rnd.people[3].me
    rnd.keys()
    rnd.shares()
    rnd.upload(0, drop={gone})       # step 1 opens without the one who left in step 0
    rnd.consistency(0)
    rnd.unmask(0)
    view = rnd.server.view()
    assert view["state"] == "upload1"
    c = next(c for c in rnd.people if c.me != gone)
    try:
        c.upload(1, {**view, "members": sorted([*view["members"], gone])})
    except ServerLied:
        return None
    return "masked step 1 with a member that did not upload in step 0"


def pairs_of_uploaded_neighbours(request, tmp_path):
    """An honest committee round, whose members reveal the pairwise seeds of an uploader with its uploaded
    neighbours too: each upload's masks all come off."""
    from committee_helpers import InProcessCommitteeRound

    rnd = InProcessCommitteeRound(tmp_path, n=12, dropouts=1, collusion=1)
    rnd.prekeys()
    rnd.open()
    rnd.run_from_open()
    got = other_test_module("test_secure_sum_committee_adversary").exposed(rnd, 0)
    return f"{len(got)} uploads read alone" if got else None


def other_test_module(name: str):
    """The test module ``name`` of ``tests/privacy`` or ``tests/protocol``, or ``folder/name`` of another folder of
    ``tests`` (imported by path: the suite imports its modules in importlib mode, under no name another module can
    import)."""
    import importlib.util
    import sys

    here = Path(__file__).resolve().parent
    folder, _, name = name.rpartition("/")
    places = [here.parent / folder / f"{name}.py"] if folder else [here / f"{name}.py",
                                                                   here.parent / "protocol" / f"{name}.py"]
    path = next(p for p in places if p.exists())
    key = "_checked_" + "_".join(path.relative_to(here.parent).with_suffix("").parts)    # two test_default.py
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, path)
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


def pointed(module: str, test: str, *args):
    """A refusal test of another module, run here: what it says when it fails (the lie got through), or None."""
    def run(request, tmp_path):
        f = getattr(other_test_module(module), test)
        try:
            f(*((tmp_path,) if "tmp_path" in f.__code__.co_varnames[:f.__code__.co_argcount] else ()), *args)
        except (Exception, pytest.fail.Exception) as e:     # noqa: BLE001 (any failure: the test went red)
            return f"{test} fails: {type(e).__name__}: {' '.join(str(e).split())[:200]}"
        return None
    run.pointed = f"{module}::{test}"
    return run


def _off(*a, **k):
    return None


def _only_for(what: str, name: str):
    """``SecureContributor.name`` (an ``_enough_*`` check) removed for sets of ``what`` (members or uploads) only."""
    real = getattr(SecureContributor, name)

    def loosened(self, ids, kind, phase):
        return None if kind == what else real(self, ids, kind, phase)
    return loosened


def _loosened_reveal_log(self, phase, held, uploaded, dropped):
    """:meth:`RevealLog.answer` without its record: the kind each sender's set says, whatever was revealed before."""
    out = {}
    for sender, shares in held.items():
        kind = "b" if sender in uploaded else "s" if sender in dropped else None
        if kind is not None:
            out[sender] = {"kind": kind, "share": shares[kind][phase]}
    return out


_REAL_SET_PROBLEM = sc.set_problem


def _set_problem_without_neighbours(uploaded, members, graph, least, threshold):
    """:func:`~dptopic.protocol.secure_sum.committee.set_problem` without its check of each uploader's neighbours."""
    return _REAL_SET_PROBLEM(uploaded, members, graph, least, 0)


@dataclass
class Check:
    """One check a contributor makes: ``where`` (the seam: ``Class.method`` or ``module.function``), ``loosened``
    (what replaces it: by default nothing), and ``attack``: the lie it stops, which returns what the server got
    (None: nothing). ``name``: what the check requires."""

    name: str
    where: str
    attack: object
    loosened: object = None


ONE_CONSISTENT_VIEW = pointed("test_secure_sum_adversary",
                              "test_one_consistent_view_with_the_targets_neighbours_dropped_is_refused")

CHECKS = [
    # joining: the plan the invitation pins
    Check("the server's plan is the one the invitation pins (N, F, t) and its mode", "cs.check_invitation",
          stated_fewer_colluders),
    # the roster
    Check("the roster's entries are members of the directory, each well-formed, every key different",
          "SecureContributor._check_roster_shape",
          pointed("test_secure_sum_adversary", "test_a_roster_that_is_not_the_directory_is_refused", "stranger")),
    Check("the roster: at least N - F registered (F as the invitation pins)", "SecureContributor._check_roster_count",
          roster_of_too_few),
    Check("the roster: at least T of its neighbours registered", "SecureContributor._check_roster_neighbours",
          pointed("contributor/secure_sum/test_default",
                  "test_a_roster_with_fewer_than_n_minus_f_or_too_few_neighbours_is_refused")),
    Check("its own roster entry holds the keys it registered", "SecureContributor._check_own_entry",
          own_entry_replaced),
    Check("each neighbour's (and committee member's) entry is signed by that member", "SecureContributor"
          "._check_entry_signed", forged_neighbours),
    # the upload
    Check("a list of ids names distinct members of the directory", "SecureContributor._id_set",
          stranger_among_members, lambda self, value, what: frozenset(value)),
    Check("the kept words are the plan's (2 to max_words distinct ids, in order)", "SecureContributor._check_kept",
          pointed("test_secure_sum_adversary", "test_kept_words_out_of_the_plan_are_refused", None),
          lambda self, kept: kept),
    Check("a step's members: registered (in the closed roster)", "SecureContributor._check_in_roster",
          phantoms_among_members),
    Check("a step's members: at least N - F", "SecureContributor._enough_count", members_of_few,
          _only_for("members", "_enough_count")),
    Check("a step's members: at least T of its neighbours", "SecureContributor._enough_neighbours",
          pointed("test_secure_sum_adversary", "test_members_too_few_are_refused_before_masking",
                  "members without the target's neighbours", "fewer than the threshold"),
          _only_for("members", "_enough_neighbours")),
    Check("step 1's members uploaded in step 0", "SecureContributor._check_members_of_step1",
          step1_members_that_did_not_upload_in_step0),
    Check("a resumed step names the members it masked with", "SecureContributor._check_same_members",
          other_members_on_a_resend),
    # the set of uploads
    Check("the uploads are members it masked with", "SecureContributor._check_uploads_masked",
          uploads_not_masked_with),
    Check("the uploads: at least N - F", "SecureContributor._enough_count", dropped_beyond_the_tolerance,
          _only_for("uploads", "_enough_count")),
    Check("the uploads: at least T of its neighbours", "SecureContributor._enough_neighbours",
          ONE_CONSISTENT_VIEW,
          _only_for("uploads", "_enough_neighbours")),
    Check("one set of uploads signed per step", "SecureContributor._sign_once", sign_everything,
          lambda self, phase, up, message: (self.st["signed"].setdefault(str(phase), {
              "digest": ss.set_digest(up), "uploaded": sorted(up)}) and {
              "contributor": self.me, "signature": ss.sign(self.key, message)})),
    # the unmasking
    Check("the unmasking is over the set it signed", "SecureContributor._check_signed_set",
          unmask_over_another_set),
    Check("T valid signatures over its set from its own neighbours", "SecureContributor._confirmed",
          padded_signatures, loosened_signatures),
    Check("T valid signatures over its set at all", "SecureContributor._confirmed", sign_everything),
    Check("each neighbour counted as uploaded has T of its neighbours among the uploads",
          "SecureContributor._check_uploaders",
          ONE_CONSISTENT_VIEW),
    Check("it answers only for the members it masked with", "SecureContributor._answerable",
          answers_for_a_member_not_masked_with, lambda self, phase: dict(self.held)),
    Check("one secret of each neighbour, never both", "cs.RevealLog.answer",
          pointed("protocol/secure_sum/test_default", "test_a_contributor_never_reveals_both_secrets_of_one_neighbour"),
          _loosened_reveal_log),
    # the committee mode
    Check("the committee is the public one the roster gives", "CommitteeContributor._check_committee",
          pointed("test_secure_sum_committee_adversary",
                  "test_a_committee_other_than_the_public_one_is_refused_before_anything_is_sent")),
    Check("a set of uploads a committee member signs: members it masked with, N - F, T neighbours each",
          "sc.set_problem", pointed("test_secure_sum_committee_adversary",
                                    "test_a_set_in_which_an_uploader_keeps_fewer_than_its_threshold_of_neighbours_is_"
                                    "refused"), _set_problem_without_neighbours),
    Check("T_c committee signatures over its set", "CommitteeContributor._quorum",
          pointed("test_secure_sum_committee_adversary",
                  "test_split_views_among_the_committee_gather_no_quorum_and_nothing_is_revealed")),
    Check("a member reveals an uploader's pairwise seeds with the neighbours outside the set only",
          "CommitteeContributor._pairs_revealed", pairs_of_uploaded_neighbours,
          lambda self, neighbours, up: list(neighbours)),
]
"""Every check a contributor makes of what the server tells it after joining, in the default and the committee mode
(those made when it joins: the module note), each with the lie it stops (``pointed``: a refusal test of its own,
which goes red without it). Not here, as no lie gets past the code without them: a roster key of low order
(:meth:`SecureContributor._check_entry_keys`: the X25519 agreement itself refuses one, ``tests/protocol/
test_secure_sum.py::test_the_low_order_list_is_exactly_the_keys_whose_agreement_is_zero``), and a committee blob's
signature (:meth:`CommitteeContributor._upload_signed`: a blob another than its maker's fails its AES-GCM
authentication, bound to the uploader, the member and the step, ``tests/protocol/secure_sum/test_committee.py``)."""


def _seam(where: str):
    owner, name = where.rsplit(".", 1)
    return {"cs": cs, "sc": sc, "SecureContributor": SecureContributor, "CommitteeContributor": CommitteeContributor,
            "cs.RevealLog": cs.RevealLog}[owner], name


@pytest.mark.parametrize("check", CHECKS, ids=[f"{c.where}: {c.name}" for c in CHECKS])
def test_each_check_stops_the_lie_it_names(check, request, tmp_path, monkeypatch):
    """With the check, the lie gets the server nothing; with it removed (or loosened), the server reads a sum
    smaller than planned, or gets what the check refuses (a pointed refusal test goes red)."""
    for part in ("with", "without"):
        (tmp_path / part).mkdir()
    if not hasattr(check.attack, "pointed"):       # a pointed test runs with every check in the suite already
        assert check.attack(request, tmp_path / "with") is None
    owner, name = _seam(check.where)
    monkeypatch.setattr(owner, name, check.loosened or _off)
    got = check.attack(request, tmp_path / "without")
    assert got, f"{check.where} removed, the lie still gets nothing: the check has no test that fails without it"

