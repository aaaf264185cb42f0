"""Document-level DP topic model by full-batch noisy EM (``DocDPEM``).

Each of ``n_iter`` iterations releases, once, the sum over documents of each document's expected
word-topic counts with the document's counts divided by their L2 norm (so one document moves the
sum by at most 1 in Frobenius norm, whatever its length), plus Gaussian noise. The topics are a
post-processing of the noisy release only (:func:`~dptopic.models._docdp_math.denoise`). The
``n_iter`` full-batch Gaussian releases are composed by privacy loss distributions (Koskela et
al. 2020) through a :class:`~dptopic.accounting.PrivacyLedger`; each is the Gaussian mechanism
(Dwork & Roth 2014, Thm A.1) under add/remove of one document; the noise multiplier is the
smallest for which the PLD of the composition is (epsilon, delta)-DP (for one release this is the
analytic Gaussian calibration of Balle & Wang 2018).

Orchestration only: the E-step is the compiled kernel :mod:`dptopic.kernels.docdp` (``n_jobs`` threads, each
summing its own block of documents), checked against the NumPy reference :mod:`dptopic.models._docdp_math`; the
noise is in :mod:`dptopic.mechanisms.gaussian`. ``fit`` streams shard folders and mini-batches from disk, one block
at a time per iteration (``docs/scaling.md``). Defaults were set on 20 Newsgroups (the benchmark corpus,
see ``docs/document_dp.md``), never on the data you fit. Topic quality at
epsilon = 1 is measured in that page; it is well below non-private LDA.

``supported_topics_`` (post-processing of the last release, nothing spent): a topic is supported when its released row,
off the release's leading right singular vector (the corpus-wide word profile), has a norm above the 95% edge of the
largest singular value of K x V Gaussian noise, ``sigma (sqrt(K) + sqrt(V) + 0.49 (1/sqrt(K) + 1/sqrt(V))^(1/3))``
(Johnstone 2001; :func:`dptopic.moments.support.em_supported_topics`). It tests the release against its noise only:
EM's statistic is computed under the previous iteration's topics, so on a corpus without topics a random start still
shows through (see that function). DocDPEM has no background topics: ``background_topics_`` is all False.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._progress import progress_bar
from .._validation import N_JOBS, SEED, VERBOSE, Int, IsNone, IsType, Options, Real
from ..accounting.gaussian import calibrate_noise_multiplier
from ..accounting.plan import PlannedRelease, ReleasePlan, gaussian_release
from ..accounting.set_union import VOCABULARY_NOT_COVERED
from ..errors import DPTopicError
from ..kernels.docdp import StatisticAccumulator, block_statistic
from ..mechanisms import gaussian_mechanism
from ..moments.support import em_supported_topics
from ..person_bound import (
    UNITS,
    check_unit,
    em_statistic,
    for_unit_event,
    people_of,
    unit_and_relation,
    user_report,
)
from ._docdp_math import denoise
from ._document_base import _DocumentDPModel
from ._document_passes import read_ahead
from .base import check_topics_fit_vocabulary

THEOREM = ("Gaussian mechanism (Dwork & Roth 2014, Thm A.1) on a statistic of L2 sensitivity 1 under add/remove of"
           " one document (each document's word counts divided by their L2 norm), composed over the iterations by"
           " privacy loss distributions (Koskela et al. 2020); topics are post-processing (Dwork & Roth 2014, Prop 2.1)")
_RELEASE = "noisy sum of per-document normalised expected word-topic counts (full batch)"


def em_release(epsilon: float, delta: float, n_iter: int, relation: str) -> PlannedRelease:
    """DocDPEM's release, ``n_iter`` times: the sum over documents of each document's expected word-topic counts with
    its counts divided by their L2 norm, L2 sensitivity 1 under add/remove of one document (or one person, bounded as
    a whole; :mod:`dptopic.models._docdp_math`), Gaussian mechanism (Dwork & Roth 2014, Thm A.1); the noise multiplier
    is the smallest whose ``n_iter``-fold composition by PLD (Koskela et al. 2020) is (epsilon, delta)-DP
    (:func:`~dptopic.accounting.gaussian.calibrate_noise_multiplier`)."""
    sigma = calibrate_noise_multiplier(epsilon, delta, 1.0, n_iter)
    return gaussian_release("expected word-topic counts", sigma, _RELEASE, relation, count=n_iter)


class DocDPEM(_DocumentDPModel):
    """Document-level (epsilon, delta)-DP topics by a few full-batch noisy EM iterations.

    Parameters
    ----------
    n_topics : K.
    epsilon, delta : the guarantee for adding or removing one whole document (the whole run).
    n_iter : noisy EM iterations (each a release; fewer iterations means less noise per release).
    threshold : cells of a release below ``threshold`` noise standard deviations are set to zero, then every cell gets
        a floor of a thousandth of the noise standard deviation (post-processing,
        :func:`~dptopic.models._docdp_math.denoise`).
    alpha : document-topic smoothing in the E-step.
    inner : fixed-point iterations of the E-step per document.
    secure : the Gaussian noise from OpenDP's sampler (OS CSPRNG); refuses a seed.
    seed : None (default; OS entropy) or an int for reproducible tests only. Never saved.
    n_jobs : threads sharing each iteration's E-step (each sums its own block of documents; the noise is added once
        to the total, so the guarantee does not depend on it, and the result only through float rounding).
    init : None (default: a random, data-independent start) or public starting topics: a K x V array of topic-word
        weights over the training vocabulary (e.g. ``LDA().fit(public_docs, vocabulary=words).components_``; as
        an array, it survives ``sklearn.base.clone``). They must come
        from data that need no protection: the guarantee covers the training documents only, and a start learnt from
        them would have to be paid for. With a good public start one release (``n_iter=1``) is enough
        (``docs/document_dp.md``, "A public corpus as the start"). Not saved with the model.
    unit : ``"document"`` (default) or ``"user"``: one person's documents added or removed (``fit(..., user_ids=)``,
        or a Corpus read with its user ids); each person's contribution to every release is bounded as a whole
        (:mod:`dptopic.person_bound`; ``docs/privacy_units.md``).
    documents_per_user : with ``unit="user"``: None (default) sums each person's normalised contributions and scales
        the sum to norm at most 1; an int ``m`` keeps at most ``m`` documents a person (chosen at random), each
        weighted ``1/m``.
    backend, client : ``"threads"`` (default), or ``"dask"`` with a ``distributed.Client``: every iteration's E-step
        runs on the workers, one task per shard, and the driver draws that release's noise once
        (``docs/scaling_cluster.md``).

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words), the topic-word probabilities (rows sum to 1) of the last
        noisy iteration.
    supported_topics_ : ndarray of shape (n_topics,), bool: the topics that stand above the noise.
    background_topics_ : ndarray of shape (n_topics,), bool: the topics held as background.
    noise_std_ : float, the standard deviation of each release's Gaussian noise.
    vocabulary_ : Vocabulary of n_words words. ``n_features_in_`` : int, n_words.
    privacy_ : dict, the privacy card's report. ``ledger_`` : PrivacyLedger, the releases it spent.
    """

    _private = True
    _parameter_constraints = {"n_topics": [Int(1, 100_000)], "epsilon": [Real(0, 500, "right")],
                              "delta": [Real(0, 1, "neither")], "n_iter": [Int(1, 1000)],
                              "threshold": [Real(0, 1e6)], "alpha": [Real(1e-8, 1e6)], "inner": [Int(1, 10000)],
                              "secure": [Options((True, False))], "seed": SEED, "n_jobs": N_JOBS,
                              "verbose": VERBOSE,
                              "init": [IsNone(), IsType((np.ndarray, list), "a K x V array of public topics")],
                              "unit": [Options(UNITS)], "documents_per_user": [IsNone(), Int(1, 1_000_000)],
                              "backend": [Options(("threads", "dask"))],
                              "client": [IsNone(), IsType((object,), "a distributed.Client")]}

    def __init__(self, n_topics: int = 20, epsilon: float = 1.0, delta: float = 1e-5, n_iter: int = 3,
                 threshold: float = 2.0, alpha: float = 0.1, inner: int = 30, secure: bool = False, seed=None,
                 n_jobs: int = 1, verbose: int = 0, init=None, unit: str = "document",
                 documents_per_user: int | None = None, backend: str = "threads", client=None):
        self.unit = unit
        self.documents_per_user = documents_per_user
        self.n_topics = n_topics
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.threshold = threshold
        self.alpha = alpha
        self.inner = inner
        self.secure = secure
        self.seed = seed
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.init = init
        self.backend = backend
        self.client = client

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """The ``n_iter`` releases a fit makes (public settings alone; the vocabulary's size changes nothing), their
        noise calibrated to (``epsilon``, ``delta``) over all of them (:func:`em_release`)."""
        unit, relation = unit_and_relation(self)
        return ReleasePlan(type(self).__name__, unit, (em_release(float(self.epsilon), float(self.delta),
                                                                  int(self.n_iter), relation),),
                           relation=relation, theorem=THEOREM, budget=(float(self.epsilon), float(self.delta)))

    def _planned_spend(self, report: dict):
        return self.release_plan().run_plan()

    def fit(self, X, y=None, *, vocabulary=None, user_ids=None):
        """Fit on documents held in memory or streamed from disk.

        ``X``: a :class:`~dptopic.corpus.Corpus`, a documents x words count matrix or a list of texts (in memory);
        or a shard folder written by :func:`~dptopic.corpus.shards.write_shards` (a path, a list of shard ``.npz`` paths
        or a :class:`~dptopic.backends.ShardSet`); or mini-batches: a list of count matrices / Corpora, or a
        function returning a fresh iterable of them. Shards and mini-batches are read once per iteration and
        dropped, so memory does not grow with the number of documents. The vocabulary must be public
        (``vocabulary=``), or chosen privately beforehand and paid for separately; the number of documents is
        never used. ``user_ids`` (``unit="user"``): each document's person, one string per document (in memory
        only)."""
        self._validate()
        self._require_secure_noise()
        check_unit(self, user_ids)
        source, vocab, corpus = self._document_passes(X, vocabulary, self._cluster_client(), user_ids)
        V, K = len(vocab), self.n_topics
        check_topics_fit_vocabulary(K, V)
        rng = self._rng()
        people, _ = people_of(self, corpus, source, rng)   # unit="user": the documents grouped by person
        # the n_iter releases, calibrated from public settings alone, reserved whole before the first noise draw (its
        # dataset's ledger is charged here)
        plan = self.release_plan(n_words=V)
        ledger = plan.ledger()
        plan.reserve(ledger)
        planned = plan.releases[0]
        sigma = planned.event.noise_multiplier
        beta = self._start(K, vocab, rng)
        with StatisticAccumulator(V, K, self._jobs) as acc, ThreadPoolExecutor(1) as reader, \
                progress_bar(int(self.n_iter), f"DocDPEM K={K}", self.verbose) as bar:
            for it in range(self.n_iter):
                acc.reset()
                beta_vk = np.ascontiguousarray(beta.T)
                n_tokens = 0
                if people is not None:      # each person's contribution bounded as a whole (person_bound.py)
                    n_tokens = len(people[0][2])
                    total = em_statistic(people, beta, float(self.alpha), int(self.inner), self._jobs)
                elif source.client is not None:     # one task per shard on the cluster, added in shard order
                    total = source.sum(block_statistic, beta_vk, float(self.alpha), int(self.inner), self._jobs)
                    n_tokens = source.n_entries
                else:
                    for ptr, ids, cts in read_ahead(source(), reader):
                        acc.add(ptr, ids, cts, beta_vk, float(self.alpha), int(self.inner))
                        n_tokens += len(cts)
                    total = acc.total()
                if it == 0 and n_tokens == 0:
                    raise DPTopicError("the training documents have no word of the vocabulary: give documents in"
                                       " the vocabulary's language, or another vocabulary.")
                noisy, event = gaussian_mechanism(total, sigma, 1.0, None if self.secure else rng,
                                                  secure=bool(self.secure), label=_RELEASE)
                event = for_unit_event(self, event)
                assert event == planned.event, "the released noise must be the event the plan reserved"
                ledger.spend(event)
                beta = denoise(noisy, sigma, self.threshold)
                bar.advance()
        # post-processing of the last release, from which the topics come (moments.support)
        self.supported_topics_ = em_supported_topics(noisy, sigma)
        self.background_topics_ = np.zeros(K, dtype=bool)
        self.ledger_ = ledger
        self.components_ = beta
        self.noise_std_ = float(sigma)
        self.vocabulary_ = vocab
        self._set_fitted(corpus)
        self._train_stats = {"vocab_size": V}
        return self

    def _start(self, K: int, vocab, rng) -> np.ndarray:
        """The starting topics: public ones given as ``init`` (checked and normalised), else a random draw."""
        if self.init is None:
            return rng.dirichlet(np.ones(len(vocab)), size=K)
        try:
            start = np.asarray(self.init, dtype=np.float64)
        except (TypeError, ValueError):
            raise DPTopicError("init must be a K x V array of non-negative topic-word weights.") from None
        if start.shape != (K, len(vocab)):
            raise DPTopicError(f"init has shape {start.shape}; give n_topics x vocabulary = ({K}, {len(vocab)}).")
        if not np.all(np.isfinite(start)) or (start < 0).any() or not (start.sum(axis=1) > 0).all():
            raise DPTopicError("init must hold finite, non-negative weights with a positive sum in every topic.")
        return start / start.sum(axis=1, keepdims=True)

    def estimated_words(self):
        """In each topic, the words with a cell above its denoising floor: every other cell holds the topic's floor,
        the same for all its words, which is no estimate of that word in the topic. None when no cell is at it."""
        self._check_fitted()
        phi = np.asarray(self.components_, dtype=np.float64)
        phi = phi / phi.sum(axis=1, keepdims=True)
        mask = phi > phi.min(axis=1, keepdims=True) * (1 + 1e-9)
        return None if mask.all() else mask

    def _saved_params(self) -> dict:
        params = super()._saved_params()
        params["init"] = None        # public input of the fit, like the corpus: not part of the saved model
        return params

    def privacy_report(self) -> dict:
        rep = self.ledger_.report(float(self.delta))
        rep.update({
            "mode": "document-level noisy EM",
            "parameters": {"noise_multiplier": self.noise_std_, "steps": int(self.n_iter), "sampling_rate": 1.0,
                           "l2_sensitivity": 1.0, "threshold": self.threshold,
                           "start": "random" if self.init is None else "public topics given by the user"},
            "vocabulary_source": "supplied" if getattr(self, "_vocabulary_supplied", False) else "data",
            "scope": ("covers every noisy release of the normalised expected word-topic counts, hence the released"
                      " topics (post-processing). NOT covered: "
                      + ("" if getattr(self, "_vocabulary_supplied", False) else
                         VOCABULARY_NOT_COVERED)
                      + "the choice of hyper-parameters, "
                      + ("" if self.init is None else
                         "the public starting topics (given, assumed to need no protection), ")
                      + "and any metric computed on the training documents."),
            "noise": "gaussian", "secure_noise": bool(self.secure),
        })
        return self._note_seed(user_report(self, rep))
