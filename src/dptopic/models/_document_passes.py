"""Where a document-level trainer's documents come from: in memory, corpus shards on disk, or mini-batches.

:func:`document_source` turns what ``fit`` was given into a function returning one pass over the documents as
bag-of-words blocks ``(ptr, ids, counts)`` (each document's distinct words and their counts), so a trainer can
read the corpus as many times as it needs while holding one block at a time. Shared by
:class:`~dptopic.models.DocDPEM` and :class:`~dptopic.models.DocDPCooccurrence`.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from ..backends import ShardSet, training_source
from ..backends.dask import load_shard, map_shards, n_workers
from ..corpus import Corpus, Vocabulary
from ..corpus.corpus import user_ids_of
from ..errors import DPTopicError
from ..kernels import make_shards
from ..kernels.docdp import tokens_to_bow
from .base import vocabulary_given


def document_source(model, X, vocabulary, user_ids=None):
    """``(batches, vocabulary, corpus or None)``: ``batches()`` yields ``(ptr, ids, counts)`` blocks for one pass.
    ``user_ids`` (one per document of ``X``): attached to the corpus before any document is dropped, so that they
    stay with their documents (in memory only)."""
    vocab = None if vocabulary is None else (vocabulary if isinstance(vocabulary, Vocabulary)
                                             else Vocabulary(vocabulary))
    if hasattr(X, "__next__"):
        raise DPTopicError(f"{type(model).__name__} reads the documents more than once, and an iterator can be read only once:"
                           " pass a function returning a fresh iterator of mini-batches, a list, or a shard folder.")
    streamed = callable(X) and not isinstance(X, (Corpus, ShardSet)) and not sp.issparse(X)
    if (streamed or isinstance(X, (list, tuple)) and X and all(
            isinstance(b, Corpus) or sp.issparse(b) or (isinstance(b, np.ndarray) and b.ndim == 2) for b in X)) \
            and getattr(model, "unit", "document") == "user":
        raise DPTopicError(f"{type(model).__name__}(unit='user') groups each person's documents in memory: give one"
                           " Corpus or count matrix (with user_ids=), not mini-batches.")
    if streamed:
        return _batch_source(model, X, vocab)
    if isinstance(X, (list, tuple)) and X and all(isinstance(b, Corpus) or sp.issparse(b)
                                                  or (isinstance(b, np.ndarray) and b.ndim == 2) for b in X):
        items = list(X)
        return _batch_source(model, lambda: iter(items), vocab)
    X, names = model._as_input(X)
    src = training_source(X, vocabulary=vocab if vocab is not None else names)
    model._vocabulary_supplied = (vocab is not None or (names is not None and model._input_names_public)
                                  or (vocab is None and names is None and vocabulary_given(src)))
    if isinstance(src, ShardSet) and getattr(model, "unit", "document") == "user":
        raise DPTopicError(f"{type(model).__name__}(unit='user') groups each person's documents in memory: give the"
                           " corpus file the shards were prepared from, with its user ids (user_field=).")
    if user_ids is not None:
        src = _with_user_ids(src, user_ids)
    if isinstance(src, ShardSet):
        vocab = vocab if vocab is not None else src.vocabulary
        return DocumentPasses([str(p) for p in src.paths], vocab), vocab, None
    corpus = src.require_nonempty()
    if vocab is not None and corpus.vocabulary != vocab:
        corpus = corpus.restrict(vocab).require_nonempty()
    vocab = corpus.vocabulary
    # a user-level fit groups each person's documents from one bag of words (person_bound.people_of)
    counted = CountedCorpus(corpus, whole=getattr(model, "unit", "document") == "user")
    return DocumentPasses([counted], vocab), vocab, corpus


COUNT_BLOCK_DOCS = 1 << 17
"""A corpus in memory of more documents than this is counted a block of this many documents at a time, again at each
pass (:class:`CountedCorpus`): about 90 MB of counts a block at 60 words a document."""


class CountedCorpus:
    """A corpus in memory, counted when a pass first reads it. A fit reserves its releases on the ledger before its
    first pass, so the ledger's record of the documents (their keys) and these counts are not held at once.

    A corpus of at most :data:`COUNT_BLOCK_DOCS` documents (or ``whole``) is one block, its bag of words made once
    and kept for the next passes. A larger one is counted a block of documents at a time, again at each pass, and
    no block is kept: its counts (12 bytes a distinct word of a document, three times its tokens: 410 MB at 10^6
    documents) are never held whole, and a split's part is gathered a block at a time
    (:meth:`~dptopic.corpus.Corpus.token_blocks`). The blocks hold the same counts; a pass adds their statistics in
    block order, so a sum's last bits may differ from one block's (docs/research/pipeline.md). On a Dask cluster
    the corpus is counted whole, when :meth:`DocumentPasses.on_cluster` cuts it into the workers' blocks."""

    def __init__(self, corpus: Corpus, whole: bool = False):
        self.corpus, self._bow = corpus, None
        self.blocked = not whole and corpus.n_docs > COUNT_BLOCK_DOCS

    def bow(self):
        """``(ptr, ids, counts)`` of the whole corpus (:func:`~dptopic.kernels.docdp.tokens_to_bow`), made once."""
        if self._bow is None:
            c = self.corpus
            self._bow = tokens_to_bow(c.doc_ptr, c.word_ids, c.vocab_size)
        return self._bow

    def bows(self):
        """One pass's bag-of-words blocks: the whole corpus's (made once), or each block's, counted now."""
        if not self.blocked:
            yield self.bow()
            return
        V = self.corpus.vocab_size
        for ptr, ids in self.corpus.token_blocks(COUNT_BLOCK_DOCS):
            yield tokens_to_bow(ptr, ids, V)


