"""Local DP, server side: eq. (8)/(9), reconstruction, Bayesian denoising, LP-LDA, O-LDA, OLP-LDA, CLI."""
import json
import math
import warnings

import numpy as np
import pytest

from conftest import column_corpus, seeded_randomizer
from dptopic.cli.main import main
from dptopic.corpus import lda_corpus
from dptopic.errors import DPTopicError, SeededNoiseWarning
from dptopic.models import LPLDA, OLPLDA, OnlineLDA, load
from dptopic.protocol.estimation import (
    bayes_estimate,
    bits_to_corpus,
    integer_targets,
    moment_estimate,
    omega_from_sigma2,
    presence_bits,
    prior_mean_update,
    reconstruct,
    sigma2_from_omega,
    variance_exact,
    variance_paper,
)
from dptopic.protocol.reports import ReportSet


@pytest.fixture(scope="module")
def data():
    c = lda_corpus(n_docs=700, vocab_size=120, n_topics=4, doc_length=30, alpha=0.1, beta=0.05, seed=7).corpus
    return c.subset(np.arange(100)), c.subset(np.arange(100, 580)), c.subset(np.arange(580, 700))  # prior, stream, test


# ------------------------------------------------------------------ estimators
def test_moment_estimator_unbiased_with_exact_variance():
    """Spec example M=1000, N_t=300, f=0.4 through the real randomizer: 1000 words are 1000 replicates."""
    M, V, f, N = 1000, 1000, 0.4, 300
    rng = np.random.default_rng(1)
    corpus, _ = column_corpus(M, V, np.full(V, N), rng)
    rz = seeded_randomizer(corpus.vocabulary, f=f, seed=2)
    est = np.concatenate([moment_estimate(rz.randomize(corpus).column_sums(), M, f) for _ in range(12)])
    n = len(est)
    v_exact = variance_exact(M, f)
    assert v_exact == pytest.approx(444.44, abs=0.01)
    assert variance_paper(N, M, f) == pytest.approx(654.44, abs=0.01)
    assert abs(est.mean() - N) <= 4 * math.sqrt(v_exact / n)
    se_var = v_exact * math.sqrt(2.0 / (n - 1))
    assert abs(est.var(ddof=1) - v_exact) <= 4 * se_var
    assert abs(est.var(ddof=1) - variance_paper(N, M, f)) > 4 * se_var  # eq. (9) as printed does not match


def test_reconstruction_hits_targets_exactly():
    rng = np.random.default_rng(3)
    bits = rng.random((200, 40)) < 0.3
    targets = rng.integers(0, 201, 40)
    targets[:3] = [0, 200, bits[:, 2].sum()]
    out = reconstruct(bits, targets, rng)
    assert np.array_equal(out.sum(axis=0), targets)
    for t in range(40):  # only the needed direction changes
        if targets[t] >= bits[:, t].sum():
            assert np.all(out[bits[:, t], t])
        else:
            assert not np.any(out[~bits[:, t], t])
    assert np.array_equal(integer_targets([-3.2, 4.5, 5.5, 250.0], 200), [0, 4, 6, 200])
    with pytest.raises(DPTopicError):
        reconstruct(bits, np.full(40, 201), rng)
    c = bits_to_corpus(out, [f"w{i}" for i in range(40)])
    assert c.n_tokens == targets.sum()


def test_bayes_estimator_equals_eq19_on_hand_values():
    M, f = 160, 0.094852
    # Theorem 6: omega = Mf(2-f) / (Mf(2-f) + 4 sigma2 (1-f)^2); hand: 160*0.094852*1.905148 = 28.9129
    assert omega_from_sigma2(M, f, 13.23) == pytest.approx(28.9129 / (28.9129 + 4 * 13.23 * 0.905148**2), rel=1e-4)
    assert omega_from_sigma2(M, f, 13.23) == pytest.approx(0.4, abs=1e-3)
    assert sigma2_from_omega(M, f, 0.4) == pytest.approx(13.23, abs=0.01)
    # n_t = 20, mu = 15, omega = 0.4: eq. (8) = (40 - 15.17632)/1.810296 = 13.71249; 0.4*15 + 0.6*13.71249
    assert moment_estimate(20, M, f) == pytest.approx(13.71249, abs=1e-4)
    assert bayes_estimate(20, M, f, 15.0, 0.4) == pytest.approx(14.22749, abs=1e-4)
    # eq. (21): (mu + eta)/2 * |D_l|/|D_{l-1}|
    assert prior_mean_update(10.0, 30.0, 80, 160) == pytest.approx(10.0)


