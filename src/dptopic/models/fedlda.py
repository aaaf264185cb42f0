"""FedLDA: federated LDA with local differential privacy (Wang, Tong & Shi, AAAI 2020 poster).

Orchestration only: the protocol lives in :mod:`dptopic.contributor.fedlda` (the client) and
:mod:`dptopic.protocol` (settings, server, messages), the
perturbation in :mod:`dptopic.mechanisms.rrp`, the calculators in :mod:`dptopic.accounting.fedlda`.
Design choices the poster leaves open are parameters, documented in ``docs/fedlda.md``.
"""
from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from .._validation import Int, IsNone, Options, Real
from ..accounting import delta0 as _delta0
from ..accounting import eta as _eta
from ..accounting import rrp_event
from ..accounting.events import EPSILON_MAX
from ..accounting.fedlda import (
    entries_for_user_budget,
    entry_epsilon_for_total,
    krr_eta,
    listed_alphabetically,
    report_words_for,
    spend_round,
    subset_inclusion,
    user_ledger,
    user_ledger_after,
    user_relation,
    user_spend,
)
from ..accounting.fedlda_scope import DATA_VOCABULARY_NOTE, FED_RRP_COINS, FED_SECURE, coverage
from ..accounting.plan import PlannedRelease, ReleasePlan
from ..accounting.verify import RunPlan
from ..contributor.fedlda import FedClient
from ..corpus import Corpus, Vocabulary, as_corpus
from ..errors import DPTopicError, ParameterError, ParameterWarning, user_stacklevel
from ..evaluation import infer_theta
from ..protocol.fedlda import PROTOCOL_RULES, RRPConfig, cap_fits, check_broadcast_phi, check_config, rounds_to_no_entry
from ..protocol.fedlda_messages import decode_message, vocabulary_fingerprint
from ..protocol.fedlda_server import FedServer, full_vocabulary_topics
from .base import GibbsTopicModel, vocabulary_given

USERS_FROM = {
    "people": "one simulated user per person: each person's documents (the corpus's user ids) are one client, so the"
              " epsilon per user is per person",
    "documents": "SIMULATED ONE-DOCUMENT USERS: the corpus names no people, so each document is one simulated user and"
                 " the epsilon per user is per document; a person who wrote k documents is protected only at k times"
                 " epsilon (give the corpus's user ids for one client per person)",
    "blocks": "simulated users: the documents split into as many contiguous blocks as clients were asked for, each one"
              " client; a block is not a person (give the corpus's user ids for one client per person)",
}
"""Who one simulated user is, by how ``fit`` formed its clients from one corpus (the report's ``user_bound``, on the
card); a list of client corpora is one user each, as a deployment's participants are, and needs no such line."""


def _check_vocabulary_order(words, unnamed: bool, n: int) -> None:
    """``report_words`` takes the vocabulary's first words as its most common: an alphabetical list (what
    scikit-learn's and dptopic's ``CountVectorizer`` learn) would keep the words that sort first, so it is refused;
    columns that carry no words at all have an order no one can check, so they warn."""
    if listed_alphabetically(words):
        raise DPTopicError(f"FedLDA report_words keeps the vocabulary's first {n} words as its most common, but this"
                           " vocabulary is in alphabetical order (as a CountVectorizer learns it): list it most common"
                           " first (Corpus.prune; CountVectorizer(vocabulary=words_most_common_first)), or pass"
                           " report_words='all'.")
    if unnamed:
        warnings.warn(ParameterWarning(
            "FedLDA {report_words} keeps the first {n} columns as the most common words, but X's columns carry no"
            " words, so their order cannot be checked (scikit-learn's CountVectorizer sorts them alphabetically):"
            " pass {vocabulary=} listed most common first, or {report_words=}.", "report_words", "all", n=n),
            stacklevel=user_stacklevel())


MOST_COMMON_FIRST_SHARE = 0.8   # the first n words hold less than this share of what the n most common hold: warn
MAX_PAD_LENGTH = 10_000_000  # entries an update may hold at most (pad_length)


def _warn_if_not_most_common_first(corpora: list, n: int) -> None:
    """A vocabulary in neither alphabetical nor frequency order (shuffled, or sorted by some other key) passes the
    check above, and its first ``n`` words are then a haphazard sample: the reports miss most of the users' tokens
    (in a measured case, held-out perplexity 1,825 against 714). In a simulation the analyst holds the documents, so
    compare the first ``n`` words' tokens with those of the ``n`` most common and warn. This reads the training
    documents (a warning to their holder, outside the guarantee); a deployment's server holds no documents and
    publishes the vocabulary's order instead."""
    counts = np.zeros(len(corpora[0].vocabulary), dtype=np.int64)
    for c in corpora:
        if c.n_tokens:
            counts += np.bincount(c.word_ids, minlength=len(counts))
    best = np.sort(counts)[::-1][:n].sum()
    first = counts[:n].sum()
    if best > 0 and first < MOST_COMMON_FIRST_SHARE * best:
        warnings.warn(ParameterWarning(
            "FedLDA {report_words} keeps the vocabulary's first {n} words as its most common, but they hold {first}"
            " of the users' tokens where the {n} most common hold {best}: the vocabulary is not listed most common"
            " first, so most tokens never reach the reports. List it most common first (Corpus.prune), or pass"
            " {report_words=}. (This check read the training documents: a warning to whoever holds them, outside the"
            " guarantee.)", "report_words", "all", n=n, first=f"{first / counts.sum():.0%}",
            best=f"{best / counts.sum():.0%}"), stacklevel=user_stacklevel())


# FED_SECURE, what secure=True covers, and the guarantee's texts: accounting/fedlda_scope.py
FED_SIMULATION = ("SIMULATION: the reports' coins come from xorshift128+ seeded from NumPy's PCG64 (fresh OS entropy"
                  " unless a seed is given), not a cryptographic generator; secure=True draws them from the"
                  " OS CSPRNG, as dptopic fed-client does on a participant's device")
def _refuse_user_lists_of_texts(X) -> None:
    """``fit([texts_user0, texts_user1])`` reads as lists of tokens, one per document: a "token" of more than three
    words is a text, and the users were meant as corpora (a phrase such as "new york" is a token)."""
    if isinstance(X, (list, tuple)) and X and all(isinstance(d, (list, tuple)) for d in X):
        spaced = next((t for d in X for t in d if isinstance(t, str) and len(t.split()) > 3), None)
        if spaced is not None:
            raise DPTopicError(f"a token holds spaces ({spaced[:40]!r}...): a list of lists is read as tokenised"
                               " documents; to give one list of texts per user, pass a list of corpora built on one"
                               " vocabulary, [Corpus.from_texts(texts, vocabulary=V) for texts in users].")


