"""A differentially private vocabulary: DP set union over documents (Manzonelli et al. 2024, Sec. 4.2).

Each document is one user contributing its set of distinct words. Users add weight to
a histogram H, each with a bounded contribution (L1 ≤ 1 for the Laplace policy, L2 ≤ 1
for the Gaussian policy), no word beyond the cut-off Γ = ρ + α·(noise scale); words
whose noisy weight exceeds the threshold ρ are released (Gopi et al. 2020, Algorithm 2
"Policy Laplace"/"Policy Gaussian"). With ``order="frequency"`` a user spends its
budget on its words in order of their count in the document (Carvalho et al. 2022),
the variant Manzonelli et al. use. Every user keeps at most ``delta0`` words (Δ0), and
ρ is the threshold that matches that cap.

Each document is first cut to Δ0 of its words by a rule of its own (its most frequent words, or a uniform
sample), before it looks at H: what it keeps must not depend on the other documents, or the per-document
sensitivity no longer holds. Then the Gaussian policy moves the kept words' weights towards Γ by ℓ2-descent
(a step of L2 length at most 1 along the gaps, Gopi et al.'s Policy Gaussian), the Laplace policy with
``order="gopi"`` water-fills an L1 budget of 1 (smallest gaps first), and ``order="frequency"`` fills the words
to Γ one after another, most frequent first.

The default is the Gaussian policy (``mechanism="gaussian"``, ``order="gopi"``,
Δ0 = 100): an L2 budget lets a document spread weight over many words, so it releases several times
more words at the same (ε, δ) than the Laplace policy. On 20 Newsgroups (11,293 documents, δ = 5e-6) it
selects about 100 words at ε = 0.3 and 240 at ε = 0.5 (cut-off α = 10), where Manzonelli et al.'s setting
(``mechanism="laplace"``, ``order="frequency"``, Δ0 = 50) selects 28 and 56 (``docs/document_dp.md``).
"""
from __future__ import annotations

import math

import numpy as np

from .._validation import Int, IsNone, Options, Real, validate_params
from ..accounting.events import ApproxDPEvent
from ..accounting.set_union import SET_UNION_RELATION, gaussian_sigma
from ..errors import DPTopicError, ParameterError
from ..mechanisms.gaussian import gaussian_mechanism
from ..mechanisms.laplace import laplace_with_scale
from .corpus import Corpus, data_cuts
from .vocabulary import Vocabulary

_CONSTRAINTS = {"epsilon": [Real(0, None, "neither")], "delta": [Real(0, 1, "neither")],
                "delta0": [IsNone(), Int(1, None)], "alpha": [IsNone(), Real(0, None, "left")],
                "mechanism": [Options(("laplace", "gaussian"))], "order": [IsNone(), Options(("frequency", "gopi"))]}

DEFAULT_DELTA0 = {"gaussian": 100, "laplace": 50}
DEFAULT_ORDER = {"gaussian": "gopi", "laplace": "frequency"}
# The cut-off Γ = ρ + α·(noise scale). α = 3 is Carvalho et al.'s (and Manzonelli et al.'s) value for the Laplace
# policy. For the Gaussian policy's ℓ2-descent, whose step is proportional to the gaps, a cut-off that close to the
# threshold sends a document's budget to its rare words, which never reach ρ: α = 10 selects 25-40% more words at
# the same (ε, δ). Chosen on the State of the Union paragraphs and Reuters R52 (docs/document_dp.md).
DEFAULT_ALPHA = {"gaussian": 10.0, "laplace": 3.0}


def _one_minus_root(delta, t):
    """1 − (1 − δ)^{1/t}, accurately for small δ."""
    return -math.expm1(math.log1p(-delta) / t)