# ---------------------------------------------------------------------- LP-LDA
def test_lplda_fit_estimates_privacy_and_save(data, tmp_path):
    _, stream, test = data
    rs = seeded_randomizer(stream.vocabulary, epsilon_word=3.0, seed=5).randomize(stream)
    m = LPLDA(n_topics=4, n_iter=30, seed=0, verbose=0).fit(rs)
    assert m.components_.shape == (4, 120) and np.allclose(m.components_.sum(axis=1), 1)
    est = m.word_estimates()
    assert np.array_equal(est["target"], integer_targets(moment_estimate(rs.column_sums(), 480, rs.f), 480))
    assert np.all(est["variance_paper"] >= est["variance_exact"])
    p = m.privacy_
    assert p["private"] and p["unit"] == "document (local DP)"
    assert p["epsilon_word"] == pytest.approx(3.0) and p["epsilon_doc"] == pytest.approx(360.0)
    assert all("post-processing" in v for v in p["server_steps"].values())
    assert np.isfinite(m.perplexity(test))
    out = m.save(tmp_path / "lp")
    meta = json.loads((tmp_path / "lp" / "model.json").read_text())
    assert meta["params"]["seed"] is None
    back = load(out)
    assert np.array_equal(back.estimates_, m.estimates_) and back.f_ == m.f_
    with pytest.raises(DPTopicError, match="f="):
        LPLDA(n_topics=4, epsilon_word=1.0, verbose=0).fit(rs)
    with pytest.raises(DPTopicError, match="ReportSet"):
        LPLDA(n_topics=4, verbose=0).fit(stream)


# ------------------------------------------------------------ O-LDA / OLP-LDA
def _batches(corpus, size):
    return [corpus.subset(np.arange(a, min(corpus.n_docs, a + size))) for a in range(0, corpus.n_docs, size)]


def test_olplda_with_f_to_zero_agrees_with_olda(data):
    prior, stream, _ = data
    rs = seeded_randomizer(stream.vocabulary, f=1e-12, seed=9).randomize(stream)
    olp = OLPLDA(prior, omega=None, sigma2=1.0, n_topics=4, n_iter=10, prior_iter=20, seed=4, verbose=0)
    olda = OnlineLDA(n_topics=4, n_iter=10, prior_iter=20, prior_corpus=prior, seed=4, verbose=0)
    for rb, cb in zip(rs.batches(160), _batches(stream, 160)):
        olp.partial_fit(rb)
        olda.partial_fit(bits_to_corpus(presence_bits(cb), stream.vocabulary))
        assert olp.omega_history_[-1] < 1e-9
        np.testing.assert_allclose(olp.components_, olda.components_, rtol=1e-9, atol=1e-12)
    assert olp.n_batches_ == 3


def test_olda_memory_constant_in_number_of_batches(data):
    _, stream, _ = data
    m = OnlineLDA(n_topics=4, n_iter=3, seed=0, verbose=0)
    sizes, names = [], []
    for i, b in enumerate(_batches(stream, 40)):
        m.partial_fit(b)
        sizes.append(m.state_nbytes())
        names.append(sorted(vars(m)))
    assert len(sizes) == 12 and len(set(sizes)) == 1 and all(n == names[0] for n in names)


def test_olplda_partial_fit_transactional_and_bad_input(data):
    prior, stream, _ = data
    rz = seeded_randomizer(stream.vocabulary, epsilon_word=3.0, seed=1)
    rs = rz.randomize(stream)
    with pytest.raises(DPTopicError, match="no prior data"):
        OLPLDA(n_topics=4, verbose=0).partial_fit(rs[:50])
    m = OLPLDA(prior, n_topics=4, n_iter=5, prior_iter=10, seed=2, verbose=0)
    m.partial_fit(rs[:160])
    keys = ("prior_", "components_", "mu_", "eta_", "n_batches_", "size_prev_", "omega_history_")
    before = {k: np.copy(getattr(m, k)) for k in keys}
    gen = m._gen.bit_generator.state
    other_f = seeded_randomizer(stream.vocabulary, epsilon_word=1.0, seed=1).randomize(stream)[:160]
    other_vocab = seeded_randomizer([w + "x" for w in stream.vocabulary], epsilon_word=3.0, seed=1).randomize(stream)[:10]
    empty = rs[:0]
    for bad, msg in ((other_f, "f="), (other_vocab, "another vocabulary"), (empty, "empty batch"),
                     (stream, "ReportSet")):
        with pytest.raises(DPTopicError, match=msg):
            m.partial_fit(bad)
        for k in keys:
            assert np.array_equal(getattr(m, k), before[k]), k
        assert m._gen.bit_generator.state == gen
    with pytest.raises(DPTopicError, match="another vocabulary"):
        OLPLDA(prior.restrict(prior.vocabulary.words[:60]), n_topics=4, verbose=0, prior_iter=5).partial_fit(rs[:20])
    with pytest.raises(DPTopicError, match="omega"):
        OLPLDA(prior, sigma2=2.0, verbose=0).partial_fit(rs[:20])


