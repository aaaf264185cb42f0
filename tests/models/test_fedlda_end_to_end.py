"""FedLDA (Wang, Tong & Shi 2020): calculators, RRP mechanism, kernels, protocol messages, estimator, CLI."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dptopic.accounting import (
    ApproxDPEvent,
    PrivacyLedger,
    delta0,
    effective_epsilon,
    eta,
    rrp_event,
    theorem2_error_bound,
)
from dptopic.contributor.fedlda import FedClient
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import topic_recovery
from dptopic.kernels import client_sweep, rrp_replace
from dptopic.kernels.reference import reference_blocked_draw
from dptopic.kernels.rng import PyXorShift
from dptopic.mechanisms import replacement_table, rrp_perturb
from dptopic.models import FedLDA, load
from dptopic.protocol.fedlda import RRPConfig
from dptopic.protocol.fedlda_messages import (
    ClientUpdate,
    MessageError,
    ModelBroadcast,
    decode_message,
    vocabulary_fingerprint,
)
from dptopic.protocol.fedlda_server import FedServer


# ------------------------------------------------------------------ calculators
def test_calculator_sanity_values():
    assert delta0(0.1, 1.0) == pytest.approx(0.0090909, abs=1e-6)
    assert eta(5.0, 0.1, 1.0) == pytest.approx(0.4257, abs=1e-4)
    assert eta(5.0, 0.1, 1.0, "coincide") == pytest.approx(0.4273, abs=1e-4)
    assert eta(7.5, 0.1) == pytest.approx(0.0574, abs=1e-3)
    assert eta(1000.0, 0.1) == 0.0
    np.testing.assert_allclose(theorem2_error_bound(0.5, np.array([1, 2, 3])), [0.5, 2.0, 4.5])


@pytest.mark.parametrize("call", [lambda: eta(0.0, 0.1), lambda: eta(-1, 0.1), lambda: delta0(0.0, 1.0),
                                  lambda: delta0(1.0, 1.0), lambda: delta0(0.1, 0.5), lambda: eta(5, 0.1, 1, "x"),
                                  lambda: theorem2_error_bound(0.1, np.array([0])), lambda: rrp_event(5, 0.1, exclusion="x")])
def test_calculator_errors_are_one_line(call):
    with pytest.raises(DPTopicError) as e:
        call()
    assert "\n" not in str(e.value)


def test_effective_epsilon_exceeds_nominal_only_when_another_word_cannot_be_eps_ldp():
    assert effective_epsilon(5.0, eta(5.0, 0.1)) == 5.0
    e1 = eta(1.0, 0.1)
    assert effective_epsilon(1.0, e1) == pytest.approx(math.log(e1 / (1 - e1)))
    assert effective_epsilon(1.0, eta(1.0, 0.1, variant="coincide"), "coincide") == 1.0


def test_ledger_composes_approximate_events_without_changing_pure_reports():
    pure = PrivacyLedger()
    pure.spend(rrp_event(5.0, 0.1), 3)
    rep = pure.report(1e-5)
    assert "delta_basic" not in rep and rep["epsilon_basic"] == pytest.approx(15.0)
    approx = PrivacyLedger(discretization=1e-2)
    approx.spend(rrp_event(5.0, 0.01, exclusion="tail"), 3)
    rep = approx.report(0.5)
    assert isinstance(rrp_event(5.0, 0.01, exclusion="tail"), ApproxDPEvent)
    assert rep["delta_basic"] == pytest.approx(0.06) and rep["epsilon_basic"] == pytest.approx(15.0)
    assert rep["epsilon_rdp"] == math.inf


# ------------------------------------------------------------------ mechanism
def _mechanism_matrix(table, row, V, eta_, another, rare_always):
    """Exact output distribution M[x, o] of one entry, inputs x in V plus padding (last row)."""
    kept_words, _, kept_len, kept_mask, kept_prob = table
    q = np.zeros(V)
    q[kept_words[row, :kept_len[row]]] = kept_prob[row, :kept_len[row]]
    M = np.zeros((V + 1, V))
    for x in range(V + 1):
        rare = x == V or (not kept_mask[row, x] and rare_always)
        if rare:
            M[x] = q
            continue
        repl = q.copy()
        if another:
            repl[x] = 0.0
            repl /= repl.sum()
        M[x] = eta_ * repl
        M[x, x] += 1 - eta_
    return M


def _worst_ratio(M):
    worst = 1.0
    for o in range(M.shape[1]):
        col = M[:, o]
        if col.max() > 0:
            worst = max(worst, math.inf if col.min() == 0 else col.max() / col.min())
    return worst


@pytest.mark.parametrize("variant", ["another", "coincide"])
@pytest.mark.parametrize("eps", [5.0, 7.5, 2.0])
def test_worst_likelihood_ratio_is_at_most_e_eps(variant, eps):
    rng = np.random.default_rng(3)
    V = 12
    # flat, Zipf-like and very skewed weights: the floor and cap rules must hold for all of them
    Qs = np.vstack([np.ones(V), 1.0 / np.arange(1, V + 1), rng.dirichlet(np.full(V, 0.1)),
                    np.r_[1.0, np.full(V - 1, 1e-6)]])
    table = replacement_table(Qs, eps, 0.1, 1.0, variant, "floor")
    e = eta(eps, 0.1, 1.0, variant)
    bound = math.exp(effective_epsilon(eps, e, variant))
    for r in range(Qs.shape[0]):
        M = _mechanism_matrix(table, r, V, e, variant == "another", True)
        np.testing.assert_allclose(M.sum(axis=1), 1.0)
        assert _worst_ratio(M) <= bound * (1 + 1e-9)
    if eps >= 5:
        assert bound == pytest.approx(math.exp(eps))


def test_tail_exclusion_is_not_pure_ldp():
    """The poster's rule reports rare words as themselves: an unbounded ratio (hence its delta)."""
    V = 12
    Q = (1.0 / np.arange(1, V + 1) ** 2)[None, :]
    table = replacement_table(Q, 5.0, 0.1, 1.0, "another", "tail")
    assert table[2][0] < V
    M = _mechanism_matrix(table, 0, V, eta(5.0, 0.1), True, False)
    assert _worst_ratio(M) == math.inf


