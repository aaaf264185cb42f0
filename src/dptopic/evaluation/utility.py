"""Measures public knowledge cannot pass: how much of a reference model's topics a model covers
(:func:`topic_coverage`), and how well its document-topic proportions predict labels (:func:`downstream_score`).

NPMI and diversity score a list of common words well (``docs/document_dp.md``); these two compare against something
only the corpus knows: topics trained on it (or planted in it, as ``benchmarks/bench_planted.py`` does), and the
documents' labels.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import DPTopicError
from .topic_matching import aligned_topics, cosine_matrix


def _topics_of(x, what: str):
    """``(components, vocabulary)`` of a fitted model (``components_`` and ``vocabulary_``) or of a plain pair."""
    if isinstance(x, (tuple, list)) and len(x) == 2:
        return x[0], x[1]
    if hasattr(x, "components_") and hasattr(x, "vocabulary_"):
        return x.components_, x.vocabulary_
    if hasattr(x, "components_"):        # scikit-learn's LDA, say: the columns' words are not known here
        raise DPTopicError(f"{what} has topics but no vocabulary_: pass (model.components_, vocabulary), with the"
                           " words of its columns in order.")
    if hasattr(x, "fit"):
        raise DPTopicError(f"{what} is not fitted yet: call fit() or dptopic.load() first.")
    raise DPTopicError(f"{what} must be a fitted dptopic model or a (components, vocabulary) pair; got"
                       f" {type(x).__name__}.")


def topic_coverage(model, reference_model) -> dict:
    """How much of a reference model's topics ``model`` has found, and how much of what it found is in the reference.

    For each reference topic, the best cosine similarity between its word distribution and any of ``model``'s topics,
    averaged: ``"coverage"`` (reference -> model; 1 when every reference topic has a copy among the model's topics).
    The other direction, each of ``model``'s topics against its best reference topic, averaged: ``"precision"``
    (model -> reference; 1 when every topic of the model is one of the reference's). Unlike :func:`topic_match`
    (Hungarian matching, one model topic per reference topic), a model topic may cover several reference topics,
    so two models with different numbers of topics compare fairly, and a model that repeats one good topic K times
    scores high coverage of that topic only.

    ``model`` and ``reference_model`` are fitted dptopic models (anything with ``components_`` and ``vocabulary_``)
    or ``(components, vocabulary)`` pairs: K x V non-negative topic-word weights (probabilities or counts: each
    row's scale does not matter) with the V words of their columns. The two vocabularies may differ: topics are
    compared over the words both hold, matched by word string, as :func:`topic_match` does.

    Returns ``{"coverage", "precision", "per_reference_topic", "per_model_topic", "shared_words"}``: the two means,
    each reference topic's best cosine (in the reference's topic order), each model topic's best cosine, and the
    number of shared words."""
    comp, vocab = _topics_of(model, "model")
    ref_comp, ref_vocab = _topics_of(reference_model, "reference_model")
    A, B, n_shared = aligned_topics(comp, vocab, ref_comp, ref_vocab)
    sim = cosine_matrix(B, A)                          # reference topics x model topics
    best_ref, best_model = sim.max(axis=1), sim.max(axis=0)
    return {"coverage": float(best_ref.mean()), "precision": float(best_model.mean()),
            "per_reference_topic": [float(s) for s in best_ref], "per_model_topic": [float(s) for s in best_model],
            "shared_words": n_shared}


def _labels(labels, texts, name: str, text_name: str, n_docs: int) -> np.ndarray:
    """``labels`` (or, when None, the labels a Corpus ``texts`` was read with) as an array, one per document."""
    if labels is None:
        labels = getattr(texts, "labels", None)
        if labels is None:
            raise DPTopicError(f"{name} is missing: give one label per document of {text_name}, or pass a Corpus read"
                               " with labels.")
    if isinstance(labels, str):
        raise DPTopicError(f"{name} is one string: give one label per document of {text_name}, as a list.")
    y = np.asarray(list(labels), dtype=object)
    if y.ndim != 1 or len(y) != n_docs:
        raise DPTopicError(f"{name} holds {len(y)} labels but {text_name} {n_docs} documents: give one label per"
                           " document, in the same order.")
    if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in y):
        raise DPTopicError(f"{name} holds a missing label (None or NaN): fill in every document's label or drop the"
                           " unlabelled documents.")
    return np.asarray([str(v) for v in y])


def downstream_score(model, texts, labels, test_texts, test_labels) -> dict:
    """How well ``model``'s document-topic proportions predict labels: a logistic regression (scikit-learn's
    ``LogisticRegression`` with its defaults, but up to 1,000 iterations, 10,000 if those do not converge) trained on
    ``model.transform(texts)`` and ``labels``, scored on ``model.transform(test_texts)`` against ``test_labels``.

    ``texts`` and ``test_texts`` are whatever the model's ``transform`` reads: a Corpus (read into the model's
    vocabulary), a list of strings, token lists or a document-term matrix in the model's vocabulary; one label per
    document (a label is compared as a string). ``labels=None`` (or ``test_labels=None``) takes the labels a Corpus
    was read with. Training labels need two classes at least.

    Returns ``{"accuracy", "macro_f1", "n_train", "n_test", "n_classes"}``: ``sklearn.metrics`` accuracy and macro-F1
    (the unweighted mean of each class's F1; 0 for a class never predicted) on the test documents.

    The score reads the documents' words and labels: for a private model it is computed outside the privacy
    guarantee (``transform`` says so when it meets training documents), so score on public or held-out labelled
    documents, and label any figure shown beside a private model as outside the guarantee."""
    from sklearn.exceptions import ConvergenceWarning  # scikit-learn takes seconds to import
    from sklearn.linear_model import LogisticRegression  # scikit-learn (as above)
    from sklearn.metrics import accuracy_score, f1_score  # scikit-learn (as above)

    if not hasattr(model, "transform"):
        raise DPTopicError(f"model must be a fitted dptopic model (with transform); got {type(model).__name__}.")
    X = np.asarray(model.transform(texts), dtype=np.float64)
    X_test = np.asarray(model.transform(test_texts), dtype=np.float64)
    y = _labels(labels, texts, "labels", "texts", X.shape[0])
    y_test = _labels(test_labels, test_texts, "test_labels", "test_texts", X_test.shape[0])
    classes = np.unique(y)
    if len(classes) < 2:
        raise DPTopicError(f"labels name one class ({str(classes[0])[:40]!r}) only: a classifier needs documents of"
                           " two classes at least.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            clf = LogisticRegression(max_iter=1000).fit(X, y)
    except ConvergenceWarning:          # rare on proportions in [0, 1]; a longer run, which warns if it still fails
        clf = LogisticRegression(max_iter=10_000).fit(X, y)
    pred = clf.predict(X_test)
    return {"accuracy": float(accuracy_score(y_test, pred)),
            "macro_f1": float(f1_score(y_test, pred, average="macro", zero_division=0)),
            "n_train": int(X.shape[0]), "n_test": int(X_test.shape[0]), "n_classes": int(len(classes))}
