"""Public documents of the domain as a prior for ``DocDPCooccurrence`` (``fit(..., public_corpus=)``).

A few hundred non-private documents (published reports, a public forum of the same kind) give a co-occurrence
matrix ``P`` over the words the private release kept, computed exactly as the private statistic is (each document's
pairs scaled to Frobenius norm 1), with no noise: they are public. Two candidate topic sets follow, both functions
of the noisy release ``R`` and of ``P`` alone, so post-processing of the release (Dwork & Roth 2014, Prop 2.1):

* public only: the non-negative factorisation of ``P``;
* public + private: the factorisation of ``R + w P``, where ``w`` scales the public matrix to ``weight`` times the
  private one's mass (the ratio of the two matrices' sums, the private one read from the release).

The model keeps the public + private topics unless they have fewer topics standing above the noise of the private
release than the public ones (:func:`dptopic.moments.support.cooccurrence_supported_topics`, on ``R``), and says
which it kept (``public_route_``) and why: a private model never ends below its public start without saying so.
The topics kept (over the words of the release, and a tail spread alike over the others) then start EM on the
public documents, regularised towards them (:func:`extend_topics`): each topic takes its own words outside the
release's from the public documents. With ``n_words="auto"`` the release keeps up to ``PUBLIC_AUTO_WORDS`` words.
Nothing here reads the private documents.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ..errors import DPTopicError, PublicOverlapWarning, user_stacklevel
from .document_statistics import normalised_cooccurrence
from .factorize import topics_from_cooccurrence
from .support import cooccurrence_supported_topics

PUBLIC_WEIGHT = 1.0
"""The public matrix's weight in ``R + w P``, as a multiple of the private matrix's mass (set on 20 Newsgroups with
500 public posts: ``docs/research/document_dp.md``)."""

ROUTES = ("public+private", "public only")


def public_counts(public_corpus, vocab) -> sp.csr_matrix:
    """The public documents as a documents x words count matrix over ``vocab``: a Corpus is matched by word (its words
    outside ``vocab`` dropped), a matrix must have one column per word. Refused in one line when empty or not
    counts."""
    from ..corpus import Corpus  # start-up: corpus loads numba

    if isinstance(public_corpus, Corpus):
        X = public_corpus.restrict(list(vocab), drop_empty=True).to_bow()
    elif sp.issparse(public_corpus) or isinstance(public_corpus, np.ndarray):
        X = sp.csr_matrix(public_corpus)
        if X.ndim != 2 or X.shape[1] != len(vocab):
            raise DPTopicError(f"public_corpus has {X.shape[-1]} columns but the vocabulary {len(vocab)} words: give"
                               " a count matrix over the training vocabulary, or a Corpus (matched by word).")
    else:
        raise DPTopicError(f"public_corpus must be a Corpus or a documents x words count matrix; got"
                           f" {type(public_corpus).__name__}.")
    X = sp.csr_matrix(X, dtype=np.float64)
    if X.nnz and (X.data.min() < 0 or not np.all(np.isfinite(X.data))):
        raise DPTopicError("public_corpus holds negative or non-finite counts: give word counts.")
    if (np.diff(X.indptr) > 1).sum() == 0:
        raise DPTopicError("public_corpus has no document with two words of the vocabulary: give public documents"
                           " of the same domain as the training corpus.")
    return X


MIN_FINGERPRINT_TOKENS = 5
"""A public document of at least this many tokens (over the words compared) that is also a private one is refused by
:func:`refuse_private_as_public`; shorter ones may repeat by chance ("thank you")."""


def _bags(docs, vocab) -> tuple:
    """``(csr, words)`` of a Corpus (its own words) or a documents x words count matrix (over ``vocab``)."""
    from ..corpus import Corpus  # start-up: corpus loads numba

    if isinstance(docs, Corpus):
        return sp.csr_matrix(docs.to_bow()), [str(w) for w in docs.vocabulary.words]
    if (sp.issparse(docs) or isinstance(docs, np.ndarray)) and vocab is not None and np.ndim(docs) == 2 \
            and docs.shape[1] == len(vocab):
        return sp.csr_matrix(docs), [str(w) for w in vocab]
    return None, None


def document_fingerprints(docs, vocab=None, words=None) -> dict:
    """``{fingerprint: row}`` of the documents of ``docs`` (a Corpus, or a count matrix over ``vocab``) with at least
    :data:`MIN_FINGERPRINT_TOKENS` tokens: a hash of each document's bag of words (word, count), over ``words`` only
    when given (the words both corpora can hold). Empty for input it cannot read so (shards, mini-batches)."""
    X, names = _bags(docs, vocab)
    if X is None:
        return {}
    keep = None if words is None else set(words)
    out = {}
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        bag = sorted((names[j], float(c)) for j, c in zip(X.indices[lo:hi], X.data[lo:hi])
                     if c and (keep is None or names[j] in keep))
        if sum(c for _, c in bag) >= MIN_FINGERPRINT_TOKENS:
            out.setdefault(hash(tuple(bag)), i)
    return out


LARGE_OVERLAP_SHARE = 0.05
"""A public corpus of which at least this share of documents are private ones is refused by
:func:`refuse_private_as_public` (the private data given as public by mistake); fewer are warned of (cross-posts)."""


def refuse_private_as_public(public_corpus, private, vocab=None, public_name: str = "public_corpus",
                             private_name: str = "the training corpus") -> None:
    """Refuse, before anything is spent, public input that is the private data: the same object, or a public corpus
    of which a large share of the documents (:data:`LARGE_OVERLAP_SHARE`) is found among the private ones by its
    fingerprint (:func:`document_fingerprints`: the same bag of words, of at least :data:`MIN_FINGERPRINT_TOKENS`
    tokens, over the words both hold). A few such documents (a post cross-posted to a public forum) are warned of,
    their count labelled outside the guarantee: the private release's guarantee does not depend on what is public,
    but the card names every public document as public input, read in the clear. (The same file is refused where
    files are read: :func:`dptopic.datasets.read_public_corpus`.) ``vocab``: the words of a count matrix's
    columns (``fit``'s vocabulary)."""
    if public_corpus is private:
        raise DPTopicError(f"{public_name} is {private_name} itself: public documents are read in the clear, outside"
                           " the epsilon, so the private documents must not be among them; give public documents of"
                           " the same domain (published reports, a public forum), none of them private.")
    X_pub, pub_words = _bags(public_corpus, vocab)
    _, priv_words = _bags(private, vocab)
    if pub_words is None or priv_words is None:
        return
    shared = set(pub_words) & set(priv_words)
    public = document_fingerprints(public_corpus, vocab, shared)
    if not public:
        return
    found = public.keys() & document_fingerprints(private, vocab, shared).keys()
    if not found:
        return
    n_public = X_pub.shape[0]
    first = min(public[f] for f in found)
    if len(found) >= LARGE_OVERLAP_SHARE * n_public:
        raise DPTopicError(f"{public_name} holds {len(found):,} of the private documents of {private_name} (document"
                           f" {first + 1} of {public_name} is one, the same words the same number of times; at least"
                           f" {LARGE_OVERLAP_SHARE:.0%} of its {n_public:,} documents; counts of the private data:"
                           " outside the guarantee): public documents are read in the clear, outside the epsilon; give"
                           " public documents none of which is private.")
    warnings.warn(f"{public_name}: {len(found):,} of its {n_public:,} documents (document {first + 1} is one) are also"
                  f" documents of {private_name}, the same words the same number of times (an exact count of the"
                  " private data: outside the guarantee, shown here, not saved), e.g. posts cross-posted to a public"
                  " forum. They are read in the clear as public input, as the card says of every public document;"
                  " the private release's guarantee is unchanged. Remove them if they were not public.",
                  PublicOverlapWarning, stacklevel=user_stacklevel())


def public_prior_topics(noisy, public: sp.csr_matrix, kept, n_topics: int, noise_std: float, threshold: float,
                        weight: float | None = None) -> tuple[np.ndarray, dict]:
    """``(topics over kept, public_input)``: the topics the model keeps and what the card says of the public input
    (module note). ``noisy``: the private release over ``kept``; ``noise_std``: its off-diagonal noise after
    symmetrising."""
    w = PUBLIC_WEIGHT if weight is None else float(weight)
    P = normalised_cooccurrence(public, kept)
    R = (np.asarray(noisy, dtype=np.float64) + np.asarray(noisy, dtype=np.float64).T) / 2.0
    scale = max(float(R.sum()), 0.0) / max(float(P.sum()), 1e-300)   # private mass per unit of public mass
    H_public = topics_from_cooccurrence(P, n_topics, "nmf")
    H_both = topics_from_cooccurrence(R + w * scale * P, n_topics, "nmf", noise_std=noise_std, threshold=threshold)
    n_public = int(cooccurrence_supported_topics(R, H_public, noise_std).sum())
    n_both = int(cooccurrence_supported_topics(R, H_both, noise_std).sum())
    route = ROUTES[0] if n_both >= n_public else ROUTES[1]
    info = {"documents": int(public.shape[0]), "tokens": int(public.sum()), "route": route, "weight": w,
            "supported_public_only": n_public, "supported_public_private": n_both}
    if route == ROUTES[1]:
        warnings.warn(f"DocDPCooccurrence: the private release did not improve on the public documents' topics"
                      f" ({n_both} topic(s) of public + private stand above its noise, {n_public} of the public ones"
                      " alone): the model keeps the public topics (public_route_ says so); give more private"
                      " documents or a larger epsilon for the private data to count.", UserWarning, stacklevel=user_stacklevel())
    return (H_both if route == ROUTES[0] else H_public), info


PUBLIC_EM_STEPS = 30
"""EM steps over the public documents that carry the topics onto every word (:func:`extend_topics`)."""
PRIOR_STRENGTH = 1.0
"""The release's topics as a prior in those steps: pseudo-counts of ``PRIOR_STRENGTH`` times each topic's expected
public count (1: the release and the public documents weigh alike; set on 20 Newsgroups,
docs/research/document_dp.md)."""
PUBLIC_AUTO_WORDS = 800
"""``n_words="auto"`` with a public corpus: up to this many words for the co-occurrence release (the public matrix
carries words the noise alone would drown; ``max_false_words`` still bounds the words kept by noise)."""


def extend_topics(beta: np.ndarray, public: sp.csr_matrix, alpha: float, steps: int | None = None,
                  strength: float | None = None) -> np.ndarray:
    """Topics over every word from ``beta`` (K x V: the release's topics over the kept words, and a tail spread alike
    over every other word) and the public documents: ``steps`` EM steps of the topic model on the public documents
    started from ``beta`` and regularised towards it (each step: the documents' topic shares, then each topic's
    expected public counts plus ``strength`` times as many pseudo-counts spread as ``beta``), so that each topic
    takes its own words outside the kept ones from the public documents. Reads ``beta`` and the public documents only
    (post-processing); ``steps=0`` returns ``beta``."""
    steps = PUBLIC_EM_STEPS if steps is None else int(steps)
    strength = PRIOR_STRENGTH if strength is None else float(strength)
    X = sp.csr_matrix(public, dtype=np.float64)
    X.sum_duplicates()
    K = beta.shape[0]
    est = beta.copy()
    theta = np.full((X.shape[0], K), 1.0 / K)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))

    def ratio():
        # X / (theta @ est), computed at X's non-zero cells only: the dense documents x words product would not fit
        # in memory for a large public corpus (150,000 dictionary definitions x 2,000 words is 2.4 GB a step)
        model = np.einsum("ik,ki->i", theta[rows], est[:, X.indices])
        return sp.csr_matrix((X.data / np.maximum(model, 1e-300), X.indices, X.indptr), shape=X.shape)

    for _ in range(steps):
        for _ in range(5):                                      # the documents' topic shares under est
            theta = theta * np.asarray(ratio() @ est.T) + alpha
            theta /= theta.sum(axis=1, keepdims=True)
        counts = est * np.asarray((ratio().T @ theta).T)         # each topic's expected public counts
        est = counts + strength * beta * counts.sum(axis=1, keepdims=True) + 1e-12
        est /= est.sum(axis=1, keepdims=True)
    return est


