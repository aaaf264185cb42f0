"""``dptopic.training.train_batch``: one mini-batch of randomized reports through the steps ``dptopic.train`` runs on a
report file (checked, ``partial_fit``, the contributors' guarantee, the card, the save), so that a model trained batch
by batch states what ``dptopic.train`` states for the same trainer and reports."""
import json
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.contributor.document_randomizer import DocumentRandomizer
from dptopic.contributor.randomizer import Randomizer
from dptopic.corpus import Corpus, lda_corpus
from dptopic.errors import DPTopicError
from dptopic.models import LDA, OLPLDA, LocalDocumentLDA
from dptopic.training import train_batch

WORDS = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(60)]    # no stop word among them


def _docs(n_docs, seed=1):
    c = lda_corpus(n_docs=n_docs, vocab_size=len(WORDS), n_topics=3, doc_length=20, seed=seed).corpus
    return [[WORDS[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]] for d in range(c.n_docs)]


@pytest.fixture(scope="module")
def word_batches():
    rz, docs = Randomizer(WORDS, epsilon_word=2.0, secure=True), _docs(80)
    return [rz.randomize(docs[:40]), rz.randomize(docs[40:])]


@pytest.fixture(scope="module")
def document_batches():
    rz, docs = DocumentRandomizer(WORDS, 6.0), _docs(80)
    return [rz.randomize(docs[:40]), rz.randomize(docs[40:])]


@pytest.fixture(scope="module")
def word_reports(word_batches):
    return type(word_batches[0]).concatenate(word_batches)


@pytest.fixture(scope="module")
def document_reports(document_batches):
    return type(document_batches[0]).concatenate(document_batches)


def _olp(**kw):
    return OLPLDA("none", n_topics=3, n_iter=3, batch_size=40, verbose=0, **kw)


def _saved_card(path):
    return json.loads((path / "model.json").read_text())["privacy_card"]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", ["olp", "ldp-doc"])
def test_batch_by_batch_gives_the_card_dptopic_train_writes_for_the_same_reports(kind, word_batches, document_batches,
                                                                                 tmp_path):
    """Two batches through train_batch (as dptopic serve trains them), stated for contributors of up to 2 reports,
    and one dptopic.train on the same reports with the same trainer and budget: the same card, on the result and in
    the saved model.json."""
    batches = word_batches if kind == "olp" else document_batches
    reports = type(batches[0]).concatenate(batches)
    params = dict(prior_corpus="none", n_topics=3, n_iter=3, batch_size=40, verbose=0) if kind == "olp" else \
        dict(n_topics=3)
    whole = dptopic.train(reports, algorithm=kind, reports_per_contributor=2, out=str(tmp_path / "whole"), **params)
    model = _olp() if kind == "olp" else LocalDocumentLDA(n_topics=3)
    for i, batch in enumerate(batches):
        last = train_batch(model, batch, vocabulary=WORDS, reports_per_contributor=2,
                           out=str(tmp_path / f"batch{i}"))
    assert last.model is model and last.algorithm == kind
    assert last.card == whole.card and last.card["guarantee"] == "full"
    saved = _saved_card(tmp_path / "batch1")
    assert saved == _saved_card(tmp_path / "whole") and saved["ledger_check"]["status"] == "verified"
    assert {k: v for k, v in saved.items() if k != "ledger_check"} == whole.card   # save() adds its recomputation
    assert model.privacy_["reports_per_contributor"] == whole.model.privacy_["reports_per_contributor"] == 2


def test_the_steps_run_in_dptopic_train_s_order_for_reports(document_reports, tmp_path):
    seen = []
    train_batch(LocalDocumentLDA(n_topics=3), document_reports, out=str(tmp_path / "m"),
                callback=lambda step, res: seen.append(step))
    assert seen == ["checked", "fit", "card", "save"]
    seen.clear()
    dptopic.train(document_reports, algorithm="ldp-doc", n_topics=3, callback=lambda step, res: seen.append(step))
    assert seen == ["checked", "fit", "card", "save"]


def test_a_refused_batch_leaves_the_model_as_it_was_and_writes_nothing(word_batches, tmp_path):
    model = _olp()
    train_batch(model, word_batches[0], vocabulary=WORDS)
    before = (model.components_.copy(), model.n_docs_seen_, dict(model.privacy_))
    other_f = Randomizer(WORDS, epsilon_word=4.0, secure=True).randomize(_docs(40, seed=2))
    with pytest.raises(DPTopicError, match="f="):
        train_batch(model, other_f, vocabulary=WORDS, reports_per_contributor=5, out=str(tmp_path / "m"))
    assert np.array_equal(model.components_, before[0]) and model.n_docs_seen_ == before[1]
    assert model.privacy_ == before[2]      # the contributors' guarantee was not restated for the refused batch
    assert not (tmp_path / "m").exists()


def test_inputs_are_checked_before_the_model_reads_a_report(word_reports, tmp_path):
    """A trainer of corpora, an output folder that holds files, a count of reports that is none, reports without
    their vocabulary: refused before partial_fit runs."""
    with pytest.raises(DPTopicError, match="LDA trains on a corpus, not on randomized reports"):
        train_batch(LDA(n_topics=3), word_reports)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("x")
    model = _olp()
    with pytest.raises(DPTopicError, match="out"):
        train_batch(model, word_reports, vocabulary=WORDS, out=str(tmp_path / "full"))
    for bad in (0, 2.5, True):
        with pytest.raises(DPTopicError, match=f"invalid reports_per_contributor={bad}"):
            train_batch(model, word_reports, vocabulary=WORDS, reports_per_contributor=bad)
    bare = Randomizer(WORDS, epsilon_word=2.0, secure=True).randomize(_docs(5))
    bare = type(bare).from_bytes(bare.to_bytes(include_vocabulary=False))
    with pytest.raises(DPTopicError, match="does not embed its vocabulary") as e:
        train_batch(model, bare)
    assert "give vocabulary= (the public word list)" in str(e.value) and "--" not in str(e.value)   # no flag
    assert not hasattr(model, "components_")


def test_quiet_keeps_the_prior_overlap_finding_as_a_note_and_raises_no_warning():
    """OLP-LDA's prior-overlap finding: a warning, or with quiet=True (a server) one line of result.notes."""
    words = [f"q{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(120)]
    c = lda_corpus(n_docs=80, vocab_size=120, n_topics=4, doc_length=30, alpha=0.2, beta=0.05, seed=5).corpus
    docs = [[words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]] for d in range(c.n_docs)]
    prior = Corpus.from_texts([" ".join(d) for d in docs], vocabulary=words, max_vocab=None)
    # the prior's own documents, randomized: they lie close to the prior's rows
    members = Randomizer(words, epsilon_word=3.0, secure=True).randomize(docs)

    def model():
        return OLPLDA(prior, n_topics=3, n_iter=2, prior_iter=2, batch_size=80, epsilon_word=3.0, verbose=0)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = train_batch(model(), members, vocabulary=words, quiet=True)
    assert len(quiet.notes) == 1 and "the prior corpus seems to overlap the stream" in quiet.notes[0]
    assert "\n" not in quiet.notes[0]
    with pytest.warns(UserWarning, match="seems to overlap the stream"):
        loud = train_batch(model(), members, vocabulary=words)
    assert loud.notes == []
