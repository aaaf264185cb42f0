"""HDP-LDA and the CDP-LDA baselines: what ``epsilon`` names (the guarantee in total, per word; a baseline without a
guarantee takes the paper's figure as ``paper_epsilon``), and folders saved under the old names."""
from __future__ import annotations

import inspect
import json
import math
import re
import secrets
import warnings
from pathlib import Path

import numpy as np
import pytest

import dptopic
from conftest import counts_from_z
from dptopic import CDPLDA, HDPLDA, CDPLDAPlus, SeededNoiseWarning
from dptopic.accounting import LaplaceEvent
from dptopic.accounting.card import privacy_card
from dptopic.backends import ThreadBackend
from dptopic.corpus import lda_corpus
from dptopic.errors import BudgetExceededError, DPTopicError
from dptopic.evaluation.topic_matching import topic_recovery
from dptopic.models import DPSVI, LDA, OLPLDA, FedLDA, OnlineLDA
from dptopic.models import base as model_base
from helpers import ShardLosingBackend, hide_opendp, quiet_fit, read_before_opendp_check


def test_hdplda_epsilon_is_the_whole_runs_total_split_as_from_budget_does():
    kw = dict(delta=1e-5, n_iter=20, epsilon_inherent=10.0)
    direct = HDPLDA(epsilon=400.0, **kw)
    assert direct.epsilon_laplace_ == pytest.approx(HDPLDA.from_budget(400.0, **kw).epsilon_laplace)
    assert HDPLDA().epsilon_laplace_ == 1.0 and HDPLDA(epsilon_laplace=2.0).epsilon_laplace_ == 2.0
    with pytest.raises(DPTopicError, match="not both") as e:
        HDPLDA(epsilon=400.0, epsilon_laplace=2.0, **kw)._validate()
    assert "\n" not in str(e.value)


def test_hdplda_epsilon_fit_reports_at_most_the_total():
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    m = HDPLDA(n_topics=2, epsilon=400.0, n_iter=5, epsilon_inherent=10.0, seed=0, verbose=0)
    with pytest.warns(UserWarning):
        m.fit(c)
    assert m.privacy_["epsilon"] <= 400.0 * (1 + 1e-9) and m.privacy_["budget"]["epsilon"] == 400.0


@pytest.mark.parametrize("cls", [CDPLDA, CDPLDAPlus])
def test_cdp_baselines_take_paper_epsilon_and_refuse_epsilon(cls):
    assert cls(paper_epsilon=2.0).paper_epsilon == 2.0
    for make in (lambda: cls(epsilon=2.0), lambda: cls().set_params(epsilon=2.0)):
        with pytest.raises(DPTopicError, match="paper_epsilon=") as e:
            make()
        assert "\n" not in str(e.value)


def test_a_cdp_folder_saved_with_epsilon_loads_as_paper_epsilon(tmp_path):
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    m = CDPLDA(n_topics=2, paper_epsilon=2.0, n_iter=2, verbose=0).fit(c)
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["params"] = {("epsilon" if k == "paper_epsilon" else k): v for k, v in meta["params"].items()}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    assert dptopic.load(tmp_path / "m").paper_epsilon == 2.0


# ---------------------------------------------------------------- CDP-LDA's delta: of a partial figure, not a guarantee
@pytest.mark.parametrize("cls", [CDPLDA, CDPLDAPlus])
def test_cdp_takes_the_count_releases_delta_as_count_release_delta_and_refuses_delta(cls):
    with pytest.raises(DPTopicError, match="count_release_delta=") as e:
        cls(n_topics=2, delta=1e-6)
    assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match="count_release_delta="):
        cls(n_topics=2).set_params(delta=1e-6)
    assert cls(count_release_delta=1e-3).get_params()["count_release_delta"] == 1e-3
    assert "delta" not in cls().get_params()


def test_the_count_release_figure_is_reported_at_count_release_delta():
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    reps = [CDPLDAPlus(n_topics=2, paper_epsilon=2.0, n_iter=3, verbose=0, count_release_delta=d).fit(c)
            .privacy_["count_release_epsilon"] for d in (1e-3, 1e-9)]
    assert [r["delta"] for r in reps] == [1e-3, 1e-9]
    assert reps[0]["epsilon"] < reps[1]["epsilon"]      # the same releases: a smaller delta, a larger epsilon