@pytest.mark.parametrize("variant", ["another", "coincide"])
def test_replacement_rate_is_eta_and_never_an_excluded_word(variant):
    rng = np.random.default_rng(7)
    V, n = 80, 200_000
    Q = rng.dirichlet(np.full(V, 0.3), size=3)
    table = replacement_table(Q, 5.0, 0.1, 1.0, variant)
    kept = table[3]
    rows = rng.integers(0, 3, n)
    words = rng.integers(0, V, n).astype(np.int32)
    flags = np.empty(n, dtype=np.uint8)
    out, ev = rrp_perturb(words, Q, 5.0, 0.1, rng=rng, rows=rows, variant=variant, table=table, replaced=flags)
    e = eta(5.0, 0.1, 1.0, variant)
    k = kept[rows, words]
    rate, m = flags[k].mean(), k.sum()
    assert abs(rate - e) <= 4 * math.sqrt(e * (1 - e) / m)
    assert np.all(flags[~k] == 1)                      # rare words are always replaced (floor rule)
    assert np.all(kept[rows, out])                     # a replacement is never an excluded word
    if variant == "another":
        assert np.all((out != words)[flags == 1])      # "another" word, never the same one
    assert ev.epsilon == pytest.approx(5.0)


def test_another_word_terminates_on_a_degenerate_distribution():
    Q = np.array([[1.0, 0.0, 0.0, 0.0]])
    words = np.zeros(1000, dtype=np.int32)
    out, _ = rrp_perturb(words, Q, 5.0, 0.1, rng=np.random.default_rng(0), exclusion="tail")
    assert np.all(out[out != 0] < 4) and np.any(out != 0)


def _rrp_reference(words, rows, kw, cdf, klen, mask, eta_, another, rare_always, state):
    g = PyXorShift(state)
    out, flags = np.empty_like(words), np.empty(len(words), dtype=np.uint8)
    for i, (w, r) in enumerate(zip(words, rows)):
        u = g.uniform()
        if w >= 0 and u >= eta_ and (mask[r, w] or not rare_always):
            out[i], flags[i] = w, 0
            continue
        while True:
            c = kw[r, min(int(np.searchsorted(cdf[r, :klen[r]], g.uniform(), side="right")), klen[r] - 1)]
            if not (another and c == w):
                break
        out[i], flags[i] = c, 1
    return out, flags


