"""DP set union's relation and the FDPTM composition (Manzonelli et al. 2024, Theorem 4.1)."""
from __future__ import annotations

import copy
import math

from ..errors import DPTopicError
from .events import ApproxDPEvent, _check_event_eps
from .ledger import claims_no_guarantee, name_guarantee

SET_UNION_RELATION = "document-level add/remove: D' is D with one document added or removed (each document one user)"


VOCABULARY_NOT_COVERED = "the vocabulary (built from the training documents: pass a public vocabulary to cover it), "
"""The clause of a document-level trainer's scope for a vocabulary read from its documents (the FDPTM report removes
it: there the vocabulary is chosen privately)."""
GIBBS_VOCABULARY_NOTES = (" Vocabulary treated as public (chosen from the training corpus, not protected);",
                          " Vocabulary treated as public (user-supplied);")
SIZES_PUBLIC_UNDER_WORD_DP = " document count and lengths are public under word replacement."
"""The end of a word-level Gibbs trainer's scope; the FDPTM report replaces it (its vocabulary protects documents)."""


def _scope_with_private_vocabulary(scope: str, eps_v: float, delta_v: float) -> str:
    """The trainer's scope, its vocabulary clause replaced: the words were chosen by DP set union, inside the total."""
    scope = str(scope or "").replace(VOCABULARY_NOT_COVERED, "")
    for note in GIBBS_VOCABULARY_NOTES:
        scope = scope.replace(note, " Vocabulary selected privately (above);")
    # the vocabulary protects whole documents (add/remove), so the corpus sizes are no longer public: not saved
    scope = scope.replace(SIZES_PUBLIC_UNDER_WORD_DP, " the document count and lengths are not saved (the vocabulary's"
                                                      " guarantee protects whole documents).")
    return (f"covers the vocabulary's selection by DP set union at (eps_V, delta_V) = ({eps_v:g}, {delta_v:g}), composed"
            f" into the reported epsilon; topic model: {scope}")


FDPTM_THEOREM = ("Manzonelli et al. 2024, Theorem 4.1: (eps_V, delta_V)-DP vocabulary selection followed by an"
                 " (eps_T, delta_T)-DP topic model on that vocabulary releases (S, Phi) with"
                 " (eps_V + eps_T, delta_V + delta_T)-DP (sequential composition)")


