"""Topics from document-level local-DP reports (``LocalDocumentLDA``): the server side of
:mod:`dptopic.protocol.document_reports`.

The unbiased pair counts of the reports form a word co-occurrence matrix; its non-negative factorisation
(cells under ``threshold`` noise standard deviations set to zero first) gives the topics
(:func:`dptopic.moments.topics_from_cooccurrence`). Everything reads only the reports: post-processing of
``eps_doc``-LDP reports, so the model carries the reports' guarantee (per document, and per contributor for
``reports_per_contributor`` reports by basic composition).
"""
from __future__ import annotations

import inspect

import numpy as np

from .._io import plain_numbers
from .._validation import VERBOSE, Int, Real
from ..accounting.events import PureDPEvent
from ..accounting.local import local_unit
from ..accounting.plan import PlannedRelease, ReleasePlan
from ..accounting.verify import RunPlan
from ..errors import DPTopicError
from ..mechanisms.frequency_oracle import LOCAL_RELATION, THEOREM
from ..moments import topics_from_cooccurrence
from ..protocol.document_reports import (
    DocumentReportSet,
    cooccurrence_from_counts,
    document_privacy_report,
    domain_size,
)
from ..protocol.reports import REFIT_NOTE
from ._contributors import checked_reports, stated_reports
from ._document_base import _FixedTopicsInference
from .base import TopicModel


def pair_report_release(epsilon: float, vocab_size: int, reports: int) -> PlannedRelease:
    """One contributor's document-level report, ``reports`` times: one uniformly sampled word pair of the document,
    reported by k-subset selection over the D = V(V+1)/2 pairs (Wang et al. 2016; Ye & Barg 2018), pure epsilon-LDP
    for any two documents, drawn on the contributor's device; composed over a contributor's reports by basic
    composition. Sensitivity 1 (one pair) and, as scale, 0 (subset selection adds no noise of a scale)."""
    D = domain_size(int(vocab_size))
    event = PureDPEvent(float(epsilon), label=f"one document's pair by k-subset selection (D={D})", theorem=THEOREM,
                        relation=LOCAL_RELATION)
    return PlannedRelease("randomized word-pair report", "subset_selection", 1.0, 0.0, event, int(reports))


