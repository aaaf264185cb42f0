"""``dptopic.mechanisms.rrp``."""
import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from dptopic.accounting.fedlda import delta0, effective_epsilon, eta, subset_inclusion, subset_size
from dptopic.mechanisms import replacement_table, rrp_perturb
from dptopic.mechanisms import rrp as rrp_module
from dptopic.mechanisms.rrp import subset_frequencies, subset_report
from helpers import exact_exp, max_ratio, subset_law

TWO53 = 1 << 53


# ------------------------------------------------------------------ 3. RRP's realised replacement probability
def _exp_floor(x) -> Fraction:
    """A lower bound on e^x (80 significant digits, rounded down)."""
    with localcontext() as ctx:
        ctx.prec, ctx.rounding = 80, ROUND_FLOOR
        return Fraction(Decimal(float(x)).exp())


def _run(monkeypatch, words, Q, eps, **kw):
    """rrp_perturb with the kernel's arguments captured."""
    seen = {}
    kernel = rrp_module.rrp_replace

    def spy(words, rows, kept_words, kept_cdf, kept_len, kept_mask, eta_, exclude_self, rare_always, *rest):
        seen.update(cdf=kept_cdf.copy(), words=kept_words.copy(), length=kept_len.copy(), mask=kept_mask.copy(),
                    eta=eta_, exclude_self=exclude_self, rare_always=rare_always)
        return kernel(words, rows, kept_words, kept_cdf, kept_len, kept_mask, eta_, exclude_self, rare_always, *rest)

    monkeypatch.setattr(rrp_module, "rrp_replace", spy)
    _, event = rrp_module.rrp_perturb(words, Q, eps, rng=np.random.default_rng(0), **kw)
    return seen, event


def _realised_matrix(seen, V):
    """The kernel's exact output distribution (row 0) for each input word and padding (last row): a coin
    u = k / 2^53 keeps a word when u >= eta; a replacement is index i when cdf[i-1] <= u < cdf[i]."""
    eta_r = Fraction(math.ceil(Fraction(seen["eta"]) * TWO53), TWO53)
    m = int(seen["length"][0])
    ups = [0] + [math.ceil(Fraction(float(c)) * TWO53) for c in seen["cdf"][0, :m]]
    q = [Fraction(0)] * V
    for i in range(m):
        q[int(seen["words"][0, i])] += Fraction(ups[i + 1] - ups[i], TWO53)
    assert sum(q) == 1
    rows = []
    for x in list(range(V)) + [-1]:
        kept = x >= 0 and (bool(seen["mask"][0, x]) or not seen["rare_always"])
        keep = (1 - eta_r) if kept else Fraction(0)
        replace = 1 - keep
        if seen["exclude_self"] and x >= 0:
            draw = [Fraction(0) if o == x else q[o] / (1 - q[x]) for o in range(V)]
        else:
            draw = q
        rows.append([replace * draw[o] + (keep if o == x else 0) for o in range(V)])
    return eta_r, rows


def _worst_ratio(rows):
    worst = Fraction(1)
    for o in range(len(rows[0])):
        col = [r[o] for r in rows]
        if max(col) > 0:
            assert min(col) > 0, "an output one input can give and another never: an unbounded ratio"
            worst = max(worst, max(col) / min(col))
    return worst


EPS_GRID = [0.25, 0.375, 0.75, 0.875, 1.5, 1.875, 2.125, 2.5, 2.875, 3.125, 4.5]


@pytest.mark.parametrize("eps", EPS_GRID)
def test_none_rule_realised_ratio_is_within_e_eps_exactly(monkeypatch, eps):
    """k-ary randomized response over 4 words (the uniform CDF is exact in binary): the float eta handed to the
    kernel realised a keep probability above 1 - eta, and the ratio exp(eps) (1 + ~1e-16) in these settings."""
    V = 4
    words = np.array([0, 1, 2, 3, -1], dtype=np.int32)
    seen, event = _run(monkeypatch, words, np.ones((1, V)), eps, delta=0.1, exclusion="none")
    _, rows = _realised_matrix(seen, V)
    assert _worst_ratio(rows) <= _exp_floor(event.epsilon)
    assert event.epsilon == eps