def dpsu_threshold(epsilon: float, delta: float, delta0: int = 1, mechanism: str = "laplace") -> float:
    """The release threshold ρ for a per-user cap Δ0 (Gopi et al. 2020, Thm 5.2 and 5.3).

    Laplace: ``ρ = max_{t ≤ Δ0} 1/t + ln(1 / (2(1 − (1 − δ)^{1/t}))) / ε``;
    Gaussian: ``ρ = max_{t ≤ Δ0} 1/√t + σ Φ⁻¹((1 − δ/2)^{1/t})`` with σ calibrated to (ε, δ/2).
    """
    validate_params({"epsilon": epsilon, "delta": delta, "delta0": delta0, "mechanism": mechanism},
                    {k: _CONSTRAINTS[k] for k in ("epsilon", "delta", "delta0", "mechanism")})
    t = np.arange(1, int(delta0) + 1, dtype=float)
    if mechanism == "laplace":
        q = np.array([_one_minus_root(delta, x) for x in t])
        return float(np.max(1 / t + np.log(1 / (2 * q)) / epsilon))
    from scipy.stats import norm  # scipy.stats takes about a second to import

    sigma = gaussian_sigma(epsilon, delta / 2)
    q = np.array([_one_minus_root(delta / 2, x) for x in t])
    return float(np.max(1 / np.sqrt(t) + sigma * norm.isf(q)))


def noise_scale(epsilon: float, delta: float, mechanism: str = "laplace") -> float:
    """Laplace scale 1/ε (L1 sensitivity 1) or the Gaussian σ for (ε, δ/2)."""
    return 1.0 / epsilon if mechanism == "laplace" else gaussian_sigma(epsilon, delta / 2)


def _l2_descent(gaps: np.ndarray) -> np.ndarray:
    """Gopi et al.'s Policy Gaussian step: along the gaps, of L2 length ``min(1, ||gaps||)``. (Water-filling an L2
    budget, smallest gaps first, is not contractive: inserting one document can move the histogram by more than 1
    in L2; ``tests/test_private_vocabulary.py`` has a case.)"""
    norm = float(np.sqrt(np.sum(gaps * gaps)))
    return gaps * min(1.0, 1.0 / norm) if norm > 0 else gaps.copy()


def _water_fill(gaps: np.ndarray) -> np.ndarray:
    """The Laplace policy's ``order="gopi"`` step: increments ``min(gap, level)`` with the largest level whose sum
    is ≤ 1 (smallest gaps fill first)."""
    g = np.sort(gaps)
    n = len(g)
    used = 0.0  # sum of the gaps already filled
    for j in range(n):
        rest = n - j  # items still rising together
        if used + rest * g[j] > 1.0:
            return np.minimum(gaps, (1.0 - used) / rest)
        used += g[j]
    return gaps.copy()


def set_union_weights(corpus: Corpus, gamma: float, delta0: int, order: str = "frequency", p: int = 1,
                      rng: np.random.Generator | None = None) -> np.ndarray:
    """The weighted histogram H before noise: users in random order, each cut to at most ``delta0`` of its words
    (by its own counts with ``order="frequency"``, uniformly otherwise: never by H) and adding at most 1 in L_p
    norm to them, no word beyond the cut-off ``gamma``."""
    rng = rng if rng is not None else np.random.default_rng()
    H = np.zeros(corpus.vocab_size)
    for d in rng.permutation(corpus.n_docs):
        words, counts = np.unique(corpus.doc(d), return_counts=True)
        if order == "frequency":        # most frequent in the document first; the cap reads the document alone
            words = words[np.argsort(-counts, kind="stable")[:delta0]]
        elif len(words) > delta0:
            words = rng.choice(words, size=delta0, replace=False)
        words = words[H[words] < gamma]  # the words already at the cut-off take nothing more
        if len(words) == 0:
            continue
        if order == "frequency":
            budget = 1.0
            for w in words:  # fill each word to the cut-off in turn
                step = min(gamma - H[w], budget)
                H[w] += step
                budget -= step
                if budget <= 0:
                    break
        else:
            H[words] += _water_fill(gamma - H[words]) if p == 1 else _l2_descent(gamma - H[words])
    return H


def _noisy_weights(H: np.ndarray, scale: float, mechanism: str, rng, secure: bool) -> np.ndarray:
    """``H`` plus i.i.d. Laplace(scale) or N(0, scale²) noise, through :mod:`dptopic.mechanisms` (OpenDP's samplers
    when ``secure``). The mechanisms' own events are not used: Gopi et al.'s theorem accounts for the whole
    selection (the event returned by :func:`dp_set_union`)."""
    H = np.asarray(H, dtype=np.float64)
    if mechanism == "laplace":
        noisy, _ = laplace_with_scale(H, scale, rng, discrete=False, secure=secure, relation="document add/remove")
    else:
        # accounted by DP set union's own theorem (its sigma may be below the accountant's 0.25 range at large eps)
        noisy, _ = gaussian_mechanism(H, scale, 1.0, rng, secure=secure, accounted=False)
    return np.asarray(noisy, dtype=np.float64)


