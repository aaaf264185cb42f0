"""Online VB (Hoffman et al. 2010) and private SVI (Park et al. 2016)."""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st
from sklearn.base import clone

import dptopic
import dptopic.models._variational as svi
from dptopic import DPSVI, OnlineVB, load  # noqa: E402
from dptopic.accounting import PrivacyLedger, compose_pld
from dptopic.accounting.gaussian import SubsampledGaussianEvent, pld_epsilon
from dptopic.corpus import lda_corpus  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.kernels.vb import gather_rows
from helpers import hide_opendp, quiet_small_fits, read_before_opendp_check


@settings(max_examples=4, deadline=None)
@given(eps=st.floats(0.3, 4.0), delta=st.sampled_from([1e-3, 1e-5, 1e-7]), epochs=st.integers(1, 2),
       q=st.floats(0.2, 1.0))
def test_from_budget_never_overshoots(eps, delta, epochs, q):
    steps = max(1, round(epochs / q))
    try:
        m = DPSVI.from_budget(eps, delta, n_epochs=epochs, sampling_rate=q)
    except DPTopicError as e:
        assert "smallest reachable epsilon" in str(e)
        return
    assert m.n_steps == steps
    spent = compose_pld([(SubsampledGaussianEvent(m.noise_multiplier, q), steps)], delta)
    assert spent <= eps
    if m.noise_multiplier > 0.25:  # and it does not waste the budget
        assert spent >= 0.97 * eps


def test_from_budget_unreachable_names_smallest_epsilon():
    with pytest.raises(DPTopicError, match="smallest reachable epsilon is"):
        DPSVI.from_budget(1e-4, 1e-6, n_epochs=5, sampling_rate=0.5)


# ----------------------------------------------------------------------------- estimators
@pytest.fixture(scope="module")
def synth():
    s = lda_corpus(n_docs=1200, vocab_size=300, n_topics=8, doc_length=80, alpha=0.1, beta=0.01, seed=7)
    return s.corpus.train_test_split(0.2, seed=0)


def test_online_vb_perplexity_improves_over_epochs(synth):
    train, test = synth
    m = OnlineVB(8, batch_size=240, n_epochs=4, seed=0, verbose=0).fit(train, eval_set=test)
    ppl = [p for _, p in m.perplexity_]
    assert ppl[-1] < ppl[0] * 0.97 and all(b < a for a, b in zip(ppl, ppl[1:]))
    assert m.components_.shape == (8, 300) and np.allclose(m.components_.sum(axis=1), 1)
    theta = m.transform(test)
    assert theta.shape == (test.n_docs, 8) and np.allclose(theta.sum(axis=1), 1)
    assert not m.privacy_["private"]


def test_online_vb_partial_fit_and_save_load(synth, tmp_path):
    train, test = synth
    m = OnlineVB(8, seed=0, verbose=0, total_docs=train.n_docs)
    for b in range(0, train.n_docs, 200):
        m.partial_fit(train.subset(range(b, min(b + 200, train.n_docs))))
    assert m.n_updates_ == 5
    before = m.lambda_.copy()
    with pytest.raises(DPTopicError):
        m.partial_fit(np.ones((3, 7)))   # wrong vocabulary size: state unchanged
    np.testing.assert_array_equal(m.lambda_, before)
    m.save(tmp_path / "m")
    m2 = load(tmp_path / "m")
    assert isinstance(m2, OnlineVB) and m2.n_updates_ == 5
    np.testing.assert_allclose(m2.lambda_, m.lambda_)
    assert m2.perplexity(test) == pytest.approx(m.perplexity(test))