class DocumentPasses:
    """The blocks of a corpus (shard paths, or bag-of-words blocks in memory), read again for every pass.

    ``passes()`` yields one pass's ``(ptr, ids, counts)`` blocks in order. :meth:`sum` adds a per-block statistic
    ``fn(bow, *args)`` over one pass in block order, here or, after :meth:`on_cluster`, as one Dask task per block
    (:func:`~dptopic.backends.dask.map_shards`): each task reads its block and computes its partial sum with the same
    kernel, and the driver adds the partials in block order, so the sum equals this machine's up to float rounding.
    Nothing random happens in a pass: the caller draws the noise once, after :meth:`sum` returns."""

    def __init__(self, blocks: list, vocab: Vocabulary, factory=None):
        self.blocks, self.vocab = blocks, vocab
        #: mini-batches: a function returning one pass's blocks (read on this machine only)
        self.factory = factory
        self.client = None
        #: documents and (document, word) entries summed by the last pass
        self.n_docs = self.n_entries = 0

    def __call__(self):
        if self.factory is not None:
            return self.factory()
        return (bow for b in self.blocks
                for bow in (b.bows() if isinstance(b, CountedCorpus) else (_block_bow(b, self.vocab),)))

    def on_cluster(self, client, min_blocks: int | None = None) -> "DocumentPasses":
        """Sum on the Dask cluster of ``client`` from now on. A corpus in memory is cut into ``min_blocks`` blocks of
        documents (one per worker by default), sent with the tasks; shards are read by the workers themselves."""
        self.client = client
        if len(self.blocks) == 1 and not isinstance(self.blocks[0], str):
            self.blocks = split_bow(_block_bow(self.blocks[0], self.vocab), min_blocks or max(n_workers(client), 1))
        return self

    def sum(self, fn, *args, **kwargs):
        """``sum(fn(bow, *args, **kwargs))`` over the blocks of one pass, added in block order."""
        if self.client is None:
            parts = (_block_partial(bow, self.vocab, fn, args, kwargs) for bow in self())
        else:
            parts = map_shards(self.client, _block_partial, self.blocks, self.vocab, fn, args, kwargs,
                               on_worker=True)
        total, self.n_docs, self.n_entries = 0.0, 0, 0
        for part, n_docs, n_entries in parts:      # one partial held at a time
            total = total + part
            self.n_docs += n_docs
            self.n_entries += n_entries
        return total


def split_bow(bow, n: int) -> list:
    """``bow`` cut into at most ``n`` blocks of whole documents, each with its own ``ptr`` from 0."""
    ptr, ids, cts = bow
    return [(ptr[s.doc_start:s.doc_stop + 1] - ptr[s.doc_start], ids[ptr[s.doc_start]:ptr[s.doc_stop]],
             cts[ptr[s.doc_start]:ptr[s.doc_stop]]) for s in make_shards(ptr, n) if s.doc_stop > s.doc_start]


