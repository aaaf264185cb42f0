"""Review 53, models:

1. OLP-LDA's privacy report named neither the mini-batches nor the reports it took: trained by several
   ``partial_fit`` calls, it now states both, and what a contributor with a report in every batch has spent
   (its randomized-response events composed over the batches, never below the ledger's own figure).
2. DocDPEM's denoising floored every cell at a fixed 1e-3, whatever the noise scale: under extreme noise it vanished
   beside the noise and the few cells passing the threshold by chance took a topic's whole mass. The floor is now a
   thousandth of the (public) noise standard deviation, so the topics depend on the release only through its
   signal-to-noise ratio.
3. FedLDA's floor and tail rules saved ``training.n_clients`` as the number of users with tokens (data-dependent);
   it is now the number of users given, as under the default rule.
"""
import json
import warnings

import numpy as np
import pytest

from dptopic.accounting.local import local_privacy_report
from dptopic.corpus import Corpus, lda_corpus
from dptopic.models import OLPLDA, load
from dptopic.models._docdp_math import denoise, normalised_statistic

from test_local import _seeded


# ------------------------------------------------------------------ 1. OLP-LDA counts its batches
@pytest.fixture(scope="module")
def stream():
    c = lda_corpus(n_docs=400, vocab_size=50, n_topics=3, doc_length=20, alpha=0.1, beta=0.05, seed=7).corpus
    prior, docs = c.subset(np.arange(100)), c.subset(np.arange(100, 400))
    return prior, _seeded(docs.vocabulary, epsilon_word=2.0, seed=1).randomize(docs)


@pytest.mark.parametrize("n_calls", [2, 3])
def test_olplda_report_names_its_batches_and_composes_over_them(stream, n_calls, tmp_path):
    prior, rs = stream
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = OLPLDA(prior, n_topics=3, n_iter=2, prior_iter=5, seed=2, verbose=0)
        sizes = [100, 60, 80][:n_calls]
        start = 0
        for k in sizes:
            m.partial_fit(rs[start:start + k])
            start += k
    s = m.privacy_["stream"]
    assert s["n_batches"] == n_calls and s["n_reports"] == sum(sizes)
    assert f"{n_calls} mini-batch" in s["composition"]
    # a contributor with one report in each batch: n_calls randomized-response events, composed by the ledger
    ledger = local_privacy_report(m.f_, 50, m.delta, reports_per_contributor=n_calls)
    assert s["epsilon_doc_contributor_in_every_batch"] >= ledger["epsilon_basic"] * (1 - 1e-12)
    assert s["epsilon_doc_contributor_in_every_batch"] >= ledger["epsilon"]
    assert s["epsilon_doc_contributor_in_every_batch"] == pytest.approx(n_calls * m.privacy_["epsilon_doc"])
    assert s["epsilon_word_contributor_in_every_batch"] == pytest.approx(n_calls * 2.0)
    # the headline figure is for one report per contributor, as it says; never above the every-batch figure
    assert m.privacy_["reports_per_contributor"] == 1
    assert m.privacy_["epsilon"] <= s["epsilon_doc_contributor_in_every_batch"]
    # saved and resumed: the count goes on
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.save(tmp_path / "olp")
        back = load(tmp_path / "olp")
        assert back.privacy_["stream"]["n_batches"] == n_calls
        back.partial_fit(rs[240:300])
    assert back.privacy_["stream"]["n_batches"] == n_calls + 1
    assert back.privacy_["stream"]["n_reports"] == sum(sizes) + 60


def test_olplda_every_batch_figure_never_below_the_stated_reports(stream):
    prior, rs = stream
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = OLPLDA(prior, n_topics=3, n_iter=2, prior_iter=5, seed=2, verbose=0)
        m.partial_fit(rs[:100])
        m.partial_fit(rs[100:200])
        m.for_contributors(5)               # a collection server knows of up to 5 reports per pseudonym
    s = m.privacy_["stream"]
    assert s["n_batches"] == 2 and s["reports_per_contributor_stated"] == 5
    assert s["epsilon_doc_contributor_in_every_batch"] == pytest.approx(5 * m.privacy_["epsilon_doc"])


# ------------------------------------------------------------------ 2. DocDPEM's floor follows the noise scale
def test_denoise_floor_is_in_units_of_the_noise():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(4, 300))
    z[0, :5] += 6.0                              # a few cells of signal
    base = denoise(z, 1.0, 2.0)
    for scale in (1e-6, 1e-2, 1e3, 1e8):        # tiny noise and extreme noise (a tiny epsilon)
        out = denoise(z * scale, scale, 2.0)
        assert np.all(np.isfinite(out)) and np.all(out > 0)
        np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(out, base, rtol=1e-9, atol=0)


def test_denoise_under_extreme_noise_keeps_chance_cells_from_taking_a_topic():
    """Pure noise at sigma = 1e6: the old fixed floor (1e-3) vanished beside it, so the handful of cells above the
    threshold by chance took about all of each topic's mass; the floor in noise units keeps the share the
    floored cells would get at sigma = 1."""
    rng = np.random.default_rng(0)
    V, sigma, t = 2000, 1e6, 2.0
    release = rng.normal(0.0, sigma, size=(5, V))
    out = denoise(release, sigma, t)
    below = release < t * sigma
    floored_share = np.array([out[k][below[k]].sum() for k in range(5)])
    # each floored cell carries 1e-3 sigma; the kept ones about 2.37 sigma each (E[Z | Z > 2])
    kept = (~below).sum(axis=1)
    expected = below.sum(axis=1) * 1e-3 / (below.sum(axis=1) * 1e-3 + kept * 2.37)
    assert np.all(floored_share > 0.5 * expected) and np.all(floored_share > 1e-3)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, denoise(release / sigma, 1.0, t), rtol=1e-9, atol=0)


def test_denoise_reads_only_the_release_and_the_public_noise_scale():
    """Two corpora, the same release (their noise draws differ): identical topics, a valid distribution."""
    V, K = 30, 2
    rng = np.random.default_rng(1)
    a = lda_corpus(n_docs=40, vocab_size=V, n_topics=K, doc_length=20, seed=5).corpus.to_bow()
    b = lda_corpus(n_docs=25, vocab_size=V, n_topics=K, doc_length=9, seed=6).corpus.to_bow()
    beta = rng.dirichlet(np.ones(V), size=K)
    sa, _ = normalised_statistic(a, beta, 0.1, 5)
    sb, _ = normalised_statistic(b, beta, 0.1, 5)
    assert not np.allclose(sa, sb)
    sigma = 500.0                                # extreme noise
    release = sa + rng.normal(0, sigma, size=sa.shape)
    out_a = denoise(sa + (release - sa), sigma, 2.0)
    out_b = denoise(sb + (release - sb), sigma, 2.0)
    np.testing.assert_allclose(out_a, out_b, rtol=0, atol=1e-12)
    assert np.all(out_a > 0) and np.allclose(out_a.sum(axis=1), 1.0)


def test_denoise_row_without_weight_is_uniform():
    out = denoise(np.full((2, 4), -1.0), 0.0, 2.0)
    np.testing.assert_allclose(out, 0.25)


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