def test_a_cdp_folder_saved_with_delta_loads_as_count_release_delta(tmp_path):
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    CDPLDA(n_topics=2, n_iter=2, verbose=0, count_release_delta=1e-4).fit(c).save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["params"] = {("delta" if k == "count_release_delta" else k): v for k, v in meta["params"].items()}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    assert dptopic.load(tmp_path / "m").count_release_delta == 1e-4


# ---------------------------------------------------------------------------------------------------------------------
# A run trained to a budget stops at the replay that makes its plan unaffordable (a Dask worker killed at
# iteration 50 of 600 was noticed at iteration 51, yet the run went on to iteration 597 before the budget refused a
# planned sweep); a run with headroom goes on; the replay warning's epsilon is rounded up, as the card shows it.

# ----------------------------------------------------------------- docstrings
def _parameters_section(cls) -> str:
    doc = inspect.getdoc(cls) or ""
    m = re.search(r"^Parameters\n-+\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", doc, re.S | re.M)
    assert m, f"{cls.__name__} has no Parameters section"
    return m.group(1)


@pytest.mark.parametrize("cls", [CDPLDA, CDPLDAPlus, HDPLDA, OLPLDA, FedLDA, DPSVI, OnlineLDA],
                         ids=lambda c: c.__name__)
def test_every_constructor_parameter_is_described_in_the_class_docstring(cls):
    section = _parameters_section(cls)
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    missing = [p for p in names if not re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", section)]
    assert not missing, f"{cls.__name__}'s Parameters section omits {missing}"


def test_cdplda_docstring_names_its_default_noise_as_discrete():
    assert CDPLDA().noise == "discrete" and CDPLDAPlus().noise == "discrete"
    doc = inspect.getdoc(CDPLDA)
    assert "``Lap(1/ε)`` noise is added" not in doc
    assert "discrete Laplace" in doc and 'noise="discrete"' in doc
    assert "discrete" in _parameters_section(CDPLDA).split("noise :", 1)[1].split("\n")[0]


def test_score_on_private_training_documents_warns_once():
    """score() read X and then handed the corpus it made to perplexity(), which read it again: the warning that the
    documents trained a private model came twice."""
    from dptopic.corpus import lda_corpus

    corpus = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=0).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.HDPLDA(n_topics=2, n_iter=3, epsilon_inherent=10.0, epsilon_laplace=5.0, verbose=0).fit(
            corpus, vocabulary=corpus.vocabulary)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.score(corpus)
    said = [w for w in caught if "trained a private model in this process" in str(w.message)]
    assert len(said) == 1, [str(w.message) for w in caught]
    assert not hasattr(m, "_scoring_corpus")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.perplexity(corpus)                                        # a later call on the same corpus still says it
    assert sum("trained a private model" in str(w.message) for w in caught) == 1


def test_warnings_name_the_user_s_line_through_fit_transform_and_transform():
    """Each warning's stacklevel was counted for one call path: through fit_transform (which calls fit) it named
    base.py, and through scikit-learn's set_output wrapper of transform it named sklearn/utils/_set_output.py."""
    from dptopic.corpus import lda_corpus
    from dptopic.errors import SeededNoiseWarning

    corpus = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=1).corpus

    def hdp():
        return dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_inherent=10.0, epsilon_laplace=5.0, verbose=0, seed=0)

    for call in (lambda: hdp().fit_transform(corpus, vocabulary=corpus.vocabulary),
                 lambda: hdp().fit(corpus, vocabulary=corpus.vocabulary)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = call()
        seeded = [w for w in caught if issubclass(w.category, SeededNoiseWarning)]
        assert seeded and all(w.filename == __file__ for w in seeded), [(w.filename, w.lineno) for w in seeded]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.transform(corpus)
    reads = [w for w in caught if "trained a private model" in str(w.message)]
    assert reads and all(w.filename == __file__ for w in reads), [(w.filename, w.lineno) for w in reads]


def test_hdp_warns_when_its_clip_bound_is_under_one_token():
    """--unit word's budget error advised a smaller --epsilon-inherent; at 0.5 the clip bound is 0.284 and every
    topic came out the same, without a word."""
    from dptopic.accounting import hdp_epsilon_inherent
    from dptopic.corpus import lda_corpus

    corpus = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=2).corpus
    with pytest.warns(UserWarning, match=r"clip bound C = 0.284 .* under one token.*at least 1.386"):
        dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_inherent=0.5, epsilon_laplace=5.0, beta=1.0,
                       verbose=0).fit(corpus, vocabulary=corpus.vocabulary)
    assert hdp_epsilon_inherent(1.0, 1.0) == pytest.approx(1.386, abs=1e-3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_inherent=1.4, epsilon_laplace=5.0, beta=1.0,
                       verbose=0).fit(corpus, vocabulary=corpus.vocabulary)
    assert not any("under one token" in str(w.message) for w in caught)


