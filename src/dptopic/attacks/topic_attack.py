"""The topic-based attack of Zhao et al. (Algorithm 3, eq. 24).

An observer sees, every iteration ``i``, the released word–topic counts ``n̂_i`` and the
topic ``k_i`` sampled for a target token, and scores every word ``t``::

    score(t) = Σ_i log(max(n̂_i[t, k_i], 0) + β_a) − log Σ_t' (max(n̂_i[t', k_i], 0) + β_a)
    P(t)     = softmax_t(score)

(normalised and smoothed; the paper's product of probabilities is unnormalised). "Attack accuracy" after ``i`` iterations is ``P(true word)``; we also report
top-1 success. The attack runs through the trainer's ``callback`` and never
changes the trainer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..corpus import Corpus
from ..dataset_ledger.charge import shadow_runs
from ..errors import DPTopicError
from ..models.base import GibbsTopicModel
from ..models.fedlda import FedLDA
from ..models.lplda import LocalReportsModel


class TopicAttack:
    """Callback that accumulates eq. (24) scores for ``targets`` (token indices)."""

    def __init__(self, targets, true_words, vocab_size: int, beta_a: float = 0.01):
        self.targets = np.asarray(targets, dtype=np.int64)
        self.true_words = np.asarray(true_words, dtype=np.int64)
        self.beta_a = float(beta_a)
        self.scores = np.zeros((len(self.targets), vocab_size))
        self.prob_true: list[np.ndarray] = []
        self.top1: list[np.ndarray] = []

    def __call__(self, info) -> None:
        if info.release is None:
            raise DPTopicError("the trainer released no counts to attack.")
        rel = np.maximum(np.asarray(info.release, dtype=np.float64), 0) + self.beta_a  # V × K
        logcol = np.log(rel)
        lognorm = np.log(rel.sum(axis=0))
        ks = info.z[self.targets]
        self.scores += (logcol[:, ks] - lognorm[ks]).T
        s = self.scores - self.scores.max(axis=1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=1, keepdims=True)
        idx = np.arange(len(self.targets))
        self.prob_true.append(p[idx, self.true_words])
        self.top1.append((np.argmax(self.scores, axis=1) == self.true_words).astype(float))


@dataclass
class AttackResult:
    prob_true: np.ndarray  # (n_runs, T): mean over targets of P(true word) after each iteration
    top1: np.ndarray       # (n_runs, T): fraction of targets whose top-scoring word is right

    @property
    def mean_prob(self) -> np.ndarray:
        return self.prob_true.mean(axis=0)

    @property
    def mean_top1(self) -> np.ndarray:
        return self.top1.mean(axis=0)

    def stderr_prob(self) -> np.ndarray:
        n = self.prob_true.shape[0]
        # one seed has no spread to estimate: NaN (undefined), never a standard error of 0
        return self.prob_true.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(self.prob_true.shape[1], np.nan)


def choose_targets(corpus, n_targets: int, rng: np.random.Generator) -> np.ndarray:
    """The last token of D (the paper's target) plus ``n_targets − 1`` random tokens."""
    last = corpus.n_tokens - 1
    if n_targets <= 1:
        return np.array([last])
    others = rng.choice(corpus.n_tokens - 1, size=min(n_targets - 1, corpus.n_tokens - 1), replace=False)
    return np.concatenate([[last], others])


SUPPORTED = "LDA, CDPLDA, CDPLDAPlus and HDPLDA"


def _check_model(model) -> None:
    """The attack reads the word-topic counts each iteration releases and the topic sampled for each token: only the
    central collapsed Gibbs samplers have both."""
    if not isinstance(model, GibbsTopicModel) or isinstance(model, (LocalReportsModel, FedLDA)):
        raise DPTopicError(f"the topic-based attack supports the central collapsed Gibbs samplers ({SUPPORTED}), which"
                           " release word-topic counts and sample a topic for every token each iteration;"
                           f" make_model returned a {type(model).__name__}, which does neither.")


def run_topic_attack(make_model, corpus, seeds=range(10), n_targets: int = 20, beta_a: float | None = None) -> AttackResult:
    """Train ``make_model(seed)`` on ``corpus`` once per seed while attacking ``n_targets`` tokens
    (``make_model`` builds one of the collapsed Gibbs samplers: LDA, CDPLDA, CDPLDAPlus, HDPLDA)."""
    if not isinstance(corpus, Corpus):
        raise DPTopicError(f"the attack needs a dptopic Corpus, got a {type(corpus).__name__}: build one with"
                           " Corpus.from_texts(texts).")
    corpus.require_nonempty()
    if isinstance(n_targets, bool) or not isinstance(n_targets, (int, np.integer)) or n_targets < 1:
        raise DPTopicError(f"invalid n_targets={n_targets!r}: need a whole number >= 1 of target tokens.")
    if beta_a is not None and not (isinstance(beta_a, (int, float, np.floating)) and np.isfinite(beta_a) and beta_a > 0):
        raise DPTopicError(f"invalid beta_a={beta_a!r}: give a number > 0 (or None for the model's beta).")
    try:
        seeds = [int(s) for s in seeds]
    except (TypeError, ValueError):
        raise DPTopicError(f"invalid seeds={seeds!r}: give whole numbers, e.g. range(10).") from None
    if not seeds:
        raise DPTopicError("no seeds given: the attack trains one model per seed; give at least one, e.g. range(10).")
    if not callable(make_model):
        raise DPTopicError("invalid make_model: give a function make_model(seed) returning an unfitted LDA, CDPLDA,"
                           " CDPLDAPlus or HDPLDA.")
    probs, tops = [], []
    for s in seeds:
        model = make_model(s)
        _check_model(model)
        rng = np.random.default_rng([int(s), 7])
        targets = choose_targets(corpus, n_targets, rng)
        atk = TopicAttack(targets, corpus.word_ids[targets], corpus.vocab_size,
                          beta_a=model.beta if beta_a is None else beta_a)

        with shadow_runs():     # its own dataset of the ledger, never the user's
            model.fit(corpus, callback=atk)
        probs.append(np.mean(atk.prob_true, axis=1))
        tops.append(np.mean(atk.top1, axis=1))
    return AttackResult(np.array(probs), np.array(tops))
