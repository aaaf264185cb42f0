"""Topics from the two secure sums of a secure-sum round (``dptopic serve``'s secure-sum report kind; post-processing
only).

The releases are those of ``DocDPCooccurrence(unit="user")`` (each person's presence vector with a document entry,
then each person's co-occurrence matrix over the kept words, both bounded to norm 1 per person), summed by the
contributors' secure aggregation with Skellam noise (:mod:`dptopic.protocol.secure_sum.default`) instead of the server's
Gaussian noise. The word choice between them and the topics are read as that trainer reads them, by
``"refined-anchors"`` recovery; the model is a :class:`SecureSumTopics` (a ``DocDPCooccurrence`` whose privacy report
is the secure sum's).
"""
from __future__ import annotations

import math

import numpy as np

from ..accounting import PrivacyLedger
from ..accounting.plan import PlannedRelease, ReleasePlan
from ..accounting.skellam import THEOREM as SKELLAM_THEOREM
from ..corpus import Vocabulary
from ..errors import DPTopicError
from ..moments import topics_from_cooccurrence
from ..moments.public_groups import spread_tail
from ..moments.support import cooccurrence_supported_topics
from ..moments.vector_prior import resolve_vectors, vectors_entry
from ..person_bound import USER_NOT_COVERED, USER_RELATION, user_bound_text
from ..protocol.secure_sum.plan import SecureSumPlan
from ..protocol.secure_sum.ring import triangle_size, triangle_to_matrix
from .docdp_cooc import DocDPCooccurrence, _clear_the_noise, auto_n_words_moments

TRUST_MODEL = ("secure aggregation against a server that may lie and drop contributors (Bonawitz et al. 2017,"
               " malicious variant; Bell et al. 2020): every contributor was invited by the round's operator, whose"
               " enrollment key the server does not hold, and signs what it sends; each contributor checks every"
               " roster, set and step the server names, and reveals its neighbours' shares only after {th}"
               " consistency signatures of their neighbours over the same set of uploads; at most {t} enrolled"
               " contributors collude with the server (each contributor's mask seeds are Shamir-shared among its {d}"
               " neighbours with threshold {th}); the noise is calibrated so that with {f} dropped, {t} colluders'"
               " shares known and the protected person's own share left out, the {h} remaining shares still give"
               " epsilon; contributors are trusted to bound their own statistic (the masks hide it, so the server"
               " cannot check it)")
COMMITTEE_TRUST_MODEL = (
    "secure aggregation against a server that may lie and drop contributors, in its committee mode (Bonawitz et al."
    " 2017, malicious variant; Bell et al. 2020; the committee after Ma et al. 2023, Flamingo): every contributor was"
    " invited by the round's operator, whose enrollment key the server does not hold, and signs what it sends; each"
    " masks its statistic with its {d} neighbours and Shamir-shares its mask seeds among a committee of {c}"
    " contributors chosen by a public hash of the roster, with threshold {tc}; each committee member checks every set"
    " of uploads the server names and reveals shares only after {tc} committee signatures over the same set; at most"
    " {t} enrolled contributors collude with the server, committee members included (the threshold keeps the"
    " guarantee whichever {t} they are: docs/research/secure_sum_round_trips.md); the noise is calibrated so that"
    " with {f} dropped, {t} colluders' shares known and the protected person's own share left out, the {h} remaining"
    " shares still give epsilon; contributors are trusted to bound their own statistic (the masks hide it, so the"
    " server cannot check it)")


def trust_model(plan) -> str:
    """The card's trust model for a round run with ``plan``: the committee mode's when the plan has a committee; a
    round in cohorts' (a :class:`~dptopic.protocol.secure_sum.cohorts.CohortPlan`: its cohorts, delegates and bridge,
    and a committee per cohort when it has one) for such a plan."""
    if hasattr(plan, "cohort_plans"):
        return plan.trust_model()
    if plan.committee:
        return COMMITTEE_TRUST_MODEL.format(t=plan.collusion, d=plan.degree, c=plan.committee,
                                            tc=plan.committee_threshold, f=plan.dropouts, h=plan.honest)
    return TRUST_MODEL.format(t=plan.collusion, d=plan.degree, th=plan.threshold, f=plan.dropouts, h=plan.honest)