def fdptm_report(vocab_event: ApproxDPEvent, trainer_report: dict, ledger=None) -> dict:
    """The privacy report of FDPTM: vocabulary selection composed with a document-level trainer.

    ``trainer_report`` is the trainer's ``privacy_``; when the trainer's ledger is given the
    composition is also computed tightly (PLD) with the vocabulary event added to it.
    """
    vocab = vocab_event.describe()
    chosen = {"vocabulary_source": "private",
              "vocabulary": "selected with differential privacy (DP set union, Manzonelli et al. 2024): inside the"
                            " reported epsilon"}
    if not trainer_report.get("private"):  # no epsilon to be inside of: say only how the words were chosen
        rep = dict(trainer_report, **chosen)
        rep["vocabulary"] = ("selected with differential privacy (DP set union, Manzonelli et al. 2024); the topic"
                             " model itself is not private")
        rep["vocabulary_selection"] = vocab
        rep["reason"] = (str(trainer_report.get("reason", "the topic model is not private")).rstrip(". ")
                         + "; the vocabulary was selected privately, the topic model was not")
        return rep
    eps_v, d_v = vocab_event.eps, vocab_event.delta
    d_t = float(trainer_report.get("delta") or 0.0)
    rep = dict(trainer_report, **chosen)
    rep.update({
        "theorem": FDPTM_THEOREM + "; topic model: " + str(trainer_report.get("theorem", "")),
        "delta": d_t + d_v,
        "epsilon_basic": eps_v + float(trainer_report["epsilon_basic"]),
        # basic composition: the trainer's basic epsilon holds at its own basic delta, and delta_V adds to it
        "delta_basic": d_v + float(trainer_report.get("delta_basic") or 0.0),  # absent: pure, delta 0
        "epsilon_pld": eps_v + float(trainer_report["epsilon_pld"]),
        "epsilon_rdp": eps_v + float(trainer_report["epsilon_rdp"]),
        "vocabulary_selection": vocab,
        "scope": _scope_with_private_vocabulary(trainer_report.get("scope"), eps_v, d_v),
        "topic_model": {k: trainer_report.get(k) for k in ("unit", "epsilon_basic", "epsilon_pld", "epsilon_rdp", "delta")},
        "neighbouring_relation": f"vocabulary: {vocab_event.relation}; topic model: {trainer_report.get('neighbouring_relation')}",
        "accounting": dict(trainer_report.get("accounting", {}),
                           basic="eps_V plus the topic model's basic-composition eps; delta_basic = delta_V plus the"
                                 " topic model's basic delta",
                           pld_over_every_event="epsilon_pld_tight: the vocabulary selection's (eps_V, delta_V) as an"
                                                " approximate-DP privacy loss distribution composed with every event"
                                                " of the topic model (Koskela et al. 2020), at delta = delta_V plus"
                                                " the topic model's delta: the tightest figure, and the claim when"
                                                " it is the smallest"),
        "composition": "Theorem 4.1 (eps and delta add); epsilon_pld/rdp add eps_V to the trainer's eps at its delta",
    })
    if claims_no_guarantee(trainer_report):    # no (epsilon, delta) follows from the trainer's events: none after
        rep["epsilon_pld_tight"] = math.inf     # adding eps_V either (and the PLD of such events cannot be built)
    elif ledger is not None:
        led = copy.deepcopy(ledger)
        led.budget = None
        led.spend(vocab_event)
        rep["epsilon_pld_tight"] = led.epsilon_tight(d_t + d_v)
    warnings = list(trainer_report.get("warnings", []))
    if trainer_report.get("unit") != vocab_event.unit:
        t_unit = trainer_report.get("unit")
        if t_unit in _UNITS_HOLDING_DOCUMENTS:
            # a user holds several documents: there the vocabulary's per-document guarantee is the one that grows
            grows = (f"for a {t_unit} of L {vocab_event.unit}s the vocabulary's part grows to L times epsilon_V, its"
                     f" delta_V to L e^((L-1) epsilon_V) delta_V, by group privacy")
        else:
            grows = (f"for a {vocab_event.unit} of L {t_unit}s the topic model's part grows to L times its epsilon by"
                     f" group privacy")
        warnings.append(f"different privacy units: the vocabulary protects one {vocab_event.unit}, the topic model one"
                        f" {t_unit}; Theorem 4.1 needs the same adjacency, so the composed figure holds for neither"
                        f" unit as such ({grows})")
        rep["guarantee"] = "partial"
        rep["unit"] = f"{vocab_event.unit} (vocabulary) + {trainer_report.get('unit')} (topic model)"
    if warnings:
        rep["warnings"] = warnings
    for k in ("epsilon", "epsilon_method", "per_document"):
        rep.pop(k, None)  # the trainer's claim alone; named again for the composition
    rep = name_guarantee(rep)
    if claims_no_guarantee(rep):
        rep["guarantee"] = "none"           # as a trainer's own report says when no (epsilon, delta) follows
    return rep


_UNITS_HOLDING_DOCUMENTS = ("user",)
"""Trainer units made of documents (FedLDA's user holds one or more), not parts of one document (a word)."""