@pytest.mark.parametrize("another,rare_always", [(True, True), (False, False)])
def test_rrp_kernel_matches_numpy_reference(another, rare_always):
    rng = np.random.default_rng(11)
    V = 30
    Q = rng.dirichlet(np.full(V, 0.5), size=2)
    kw, cdf, klen, mask, _ = replacement_table(Q, 3.0, 0.1, 1.0, "another" if another else "coincide")
    words = rng.integers(-1, V, 500).astype(np.int32)
    rows = rng.integers(0, 2, 500).astype(np.int64)
    state = np.array([12345, 67890], dtype=np.uint64)
    ref = _rrp_reference(words, rows, kw, cdf, klen, mask, 0.4, another, rare_always, state.copy())
    out, flags = np.empty_like(words), np.empty(500, dtype=np.uint8)
    rrp_replace(words, rows, kw, cdf, klen, mask, 0.4, another, rare_always, state.copy(), out, flags)
    np.testing.assert_array_equal(out, ref[0])
    np.testing.assert_array_equal(flags, ref[1])


def _local_reference(word_ids, doc_ptr, z, ndk, phi_wk, alpha, state):
    g = PyXorShift(state)
    for d in range(len(doc_ptr) - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[d, z[i]] -= 1
            k = reference_blocked_draw(phi_wk[word_ids[i]] * (ndk[d] + alpha), phi_wk.shape[1], g)
            z[i] = k
            ndk[d, k] += 1


def test_client_sweep_matches_numpy_reference():
    c, phi, _, _ = lda_corpus(n_docs=6, vocab_size=20, n_topics=11, doc_length=15, seed=2)
    rng = np.random.default_rng(0)
    z = rng.integers(0, 11, c.n_tokens, dtype=np.int32)
    ndk = np.zeros((c.n_docs, 11), dtype=np.int32)
    np.add.at(ndk, (np.repeat(np.arange(c.n_docs), c.doc_lengths), z), 1)
    phi_wk = np.ascontiguousarray(phi.T)
    state = np.array([99, 7], dtype=np.uint64)
    z2, ndk2 = z.copy(), ndk.copy()
    _local_reference(c.word_ids, c.doc_ptr, z2, ndk2, phi_wk, 0.1, state.copy())
    client_sweep(c.word_ids, c.doc_ptr, z, ndk, phi_wk, 0.1, state.copy())
    np.testing.assert_array_equal(z, z2)
    np.testing.assert_array_equal(ndk, ndk2)


# ------------------------------------------------------------------ protocol
@pytest.fixture(scope="module")
def federation():
    c, _, _, _ = lda_corpus(n_docs=12, vocab_size=40, n_topics=3, doc_length=20, seed=5)
    cfg = RRPConfig(3, 5.0, pad_length=100, sample_ratio=0.5)
    rngs = np.random.default_rng(0).spawn(4)
    clients = [FedClient(f"u{i}", c.subset(range(4 * i, 4 * i + 4)), cfg, rngs[i]) for i in range(3)]
    return c, cfg, clients, rngs[3]


def test_messages_round_trip(federation):
    c, cfg, clients, _ = federation
    fp = vocabulary_fingerprint(c.vocabulary.words)
    b = ModelBroadcast(3, fp, np.random.default_rng(0).dirichlet(np.ones(40), size=3))
    b2 = decode_message(b.encode())
    assert isinstance(b2, ModelBroadcast) and b2.round == 3 and b2.vocab == fp
    np.testing.assert_array_equal(b2.phi, b.phi)
    u = ClientUpdate(3, "u0", fp, np.arange(5, dtype=np.int32), np.arange(5, 10, dtype=np.int32))
    u2 = decode_message(u.encode())
    assert isinstance(u2, ClientUpdate) and (u2.round, u2.client, u2.vocab) == (3, "u0", fp)
    np.testing.assert_array_equal(u2.words, u.words)
    np.testing.assert_array_equal(u2.topics, u.topics)


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


# ------------------------------------------------------------------ CLI
def test_cli_train_fed_and_bad_input(tmp_path, capsys):
    from dptopic.cli.main import main

    c, _, _, _ = lda_corpus(n_docs=30, vocab_size=40, n_topics=3, doc_length=20, seed=0)
    path = c.save(tmp_path / "c.npz")
    rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--clients", "5", "--rounds", "2",
               "--epsilon-per-entry", "5", "--topics", "3", "--pad-length", "200", "--out", str(tmp_path / "m"), "--quiet"])
    assert rc == 0
    assert (tmp_path / "m" / "model.json").exists()
    out = capsys.readouterr().out
    assert "Privacy report" in out
    for bad in (["--epsilon", "0"], ["--sample-ratio", "2"], ["--gamma", "0.5"], ["--failure-rate", "1.5"]):
        try:
            rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--rounds", "1", "--quiet",
                       "--out", str(tmp_path / "x")] + bad)
        except SystemExit as e:  # argparse rejects it before training
            rc = e.code
        assert rc == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "error" in err