class LocalDocumentLDA(_FixedTopicsInference, TopicModel):
    """Topics learned by an untrusted server from :class:`~dptopic.protocol.document_reports.DocumentReportSet` reports.

    It takes no ``seed``: it has no randomness of its own. The noise is drawn by the contributors
    (:class:`~dptopic.contributor.document_randomizer.DocumentRandomizer`, which takes a seed in simulations), and the topics are a
    fixed function of the reports (pair counts, then NMF from a deterministic start); ``perplexity(X, seed=...)``
    seeds its fold-in sampler.

    Parameters
    ----------
    n_topics : K.
    threshold : co-occurrence cells under ``threshold`` noise standard deviations are set to zero.
    reports_per_contributor : how many reports one contributor may have sent (their epsilons add).
    alpha : document-topic smoothing for ``transform`` and ``perplexity``.

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words), the topic-word probabilities (rows sum to 1).
    pair_counts_ : ndarray of shape (n_words, n_words), the debiased co-occurrence counts read from the reports.
    n_reports_ : int, the reports fitted. ``n_docs_seen_`` : int, the documents they stand for.
    epsilon_doc_ : float, each report's epsilon (the contributors' randomizer's, per document).
    vocabulary_ : Vocabulary of n_words words, the reports' public word list.
    privacy_ : dict, the privacy report: local document-level DP, drawn by the contributors.
    """

    _private = True
    _spends_budget = False   # it fits reports whose noise the contributors drew: refitting them is post-processing
    _parameter_constraints = {"n_topics": [Int(1, 100_000)], "threshold": [Real(0, 1e6)],
                              "reports_per_contributor": [Int(1, 10 ** 9)], "alpha": [Real(1e-8, 1e6)],
                              "verbose": VERBOSE}

    def __init__(self, n_topics: int = 20, threshold: float = 1.0, reports_per_contributor: int = 1,
                 alpha: float = 0.1, verbose: int = 0, **unknown):
        if "seed" in unknown:   # every other estimator takes one: say why this one does not
            raise DPTopicError("LocalDocumentLDA takes no seed: it has no randomness of its own (the noise is drawn by"
                               " the contributors' DocumentRandomizer, which takes the seed in simulations, and the"
                               " topics are a fixed function of the reports); leave seed out, and seed"
                               " perplexity(X, seed=...) for its fold-in sampler.")
        if unknown:
            raise DPTopicError(f"LocalDocumentLDA got unexpected argument(s) {', '.join(sorted(unknown))}: it takes"
                               " n_topics, threshold, reports_per_contributor, alpha and verbose.")
        self.n_topics = n_topics
        self.threshold = threshold
        self.reports_per_contributor = reports_per_contributor
        self.alpha = alpha
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # fit takes document-level reports (a DocumentReportSet), never a document-term matrix, and the topics are a
        # fixed function of them (no randomness of its own)
        tags.input_tags.sparse = False
        tags.input_tags.two_d_array = False
        tags.non_deterministic = False
        return tags

    @classmethod
    def _param_names(cls) -> list[str]:
        # the parameters of the signature, less ``**unknown`` (there only to refuse a seed in one line)

        return [n for n, p in inspect.signature(cls.__init__).parameters.items()
                if n != "self" and p.kind is not p.VAR_KEYWORD]

    def fit(self, reports, y=None):
        """Fit on a :class:`~dptopic.protocol.document_reports.DocumentReportSet` (with its vocabulary). A refused set (or
        parameter) leaves an already fitted model as it was."""
        kept = {attr: self.__dict__.pop(attr) for attr in ("components_", "pair_counts_", "n_reports_")
                if attr in self.__dict__}
        try:
            return self.partial_fit(reports)
        except BaseException:
            self.__dict__.update(kept)          # partial_fit changes nothing when it refuses: put back what fit took
            raise

    def partial_fit(self, reports, y=None):
        """Add a set of reports to those seen so far and re-estimate the topics (the result is the same as one
        ``fit`` on all of them). A refused set leaves the model unchanged."""
        self._validate()
        if not isinstance(reports, DocumentReportSet):
            got = ("word-level reports (train those with OLPLDA or LPLDA)" if type(reports).__name__ == "ReportSet"
                   else f"a {type(reports).__name__}")
            raise DPTopicError("LocalDocumentLDA fits document-level reports (a DocumentReportSet from"
                               f" DocumentRandomizer, as dptopic randomize writes them per document), not {got}.")
        if reports.vocabulary is None:
            raise DPTopicError("these reports carry no vocabulary: load them with the vocabulary they were made with.")
        if reports.n_reports == 0:
            raise DPTopicError("no reports to learn from.")
        if self.n_topics > reports.vocab_size:
            raise DPTopicError(f"n_topics={self.n_topics} exceeds the {reports.vocab_size} words of the reports.")
        if hasattr(self, "pair_counts_"):
            if reports.vocabulary != self.vocabulary_:
                raise DPTopicError(f"these reports were made with another vocabulary ({reports.vocab_size} words) than"
                                   f" the model's ({len(self.vocabulary_)} words): randomize with the model's.")
            if reports.epsilon != self.epsilon_doc_:
                raise DPTopicError(f"these reports were made at eps_doc={reports.epsilon:g}, the model's at"
                                   f" {self.epsilon_doc_:g}: one model takes reports of one epsilon.")
            counts, n = self.pair_counts_ + reports.inclusion_counts(), self.n_reports_ + reports.n_reports
        else:
            counts, n = reports.inclusion_counts(), reports.n_reports
        Q, std = cooccurrence_from_counts(counts, n, reports.vocab_size, reports.epsilon)
        components = topics_from_cooccurrence(Q, int(self.n_topics), "nmf", noise_std=std,
                                              threshold=float(self.threshold))
        self.components_, self.pair_counts_, self.n_reports_ = components, counts, int(n)
        self.vocabulary_ = reports.vocabulary
        self.epsilon_doc_ = reports.epsilon
        self.n_docs_seen_ = int(n)
        self._set_fitted(None)
        self.privacy_["fits"] = REFIT_NOTE      # the central trainers' note (refits add up) does not hold for reports
        self._train_stats = {"vocab_size": reports.vocab_size, "n_reports": int(n)}
        return self

    def _extra_arrays(self) -> dict:
        # how many reports contained each pair: computed from the reports only (post-processing)
        return {"pair_counts": self.pair_counts_}

    def _load_extra(self, arrays) -> None:
        counts = arrays.get("pair_counts")
        D = domain_size(len(self.vocabulary_))
        if counts is None or counts.shape != (D,) or not np.all(np.isfinite(counts)) or np.any(counts < 0):
            raise DPTopicError(f"pair_counts.npy must hold {D} non-negative counts")
        self.pair_counts_ = counts.astype(np.float64)
        self.epsilon_doc_ = float(self.privacy_["epsilon_doc"])
        self.n_reports_ = self.n_docs_seen_ = int(self._train_stats.get("n_reports", 0))

    def for_contributors(self, reports: int):
        """State the guarantee for contributors who sent up to ``reports`` reports each: sets
        ``reports_per_contributor`` (never lowering it) and the report (``dptopic serve`` calls it before every save)."""
        self.reports_per_contributor = max(checked_reports(reports), self._contributor_reports())
        if isinstance(getattr(self, "_fit_params_", None), dict):   # what save() writes as the model's parameters
            self._fit_params_["reports_per_contributor"] = self.reports_per_contributor
        self.privacy_ = plain_numbers(self.privacy_report())
        self._record_plan()       # the plan for this many reports a contributor
        self._name_guarantee()      # the rebuilt report names its extent, as the fitted one did
        return self

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """What one contributor releases (public settings alone: the reports' epsilon, the vocabulary's size, how many
        reports a contributor sends): :func:`pair_report_release` per report. The server's fit is post-processing of
        the reports: it reserves nothing, and its report states these events."""
        eps = getattr(self, "epsilon_doc_", None)
        V = n_words if n_words is not None else len(getattr(self, "vocabulary_", None) or ())
        if eps is None or not V:
            raise DPTopicError("the reports' epsilon and vocabulary are unknown: train on reports first (they set"
                               " both).")
        m = self._contributor_reports()
        return ReleasePlan(type(self).__name__, local_unit(m), (pair_report_release(float(eps), int(V), m),),
                           relation=LOCAL_RELATION, theorem=THEOREM)

    def _planned_spend(self, report: dict):
        """The unit and relation a document-level local report must name: one document, or one contributor's
        reports when the report states several, under the local relation (every pair of inputs)."""
        return RunPlan(unit=local_unit(stated_reports(report)), relation=LOCAL_RELATION)

    def _contributor_reports(self) -> int:
        """``reports_per_contributor``, or the larger figure a saved report already states (never lowered)."""
        return max(int(self.reports_per_contributor), stated_reports(getattr(self, "privacy_", None)))

    def privacy_report(self) -> dict:
        rep = document_privacy_report(self.epsilon_doc_, len(self.vocabulary_), self._contributor_reports())
        rep["mode"] = "document-level local DP (server side)"
        rep["server_steps"] = {"pair counts": "post-processing", "NMF topics": "post-processing"}
        rep["fits"] = REFIT_NOTE
        return rep
