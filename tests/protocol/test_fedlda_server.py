"""FedLDA's aggregation streams over updates (a compiled kernel checked against a NumPy reference), and the
simulation decodes the one broadcast once for every user without changing what any user sends."""
import numpy as np
import pytest

from dptopic.contributor.fedlda import FedClient
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.mechanisms.rrp import add_subset_signal, subset_signal_counts
from dptopic.protocol.fedlda import RRPConfig
from dptopic.protocol.fedlda_messages import ClientUpdate, MessageError, decode_message
from dptopic.protocol.fedlda_server import FedServer


def _reference(labels, sets, phi, eps):
    """The NumPy form of the expected revealed words (one array per entry)."""
    K, V = phi.shape
    keep = labels < K
    lab, S = labels[keep].astype(np.int64), sets[keep].astype(np.int64)
    w = np.expm1(eps) * phi[lab[:, None], S]
    w /= 1.0 + w.sum(axis=1, keepdims=True)
    return np.bincount((lab[:, None] * V + S).ravel(), weights=w.ravel(), minlength=K * V).reshape(K, V)


@pytest.mark.parametrize("K,V,s,eps", [(3, 12, 1, 0.5), (4, 30, 3, 2.0), (5, 50, 7, 5.0)])
def test_kernel_matches_the_numpy_reference(K, V, s, eps):
    rng = np.random.default_rng(K * V)
    phi = rng.dirichlet(np.ones(V), size=K)
    n = 400
    sets = np.stack([np.sort(rng.choice(V, s, replace=False)) for _ in range(n)]).astype(np.int32)
    labels = rng.integers(0, K + 1, size=n).astype(np.int32)      # K: padding, not counted
    want = _reference(labels, sets, phi, eps)
    np.testing.assert_allclose(subset_signal_counts(labels, sets, phi, eps), want, rtol=1e-12, atol=1e-15)
    # added in two parts onto existing counts: the same sum
    counts = np.ones((K, V))
    add_subset_signal(counts, labels[:150], sets[:150], phi, eps)
    add_subset_signal(counts, labels[150:], sets[150:], phi, eps)
    np.testing.assert_allclose(counts, want + 1.0, rtol=1e-12)


def test_reports_out_of_range_are_refused_not_wrapped():
    phi = np.full((2, 5), 0.2)
    counts = np.zeros((2, 5))
    with pytest.raises(DPTopicError, match="labels in"):
        add_subset_signal(counts, np.array([-1]), np.array([[0, 1]]), phi, 1.0)
    with pytest.raises(DPTopicError, match="word ids"):
        add_subset_signal(counts, np.array([0]), np.array([[0, 5]]), phi, 1.0)
    assert counts.sum() == 0


def _clients(n, cfg, corpus_seed=0):
    out = []
    for i in range(n):
        c = lda_corpus(n_docs=3, vocab_size=30, n_topics=3, doc_length=12, seed=corpus_seed + i).corpus
        out.append(FedClient(f"u{i}", c, cfg, np.random.default_rng(100 + i)))
    return out