def test_cli_train_fed_user_budget_spends_the_total(tmp_path, capsys):
    import json

    from dptopic.accounting.fedlda import entries_for_user_budget
    from dptopic.cli.main import main

    c, _, _, _ = lda_corpus(n_docs=30, vocab_size=40, n_topics=3, doc_length=20, seed=0)
    path = c.save(tmp_path / "c.npz")
    rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--clients", "5", "--rounds", "2",
               "--user-budget", "60", "--topics", "3", "--out", str(tmp_path / "m"), "--quiet"])
    assert rc == 0
    rep = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]
    eps, entries = entries_for_user_budget(60, 40)
    assert rep["epsilon_basic"] == pytest.approx(60) and rep["budget"]["epsilon_per_user"] == 60
    assert rep["parameters"]["entries_per_round"] == entries and rep["epsilon_per_entry"] == pytest.approx(eps)
    capsys.readouterr()
    for bad, msg in ((["--epsilon", "5"], "drop --epsilon"), (["--pad-length", "64"], "drop --epsilon"),
                     (["--exclusion", "floor"], "--exclusion none")):
        rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--user-budget", "60", "--quiet",
                   "--out", str(tmp_path / "x")] + bad)
        err = capsys.readouterr().err
        assert rc == 2 and msg in err and len(err.strip().splitlines()) == 1


def test_cli_train_fed_report_words(tmp_path, capsys):
    import json

    from dptopic.cli.main import main

    c, _, _, _ = lda_corpus(n_docs=30, vocab_size=40, n_topics=3, doc_length=20, seed=0)
    path = c.save(tmp_path / "c.npz")
    rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--clients", "5", "--rounds", "1",
               "--report-words", "12", "--topics", "3", "--pad-length", "20", "--out", str(tmp_path / "m"), "--quiet"])
    assert rc == 0
    rep = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]
    assert rep["parameters"]["report_words"] == 12 and "first 12 of 40 words" in rep["report_words_note"]
    capsys.readouterr()
    for bad, msg in ((["--report-words", "1"], "--report-words: must be auto or all or an integer >= 2, got 1"),
                     (["--report-words", "many"], "--report-words: must be auto or all or an integer >= 2, got many"),
                     (["--report-words", "2", "--topics", "3"], "at least --topics 3")):
        try:
            rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--rounds", "1", "--quiet",
                       "--out", str(tmp_path / "x")] + bad)
        except SystemExit as e:  # argparse rejects it before training
            rc = e.code
        err = capsys.readouterr().err
        assert rc == 2 and msg in err and "Traceback" not in err
    rc = main(["train", "--corpus", str(path), "--report-words", "12", "--quiet", "--out", str(tmp_path / "y")])
    assert rc == 2 and "--report-words" in capsys.readouterr().err   # an option of FedLDA only


