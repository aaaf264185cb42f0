"""FedLDA calculators (Wang, Tong & Shi, AAAI 2020 poster, Theorems 1 and 2) and the RRP privacy event.

The poster's Theorem 1 sets the perturbation probability from a failure rate ``delta`` and a Zipf
exponent ``gamma``: ``delta0 = delta - (delta**(-1/gamma) + 1)**(-gamma)`` is the smallest probability a
kept (non-rare) word can have when the tail of mass ``delta`` is excluded. The printed formula for
``eta`` is garbled; :func:`eta` implements the two readings that make the randomizer exactly
``epsilon``-LDP (derivation in ``docs/fedlda.md``):

* ``variant="another"`` (default): a perturbed word is always a *different* word,
  ``eta = 1 / (delta0 e^eps + 1)``;
* ``variant="coincide"``: the replacement may equal the true word, ``eta = 1 / (1 + delta0 (e^eps - 1))``.

The sound default ``exclusion="none"`` excludes no word: a reported word is kept with probability
``1 - eta`` and otherwise replaced by a uniform draw over the whole vocabulary (k-ary randomized
response; Warner 1965, Kairouz, Oh & Viswanath 2016), ``eta = V / (e^eps + V - 1)`` (:func:`krr_eta`), and
the client perturbs its entries once and reuses them in every round (Erlingsson, Pihur & Korolova 2014,
"permanent randomized response"), so a user's cost does not grow with the rounds (:func:`user_spend`).
"""
from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal, localcontext

import numpy as np

from ..errors import DPTopicError, ParameterError
from .events import EPSILON_MAX, ApproxDPEvent, PureDPEvent
from .ledger import PrivacyLedger

VARIANTS = ("another", "coincide")
EXCLUSIONS = ("none", "floor", "tail")
KRR = ("subset selection over the words the reports range over (the whole vocabulary, or its first report_words;"
       " Wang et al. 2016; Ye & Barg 2018; one word: k-ary randomized"
       " response, Kairouz, Oh & Viswanath 2016), pure eps-LDP per entry, padding included; randomized once and"
       " reused in every round (Erlingsson, Pihur & Korolova 2014); see docs/fedlda.md")
THEOREM1 = "Wang, Tong & Shi 2020 (FedLDA poster), Theorem 1"