def test_dpsvi_without_noise_or_clipping_equals_online_vb_step(synth, monkeypatch):
    import functools

    from dptopic.mechanisms.gaussian import gaussian_mechanism
    from dptopic.models import dpsvi as svi_module
    # a noise multiplier of 1e-15 is outside the accountant's range, which the mechanism now refuses before drawing:
    # this step is a check of the arithmetic only, so it runs the mechanism unaccounted
    monkeypatch.setattr(svi_module, "gaussian_mechanism", functools.partial(gaussian_mechanism, accounted=False))
    train, _ = synth
    X = train.to_bow()
    rows = np.arange(0, 100)
    batch = gather_rows(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(float), rows)
    D = train.n_docs
    lam = np.random.default_rng(0).gamma(100, 0.01, size=(8, train.vocab_size))
    vb = OnlineVB(8, tau0=5.0, seed=0)
    dp = DPSVI(8, noise_multiplier=1e-15, sampling_rate=len(rows) / D, clip=None, max_doc_len=10_000, tau0=5.0)
    a = vb._step(lam, 3, batch, D, np.random.default_rng(1))
    b, norms = dp._step(lam, 3, batch, D, np.random.default_rng(1))
    np.testing.assert_allclose(b, a, rtol=1e-9)
    assert np.all(norms > 0)


def test_dpsvi_poisson_sampling_and_report(synth, monkeypatch, tmp_path):
    train, test = synth
    sizes = []
    orig = DPSVI._step

    def spy(self, lam, t, batch, D, rng, ledger=None):
        sizes.append(len(batch[0]) - 1)
        return orig(self, lam, t, batch, D, rng, ledger)

    monkeypatch.setattr(DPSVI, "_step", spy)
    q = 0.05
    m = DPSVI(8, noise_multiplier=1.0, sampling_rate=q, n_epochs=2, clip=3.0, seed=3, verbose=0).fit(train)
    assert len(sizes) == m.n_steps == 40
    D = train.n_docs
    # batch sizes are Binomial(D, q): mean within 4 SE, and variance of a Binomial, not 0 (fixed-size batches)
    se = math.sqrt(D * q * (1 - q) / len(sizes))
    assert abs(np.mean(sizes) - D * q) < 4 * se
    assert np.var(sizes, ddof=1) > 0.3 * D * q * (1 - q)
    rep = m.privacy_
    assert rep["unit"] == "document" and "add/remove" in rep["neighbouring_relation"]
    assert rep["events"][0]["count"] == 40
    assert rep["epsilon_pld"] == pytest.approx(pld_epsilon(1.0, q, 40, 1e-5), rel=1e-6)
    assert rep["epsilon_pld"] < rep["epsilon_moments_accountant"] < rep["epsilon_strong_composition"]
    assert 0 < rep["outside_guarantee"]["clipped_fraction"] <= 1
    assert rep["noise_reproducible"] is True
    m.save(tmp_path / "p")
    meta = (tmp_path / "p" / "model.json").read_text()
    assert '"seed": null' in meta and "clipped_fraction" not in meta
    assert isinstance(load(tmp_path / "p"), DPSVI)


def test_dpsvi_empty_batch_is_noise_only(synth):
    train, _ = synth
    D = train.n_docs
    lam = np.ones((8, train.vocab_size))
    empty = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0))
    m = DPSVI(8, noise_multiplier=2.0, sampling_rate=0.1, clip=1.0, tau0=0.0, kappa=1.0)
    led = PrivacyLedger(unit="document")
    new, norms = m._step(lam, 0, empty, D, np.random.default_rng(0), led)   # rho = 1: lambda = eta + noise+/q
    assert led.n_events == 1 and len(norms) == 0
    noise = (new - m.eta_) * 0.1
    assert (noise == 0).mean() == pytest.approx(0.5, abs=0.05)  # half the N(0, 2^2) entries are negative -> 0
    assert noise.max() > 4


@pytest.mark.parametrize("kw", [dict(sampling_rate=0.0), dict(sampling_rate=1.5), dict(noise_multiplier=0.0),
                                dict(noise_multiplier=-1.0), dict(clip=0.0), dict(max_doc_len=0), dict(delta=1.0),
                                dict(delta=0.0)])
def test_dpsvi_bad_parameters(kw, synth):
    with pytest.raises(DPTopicError) as e:
        DPSVI(8, verbose=0, **kw).fit(synth[0])
    assert "\n" not in str(e.value)