def test_olplda_save_resume_and_modes(data, tmp_path):
    prior, stream, test = data
    rs = seeded_randomizer(stream.vocabulary, epsilon_word=3.0, seed=1).randomize(stream)
    m = OLPLDA(prior, n_topics=4, n_iter=5, prior_iter=10, seed=2, verbose=0)
    m.partial_fit(rs[:160])
    m.partial_fit(rs[160:320])
    m.save(tmp_path / "olp")
    back = load(tmp_path / "olp")
    for k in ("prior_", "components_", "mu_", "eta_"):
        assert np.array_equal(getattr(back, k), getattr(m, k))
    assert back.n_batches_ == 2 and back.size_prev_ == 160 and back.seed is None
    back.partial_fit(rs[320:480])
    assert back.n_batches_ == 3 and np.isfinite(back.perplexity(test))
    assert back.privacy_["epsilon_word"] == pytest.approx(3.0) and "D_0" in back.privacy_["scope"]
    lit = OLPLDA(prior, n_topics=4, n_iter=5, prior_iter=10, seed=2, verbose=0, alg2_literal=True).fit(rs)
    assert lit.n_batches_ == 3 and lit.privacy_["mode"] == "Algorithm 2 as printed"
    none = OLPLDA("none", n_topics=4, n_iter=5, seed=2, verbose=0).fit(rs, vocabulary=stream.vocabulary)
    assert none.omega_history_[0] == 0.0 and none.omega_history_[1] == 0.4


