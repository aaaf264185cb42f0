"""LP-LDA: LDA trained by an untrusted server on locally randomized reports (Zhao et al. 2020, Sec. V).

Orchestration only: the estimators live in :mod:`dptopic.protocol.estimation`, the sampler is
the core collapsed Gibbs sampler (:class:`~dptopic.models.LDA`), the privacy report comes
from the ledger (:func:`dptopic.accounting.local.local_privacy_report`).
"""
from __future__ import annotations

import numpy as np

from .._io import plain_numbers
from .._validation import IsNone, Real
from ..accounting.events import LOCAL_DOCUMENT_RELATION, RandomizedResponseEvent
from ..accounting.local import LOCAL_THEOREM, f_from_epsilon, local_privacy_report, local_unit
from ..accounting.plan import PlannedRelease, ReleasePlan
from ..accounting.verify import RunPlan
from ..corpus import Vocabulary
from ..errors import CorruptModelError, DPTopicError
from ..protocol.estimation import (
    bits_to_corpus,
    integer_targets,
    moment_estimate,
    reconstruct,
    variance_exact,
    variance_paper,
)
from ..protocol.reports import REFIT_NOTE, WORD_SCOPE, ReportSet
from ._contributors import checked_reports, stated_reports
from .lda import LDA

SERVER_SEED_NOTE = ("the seed drives only the server's post-processing (reconstruction and sampling); the"
                    " randomization happened on the contributors' devices and is not reproducible from it")


def presence_report_release(f: float, vocab_size: int, reports: int) -> PlannedRelease:
    """One contributor's randomized report, ``reports`` times: randomized response on each of the ``vocab_size``
    presence bits of a document, each flipped with probability ``f/2``, eps_word = ln((2 - f)/f) per word and the
    V bits composed per document (Zhao et al. 2020, Theorem 4), drawn on the contributor's device. Sensitivity: the
    V bits a document may change; scale: the flip probability."""
    event = RandomizedResponseEvent(float(f), int(vocab_size))
    return PlannedRelease("randomized presence report", "randomized_response", float(vocab_size), float(f) / 2.0,
                          event, int(reports))


class LocalReportsModel:
    """What the models trained from randomized reports share: f/epsilon_word, the report check,
    the privacy report, and never saving the seed."""

    _never_private = False  # local DP: the randomized reports carry the guarantee

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # fit takes randomized reports (a ReportSet), never a document-term matrix; transform still takes counts
        tags.input_tags.sparse = False
        tags.input_tags.two_d_array = False
        return tags

    def _expected_f(self):
        if self.f is not None and self.epsilon_word is not None:
            raise DPTopicError("give at most one of f and epsilon_word: they determine each other (f = 2/(1 + e^eps_word)).")
        if self.epsilon_word is not None:
            return f_from_epsilon(self.epsilon_word)
        return self.f

    def _check_reports(self, reports, vocabulary=None) -> tuple:
        if not isinstance(reports, ReportSet):
            raise DPTopicError(f"expected a ReportSet (randomized reports), got a {type(reports).__name__}: randomize"
                               " documents with dptopic.contributor.Randomizer or load a report file with ReportSet.load.")
        vocab = vocabulary if vocabulary is not None else getattr(self, "vocabulary_", None)
        vocab = vocab if vocab is None or isinstance(vocab, Vocabulary) else Vocabulary(vocab)
        if vocab is None:
            vocab = reports.vocabulary
        if vocab is None:
            raise DPTopicError("the reports do not carry their vocabulary: pass vocabulary= (the public word list"
                               " the contributors used).")
        reports.check(vocabulary=vocab, f=self._expected_f())
        if reports.n_reports == 0:
            raise DPTopicError("empty batch: the report set holds no reports.")
        return reports, vocab

    def _saved_params(self) -> dict:
        params = super()._saved_params()
        params["seed"] = None  # never saved (a private model's seed stays with its owner)
        return params

    def for_contributors(self, reports: int):
        """State the guarantee for contributors who sent up to ``reports`` reports each (their events compose): what
        a collection server knows of its store (``dptopic serve`` calls it before every save). Only ever raised:
        the figure a fitted model reports stays at least the largest it was given."""
        self._reports_per_contributor = max(checked_reports(reports), self._contributor_reports())
        self.privacy_ = plain_numbers(self.privacy_report())
        self._record_plan()       # the plan for this many reports a contributor
        self._name_guarantee()      # the rebuilt report names its extent, as the fitted one did
        return self

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """What one contributor releases (public settings alone: the flip parameter, the vocabulary's size, how many
        reports a contributor sends): :func:`presence_report_release` per report. The server's fit releases nothing
        of its own (post-processing of the reports), so it reserves nothing; its report states these events."""
        f = getattr(self, "f_", None) or self._expected_f()
        if f is None:
            raise DPTopicError("f is unknown: give f or epsilon_word, or train on reports first.")
        V = n_words if n_words is not None else len(getattr(self, "vocabulary_", None) or ())
        if not V:
            raise DPTopicError("the vocabulary's size is unknown: give n_words, or train on reports first.")

        m = self._contributor_reports()
        return ReleasePlan(type(self).__name__, local_unit(m), (presence_report_release(f, int(V), m),),
                           relation=LOCAL_DOCUMENT_RELATION, theorem=LOCAL_THEOREM)

    def _planned_spend(self, report: dict):
        """The unit and relation a local report must name: one document, or one contributor's reports when the
        report states several (their count is what the server knew of its store, public), under the local
        relation."""
        return RunPlan(unit=local_unit(stated_reports(report)), relation=LOCAL_DOCUMENT_RELATION)

    def _contributor_reports(self) -> int:
        given = getattr(self, "_reports_per_contributor", None)     # set by for_contributors, or read back from
        return given if given is not None else stated_reports(getattr(self, "privacy_", None))  # the saved report

    def _local_report(self, server_steps, scope: str = "") -> dict:
        f = getattr(self, "f_", None) or self._expected_f()
        if f is None:
            raise DPTopicError("no reports seen yet: the privacy report needs f; train on reports first.")
        rep = local_privacy_report(f, len(self.vocabulary_), self.delta, reports_per_contributor=self._contributor_reports(),
                                   server_steps=server_steps, scope=scope or WORD_SCOPE)
        if self.seed is not None:
            rep["server_seed"] = SERVER_SEED_NOTE
        rep["fits"] = REFIT_NOTE
        return rep

    def _set_fitted(self, *args, **kwargs) -> None:
        super()._set_fitted(*args, **kwargs)
        if self.privacy_.get("private"):    # the central trainers' note (refits add up) does not hold for reports
            self.privacy_["fits"] = REFIT_NOTE