def _num(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and not math.isnan(x)


def check_epsilon(epsilon) -> float:
    if not (_num(epsilon) and epsilon > 0):
        raise DPTopicError(f"invalid epsilon={epsilon!r}: must be a number > 0 (privacy budget per reported word).")
    return float(epsilon)


def check_delta(delta) -> float:
    if not (_num(delta) and 0 < delta < 1):
        raise DPTopicError(f"invalid delta={delta!r}: must be a number in (0, 1) (the excluded rare-word mass, e.g. 0.1).")
    return float(delta)


def check_gamma(gamma) -> float:
    if not (_num(gamma) and gamma >= 1 and math.isfinite(gamma)):
        raise DPTopicError(f"invalid gamma={gamma!r}: must be a finite number >= 1 (the Zipf exponent of Theorem 1).")
    return float(gamma)


def delta0(delta: float, gamma: float = 1.0) -> float:
    """``delta0 = delta - (delta**(-1/gamma) + 1)**(-gamma)`` (Theorem 1): the floor on a kept word's probability."""
    delta, gamma = check_delta(delta), check_gamma(gamma)
    return float(delta - (delta ** (-1.0 / gamma) + 1.0) ** (-gamma))


def eta(epsilon: float, delta: float, gamma: float = 1.0, variant: str = "another") -> float:
    """Perturbation probability that makes one RRP report ``epsilon``-LDP (see module docstring)."""
    epsilon = check_epsilon(epsilon)
    if variant not in VARIANTS:
        raise DPTopicError(f"invalid variant={variant!r}: must be one of {', '.join(VARIANTS)}.")
    d0 = delta0(delta, gamma)
    if epsilon > 700:  # e^eps overflows; eta underflows to 0
        return 0.0
    if variant == "another":
        return float(1.0 / (d0 * math.exp(epsilon) + 1.0))
    return float(1.0 / (1.0 + d0 * math.expm1(epsilon)))


def krr_eta(epsilon: float, vocab_size: int) -> float:
    """Replacement probability of the ``"none"`` rule: ``V / (e^eps + V - 1)``.

    A word is kept with probability ``1 - eta`` and otherwise replaced by a uniform draw over all ``V``
    words (which may be the word itself), so it is reported as itself with probability
    ``e^eps / (e^eps + V - 1)`` and as any given other word with ``1 / (e^eps + V - 1)``: the ratio is
    exactly ``e^eps``. A padding entry is always replaced (uniform), ratio ``<= e^eps`` against any word.
    """
    epsilon = check_epsilon(epsilon)
    V = int(vocab_size)
    if V < 2:
        raise DPTopicError(f"a vocabulary of {V} word(s) cannot be randomized: give at least two words.")
    if epsilon > 700:
        return 0.0
    return float(V / (math.expm1(epsilon) + V))


COIN_BITS = 53
"""The RRP kernel's coin is a uniform multiple of 2^-53 in [0, 1): an entry is kept when the coin is at least the
replacement probability it is handed, so it realises the multiple of 2^-53 at or above that probability."""


def realised_eta(epsilon: float, delta: float = 0.1, gamma: float = 1.0, variant: str = "another",
                 exclusion: str = "floor", vocab_size: int | None = None) -> float:
    """The replacement probability :func:`~dptopic.mechanisms.rrp.rrp_perturb` realises: ``ceil(eta 2^53) / 2^53``,
    ``eta`` computed with 60 significant digits (:func:`eta` from the floating-point ``delta0`` the replacement table
    uses, or :func:`krr_eta` from ``vocab_size`` with ``exclusion="none"``). Never below ``eta``: a larger
    replacement probability only lowers the ratio ``e^eps`` bounds (a word reported as itself against another word
    reported as it), where the float ``eta`` compared with the coin realised up to one part in 2^53 less, and at
    ``epsilon > 700``, where ``eta`` underflows to 0, never replaced a kept word (an unbounded ratio). The ratios
    it raises instead (``eta / (1 - eta)`` of ``variant="another"``) are charged by :func:`rrp_event`, which
    computes :func:`effective_epsilon` from this value."""
    epsilon = check_epsilon(epsilon)
    if exclusion == "none":
        V = int(vocab_size) if vocab_size is not None else 0
        if V < 2:
            raise DPTopicError(f"a vocabulary of {V} word(s) cannot be randomized: give at least two words.")
    else:
        if variant not in VARIANTS:
            raise DPTopicError(f"invalid variant={variant!r}: must be one of {', '.join(VARIANTS)}.")
        d0 = delta0(delta, gamma)
    if math.isinf(epsilon):
        return 0.0
    with localcontext() as ctx:
        ctx.prec = 60
        # beyond e^10000 every eta is below 2^-53 (delta0 is a positive float), so it realises 2^-53 either way
        e = Decimal(min(epsilon, 1e4)).exp()
        if exclusion == "none":
            x = V / (e + V - 1)
        elif variant == "another":
            x = 1 / (Decimal(d0) * e + 1)
        else:
            x = 1 / (1 + Decimal(d0) * (e - 1))
        k = int((x * (1 << COIN_BITS)).to_integral_value(rounding=ROUND_CEILING))
    return k / float(1 << COIN_BITS)        # exact: k <= 2^53


def subset_size(epsilon: float, vocab_size: int) -> int:
    """Words per report of the ``"none"`` rule: ``round(V / (e^eps + 1))``, at least 1 (k-ary randomized
    response) and at most ``V - 1``; the size that minimises the estimation error (Ye & Barg 2018)."""
    epsilon = check_epsilon(epsilon)
    V = int(vocab_size)
    if V < 2:
        raise DPTopicError(f"a vocabulary of {V} word(s) cannot be randomized: give at least two words.")
    if epsilon > 700:
        return 1
    return int(min(V - 1, max(1, round(V / (math.exp(epsilon) + 1.0)))))


def subset_inclusion(epsilon: float, vocab_size: int, s: int) -> tuple[float, float]:
    """``(A, B)``: the probability that a report of ``s`` words contains the true word (``A``), and that it
    contains a given other word (``B``). ``A = s e^eps / (s e^eps + V - s)``; every set holding the
    true word is ``e^eps`` times as likely as every set without it, so one report is exactly
    ``epsilon``-LDP, and a padding entry (a uniform set) lies between the two."""
    epsilon = check_epsilon(epsilon)
    V, s = int(vocab_size), int(s)
    if not 1 <= s <= V - 1:
        raise DPTopicError(f"invalid subset size {s}: must be between 1 and V - 1 = {V - 1}.")
    if epsilon > 700:
        return 1.0, (s - 1) / (V - 1)
    e = math.exp(epsilon)
    a = s * e / (s * e + V - s)
    return float(a), float((a * (s - 1) + (1.0 - a) * s) / (V - 1))


def subset_report_variance(epsilon: float, vocab_size: int, s: int | None = None) -> float:
    """Variance of one report's unbiased estimate of a word's frequency (its share near 0) under subset
    selection of ``s`` words (default :func:`subset_size`): ``B (1 - B) / (A - B)^2`` with ``(A, B)`` of
    :func:`subset_inclusion` (Ye & Barg 2018; for ``s = 1`` the k-ary randomized response variance)."""
    s = subset_size(epsilon, vocab_size) if s is None else int(s)
    a, b = subset_inclusion(epsilon, vocab_size, s)
    gap = (a - b) ** 2
    if not gap > 0:  # so small an epsilon that the true word is no likelier than any other (in floating point)
        raise too_small_for_vocabulary(float(epsilon), int(vocab_size), "a report would say nothing about its word")
    return float(b * (1.0 - b) / gap)


def too_small_for_vocabulary(epsilon: float, vocab_size: int, why: str) -> ParameterError:
    """The refusal of a per-entry ``epsilon`` whose reports over ``vocab_size`` words say (almost) nothing: ``why``
    (a field, so that a model given the per-user total can say it of that total: ``FedLDA``)."""
    return ParameterError("{epsilon=:g} is too small for a vocabulary of {V} words: {why}; use a larger {epsilon}.",
                          "epsilon", epsilon, V=int(vocab_size), why=why)


INFORMATIVE_GAP = 1e-6
"""The least margin by which the true word must be likelier than any other to be in a report (``FedLDA`` refuses
an epsilon below it: the reports would carry nothing)."""


def check_informative(epsilon: float, vocab_size: int) -> None:
    """Refuse (one line) an epsilon so small that a ``"none"``-rule report over ``vocab_size`` words says almost
    nothing about its word: the same test ``FedLDA`` applies before training."""
    epsilon = check_epsilon(epsilon)
    V = int(vocab_size)
    a, b = subset_inclusion(epsilon, V, subset_size(epsilon, V))
    if a - b < INFORMATIVE_GAP:
        raise too_small_for_vocabulary(epsilon, V, "a report would say almost nothing about its word (the true word is"
                                       " at most 1e-6 likelier to be in it than any other)")


ENTRY_EPSILON_GRID = np.round(np.arange(0.5, 40.0001, 0.01), 2)


def entries_for_user_budget(user_epsilon: float, vocab_size: int) -> tuple[float, int]:
    """``(epsilon per entry, entries per user)`` that spend a per-user total ``user_epsilon`` (basic
    composition over the entries of the ``"none"`` rule, randomized once) with the least estimation error.

    With ``m = user_epsilon / eps`` entries, word ``w``'s estimated share has variance about
    ``(p_w (1 - p_w) + v(eps)) / m``: the sampling of the user's tokens plus the randomizer's
    :func:`subset_report_variance` ``v(eps)``. Summed over the V words that is ``(1 - sum p_w^2 + V v(eps)) / m``,
    and ``sum p_w^2`` is small (at most the largest share), so the rule minimises ``eps (1 / V + v(eps))``,
    proportional to the total squared error, over ``eps`` (a grid of step 0.01 in [0.5, 40]): few entries at a
    large epsilon spend the total on words a user repeats, many at a small one drown each word in noise. The
    minimiser depends on ``V`` only (about 9 for V = 1,000, 10 for 2,000, 11 for 5,000); the entries are
    ``floor(user_epsilon / eps*)`` (at least 1) and the per-entry epsilon is then ``user_epsilon /
    entries`` (one floating-point step lower where the quotient rounds up), so the total is spent exactly and never
    exceeded. Reads no data (``docs/fedlda.md``).
    """
    if not (_num(user_epsilon) and 0 < user_epsilon < math.inf):
        raise DPTopicError(f"invalid user_epsilon={user_epsilon!r}: must be a finite number > 0 (the per-user"
                           " total, entries x epsilon per entry).")
    V = int(vocab_size)
    if V < 2:
        raise DPTopicError(f"a vocabulary of {V} word(s) cannot be randomized: give at least two words.")
    cost = [e * (1.0 / V + subset_report_variance(float(e), V)) for e in ENTRY_EPSILON_GRID]
    best = float(ENTRY_EPSILON_GRID[int(np.argmin(cost))])
    entries = max(1, int(math.floor(float(user_epsilon) / best + 1e-9)))
    eps = float(user_epsilon) / entries
    while eps * entries > float(user_epsilon):     # the quotient rounded up: the safe side is one step below
        eps = math.nextafter(eps, 0.0)
    return eps, entries


REPORT_WORDS_Z = 1.0
"""Standard errors a word's expected share must reach for :func:`report_words_for` to keep it (set on two 20 Newsgroups
pairs other than the ``experiment fedlda`` task: docs/fedlda.md, "Fewer words in each report")."""


def listed_alphabetically(words) -> bool:
    """Whether a vocabulary of more than 20 words is in alphabetical order (what a ``CountVectorizer`` learns): then
    its first words are not its most common, as the report-words rule (:func:`report_words_for`) takes them."""
    words = list(words)
    return len(words) > 20 and all(a <= b for a, b in zip(words, words[1:]))


def report_words_for(epsilon: float, vocab_size: int, total_entries: int, z: float = REPORT_WORDS_Z) -> int:
    """How many of the vocabulary's first words the ``"none"`` rule's reports should range over.

    A report randomized over ``N`` words estimates each word's share with variance about ``(p + v_N(eps)) / M``
    over ``M = total_entries`` reports (:func:`subset_report_variance` ``v_N``, which grows with ``N``). If the
    vocabulary lists its words most common first and their shares follow Zipf's law (exponent 1), the ``N``-th
    word's share among the first ``N`` is ``p_N = 1 / (N H_N)``. The rule keeps the first ``N`` words for which
    ``p_N >= z sqrt((p_N + v_N) / M)``: words the reports can tell from zero, so a report spends its
    randomization on fewer, estimable words, and more users (larger ``M``) or a larger epsilon keep more of them.
    Reads no data: only the public vocabulary size, the per-entry epsilon and the number of reports.
    """
    epsilon = check_epsilon(epsilon)
    V = int(vocab_size)
    if V < 2:
        raise DPTopicError(f"a vocabulary of {V} word(s) cannot be randomized: give at least two words.")
    M = int(total_entries)
    if M < 1:
        raise DPTopicError(f"invalid total_entries={total_entries!r}: the number of reports must be at least 1.")
    if not (_num(z) and z > 0):
        raise DPTopicError(f"invalid z={z!r}: must be a number > 0 (standard errors).")
    # The answer is the word before the first N that fails (2 at least; V when none fails), exactly as a loop over
    # N = 2, 3, ... would find it. The loop runs in numpy blocks: the harmonic numbers are summed in the same order
    # (a cumulative sum adds left to right) and p_N with the same operations, so they are the loop's to the bit; v_N
    # is computed with x * x where the loop's subset_report_variance squares with pow, which can differ in the last
    # bit, so every N whose verdict lies within 1e-12 of the threshold (or whose v_N is not a positive finite number)
    # is decided again by subset_report_variance itself, which also raises its own error where the loop would have.
    try:
        m = float(M)
    except OverflowError:       # more reports than a float holds: the noise term is nil
        m = math.inf
    big = epsilon > 700                                     # subset_size's and subset_inclusion's own branch
    e = 0.0 if big else math.exp(epsilon)
    harmonic, start, block = 1.0, 2, 1024
    while start <= V:
        stop = min(V, start + block - 1)
        n = np.arange(start, stop + 1, dtype=np.float64)   # exact: V is far below 2**53
        h = np.cumsum(np.concatenate(([harmonic], 1.0 / n)))[1:]
        p = 1.0 / (n * h)
        with np.errstate(all="ignore"):
            if big:
                a, b = np.ones_like(n), np.zeros_like(n)
            else:
                size = np.minimum(n - 1.0, np.maximum(1.0, np.rint(n / (e + 1.0))))
                a = size * e / (size * e + n - size)
                b = (a * (size - 1.0) + (1.0 - a) * size) / (n - 1.0)
            gap = (a - b) * (a - b)
            v = b * (1.0 - b) / gap
            rhs = z * np.sqrt((p + v) / m)
            fails = p < rhs
            unsure = (~(np.isfinite(v) & (gap > 1e-250) & np.isfinite(rhs))
                      | (np.abs(p - rhs) <= 1e-12 * np.maximum(p, rhs)))
        for i in np.flatnonzero(fails | unsure):
            k = int(n[i])
            if unsure[i]:           # decided as the loop decides it
                pk = float(p[i])
                if not pk < z * math.sqrt((pk + subset_report_variance(epsilon, k)) / m):
                    continue
            return max(2, k - 1)
        harmonic, start, block = float(h[-1]), stop + 1, min(block * 4, 1 << 20)
    return V


def effective_epsilon(epsilon: float, eta_: float, variant: str = "another") -> float:
    """The exact worst-case log likelihood ratio of one report with the floor/cap rules of :mod:`dptopic.mechanisms.rrp`.

    ``coincide`` is exactly ``epsilon``. ``another`` also needs ``eta/(1-eta) <= e^eps`` (an input word y
    reports x more often than x itself does) and ``1/eta <= e^eps`` (a rare or padding entry against a
    kept word); when these fail (small epsilon) the true cost is larger than ``epsilon`` and is returned.
    """
    epsilon = check_epsilon(epsilon)
    if variant == "coincide" or eta_ <= 0:
        return epsilon
    if eta_ >= 1:
        return math.inf
    # the logarithms rounded up, never below the ratio they bound (exact rational arithmetic on the float eta)
    x = Decimal(float(eta_))
    terms = [epsilon, _log_up(1 / x), _log_up(x / (1 - x))]
    return float(max(terms))


def _log_up(r: Decimal) -> float:
    """``ln(r)`` (``r > 0``, 60 significant digits) as the nearest float at or above it."""
    with localcontext() as ctx:
        ctx.prec = 60
        v = r.ln()
        f = float(v)
        return math.nextafter(f, math.inf) if Decimal(f) < v else f


def theorem2_error_bound(eta_: float, ranks) -> np.ndarray:
    """Theorem 2's order ``eta * k**2`` for the expected relative error of ``phi_w`` (``k`` = rank of ``w``, 1-based).

    The poster states only the order ``O(eta k^2)``; the constant is unknown, so this is the bound up to
    a constant factor (useful for comparing settings, not as an absolute error).
    """
    if not (_num(eta_) and 0 <= eta_ <= 1):
        raise DPTopicError(f"invalid eta={eta_!r}: must be a number in [0, 1].")
    k = np.asarray(ranks)
    if k.size == 0 or not np.issubdtype(k.dtype, np.integer) or np.any(k < 1):
        raise DPTopicError("invalid ranks: must be integers >= 1 (rank 1 = the most probable word of the topic).")
    return eta_ * k.astype(np.float64) ** 2


RRP_RELATION = ("word-level LDP of one reported entry: the entry's word replaced by any other word"
                " (rare words and padding included), its topic label held fixed")
KRR_RELATION = ("word-level LDP of one reported entry: the entry's word replaced by any other word or by padding;"
                " its topic label is computed from the randomized words only and is covered")


def user_spend(exclusion: str, entries_per_round: int, rounds: int) -> int:
    """How many per-entry events one user spends after ``rounds`` rounds.

    ``"none"``: the entries are randomized once and reused (labels and later rounds are post-processing),
    so ``entries_per_round`` once a user took part at all. ``"floor"``/``"tail"``: fresh randomization every
    round, ``entries_per_round * rounds``.
    """
    if rounds <= 0:
        return 0
    return int(entries_per_round) if exclusion == "none" else int(entries_per_round) * int(rounds)


def rrp_event(epsilon: float, delta: float, gamma: float = 1.0, variant: str = "another",
              exclusion: str = "floor", vocab_size: int | None = None):
    """The privacy event of one RRP-perturbed entry.

    ``exclusion="none"`` (sound default): pure ``epsilon``-LDP per entry by k-ary randomized response
    (``vocab_size`` gives ``eta`` in the label only; the guarantee does not depend on it).
    ``exclusion="floor"`` (sound default): pure DP at :func:`effective_epsilon`, by construction.
    ``exclusion="tail"`` (the poster's rule): the poster's ``(epsilon, 2 delta)`` claim, which rests on
    the Zipf assumption about the model's word probabilities.
    """
    if exclusion == "none":
        epsilon = check_epsilon(epsilon)
        tag = "" if vocab_size is None else f"eta={krr_eta(epsilon, vocab_size):.4g}, "
        return PureDPEvent(epsilon, label=f"randomized word report ({tag}no exclusion)", theorem=KRR,
                           relation=KRR_RELATION)
    e = eta(epsilon, delta, gamma, variant)
    if exclusion == "tail":
        return ApproxDPEvent(float(epsilon), 2.0 * float(delta), label=f"RRP report (eta={e:.4g}, tail exclusion)",
                             theorem=THEOREM1 + ": (eps, 2 delta)-LDP assuming Zipf-distributed word probabilities",
                             relation=RRP_RELATION)
    if exclusion != "floor":
        raise DPTopicError(f"invalid exclusion={exclusion!r}: must be one of {', '.join(EXCLUSIONS)}.")
    # the ratios are those of the replacement probability the kernel realises (realised_eta), not of the float eta
    eps_entry = effective_epsilon(epsilon, realised_eta(epsilon, delta, gamma, variant), variant)
    return PureDPEvent(eps_entry, label=f"RRP report (eta={e:.4g}, {variant})",
                       theorem=THEOREM1 + " with the floor rule of docs/fedlda.md: pure eps-LDP per entry",
                       relation=RRP_RELATION)


USER_RELATION = ("one user's reports: the words of all entries a user sends over all rounds, each entry's word"
                 " replaced by any other word (including rare words and padding); topic labels held fixed")
USER_RELATION_NONE = ("one user's reports: the randomized reports of the entries a user sends (randomized once,"
                      " reused in every round), each entry's word replaced by any other word or by padding; the topic"
                      " labels are computed from the randomized reports and the public model only")


def user_relation(exclusion: str) -> str:
    """The neighbouring relation of a FedLDA user's guarantee under the rule ``exclusion``."""
    return USER_RELATION_NONE if exclusion == "none" else USER_RELATION


def user_ledger(event, exclusion: str):
    """An empty per-user ledger for a FedLDA run whose entries are ``event`` (:func:`rrp_event`): the one
    ``FedLDA.fit`` fills round by round (:func:`spend_round`) and the one a deployment's released model
    carries (:func:`user_ledger_after`), so both report the same figures."""
    return PrivacyLedger(unit="user", relation=user_relation(exclusion), theorem=event.theorem, discretization=1e-2)


def spend_round(ledger, event, exclusion: str, entries_per_round: int, round_index: int) -> int:
    """Record in ``ledger`` what one user spends in round ``round_index`` (0-based): the events of
    :func:`user_spend` after this round less those after the previous one. Returns that number."""
    spent = (user_spend(exclusion, entries_per_round, round_index + 1)
             - user_spend(exclusion, entries_per_round, round_index))
    if spent:
        ledger.spend(event, spent)
    return spent


def user_ledger_after(epsilon: float, delta: float, gamma: float, variant: str, exclusion: str,
                      report_words: int, entries_per_round: int, rounds: int):
    """The per-user ledger after ``rounds`` rounds of a federation with these protocol
    settings, for a user who took part in every round (the most any user can have spent: one update per user
    and round). Reads no data: the same events, in the same groups, as ``FedLDA.fit`` records round by round
    (a ledger merges equal events, so spending a round's events at once gives the same report)."""
    event = rrp_event(epsilon, delta, gamma, variant, exclusion, vocab_size=report_words)
    ledger = user_ledger(event, exclusion)
    total = user_spend(exclusion, entries_per_round, rounds)
    if total:
        ledger.spend(event, total)
    return ledger


SPEND_RTOL = 0.01
"""A per-user total asked of FedLDA (``epsilon=``) is spent to within this share below it, never above it; a total
that no per-entry epsilon spends within it is refused."""
SOLVE_STEPS = 30
"""Bisection steps of :func:`entry_epsilon_for_total` on log(epsilon per entry): a fixed bracket and a fixed number of
steps, so that a larger total never gets a smaller per-entry epsilon (asking less never spends more)."""
ENTRY_EPSILON_MIN = 1e-6


def _user_headline(epsilon: float, failure_rate: float, gamma: float, variant: str, exclusion: str,
                   entries_per_round: int, rounds: int, report_delta: float) -> float:
    """The per-user epsilon a FedLDA report states (the ledger's headline at ``report_delta``) when each entry is
    randomized at ``epsilon``; inf where no guarantee at that delta follows (the tail rule's deltas add up past it)."""
    try:
        rep = user_ledger_after(epsilon, failure_rate, gamma, variant, exclusion, None, entries_per_round,
                                rounds).report(report_delta)
    except DPTopicError:
        return math.inf
    eps, delta = rep.get("epsilon"), rep.get("delta")
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or (
            isinstance(delta, (int, float)) and delta > report_delta * (1 + 1e-9)):
        return math.inf
    return float(eps)


def _entry_cost(epsilon: float, failure_rate: float, gamma: float, variant: str, exclusion: str) -> float:
    """What one entry randomized at ``epsilon`` costs: ``epsilon`` for the 'none' and tail rules, the floor rule's
    :func:`effective_epsilon` (larger at small epsilon, where the replacement probability nears 1)."""
    if exclusion != "floor":
        return epsilon
    try:
        return effective_epsilon(epsilon, realised_eta(epsilon, failure_rate, gamma, variant), variant)
    except DPTopicError:
        return math.inf


def _cheapest_entry(failure_rate: float, gamma: float, variant: str, exclusion: str) -> float:
    """The per-entry epsilon from which a larger one costs more (for the floor rule, below it a smaller epsilon
    costs more: its replacement probability nears 1); the smallest one searched for the other rules."""
    if exclusion != "floor":
        return ENTRY_EPSILON_MIN
    grid = np.exp(np.linspace(math.log(ENTRY_EPSILON_MIN), math.log(EPSILON_MAX), 241))
    costs = [_entry_cost(float(e), failure_rate, gamma, variant, exclusion) for e in grid]
    i = int(np.argmin(costs))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, len(grid) - 1)])
    for _ in range(60):     # golden-section search between the grid's neighbours
        a, b = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        if _entry_cost(a, failure_rate, gamma, variant, exclusion) <= _entry_cost(b, failure_rate, gamma, variant,
                                                                                    exclusion):
            hi = b
        else:
            lo = a
    return hi


