"""The invariance rule of the per-person budget (docs/budget.md, "What the ledger charges as the same"): a release
whose input the trainer reads exactly as it read an earlier one is charged as a copy of that one, whatever was
rewritten on the way. The adversary is a pipeline that changes spellings, not what the trainer reads: it upper-cases,
adds punctuation, stop words, words outside the vocabulary, zero-width characters and web addresses, reorders the
documents, writes them as a UCI file, and renames, hashes or upper-cases the person ids. Each transformation, alone or
with others, must leave every person's total as a copy of the first release would. A second property: one word edited
in each document, with the ids re-keyed, is still charged to the same people (through the sketch).

The charge is read from the ledger itself (:class:`~dptopic.dataset_ledger.ledger.DatasetLedger`), on the documents
a fit records (:func:`~dptopic.corpus.ledger_documents.documents_of`); no noise is drawn."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dptopic.accounting.events import PureDPEvent
from dptopic.corpus import Corpus
from dptopic.corpus.ledger_documents import documents_of
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.datasets import sotu_texts

N_PEOPLE, PER_PERSON = 8, 5


@pytest.fixture(scope="module")
def paragraphs():
    texts = [t for t in sotu_texts()[0] if 40 <= len(t.split()) <= 120]
    vocab = list(Corpus.from_texts(texts[:3000], max_vocab=2000).vocabulary.words)
    return texts, vocab


def _sha(p: str) -> str:
    return hashlib.sha256(p.encode()).hexdigest()[:16]


TEXT = {
    "upper case": lambda t, r: t.upper(),
    "punctuation": lambda t, r: t.replace(" ", " , ", 3) + " !?",
    "a stop word": lambda t, r: t + " the",
    "a word outside the vocabulary": lambda t, r: t + " zzyzxq",
    "zero-width characters": lambda t, r: t.replace(" ", " \u200b", 5),
    "a web address": lambda t, r: t + " https://example.org/x?y=1",
}
IDS = {
    "renamed one to one": lambda p: "renamed-" + p[::-1],
    "hashed": _sha,
    "upper case": str.upper,
}


def _uci(corpus, tmp) -> Corpus:
    """The corpus written as a UCI bag-of-words file and read back (its persons kept beside it)."""
    X = corpus.to_bow().tocoo()
    docword, vocab = tmp / "docword.txt", tmp / "vocab.txt"
    lines = [str(X.shape[0]), str(X.shape[1]), str(X.nnz)]
    lines += [f"{i + 1} {j + 1} {int(v)}" for i, j, v in zip(X.row, X.col, X.data)]
    docword.write_text("\n".join(lines) + "\n")
    vocab.write_text("\n".join(corpus.vocabulary.words) + "\n")
    return Corpus.from_uci(docword, vocab)


def _people(seed: int, paragraphs):
    texts, vocab = paragraphs
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(texts), N_PEOPLE * PER_PERSON, replace=False)
    docs = [texts[i] for i in pick]
    persons = [f"person{k}@example.org" for k in range(N_PEOPLE) for _ in range(PER_PERSON)]
    return docs, persons, vocab


def _charges(ledger_path, first, second, persons) -> list:
    """Every person's total after ``first`` then ``second`` (two user-level releases at epsilon 1)."""
    led = DatasetLedger(ledger_path)
    for name, docs in (("first", first), ("second", second)):
        led.debit(name, "T", "user", [(PureDPEvent(1.0), 1)], 1e-5, documents=docs)
    return [round(led.person_total(p)["epsilon"], 9) for p in sorted(set(persons))]


def _documents(texts, persons, vocab, tmp=None, order=None):
    corpus = Corpus.from_texts(texts, vocabulary=vocab, user_ids=persons, drop_empty=False)
    if tmp is not None:
        uci = _uci(corpus, tmp)
        docs = documents_of(uci)
        docs.persons = list(persons)
        return docs
    return documents_of(corpus)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), text=st.lists(st.sampled_from(sorted(TEXT)), max_size=3, unique=True),
       ids=st.sampled_from([None, *sorted(IDS)]), reorder=st.booleans(), uci=st.booleans())
def test_a_release_the_trainer_reads_as_an_earlier_one_is_charged_as_its_copy(paragraphs, tmp_path_factory, seed,
                                                                               text, ids, reorder, uci):
    docs, persons, vocab = _people(seed, paragraphs)
    rng = np.random.default_rng(seed + 1)
    tmp = tmp_path_factory.mktemp("inv")
    new_docs = list(docs)
    for name in text:
        new_docs = [TEXT[name](t, rng) for t in new_docs]
    new_persons = [IDS[ids](p) for p in persons] if ids else list(persons)
    order = rng.permutation(len(docs)) if reorder else np.arange(len(docs))
    new_docs, new_persons = [new_docs[i] for i in order], [new_persons[i] for i in order]
    original = _documents(docs, persons, vocab)
    copy = _charges(tmp / "copy.sqlite", original, _documents(docs, persons, vocab), persons)
    rewritten = _charges(tmp / "rewritten.sqlite", _documents(docs, persons, vocab),
                         _documents(new_docs, new_persons, vocab, tmp if uci else None), persons)
    assert copy == pytest.approx([2.0] * N_PEOPLE, abs=1e-3)
    assert rewritten == copy, (text, ids, reorder, uci)
    led = DatasetLedger(tmp / "rewritten.sqlite")
    assert led.person_summary()["persons"] == N_PEOPLE


def _edit_one_word(text: str, rng) -> str:
    words = text.split()
    i = int(rng.integers(len(words)))
    words[i] = "qxzzyword"
    return " ".join(words)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000))
def test_one_word_edited_in_each_document_with_the_ids_rekeyed_is_charged_to_the_same_people(paragraphs,
                                                                                             tmp_path_factory, seed):
    docs, persons, vocab = _people(seed, paragraphs)
    rng = np.random.default_rng(seed + 2)
    tmp = tmp_path_factory.mktemp("edit")
    edited = [_edit_one_word(t, rng) for t in docs]
    # every word kept (no vocabulary cut hides the edit): the sketch, not a bag digest, must find each document
    first = documents_of(Corpus.from_texts(docs, max_vocab=None, user_ids=persons))
    second = documents_of(Corpus.from_texts(edited, max_vocab=None, user_ids=[_sha(p) for p in persons]))
    assert not np.intersect1d(first.bags, second.bags).size
    charged = _charges(tmp / "l.sqlite", first, second, persons)
    assert charged == pytest.approx([2.0] * N_PEOPLE, abs=1e-3)


def test_the_checks_fail_on_a_ledger_that_keys_documents_by_their_text(paragraphs, tmp_path, monkeypatch):
    """The property above fails when the ledger matches by text alone (format 2's rule): upper-cased text under
    hashed ids is then charged to new people."""
    from dptopic.dataset_ledger import ledger as ledger_module

    docs, persons, vocab = _people(1, paragraphs)
    monkeypatch.setattr(DatasetLedger, "version", 2, raising=False)
    monkeypatch.setattr(ledger_module.DatasetLedger, "_person_roots", lambda self, tx: {})
    real_init = DatasetLedger.__init__

    def as_format_2(self, *a, **k):
        real_init(self, *a, **k)
        self.version = 2
    monkeypatch.setattr(DatasetLedger, "__init__", as_format_2)
    charged = _charges(tmp_path / "l.sqlite", _documents(docs, persons, vocab),
                       _documents([t.upper() for t in docs], [_sha(p) for p in persons], vocab), persons)
    assert charged == pytest.approx([1.0] * N_PEOPLE, abs=1e-3)
