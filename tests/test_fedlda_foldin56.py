"""FedLDA's fold-in reads the report words only: the other words have the same weight in every topic, so they say
nothing of a document's topics and only add noise to the sampler (docs/fedlda.md)."""
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.corpus import Corpus
from dptopic.corpus.synthetic import lda_corpus
from dptopic.evaluation import infer_theta
from dptopic.models import FedLDA

pytestmark = pytest.mark.filterwarnings("ignore:.*trained a private model in this process")


def _frequency_ordered(corpus):
    tf = np.bincount(corpus.word_ids, minlength=corpus.vocab_size)
    return corpus.restrict([corpus.vocabulary.words[i] for i in np.argsort(-tf, kind="stable")])


@pytest.fixture(scope="module")
def fitted():
    c = _frequency_ordered(lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=20, seed=3).corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=2, pad_length=16, n_clients=8, report_words=12, seed=0,
                   verbose=0).fit(c)
    return m, c


def test_words_outside_the_reports_do_not_move_a_documents_proportions(fitted):
    m, c = fitted
    words = list(c.vocabulary.words)
    head, tail = words[:12], words[12:]
    doc = [head[0], head[1], head[0], head[3], head[5]]
    with_tail = doc + tail[:6] * 4                      # 24 tokens the reports never ranged over
    a = m.transform(Corpus.from_tokens([doc], vocabulary=c.vocabulary), seed=1)
    b = m.transform(Corpus.from_tokens([with_tail], vocabulary=c.vocabulary), seed=1)
    assert np.array_equal(a, b)
    # what it computes: fold-in over the first report_words_ words, with those columns of the topics
    phi = m.components_[:, :12] / m.components_[:, :12].sum(axis=1, keepdims=True)
    ids = np.array([head.index(w) for w in doc], dtype=np.int32)
    ref = infer_theta(phi, ids, np.array([0, len(ids)], dtype=np.int64), m.alpha, 100, 50, 1, 1)
    assert np.array_equal(a, ref)


def test_a_document_of_other_words_only_gets_the_prior(fitted):
    m, c = fitted
    tail = list(c.vocabulary.words)[12:]
    theta = m.transform(Corpus.from_tokens([tail[:10] * 3], vocabulary=c.vocabulary), seed=0)
    assert np.allclose(theta, 1.0 / m.n_topics)


def test_every_word_reported_is_the_usual_fold_in(fitted):
    _, c = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=2, pad_length=16, n_clients=8, report_words="all", seed=0,
                      verbose=0).fit(c)
    got = full.transform(c, seed=2)
    ref = infer_theta(full.components_, c.word_ids, c.doc_ptr, full.alpha, 100, 50, 2, 1)
    assert np.array_equal(got, ref)


def test_a_loaded_model_folds_in_as_the_fitted_one(fitted, tmp_path):
    m, c = fitted
    m.save(tmp_path / "m")
    back = dptopic.load(tmp_path / "m")
    assert np.array_equal(back.transform(c, seed=3), m.transform(c, seed=3))