def test_frozen_and_dense_hdp_agree_in_distribution(planted):
    """The two HDP-LDA samplers target the same chain: similar perplexity after the same schedule.

    Some runs of either sampler settle in a worse mode (two planted topics merged, perplexity about
    25% higher), so the typical run is compared: the median over five seeds."""
    from dptopic import HDPLDA

    c = planted.corpus
    tr, te = c.train_test_split(0.2, seed=0)
    kw = dict(n_topics=5, epsilon_laplace=5.0, epsilon_inherent=12, n_iter=60, verbose=0)
    ppl = {s: np.median([HDPLDA(sampler=s, seed=sd, **kw).fit(tr).perplexity(te) for sd in range(5)])
           for s in ("auto", "dense")}
    assert abs(ppl["auto"] / ppl["dense"] - 1) < 0.05


def test_partition_fit_reproducible_and_accurate(planted):
    kw = dict(n_topics=5, n_iter=60, seed=3, n_jobs=2, verbose=0, parallel="partition")
    a, b = LDA(**kw).fit(planted.corpus), LDA(**kw).fit(planted.corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert topic_recovery(a.components_, planted.phi) >= 0.9
    h = HDPLDA(n_topics=5, n_iter=5, seed=3, n_jobs=2, verbose=0, parallel="partition").fit(planted.corpus)
    assert h.ledger_.n_events == 10 and np.allclose(h.components_.sum(1), 1.0)


def test_cdp_on_threads_is_reproducible(planted):
    """CDP-LDA+ on 2 threads (the partition scheme, as every Gibbs trainer by default): a fixed seed and n_jobs give
    the same run, with both noise tables drawn in place; another seed gives another run."""
    from dptopic.models import CDPLDA, CDPLDAPlus

    assert CDPLDA().parallel == CDPLDAPlus().parallel == LDA().parallel == HDPLDA().parallel == "partition"
    kw = dict(n_topics=5, n_iter=6, paper_epsilon=2.0, seed=3, n_jobs=2, verbose=0)
    a, b = CDPLDAPlus(**kw).fit(planted.corpus), CDPLDAPlus(**kw).fit(planted.corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.training_theta_, b.training_theta_)
    c = CDPLDAPlus(**{**kw, "seed": 4}).fit(planted.corpus)
    assert not np.array_equal(a.components_, c.components_)
    assert a.privacy_["count_release_epsilon"]["label"].startswith("partial figure")


@pytest.fixture(scope="module")
def small(planted):
    return planted.corpus.subset(range(80))


# ---------------------------------------------------------------- 1. seeds
@pytest.mark.parametrize("cls,kw", [(HDPLDA, dict(epsilon_laplace=1.0)), (CDPLDAPlus, dict(paper_epsilon=1.0))])
def test_saved_private_model_does_not_let_anyone_replay_the_noise(small, tmp_path, cls, kw):
    """With only the saved files, re-running the trainer must not reproduce the noisy model."""
    m = cls(n_topics=4, n_iter=5, seed=12345, verbose=0, **kw).fit(small)
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["params"]["seed"] is None and "12345" not in json.dumps(meta["params"])
    replay = cls(**dptopic.load(tmp_path / "m").get_params()).fit(small)  # what an attacker can rebuild
    assert not np.allclose(replay.components_, m.components_)


def test_explicit_seed_is_flagged_and_default_is_not(small):
    seeded = HDPLDA(4, n_iter=2, seed=0, verbose=0).fit(small).privacy_
    assert seeded["noise_reproducible"] is True and "secret" in seeded["warning"]
    fresh = HDPLDA(4, n_iter=2, verbose=0).fit(small).privacy_
    assert fresh["noise_reproducible"] is False and "warning" not in fresh
    assert CDPLDA(4, n_iter=2, seed=np.random.default_rng(1), verbose=0).fit(small).privacy_["noise_reproducible"]
    assert HDPLDA().seed is None and CDPLDA().seed is None and CDPLDAPlus().seed is None


def test_save_api_private_metrics_opt_in(small, tmp_path):
    m = HDPLDA(4, n_iter=2, verbose=0).fit(small)
    m.metrics_ = {"perplexity_completion": 1.0}
    assert json.loads(Path(m.save(tmp_path / "a"), "model.json").read_text())["metrics"] == {}
    meta = json.loads(Path(m.save(tmp_path / "b", save_metrics=True), "model.json").read_text())
    assert meta["metrics"] == {"perplexity_completion": 1.0} and "outside the guarantee" in meta["metrics_guarantee"]


# ----------------------------------------------------------- 4. vocabulary
def test_report_states_vocabulary_assumption_and_accepts_public_vocabulary(small):
    m = HDPLDA(4, n_iter=2, verbose=0).fit(small)
    assert "vocabulary treated as public" in m.privacy_["scope"].lower()
    assert "NOT protected" in m.privacy_["vocabulary"]
    words = small.vocabulary.words[::2]  # a vocabulary fixed in advance, in its own order
    v = HDPLDA(4, n_iter=2, verbose=0).fit(small, vocabulary=words)
    assert v.vocabulary_.words == words and v.components_.shape == (4, len(words))
    assert v.privacy_["vocabulary"].startswith("supplied by the user")


def test_secure_training_seeds_the_sampler_from_secrets(small, monkeypatch):
    pytest.importorskip("opendp")
    calls = []
    real = secrets.randbits
    monkeypatch.setattr(secrets, "randbits", lambda k: calls.append(k) or real(k))
    m = HDPLDA(4, n_iter=1, secure=True, n_jobs=2, verbose=0).fit(small.subset(range(20)))
    assert len(calls) >= 4  # two 64-bit words per worker state
    assert "secrets" in m.privacy_["randomness"] and "not a cryptographic generator" in m.privacy_["randomness"]


# ------------------------------------------------------------ 8. from_budget
def test_from_budget_accounts_for_the_fresh_final_release(small):
    m = HDPLDA.from_budget(200.0, 1e-5, n_iter=10, epsilon_inherent=5.0, final_release="fresh", n_topics=4,
                           verbose=0)
    m.fit(small)  # fit accepts its own plan
    lap = [n for e, n in m.ledger_.groups() if isinstance(e, LaplaceEvent)]
    assert lap == [11] and m.privacy_["epsilon_pld"] <= 200.0 + 1e-6


# ---------------------------------------------------- 9. theta of training docs
def test_training_theta_is_post_processing_of_final_z(small):
    last = {}

    def cb(info):
        last["z"] = np.array(info.z)

    cb.needs_release = False
    m = HDPLDA(4, alpha=0.3, n_iter=4, verbose=0).fit(small, callback=cb)
    ndk, _ = counts_from_z(small, last["z"], 4)
    expect = (ndk + 0.3) / (small.doc_lengths[:, None] + 4 * 0.3)
    assert m.training_theta_.shape == (small.n_docs, 4) and np.allclose(m.training_theta_, expect)
    assert "transform" in m.privacy_["scope"] and "training_theta_" in m.privacy_["scope"]


def test_private_fit_transform_returns_covered_training_theta(small):
    m = HDPLDA(4, n_iter=2, verbose=0)
    theta = m.fit_transform(small)
    assert theta is m.training_theta_ and theta.shape == (small.n_docs, 4)


class Recorder:
    def __init__(self, corpus, K):
        self.c, self.K, self.prev, self.diffs, self.releases = corpus, K, None, [], []

    def __call__(self, info):
        if self.prev is not None:
            self.diffs.append(np.asarray(info.release, float) - self.prev)
        self.releases.append(np.array(info.release, float))
        self.prev = counts_from_z(self.c, info.z, self.K)[1].astype(float)


def test_sound_hdp_fresh_noise_on_true_counts(planted):
    """S_i - N_{i-1} is fresh Laplace(2/eps_L) noise each iteration: no accumulation (spec §3.5)."""
    c = planted.corpus
    rec = Recorder(c, 5)
    m = HDPLDA(5, epsilon_laplace=1.0, epsilon_inherent=10, noise="continuous", n_iter=12, seed=0, verbose=0)
    m.fit(c, callback=rec)
    b = 2.0
    n = rec.diffs[0].size
    se = np.sqrt(20 * b**4 / n)
    for d in (rec.diffs[0], rec.diffs[-1]):
        assert abs(d.mean()) < 4 * np.sqrt(2 * b**2 / n)
        assert abs(d.var() - 2 * b**2) < 4 * se


def test_literal_hdp_accumulates_noise(planted):
    """Algorithm 1 as written: live counts = N(z) + accumulated noise, variance ≈ i·2b² (spec A-04)."""
    c = planted.corpus
    rec = Recorder(c, 5)
    m = HDPLDA(5, epsilon_laplace=1.0, noise="continuous", paper_literal=True, n_iter=12, seed=0, verbose=0)
    m.fit(c, callback=rec)
    b = 2.0
    v = [d.var() for d in rec.diffs]  # diffs[j] is the release of iteration j+1
    assert v[0] == pytest.approx(2 * 2 * b**2, rel=0.15)
    assert v[-1] == pytest.approx(12 * 2 * b**2, rel=0.15)
    assert m.privacy_["private"] is False and "claimed_by_paper" in m.privacy_


def test_sound_hdp_valid_probabilities_and_utility(planted):
    c = planted.corpus
    m = HDPLDA(5, epsilon_laplace=5.0, epsilon_inherent=12, n_iter=80, seed=0, verbose=0).fit(c)
    assert np.all(m.components_ > 0) and np.allclose(m.components_.sum(1), 1)
    assert topic_recovery(m.components_, planted.phi) > 0.6
    assert np.isfinite(m.perplexity(c.subset(range(20))))


def test_hdp_privacy_report_in_saved_model(planted, tmp_path):
    m = HDPLDA(5, epsilon_laplace=0.5, epsilon_inherent=4.0, beta=0.5, n_iter=10, seed=0, verbose=0).fit(planted.corpus)
    rep = m.privacy_
    assert rep["private"] is True and rep["unit"] == "word" and "replacement" in rep["neighbouring_relation"]
    assert "Theorem 3" in rep["theorem"]
    assert rep["epsilon_basic"] == pytest.approx(10 * (0.5 + 4.0))
    assert rep["epsilon_paper"] == pytest.approx(45.0)
    assert rep["epsilon_pld"] <= rep["epsilon_basic"] and rep["delta"] == 1e-5
    assert rep["parameters"]["clip"] == pytest.approx(0.5 * np.expm1(2.0))
    m.save(tmp_path / "h")
    saved = json.loads((tmp_path / "h" / "model.json").read_text())["privacy"]
    assert saved["epsilon_pld"] == pytest.approx(rep["epsilon_pld"]) and saved["unit"] == "word"
    assert not (tmp_path / "h" / "topic_word_counts.npy").exists()  # true counts are never written
    assert dptopic.load(tmp_path / "h").privacy_["epsilon_basic"] == pytest.approx(45.0)


def test_limited_inherent_is_not_private(planted):
    m = HDPLDA(5, epsilon_laplace=None, n_iter=5, seed=0, verbose=0).fit(planted.corpus)
    assert m.privacy_["private"] is False and m.privacy_["mode"] == "limited-inherent"


def test_from_budget_stays_within_budget(planted):
    m = HDPLDA.from_budget(200.0, 1e-5, n_iter=10, epsilon_inherent=5.0, n_topics=5, seed=0, verbose=0)
    m.fit(planted.corpus)
    assert m.privacy_["epsilon_pld"] <= 200.0 + 1e-6 and m.privacy_["budget"]["epsilon"] == 200.0
    with pytest.raises(DPTopicError, match="budget too small"):
        HDPLDA.from_budget(5.0, 1e-5, n_iter=10, epsilon_inherent=5.0)


def test_ledger_refuses_overspend(planted):
    m = HDPLDA.from_budget(200.0, 1e-5, n_iter=10, epsilon_inherent=5.0, n_topics=5, seed=0, verbose=0)
    m.n_iter = 40  # asking for more iterations than the budget was split over
    with pytest.raises(BudgetExceededError):
        m.fit(planted.corpus)


def test_cdp_nominal_and_corrected(planted):
    c = planted.corpus
    a = CDPLDA(5, paper_epsilon=1.0, n_iter=10, seed=0, verbose=0).fit(c)
    part = a.privacy_["count_release_epsilon"]  # a partial figure: the model itself is not covered
    assert a.privacy_["private"] is False
    assert a.privacy_["epsilon_nominal"] == 1.0 and part["epsilon_basic"] == pytest.approx(2.0)
    b = CDPLDAPlus(5, paper_epsilon=1.0, n_iter=10, seed=0, verbose=0).fit(c)
    part = b.privacy_["count_release_epsilon"]
    assert b.privacy_["epsilon_nominal"] == 10.0 and part["epsilon_basic"] == pytest.approx(20.0)
    assert part["epsilon_pld"] < 20.0
    assert np.allclose(b.components_.sum(1), 1) and np.all(b.components_ > 0)


@pytest.mark.parametrize("make,match", [
    (lambda: HDPLDA(epsilon_laplace=0), "epsilon_laplace=0"),
    (lambda: HDPLDA(epsilon_laplace=-1.0), "epsilon_laplace=-1.0"),
    (lambda: HDPLDA(delta=1.5), "delta=1.5"),
    (lambda: HDPLDA(delta=0), "delta=0"),
    (lambda: HDPLDA(clip=0), "clip=0"),
    (lambda: HDPLDA(beta=-0.1), "beta=-0.1"),
    (lambda: HDPLDA(clip=1.0, epsilon_inherent=2.0), "either clip or epsilon_inherent"),
    (lambda: CDPLDA(paper_epsilon=0.0), "epsilon=0.0"),
    (lambda: HDPLDA(secure=True, seed=3), "refuses a seed"),
    (lambda: CDPLDA(secure=True, seed=3), "refuses a seed"),
])
def test_bad_private_parameters(planted, make, match):
    with pytest.raises(DPTopicError, match=match) as e:
        make().fit(planted.corpus)
    assert "\n" not in str(e.value)


def test_secure_mode_trains(planted):
    pytest.importorskip("opendp")
    m = HDPLDA(5, epsilon_laplace=1.0, n_iter=2, secure=True, verbose=0).fit(planted.corpus.subset(range(30)))
    assert m.privacy_["secure_noise"] is True and np.allclose(m.components_.sum(1), 1)


def test_private_parallel_shards(planted):
    m = HDPLDA(5, epsilon_laplace=2.0, n_iter=20, seed=1, n_jobs=2, verbose=0).fit(planted.corpus)
    m2 = HDPLDA(5, epsilon_laplace=2.0, n_iter=20, seed=1, n_jobs=2, verbose=0).fit(planted.corpus)
    assert np.array_equal(m.components_, m2.components_)


def test_ledger_records_exactly_the_planned_events(planted):
    m = HDPLDA(5, epsilon_laplace=1.0, epsilon_inherent=3.0, n_iter=7, seed=0, verbose=0).fit(planted.corpus)
    groups = m.ledger_.groups()
    assert len(groups) == 2 and [n for _, n in groups] == [7, 7]
    assert {type(e).__name__ for e, _ in groups} == {"LaplaceEvent", "PureDPEvent"}
    assert m.ledger_._reserved == dict(groups)  # every spend fell within the checked reservation


def test_fdptm_composed_report():
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import HDPLDA, LDA
    from dptopic.training.fdptm import fit_fdptm

    corpus = lda_corpus(n_docs=300, vocab_size=60, n_topics=3, doc_length=30, seed=0).corpus
    m, restricted = fit_fdptm(HDPLDA(n_topics=3, n_iter=2, epsilon_laplace=1.0, epsilon_inherent=1.0, seed=0,
                                     verbose=0, delta=1e-5), corpus, 2.0, 1e-6, seed=0)
    p = m.privacy_
    assert restricted.vocabulary.words == m.vocabulary_.words
    assert p["private"] and p["epsilon_basic"] == pytest.approx(2.0 + 2 * (1.0 + 1.0))
    assert p["delta"] == pytest.approx(1e-5 + 1e-6) and p["delta_basic"] == pytest.approx(1e-6)
    assert p["epsilon_pld"] == pytest.approx(2.0 + p["topic_model"]["epsilon_pld"])
    assert p["epsilon_pld_tight"] <= p["epsilon_pld"] + 1e-6
    assert p["guarantee"] == "partial" and any("different privacy units" in w for w in p["warnings"])
    assert restricted.vocab_size >= 3 and math.isfinite(m.coherence(restricted, top_n=3))  # coherence on the private vocabulary
    json.dumps(p)
    m2, _ = fit_fdptm(LDA(n_topics=3, n_iter=2, seed=0, verbose=0), corpus, 0.5, 1e-6, seed=0)
    assert not m2.privacy_["private"] and "vocabulary_selection" in m2.privacy_


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=80, vocab_size=30, n_topics=2, doc_length=20, seed=3).corpus


