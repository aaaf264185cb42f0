"""Privacy auditing with one training run (Steinke, Nasr & Jagielski 2023, "Privacy Auditing with One (1)
Training Run", NeurIPS 2023).

The design. ``m`` canaries (documents the auditor writes) each get an independent fair coin ``S_i ∈ {−1, +1}``; the
canaries with ``S_i = +1`` are added to the corpus and ONE model is trained on the result. Every canary is scored
(higher = more likely included); the auditor guesses ``+1`` for the ``k+`` highest scores, ``−1`` for the ``k−``
lowest and abstains on the rest. With ``r = k+ + k−`` guesses of which ``v`` are right, the ε lower bound at
confidence ``1 − β`` is the largest ε whose tail bound on ``v`` (below) is still below ``β``.

The bound (their main theorem, Thm 3.1 of arXiv:2305.08846; proved in their Sec. 5, Thm 5.2 and Prop. 5.7). Let
the procedure be (ε, δ)-DP for adding or removing one canary, ``W`` the number of correct guesses and
``q = e^ε / (e^ε + 1)`` the accuracy of ε-randomized response. Then for every ``v``

    P[W ≥ v] ≤ P[B ≥ v] + 2·m·δ · max_{i = 1..v} P[v − i ≤ B < v] / i,        B ~ Binomial(r, q).

For δ = 0 the second term vanishes: ``W`` is stochastically dominated by ``Binomial(r, q)``, which is exactly what a
guesser gets from randomized response on the coins, so the bound is tight for that mechanism. The δ term is never
negative, so the δ-aware bound is at most the δ = 0 one. The bound holds whatever the scores and guesses are, as long
as the coins are independent fair coins drawn after the canaries were written and the guesses depend on the data
only through the trained model; it needs no shadow models and no independence between the canaries' scores. Its
confidence is therefore exact (up to the bisection's tolerance, rounded down), unlike the LiRA audit's.

What it bounds: the procedure's ε for adding or removing one *canary* document (a document of rare words the
auditor wrote), not for the corpus's natural documents, which the design never removes.
"""
from __future__ import annotations

import io
import math

import numpy as np
from scipy.stats import binom

from ..corpus import Corpus
from ..dataset_ledger.charge import shadow_runs
from ..errors import DPTopicError, ParameterError
from ..kernels.em import document_statistic
from .lira import (
    ONE_RUN_SEED_NOTE,
    _check_corpus,
    _check_seed,
    _check_train_fn,
    check_phi,
    claim_delta,
    claim_relation,
    claimed_epsilon,
    phi_and_privacy,
    shadow_claim,
    unit_covers_document,
    verdict,
)

EPSILON_MAX = 60.0
"""The bisection's upper end: beyond it ``q = e^ε/(e^ε+1)`` is 1 to double precision."""


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """The bound on ``P[W ≥ v]`` of Steinke et al.'s main theorem (module docstring): the p-value of ``v`` correct
    guesses out of ``r`` among ``m`` canaries under the hypothesis that the procedure is (ε, δ)-DP."""
    m, r, v = int(m), int(r), int(v)
    if not 0 <= v <= r <= m:
        raise DPTopicError(f"invalid counts m={m}, r={r}, v={v}: need 0 <= v <= r <= m.")
    if not (epsilon >= 0 and 0 <= delta <= 1):
        raise DPTopicError(f"invalid epsilon={epsilon!r} or delta={delta!r}: need epsilon >= 0 and delta in [0, 1].")
    q = 1.0 / (1.0 + math.exp(-float(epsilon)))
    p = float(binom.sf(v - 1, r, q))       # P[B >= v]
    if delta > 0 and v > 0:
        # P[v - i <= B < v] for i = 1..v: cumulative sums of the pmf at v-1, v-2, ..., 0
        window = np.cumsum(binom.pmf(np.arange(v - 1, -1, -1), r, q))
        p += 2.0 * m * float(delta) * float(np.max(window / np.arange(1, v + 1)))
    return min(p, 1.0)