def test_dpsvi_secure_refuses_seed(synth):
    with pytest.raises(DPTopicError, match="refuses a seed"):
        DPSVI(8, secure=True, seed=1, verbose=0).fit(synth[0])


def test_dpsvi_secure_mode_uses_opendp(synth):
    pytest.importorskip("opendp")
    m = DPSVI(8, noise_multiplier=2.0, sampling_rate=0.5, n_epochs=1, clip=3.0, secure=True, verbose=0).fit(synth[0])
    rep = m.privacy_
    assert rep["secure_noise"] is True and rep["noise_reproducible"] is False and rep["events"][0]["count"] == 2
    assert np.all(np.isfinite(m.components_))


@quiet_small_fits
@pytest.mark.parametrize("make", [lambda: dptopic.OnlineVB(2, seed=0, verbose=0),
                                  lambda: dptopic.DPSVI.from_budget(2.0, 1e-5, n_topics=2, seed=0, verbose=0)],
                         ids=["OnlineVB", "DPSVI"])
def test_variational_transform_keeps_the_fitted_k_after_set_params(corpus30, counts30, make):
    """transform sized θ by the new n_topics (5 columns for a 2-topic model)."""
    m = make().fit(corpus30)
    m.set_params(n_topics=5)
    theta = m.transform(counts30)
    assert theta.shape == (len(counts30), 2)
    assert np.all(np.isfinite(theta)) and np.allclose(theta.sum(axis=1), 1)


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=60, vocab_size=40, n_topics=2, doc_length=15, seed=1).corpus


# ----------------------------------------------------------------- docs/svi.md
def test_svi_quick_start_comment_states_the_epsilons_the_snippet_prints(small):
    lines = (DOCS / "svi.md").read_text().splitlines()
    i = next(j for j, line in enumerate(lines) if 'm.privacy_["epsilon_rdp"]' in line and line.startswith("print("))
    comment = lines[i].split("#", 1)[1]
    for line in lines[i + 1:]:                 # a comment continued on the next lines
        if not line.lstrip().startswith("#"):
            break
        comment += " " + line.split("#", 1)[1]
    m = DPSVI.from_budget(epsilon=2.0, delta=1e-5, n_epochs=1, sampling_rate=0.05, n_topics=2, clip=10.0, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(small)
    pld, rdp = m.privacy_["epsilon_pld"], m.privacy_["epsilon_rdp"]
    assert pld <= 2.0 < rdp                    # the budget binds the PLD figure only
    assert f"{pld:.3f}" in comment and f"{rdp:.3f}" in comment
    assert "by construction" not in comment and "PLD" in comment and "looser" in comment


@pytest.fixture(scope="module")
def corpus_2():
    return lda_corpus(n_docs=120, vocab_size=60, n_topics=3, seed=0).corpus


@pytest.mark.filterwarnings("ignore")
def test_a_refit_scores_its_eval_set_with_its_own_alpha(corpus_2):
    """DPSVI/OnlineVB score ``eval_set`` during the fit: a refit after ``set_params(alpha=...)`` must score with the
    α it trains with, not the previous fit's."""
    a = dptopic.OnlineVB(3, seed=0, alpha=0.1).fit(corpus_2)
    a.set_params(alpha=2.0).fit(corpus_2, eval_set=corpus_2)
    fresh = dptopic.OnlineVB(3, seed=0, alpha=2.0).fit(corpus_2, eval_set=corpus_2)
    assert a.perplexity_ == fresh.perplexity_


_TINY = lda_corpus(n_docs=30, vocab_size=12, n_topics=2, doc_length=8, seed=4).corpus


# ---- item 3: DP-SVI saves no count computed from the private data
def test_dpsvi_saves_no_batch_size_count(tmp_path):
    X = lda_corpus(n_docs=100, vocab_size=40, n_topics=3, doc_length=20, seed=2).corpus
    m = dptopic.DPSVI(n_topics=3, noise_multiplier=1.0, sampling_rate=0.3, n_epochs=1, verbose=0).fit(X)
    m.save(tmp_path / "m")
    state = np.load(tmp_path / "m" / "svi_state.npy", allow_pickle=False)
    assert state.tolist() == [m.n_updates_]
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "n_docs" not in meta["training"] and "n_tokens" not in meta["training"]
    assert not hasattr(dptopic.load(tmp_path / "m"), "n_docs_seen_")


# ---- item 15: one named guarantee
def test_every_private_report_names_its_guarantee():
    X = lda_corpus(n_docs=80, vocab_size=30, n_topics=3, doc_length=20, seed=3).corpus
    svi = dptopic.DPSVI(n_topics=3, noise_multiplier=1.0, sampling_rate=0.5, n_epochs=1, verbose=0).fit(X)
    assert svi.privacy_["epsilon"] == pytest.approx(min(svi.privacy_["epsilon_pld"], svi.privacy_["epsilon_rdp"]))
    hdp = dptopic.HDPLDA.from_budget(600, 1e-5, 5, n_topics=3, verbose=0).fit(X)
    p = hdp.privacy_
    assert p["epsilon"] <= p["epsilon_pld"] + 1e-9 and p["epsilon"] <= 600 * (1 + 1e-9)
    assert p["per_document"]["examples"]["100"] == pytest.approx(100 * p["epsilon_basic"])


# ---- item 25: a calibrated model always fits its own budget
def test_from_budget_boundary_case_fits():
    X = lda_corpus(n_docs=60, vocab_size=40, n_topics=3, doc_length=20, seed=0).corpus
    m = dptopic.DPSVI.from_budget(1.0, 1e-5, n_epochs=12, sampling_rate=1.0, clip=5.0, n_topics=20, verbose=0).fit(X)
    assert m.privacy_["epsilon"] <= 1.0


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(0.3, 8.0), st.sampled_from([1e-6, 1e-5, 1e-3]), st.sampled_from([0.05, 0.3, 1.0]),
       st.sampled_from([1, 2, 5]))