@pytest.mark.parametrize("variant", ["another", "coincide"])
@pytest.mark.parametrize("exclusion", ["floor", "tail"])
@pytest.mark.parametrize("eps", [0.125, 0.375, 0.5, 1.0, 1.75, 2.25, 3.0, 3.875, 4.625, 5.25, 6.125])
def test_floor_and_tail_realised_eta_is_never_below_eta(monkeypatch, variant, exclusion, eps):
    """Theorem 1's eta makes the kept-word ratio exactly e^eps at the floor delta0: (1 - eta) / (eta delta0) = e^eps
    ("another") or e^eps - 1 ("coincide"). The realised replacement probability must be at least that eta; the float
    eta fell below it by up to one part in 2^53 in about half of these settings."""
    V = 4
    words = np.array([0, 1, 2, 3, -1], dtype=np.int32)
    seen, event = _run(monkeypatch, words, np.ones((1, V)), eps, delta=0.1, variant=variant, exclusion=exclusion)
    eta_r, rows = _realised_matrix(seen, V)
    d0 = Fraction(delta0(0.1))              # the floor the replacement table applies (a float)
    bound = _exp_floor(eps) - (1 if variant == "coincide" else 0)
    assert (1 - eta_r) / (eta_r * d0) <= bound
    assert abs(eta_r - Fraction(eta(eps, 0.1, 1.0, variant))) <= Fraction(4, TWO53)   # the float eta's rounding
    if exclusion == "floor":
        # the whole realised mechanism on a small vocabulary is within the event's epsilon, exactly
        assert _worst_ratio(rows) <= _exp_floor(event.epsilon)
        if variant == "another":                         # the ratios a larger eta raises are charged by the event
            assert eta_r / (1 - eta_r) <= _exp_floor(event.epsilon) and 1 / eta_r <= _exp_floor(event.epsilon)


# ---------------------------------------------------------------- FedLDA: the simulated keep probability
def _captured_keep_probability(monkeypatch, V, eps):
    import dptopic.mechanisms.rrp as rrp

    seen, kernel = [], rrp.subset_select

    def spy(words, V_, s, p_in, state, out):
        seen.append(p_in)
        return kernel(words, V_, s, p_in, state, out)

    monkeypatch.setattr(rrp, "subset_select", spy)
    sets, event = rrp.subset_report(np.array([0, 1, -1], dtype=np.int32), V, eps, np.random.default_rng(0))
    assert sets.shape[0] == 3 and event.epsilon == eps
    return seen[0]


@pytest.mark.parametrize("V,eps", [(2, 1.0), (5, 10.0), (5, 30.0), (6, 30.0), (5, 40.0), (7, 100.0)])
def test_fedlda_simulated_keep_probability_never_exceeds_the_claimed_one(monkeypatch, V, eps):
    """The compiled sampler keeps the true word when a multiple of 2^-53 is below p_in. With p_in the float A it kept
    it with probability ceil(A 2^53)/2^53, above A: at eps = 30 (V = 5) the realised ratio was e^eps (1 + 1.3e-4),
    and at eps = 40 A rounds to 1.0, so the true word was always in the report (an unbounded ratio behind a pure
    claim of 40). p_in is now floor(A 2^53)/2^53, the secure sampler's coin."""
    from dptopic.accounting.fedlda import subset_size

    p_in = _captured_keep_probability(monkeypatch, V, eps)
    assert (p_in * 2.0 ** 53).is_integer()                         # so `uniform < p_in` realises exactly p_in
    s = subset_size(eps, V)
    e = exact_exp(min(eps, 700.0))
    exact_a = s * e / (s * e + V - s)
    assert Fraction(p_in) <= exact_a
    laws = [subset_law(V, s, Fraction(p_in), x) for x in range(-1, V)]
    assert max_ratio(laws) <= e


# ------------------------------------------------------------------ the replacement rules (Wang, Tong & Shi 2020)
def _mechanism_matrix(table, row, V, eta_, another, rare_always):
    """Exact output distribution M[x, o] of one entry, inputs x in V plus padding (last row)."""
    kept_words, _, kept_len, kept_mask, kept_prob = table
    q = np.zeros(V)
    q[kept_words[row, :kept_len[row]]] = kept_prob[row, :kept_len[row]]
    M = np.zeros((V + 1, V))
    for x in range(V + 1):
        rare = x == V or (not kept_mask[row, x] and rare_always)
        if rare:
            M[x] = q
            continue
        repl = q.copy()
        if another:
            repl[x] = 0.0
            repl /= repl.sum()
        M[x] = eta_ * repl
        M[x, x] += 1 - eta_
    return M