PRIVATE = {
    "HDPLDA": lambda seed: dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_laplace=5.0, seed=seed, verbose=0),
    "CDPLDA": lambda seed: dptopic.CDPLDA(n_topics=2, n_iter=2, paper_epsilon=5.0, seed=seed, verbose=0),
    "DPSVI": lambda seed: dptopic.DPSVI.from_budget(2.0, 1e-5, n_topics=2, seed=seed, verbose=0),
    "DocDPEM": lambda seed: dptopic.DocDPEM(n_topics=2, epsilon=2.0, seed=seed, verbose=0),
    "DocDPCooccurrence": lambda seed: dptopic.DocDPCooccurrence(n_topics=2, epsilon=2.0, seed=seed, verbose=0),
    "FedLDA": lambda seed: dptopic.FedLDA(n_topics=2, rounds=1, pad_length=8, n_clients=8, seed=seed, verbose=0),
}


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
@pytest.mark.filterwarnings("ignore::dptopic.SmallCorpusWarning")
@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_a_seeded_private_trainer_warns_and_an_unseeded_one_does_not(name, corpus):
    with pytest.warns(SeededNoiseWarning, match=f"{name} with an explicit seed"):
        m = PRIVATE[name](7).fit(corpus)
    assert m.privacy_["noise_reproducible"] is True
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededNoiseWarning)
        m = PRIVATE[name](None).fit(corpus)
    assert not m.privacy_.get("noise_reproducible")


