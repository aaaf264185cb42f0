"""What a corpus holds, in figures: its size, document lengths, most frequent words and labels.

These figures are computed from the documents themselves: for a private corpus they are not protected by
differential privacy (``dptopic corpus info`` says so); they are for the corpus's owner, to choose the
vocabulary cuts before training.
"""
from __future__ import annotations

import re
import unicodedata

import numpy as np

from .corpus import Corpus

MAX_SIMILAR_GROUPS = 20
"""The most groups of near-identical person ids :func:`people_summary` lists."""


def corpus_summary(corpus, top: int = 20, aliases=()) -> dict:
    """A JSON-ready summary of ``corpus``: ``documents``, ``tokens``, ``vocabulary_size``,
    ``empty_documents_dropped``, ``document_length`` (min, median, mean, max; zeros for no document), the ``top``
    most frequent words (``top_words``: token count, document count and share of documents, ties by word),
    ``words_in_no_document``, ``words_in_most_documents`` (in more than half of the documents, most documents first),
    ``labels`` (count per label, when the corpus has labels) and the scalar ``metadata`` with its ``reading`` and
    ``vocabulary_cuts`` settings; with the documents' people (``user_ids``), ``people`` (:func:`people_summary`, with
    the ``aliases`` given).
    Computed from the documents: not differentially private."""
    out = summary_of_parts([corpus], corpus.vocabulary.words, corpus.doc_lengths, top)
    if getattr(corpus, "user_ids", None) is not None:
        from .ledger_documents import documents_of  # the ledger's keys: read when a summary names people

        out["people"] = people_summary(corpus.user_ids, documents_of(corpus), aliases)
    return out


def _id_key(u: str) -> str:
    """What is left of a person id once case, accents, width, spaces and punctuation are taken away: ids that share
    it look alike (``Alice@Example.com`` and ``alice@example.com ``; ``José`` and ``jose``)."""
    s = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", str(u)).casefold())
    return re.sub(r"[\W_]+", "", "".join(c for c in s if not unicodedata.combining(c)))


WHY = {"alike": "the same id but for case, accents, width, spaces or punctuation",
       "documents": "largely the same documents (the ledger's rule: docs/budget.md)",
       "alias": "given as aliases"}
"""Each kind of evidence :func:`people_summary` groups ids by, in words."""


def people_summary(user_ids, documents=None, aliases=()) -> dict:
    """The people of a corpus (``user_ids``, one per document): how many, their documents (min, median, max) and
    ``similar_ids``, groups of ids that may name one person, by evidence (:data:`WHY`): the same id but for case,
    accents, width, spaces and punctuation; largely the same documents (``documents``, the corpus's documents as the
    ledger knows them, :func:`~dptopic.corpus.ledger_documents.documents_of`: the rule the ledger links ids by,
    :func:`~dptopic.dataset_ledger.people.id_links`); or ``aliases`` given (pairs of ids). Two addresses with the same
    name before the ``@`` are no evidence (``mail@a.org`` and ``mail@b.org`` are two people). Each id of a group is
    its own person to every trainer unless the ledger links them; map them to one id before training if they name one
    person (docs/privacy_units.md, "One person, several ids"). At most :data:`MAX_SIMILAR_GROUPS` groups, largest
    first. A statistic of the documents: for a private corpus, outside any guarantee."""
    from ..dataset_ledger.people import UnionFind, components, document_links, id_links  # only with people

    counts: dict = {}
    for u in user_ids:
        counts[u] = counts.get(u, 0) + 1
    per = np.asarray(list(counts.values()), dtype=np.int64)
    ids = list(counts)
    code = {u: i for i, u in enumerate(ids)}
    pairs: list = []            # (i, j, why)
    first: dict = {}
    for i, u in enumerate(ids):
        k = _id_key(u)
        if k in first:
            pairs.append((first[k], i, "alike"))
        first.setdefault(k, i)
    if documents is not None and documents.digests is not None and len(documents.digests) == len(user_ids):
        groups = components(len(user_ids), document_links(documents.digests, documents.bags, documents.read_bags,
                                                          documents.bands, documents.signatures))
        persons = np.fromiter((code[u] for u in user_ids), dtype=np.int64, count=len(user_ids))
        lengths = documents.lengths if documents.lengths is not None else np.full(len(user_ids), 1 << 30)
        pairs += [(int(a), int(b), "documents") for a, b, _, _ in id_links(persons, groups, lengths).tolist()]
    pairs += [(code[a], code[b], "alias") for a, b in aliases if a in code and b in code and a != b]
    uf = UnionFind()
    for a, b, _ in pairs:
        uf.union(a, b)
    reasons: dict = {}
    for a, b, why in pairs:
        reasons.setdefault(uf.find(a), set()).add(why)
    members: dict = {}
    for i in range(len(ids)):
        if i in uf:
            members.setdefault(uf.find(i), []).append(ids[i])
    similar = [{"ids": sorted(m, key=str), "documents": int(sum(counts[u] for u in m)),
                "why": "; ".join(WHY[w] for w in WHY if w in reasons.get(root, ()))}
               for root, m in members.items() if len(m) > 1]
    similar.sort(key=lambda g: (-len(g["ids"]), [str(x) for x in g["ids"]]))
    return {"people": len(counts),
            "documents_per_person": {"min": int(per.min()), "median": float(np.median(per)), "max": int(per.max())}
            if per.size else {"min": 0, "median": 0.0, "max": 0},
            "similar_ids": similar[:MAX_SIMILAR_GROUPS], "similar_groups": len(similar)}