def check_public_input(report, card=None) -> dict | None:
    """A saved report's ``public_input`` entry (None without one), held to what :func:`public_input_entry` writes and
    to the card saved beside it (``model.json``'s ``privacy_card``): an entry that is not an object, names an unknown
    route or no count of documents, claims to be covered, or that the card names otherwise (or names where the
    report has none) is refused: the folder was edited."""
    report = report if isinstance(report, dict) else {}
    entry = report.get("public_input")
    saved = (card or {}).get("public_input") if isinstance(card, dict) else None
    if entry is None:
        if saved is not None:
            raise DPTopicError("corrupt model: its privacy card names public input (public_corpus=) that its privacy"
                               " report does not (the file was edited)")
        return None
    docs = entry.get("documents") if isinstance(entry, dict) else None
    if (not isinstance(entry, dict) or entry.get("route") not in ROUTES or entry.get("covered") is not False
            or isinstance(docs, bool) or not isinstance(docs, int) or docs < 1):
        raise DPTopicError("corrupt model: the privacy report's public_input must be the object a fit with"
                           " public_corpus= writes (its route, a count of documents, not covered; the file was"
                           " edited)")
    if card is not None and saved != entry:
        raise DPTopicError("corrupt model: the privacy report's public_input differs from the one on the privacy"
                           " card saved with it (the file was edited)")
    return entry


def public_input_entry(info: dict) -> dict:
    """The privacy report's and card's ``public_input`` entry: what public documents were read, outside the epsilon,
    and which route the model kept."""
    kept = ("from the public and private co-occurrence together" if info["route"] == ROUTES[0] else
            "from the public documents alone: the private release did not improve on them (fewer of its topics"
            " stood above the noise)")
    return {**info, "covered": False,
            "summary": f"{info['documents']:,} public documents (public_corpus), read in the clear and not protected by"
                       f" the epsilon: they must hold no private document; the topics come {kept}"}
