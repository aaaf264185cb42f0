"""``dptopic.protocol.secure_sum.default``: the step messages' checks, the masks and the server's unmasking, with the
contributor's side of each step (``dptopic.contributor.secure_sum``), and the module note's bounds (no cut of the
honest survivors, no two views confirmed). The plan, the graph, the crypto and the ring have files of their own."""
import hashlib
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dptopic.contributor.secure_sum import default as cs
from dptopic.contributor.secure_sum.checks import ServerLied
from dptopic.contributor.secure_sum.masks import ContributorSecrets, RevealLog, make_shares, mask, open_shares
from dptopic.contributor.secure_sum.person_statistics import quantize
from dptopic.errors import DPTopicError
from dptopic.protocol.secure_sum import default as ss
from dptopic.protocol.secure_sum.crypto import (
    new_private_key,
    new_signing_key,
    public_key,
    seed_commitment,
    sign,
    signing_public,
    valid_x25519,
)
from dptopic.protocol.secure_sum.graph import (
    neighbour_graph,
    ring_order,
    threshold_of,
)
from dptopic.protocol.secure_sum.plan import SecureSumPlan
from dptopic.protocol.secure_sum.ring import (
    from_ring,
    ring_dtype,
    ring_sum,
    to_ring,
)

pytest.importorskip("cryptography")


def fixed_secrets(i: int, phases: int = 1) -> ContributorSecrets:
    def h(tag):         # fixed 32-byte secrets below the Shamir field's prime
        d = hashlib.sha256(f"{tag}/{i}".encode()).digest()
        return bytes([d[0] & 0x3F]) + d[1:]
    return ContributorSecrets(h("c"), [h(f"s{p}") for p in range(phases)], [h(f"b{p}") for p in range(phases)])


def round_of(n: int, degree: int | None = None, collusion: int = 0):
    """A roster of ``n`` with its graph and threshold, every contributor's secrets and the shares each holds."""
    ids = [f"c{i:03d}" for i in range(n)]
    sec = {i: fixed_secrets(k) for k, i in enumerate(ids)}
    roster = {i: sec[i].public("r", i) for i in ids}
    degree = n - 1 if degree is None else degree
    graph = neighbour_graph(ids, "r", degree)
    T = threshold_of(degree, collusion)
    held = {i: {} for i in ids}
    for s in ids:
        for v, ct in make_shares(s, sec[s], roster, "r", graph, T).items():
            held[v][s] = open_shares(v, sec[v], roster, "r", s, ct)
    return ids, sec, roster, graph, T, held


def test_masks_cancel_and_the_server_reads_the_survivors_sum_exactly():
    ids, sec, roster, graph, T, held = round_of(9, degree=6, collusion=0)
    rng = np.random.default_rng(0)
    xs = {i: rng.integers(-1000, 1000, 25) for i in ids}
    up = ids[:7]          # two masked, then dropped
    total = ring_sum(mask(xs[i], i, sec[i], roster, "r", 0, ids, graph) for i in up)
    logs = {i: RevealLog() for i in ids}
    responses = {i: logs[i].answer(0, held[i], up, set(ids) - set(up)) for i in up}
    assert np.array_equal(ss.unmask_sum(total, roster, "r", 0, graph, T, ids, up, responses), sum(xs[i] for i in up))


@pytest.mark.parametrize("bits, big", [(32, 2 ** 27), (64, 2 ** 58)])
def test_the_sum_is_exact_in_each_ring(bits, big):
    """Modulo 2^32 and 2^64, with dropouts, entries near the ring's reach: the unmasked sum is exact, signs and all."""
    ids, sec, roster, graph, T, held = round_of(9, degree=6, collusion=0)
    rng = np.random.default_rng(1)
    xs = {i: rng.integers(-big, big, 40) for i in ids}
    up = ids[2:]          # two masked, then dropped
    uploads = [mask(xs[i], i, sec[i], roster, "r", 0, ids, graph, bits) for i in up]
    assert all(u.dtype == ring_dtype(bits) for u in uploads)
    total = ring_sum(uploads, bits)
    responses = {i: RevealLog().answer(0, held[i], up, set(ids) - set(up)) for i in up}
    got = ss.unmask_sum(total, roster, "r", 0, graph, T, ids, up, responses)
    assert got.dtype == np.int64 and np.array_equal(got, sum(xs[i] for i in up))
    assert np.array_equal(from_ring(to_ring(np.array([-1, -big, big]), bits)), [-1, -big, big])


