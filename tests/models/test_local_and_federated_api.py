"""The local and federated trainers through the Python API: FedLDA states
a vocabulary read from the users' documents as partial, its deployed clients draw their reports from the OS CSPRNG,
a tail-rule report that follows no (epsilon, delta) says "none" everywhere, local reports name the contributor when
reports compose, and the input mistakes a user makes get one line."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dptopic.accounting.card import privacy_card
from dptopic.accounting.fedlda import subset_inclusion
from dptopic.corpus import Corpus
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DataVocabularyWarning, DPTopicError
from dptopic.mechanisms.rrp import subset_report
from dptopic.models import FedLDA, LocalDocumentLDA, OnlineLDA

QUIET = dict(rounds=1, pad_length=16, verbose=0)


@pytest.fixture(scope="module")
def planted():
    return lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=12, seed=0).corpus


# --------------------------------------------------------------------------------------------- secure coins
def test_secure_subset_reports_keep_the_true_word_at_the_stated_rate():
    V, s, eps, n = 50, 3, 2.0, 20_000
    words = np.r_[np.full(n, 7), np.full(n // 4, -1)].astype(np.int32)
    sets, event = subset_report(words, V, eps, None, s, secure=True)
    assert event.epsilon == eps
    assert np.all(np.diff(sets, axis=1) > 0) and sets.min() >= 0 and sets.max() < V   # sorted, distinct, in range
    a, b = subset_inclusion(eps, V, s)
    kept = np.mean((sets[:n] == 7).any(axis=1))
    assert abs(kept - a) < 4 * math.sqrt(a * (1 - a) / n)           # A within 4 standard errors
    other = np.mean((sets[:n] == 8).any(axis=1))
    assert abs(other - b) < 4 * math.sqrt(b * (1 - b) / n)          # and any other word at B
    pad = np.mean((sets[n:] == 7).any(axis=1))                      # padding: a uniform set, s/V for every word
    assert abs(pad - s / V) < 4 * math.sqrt(s / V * (1 - s / V) / (n // 4))
    with pytest.raises(DPTopicError, match="pass no Generator"):
        subset_report(words, V, eps, np.random.default_rng(0), s, secure=True)


def test_fedlda_secure_mode_refuses_a_seed_and_the_partial_rules_and_says_what_drew_the_reports(planted):
    with pytest.raises(DPTopicError, match="refuses a seed"):
        FedLDA(n_topics=2, secure=True, seed=0, **QUIET).fit(planted)
    with pytest.raises(DPTopicError, match="no secure sampler"):
        FedLDA(n_topics=2, secure=True, exclusion="floor", **QUIET).fit(planted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, secure=True, n_clients=4, **QUIET).fit(planted, vocabulary=planted.vocabulary.words)
        plain = FedLDA(n_topics=2, n_clients=4, **QUIET).fit(planted, vocabulary=planted.vocabulary.words)
    assert m.privacy_["secure_noise"] is True and m.privacy_["randomness"].startswith("secure mode")
    assert plain.privacy_["secure_noise"] is False and plain.privacy_["randomness"].startswith("SIMULATION")
    assert m.privacy_["epsilon_basic"] == plain.privacy_["epsilon_basic"]          # the same guarantee either way


def test_a_deployed_fedlda_client_draws_its_reports_from_the_os(planted):
    from dptopic.contributor.fedlda import fed_client, fed_privacy
    from dptopic.protocol.fedlda import RRPConfig

    rrp = RRPConfig(2, 3.0, 0.1, 1.0, 16, 1.0)
    assert fed_client("device-1", planted.subset(range(5)), rrp).secure is True
    assert fed_privacy(rrp, 2, vocab_size=30)["randomness"].startswith("secure mode")


# ------------------------------------------------------------------------------------------- the vocabulary
def test_fedlda_states_a_vocabulary_read_from_the_users_documents_as_partial(planted):
    texts = ["apple banana cherry " * 3, "banana cherry damson " * 3, "cherry damson elder " * 3] * 6
    with pytest.warns(DataVocabularyWarning):
        m = FedLDA(n_topics=2, n_clients=6, **QUIET).fit(texts)
    assert m.privacy_["vocabulary_source"] == "data" and m.privacy_["guarantee"] == "partial"
    assert privacy_card(m.privacy_, "FedLDA")["guarantee"] == "partial"
    words = ["apple", "banana", "cherry", "damson", "elder"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataVocabularyWarning)
        given = FedLDA(n_topics=2, n_clients=6, **QUIET).fit(texts, vocabulary=words)
        users = [Corpus.from_texts(texts[i::3], vocabulary=words) for i in range(3)]   # each user on the public list
        per_user = FedLDA(n_topics=2, **QUIET).fit(users)
    assert given.privacy_["vocabulary_source"] == "supplied" and given.privacy_["guarantee"] == "full"
    assert per_user.privacy_["guarantee"] == "full"


def test_fedlda_refuses_lists_of_texts_read_as_tokens_and_a_client_count_it_cannot_apply(planted):
    texts = ["the budget of the nation", "a message to congress"] * 5
    with pytest.raises(DPTopicError, match="a token holds spaces .* list of corpora"):
        FedLDA(n_topics=2, **QUIET).fit([texts[:5], texts[5:]])
    users = [planted.subset(range(0, 20)), planted.subset(range(20, 40))]
    with pytest.raises(DPTopicError, match="n_clients=5 but 2 user corpora"):
        FedLDA(n_topics=2, n_clients=5, **QUIET).fit(users)
    with pytest.raises(DPTopicError, match="vocabulary= applies to one corpus"):
        FedLDA(n_topics=2, **QUIET).fit(users, vocabulary=planted.vocabulary.words)


def test_fedlda_fit_transform_warns_that_it_folds_in_the_private_documents(planted):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        theta = FedLDA(n_topics=2, n_clients=4, **QUIET).fit_transform(planted)
    assert theta.shape == (planted.n_docs, 2)
    assert any("trained a private model in this process" in str(w.message) for w in caught)


# ------------------------------------------------------------------------------------------------- reports
def test_a_tail_rule_report_without_an_epsilon_says_none_as_its_card_does(planted):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, n_clients=4, exclusion="tail", epsilon_per_entry=0.2, **QUIET).fit(planted)
    assert m.privacy_["epsilon"] is None
    assert m.privacy_["guarantee"] == "none" == privacy_card(m.privacy_, "FedLDA")["guarantee"]


def test_local_reports_name_the_contributor_when_reports_compose():
    from dptopic.contributor.document_randomizer import DocumentRandomizer

    s = lda_corpus(n_docs=400, vocab_size=30, n_topics=2, doc_length=12, seed=1).corpus
    rs = DocumentRandomizer.for_simulation(s.vocabulary, 8.0, seed=0).randomize(s)
    one = LocalDocumentLDA(n_topics=2).fit(rs).privacy_
    ten = LocalDocumentLDA(n_topics=2, reports_per_contributor=10).fit(rs).privacy_
    assert one["unit"] == "document (local DP)" and one["epsilon"] == pytest.approx(8.0, rel=1e-4)
    assert ten["unit"] == "contributor (local DP, 10 documents)" and ten["epsilon"] == pytest.approx(80.0, rel=1e-4)
    assert ten["randomness"] and "device" in ten["randomness"] and "cannot check" in ten["randomness"] and ten["noise"]
    note = privacy_card(ten, "LocalDocumentLDA")["strength_note"]
    assert "per contributor (local DP, 10 documents)" in note and "about one contributor" in note


def test_report_sets_of_two_kinds_do_not_concatenate():
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.protocol.document_reports import DocumentReportSet
    from dptopic.protocol.reports import ReportSet

    words = [f"w{i}" for i in range(12)]
    docs = [["w1", "w2", "w3"], ["w4", "w5"]]
    word = Randomizer.for_simulation(words, epsilon_word=2.0, seed=0).randomize(docs)
    doc = DocumentRandomizer.for_simulation(words, 8.0, seed=0).randomize(docs)
    with pytest.raises(DPTopicError, match="cannot concatenate a DocumentReportSet with word-level"):
        ReportSet.concatenate([word, doc])
    with pytest.raises(DPTopicError, match="cannot concatenate a ReportSet with document-level"):
        DocumentReportSet.concatenate([doc, word])
    with pytest.raises(DPTopicError, match="not word-level reports"):
        LocalDocumentLDA(n_topics=2).fit(word)
    m = LocalDocumentLDA(n_topics=2).fit(doc)
    with pytest.raises(DPTopicError, match="eps_doc=4, the model's at 8"):
        m.partial_fit(DocumentRandomizer.for_simulation(words, 4.0, seed=0).randomize(docs))


# ---------------------------------------------------------------------------------------------- OnlineLDA
def test_online_lda_takes_what_the_other_trainers_take(planted):
    texts = ["space nasa orbit launch", "tax budget congress spending", "orbit moon nasa", "budget tax deficit"] * 10
    m = OnlineLDA(n_topics=2, n_iter=5, batch_size=10, seed=0, verbose=0).fit(texts)
    assert m.n_batches_ == 4 and "nasa" in m.vocabulary_.words
    before = m.components_.copy()
    m.partial_fit(["nasa launch orbit", "tax budget"])                       # texts, read into its vocabulary
    X = np.ones((3, len(m.vocabulary_)), dtype=np.int64)
    m.partial_fit(X)                                                         # a count matrix with its columns
    assert m.n_batches_ == 6
    after = m.components_.copy()
    with pytest.raises(DPTopicError, match="columns"):
        m.partial_fit(np.ones((3, len(m.vocabulary_) + 1), dtype=np.int64))
    assert np.array_equal(m.components_, after) and not np.array_equal(before, after)


def test_experiment_targets_are_in_points_by_epsilon():
    from dptopic.experiments.fedlda import auc_losses, loss_target

    assert (loss_target(7.5), loss_target(5.0), loss_target(3.0)) == (3.0, 5.0, None)
    table = [{"task": "t", "epsilon_per_word": None, "auc": 0.9, "exclusion": "-"},
             {"task": "t", "epsilon_per_word": 5.0, "auc": 0.86, "exclusion": "none"}]
    out = auc_losses(table)["t none eps=5"]
    assert out["points"] == pytest.approx(4.0) and out["target_points"] == 5.0


# ------------------------------------------------------------------------------------- a refit, user corpora, phrases
def test_fedlda_maps_a_corpus_onto_a_given_vocabulary_before_calling_it_supplied(planted):
    words = planted.vocabulary.words[:8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, n_clients=4, **QUIET).fit(planted, vocabulary=words)
    assert m.vocabulary_.words == list(words) and m.components_.shape == (2, 8)     # trained on the list given
    assert m.privacy_["vocabulary_source"] == "supplied"


def test_a_refused_refit_leaves_a_fitted_fedlda_as_it_was(planted, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, n_clients=4, report_words=10, **QUIET).fit(planted, vocabulary=planted.vocabulary.words)
    state = (list(m.vocabulary_.words), m.components_.copy(), dict(m.privacy_))
    alpha = planted.restrict(sorted(planted.vocabulary.words)[:25])
    with pytest.raises(DPTopicError, match="alphabetical order"):
        m.fit(alpha)
    assert (list(m.vocabulary_.words), dict(m.privacy_)) == (state[0], state[2])
    assert np.array_equal(m.components_, state[1])
    m.save(tmp_path / "m")
    from dptopic import load
    assert load(tmp_path / "m").components_.shape == state[1].shape


def test_fedlda_fit_transform_of_user_corpora_gives_every_users_rows(planted):
    users = [planted.subset(range(0, 15)), planted.subset(range(15, 40))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theta = FedLDA(n_topics=2, **QUIET).fit_transform(users)
    assert theta.shape == (40, 2) and np.allclose(theta.sum(axis=1), 1)


def test_a_phrase_is_a_token_and_a_sentence_is_not():
    docs = [["new york", "budget", "tax"], ["new york", "war", "peace"]] * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        FedLDA(n_topics=2, n_clients=2, **QUIET).fit(docs)
    with pytest.raises(DPTopicError, match="a token holds spaces"):
        FedLDA(n_topics=2, **QUIET).fit([["the budget of the nation is large"], ["war and peace"]])


def test_online_lda_checks_a_later_frames_columns_and_keeps_its_own():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(0).poisson(1, (30, 6)), columns=list("abcdef"))
    m = OnlineLDA(n_topics=2, n_iter=3, batch_size=10, seed=0, verbose=0).fit(X)
    with pytest.raises(DPTopicError, match="columns are not the words"):
        m.partial_fit(X[list("fedcba")])
    m.partial_fit(X.iloc[:5])
    m.partial_fit([["a", "b", "c"]])                   # token lists read into its words; its columns stay
    assert list(m.feature_names_in_) == list("abcdef")