def _refuse_user_lists_of_matrices(X) -> None:
    """``fit([X_user0, X_user1])`` with count matrices: a list is read as users only when it holds corpora, whose
    vocabulary (its words and their order, which ``report_words`` relies on) travels with them."""
    if not (isinstance(X, (list, tuple)) and X):
        return
    kinds = [type(u).__name__ for u in X if sp.issparse(u) or getattr(u, "ndim", None) == 2
             or (hasattr(u, "columns") and hasattr(u, "to_numpy"))]
    if kinds:
        raise DPTopicError(f"fit got a list holding {len(kinds)} count matri{'x' if len(kinds) == 1 else 'ces'}"
                           f" ({kinds[0]}): a list is read as one user each only when it holds dptopic Corpus objects"
                           " on one vocabulary, e.g. [Corpus.from_bow(X_u, vocabulary=words) for X_u in users],"
                           " with words naming the columns, most common first.")


def _floor_fits(cfg, V: int, delta: float) -> bool:
    """Whether the floor rule's 'another word' replacement fits ``V`` words at ``cfg``'s epsilon with failure rate
    ``delta``."""
    c = replace(cfg, failure_rate=float(delta))
    return cap_fits(c.epsilon_per_entry, c, V)


def fed_entry_release(epsilon: float, failure_rate: float, gamma: float, variant: str, exclusion: str,
                      report_words: int | None, count: int) -> PlannedRelease:
    """One user's randomized entry, ``count`` times over the run. ``exclusion="none"``: subset selection over the
    ``report_words`` words (one word: k-ary randomized response, Kairouz, Oh & Viswanath 2016), pure epsilon-LDP per
    entry, randomized once and reused (Erlingsson, Pihur & Korolova 2014); the floor rule: pure DP at its effective
    epsilon; the tail rule: the FedLDA poster's (epsilon, 2 delta) claim (Wang, Tong & Shi 2020, Thm 1). Sensitivity
    1 (one entry's word) and, as scale, the probability that the entry's word is replaced."""
    event = rrp_event(epsilon, failure_rate, gamma, variant, exclusion, vocab_size=report_words)
    if exclusion == "none":
        flip = krr_eta(epsilon, report_words) if report_words else math.nan
    else:
        flip = _eta(epsilon, failure_rate, gamma, variant)
    return PlannedRelease("randomized word report", "subset_selection" if exclusion == "none" else
                          "randomized_replacement", 1.0, float(flip), event, int(count))