def test_from_budget_always_fits_its_budget(eps, delta, q, epochs):
    try:
        m = dptopic.DPSVI.from_budget(eps, delta, n_epochs=epochs, sampling_rate=q, n_topics=2, clip=2.0, verbose=0)
    except dptopic.DPTopicError:
        return  # an unreachable budget is refused before training, which is fine
    m.fit(_TINY)
    assert m.privacy_["epsilon"] <= eps * (1 + 1e-9)




def test_all_zero_batch_is_refused_as_nothing_to_learn_and_leaves_the_model_unchanged(fitted_lda_and_vb):
    m = dptopic.OnlineVB(n_topics=2, n_epochs=1, seed=0, verbose=0).fit(np.ones((5, 12), dtype=int))
    before = m.components_.copy()
    with pytest.raises(DPTopicError, match="none of the input's words is in the model's vocabulary: there is nothing"
                                           " to score or learn from, and the model is unchanged"):
        m.partial_fit(np.zeros((3, 12), dtype=int))
    np.testing.assert_array_equal(m.components_, before)
    with pytest.raises(DPTopicError, match="nothing to score"):
        fitted_lda_and_vb["LDA"].score(np.zeros((3, 12), dtype=int))
    with pytest.warns(UserWarning, match="every row is the prior alone"):    # transform still answers, as before
        theta = fitted_lda_and_vb["LDA"].transform(np.zeros((3, 12), dtype=int))
    assert theta.shape == (3, 2)


@pytest.fixture(scope="module")
def corpus_3():
    return lda_corpus(n_docs=300, vocab_size=60, n_topics=4, doc_length=40, seed=3).corpus


def test_blocks_cover_every_document_once_with_about_equal_tokens():
    ptr = np.concatenate([[0], np.cumsum(np.random.default_rng(0).integers(1, 200, size=500))])
    blocks = svi._token_blocks(ptr, 4)
    assert len(blocks) == 4 and blocks[0][0] == 0 and blocks[-1][1] == 500
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    tokens = [ptr[hi] - ptr[lo] for lo, hi in blocks]
    assert max(tokens) - min(tokens) <= 2 * 200
    assert svi._token_blocks(ptr[:3], 8) == [(0, 2)]          # too few tokens: one block