def gaussian_sigma(epsilon: float, delta: float) -> float:
    """Smallest σ for which the Gaussian mechanism with L2 sensitivity 1 is (ε, δ)-DP
    (analytic Gaussian mechanism, Balle & Wang 2018, Thm 8); never below it (its δ(ε) is at most ``delta``)."""
    from scipy.optimize import brentq  # scipy: only the Gaussian threshold needs it
    from scipy.stats import norm  # scipy.stats takes about a second to import

    _check_event_eps(epsilon, "eps")  # the range every event accepts; beyond ~709, exp(eps) overflows below

    def excess(s):
        return norm.cdf(0.5 / s - epsilon * s) - math.exp(epsilon) * norm.cdf(-0.5 / s - epsilon * s) - delta

    hi = 1.0
    while excess(hi) > 0:
        hi *= 2
    sigma = brentq(excess, 1e-6, hi, xtol=1e-12)
    # brentq stops within xtol of the root, on either side: step up to the noise whose delta is within the budget.
    # The two terms of delta(sigma) nearly cancel at small epsilon, so the float difference is accurate only to about
    # 1e-11 of delta there: step until it is below the budget by a margin far larger than that error
    step = 1e-12 * max(1.0, sigma)
    while excess(sigma) > -1e-9 * delta:
        sigma += step
        step *= 2
    return sigma


def composed_epsilon(vocab_event: ApproxDPEvent, plan, delta: float) -> float:
    """The total the privacy card states for a topic model whose fit spends ``plan`` (a
    :class:`~dptopic.accounting.plan.ReleasePlan`, its report at the model's ``delta``) composed with the private
    vocabulary's event: :func:`fdptm_report`'s ``epsilon`` at ``delta`` plus the vocabulary's delta, from public
    settings alone (no fit, no data). ``inf`` where no guarantee follows."""
    ledger = plan.ledger(budget=False)
    for event, n in plan.groups():
        ledger.spend(event, n)
    eps = fdptm_report(vocab_event, ledger.report(float(delta)), ledger).get("epsilon")
    return float(eps) if isinstance(eps, (int, float)) and math.isfinite(eps) else math.inf


VOCABULARY_SPEND_RTOL = 1e-3
"""A whole-run total asked with a private vocabulary inside it (``dptopic.train(..., vocabulary_in_total=True)``) is
spent to within this share below it, never above it, as the card states the composed total
(:func:`model_epsilon_within_total`)."""


def model_epsilon_within_total(composed, epsilon: float, epsilon_vocab: float, rtol: float = VOCABULARY_SPEND_RTOL,
                               steps: int = 30) -> float:
    """The topic model's epsilon ``e`` at which ``composed(e)`` (the card's composed total, e.g.
    :func:`composed_epsilon` of the plan of a model built with ``e``) is ``epsilon`` to within ``rtol`` below it, never
    above it. ``e`` lies between ``epsilon - epsilon_vocab`` (Theorem 4.1's sum, which the composed figure never
    exceeds) and ``epsilon``; the search is regula falsi on that bracket, with a halving whenever a step stalls, and
    returns the largest ``e`` it found whose composed total is at most ``epsilon``."""
    epsilon, epsilon_vocab = float(epsilon), float(epsilon_vocab)
    lo, hi = epsilon - epsilon_vocab, epsilon
    s_lo = composed(lo)
    if not s_lo <= epsilon * (1 + 1e-12):
        raise DPTopicError(f"the topic model's share epsilon={lo:g} (the total {epsilon:g} less the vocabulary's"
                           f" {epsilon_vocab:g}) already composes to {s_lo:.6g}, above the total: give a larger total.")
    goal = epsilon * (1 - float(rtol))
    if s_lo >= goal:
        return lo
    s_hi = composed(hi)
    if s_hi <= epsilon:
        return hi
    for step in range(int(steps)):
        width = hi - lo
        aim = epsilon * (1 - 0.1 * float(rtol))
        mid = lo + (aim - s_lo) * width / (s_hi - s_lo) if s_hi > s_lo else 0.5 * (lo + hi)
        if not lo < mid < hi or step % 3 == 2:
            mid = 0.5 * (lo + hi)
        s = composed(mid)
        if s <= epsilon:
            lo, s_lo = mid, s
            if s_lo >= goal:
                break
        else:
            hi, s_hi = mid, s
    return lo