class FedLDA(GibbsTopicModel):
    """Federated LDA with RRP local differential privacy (Wang, Tong & Shi 2020; ``docs/fedlda.md``).

    Parameters
    ----------
    n_topics : K.
    epsilon : the guarantee per user, in total: ε of everything one user sends, the figure the privacy card puts
        at the top. The trainer splits it over the entries the user randomizes: once each for the ``"none"`` rule,
        every round for the floor and tail rules (``entries = round(sample_ratio x pad_length)``), with the figure per
        entry solved against the per-user ledger whose figure the report states, so that the run spends ``epsilon``
        to within 1% below it; a total it cannot spend is refused, naming it. Changed meaning: before dptopic 0.x
        ``epsilon`` was the figure per entry, which is now
        ``epsilon_per_entry`` (``FedLDA(epsilon=2)`` used to spend 2 per word, 1,024 per user at the default pad
        length; it now spends 2 per user). Saved models of the old meaning load with their figure per entry.
    epsilon_per_entry : the component instead: ε per reported entry (word), the poster's privacy budget (Theorem 1).
        Give ``epsilon`` or this, not both; neither: 5 per entry (the poster's).
    failure_rate : Theorem 1's failure rate δ in (0, 1): the rare-word mass excluded from replacements (poster:
        0.1); floor and tail rules only. Not the δ of a guarantee (``delta=`` is refused; the tight report's δ is
        ``report_delta``).
    gamma : Zipf exponent γ ≥ 1 of Theorem 1 (δ0 = δ − (δ^{-1/γ} + 1)^{-γ}, δ the failure rate).
    rounds : communication rounds R.
    sample_ratio : fraction in (0, 1] of the padded update that is sent each round.
    pad_length : L, entries per update before sampling. A user with fewer tokens pads with dummy entries
        (always replaced, so indistinguishable from words); a user with more reports a uniform sample of L.
    n_clients : when ``fit`` gets one corpus that names no people, split its documents into this many users
        (contiguous blocks); default one user per document, which the card names as simulated one-document users.
        A corpus that carries user ids (``Corpus.user_ids``) gives one client per person, and ``n_clients`` is then
        refused. Ignored for a list of client corpora.
    alpha : symmetric Dirichlet prior on each user's local θ (default 0.1): the users' local sampling
        ``p(k) ∝ Φ[k, w] (n_dk + α)`` (floor/tail) and the labelling of the randomized reports (``"none"``).
    beta : the server's prior on the topics (default 0.01): ``Φ = (N + β) / rowsum(N + β)`` each round.
    variant : ``"another"`` (default: a perturbed word is always a different word) or ``"coincide"``.
    exclusion : ``"none"`` (default, sound, full): no word excluded; each entry's word is randomized once by
        subset selection (one word: k-ary randomized response) and labelled every round from the randomized
        reports and the broadcast model only; the labels go out with the reports.
        ``"floor"`` (sound per word, partial: topic labels in the clear; collapses onto few words) or
        ``"tail"`` (the poster's rule; guarantee assumes Zipf; partial). See ``docs/fedlda.md``.
    replacement : ``"mixture"`` (default: Σ_j θ_ij Φ_j of the user) or ``"topic"`` (Φ of the entry's topic);
        floor/tail only (``"none"`` replaces uniformly).
    local_iter : local Gibbs sweeps per round (floor/tail, and ``local_inference="gibbs"``).
    local_inference : ``"none"`` rule: how a client labels its randomized reports each round. ``"em"``
        (default): fit the user's topic proportions to its reports under the broadcast Φ by EM (from
        scratch every round; the objective is concave) and draw each label from its posterior.
        ``"gibbs"``: continue one Gibbs chain over the labels across rounds (the earlier rule; its labels
        get stuck when the reports say little, e.g. at eps = 5). Both are post-processing.
    subset_size : ``"none"`` rule: words per randomized entry (subset selection); 0 (default) picks
        ``round(V / (e^eps + 1))``, at least 1 (k-ary randomized response), with V the report words below.
    report_words : ``"none"`` rule: how many of the vocabulary's first words the reports range over. The
        vocabulary must list its words most common first, as dptopic's vocabularies do (``Corpus.from_texts``,
        ``prune``, the loaders); a user's entries are drawn from its tokens among those words, and the other
        words get the same weights in every topic, by Zipf's law over the vocabulary order
        (:func:`~dptopic.protocol.fedlda_server.full_vocabulary_topics`). ``"auto"`` (default): the words whose
        share the reports can estimate, from epsilon, the vocabulary size and the number of reports alone
        (:func:`~dptopic.accounting.fedlda.report_words_for`; 220 of 1,000 words for 119 users of 256 entries
        at eps = 5, all 1,000 for 300 users at 7.5); ``"all"``: every word; or a number. See
        ``docs/fedlda.md``, "Fewer words in each report".
    report_delta : δ at which the tight (PLD) ε of the per-user composition is reported.
    secure : ``"none"`` rule: draw every report from the operating system's CSPRNG (refuses a seed), as
        ``dptopic fed-client`` does on a participant's device; the default draws from a fast simulation generator,
        and ``privacy_["randomness"]`` says which.
    seed : None (default, OS entropy). An explicit seed makes the noise reproducible — tests only.
    n_jobs : worker threads for the clients.
    verbose : 0 silences the progress bar (default 1).

    Attributes
    ----------
    epsilon_per_entry_ : ε per reported entry that the settings give (``epsilon_per_entry``, or solved from the
        per-user ``epsilon``); set before ``fit`` too.
    components_ : ndarray of shape (n_topics, n_words), the topic-word probabilities (rows sum to 1) of the last
        round's broadcast.
    vocabulary_ : Vocabulary of n_words words. ``privacy_`` : dict, the privacy card's report.
    """

    _parameter_constraints = {
        **{k: v for k, v in GibbsTopicModel._parameter_constraints.items() if k != "n_iter"},
        # the protocol's settings: their ranges are the protocol's (protocol/fedlda.py), written once
        **{k: PROTOCOL_RULES[k] for k in ("n_topics", "failure_rate", "gamma", "sample_ratio", "pad_length", "alpha",
                                          "variant", "exclusion", "replacement", "local_iter", "subset_size",
                                          "local_inference")},
        "epsilon": [IsNone(), Real(0, None, "neither")], "epsilon_per_entry": [IsNone(), *PROTOCOL_RULES["epsilon_per_entry"]],
        "rounds": [Int(1, 10_000_000)], "n_clients": [IsNone(), Int(1, 1_000_000_000)],
        "report_delta": [Real(0, 1, "neither")],
        "report_words": [Int(2, 1_000_000_000), Options(("auto", "all"))],
        "secure": [Options((True, False))],
    }
    _private = True
    # epsilon used to be the figure per entry and delta the failure rate: a number given under an old meaning is never
    # read under the new one (epsilon cannot be told by its value; the refusal of delta= and the docstring say it)
    _renamed_params = {"delta": ("FedLDA takes failure_rate= (Theorem 1's excluded rare-word mass), not delta=; note"
                                 " that epsilon= is now the per-user total and epsilon_per_entry= the figure per"
                                 " reported word that epsilon= used to be (docs/fedlda.md).")}
    DEFAULT_EPSILON_PER_ENTRY = 5.0
    """The poster's ε per entry, used when neither ``epsilon`` nor ``epsilon_per_entry`` is given."""

    def __init__(self, n_topics: int = 20, *, epsilon: float | None = None, epsilon_per_entry: float | None = None,
                 failure_rate: float = 0.1, gamma: float = 1.0,
                 rounds: int = 50, sample_ratio: float = 1.0, pad_length: int = 512, n_clients: int | None = None,
                 alpha: float = 0.1, beta: float = 0.01, variant: str = "another", exclusion: str = "none",
                 replacement: str = "mixture", local_iter: int = 1, subset_size: int = 0, report_delta: float = 1e-5, seed=None,
                 n_jobs: int = 1, verbose: int = 1, local_inference: str = "em", report_words: int | str = "auto",
                 secure: bool = False):
        self.n_topics = n_topics
        self.epsilon = epsilon
        self.epsilon_per_entry = epsilon_per_entry
        self.failure_rate = failure_rate
        self.gamma = gamma
        self.rounds = rounds
        self.sample_ratio = sample_ratio
        self.pad_length = pad_length
        self.n_clients = n_clients
        self.alpha = alpha
        self.beta = beta
        self.variant = variant
        self.exclusion = exclusion
        self.replacement = replacement
        self.local_iter = local_iter
        self.subset_size = subset_size
        self.local_inference = local_inference
        self.report_words = report_words
        self.report_delta = report_delta
        self.secure = secure
        self.seed = seed
        self.n_jobs = n_jobs
        self.verbose = verbose

    @classmethod
    def from_user_budget(cls, user_epsilon: float, vocab_size: int, **kw) -> "FedLDA":
        """A FedLDA whose users each spend ``user_epsilon`` in total (entries x epsilon per entry, basic
        composition; the ``"none"`` rule randomizes each entry once, so rounds cost nothing more), split into
        entries and a per-entry epsilon by :func:`~dptopic.accounting.fedlda.entries_for_user_budget`: on a
        vocabulary of 1,000 words, ``user_epsilon=1280`` gives 138 entries at 9.28 each instead of the
        poster's 256 at 5. A larger per-entry epsilon protects one word less, the user's whole report the
        same; the report states both. ``vocab_size``: the public vocabulary's size (the model must be fitted
        on it). The reports range over every word (``report_words="all"``) unless ``report_words`` is given: the
        split is chosen for that many words. Reads no data."""
        fixed = sorted(k for k in ("epsilon", "epsilon_per_entry", "pad_length") if k in kw)
        if fixed:
            raise DPTopicError(f"from_user_budget chooses {' and '.join(fixed)} itself: leave {'them' if len(fixed) > 1 else 'it'}"
                               " out, or build FedLDA(...) directly.")
        if kw.get("exclusion", "none") != "none":
            raise DPTopicError("from_user_budget needs exclusion='none' (entries randomized once): the floor and tail"
                               " rules randomize again every round, so their total also grows with the rounds.")
        ratio = float(kw.get("sample_ratio", 1.0))
        if not 0 < ratio <= 1:
            raise ParameterError("invalid {sample_ratio=}: must lie in (0, 1].", "sample_ratio", ratio)
        kw.setdefault("report_words", "all")  # the split is chosen for the whole vocabulary
        eps, entries = entries_for_user_budget(user_epsilon, vocab_size)
        if entries / ratio > MAX_PAD_LENGTH:     # before the search below, whose steps of one would take forever
            pad = entries / ratio
            raise ParameterError("invalid {pad_length=pad}: must be an integer in [1, {most:g}].", "pad_length",
                                 values={"user_epsilon": user_epsilon}, most=MAX_PAD_LENGTH,
                                 pad=int(math.ceil(pad - 1e-9)) if pad < 1e15 else float(format(pad, ".3g")),
                                 key="models.fedlda.from_user_budget", others=("user_epsilon",))
        pad = max(1, int(math.ceil(entries / ratio - 1e-9)))
        while pad > 1 and max(1, int(round(ratio * (pad - 1)))) >= entries:
            pad -= 1
        # the per-user total is FedLDA's own epsilon: it splits it over the entries sent (eps when they are `entries`)
        m = cls(epsilon=float(user_epsilon), pad_length=pad, **kw)
        m._user_budget = (float(user_epsilon), int(vocab_size))
        return m

    @classmethod
    def _params_from_saved(cls, params: dict) -> dict:
        """A folder saved while ``epsilon`` meant the figure per entry and ``delta`` the failure rate (its params name
        ``delta``; today's name ``failure_rate``): its ``epsilon`` is read as ``epsilon_per_entry``, never as a
        per-user total."""
        if "delta" not in params or "failure_rate" in params or "epsilon_per_entry" in params:
            return params
        p = {k: v for k, v in params.items() if k not in ("epsilon", "delta")}
        return {**p, "epsilon": None, "epsilon_per_entry": params.get("epsilon", cls.DEFAULT_EPSILON_PER_ENTRY),
                "failure_rate": params["delta"]}

    def _entries_spent(self) -> int:
        """How many per-entry events one user spends over the whole run: the entries of an update, once for the
        ``"none"`` rule, every round for the floor and tail rules (:func:`~dptopic.accounting.fedlda.user_spend`)."""
        return user_spend(self.exclusion, max(1, int(round(float(self.sample_ratio) * int(self.pad_length)))),
                          int(self.rounds))

    @property
    def epsilon_per_entry_(self) -> float:
        """ε per reported entry (word) this model's settings give, fitted or not: ``epsilon_per_entry``, or the
        per-user total ``epsilon`` split over the entries a user spends, solved so that the per-user figure the
        report states is ``epsilon`` to within 1% below it (:func:`~dptopic.accounting.fedlda.entry_epsilon_for_total`),
        or the poster's 5. What a deployment's clients randomize each entry with (``dptopic serve``)."""
        return self._entry_epsilon()

    def _entry_epsilon(self) -> float:
        """:attr:`epsilon_per_entry_` (the name the trainer's own code calls)."""
        if self.epsilon is None:
            return float(self.DEFAULT_EPSILON_PER_ENTRY if self.epsilon_per_entry is None else self.epsilon_per_entry)
        # solved against the per-user ledger whose headline the report states, so that the run spends the total
        # asked (to within 1% below it), never a fraction of it (a split by basic composition spent 0.33 of 2)
        return entry_epsilon_for_total(
            float(self.epsilon), float(self.failure_rate), float(self.gamma), self.variant, self.exclusion,
            max(1, int(round(float(self.sample_ratio) * int(self.pad_length)))), int(self.rounds),
            float(self.report_delta))

    @classmethod
    def from_broadcast(cls, phi, vocabulary, config: RRPConfig, rounds: int, *, beta: float = 0.01,
                       report_words: int | str = "all", report_delta: float = 1e-5, training: dict | None = None,
                       deployment: str | None = None) -> "FedLDA":
        """The fitted FedLDA a deployment released: the broadcast Φ after ``rounds`` closed rounds of a federation
        whose clients share ``config`` (an :class:`~dptopic.protocol.fedlda.RRPConfig`), with nothing else from the users.

        ``phi``: the broadcast's K × N topics over the vocabulary's first N words (the words the reports range
        over: ``report_words``, a number, or ``"all"`` for every word); ``vocabulary``: the whole public vocabulary,
        most common first. The components are :func:`~dptopic.protocol.fedlda_server.full_vocabulary_topics`, as
        ``fit`` releases them; the privacy report is the one ``fit`` builds for these settings (the same per-user
        ledger, :func:`~dptopic.accounting.fedlda.user_ledger_after`, for a user who took part in every round),
        with ``deployment`` (the trust model, in words) added. The clients' reports are taken as drawn by
        ``dptopic fed-client`` (``secure``: the OS CSPRNG for the ``"none"`` rule). ``training``: what the
        collector itself knows (how many clients, updates per round), saved as the model's training record; what
        only a simulation knows (the users' documents, a per-round history) is absent. No seed."""
        phi = np.asarray(phi, dtype=np.float64)
        words = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(list(vocabulary))
        V = len(words)
        if phi.ndim != 2 or phi.shape[0] != int(config.n_topics) or not 2 <= phi.shape[1] <= V:
            raise DPTopicError(f"a FedLDA broadcast of shape {phi.shape} does not fit {config.n_topics} topics over at"
                               f" most the {V} words of the vocabulary.")
        N = int(phi.shape[1])
        if (report_words == "all" and N != V) or (report_words != "all" and report_words != N):
            raise DPTopicError(f"the broadcast ranges over {N} words but report_words is {report_words!r}.")
        if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
            raise DPTopicError(f"invalid rounds={rounds!r}: a released model follows at least one closed round.")
        none = config.exclusion == "none"
        m = cls(n_topics=int(config.n_topics), epsilon_per_entry=float(config.epsilon_per_entry), failure_rate=float(config.failure_rate),
                gamma=float(config.gamma), rounds=int(rounds), sample_ratio=float(config.sample_ratio),
                pad_length=int(config.pad_length), alpha=float(config.alpha), beta=float(beta),
                variant=config.variant, exclusion=config.exclusion, replacement=config.replacement,
                local_iter=int(config.local_iter), subset_size=int(config.subset_size),
                local_inference=config.local_inference, report_words=report_words, report_delta=report_delta,
                secure=none, seed=None, verbose=0)
        m._validate()
        check_config(config, N)
        m.vocabulary_ = words
        m.report_words_ = N
        m._vocabulary_supplied = True      # a deployment's vocabulary is published before any user reports
        m._columns_unnamed, m._input_names, m._input_names_public, m._input_tokens = False, None, False, False
        m.ledger_ = user_ledger_after(m._entry_epsilon(), m.failure_rate, m.gamma, m.variant, m.exclusion, N,
                                      config.n_entries, int(rounds))
        m.components_ = full_vocabulary_topics(phi, V)
        m._deployment = deployment
        m._set_fitted(None)
        if "fits" in m.privacy_:
            m.privacy_["fits"] = ("this report covers this federation's closed rounds alone: a user who also takes part"
                                  " in another federation (another server or database) spends its budget again, and"
                                  " the epsilons add up (basic composition)")
        m._train_stats = {**(training or {}), "vocab_size": V, "entries_per_update": config.n_entries,
                          "report_words": N}
        return m

    def _validate(self) -> None:
        super()._validate()
        if rounds_to_no_entry(self.pad_length, self.sample_ratio):
            raise ParameterError("{pad_length=} is too small for {sample_ratio=:g}: an update would round to no entry;"
                                 " raise {pad_length} or {sample_ratio}.", "pad_length", self.pad_length,
                                 values={"sample_ratio": self.sample_ratio})
        if self.epsilon is not None and self.epsilon_per_entry is not None:
            raise ParameterError("give {epsilon=} (the per-user total, split over the entries) or {epsilon_per_entry=} (its"
                                 " figure per reported word), not both.", "epsilon_per_entry", self.epsilon_per_entry,
                                 values={"epsilon": self.epsilon},
                                 key="models.fedlda.validate")
        if self.epsilon is not None:
            per, spent = self._entry_epsilon(), self._entries_spent()
            if not 0 < per <= EPSILON_MAX:
                raise DPTopicError(f"epsilon={self.epsilon:g} per user over {spent} entries gives {per:.4g} per entry,"
                                   f" {'above' if per > 0 else 'not above'} the range (0, {EPSILON_MAX:g}] an entry"
                                   " takes: give a total in range, or change pad_length (or rounds, floor/tail).")
        if self.secure and self.seed is not None:
            raise DPTopicError("secure mode draws the reports from the operating system's CSPRNG and refuses a seed:"
                               " remove seed.")
        if self.secure and self.exclusion != "none":
            raise DPTopicError("secure mode draws the reports by subset selection, the 'none' rule's randomizer: the"
                               " floor and tail rules have no secure sampler; use exclusion='none'.")
        # the failure rate alone makes eta round to 1 (at the poster's 0.1 it would not): every word replaced
        eps = self._entry_epsilon()
        if (self.exclusion != "none" and _eta(eps, self.failure_rate, self.gamma, self.variant) > 1 - 1e-6
                and _eta(eps, max(0.1, float(self.failure_rate)), self.gamma, self.variant) <= 1 - 1e-6):
            d0 = _delta0(self.failure_rate, self.gamma)
            raise ParameterError("{failure_rate=:g} is too small at {eps:g} per entry: it leaves delta0 = {d0:.3g},"
                                 " so eta rounds to 1 and every entry's word would be replaced: the reports would"
                                 " carry nothing about the users' words; raise it (the poster's is 0.1) or epsilon.",
                                 "failure_rate", self.failure_rate, eps=eps, d0=d0)
        if self.exclusion != "none" and self.report_words not in ("auto", "all"):
            raise ParameterError("{report_words=} applies to {exclusion=none} only: the floor and tail rules replace"
                                 " words from the model over the whole vocabulary; drop it.", "report_words",
                                 self.report_words, none="none")
        if self.exclusion != "none":    # options of the sound rule's subset-selection reports only
            for name, default in (("subset_size", 0), ("local_inference", "em")):
                if getattr(self, name) != default:
                    raise ParameterError("{parameter=} applies to {exclusion=none} only (its randomized reports);"
                                         " the {rule} rule ignores it: drop it.", name, getattr(self, name),
                                         none="none", rule=self.exclusion)

    def _report_domain(self, vocab_size: int, n_users: int) -> int:
        """How many of the vocabulary's first words the reports range over (``report_words``)."""
        if self.exclusion != "none" or self.report_words == "all":
            return vocab_size
        K, s = self.n_topics, int(self.subset_size)
        if self.report_words == "auto":  # never fewer than two words a topic, nor than a report's words + 1
            n = report_words_for(self._entry_epsilon(), vocab_size, n_users * self._config().n_entries)
            return min(vocab_size, max(n, 2 * K, s + 1))
        n = int(self.report_words)
        if n > vocab_size:
            raise ParameterError("{report_words=} exceeds the vocabulary's {V} words: give at most {V}, or 'all'.",
                                 "report_words", n, V=vocab_size)
        if n < K or s >= n:
            more = " and more than {subset_size=}" if s else ""
            raise ParameterError("{report_words=} is too few: the reports need at least {n_topics=} words" + more
                                 + "; raise {report_words} or pass 'auto'.", "report_words", n,
                                 values={"n_topics": K, **({"subset_size": s} if s else {})})
        return n

    def _report_corpora(self, corpora: list[Corpus]) -> tuple[list[Corpus], int]:
        """The users' corpora restricted to the report words, and their number: entries are drawn from the first
        ``n`` words only, and a user left without any of them sends padding only."""
        words = corpora[0].vocabulary.words
        n = self._report_domain(len(words), len(corpora))
        if n == len(words):
            return corpora, n
        _check_vocabulary_order(words, getattr(self, "_columns_unnamed", False), n)
        # a user left without any of them still takes part, with padding only: dropping it would make the number
        # of users (which the server sees and the model saves) depend on whether its words are among the first n
        _warn_if_not_most_common_first(corpora, n)
        kept = [c.restrict(words[:n], drop_empty=False) for c in corpora]
        if not any(c.n_tokens for c in kept):
            raise DPTopicError(f"no user holds any of the vocabulary's first {n} words (report_words): list the"
                               " vocabulary most common first, or raise report_words.")
        return kept, n

    # ------------------------------------------------------------- clients
    def _client_corpora(self, X, vocabulary=None) -> list[Corpus]:
        if isinstance(X, (list, tuple)) and X and all(isinstance(c, Corpus) for c in X):
            if vocabulary is not None:
                raise DPTopicError("vocabulary= applies to one corpus split into users; a list of user corpora"
                                   " carries its own: build each with Corpus.from_texts(..., vocabulary=V).")
            if self.n_clients is not None and self.n_clients != len(X):
                raise DPTopicError(f"n_clients={self.n_clients} but {len(X)} user corpora were given: each corpus of"
                                   " the list is one user; drop n_clients.")
            self._columns_unnamed, self._input_names, self._input_names_public = False, None, False
            self._input_tokens = False
            # the users' shared word list is public only when each corpus was built on a supplied one
            self._vocabulary_supplied = all(vocabulary_given(c) for c in X)
            fp = vocabulary_fingerprint(X[0].vocabulary.words)
            for i, c in enumerate(X):
                if vocabulary_fingerprint(c.vocabulary.words) != fp:
                    raise DPTopicError(f"client {i} uses a vocabulary unknown to the server (differs from client 0's);"
                                       " map every client corpus onto one vocabulary with Corpus.restrict.")
            if not any(c.n_tokens for c in X):
                raise DPTopicError("every client corpus is empty: give at least one client with tokens.")
            self._users_from = "corpora"
            return list(X)
        _refuse_user_lists_of_matrices(X)
        _refuse_user_lists_of_texts(X)
        X, names = self._as_input(X)
        self._columns_unnamed = (vocabulary is None and names is None
                                 and (sp.issparse(X) or isinstance(X, np.ndarray) or hasattr(X, "__array__")))
        supplied = vocabulary is not None or (names is not None and self._input_names_public)
        corpus = as_corpus(X, vocabulary=vocabulary if vocabulary is not None else names)
        if vocabulary is not None:      # a Corpus comes back as built: map it onto the list, as every trainer does
            given = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(list(vocabulary))
            if corpus.vocabulary != given:
                corpus = corpus.restrict(given).require_nonempty()
        self._vocabulary_supplied = supplied or (vocabulary is None and names is None and vocabulary_given(corpus))
        people = getattr(corpus, "user_ids", None)
        if people is not None:      # the corpus names each document's person: one client per person
            if self.n_clients is not None:
                raise ParameterError("{n_clients=} splits the documents into that many simulated users, but the corpus"
                                     " names each document's person (its user ids), and each person is one client:"
                                     " drop {n_clients}.", "n_clients", self.n_clients)
            self._users_from = "people"
            order = {}
            for d, u in enumerate(people):      # each person's documents, people in order of first appearance
                order.setdefault(u, []).append(d)
            return [corpus.subset(np.asarray(ix, dtype=np.int64)) for ix in order.values()]
        if self.n_clients is not None and self.n_clients > corpus.n_docs:
            raise ParameterError("{n_clients=} exceeds the {n} documents: a simulated user holds at least one"
                                 " document; give fewer clients, or a list of user corpora.", "n_clients",
                                 self.n_clients, n=corpus.n_docs)
        n = corpus.n_docs if self.n_clients is None else self.n_clients
        self._users_from = "documents" if self.n_clients is None else "blocks"
        # every user given sends, with or without tokens (padding only): taking part never depends on the text
        return [corpus.subset(ix) for ix in np.array_split(np.arange(corpus.n_docs), n)]

    def _config(self) -> RRPConfig:
        return RRPConfig(self.n_topics, self._entry_epsilon(), float(self.failure_rate), float(self.gamma), self.pad_length,
                         float(self.sample_ratio), float(self.alpha), self.local_iter, self.variant, self.exclusion,
                         self.replacement, int(self.subset_size), self.local_inference)

    def _planned_report_words(self, n_words: int | None) -> int | None:
        """How many words the reports range over, from public settings: the fitted ``report_words_`` (published),
        else ``report_words`` given, else the vocabulary's size where the rule reports over every word; None where
        ``report_words="auto"`` also needs the number of users (``n_clients`` gives it)."""
        fitted = getattr(self, "report_words_", None)
        if isinstance(fitted, int) and not isinstance(fitted, bool):
            return fitted
        if self.exclusion != "none" or self.report_words == "all":
            return None if n_words is None else int(n_words)
        if not isinstance(self.report_words, str):
            return int(self.report_words)
        if n_words is None or self.n_clients is None:
            return None
        return self._report_domain(int(n_words), int(self.n_clients))

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """What one user releases over the whole run (public settings alone): its randomized entries
        (:func:`fed_entry_release`), once with the ``"none"`` rule, every round with the floor and tail rules; the
        per-entry epsilon solved from the per-user total ``epsilon`` against the per-user ledger that reports it
        (:func:`~dptopic.accounting.fedlda.entry_epsilon_for_total`)."""
        n_report = self._planned_report_words(n_words)
        count = user_spend(self.exclusion, self._config().n_entries, self.rounds)
        release = fed_entry_release(self._entry_epsilon(), float(self.failure_rate), float(self.gamma), self.variant,
                                    self.exclusion, n_report, count)
        return ReleasePlan(type(self).__name__, "user", (release,) if count else (),
                           relation=user_relation(self.exclusion), theorem=release.event.theorem,
                           budget=None if self.epsilon is None else (float(self.epsilon), float(self.report_delta)),
                           discretization=user_ledger(release.event, self.exclusion).discretization)

    def _planned_spend(self, report: dict):
        n_report = (report.get("parameters") or {}).get("report_words")   # names eta in the label only
        if self.exclusion == "none" and (isinstance(n_report, bool) or not isinstance(n_report, int)):
            return None                 # a report from before the reports' words were recorded
        plan = self.release_plan()
        event = rrp_event(self._entry_epsilon(), self.failure_rate, self.gamma, self.variant, self.exclusion,
                          vocab_size=n_report)
        return RunPlan(events=[(event, n) for _, n in plan.groups()], budget=self._budget_of(report), unit="user",
                       relation=plan.relation)

    # ------------------------------------------------------------- training
    def fit(self, X, y=None, *, vocabulary=None, heldout=None, callback=None):
        """Simulate the protocol over a list of client corpora (dptopic :class:`Corpus` objects on one vocabulary,
        one per user), or one corpus split into users (``n_clients``): a Corpus, a count matrix, texts or token
        lists.

        ``heldout`` (a corpus): held-out perplexity after each round, in ``history_`` (computed by the
        analyst from the released Φ; outside the guarantee and not saved unless asked).
        ``callback(round_info: dict)`` is called after each round. A refused or failed fit leaves a fitted model
        as it was.
        """
        # the steps that warn (report_words, a seed, a vocabulary from the data, re-used documents) are called from
        # this frame, not from a helper: their stacklevels then name the caller's line, as for every other trainer
        before = dict(self.__dict__)
        try:
            self._validate()
            corpora = self._client_corpora(X, vocabulary)
            users = list(corpora)       # the users' documents as given: a later transform of them warns
            self.vocabulary_ = corpora[0].vocabulary
            V = len(self.vocabulary_)
            cfg = self._config()
            self._check_config(cfg, V)  # K <= V and a realizable epsilon, before any work
            corpora, n_report = self._report_corpora(corpora)
            self.report_words_ = n_report
            try:
                check_config(cfg, n_report)
            except DPTopicError as e:
                raise self._per_user_error(e) from None
            self._run_rounds(corpora, cfg, n_report, V, heldout, callback, n_users=len(users))
            self.n_clients_ = len(users)    # every user given (public): each sent every round
            self._set_fitted(users)
            # public quantities only: the exact document and token counts are what the padding hides
            self._train_stats = {"n_clients": self.n_clients_, "vocab_size": V,
                                 "entries_per_update": cfg.n_entries, "report_words": n_report,
                                 "rounds": [{k: v for k, v in h.items() if k != "heldout_perplexity"}
                                            for h in self.history_]}
            return self
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _check_config(self, cfg, V: int) -> None:
        """``check_config``, with the failure rate named as the other lever when the floor rule's epsilon is too
        small for the vocabulary and the poster's failure rate (0.1) would fit at this epsilon."""
        try:
            check_config(cfg, V)
        except DPTopicError as e:
            msg = str(self._per_user_error(e))
            if (self.exclusion != "floor" or "variant='coincide'" not in msg or float(self.failure_rate) >= 0.1
                    or not _floor_fits(cfg, V, 0.1)):
                raise
            d0 = _delta0(self.failure_rate, self.gamma)
            raise DPTopicError(msg.rstrip(".") + f", or raise failure_rate={self.failure_rate:g} (it sets the floor"
                               f" delta0 = {d0:.3g}, and at failure_rate=0.1 this epsilon fits).") from None

    def _per_user_error(self, e: DPTopicError) -> DPTopicError:
        """A protocol refusal of the per-entry ``epsilon`` (``check_config`` reads the per-entry figure), said of
        the per-user total for a model given one: it names the total and the per-entry figure it gave."""
        if self.epsilon is None or not isinstance(e, ParameterError) or e.parameter != "epsilon":
            return e
        head = "{epsilon=:g} (the per-user total, {per:g} per entry over {n} entries)"
        if "why" in e.fields and "least" not in e.fields:     # too small to say anything (too_small_for_vocabulary)
            return ParameterError(head + " is too small for a vocabulary of {V} words: {why}; use a larger {epsilon}.",
                                  "epsilon", self.epsilon, per=e.value, n=self._entries_spent(), V=e.fields["V"],
                                  why=e.fields["why"],
                                  key="models.fedlda.per_user_error")
        rest = str(e).partition(" ")[2]
        return ParameterError(head + " {rest}", "epsilon", self.epsilon, per=e.value, n=self._entries_spent(),
                              rest=rest)

    def fit_transform(self, X, y=None, **kw) -> np.ndarray:
        """``fit(X).transform(X)``; for a list of user corpora, the rows of every user's documents in turn."""
        if isinstance(X, (list, tuple)) and X and all(isinstance(c, Corpus) for c in X):
            self.fit(X, **kw)
            return np.vstack([self.transform(c) for c in X])
        return super().fit_transform(X, y, **kw)

    def transform(self, X, n_iter: int = 100, burn_in: int = 50, seed=0) -> np.ndarray:
        """Document–topic proportions θ (D×K) by fold-in Gibbs sampling with Φ fixed, over the report words.

        The reports ranged over the vocabulary's first ``report_words_`` words. The other words have the same
        weight in every topic (:func:`~dptopic.protocol.fedlda_server.full_vocabulary_topics`): they say nothing of a
        document's topics, and in the sampler they only follow its current proportions, which adds noise. So
        fold-in reads the report words alone, and a document without any gets the prior. ``perplexity`` still
        scores every word. With every word reported (``report_words="all"``, the floor and tail rules) this is
        the usual fold-in. On the training documents it is a fresh computation on private words (see the base
        class).
        """
        n = getattr(self, "report_words_", None)
        if n is None or not hasattr(self, "components_") or n >= self.components_.shape[1]:
            return super().transform(X, n_iter, burn_in, seed)
        c = self._as_model_corpus(X, allow_empty=True).restrict(list(self.vocabulary_.words)[:n], drop_empty=False)
        phi = self.components_[:, :n]
        return infer_theta(phi / phi.sum(axis=1, keepdims=True), c.word_ids, c.doc_ptr,
                           float(self._fitted_value("alpha")), n_iter, burn_in, seed, self._fold_in_jobs())

    def _run_rounds(self, corpora, cfg, n_report, V, heldout, callback, n_users=None) -> None:
        """The simulated protocol: ``rounds`` rounds of broadcast, local work, reports and aggregation over every
        user given (``n_users``, shown)."""
        rng = self._rng()
        ids = [f"user{i}" for i in range(len(corpora))]
        client_rngs = rng.spawn(len(corpora) + 1)
        clients = [FedClient(i, c, cfg, r, secure=self.secure) for i, c, r in zip(ids, corpora, client_rngs[1:])]
        server = FedServer.from_config(corpora[0].vocabulary, cfg, ids, self.beta, rng=client_rngs[0])
        plan = self.release_plan(n_words=V)
        event = plan.releases[0].event if plan.releases else rrp_event(
            self._entry_epsilon(), self.failure_rate, self.gamma, self.variant, self.exclusion, vocab_size=n_report)
        self.ledger_ = user_ledger(event, self.exclusion)
        # the whole run's plan, before the first round's noise (its dataset's ledger is charged here)
        plan.reserve(self.ledger_)
        self.history_ = []
        test = None if heldout is None else as_corpus(heldout, vocabulary=self.vocabulary_.words)
        with ThreadPoolExecutor(self._jobs) as pool, \
                progress_bar(self.rounds, f"FedLDA K={self.n_topics} users={n_users or len(clients)}",
                             self.verbose) as bar:
            for r in range(self.rounds):
                b = server.broadcast()
                # every simulated user gets the same broadcast: decode and check it once (FedClient.run_round
                # does both for a user on its own device)
                msg = decode_message(b)
                check_broadcast_phi(msg.phi, (cfg.n_topics, corpora[0].vocab_size), "the simulated users")
                phi_wk = np.ascontiguousarray(msg.phi.T)
                updates = list(pool.map(lambda c: c.round_update(msg, phi_wk), clients))
                for u in updates:
                    server.receive(u)
                server.aggregate()
                spend_round(self.ledger_, event, self.exclusion, cfg.n_entries, r)
                info = {"round": r + 1, "epsilon_per_entry": event.epsilon,
                        "epsilon_user_basic": self.ledger_.epsilon_basic(),
                        "epsilon_user_pld": self.ledger_.epsilon_tight(self.report_delta),
                        "bytes_per_client": float(np.mean([len(u) for u in updates])),
                        "broadcast_bytes": len(b)}
                if test is not None:
                    self.components_ = full_vocabulary_topics(server.phi, V)
                    with self._mid_fit_scoring():
                        info["heldout_perplexity"] = self.perplexity(test, mode="completion", n_iter=30, burn_in=15)
                self.history_.append(info)
                if callback is not None:
                    callback(info)
                bar.advance(1, info=f"eps/user {info['epsilon_user_basic']:.4g}")
        self.components_ = full_vocabulary_topics(server.phi, V)
        self.n_truncated_ = int(sum(c.n_truncated for c in clients))

    def privacy_report(self) -> dict:
        rep = self.ledger_.report(self.report_delta)
        none = self.exclusion == "none"
        n_report = int(getattr(self, "report_words_", len(self.vocabulary_)))
        per = self._entry_epsilon()
        e = None if none else _eta(per, self.failure_rate, self.gamma, self.variant)
        rep.update({
            "epsilon_nominal": per,
            "epsilon_per_entry": float(rep["events"][0]["epsilon"]) if rep["events"] else per,
            # the 'none' rule's reports use none of the floor and tail rules' RRP parameters (eta, delta0, the
            # failure rate, gamma, variant, replacement): the card lists only what the rule read
            "parameters": ({"exclusion": self.exclusion, "entries_per_round": self._config().n_entries,
                            "rounds": self.rounds, "vocab_size": len(self.vocabulary_)} if none else
                           {"eta": e, "delta0": _delta0(self.failure_rate, self.gamma), "failure_rate_delta": self.failure_rate,
                            "gamma": self.gamma, "variant": self.variant, "exclusion": self.exclusion,
                            "replacement": self.replacement, "entries_per_round": self._config().n_entries,
                            "rounds": self.rounds}),
            **coverage(self.replacement, self.exclusion),
            "noise": ("subset selection (one word: k-ary randomized response), once per entry" if none
                      else "RRP word replacement"),
            "secure_noise": bool(self.secure),
            "randomness": (FED_SECURE if self.secure else FED_SIMULATION) if none else FED_RRP_COINS,
            "vocabulary_source": "supplied" if getattr(self, "_vocabulary_supplied", False) else "data",
        })
        if none and rep["vocabulary_source"] == "data":     # the reports are fully covered, the model is not
            rep["note"] = DATA_VOCABULARY_NOTE
        if getattr(self, "_deployment", None):     # released by a deployment (from_broadcast), not simulated by fit
            rep["deployment"] = str(self._deployment)
        users = USERS_FROM.get(getattr(self, "_users_from", None))
        if users is not None:       # who a simulated user is: the card's epsilon is per that user
            rep["user_bound"] = users
        if self.epsilon is not None:    # the total asked, which privacy verify holds the events to
            rep["budget"] = {"epsilon": float(self.epsilon), "delta": float(self.report_delta),
                             "rule": "the per-entry epsilon solved so that the per-user figure this report states is"
                                     " the total asked, to within 1% below it"}
        budget = getattr(self, "_user_budget", None)
        if budget is not None:
            rep["budget"] = {**rep.get("budget", {}), "epsilon_per_user": budget[0], "vocab_size": budget[1],
                             "rule": "FedLDA.from_user_budget: entries and epsilon per entry minimising the"
                                     " frequency estimate's error for this total (docs/fedlda.md)"}
            if budget[1] != n_report:
                rep["budget"]["note"] = (f"chosen for {budget[1]} words but the reports range over {n_report}:"
                                         " the total still holds, the split may not be the best")
        if none:
            size = self._config().report_size(n_report)
            rep["parameters"].update({"words_per_report": size, "local_inference": self.local_inference,
                                      "inclusion_probability": subset_inclusion(per, n_report, size)[0],
                                      "report_words": n_report,
                                      "report_words_rule": self.report_words if isinstance(self.report_words, str)
                                      else "given"})
            if n_report < len(self.vocabulary_):
                rep["report_words_note"] = (f"reports range over the vocabulary's first {n_report} of"
                                            f" {len(self.vocabulary_)} words (taken as its most common); a user's other"
                                            " words are never sent, and every topic gives them the same weights, by"
                                            " Zipf's law over the vocabulary order. The vocabulary and its order are"
                                            + (" public inputs, published by the server before any report"
                                               if getattr(self, "_deployment", None) else
                                               " public inputs: built from the training documents (a simulation),"
                                               " they are not covered"))
        # as every private trainer's report says: whether the reports' noise can be regenerated (only from a seed)
        rep["noise_reproducible"] = self.seed is not None
        if self.seed is not None:
            rep["warning"] = "an explicit seed was given: the guarantee holds only while the seed stays secret"
        return rep

    def estimated_words(self):
        """The vocabulary's first ``report_words_`` words, which the reports ranged over; the other words get the same
        weights in every topic (Zipf's law over the vocabulary order), which the reports never estimated. None when the
        reports ranged over every word."""
        self._check_fitted()
        K, V = self.components_.shape
        n = int(getattr(self, "report_words_", V))
        if n >= V:
            return None
        mask = np.zeros((K, V), dtype=bool)
        mask[:, :n] = True
        return mask

    def _load_extra(self, arrays) -> None:
        super()._load_extra(arrays)
        # folders saved before these counts were dropped: read, but never written again
        if isinstance(self._train_stats, dict):
            self._train_stats = {k: v for k, v in self._train_stats.items() if k not in ("n_docs", "n_tokens")}
        stats = self._train_stats if isinstance(self._train_stats, dict) else {}
        self.report_words_ = int(stats.get("report_words", len(self.vocabulary_)))  # older folders: every word

    def save(self, directory, *, save_metrics: bool | None = None) -> str:
        """Save like every private model: the seed is never written. ``save_metrics=True`` adds the
        metrics and the per-round held-out perplexity, labelled as outside the guarantee."""
        metrics = getattr(self, "metrics_", {})
        per_round = [h["heldout_perplexity"] for h in getattr(self, "history_", []) if "heldout_perplexity" in h]
        if save_metrics and per_round:
            self.metrics_ = {**metrics, "heldout_perplexity_per_round": per_round}
        try:
            return super().save(directory, save_metrics=save_metrics)
        finally:
            self.metrics_ = metrics