def test_a_64_bit_upload_is_uniform_in_its_high_bits():
    ids, sec, roster, graph, T, _ = round_of(4)
    signal = np.zeros(40_000, np.int64)
    signal[:100] = 2 ** 40
    y = mask(signal, ids[0], sec[ids[0]], roster, "r", 0, ids, graph, 64)
    counts = np.bincount((y >> np.uint64(56)).astype(np.int64), minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-4




def test_too_few_shares_is_one_line_and_a_wrong_share_is_outvoted():
    ids, sec, roster, graph, T, held = round_of(7, degree=6, collusion=0)
    total = ring_sum(mask(np.zeros(10, np.int64), i, sec[i], roster, "r", 0, ids, graph) for i in ids)
    few = {i: RevealLog().answer(0, held[i], ids, []) for i in ids[:3]}
    with pytest.raises(DPTopicError, match="shares needed to unmask"):
        ss.unmask_sum(total, roster, "r", 0, graph, T, ids, ids, few)
    answers = {i: RevealLog().answer(0, held[i], ids, []) for i in ids}
    bad = dict(answers[ids[1]][ids[0]])
    bad["share"] = format(int(bad["share"], 16) ^ 1, f"0{ss.SHARE_HEX}x")        # one neighbour lies about c000
    answers[ids[1]] = {**answers[ids[1]], ids[0]: bad}
    assert np.array_equal(ss.unmask_sum(total, roster, "r", 0, graph, T, ids, ids, answers), np.zeros(10))


def test_an_upload_is_uniform_whatever_the_statistic():
    ids, sec, roster, graph, T, _ = round_of(4)
    zero = mask(np.zeros(40_000, np.int64), ids[0], sec[ids[0]], roster, "r", 0, ids, graph)
    signal = np.zeros(40_000, np.int64)
    signal[:100] = 65536
    other = mask(signal, ids[0], sec[ids[0]], roster, "r", 0, ids, graph)
    for y in (zero, other):
        counts = np.bincount((y >> 24).astype(np.int64), minlength=256)
        assert stats.chisquare(counts).pvalue > 1e-4


def test_a_contributor_never_reveals_both_secrets_of_one_neighbour():
    ids, sec, roster, graph, T, held = round_of(4)
    log = RevealLog()
    log.answer(0, held[ids[0]], [ids[1]], [ids[2]])
    with pytest.raises(ServerLied, match="after the other one"):
        log.answer(0, held[ids[0]], [ids[2]], [ids[1]])
    with pytest.raises(ServerLied, match="both uploaded and dropped"):
        RevealLog().answer(0, held[ids[0]], [ids[1]], [ids[1]])


def _components(nodes, graph) -> int:
    nodes, seen, parts = set(nodes), set(), 0
    for s in nodes:
        if s in seen:
            continue
        parts += 1
        todo = [s]
        while todo:
            u = todo.pop()
            if u in seen:
                continue
            seen.add(u)
            todo += [w for w in graph[u] if w in nodes and w not in seen]
    return parts


def _split_found(n: int, degree: int, collusion: int, threshold: int, trials: int, rng) -> bool:
    """Whether a server that chooses who dropped and ``collusion`` colluders finds honest survivors that pass every
    contributor's check (each has ``threshold`` of its neighbours among the uploads) yet fall apart (the server would
    learn the sum of one part alone): two gaps cut in the ring, colluders inside them, and random choices."""
    ids = [f"c{i:03d}" for i in range(n)]
    graph = neighbour_graph(ids, "r", degree)
    ring = ring_order(ids, "r")
    h = degree // 2
    candidates = []
    for arc in range(1, n - 2 * h):             # two gaps of h dropped places, an arc of honest survivors between
        for gap in range(h, h + 3):
            cut = [(k % n) for k in list(range(0, gap)) + list(range(gap + arc, 2 * gap + arc))]
            if len(set(cut)) < 2 * gap or 2 * gap + arc >= n:
                continue
            for colluders in itertools.combinations(cut, min(collusion, len(cut))):
                up = (set(range(n)) - set(cut)) | set(colluders)
                candidates.append(({ring[k] for k in up}, {ring[k] for k in colluders}))
    for _ in range(trials):
        up = set(rng.choice(ids, int(rng.integers(n // 2, n)), replace=False))
        candidates.append((up, set(rng.choice(sorted(up), collusion, replace=False))))
    for up, colluders in candidates:
        honest = up - colluders
        if len(honest) < 2:
            continue
        if all(sum(1 for w in graph[u] if w in up) >= threshold for u in honest) and _components(honest, graph) > 1:
            return True
    return False


def test_honest_survivors_that_pass_the_threshold_cannot_be_split():
    """The plan's threshold, degree/2 + t + 1, leaves the server no smaller sum than all honest survivors'; the
    majority threshold of a plain SecAgg+ graph (degree/2 + 1) lets a server with two colluders cut the ring."""
    rng = np.random.default_rng(0)
    for n, d, t in ((24, 8, 2), (30, 10, 2), (26, 6, 3)):
        assert not _split_found(n, d, t, threshold_of(d, t), 300, rng)
        assert _split_found(n, d, t, d // 2 + 1, 300, rng)


def _two_views_confirmed(plan, threshold: int) -> bool:
    """Whether a server can make one contributor's signature check (:meth:`SecureContributor._confirmed`, the real
    one: ``threshold`` valid signatures of its own neighbours over its own set) pass for two different sets of
    uploads: its honest neighbours each sign one of the two (every split tried), its ``t`` colluding neighbours
    sign both, and every other contributor of the round signs both (a server can gather those for any set)."""
    from types import SimpleNamespace

    n, d, t = plan.n, plan.degree, plan.collusion
    ids = [f"c{i:03d}" for i in range(n)]
    keys = {i: new_signing_key() for i in ids}
    graph = neighbour_graph(ids, "r", d)
    me = ids[0]
    mates = graph[me]
    colluders, honest = mates[:t], mates[t:]
    views = [frozenset(ids), frozenset(ids[:-1])]       # two sets of uploads: the second drops one contributor
    signed = {k: {i: sign(keys[i], ss.consistency_message("r", 0, v)) for i in ids} for k, v in enumerate(views)}
    me_ = SimpleNamespace(graph=graph, members={i: signing_public(k).hex() for i, k in keys.items()},
                          round_id="r", me=me, T=threshold)
    for a in range(len(honest) + 1):       # a honest neighbours sign the first set, the others the second
        sides = [set(honest[:a]), set(honest[a:])]
        passed = 0
        for k, view in enumerate(views):
            sigs = {i: signed[k][i] for i in ids if i not in mates or i in colluders or i in sides[k]}
            try:
                cs.SecureContributor._confirmed(me_, 0, view, sigs)
                passed += 1
            except ServerLied:
                pass
        if passed == 2:
            return True
    return False


@pytest.mark.parametrize("n, dropouts, collusion", [(30, 2, 1), (40, 4, 2), (60, 6, 3)])
def test_two_views_cannot_both_gather_the_threshold_of_signatures(n, dropouts, collusion):
    """The bound the unmasking relies on, derived from a plan: a contributor reveals only after ``T`` valid
    signatures of its own neighbours over its own set; honest contributors sign one set per step and the ``t``
    colluders sign anything, so two sets both pass one contributor's check only if ``2 T - t <= d``. The plan's
    threshold keeps ``T > (d + t) / 2`` (the same bound keeps the server from holding both secrets of anyone:
    ``2 (T - c) > d - c`` for ``c <= t`` colluding neighbours, each honest one revealing one secret). Signatures of
    contributors that are not the checker's neighbours count for nothing. One less than the bound, the real check
    passes two sets: the search can fail."""
    plan = SecureSumPlan(1.0, 1e-5, n, dropouts, 10, collusion)
    d, t, T = plan.degree, plan.collusion, plan.threshold
    assert 2 * T - t > d and all(2 * (T - c) > d - c for c in range(t + 1))
    assert not _two_views_confirmed(plan, T)
    assert _two_views_confirmed(plan, (d + t) // 2)      # the largest threshold with 2 T - t <= d










LOW_ORDER = ["00" * 32, "01" + "00" * 31, "ec" + "ff" * 30 + "7f",
             "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"]






def test_low_order_and_malformed_keys_are_refused():
    good = public_key(new_private_key()).hex()
    assert valid_x25519(good)
    for k in [*LOW_ORDER, good.upper(), good[:-2], 42, None]:
        assert not valid_x25519(k), k
    b = [seed_commitment("r", "c", p, bytes(32)) for p in range(2)]
    s = [public_key(new_private_key()).hex() for _ in range(2)]
    assert ss.check_keys({"c": good, "s": s, "b": b}) is None
    assert "full order" in ss.check_keys({"c": LOW_ORDER[1], "s": s, "b": b})
    assert "twice" in ss.check_keys({"c": good, "s": [good, s[1]], "b": b})
    assert ss.check_keys({"c": good, "s": s}) is not None






def test_shares_are_checked_as_hex_below_the_prime():
    from dptopic.protocol.secure_sum import shamir

    assert ss.check_share("00" * shamir.SHARE_BYTES)
    assert not ss.check_share("zz" * shamir.SHARE_BYTES) and not ss.check_share("00" * 10)
    assert not ss.check_share(format(shamir.PRIME, f"0{ss.SHARE_HEX}x"))


def test_randomized_rounding_is_unbiased_and_within_its_norm_bound():
    from dptopic.accounting.skellam import rounded_norms

    rng = np.random.default_rng(0)
    x = rng.random(50)
    x /= np.linalg.norm(x)
    bound = rounded_norms(64.0, 50)[0]
    qs = np.array([quantize(x, 64.0, bound, rng) for _ in range(400)])
    assert np.all(np.linalg.norm(qs, axis=1) <= bound)
    assert np.abs(qs.mean(axis=0) - 64 * x).max() < 5 * 0.5 / math.sqrt(400)
