@pytest.mark.parametrize("cls,kw", [(dptopic.OnlineVB, {"n_epochs": 2, "batch_size": 100}),
                                    (dptopic.DPSVI, {"n_epochs": 1.0, "sampling_rate": 0.5, "clip": 5.0})])
def test_two_threads_give_the_one_thread_model(corpus_3, monkeypatch, cls, kw):
    monkeypatch.setattr(svi, "MIN_TOKENS_PER_THREAD", 100)      # split even these small batches
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = cls(n_topics=4, seed=5, verbose=0, n_jobs=1, **kw).fit(corpus_3)
        two = cls(n_topics=4, seed=5, verbose=0, n_jobs=2, **kw).fit(corpus_3)
    np.testing.assert_allclose(two.lambda_, one.lambda_, rtol=1e-9)
    np.testing.assert_allclose(two.transform(corpus_3), one.transform(corpus_3), rtol=1e-9, atol=1e-12)


def test_the_blocks_run_and_clip_each_document_on_its_own(corpus_3, monkeypatch):
    monkeypatch.setattr(svi, "MIN_TOKENS_PER_THREAD", 100)
    m = dptopic.OnlineVB(n_topics=4, seed=0, verbose=0, n_epochs=1).fit(corpus_3)
    ptr, ids, cts = m._bow(corpus_3)
    g1, s1, n1 = m._estep(m.lambda_, ptr, ids, cts, None, clip=2.0)
    m.set_params(n_jobs=3)
    assert len(svi._token_blocks(ptr, 3)) == 3
    g3, s3, n3 = m._estep(m.lambda_, ptr, ids, cts, None, clip=2.0)
    np.testing.assert_allclose(g3, g1, rtol=1e-12)
    np.testing.assert_allclose(n3, n1, rtol=1e-12)
    np.testing.assert_allclose(s3, s1, rtol=1e-10)
    assert np.all(n1 > 0)


WORDS = ["tax", "budget", "war", "army", "school", "teachers", "river", "bridge"]


# --------------------------------------------------- finding 3: LocalDocumentLDA fits reports, spends no budget
def _local_model():
    from dptopic.contributor.document_randomizer import DocumentRandomizer

    reports = DocumentRandomizer(WORDS, 8.0).randomize([["tax", "budget"], ["war", "army"], ["school", "river"]] * 4)
    return dptopic.models.LocalDocumentLDA(n_topics=2).fit(reports), reports


def test_cloning_or_refitting_the_local_document_trainer_does_not_warn_of_budgets():
    model, reports = _local_model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clone(model).fit(reports)
    assert not [w for w in caught if "spends its budget again" in str(w.message)], [str(w.message) for w in caught]
    # the central private trainers still warn, once per estimator
    with pytest.warns(UserWarning, match="spends its budget again"):
        clone(dptopic.DPSVI(n_topics=2))
    assert dptopic.models.LocalDocumentLDA._private and not dptopic.models.LocalDocumentLDA._spends_budget
    assert all(cls._spends_budget for cls in (dptopic.HDPLDA, dptopic.CDPLDA, dptopic.CDPLDAPlus, dptopic.FedLDA,
                                              dptopic.DPSVI, dptopic.DocDPEM, dptopic.DocDPCooccurrence))