def shard_set_summary(shards, top: int = 20) -> dict:
    """:func:`corpus_summary` of the corpus stored as ``shards`` (a :class:`~dptopic.corpus.shards.ShardSet`), read
    one shard at a time (never the whole corpus in memory)."""
    return summary_of_parts((Corpus.load(p) for p in shards.paths), shards.vocabulary.words, shards.doc_lengths,
                            top)


def summary_of_parts(parts, words, doc_lengths, top: int = 20) -> dict:
    """:func:`corpus_summary` over the parts of one corpus (an iterable of corpora on one vocabulary ``words``, such
    as its shards read one at a time), whose documents have the lengths ``doc_lengths``."""
    V = len(words)
    tf, df = np.zeros(V, dtype=np.int64), np.zeros(V, dtype=np.int64)
    labels: dict = {}
    n_empty, metadata, any_labels = 0, {}, False
    for j, part in enumerate(parts):
        tf += np.bincount(part.word_ids, minlength=V)
        df += np.asarray((part.to_bow() > 0).sum(axis=0)).ravel().astype(np.int64)
        n_empty += part.n_empty_dropped
        if j == 0:
            metadata = part.metadata
        if part.labels is not None:
            any_labels = True
            labs, counts = np.unique(np.asarray(part.labels), return_counts=True)
            for k, n in zip(labs, counts):
                labels[str(k)] = labels.get(str(k), 0) + int(n)
    order = sorted(range(V), key=lambda i: (-tf[i], words[i]))[:top]
    L = np.asarray(doc_lengths)
    n_docs = int(L.size)
    if L.size:
        lengths = {"min": int(L.min()), "median": float(np.median(L)), "mean": float(L.mean()), "max": int(L.max())}
    else:  # a corpus of no documents: every figure is zero rather than a reduction over nothing
        lengths = {"min": 0, "median": 0.0, "mean": 0.0, "max": 0}
    out = {
        "documents": n_docs, "tokens": int(L.sum()), "vocabulary_size": V,
        "empty_documents_dropped": int(n_empty),
        "document_length": lengths,
        "top_words": [{"word": words[i], "tokens": int(tf[i]), "documents": int(df[i]),
                       "document_share": float(df[i] / n_docs) if n_docs else 0.0} for i in order],
        "words_in_no_document": int((tf == 0).sum()),
        # the words in more than half of the documents (often filler), most documents first
        "words_in_most_documents": [words[i] for i in sorted(np.flatnonzero(df * 2 > n_docs).tolist(),
                                                             key=lambda i: (-df[i], words[i]))] if n_docs else [],
    }
    if any_labels:
        out["labels"] = dict(sorted(labels.items()))
    if metadata:
        out["metadata"] = {k: v for k, v in metadata.items() if isinstance(v, (str, int, float, bool))}
        for key in ("reading", "vocabulary_cuts"):       # how the text was read and the words chosen: settings
            if isinstance(metadata.get(key), dict):
                out["metadata"][key] = metadata[key]
    return out


def median_user_length(corpus, n_users: int | None = None) -> float:
    """The median number of tokens per user when ``corpus``'s documents are split, in order, into ``n_users``
    contiguous blocks of about equal numbers of documents (as :class:`~dptopic.models.FedLDA` splits one corpus into
    ``n_clients`` simulated users; ``None``: one user per document; at most one user per document). 0.0 for a corpus
    of no documents. A statistic of the documents: for a private corpus, outside any guarantee."""
    lengths = np.diff(np.asarray(corpus.doc_ptr))
    if lengths.size == 0:
        return 0.0
    if n_users is None:
        return float(np.median(lengths))
    return float(np.median([b.sum() for b in np.array_split(lengths, min(int(n_users), lengths.size))]))