def test_tail_rule_model_claims_no_guarantee_and_still_saves_loads_and_prints(tmp_path, capsys):
    # the poster's rule: (eps, 2 delta) per entry, delta = 0.1, composed over every entry and round
    import json

    from dptopic import load
    from dptopic.accounting.card import privacy_card
    from dptopic.cli.main import main

    c, _, _, _ = lda_corpus(n_docs=30, vocab_size=40, n_topics=3, doc_length=20, seed=0)
    path = c.save(tmp_path / "c.npz")
    rc = main(["train", "--algorithm", "fed", "--exclusion", "tail", "--corpus", str(path), "--clients", "5",
               "--rounds", "2", "--epsilon-per-entry", "5", "--topics", "3", "--pad-length", "20", "--out", str(tmp_path / "m"),
               "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0 and "NONE" in out
    rep = load(tmp_path / "m").privacy_
    assert rep["epsilon"] is None and rep["delta_basic"] == pytest.approx(2 * 20 * 2 * 0.1)
    card = privacy_card(rep, "FedLDA")
    assert card["guarantee"] == "none" and "deltas add to 8" in card["reason"]
    assert json.loads((tmp_path / "m" / "model.json").read_text())["privacy_card"]["guarantee"] == "none"


# ------------------------------------------------------------------ experiment plumbing
def test_fedlda_experiment_writes_table_figures_and_verdict(tmp_path, monkeypatch):
    import json

    import dptopic.experiments.fedlda as fx

    c, _, theta, _ = lda_corpus(n_docs=120, vocab_size=60, n_topics=3, doc_length=30, seed=8)
    y = (theta.argmax(axis=1) == 0).astype(int)
    monkeypatch.setattr(fx, "task_corpora", lambda t, m, s: (c.subset(range(80)), c.subset(range(80, 120)),
                                                             y[:80], y[80:]))
    s = fx.fedlda_experiment(tmp_path, tasks=("sotu",), eps_table=(7.5,), eps_grid=(7.5,), k_grid=(3,),
                          ratio_grid=(0.5,), n_topics=3, rounds=2, n_iter_lda=5, pad_length=64)
    for f in ("fedlda_table.csv", "fedlda_figures.csv", "fedlda_summary.json", "fedlda_budget.png",
              "fedlda_topics.png", "fedlda_ratio.png"):
        assert (tmp_path / f).stat().st_size > 0
    assert set(s["auc_loss"]) == {"sotu none eps=7.5", "sotu tail eps=7.5", "sotu floor eps=7.5"}
    assert json.loads((tmp_path / "fedlda_summary.json").read_text())["settings"]["rounds"] == 2
    assert all(0 <= r["auc"] <= 1 for r in s["table"])


def test_fedlda_experiment_runs_only_the_rules_asked(tmp_path, monkeypatch):
    import dptopic.experiments.fedlda as fx
    from dptopic.cli.main import main

    c, _, theta, _ = lda_corpus(n_docs=120, vocab_size=60, n_topics=3, doc_length=30, seed=8)
    y = (theta.argmax(axis=1) == 0).astype(int)
    monkeypatch.setattr(fx, "task_corpora", lambda t, m, s: (c.subset(range(80)), c.subset(range(80, 120)),
                                                             y[:80], y[80:]))
    s = fx.fedlda_experiment(tmp_path, tasks=("sotu",), eps_table=(7.5, 5.0), n_topics=3, rounds=2, n_iter_lda=5,
                             pad_length=32, figures=False, rules=("none",), local_inference="gibbs")
    assert set(s["auc_loss"]) == {"sotu none eps=7.5", "sotu none eps=5"}
    assert s["settings"]["local_inference"] == "gibbs" and s["settings"]["pad_length"] == 32
    rc = main(["experiment", "fedlda", "--no-figures", "--tasks", "sotu", "--rules", "none", "--eps-table", "10",
               "--pad-length", "16", "--rounds", "1", "--topics", "3", "--seed", "0", "--out", str(tmp_path / "cli")])
    assert rc in (0, None)
    import json

    summary = json.loads((tmp_path / "cli" / "fedlda_summary.json").read_text())
    assert [r["exclusion"] for r in summary["table"]] == ["-", "none"] and summary["settings"]["pad_length"] == 16