def released_words(plan, presence_sum: np.ndarray, shares: int, n_topics: int):
    """``(kept, counts, sigma_rank, sigma, word_threshold, expected_false)`` from the unmasked first sum (post-
    processing, as ``DocDPCooccurrence``'s ``n_words="auto"`` with ``recovery="refined-anchors"``, at most the plan's
    :attr:`~dptopic.protocol.secure_sum.plan.SecureSumPlan.max_kept_words` words, those of highest noisy count):
    ``shares`` contributors' noise shares are in it."""
    V = plan.vocab_size
    released = np.asarray(presence_sum, dtype=np.float64) / plan.scale
    if released.shape != (V + 1,):
        raise DPTopicError(f"the first sum has {released.shape} entries, not V + 1 = {V + 1}.")
    rel = plan.releases(shares=shares)
    sigma_rank = math.sqrt(2 * rel[0].mu) / plan.scale
    sigma = math.sqrt(2 * rel[1].mu) / plan.scale
    counts = released[:V]
    if n_topics > plan.max_kept_words:
        raise DPTopicError(f"{n_topics} topics need at least as many kept words, but the plan sums at most"
                           f" {plan.max_kept_words}: fewer topics, or a plan with more words (max_words).")
    # at most the plan's max_words (the words of highest noisy count: post-processing of the first sum)
    n_words = max(min(auto_n_words_moments(float(counts.sum()), sigma), plan.max_kept_words), n_topics)
    order = np.argsort(-counts, kind="stable")
    threshold, expected, eligible = _clear_the_noise(order, counts, 0.5, sigma_rank, n_topics, n_words)
    kept = np.sort(eligible[:n_words])
    return kept, counts, sigma_rank, sigma, threshold, expected


def skellam_release(event, name: str, quantization: float) -> PlannedRelease:
    """One secure sum of a round: each person's statistic, bounded to L2 norm 1, quantized at ``quantization`` and
    summed under masks with each contributor's share of Skellam noise (the distributed Skellam mechanism, Agarwal,
    Kairouz & Liu 2021), accounted by Renyi DP at the honest survivors' shares; sensitivity 1 per person, scale the
    noise's standard deviation in the statistic's units, ``sqrt(2 mu) / quantization``."""
    return PlannedRelease(name, "skellam", 1.0, math.sqrt(2.0 * float(event.mu)) / float(quantization), event)