_SOLVED: dict = {}


def entry_epsilon_for_total(total: float, failure_rate: float, gamma: float, variant: str, exclusion: str,
                            entries_per_round: int, rounds: int, report_delta: float,
                            name: str = "epsilon") -> float:
    """The per-entry epsilon at which one FedLDA user's whole run spends ``total``, as the accountant that reports it
    counts (the per-user ledger's headline at ``report_delta``: :func:`user_ledger_after`): the largest per-entry
    epsilon, where a larger one costs more, whose run spends at most ``total``; what it spends lies within
    :data:`SPEND_RTOL` below ``total``. A total outside what the run can spend within that tolerance (below the least
    it spends, above the most, or under the tail rule, whose deltas add up past ``report_delta``) is refused in one
    line naming ``total`` as given (``name``: what the caller calls it)."""
    key = (float(total), float(failure_rate), float(gamma), variant, exclusion, int(entries_per_round), int(rounds),
           float(report_delta))
    if key in _SOLVED:
        return _SOLVED[key]
    n = user_spend(exclusion, entries_per_round, rounds)

    def spend(e):
        return _user_headline(e, failure_rate, gamma, variant, exclusion, entries_per_round, rounds, report_delta)

    # the sound rule's entries are randomized once (the rule goes without saying where no other is on offer: serve)
    where = (f"over the {n} entries a user randomizes ({entries_per_round} an update"
             + (", once)" if exclusion == "none" else f", every one of {rounds} rounds; {{exclusion=}})"))

    def refuse(template: str, **fields):
        return ParameterError("{parameter=:g} (the per-user total) " + template, name, total,
                              values={"exclusion": exclusion}, **fields)
    lo = _cheapest_entry(failure_rate, gamma, variant, exclusion)
    least, most = spend(lo), spend(float(EPSILON_MAX))
    if math.isinf(least):
        raise refuse("cannot be spent " + where + ": its events add up to no (epsilon, delta) guarantee at delta"
                     " {report_delta:g}" + (" (the tail rule's per-entry deltas add up past it)" if exclusion == "tail"
                                            else "") + "; use {exclusion=none}, or give {epsilon_per_entry} instead.",
                     report_delta=report_delta, none="none")
    if total < least and exclusion != "floor":
        raise refuse("is too small " + where + ": it leaves each entry less than {floor:g}, which says nothing about"
                     " its word; give at least {least:.4g}, or fewer entries ({pad_length}, {sample_ratio}).",
                     floor=ENTRY_EPSILON_MIN, least=least)
    if total < least:
        raise refuse("is below the least this run spends " + where + ": {least:.4g} per user at delta"
                     " {report_delta:g}; give at least {least:.4g}, or fewer entries ({pad_length}, {sample_ratio})"
                     + ("" if exclusion == "none" else " or {rounds}") + ".", least=least, report_delta=report_delta)
    if total > most and most < total * (1 - SPEND_RTOL):
        raise refuse("is above the most this run spends " + where + ": {most:.4g} per user, with every entry at the"
                     " largest epsilon an entry takes ({top:g}); give at most {most:.4g}, or more entries"
                     " ({pad_length}).", most=most, top=EPSILON_MAX)
    a, b = math.log(lo), math.log(float(EPSILON_MAX))
    if spend(float(EPSILON_MAX)) <= total:
        a = b
    else:
        for _ in range(SOLVE_STEPS):
            mid = (a + b) / 2
            if spend(math.exp(mid)) <= total:
                a = mid
            else:
                b = mid
    eps = math.exp(a)
    got = spend(eps)
    while got > total and eps > lo:     # exp(log(x)) rounded up: the safe side is one step below
        eps = math.nextafter(eps, 0.0)
        got = spend(eps)
    if got < total * (1 - SPEND_RTOL) and a < b:
        above = spend(math.exp(b))      # the accountant's figure jumps over the total here (its grid, its delta)
        raise refuse("is too small " + where + ": at delta {report_delta:g} the accountant's figure per user jumps"
                     " from {got:.4g} to {above:.4g} there; give at least {above:.4g}, or give {epsilon_per_entry}"
                     " instead.", report_delta=report_delta, got=got, above=above)
    if got < total * (1 - SPEND_RTOL):
        raise refuse("cannot be spent to within {rtol:.0%} " + where + ": the nearest per-entry epsilon spends"
                     " {got:.4g}; give another total, or give {epsilon_per_entry} instead.", rtol=SPEND_RTOL, got=got)
    if len(_SOLVED) > 256:
        _SOLVED.clear()
    _SOLVED[key] = eps
    return eps
