"""FDPTM: a private vocabulary composed with any document-level topic model (Manzonelli et al. 2024, Alg. 1).

Orchestration only: :func:`~dptopic.corpus.private_vocabulary.dp_set_union` selects the
vocabulary, the corpus is restricted to it, the estimator is fitted, and the privacy
report is composed by :func:`~dptopic.accounting.set_union.fdptm_report` (Theorem 4.1).
"""
from __future__ import annotations

import warnings

from .._io import plain_numbers
from ..accounting.events import ApproxDPEvent
from ..accounting.set_union import fdptm_report
from ..corpus import Corpus, as_corpus
from ..corpus.ledger_documents import documents_of
from ..corpus.private_vocabulary import dp_set_union
from ..dataset_ledger.charge import debit_outside_fit
from ..errors import DataVocabularyWarning, DPTopicError


def restrict_to_private_vocabulary(X, epsilon_vocab: float, delta_vocab: float, delta0: int | None = None,
                                   alpha: float | None = None, mechanism: str = "gaussian", order: str | None = None, seed=None,
                                   secure: bool = False, charge_as=None) -> tuple:
    """``(corpus restricted to a DP set-union vocabulary, its (ε, δ) event)``; ``secure`` as in
    :func:`~dptopic.corpus.private_vocabulary.dp_set_union`."""
    corpus: Corpus = as_corpus(X, uncut=True)     # texts and words: every word a candidate, no top-N cut

    # the selection is a release of its own: on the dataset's ledger (when one is on) before its noise is drawn
    debit_outside_fit("DP set union (vocabulary)", "document",
                      [(ApproxDPEvent(float(epsilon_vocab), float(delta_vocab), label="DP set union vocabulary",
                                      unit="document"), 1)], float(delta_vocab), lambda: documents_of(X), charge_as)
    vocab, event = dp_set_union(corpus, epsilon_vocab, delta_vocab, delta0=delta0, alpha=alpha,
                                mechanism=mechanism, order=order, seed=seed, secure=secure)
    if len(vocab) < 2:
        raise DPTopicError(f"the private vocabulary has {len(vocab)} word(s) at eps_V={epsilon_vocab:g}: raise eps_V"
                           " (epsilon_vocab) or delta_V, or use a larger"
                           " corpus.")
    return corpus.restrict(vocab), event


def compose_privacy(estimator, event) -> dict:
    """Replace a fitted estimator's ``privacy_`` by the FDPTM composition with the vocabulary event."""
    estimator.vocabulary_event_ = event
    estimator.privacy_ = plain_numbers(fdptm_report(event, estimator.privacy_, getattr(estimator, "ledger_", None)))
    # the vocabulary's guarantee protects a whole document (add/remove): the exact number of documents and tokens
    # would undo it, so model.json keeps only the (released) vocabulary size, as the document-level trainers do
    drop = getattr(estimator, "drop_corpus_counts", None)       # a dptopic model's; another estimator keeps none
    if drop is not None:
        drop()
    return estimator.privacy_


def check_before_release(estimator, public_corpus=None) -> None:
    """What the estimator reads besides the documents and can check before its words are known, checked before the
    vocabulary's selection draws anything: its parameters, and its public word vectors (a corrupt, unbounded or
    malformed source; ``check_public_vectors`` of a trainer that reads them). A refused input then spends nothing."""
    validate = getattr(estimator, "validate_parameters", None)
    if validate is not None:
        validate()
    check_vectors = getattr(estimator, "check_public_vectors", None)
    if check_vectors is not None:
        check_vectors(public_corpus)


def fit_fdptm(estimator, X, epsilon_vocab: float, delta_vocab: float, delta0: int | None = None, alpha: float | None = None,
              mechanism: str = "gaussian", order: str | None = None, seed=None, secure: bool | None = None) -> tuple:
    """Select a private vocabulary from ``X`` and fit ``estimator`` on ``X`` restricted to it.

    Returns ``(estimator, restricted_corpus)``; ``estimator.privacy_`` is the composed report and
    ``estimator.vocabulary_event_`` the vocabulary's (ε, δ) event. Coherence and other evaluation
    should use ``restricted_corpus`` (the private vocabulary). ``secure`` (default: the estimator's own
    ``secure``) draws the selection's noise with OpenDP.
    """
    secure = bool(getattr(estimator, "secure", False)) if secure is None else secure
    check_before_release(estimator)
    restricted, event = restrict_to_private_vocabulary(X, epsilon_vocab, delta_vocab, delta0, alpha, mechanism,
                                                       order, seed, secure, charge_as=estimator)

    with warnings.catch_warnings():     # the restricted corpus's words were chosen privately: compose_privacy says so
        warnings.simplefilter("ignore", DataVocabularyWarning)
        estimator.fit(restricted)
    compose_privacy(estimator, event)
    return estimator, restricted
