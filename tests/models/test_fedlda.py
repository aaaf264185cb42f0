"""FedLDA's rules and who takes part: under every rule (the sound default ``none`` and the poster's ``floor`` and
``tail``), a user whose documents hold none of the report words still sends its update, padding only, so that
whether a user takes part never depends on its text."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dptopic
from dptopic.accounting.card import privacy_card
from dptopic.corpus import Corpus
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError, ParameterError
from dptopic.evaluation import infer_theta
from dptopic.models import FedLDA
from dptopic.protocol.fedlda_messages import ClientUpdate, decode_message

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