def _worst_matrix_ratio(M):
    worst = 1.0
    for o in range(M.shape[1]):
        col = M[:, o]
        if col.max() > 0:
            worst = max(worst, math.inf if col.min() == 0 else col.max() / col.min())
    return worst


@pytest.mark.parametrize("variant", ["another", "coincide"])
@pytest.mark.parametrize("eps", [5.0, 7.5, 2.0])
def test_worst_likelihood_ratio_is_at_most_e_eps(variant, eps):
    rng = np.random.default_rng(3)
    V = 12
    # flat, Zipf-like and very skewed weights: the floor and cap rules must hold for all of them
    Qs = np.vstack([np.ones(V), 1.0 / np.arange(1, V + 1), rng.dirichlet(np.full(V, 0.1)),
                    np.r_[1.0, np.full(V - 1, 1e-6)]])
    table = replacement_table(Qs, eps, 0.1, 1.0, variant, "floor")
    e = eta(eps, 0.1, 1.0, variant)
    bound = math.exp(effective_epsilon(eps, e, variant))
    for r in range(Qs.shape[0]):
        M = _mechanism_matrix(table, r, V, e, variant == "another", True)
        np.testing.assert_allclose(M.sum(axis=1), 1.0)
        assert _worst_matrix_ratio(M) <= bound * (1 + 1e-9)
    if eps >= 5:
        assert bound == pytest.approx(math.exp(eps))


def test_tail_exclusion_is_not_pure_ldp():
    """The poster's rule reports rare words as themselves: an unbounded ratio (hence its delta)."""
    V = 12
    Q = (1.0 / np.arange(1, V + 1) ** 2)[None, :]
    table = replacement_table(Q, 5.0, 0.1, 1.0, "another", "tail")
    assert table[2][0] < V
    M = _mechanism_matrix(table, 0, V, eta(5.0, 0.1), True, False)
    assert _worst_matrix_ratio(M) == math.inf


@pytest.mark.parametrize("variant", ["another", "coincide"])
def test_replacement_rate_is_eta_and_never_an_excluded_word(variant):
    rng = np.random.default_rng(7)
    V, n = 80, 200_000
    Q = rng.dirichlet(np.full(V, 0.3), size=3)
    table = replacement_table(Q, 5.0, 0.1, 1.0, variant)
    kept = table[3]
    rows = rng.integers(0, 3, n)
    words = rng.integers(0, V, n).astype(np.int32)
    flags = np.empty(n, dtype=np.uint8)
    out, ev = rrp_perturb(words, Q, 5.0, 0.1, rng=rng, rows=rows, variant=variant, table=table, replaced=flags)
    e = eta(5.0, 0.1, 1.0, variant)
    k = kept[rows, words]
    rate, m = flags[k].mean(), k.sum()
    assert abs(rate - e) <= 4 * math.sqrt(e * (1 - e) / m)
    assert np.all(flags[~k] == 1)                      # rare words are always replaced (floor rule)
    assert np.all(kept[rows, out])                     # a replacement is never an excluded word
    if variant == "another":
        assert np.all((out != words)[flags == 1])      # "another" word, never the same one
    assert ev.epsilon == pytest.approx(5.0)


def test_another_word_terminates_on_a_degenerate_distribution():
    Q = np.array([[1.0, 0.0, 0.0, 0.0]])
    words = np.zeros(1000, dtype=np.int32)
    out, _ = rrp_perturb(words, Q, 5.0, 0.1, rng=np.random.default_rng(0), exclusion="tail")
    assert np.all(out[out != 0] < 4) and np.any(out != 0)


# ------------------------------------------------------------------ the subset rule's frequency estimator
def test_frequency_estimator_is_unbiased_within_standard_error():
    V, eps, n = 30, 2.0, 40_000
    rng = np.random.default_rng(3)
    f = rng.dirichlet(np.full(V, 0.5))
    words = rng.choice(V, n, p=f).astype(np.int32)
    sets, event = subset_report(words, V, eps, rng)
    assert sets.shape == (n, subset_size(eps, V)) and event.epsilon == eps
    est = subset_frequencies(sets, V, eps)
    a, b = subset_inclusion(eps, V, sets.shape[1])
    share = f * a + (1 - f) * b
    se = np.sqrt(share * (1 - share) / n) / (a - b)
    assert np.all(np.abs(est - f) <= 4.5 * se)
    assert abs(est.sum() - 1.0) < 0.05