class LPLDA(LocalReportsModel, LDA):
    """LP-LDA (Zhao et al. 2020, Sec. V): topic model from randomized word-presence reports.

    ``fit(reports)`` estimates how many documents contain each word with the unbiased
    moment estimator of eq. (8), rounds and clamps the estimates to ``[0, M]``, sets or
    clears bits of uniformly chosen reports until every word column holds exactly its
    estimate (Steps 3-5), turns each report into a document with one token per present
    word, and runs collapsed Gibbs sampling on that corpus. Everything after the
    contributors' randomization is post-processing, so the model is
    ``eps_word``-LDP per word and ``V·eps_word``-LDP per document (Theorem 4).

    Parameters
    ----------
    n_topics, alpha, beta, n_iter, n_jobs, sampler, eval_every, verbose : as :class:`LDA`
        (paper defaults K = 50, alpha = 1, beta = 0.01).
    f, epsilon_word : optional expected flip parameter (give at most one); reports made
        with another ``f`` are refused. ``None``: take it from the reports.
    delta : delta at which the tight epsilon(delta) of the per-document guarantee is reported.
    seed : ``None`` (default, fresh OS entropy) or a seed for reproducing the server's
        post-processing; never saved.

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words), the topic-word probabilities (rows sum to 1).
    topic_word_counts_, vocabulary_, privacy_ : as :class:`LDA`.
    f_ : the reports' flip parameter. ``n_reports_`` : M.
    noisy_counts_ : ``n_t``. ``estimates_`` : eq. (8). ``targets_`` : the rounded, clamped targets.
    variance_exact_ : the exact variance of eq. (8) for a fixed data set (same for every word).
    variance_paper_ : eq. (9) as printed, evaluated at the clamped estimate of ``N_t``.
    """

    _parameter_constraints = {**LDA._parameter_constraints,
                              "f": [IsNone(), Real(0, 1, "neither")],
                              "epsilon_word": [IsNone(), Real(0, None, "neither")],
                              "delta": [Real(0, 1, "neither")]}

    def __init__(self, n_topics: int = 50, f: float | None = None, epsilon_word: float | None = None,
                 alpha: float = 1.0, beta: float = 0.01, n_iter: int = 200, delta: float = 1e-5, seed=None,
                 n_jobs: int = 1, sampler: str = "auto", eval_every: int = 0, verbose: int = 1):
        super().__init__(n_topics=n_topics, alpha=alpha, beta=beta, n_iter=n_iter, seed=seed, n_jobs=n_jobs,
                         sampler=sampler, eval_every=eval_every, verbose=verbose)
        self.f = f
        self.epsilon_word = epsilon_word
        self.delta = delta

    def _rng(self) -> np.random.Generator:
        return getattr(self, "_sampling_rng", None) or super()._rng()

    def reconstruct(self, reports: ReportSet, vocabulary=None, rng=None):
        """Steps 1-4: the reconstructed corpus (one token per present word) and the per-word estimates."""
        reports, vocab = self._check_reports(reports, vocabulary)
        M, f = reports.n_reports, reports.f
        n_t = reports.column_sums()
        est = moment_estimate(n_t, M, f)
        targets = integer_targets(est, M)
        rng = rng if rng is not None else np.random.default_rng()
        bits = reconstruct(reports.bits(), targets, rng)
        stats = {"n_reports": M, "f": f, "noisy_counts": n_t, "estimates": est, "targets": targets,
                 "variance_exact": variance_exact(M, f),
                 "variance_paper": variance_paper(np.clip(est, 0, M), M, f)}
        return bits_to_corpus(bits, vocab), stats

    def fit(self, X, y=None, *, vocabulary=None, callback=None):
        """Train on a :class:`~dptopic.protocol.reports.ReportSet` (randomized reports, never raw documents)."""
        self._validate()
        self._expected_f()
        rec_rng, self._sampling_rng = self._rng().spawn(2)
        try:
            corpus, st = self.reconstruct(X, vocabulary, rec_rng)
            self.f_ = st["f"]
            self.n_reports_ = st["n_reports"]
            self.noisy_counts_ = st["noisy_counts"]
            self.estimates_ = st["estimates"]
            self.targets_ = st["targets"]
            self.variance_exact_ = st["variance_exact"]
            self.variance_paper_ = st["variance_paper"]
            super().fit(corpus, callback=callback)
        finally:
            self._sampling_rng = None
        return self

    def word_estimates(self) -> dict:
        """Per-word estimates of the document frequency with both variances (eq. 8, exact, eq. 9)."""
        self._check_fitted()
        return {"word": self.vocabulary_.words, "noisy_count": self.noisy_counts_, "estimate": self.estimates_,
                "target": self.targets_, "variance_exact": np.full(len(self.vocabulary_), self.variance_exact_),
                "variance_paper": self.variance_paper_}

    def privacy_report(self) -> dict:
        return self._local_report(["moment estimator, Zhao et al. eq. (8)", "reconstruction, Steps 3-5",
                                   "collapsed Gibbs sampling on the reconstructed corpus"])

    def _extra_arrays(self) -> dict:
        out = super()._extra_arrays()
        if hasattr(self, "estimates_"):
            out.update({"noisy_counts": self.noisy_counts_, "estimates": self.estimates_, "targets": self.targets_,
                        "variance_paper": self.variance_paper_,
                        "report_stats": np.array([self.f_, self.n_reports_, self.variance_exact_])})
        return out

    def _load_extra(self, arrays) -> None:
        super()._load_extra(arrays)
        if "estimates" in arrays:
            V = len(self.vocabulary_)
            for name in ("noisy_counts", "estimates", "targets", "variance_paper"):
                a = arrays[name]
                if a.shape != (V,) or a.dtype.kind not in "iuf" or not np.all(np.isfinite(a)):
                    raise CorruptModelError(f"corrupt model: {name}.npy must hold {V} finite numbers (one per word),"
                                            f" not {a.dtype} {a.shape}; re-save the model.")
            stats = np.asarray(arrays["report_stats"])
            if stats.shape != (3,) or stats.dtype.kind not in "iuf" or not np.all(np.isfinite(stats)) \
                    or not 0 < stats[0] < 1 or stats[1] < 0 or stats[1] != int(stats[1]):
                raise CorruptModelError("corrupt model: report_stats.npy must hold f (between 0 and 1), the number of"
                                        " reports and the exact variance; re-save the model.")
            self.noisy_counts_ = arrays["noisy_counts"]
            self.estimates_ = arrays["estimates"]
            self.targets_ = arrays["targets"]
            self.variance_paper_ = arrays["variance_paper"]
            self.f_, n, self.variance_exact_ = (float(x) for x in arrays["report_stats"])
            self.n_reports_ = int(n)
        elif "f" in self.privacy_:
            self.f_ = float(self.privacy_["f"])