def test_olplda_warns_when_prior_overlaps_stream(data):
    prior, stream, _ = data
    rs = seeded_randomizer(stream.vocabulary, epsilon_word=3.0, seed=1).randomize(prior.subset(np.arange(60)))
    m = OLPLDA(prior, n_topics=4, n_iter=2, prior_iter=5, seed=2, verbose=0)
    with pytest.warns(UserWarning, match="overlap"):
        m.partial_fit(rs)
    disjoint = seeded_randomizer(stream.vocabulary, epsilon_word=3.0, seed=1).randomize(stream.subset(np.arange(160)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", SeededNoiseWarning)  # seed=2 above: for the test's reproduction only
        m.partial_fit(disjoint)


def test_the_overlap_threshold_pools_the_null_distances_of_every_randomized_copy():
    from dptopic.protocol.estimation import min_hamming, overlap_threshold

    rng = np.random.default_rng(0)
    prior = np.packbits(rng.random((30, 40)) < 0.2, axis=1, bitorder="little")
    copies = [np.packbits(rng.random((30, 40)) < 0.3, axis=1, bitorder="little") for _ in range(3)]
    null = np.concatenate([min_hamming(c, prior, exclude_diagonal=True) for c in copies])
    thr = float(np.quantile(null, 0.05))
    p = float(np.mean(null <= thr))
    assert overlap_threshold(prior, copies, 0.05) == (thr, pytest.approx(p + 3 * np.sqrt(p * (1 - p) / 90) + 1 / 90))
    # one copy, given as an array, is one copy
    assert overlap_threshold(prior, copies[0]) == overlap_threshold(prior, copies[:1])


def test_a_small_prior_is_randomized_until_the_overlap_check_rests_on_a_thousand_null_distances(data, monkeypatch):
    import dptopic.models.olp_lda as olp

    prior, stream, _ = data
    seen = []
    real = olp.overlap_threshold
    monkeypatch.setattr(olp, "overlap_threshold", lambda P, copies, level: seen.append(
        (len(P), [len(c) for c in copies])) or real(P, copies, level))
    rs = seeded_randomizer(stream.vocabulary, epsilon_word=3.0, seed=1).randomize(prior.subset(np.arange(60)))
    with pytest.warns(UserWarning, match="overlap"):
        OLPLDA(prior, n_topics=4, n_iter=2, prior_iter=5, seed=2, verbose=0).partial_fit(rs)
    ((n_prior, sizes),) = seen
    assert set(sizes) == {n_prior} and sum(sizes) >= 1000 > sum(sizes) - n_prior


# ------------------------------------------------------------------------- CLI
def test_cli_randomize_and_train(data, tmp_path, capsys):
    prior, stream, _ = data
    (tmp_path / "vocab.txt").write_text("\n".join(stream.vocabulary.words))
    stream.save(tmp_path / "c.npz")
    prior.save(tmp_path / "p.npz")
    rep = tmp_path / "r.bin"
    assert main(["randomize", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "3",
                 "--corpus", str(tmp_path / "c.npz"), "--out", str(rep)]) == 0
    assert ReportSet.load(rep).n_reports == stream.n_docs
    assert main(["train", "--algorithm", "lp", "--reports", str(rep), "--topics", "4", "--iterations", "5",
                 "--out", str(tmp_path / "m"), "--quiet"]) == 0
    assert main(["train", "--algorithm", "olp", "--reports", str(rep), "--prior", str(tmp_path / "p.npz"),
                 "--topics", "4", "--iterations", "5", "--out", str(tmp_path / "m2"), "--quiet"]) == 0
    assert load(tmp_path / "m2").n_batches_ == 3
    capsys.readouterr()
    bad = bytearray(rep.read_bytes())
    bad[-100] ^= 0xFF
    (tmp_path / "bad.bin").write_bytes(bytes(bad))
    for argv in (["train", "--algorithm", "lp", "--reports", str(tmp_path / "bad.bin")],
                 ["train", "--algorithm", "olp", "--reports", str(rep)],
                 ["randomize", "--vocabulary", str(tmp_path / "vocab.txt"), "--f", "1.5", "--corpus",
                  str(tmp_path / "c.npz"), "--out", str(tmp_path / "x.bin")]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and "\n" not in err and "Traceback" not in err
    with pytest.raises(SystemExit):
        main(["randomize", "--seed", "1", "--vocabulary", "v", "--epsilon-word", "1", "--corpus", "c", "--out", "o"])


def test_matrix_prior_gibbs_with_flat_prior_is_plain_lda(data):
    """O-LDA's sampler (core dense kernel with a K×V prior) equals plain dense CGS when B = beta."""
    from dptopic.models import LDA
    from dptopic.models.online_lda import _MatrixPriorGibbs

    _, stream, _ = data
    lda = LDA(n_topics=4, n_iter=10, alpha=0.5, beta=0.05, seed=3, sampler="dense", eval_every=0, verbose=0).fit(stream)
    g = _MatrixPriorGibbs(4, alpha=0.5, beta=0.05, n_iter=10, seed=3).fit_with_prior(stream, np.full((4, 120), 0.05))
    assert np.array_equal(g.topic_word_counts_, lda.topic_word_counts_)
    np.testing.assert_allclose(g.components_, lda.components_, rtol=1e-12)


def test_fit_transform_of_reports_says_what_to_do_instead(data):
    # it failed with "cannot use a ReportSet as a corpus" after fitting
    _, stream, _ = data
    rs = seeded_randomizer(stream.vocabulary, epsilon_word=3.0, seed=5).randomize(stream)
    m = LPLDA(n_topics=4, n_iter=3, seed=0, verbose=0)
    with pytest.raises(DPTopicError, match=r"randomized reports, not documents: call fit\(reports\)"):
        m.fit_transform(rs)
    assert not hasattr(m, "components_")                     # refused before any fit
    assert m.fit(rs).transform(stream.subset(np.arange(5))).shape == (5, 4)
# ``dptopic.protocol.estimation``.


# ---------------------------------------------------------------- unbiased estimators (fixed seed)
def test_local_frequency_estimators_are_unbiased():
    from dptopic.mechanisms.frequency_oracle import subset_selection, subset_selection_counts
    from dptopic.mechanisms.randomized_response import randomized_response
    from dptopic.mechanisms.rrp import subset_frequencies, subset_report
    from dptopic.protocol.estimation import moment_estimate

    rng = np.random.default_rng(52)
    R = 120
    items = rng.integers(0, 7, 1000)
    ests = np.array([subset_selection_counts(subset_selection(items, 7, 1.0, rng)[0], 7, 1.0)[0] for _ in range(R)])
    z = (ests.mean(0) - np.bincount(items, minlength=7)) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)
    words = rng.integers(0, 6, 1500)
    ests = np.array([subset_frequencies(subset_report(words, 6, 1.5, rng)[0], 6, 1.5) for _ in range(R)])
    z = (ests.mean(0) - np.bincount(words, minlength=6) / words.size) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)
    docs = [rng.choice(5, size=rng.integers(0, 4), replace=False) for _ in range(500)]
    ids = np.concatenate(docs).astype(np.int32)
    ptr = np.concatenate([[0], np.cumsum([len(d) for d in docs])])
    ests = []
    for _ in range(R):
        packed, _ = randomized_response(ids, ptr, 5, 0.4, rng)
        ests.append(moment_estimate(np.unpackbits(packed, axis=1, count=5, bitorder="little").sum(0), len(docs), 0.4))
    ests = np.array(ests)
    z = (ests.mean(0) - np.bincount(ids, minlength=5)) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)
