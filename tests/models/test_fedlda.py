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
    cfg = ServiceConfig(words, 0.3, database="sqlite:///unused.db", n_topics=3, fed_epsilon=3.0, fed_topics=3,
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