def _block_bow(block, vocab: Vocabulary, on_worker: bool = False):
    """A block's bag of words: a shard path is read (and mapped onto ``vocab``), a corpus in memory counted once
    (:class:`CountedCorpus`), a bag of words taken as it is."""
    if isinstance(block, CountedCorpus):
        return block.bow()
    if not isinstance(block, str):
        return block
    if on_worker:
        return corpus_bow(load_shard(block), vocab)
    return corpus_bow(Corpus.load(block), vocab)


def _block_partial(block, vocab, fn, args, kwargs, on_worker: bool = False):
    """``(fn(bow, *args, **kwargs), documents, entries)`` for one block (``on_worker``: in a Dask task)."""
    bow = _block_bow(block, vocab, on_worker)
    return fn(bow, *args, **kwargs), len(bow[0]) - 1, len(bow[2])


def _with_user_ids(corpus: Corpus, user_ids) -> Corpus:
    """A copy of ``corpus`` carrying ``user_ids`` (one per document given to ``fit``); refused in one line when texts
    were dropped on reading (their ids could no longer be matched)."""
    n = len(user_ids) if hasattr(user_ids, "__len__") and not isinstance(user_ids, (str, bytes)) else None
    if corpus.n_empty_dropped and n == corpus.n_docs + corpus.n_empty_dropped:
        raise DPTopicError(f"{corpus.n_empty_dropped} of the texts (an exact count of the private data: outside the"
                           " guarantee, shown here, not saved) hold no word and were dropped, so user_ids no longer"
                           " match the documents: build the corpus with Corpus.from_texts(texts, user_ids=...) and fit"
                           " on it.")
    user_ids = user_ids_of(corpus, user_ids)        # the corpus's own ids and different ones given: refused
    return Corpus(corpus.doc_ptr, corpus.word_ids, corpus.vocabulary, labels=corpus.labels, doc_ids=corpus.doc_ids,
                  n_empty_dropped=corpus.n_empty_dropped, metadata=corpus.metadata, user_ids=user_ids)


def _batch_source(model, factory, vocab):
    """Mini-batches from ``factory()`` (called once per iteration). Matrices take ``vocab`` (or their columns'
    names, or ``w0, w1, ...``); Corpora are mapped onto it; every batch must agree with the first."""
    state = {"vocab": vocab}
    model._vocabulary_supplied = vocab is not None

    def one(b):
        if isinstance(b, Corpus):
            c = b
        elif sp.issparse(b) or isinstance(b, np.ndarray):
            b, names = model._as_input(b)
            words = state["vocab"] or (Vocabulary(names) if names is not None else None)
            if words is not None and b.shape[1] != len(words):
                raise DPTopicError(f"a mini-batch has {b.shape[1]} columns but the vocabulary has {len(words)}"
                                   " words: give every batch the same columns.")
            c = Corpus.from_bow(b, vocabulary=words)
        else:
            raise DPTopicError(f"cannot use a {type(b).__name__} as a mini-batch: give count matrices or"
                               " dptopic Corpora.")
        if state["vocab"] is None:
            state["vocab"] = c.vocabulary
        return corpus_bow(c, state["vocab"])

    def batches():
        it = factory()
        try:
            it = iter(it)
        except TypeError:
            raise DPTopicError("the mini-batch function must return an iterable of count matrices or Corpora.") from None
        return (one(b) for b in it)

    # the first batch fixes the vocabulary (and checks the input) before anything is released
    first = next(iter(batches()), None)
    if first is None:
        raise DPTopicError("no mini-batches given: the source yielded nothing.")
    return DocumentPasses([], state["vocab"], factory=batches), state["vocab"], None


def corpus_bow(corpus: Corpus, vocab: Vocabulary):
    """One block's bag of words in ``vocab`` (words outside it dropped)."""
    if corpus.vocabulary != vocab:
        corpus = corpus.restrict(vocab, drop_empty=False)
    return tokens_to_bow(corpus.doc_ptr, corpus.word_ids, len(vocab))


def read_ahead(iterator, pool: ThreadPoolExecutor):
    """Yield the items of ``iterator``, reading the next one on ``pool`` while the caller works on the current one."""
    iterator = iter(iterator)
    fut = pool.submit(next, iterator, None)
    while True:
        item = fut.result()
        if item is None:
            return
        fut = pool.submit(next, iterator, None)
        yield item