def dp_set_union(corpus: Corpus, epsilon: float, delta: float, delta0: int | None = None, alpha: float | None = None,
                 mechanism: str = "gaussian", order: str | None = None, seed=None, secure: bool = False):
    """Select a vocabulary from ``corpus`` with (ε, δ)-DP for adding/removing one document.

    Returns ``(vocabulary, event)``: a :class:`Vocabulary` (sorted alphabetically, so its order
    carries no information beyond the set) and an :class:`~dptopic.accounting.ApproxDPEvent`.
    ``delta0``, ``alpha`` and ``order`` default by mechanism: 100, 10 and ``"gopi"`` (ℓ2-descent) for the
    Gaussian policy, 50, 3 and ``"frequency"`` for the Laplace policy (Manzonelli et al. 2024's setting). The
    cut-off is Γ = ρ + ``alpha`` times the noise scale; any ``alpha`` keeps the guarantee.
    ``secure=True`` draws the Laplace or Gaussian noise with OpenDP's exact samplers (OS CSPRNG) and
    the documents' order from fresh OS entropy; it refuses a seed.
    """
    if secure not in (True, False):
        raise DPTopicError(f"invalid secure={secure!r}: must be True or False.")
    if secure and seed is not None:
        raise ParameterError("secure=True takes its coins from the operating system's CSPRNG and refuses a seed:"
                             " remove {seed}.", "seed", seed)
    validate_params(dict(epsilon=epsilon, delta=delta, delta0=delta0, alpha=alpha, mechanism=mechanism, order=order),
                    _CONSTRAINTS)
    delta0 = DEFAULT_DELTA0[mechanism] if delta0 is None else delta0
    alpha = DEFAULT_ALPHA[mechanism] if alpha is None else alpha
    order = DEFAULT_ORDER[mechanism] if order is None else order
    if order == "frequency" and mechanism == "gaussian":
        raise DPTopicError("order='frequency' (Carvalho et al.) is defined for the Laplace policy: use mechanism='laplace' or order='gopi'.")
    cuts = data_cuts(corpus)
    if cuts:
        fields = {f"cut{i}": value for i, (_, _, value) in enumerate(cuts)}
        cut = ", ".join(f"{where} {{{name}=cut{i}}}" for i, (where, name, _) in enumerate(cuts))
        head = ("DP set union needs every word of the documents as a candidate, and this corpus's words were cut by"
                " their counts (" + cut + "): one document could push another's word off the list, which the"
                " guarantee does not cover. Keep every word: ")
        raise ParameterError(head + "build it with max_vocab=None and no document-frequency bounds.", cuts[0][1],
                             cuts[0][2], flag_template=head + "train on the text itself, or prepare it with"
                             " {max_vocab=all}.", all="all", **fields)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    rho = dpsu_threshold(epsilon, delta, delta0, mechanism)
    scale = noise_scale(epsilon, delta, mechanism)
    gamma = rho + alpha * scale
    H = set_union_weights(corpus, gamma, delta0, order, 1 if mechanism == "laplace" else 2, rng)
    noisy = _noisy_weights(H, scale, mechanism, None if secure else rng, secure)
    chosen = np.flatnonzero((H > 0) & (noisy > rho))  # words nobody contributed have H = 0: never released
    vocab = Vocabulary(sorted(corpus.vocabulary[i] for i in chosen))
    event = ApproxDPEvent(float(epsilon), float(delta), label=f"DP set union ({mechanism}, {order} order"
                                                              f"{', OpenDP noise' if secure else ''})",
                          theorem=("Gopi et al. 2020, Thm 5.2 (Laplace) / 5.3 (Gaussian): (eps, delta)-DP for"
                                   f" one user's set; per-user cap delta0={delta0}, rho={rho:.4f},"
                                   f" cut-off Gamma={gamma:.4f}"),
                          relation=SET_UNION_RELATION, unit="document")
    return vocab, event
