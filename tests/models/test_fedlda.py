"""FedLDA's rules and who takes part: under every rule (the sound default ``none`` and the poster's ``floor`` and
``tail``), a user whose documents hold none of the report words still sends its update, padding only, so that
whether a user takes part never depends on its text."""
from __future__ import annotations

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.federated.messages import ClientUpdate, decode_message

RULES = ["none", "floor", "tail"]


def _fed_server(rule):
    """A FedLDA server's /v1/config with ``rule`` and its round-0 broadcast (built, not served), and a client that
    answers as that server and keeps the updates posted to it."""
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    from dptopic.service import codec
    from dptopic.service.app import Service
    from dptopic.service.client import ServiceClient
    from dptopic.service.config import ServiceConfig
    from service_helpers import make_words

    words = make_words(40)
    cfg = ServiceConfig(words, 0.3, database="sqlite:///unused.db", n_topics=3, fed_epsilon_per_entry=3.0, fed_topics=3,
                        fed_pad_length=16)
    svc = Service(cfg, start_trainer=False)
    doc = svc.config_doc()
    doc["fed"]["exclusion"] = rule          # a server of another build may run the poster's rules
    rrp = codec.fed_config_from_dict(doc["fed"])
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
    from dptopic.service.client import fed_participate

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
    from dptopic.federated import FedClient, RRPConfig

    from dptopic.corpus import Vocabulary

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
    spent = 16 if exclusion == "none" else 16 * rounds
    assert m.privacy_["epsilon_per_entry"] <= 400.0 / spent * (1 + 1e-12)
    assert m.privacy_["epsilon_nominal"] * spent <= 400.0
    assert m.privacy_["epsilon_basic"] == pytest.approx(400.0, rel=1e-9) and m.privacy_["epsilon_basic"] <= 400.0
    assert m.get_params()["epsilon"] == 400.0 and m.get_params()["epsilon_per_entry"] is None


def test_epsilon_per_entry_is_the_component_that_epsilon_used_to_be():
    from dptopic import FedLDA

    m = _fit_quiet(FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=1, pad_length=16, n_clients=4, seed=0,
                          verbose=0), _small_corpus())
    assert m.privacy_["epsilon_per_entry"] == 3.0 and m.privacy_["epsilon_basic"] == pytest.approx(48.0)
    default = FedLDA(n_topics=2, rounds=1, pad_length=16)
    assert default._config().epsilon == 5.0         # neither given: the poster's 5 per entry


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
    assert m._config().n_entries * m._config().epsilon <= 1280.0
    assert m._config().epsilon == pytest.approx(1280.0 / 138)