def one_run_epsilon_bound(m: int, r: int, v: int, confidence: float = 0.95, delta: float = 0.0,
                          tol: float = 1e-6) -> float:
    """The largest ε (to ``tol``, rounded down) whose p-value :func:`one_run_p_value` is below ``1 − confidence``:
    the procedure is not (ε, δ)-DP for any smaller ε, at that confidence. 0 when even ε = 0 is not refuted."""
    if not 0 < confidence < 1:
        raise DPTopicError(f"invalid confidence={confidence!r}: must lie in (0, 1).")
    beta = 1.0 - float(confidence)
    lo, hi = 0.0, EPSILON_MAX
    if one_run_p_value(m, r, v, lo, delta) >= beta:
        return 0.0
    if one_run_p_value(m, r, v, hi, delta) < beta:  # cannot happen for v <= r, kept for safety
        return hi
    while hi - lo > tol:       # invariant: p(lo) < beta <= p(hi); the p-value grows with epsilon
        mid = 0.5 * (lo + hi)
        if one_run_p_value(m, r, v, mid, delta) < beta:
            lo = mid
        else:
            hi = mid
    return lo


# ------------------------------------------------------------------ canaries
def rare_words(corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
    """Word ids ordered from the rarest (fewest documents) up; ties in random order."""
    rows = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
    pairs = np.unique(rows.astype(np.int64) * corpus.vocab_size + corpus.word_ids, return_counts=False)
    df = np.bincount(pairs % corpus.vocab_size, minlength=corpus.vocab_size)
    return np.lexsort((rng.random(corpus.vocab_size), df))


def make_canaries(corpus: Corpus, n_canaries: int, canary_length: int, rng: np.random.Generator,
                  words_per_canary: int = 2) -> list[np.ndarray]:
    """``n_canaries`` documents of ``canary_length`` tokens, each drawn from its own set of ``words_per_canary`` rare
    words: disjoint sets of the rarest words while the vocabulary has enough of them, otherwise distinct random sets
    of the rarest half of it. They depend on the corpus and ``rng`` only, never on the coins."""
    V = corpus.vocab_size
    w = min(int(words_per_canary), V)
    order = rare_words(corpus, rng)
    if n_canaries * w <= V // 2 or n_canaries * w <= V and V < 4:
        sets = [order[i * w:(i + 1) * w] for i in range(n_canaries)]
    else:
        pool = order[:max(w, V // 2)]
        if math.comb(len(pool), w) < n_canaries:
            fit = max(math.comb(len(pool), w), V // 2 // w)
            raise ParameterError("the vocabulary of {V} words is too small for {value} distinct canaries (at most"
                                 " {fit} fit): lower {n_canaries} or audit a corpus with more words.", "n_canaries",
                                 n_canaries, V=V, fit=fit)
        seen, sets = set(), []
        while len(sets) < n_canaries:
            s = tuple(sorted(rng.choice(pool, size=w, replace=False).tolist()))
            if s not in seen:
                seen.add(s)
                sets.append(np.array(s))
    docs = []
    for s in sets:      # every word of the set at least once, the rest drawn uniformly from it
        doc = np.concatenate([s, rng.choice(s, size=max(0, canary_length - len(s)))])[:canary_length]
        docs.append(rng.permutation(doc).astype(np.int64))
    return docs


def _with_canaries(corpus: Corpus, canaries: list, include: np.ndarray) -> Corpus:
    added = [c for c, keep in zip(canaries, include) if keep]
    lengths = np.concatenate([corpus.doc_lengths, [len(c) for c in added]]).astype(np.int64)
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    ids = np.concatenate([corpus.word_ids.astype(np.int64)] + [np.asarray(c, np.int64) for c in added])
    user_ids = None
    if corpus.user_ids is not None:     # a user-level model: each canary is a person of its own, an id no one has
        taken = set(corpus.user_ids)
        names = [f"canary {i}" for i in np.flatnonzero(include)]
        while taken & set(names):
            names = ["_" + n for n in names]
        user_ids = list(corpus.user_ids) + names
    return Corpus(ptr, ids.astype(np.int32), corpus.vocabulary, metadata=corpus.metadata, user_ids=user_ids)


CANARY_LENGTH = 100
"""Tokens per canary by default."""
MAX_CANARY_TOKENS = 10_000_000
"""The most tokens all canaries together may hold: they are written, added to the corpus and trained on, so memory
holds them several times over (a billion-token canary would take tens of gigabytes before any training)."""


def check_canary_size(n_canaries: int, canary_length: int, corpus_tokens: int | None = None,
                      names: tuple = ("n_canaries", "canary_length")) -> None:
    """Refuse canaries that memory or the corpus cannot hold, before any is written: more than
    :data:`MAX_CANARY_TOKENS` tokens in all, or (``corpus_tokens`` given) one canary longer than the whole corpus,
    which would outweigh every document the model is trained on (up to :data:`CANARY_LENGTH` tokens, the default, is
    allowed on a smaller corpus). ``names``: how the caller spells the two settings (a command line's flags; by
    default ``n_canaries``/``canary_length``)."""
    count, length = names
    sep = " " if length.startswith("--") else "="
    total = int(n_canaries) * int(canary_length)
    if total > MAX_CANARY_TOKENS:
        if n_canaries > MAX_CANARY_TOKENS:
            raise DPTopicError(f"invalid {count}{sep}{n_canaries:,}: more canaries than the {MAX_CANARY_TOKENS:,}"
                               " canary tokens the audit can hold in memory; give at most"
                               f" {MAX_CANARY_TOKENS // max(1, int(canary_length)):,} (200 is typical).")
        raise DPTopicError(f"invalid {length}{sep}{canary_length:,}: {n_canaries:,} canaries of {canary_length:,}"
                           f" tokens hold {total:,} tokens, more than the {MAX_CANARY_TOKENS:,} the audit can hold in"
                           " memory (the canaries are written, added to the corpus and trained on): give"
                           f" {length} at most {MAX_CANARY_TOKENS // int(n_canaries):,} (100 is typical), or fewer"
                           f" {count}.")
    if corpus_tokens is not None and canary_length > max(corpus_tokens, CANARY_LENGTH):
        raise DPTopicError(f"invalid {length}{sep}{canary_length:,}: longer than the whole corpus ({corpus_tokens:,}"
                           " tokens), so each canary would outweigh every document the model is trained on: give"
                           f" {length} at most {corpus_tokens:,} (100 is typical).")


def _whole(name, value, least):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise DPTopicError(f"invalid {name}={value!r}: give a whole number >= {least}.")
    return int(value)


def guesses(scores: np.ndarray, k_plus: int, k_minus: int, rng: np.random.Generator) -> np.ndarray:
    """+1 for the ``k_plus`` highest scores, −1 for the ``k_minus`` lowest, 0 (abstain) elsewhere; ties broken at
    random (independently of the coins)."""
    n = len(scores)
    perm = rng.permutation(n)
    order = perm[np.argsort(-np.asarray(scores, float)[perm], kind="stable")]
    T = np.zeros(n, dtype=np.int64)
    T[order[:k_plus]] = 1
    if k_minus:
        T[order[n - k_minus:]] = -1
    return T


NOTE = ("the confidence is exact under the design's assumptions (each canary included by an independent fair coin"
        " drawn after the canaries were written; the guesses depend on the data only through the one trained model):"
        " Steinke, Nasr & Jagielski 2023, Thm 3.1. It is a lower bound on the training procedure's epsilon for adding"
        " or removing one canary document (rare words the audit wrote), not for the corpus's natural documents;"
        " see docs/auditing.md")


def one_run_audit(corpus: Corpus, train_fn, n_canaries: int = 200, canary_length: int = CANARY_LENGTH,
                  k_plus: int | None = None, k_minus: int | None = None, confidence: float = 0.95,
                  delta: float | None = None, seed=None, words_per_canary: int = 2, claim: dict | None = None) -> dict:
    """Audit ``train_fn`` (``train_fn(corpus, rng)`` -> Φ or a fitted estimator, as
    :func:`dptopic.attacks.lira.estimator_trainer` builds it) with one training run on ``corpus`` plus the canaries
    whose coins came up +1 (Steinke et al. 2023; module docstring).

    Score of a canary: ``s(Φ, c) = max_θ log p(c | θ, Φ)``, the statistic of the LiRA audit
    (:func:`dptopic.kernels.em.document_statistic`). ``k_plus``/``k_minus`` default to a quarter of the canaries (at least 1)
    each. ``delta`` defaults to the claim's delta (0 for a pure claim or none). ``claim``: the privacy report audited
    (a saved model's ``privacy_``); by default the trained model's own. ``seed=None`` draws fresh OS entropy.

    Returns a dict: ``epsilon_lower_bound`` (at ``delta``), ``epsilon_lower_bound_delta0``, the counts
    (``n_canaries``, ``n_included``, ``k_plus``, ``k_minus``, ``n_guesses``, ``n_correct``), ``confidence``,
    ``delta``, ``relation`` (``add_remove``), ``claimed_privacy``, ``verdict``, ``verdict_note``, ``design`` and
    ``note`` (what the confidence covers).
    """
    _check_corpus(corpus)
    m = _whole("n_canaries", n_canaries, 2)
    L = _whole("canary_length", canary_length, 1)
    wpc = _whole("words_per_canary", words_per_canary, 1)
    check_canary_size(m, L, corpus.n_tokens)     # before any canary is written or model trained
    quarter = max(1, m // 4) if m >= 2 else 0   # at least one guess each way, also for 2 or 3 canaries
    kp = quarter if k_plus is None else _whole("k_plus", k_plus, 0)
    km = quarter if k_minus is None else _whole("k_minus", k_minus, 0)
    if kp + km > m or kp + km == 0:
        raise DPTopicError(f"invalid k_plus={kp}, k_minus={km}: together they must guess between 1 and n_canaries"
                           f" ({m}) canaries.")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating)) or not 0 < confidence < 1:
        raise DPTopicError(f"invalid confidence={confidence!r}: must lie in (0, 1).")
    if delta is not None and (isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating))
                              or not 0 <= delta < 1):
        raise DPTopicError(f"invalid delta={delta!r}: must lie in [0, 1), or None for the claim's delta.")
    if claim is not None and not isinstance(claim, dict):
        raise DPTopicError(f"invalid claim of type {type(claim).__name__}: give a privacy report (a model's privacy_).")
    _check_train_fn(train_fn)
    seed = _check_seed(seed)
    root = seed if isinstance(seed, (np.random.Generator, np.random.SeedSequence)) else np.random.SeedSequence(seed)
    rng_canary, rng_train, rng_guess = (np.random.default_rng(s) for s in root.spawn(3))
    canaries = make_canaries(corpus, m, L, rng_canary, wpc)
    coins = rng_canary.integers(0, 2, size=m) * 2 - 1          # drawn after the canaries were written

    with shadow_runs():     # the audited run goes on its own dataset of the ledger, never the user's
        fitted = train_fn(_with_canaries(corpus, canaries, coins > 0), rng_train)
    phi, privacy = phi_and_privacy(fitted)
    phi = check_phi(phi, corpus.vocab_size)
    X = Corpus.from_token_ids(canaries, corpus.vocabulary).to_bow()
    scores = np.asarray(document_statistic(phi, X), dtype=np.float64)
    T = guesses(scores, kp, km, rng_guess)
    r, v = int(np.count_nonzero(T)), int(np.sum(T * coins > 0))
    report = shadow_claim(privacy, ONE_RUN_SEED_NOTE) if claim is None else claim
    d = claim_delta(report) if delta is None else float(delta)
    bound = one_run_epsilon_bound(m, r, v, confidence, d)
    claimed = claimed_epsilon(report)
    verdict_name, verdict_note = verdict(claimed, bound)
    if (claimed.get("epsilon") is not None and unit_covers_document(claimed.get("unit"))
            and claim_relation(report) != "add_remove"):
        verdict_name = "relations differ"
        verdict_note = (f"the claim (epsilon {claimed['epsilon']:g}) protects replacing one document, and the one-run"
                        " design adds or removes canaries, which a replace-one claim does not cover in general (the"
                        " number of documents may show): the bound is not comparable with it; use the LiRA design")
    return {
        "design": "one-run (Steinke, Nasr & Jagielski 2023): each canary included by an independent fair coin, one"
                  " model trained, the k+ highest-scoring canaries guessed in and the k- lowest out",
        "epsilon_lower_bound": bound, "epsilon_lower_bound_delta0": one_run_epsilon_bound(m, r, v, confidence, 0.0),
        "confidence": float(confidence), "delta": d, "relation": "add_remove",
        "n_canaries": m, "n_included": int(np.sum(coins > 0)), "canary_length": L, "words_per_canary": wpc,
        "k_plus": kp, "k_minus": km, "n_guesses": r, "n_correct": v,
        "accuracy": v / r if r else None, "p_value_at_zero": one_run_p_value(m, r, v, 0.0, d),
        "score": "s(Phi, canary) = max over theta of log p(canary | theta, Phi), as the LiRA audit's statistic",
        "claimed_privacy": claimed, "verdict": verdict_name, "verdict_note": verdict_note,
        "note": NOTE, "seed": seed if isinstance(seed, int) else None,
    }


def bound_figure(audit: dict) -> bytes | None:
    """A PNG of a one-run audit's lower bound against the claim (``audit``: the ``audit.json`` of a one-run audit,
    as ``dptopic audit`` writes it): the bound at the stated confidence, what an ideal audit of the release's noise
    expects from as many canaries (an audit scored on the release), and the claimed epsilon as a line. None when the
    audit holds no bound. A report page with its audit embeds it."""
    emp = audit.get("empirical_epsilon") if isinstance(audit, dict) else None
    if not isinstance(emp, dict) or not isinstance(emp.get("epsilon_lower_bound"), (int, float)):
        return None
    import matplotlib  # matplotlib: heavy, loaded only to draw

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # matplotlib: heavy, loaded only to draw

    claim = (audit.get("claimed_privacy") or {}).get("epsilon")
    unit = emp.get("canary_unit", "document")
    bars = [(f"lower bound ({100 * float(emp.get('confidence', 0.95)):.3g}%)", float(emp["epsilon_lower_bound"]))]
    if isinstance(emp.get("ideal_bound"), (int, float)):
        bars.append(("ideal audit, as many canaries", float(emp["ideal_bound"])))
    fig, ax = plt.subplots(figsize=(6.4, 2.2 + 0.4 * len(bars)))
    ax.barh([b[0] for b in bars], [b[1] for b in bars], color=["#c0392b", "#95a5a6"][:len(bars)])
    if isinstance(claim, (int, float)):
        ax.axvline(float(claim), color="#2c3e50", linestyle="--", label=f"claimed epsilon {claim:.3g}")
        ax.legend(loc="lower right")
    top = max([b[1] for b in bars] + ([float(claim)] if isinstance(claim, (int, float)) else []))
    ax.set_xlim(0, 1.15 * top if top > 0 else 1)
    ax.set_xlabel("epsilon")
    score = "scored on the release" if emp.get("score") == "release" or audit.get("score") == "release" else \
        "scored through the topics"
    # over the whole figure, not the axes (which the long bar labels push right): a title centred on the axes ran
    # past the figure's right edge and was cut in the report
    fig.suptitle(f"one-run audit ({score}): {emp.get('n_canaries')} canary {unit}s"
                 + (f" of {emp.get('canary_documents')} documents" if unit == "person" else ""), fontsize=10, wrap=True)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
