"""``dptopic.protocol.secure_sum.default`` and the modules it builds on (``plan``, ``graph``, ``crypto``, ``messages``,
``ring``): the plan, the graph and its threshold, the signatures, the keys, the masks and the server's unmasking (with
the contributor's side of each step, ``dptopic.contributor.secure_sum``)."""
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
from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.secure_sum import default as ss
from dptopic.protocol.secure_sum.crypto import (
    _VERIFIED,
    LOW_ORDER_U,
    P25519,
    agree,
    hkdf,
    new_private_key,
    new_signing_key,
    public_key,
    seed_commitment,
    sign,
    signing_public,
    valid_x25519,
    verify,
)
from dptopic.protocol.secure_sum.graph import (
    _GRAPH_MEMO,
    LIVENESS_TARGET,
    holder_index,
    neighbour_graph,
    neighbours_short,
    ring_order,
    threshold_of,
)
from dptopic.protocol.secure_sum.messages import PROTOCOL
from dptopic.protocol.secure_sum.plan import DEFAULT_MAX_WORDS, MAX_INFLATION, MAX_WORDS, WRAP_SHARE, SecureSumPlan
from dptopic.protocol.secure_sum.ring import (
    from_ring,
    matrix_to_triangle,
    ring_dtype,
    ring_sum,
    to_ring,
    triangle_size,
    triangle_to_matrix,
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


def test_the_plan_chooses_its_ring_and_scale():
    """32 bits while they cost at most 1% of noise; 64 bits beyond, where a million contributors get the central
    figure's noise (1.67 times it modulo 2^32, over all V = 1,000 words) and ten million a plan at all (refused modulo
    2^32)."""
    small = SecureSumPlan(1.0, 1e-5, 1000, 100, 1000)
    assert small.bits == 32 and small.scale == 2 ** 16 and small.noise_inflation <= MAX_INFLATION
    million = SecureSumPlan(1.0, 1e-5, 10 ** 6, 10 ** 5, 1000)
    assert million.bits == 64 and million.noise_inflation <= 1.05
    assert million.calibrated()[1] <= million.delta * WRAP_SHARE
    old = SecureSumPlan(1.0, 1e-5, 10 ** 6, 10 ** 5, 1000, bits=32, max_words=MAX_WORDS)
    assert old.scale == 2 ** 8 and old.noise_inflation == pytest.approx(1.67, abs=0.01)
    assert million.mu_shares[1] / million.scale ** 2 < old.mu_shares[1] / old.scale ** 2 / 2.5
    ten = SecureSumPlan(1.0, 1e-5, 10 ** 7, 10 ** 6, 1000)
    assert ten.bits == 64 and ten.noise_inflation <= 1.05
    with pytest.raises(DPTopicError, match="wrap-around"):
        SecureSumPlan(1.0, 1e-5, 10 ** 7, 10 ** 6, 1000, bits=32, max_words=MAX_WORDS).calibrated()
    card = million.to_dict()        # what the card's parameters and /v1/config state
    assert card["modulus_bits"] == 64 and card["noise_inflation"] <= 1.05 and "wrap_probability" in card
    assert SecureSumPlan.from_dict(card) == million
    with pytest.raises(DPTopicError, match="scale"):
        SecureSumPlan.from_dict({**card, "scale": 256.0})
    with pytest.raises(ParameterError, match="bits"):
        SecureSumPlan(1.0, 1e-5, 1000, 100, 1000, bits=16)


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


def test_the_plan_survives_its_dropouts_and_refuses_what_it_cannot():
    plan = SecureSumPlan(1.0, 1e-5, 3000, 300, 200)
    d, T = plan.degree, plan.threshold
    assert d % 2 == 0 and T == d // 2 + plan.collusion + 1 and T <= d
    assert neighbours_short(3000, 300, d, T) <= LIVENESS_TARGET
    assert neighbours_short(3000, 300, d - 2, threshold_of(d - 2, plan.collusion)) > LIVENESS_TARGET
    assert SecureSumPlan(1.0, 1e-5, 3000, 900, 200).degree > d        # 30% dropping out needs more neighbours
    with pytest.raises(ParameterError, match="no neighbour graph survives"):
        SecureSumPlan(1.0, 1e-5, 40, 15, 50, collusion=6)
    with pytest.raises(ParameterError, match="epsilon"):
        SecureSumPlan(1e308, 1e-5, 40, 4, 50)


def test_the_noise_leaves_out_the_colluders_and_the_persons_own_share():
    plan = SecureSumPlan(1.0, 1e-5, 40, 4, 50, collusion=3)
    assert plan.honest == 40 - 4 - 3 - 1
    eps = [e for _, e in plan.epsilon_by_colluders()]
    assert eps[-1] == pytest.approx(1.0, rel=1e-3) and all(a < b for a, b in zip(eps, eps[1:]))


def test_noise_shares_add_up_to_the_planned_noise():
    from dptopic.mechanisms.skellam import skellam_share

    plan = SecureSumPlan(1.0, 1e-5, 40, 4, 50, collusion=3)
    rng = np.random.default_rng(0)
    total = sum(skellam_share(np.zeros(20_000, np.int64), plan.mu_shares[1], plan.scale, rng)[0]
                for _ in range(plan.honest))
    var = 2 * plan.calibrated()[0][1]
    assert abs(total.var() / var - 1) < 5 * math.sqrt(2 / 20_000)


def test_a_stated_plan_is_recomputed_and_a_tampered_one_refused():
    plan = SecureSumPlan(1.0, 1e-5, 40, 4, 50, collusion=3)
    assert SecureSumPlan.from_dict(plan.to_dict()) == plan
    for key, value in (("threshold", plan.threshold - 1), ("degree", 4), ("mu_shares", [1.0, 1.0]),
                       ("protocol", "dptopic-secure-sum/1"), ("collusion", "3"), ("epsilon", float("nan"))):
        with pytest.raises(DPTopicError):
            SecureSumPlan.from_dict({**plan.to_dict(), key: value})
    with pytest.raises(DPTopicError, match="not an object"):
        SecureSumPlan.from_dict([1, 2])


LOW_ORDER = ["00" * 32, "01" + "00" * 31, "ec" + "ff" * 30 + "7f",
             "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"]


def _encode(u: int) -> str:
    return u.to_bytes(32, "little").hex()


def test_the_low_order_list_is_exactly_the_keys_whose_agreement_is_zero():
    """Every listed point, in each encoding X25519 reads as it (plus p below 2^255, the ignored high bit set), agrees
    to all zeros (cryptography refuses it); a random key does not."""
    for u in LOW_ORDER_U:
        for enc in {u, u + P25519 if u + P25519 < 2 ** 255 else u, u | (1 << 255)}:
            with pytest.raises(DPTopicError):
                agree(new_private_key(), bytes.fromhex(_encode(enc)))
            assert not valid_x25519(_encode(enc))
    for _ in range(20):
        k = public_key(new_private_key())
        agree(new_private_key(), k)
        assert valid_x25519(k.hex())


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


def test_hkdf_is_rfc_5869s():
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    for material, info in ((b"k" * 32, b"dptopic"), (bytes(32), b""), (b"\x01" * 32, b"x" * 200)):
        want = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(material)
        assert hkdf(material, info) == want


def test_signatures_verify_only_their_own_message_and_key():
    key = new_signing_key()
    pub = signing_public(key)
    msg = ss.consistency_message("r", 0, ["a", "b"])
    sig = sign(key, msg)
    assert verify(pub, sig, msg)
    assert not verify(pub, sig, ss.consistency_message("r", 1, ["a", "b"]))       # another step
    assert not verify(pub, sig, ss.consistency_message("r", 0, ["a"]))           # another set
    assert not verify(signing_public(new_signing_key()), sig, msg)          # another key
    flipped = sig[:-2] + format(int(sig[-2:], 16) ^ 1, "02x")      # one bit of the last byte changed
    assert not verify(pub, flipped, msg) and not verify(pub, "zz", msg) and not verify(pub, None, msg)


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


def test_triangle_round_trip_keeps_the_frobenius_norm():
    rng = np.random.default_rng(1)
    m = rng.random((6, 6))
    m = m + m.T
    v = matrix_to_triangle(m)
    assert np.isclose(np.linalg.norm(v), np.linalg.norm(m))
    assert np.allclose(triangle_to_matrix(v, 6), m)


def test_the_graph_is_regular_and_symmetric():
    ids = [f"c{i:03d}" for i in range(200)]
    g = neighbour_graph(ids, "r", 20)
    assert all(len(v) == 20 for v in g.values())
    assert all(u in g[v] for u in ids for v in g[u])
    assert neighbour_graph(ids[:10], "r", 20) == {i: [j for j in ids[:10] if j != i] for i in ids[:10]}


def _whole_graph(ids, round_id, degree):
    """The whole graph built row by row from the ring, as the protocol states it (the reference)."""
    ring = sorted(ids, key=lambda i: hashlib.sha256(f"{PROTOCOL}/ring/{round_id}/{i}".encode()).digest())
    n, h = len(ring), degree // 2
    if degree >= n - 1:
        return {i: sorted(j for j in ids if j != i) for i in ids}
    return {i: sorted(ring[(k + o) % n] for o in range(-h, h + 1) if o != 0) for k, i in enumerate(ring)}


@pytest.mark.parametrize("n,degree", [(9, 8), (9, 20), (50, 6), (301, 52)])
def test_one_contributors_rows_equal_the_whole_graphs_rows(n, degree):
    ids = [f"p{i:04d}" for i in range(n)]
    whole = _whole_graph(ids, "round-x", degree)
    _GRAPH_MEMO.clear()
    g = neighbour_graph(list(reversed(ids)), "round-x", degree)
    me = ids[n // 3]
    assert g[me] == whole[me]
    assert all(g[v] == whole[v] for v in g[me])
    assert g.rows_computed() == min(n, len(whole[me]) + 1)     # a contributor's rows only, not the whole graph
    assert dict(g.items()) == whole and len(g) == n and sorted(g) == sorted(ids)
    assert me in g and "stranger" not in g and g.get("stranger") is None
    with pytest.raises(KeyError):
        g["stranger"]


def test_holder_indices_are_the_sorted_places_made_once_and_read_only():
    ids = [f"p{i:03d}" for i in range(40)]
    roster = {i: {} for i in reversed(ids)}
    assert dict(holder_index(roster)) == {i: k + 1 for k, i in enumerate(ids)} == dict(holder_index(ids))
    index = holder_index(roster)
    assert holder_index(roster) is index          # every contributor a process plays indexes the same ids
    with pytest.raises(TypeError):
        index["p000"] = 7


def test_a_plan_caps_the_words_of_its_second_sum_and_states_the_cap():
    """``max_words`` bounds the second sum's triangle (default 256 words), is checked, stated in ``/v1/config`` and
    read back; a plan over fewer words than the cap sums them all; the smaller triangle needs a little less noise."""
    plan = SecureSumPlan(1.0, 1e-5, 100_000, 10_000, 1000)
    assert plan.max_words == DEFAULT_MAX_WORDS == 256 and plan.max_kept_words == 256
    assert plan.dims == (1001, triangle_size(256)) and plan.upload_bytes(plan.dims[1]) == 4 * 32_896
    assert plan.bits == 32 and uncapped_bits(plan) == 64     # the smaller triangle rounds in 2^32 at 1% inflation
    uncapped = SecureSumPlan(1.0, 1e-5, 100_000, 10_000, 1000, max_words=MAX_WORDS)
    assert uncapped.max_kept_words == 1000 and plan.mu_shares[1] < uncapped.mu_shares[1]
    assert SecureSumPlan(1.0, 1e-5, 100, 10, 50).max_kept_words == 50
    stated = plan.to_dict()
    assert stated["max_words"] == 256 and SecureSumPlan.from_dict(stated) == plan
    older = {**uncapped.to_dict(), "max_words": MAX_WORDS}       # a server of the first version stated 2,000
    assert SecureSumPlan.from_dict(older) == uncapped
    with pytest.raises(DPTopicError, match="noise shares differ"):      # a cap changes the noise a contributor checks
        SecureSumPlan.from_dict({**stated, "max_words": 300})
    for bad in (1, 2001, 2.5, True, "256"):
        with pytest.raises(ParameterError, match="max_words"):
            SecureSumPlan(1.0, 1e-5, 100, 10, 50, max_words=bad)


def uncapped_bits(plan) -> int:
    """The ring the same plan chooses over every word (``max_words`` at :data:`~MAX_WORDS`)."""
    return SecureSumPlan(plan.epsilon, plan.delta, plan.n, plan.dropouts, plan.vocab_size,
                            max_words=MAX_WORDS).bits


def test_a_verified_signature_is_remembered_by_its_bytes_and_nothing_else_passes():
    """A process verifies the same (key, signature, message) once; a changed message, key or signature is verified
    afresh and refused, and an invalid triple is never remembered."""
    key, other = new_signing_key(), new_signing_key()
    pub = signing_public(key)
    sig = sign(key, b"hello")
    _VERIFIED.clear()
    assert verify(pub, sig, b"hello") and len(_VERIFIED) == 1
    assert verify(pub, sig, b"hello") and len(_VERIFIED) == 1
    assert not verify(pub, sig, b"hellO")
    assert not verify(signing_public(other), sig, b"hello")
    assert not verify(pub, sign(other, b"hello"), b"hello")
    assert not verify(pub + b"\x00", sig, b"hello") and not verify(pub[:31], sig, b"hello")
    assert len(_VERIFIED) == 1