def _fit(model, corpus, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # seeds, a vocabulary from the data: not what these tests look at
        return model.fit(corpus, **kw)


def test_dpsvi_report_says_none_below_sigma_one(planted):
    m = _fit(dptopic.DPSVI(n_topics=3, noise_multiplier=0.997, sampling_rate=0.01, n_epochs=0.1, seed=0, verbose=0),
             planted.corpus)
    rep = m.privacy_
    assert rep["epsilon_moments_accountant_paper"] is None and rep["epsilon_moments_accountant"] is not None
    assert "Lemma 3: sigma >= 1 and q < 1/(16 sigma)" in rep["paper_figures_note"]


# ---------------------------------------------------------------- item 7: OpenDP checked before the data
def test_secure_document_level_trainers_check_opendp_before_reading_data(tiny, monkeypatch):
    from dptopic.models import DPSVI, DocDPCooccurrence, DocDPEM, _document_passes

    hide_opendp(monkeypatch)
    # where both trainers read their documents
    monkeypatch.setattr(_document_passes, "document_source", read_before_opendp_check)
    monkeypatch.setattr(DPSVI, "_train_corpus", read_before_opendp_check)
    for m in (DocDPEM(n_topics=3, secure=True), DocDPCooccurrence(n_topics=3, secure=True),
              DPSVI(n_topics=3, secure=True, verbose=0)):
        with pytest.raises(DPTopicError, match="secure mode needs OpenDP"):
            m.fit(tiny.corpus)


# ---------------------------------------------------------------- items 8 and 9: the document-level reports
def test_each_document_level_trainer_names_its_own_coins_and_noise_reproducible_is_a_bool(tiny):
    pytest.importorskip("opendp")
    from dptopic.models import DPSVI, DocDPCooccurrence, DocDPEM

    texts = {}
    for cls, kw in ((DocDPEM, dict(epsilon=5.0, n_iter=2)), (DocDPCooccurrence, dict(epsilon=5.0)),
                    (DPSVI, dict(n_epochs=1, sampling_rate=0.5, verbose=0))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = cls(n_topics=3, secure=True, **kw).fit(tiny.corpus).privacy_
        assert rep["noise_reproducible"] is False and rep["secure_noise"] is True
        texts[cls.__name__] = rep["randomness"]
    assert "Poisson" not in texts["DocDPEM"] and "Poisson" not in texts["DocDPCooccurrence"]
    assert "DPSVI" not in texts["DocDPEM"] + texts["DocDPCooccurrence"]
    assert "Dirichlet" in texts["DocDPEM"] and "draws nothing else at random" in texts["DocDPCooccurrence"]
    assert "Poisson sampling" in texts["DPSVI"] and "amplification by subsampling" in texts["DPSVI"]
    assert "in secure mode those coins come from PCG64" in texts["DPSVI"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seeded = DocDPEM(n_topics=3, epsilon=5.0, n_iter=2, seed=1).fit(tiny.corpus).privacy_
    assert seeded["noise_reproducible"] is True


@pytest.mark.filterwarnings("ignore")
def test_dpsvi_fit_spends_exactly_its_release_plan():
    from helpers import assert_fit_spent_its_plan

    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=3, doc_length=15, seed=2).corpus
    m = DPSVI.from_budget(2.0, 1e-5, n_epochs=1.0, sampling_rate=0.25, n_topics=3, seed=0, verbose=0).fit(c)
    plan = assert_fit_spent_its_plan(m)
    assert plan.releases[0].count == m.n_steps == 4 and plan.budget == (2.0, 1e-5)
    assert plan.releases[0].scale == m.noise_multiplier * m.clip and plan.epsilon(1e-5) <= 2.0 * (1 + 1e-9)


@pytest.mark.parametrize("epochs", [0.5, math.inf, math.nan])
def test_online_vb_refuses_a_fraction_of_a_pass_in_its_own_words_and_in_flags(epochs):
    """OnlineVB makes whole passes (DPSVI takes fractional epochs): a fraction, inf or nan is refused before any data
    is read, and the command line writes the same refusal in its flags (``train --algorithm online-vb --epochs``)."""
    from dptopic.errors import ParameterError

    with pytest.raises(ParameterError) as e:
        OnlineVB(n_epochs=epochs).validate_parameters()
    assert e.value.parameter == "n_epochs" and "whole passes" in str(e.value)
    assert e.value.message({"n_epochs": "--epochs"}).startswith(f"invalid --epochs {epochs:g} for online-vb:")
    OnlineVB(n_epochs=3).validate_parameters()      # a whole number of passes