def test_a_seeded_non_private_model_does_not_warn(corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededNoiseWarning)
        dptopic.LDA(n_topics=2, n_iter=2, seed=7, verbose=0).fit(corpus)


# ---------------------------------------------------------------- finding 6: CDP's covered / not covered rows
def test_cdp_card_puts_the_model_in_the_not_covered_row(tiny):
    m = quiet_fit(dptopic.CDPLDA(n_topics=3, n_iter=2, seed=0, verbose=0), tiny.corpus)
    card = privacy_card(m.privacy_, "CDPLDA")
    assert "count_release_epsilon" not in card["covered"] and "count_release_epsilon" not in card["not_covered"]
    assert "Phi" not in card["covered"] and "not covered" not in card["covered"].lower()
    assert card["not_covered"].startswith("NOT covered: the sampled topics z, Phi (the whole released model)")
    assert card["covered"].startswith("only the noisy count releases")
    assert "count_release_epsilon" in m.privacy_        # the figure itself is still reported (its own row)


class _LosesAShardOnce(ThreadBackend):
    """Threads, but the second sweep reports shard 0 lost with one sweep to replay (as the Dask backend does)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.calls = 0

    def sweep(self, alpha, beta, word_table=None, clip=np.inf, shards=None):
        super().sweep(alpha, beta, word_table=word_table, clip=clip, shards=shards)
        if shards is None:
            self.calls += 1
            if self.calls == 2:
                return {0: 1}
        return {}


@pytest.fixture
def backend(monkeypatch):
    made = {}

    def make(name, n_jobs=1, client=None, parallel="adlda"):
        made["b"] = _LosesAShardOnce(n_jobs, parallel)
        return made["b"]

    monkeypatch.setattr(model_base, "make_backend", make)
    return made


def test_a_budgeted_run_stops_at_the_replay_not_at_the_end(tiny, backend):
    m = HDPLDA.from_budget(500.0, 1e-5, n_iter=40, n_topics=3, seed=0, verbose=0, backend="dask")
    with pytest.raises(BudgetExceededError, match=r"after a Dask worker was lost: 1 replayed sweep\(s\)"):
        m.fit(tiny.corpus)
    assert backend["b"].calls == 2         # stopped at the replay: none of the 38 planned sweeps after it ran


def test_a_run_with_headroom_goes_on_and_reports_the_replay(tiny, backend):
    m = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=6, seed=0, verbose=0, backend="dask")
    with pytest.warns(UserWarning, match="1 sweep") as rec:
        m.fit(tiny.corpus)
    assert backend["b"].calls == 6 and m.n_replayed_ == 1
    from dptopic.accounting.card import epsilon_text

    shown = epsilon_text(m.privacy_["epsilon"])
    assert any(f"({shown}) includes them" in str(w.message) for w in rec)
    assert float(shown) >= m.privacy_["epsilon"]        # never below the epsilon computed


@pytest.fixture
def lossy(monkeypatch):
    monkeypatch.setattr(model_base, "make_backend", lambda name, n_jobs=1, client=None, parallel="adlda":
                        ShardLosingBackend(n_jobs, parallel))


# ---------------------------------------------------------------- item 7: OpenDP checked before the data
def test_a_replay_is_warned_with_its_count_and_the_epsilon_includes_it(tiny, lossy):
    # item 3: a replay raises epsilon above the plan; the fit said nothing about it
    m = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=4, seed=0, verbose=0, backend="dask")
    with pytest.warns(UserWarning, match=r"a Dask worker was lost and 2 sweep\(s\) were replayed") as rec:
        m.fit(tiny.corpus)
    assert m.n_replayed_ == 2 and m.privacy_["replayed_iterations"] == 2
    text = " ".join(str(w.message) for w in rec)
    from dptopic.accounting.card import epsilon_text

    assert f"({epsilon_text(m.privacy_['epsilon'])}) includes them" in text
    # a run with no loss does not warn
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=4, seed=0, verbose=0).fit(tiny.corpus)
    assert not [w for w in rec if "replayed" in str(w.message)]


def test_secure_gibbs_checks_opendp_before_reading_data(tiny, monkeypatch):
    hide_opendp(monkeypatch)
    monkeypatch.setattr(model_base, "training_source", read_before_opendp_check)
    for m in (HDPLDA(n_topics=3, n_iter=2, secure=True, verbose=0),):
        with pytest.raises(DPTopicError, match="secure mode needs OpenDP"):
            m.fit(tiny.corpus)
    from dptopic.models.cdp_lda import CDPLDAPlus

    with pytest.raises(DPTopicError, match="secure mode needs OpenDP"):
        CDPLDAPlus(n_topics=3, n_iter=2, secure=True, verbose=0).fit(tiny.corpus)


# ---------------------------------------------------------------- item 11: a Dask-trained model's scope
def test_a_dask_trained_model_says_its_transport_must_be_secured(tiny, lossy):
    m = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=2, verbose=0, backend="dask")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(tiny.corpus)
    assert "Dask's transport" in m.privacy_["scope"] and "TLS" in m.privacy_["scope"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        threads = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=2, verbose=0).fit(tiny.corpus)
    assert "Dask" not in threads.privacy_["scope"]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("build", ["epsilon", "from_budget"])
@pytest.mark.parametrize("epsilon, n_iter, epsilon_inherent, final_release", [
    (1000.0, 20, 10.0, "last"), (2000.0, 20, 10.0, "fresh"),    # where the total is basic composition
    (30.0, 5, 1.0, "last"), (40.0, 20, 1.0, "fresh")])          # where the PLD is below it
def test_hdplda_spends_the_total_asked_within_its_stated_tolerance(tiny, build, epsilon, n_iter, epsilon_inherent,
                                                                     final_release):
    """HDPLDA(epsilon=...) and from_budget solve epsilon_L against the accountant the card states: the run spends the
    total asked to within HDP_SPEND_RTOL below it, never above; where every figure is basic composition, exactly it
    (the solver once stopped 0.44 short of 1,000, solving against a coarser PLD than the card's)."""
    from dptopic.accounting.budget import HDP_SPEND_RTOL

    kw = dict(n_iter=n_iter, epsilon_inherent=epsilon_inherent, final_release=final_release, n_topics=2, verbose=0)
    m = (HDPLDA(epsilon=epsilon, **kw) if build == "epsilon" else HDPLDA.from_budget(epsilon, 1e-5, **kw))
    m.fit(tiny.corpus)
    spent = m.privacy_["epsilon"]
    assert epsilon * (1 - HDP_SPEND_RTOL) <= spent <= epsilon
    if spent == m.privacy_["epsilon_basic"]:
        assert spent == pytest.approx(epsilon, rel=1e-9)
    assert m.release_plan().epsilon(1e-5) == spent


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("final_release", ["last", "fresh"])
def test_hdplda_fit_spends_exactly_its_release_plan(tiny, final_release):
    """Per iteration the noisy counts and the sampling step, one more count release with final_release='fresh'; the
    plan's epsilon(delta) is the card's, and within the total asked."""
    from helpers import assert_fit_spent_its_plan

    m = HDPLDA(n_topics=3, epsilon=60.0, n_iter=4, final_release=final_release, seed=0, verbose=0).fit(tiny.corpus)
    plan = assert_fit_spent_its_plan(m)
    assert len(plan.events()) == 8 + (final_release == "fresh") and plan.budget == (60.0, 1e-5)
    assert 60.0 * (1 - 1e-3) <= plan.epsilon(1e-5) <= 60.0


@pytest.mark.filterwarnings("ignore")
def test_the_cdp_baselines_plan_states_the_papers_figure_with_no_guarantee(tiny):
    from helpers import assert_fit_spent_its_plan

    for cls, n in ((CDPLDA, 1), (CDPLDAPlus, 3)):
        m = cls(n_topics=3, paper_epsilon=1.0, n_iter=3, seed=0, verbose=0).fit(tiny.corpus)
        plan = assert_fit_spent_its_plan(m)
        assert not plan.guarantee and "no guarantee" in plan.note and len(plan.events()) == n
        assert plan.releases[0].sensitivity == 2.0 and plan.releases[0].scale == 1.0   # Lap(1/eps), L1 change 2