class SecureSumTopics(DocDPCooccurrence):
    """Topics released by a secure-sum round (``dptopic serve``'s secure-sum report kind): a
    :class:`~dptopic.models.DocDPCooccurrence` with ``unit="user"`` read from the two sums, whose privacy report names
    the Skellam mechanism, the trust model and the round's settings (``docs/secure_sum.md``). It is not fitted on
    documents: :func:`secure_sum_topics` builds it.

    Parameters
    ----------
    n_topics : as :class:`~dptopic.models.DocDPCooccurrence`'s with ``unit="user"`` (so are the others), set by
        :func:`secure_sum_topics` from the round's plan, never by a caller (``fit`` refuses).

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words), the topic-word probabilities read from the round's two
        unmasked sums (rows sum to 1).
    vocabulary_, kept_words_, supported_topics_ : as :class:`~dptopic.models.DocDPCooccurrence`'s.
    privacy_ : dict, the privacy report: user-level, the Skellam mechanism on the sums of the honest survivors'
        shares, the trust model and the round's settings.
    """

    def fit(self, X, y=None, **kw):
        raise DPTopicError("SecureSumTopics comes from a secure-sum round (dptopic serve's secure-sum report kind);"
                           " to train on documents you hold, use DocDPCooccurrence(unit='user').")

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """The round's two secure sums (:func:`skellam_release`), at the noise the guarantee rests on (the honest
        survivors' shares), from the round's public settings (kept with the model, or read back from its saved
        report): the vectors this round summed; ``n_words`` (the vocabulary's size) gives the largest vectors a round
        over it may sum where the model holds no round's."""
        secure = getattr(self, "_secure_plan", None)
        params = (getattr(self, "privacy_", None) or {}).get("parameters") or {}
        if secure is None:
            secure = SecureSumPlan.from_dict(params)
        dims = getattr(self, "_secure_dims", None)
        if dims is None and isinstance(params.get("n_words"), int):     # the round's, from its saved report
            dims = (secure.vocab_size + 1, triangle_size(params["n_words"]))
        if dims is None and n_words is not None:        # before a round: the largest vectors it may sum
            dims = (int(n_words) + 1, triangle_size(min(int(n_words), secure.max_kept_words)))
        names = ("word ranking (secure sum)", "co-occurrence statistic (secure sum)")
        releases = tuple(skellam_release(ev, name, secure.scale) for ev, name in zip(secure.releases(dims=dims), names))
        _, wrap = secure.calibrated()
        return ReleasePlan(type(self).__name__, "user", releases, relation=USER_RELATION, theorem=SKELLAM_THEOREM,
                           budget=(float(secure.epsilon), float(secure.delta) - wrap))

    def _planned_spend(self, report: dict):
        return None

    def privacy_report(self) -> dict:
        return dict(self._secure_report)


def secure_sum_topics(plan, vocabulary, n_topics: int, presence_sum, cooc_sum, shares: tuple[int, int],
                      round_info: dict, public_vectors="auto") -> SecureSumTopics:
    """The model of a round: ``presence_sum`` and ``cooc_sum`` the unmasked integer sums, ``shares`` the number of
    noise shares in each. ``public_vectors`` (as ``DocDPCooccurrence``'s; default: the installed vectors of the
    vocabulary's language): the words outside the kept ones are placed in the topics of their nearest kept words
    (post-processing of the sums and public input: :mod:`dptopic.moments.vector_prior`); the model's report names
    them."""
    vocab = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(list(vocabulary))
    vectors, vectors_note, by_default = resolve_vectors(public_vectors, list(vocab.words), applies=True)
    V, K = len(vocab), int(n_topics)
    kept, counts, sigma_rank, sigma, threshold, expected = released_words(plan, presence_sum, shares[0], K)
    n = len(kept)
    cooc = np.asarray(cooc_sum, dtype=np.float64) / plan.scale
    if cooc.shape != (triangle_size(n),):
        raise DPTopicError(f"the second sum has {cooc.shape} entries, not {triangle_size(n)} (the triangle over {n}"
                           " words).")
    sigma = math.sqrt(2 * plan.releases(shares=shares[1])[1].mu) / plan.scale
    noisy = triangle_to_matrix(cooc, n)
    H = topics_from_cooccurrence(noisy, K, "refined-anchors", noise_std=sigma / math.sqrt(2.0), threshold=1.0)
    supported = cooccurrence_supported_topics(noisy, H, sigma / math.sqrt(2.0))
    weight = np.maximum(counts, 0.0) + 1e-3 * sigma_rank
    rest = np.setdiff1d(np.arange(V), kept)
    beta = np.zeros((K, V))
    share = 0.0
    if len(rest):
        share = float(np.clip(weight[rest].sum() / (weight[rest].sum() + weight[kept].sum()), 0.01, 0.9))
        beta[:, rest] = share * weight[rest] / weight[rest].sum()
    beta[:, kept] = H * (1.0 - share)
    beta += 1e-9 * beta.sum(axis=1, keepdims=True)
    model = SecureSumTopics(n_topics=K, epsilon=plan.epsilon, delta=plan.delta, unit="user")
    model.components_ = beta / beta.sum(axis=1, keepdims=True)
    if vectors is not None and len(rest):      # the words outside the release, placed by their vectors
        E, found, _ = vectors.for_words(list(vocab.words))
        model.components_ = spread_tail(model.components_, kept, E, found)
    model.public_vectors_ = (None if vectors is None or not len(rest) else
                             vectors_entry(vectors, list(vocab.words), by_default, "spread"))
    model.public_vectors_note_ = vectors_note
    model.noise_std_, model.ranking_noise_std_ = float(sigma), float(sigma_rank)
    model.kept_words_ = kept
    model.word_threshold_, model.expected_false_words_ = threshold, expected
    model.word_choice_ = "frequency"
    model.background_words_ = np.zeros(0, dtype=np.int64)
    model.n_background_topics_ = 0
    model.background_topics_ = np.zeros(K, dtype=bool)
    model.supported_topics_ = supported
    model.background_share_ = None
    model.public_input_ = model.public_route_ = None
    model.vocabulary_ = vocab
    model._vocabulary_supplied = True
    model._train_stats = {"vocab_size": V}
    model._secure_report = secure_sum_report(plan, (V + 1, triangle_size(n)), shares, round_info)
    if model.public_vectors_:
        model._secure_report["public_vectors"] = dict(model.public_vectors_)
    model.ledger_ = None
    model._secure_plan, model._secure_dims = plan, (V + 1, triangle_size(n))
    model._set_fitted(None)
    return model