def test_server_counts_equal_the_reference_over_all_updates():
    cfg = RRPConfig(3, 3.0, pad_length=40, subset_size=3)
    clients = _clients(4, cfg)
    server = FedServer.from_config(clients[0].corpus.vocabulary, cfg, [c.client_id for c in clients],
                                   rng=np.random.default_rng(1))
    b = server.broadcast()
    phi = decode_message(b).phi
    msgs = [decode_message(c.run_round(b)) for c in clients]
    for m in msgs:
        server.receive(m.encode())
    server.aggregate()
    want = _reference(np.concatenate([m.topics for m in msgs]), np.concatenate([m.words for m in msgs]), phi,
                      cfg.epsilon_per_entry) / server.sample_ratio
    np.testing.assert_allclose(server.counts, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("exclusion", ["none", "tail"])
def test_round_update_sends_what_run_round_sends(exclusion):
    kw = {"subset_size": 3} if exclusion == "none" else {"exclusion": "tail"}
    cfg = RRPConfig(3, 3.0, pad_length=40, **kw)
    a, b = _clients(2, cfg), _clients(2, cfg)
    server = FedServer.from_config(a[0].corpus.vocabulary, cfg, [c.client_id for c in a],
                                   rng=np.random.default_rng(1))
    for _ in range(3):
        bc = server.broadcast()
        msg = decode_message(bc)
        phi_wk = np.ascontiguousarray(msg.phi.T)
        for x, y in zip(a, b):
            ux, uy = x.run_round(bc), y.round_update(msg, phi_wk)
            assert ux == uy
            server.receive(ux)
        server.aggregate()


def _empty_user(words):
    import warnings

    from dptopic.corpus import Corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the synthetic words are not ones the tokeniser produces
        c = Corpus.from_texts([""], vocabulary=words, drop_empty=False)
    assert c.n_docs == 1 and c.n_tokens == 0
    return c


@pytest.mark.parametrize("exclusion", ["floor", "tail"])
def test_a_user_without_tokens_takes_part_under_the_rrp_rules(exclusion, monkeypatch):
    # whether a user sends must not depend on its text: a user with no tokens sends padding, always replaced
    from dptopic import FedLDA
    cfg = RRPConfig(3, 8.0, 0.1, pad_length=20, exclusion=exclusion)
    full = lda_corpus(n_docs=3, vocab_size=30, n_topics=3, doc_length=12, seed=0).corpus
    client = FedClient("e", _empty_user(full.vocabulary.words), cfg, np.random.default_rng(3))
    server = FedServer.from_config(full.vocabulary, cfg, ["e"], rng=np.random.default_rng(1))
    msg = decode_message(client.run_round(server.broadcast()))
    assert msg.words.shape == (cfg.n_entries,) and msg.words.min() >= 0 and msg.words.max() < 30
    server.receive(msg.encode())
    server.aggregate()
    users = [lda_corpus(n_docs=2, vocab_size=30, n_topics=3, doc_length=12, seed=s).corpus for s in range(3)]
    users.append(_empty_user(users[0].vocabulary.words))
    seen, real = [], FedServer.receive
    monkeypatch.setattr(FedServer, "receive", lambda self, data: seen.append(real(self, data)) or seen[-1])
    m = FedLDA(n_topics=3, rounds=2, pad_length=20, seed=0, verbose=0, exclusion=exclusion, failure_rate=0.1, epsilon_per_entry=8.0)
    with pytest.warns(Warning):
        m.fit(users)
    assert sorted(set(seen)) == [f"user{i}" for i in range(4)] and len(seen) == 2 * 4 and m.n_clients_ == 4


@pytest.fixture(scope="module")
def federation():
    c, _, _, _ = lda_corpus(n_docs=12, vocab_size=40, n_topics=3, doc_length=20, seed=5)
    cfg = RRPConfig(3, 5.0, pad_length=100, sample_ratio=0.5)
    rngs = np.random.default_rng(0).spawn(4)
    clients = [FedClient(f"u{i}", c.subset(range(4 * i, 4 * i + 4)), cfg, rngs[i]) for i in range(3)]
    return c, cfg, clients, rngs[3]


def test_server_refuses_bad_messages_with_state_unchanged(federation):
    c, cfg, clients, srng = federation
    server = FedServer.from_config(c.vocabulary, cfg, [cl.client_id for cl in clients], rng=srng)
    b = server.broadcast()
    ups = [cl.run_round(b) for cl in clients]
    server.receive(ups[0])

    def refused(data, match):
        before = server.state()
        with pytest.raises(MessageError, match=match) as e:
            server.receive(data)
        assert "\n" not in str(e.value)
        after = server.state()
        assert before[0] == after[0] and before[3] == after[3]
        np.testing.assert_array_equal(before[1], after[1])
        np.testing.assert_array_equal(before[2], after[2])

    corrupted = bytearray(ups[1])
    corrupted[len(corrupted) // 2] ^= 0xFF
    refused(bytes(corrupted), "checksum")
    refused(ups[1][:20], "malformed")
    refused(b"not a message", "malformed")
    refused(ups[0], "duplicate")
    msg = decode_message(ups[1])
    refused(ClientUpdate(msg.round, msg.client, "0" * 16, msg.topics, msg.words).encode(), "vocabulary")
    refused(ClientUpdate(msg.round + 1, msg.client, msg.vocab, msg.topics, msg.words).encode(), "round")
    refused(ClientUpdate(msg.round, "intruder", msg.vocab, msg.topics, msg.words).encode(), "unknown client")
    refused(ClientUpdate(msg.round, msg.client, msg.vocab, msg.topics[:-1], msg.words[:-1]).encode(), "entries")
    bad = msg.words.copy()
    bad[0] = 40
    refused(ClientUpdate(msg.round, msg.client, msg.vocab, msg.topics, bad).encode(), "word ids")
    refused(b, "expected a client update")
    with pytest.raises(MessageError, match="not complete"):
        server.aggregate()
    for u in ups[1:]:
        server.receive(u)
    server.aggregate()
    assert server.round == 1
    refused(ups[1], "stale or replayed")  # a replay of last round's update
    counted = sum(int((decode_message(u).topics < 3).sum()) for u in ups)  # label 3 = padding, not counted
    assert 0 < counted <= 3 * cfg.n_entries
    # each counted report adds the probability that it reveals its word (< 1), scaled by 1 / sample_ratio
    assert 0 < server.counts.sum() < counted / 0.5