def secure_sum_report(plan, dims, shares, round_info: dict) -> dict:
    """The privacy report of a round: the Skellam events at the noise the guarantee rests on (the honest survivors'
    shares at the dropout tolerance), composed by the ledger (RDP), with the trust model and the wrap-around
    probability inside delta."""
    mus, wrap = plan.calibrated()
    bound = user_bound_text(None)
    ledger = PrivacyLedger(unit="user", relation=USER_RELATION, theorem=SKELLAM_THEOREM)
    for ev in plan.releases(dims=dims):
        ledger.spend(ev)
    rep = ledger.report(float(plan.delta) - wrap)   # the wrap-around's probability is added back: delta_total
    rep["delta_total"] = rep["delta"] + wrap
    rep.update({
        "mode": "secure sum of per-person statistics (distributed Skellam noise)",
        "user_bound": bound,
        "theorem": SKELLAM_THEOREM + f"; each person's contribution: {bound}",
        "trust_model": trust_model(plan),
        "wrap_around_probability": wrap,
        "noise_shares": {"calibrated_for": plan.honest, "in_the_sums": list(shares),
                         "note": "the honest shares besides the protected person's own (N - F - t - 1)"},
        "epsilon_by_colluders": plan.epsilon_by_colluders(dims),
        "parameters": {**plan.to_dict(), "n_words": int(dims[1] and round(math.sqrt(2 * dims[1] + 0.25) - 0.5)),
                       "documents_per_user": None, "l2_sensitivity": 1.0},
        "round": round_info,
        "vocabulary_source": "supplied",
        "scope": ("covers the two noisy sums (each person's presence vector and co-occurrence matrix, each bounded to"
                  " norm 1), hence the kept words and the released topics (post-processing), against anyone who sees"
                  " the sums or the model. NOT covered: " + USER_NOT_COVERED + "a contributor who does not bound"
                  " their own statistic (the masks hide it from the server's checks), a server that holds the"
                  " operator's enrollment key (it could enroll contributors of its own), more than the stated number"
                  " of colluding contributors (epsilon_by_colluders gives the figure up to it; beyond it the masks"
                  " are not covered either), a server that stops the round (it can always fail it: nothing is then"
                  " released), and the choice of hyper-parameters."),
        "noise": "skellam", "secure_noise": False,
        "randomness": ("each contributor's rounding and Skellam share are drawn on its own machine (dptopic submit)"
                       " from the operating system's CSPRNG: AES-256-CTR keyed from os.urandom, exact Poisson"
                       " samplers (docs/secure_sum.md); the server cannot check a contributor's coins"),
    })
    return rep
