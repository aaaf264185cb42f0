"""Issue 6: privacy fixes in the central-DP trainers. Each test fails on the code before the fix."""
import json
import re
import secrets
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

import dptopic
from dptopic import CDPLDA, HDPLDA, LDA, CDPLDAPlus
from dptopic.accounting import LaplaceEvent, PureDPEvent, compose_pld, compose_rdp, hdp_iteration_events
from dptopic.cli.main import build_parser, main
from dptopic.errors import DPTopicError
from dptopic.kernels import kernel_state
from dptopic.mechanisms import laplace_mechanism, laplace_noise
from dptopic.models.base import GibbsTopicModel

from conftest import counts_from_z


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def small(planted):
    return planted.corpus.subset(range(80))


def _train(args, textfile, out):
    return main(["train", "--corpus", str(textfile), "--topics", "3", "--iterations", "5", "--out", str(out),
                 "--quiet", *args])


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


def test_non_private_lda_keeps_its_seed(small, tmp_path):
    LDA(4, n_iter=3, seed=7, verbose=0).fit(small).save(tmp_path / "l")
    assert json.loads((tmp_path / "l" / "model.json").read_text())["params"]["seed"] == 7


def test_explicit_seed_is_flagged_and_default_is_not(small):
    seeded = HDPLDA(4, n_iter=2, seed=0, verbose=0).fit(small).privacy_
    assert seeded["noise_reproducible"] is True and "secret" in seeded["warning"]
    fresh = HDPLDA(4, n_iter=2, verbose=0).fit(small).privacy_
    assert fresh["noise_reproducible"] is False and "warning" not in fresh
    assert CDPLDA(4, n_iter=2, seed=np.random.default_rng(1), verbose=0).fit(small).privacy_["noise_reproducible"]
    assert HDPLDA().seed is None and CDPLDA().seed is None and CDPLDAPlus().seed is None


def test_cli_private_default_is_unseeded_and_explicit_seed_warns(textfile, tmp_path, capsys):
    for name in ("a", "b"):
        assert _train(["--algorithm", "hdp"], textfile, tmp_path / name) == 0
    a, b = (np.load(tmp_path / n / "components.npy") for n in ("a", "b"))
    assert not np.allclose(a, b)  # fresh OS entropy each run, not seed 0
    assert "warning" not in capsys.readouterr().out
    assert _train(["--algorithm", "hdp", "--seed", "3"], textfile, tmp_path / "c") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "warning" in out and "seed stays secret" in out
    rep = json.loads((tmp_path / "c" / "model.json").read_text())
    assert rep["privacy"]["noise_reproducible"] is True and rep["params"]["seed"] is None
    assert build_parser().parse_args(["demo"]).seed is None  # demo does not seed the private model


def test_readme_does_not_seed_a_private_model():
    text = (ROOT / "README.md").read_text()
    for call in re.findall(r"(?:HDPLDA|CDPLDA\w*)(?:\.from_budget)?\([^)]*\)", text):
        assert "seed=" not in call, call


# ------------------------------------------------- 2. training-data statistics
def test_train_keeps_private_metrics_out_of_the_bundle_unless_asked(textfile, tmp_path, capsys, monkeypatch):
    seen = []
    real = GibbsTopicModel.coherence
    monkeypatch.setattr(GibbsTopicModel, "coherence", lambda self, X, **kw: seen.append(X.n_docs) or real(self, X, **kw))
    assert _train(["--algorithm", "hdp"], textfile, tmp_path / "h") == 0
    # coherence once, on the held-out part (about 20% of the 50 documents: 8 by the stable split), never on the
    # training part (about 40)
    assert len(seen) == 1 and 1 <= seen[0] <= 15
    meta = json.loads((tmp_path / "h" / "model.json").read_text())
    assert meta["metrics"] == {} and "metrics_guarantee" not in meta
    assert "not saved" in " ".join(capsys.readouterr().out.split())
    assert _train(["--algorithm", "hdp", "--save-metrics"], textfile, tmp_path / "s") == 0
    meta = json.loads((tmp_path / "s" / "model.json").read_text())
    assert "perplexity_completion" in meta["metrics"] and "outside the guarantee" in meta["metrics_guarantee"]
    assert "outside the guarantee" in " ".join(capsys.readouterr().out.split())
    assert _train([], textfile, tmp_path / "l") == 0  # non-private LDA keeps saving its metrics
    assert "perplexity_completion" in json.loads((tmp_path / "l" / "model.json").read_text())["metrics"]


def test_save_api_private_metrics_opt_in(small, tmp_path):
    m = HDPLDA(4, n_iter=2, verbose=0).fit(small)
    m.metrics_ = {"perplexity_completion": 1.0}
    assert json.loads(Path(m.save(tmp_path / "a"), "model.json").read_text())["metrics"] == {}
    meta = json.loads(Path(m.save(tmp_path / "b", save_metrics=True), "model.json").read_text())
    assert meta["metrics"] == {"perplexity_completion": 1.0} and "outside the guarantee" in meta["metrics_guarantee"]


# ----------------------------------------------------- 3. discrete-Laplace RDP
def _brute_rdp(order, scale, c):
    x = np.arange(-3000, 3001)
    t = 1.0 / scale
    logz = np.log(-np.expm1(-t)) - np.log1p(np.exp(-t))
    lp, lq = logz - t * np.abs(x), logz - t * np.abs(x - c)
    return logsumexp(order * lp + (1 - order) * lq) / (order - 1)


@pytest.mark.parametrize("scale", [0.5, 2.0, 7.3])
@pytest.mark.parametrize("c", [1, 2, 3])
def test_discrete_laplace_rdp_is_exact(scale, c):
    orders = np.array([1.5, 2.0, 10.0, 64.0])
    got = LaplaceEvent(scale=scale, changes=(c,), discrete=True).rdp(orders)
    assert np.allclose(got, [_brute_rdp(a, scale, c) for a in orders], rtol=1e-10, atol=1e-12)
    if c == 1:  # the closed form of the issue
        lam = 1 / scale
        closed = (np.logaddexp((orders - 1) * lam, -orders * lam) - np.log1p(np.exp(-lam))) / (orders - 1)
        assert np.allclose(got, closed, rtol=1e-12)


def test_rdp_closed_form_values():
    lap, inh = hdp_iteration_events(1.0, 10.0, discrete=True)
    assert compose_rdp([(lap, 100), (inh, 100)], 1e-5) == pytest.approx(1054.5, abs=0.1)
    assert compose_pld([(lap, 100), (inh, 100)], 1e-5) == pytest.approx(1053.0, abs=0.1)
    cdp = LaplaceEvent(scale=1.0, changes=(1, 1), discrete=True)  # CDP-LDA+ count release at eps = 1
    assert compose_rdp([(cdp, 100)], 1e-5) == pytest.approx(146.3, abs=0.1)


@pytest.mark.parametrize("event", [
    LaplaceEvent(scale=2.0, changes=(1, 1), discrete=True),
    LaplaceEvent(scale=0.5, changes=(2,), discrete=True),
    LaplaceEvent(scale=2.0, changes=(1, 1), discrete=False),
    LaplaceEvent(scale=10.0, changes=(1,), discrete=False),
    PureDPEvent(1.0),
    PureDPEvent(10.0),
], ids=lambda e: e.describe()["type"] + f"-{e.epsilon:g}")
@pytest.mark.parametrize("n", [1, 100])
def test_rdp_never_below_pld(event, n):
    """RDP conversion is an upper bound on the true eps(delta); PLD (pessimistic) is near tight: RDP >= PLD."""
    rdp, pld = compose_rdp([(event, n)], 1e-5), compose_pld([(event, n)], 1e-5)
    assert rdp >= pld - 1e-3 * max(1.0, pld)


# ----------------------------------------------------------- 4. vocabulary
def test_report_states_vocabulary_assumption_and_accepts_public_vocabulary(small):
    m = HDPLDA(4, n_iter=2, verbose=0).fit(small)
    assert "vocabulary treated as public" in m.privacy_["scope"].lower()
    assert "NOT protected" in m.privacy_["vocabulary"]
    words = small.vocabulary.words[::2]  # a vocabulary fixed in advance, in its own order
    v = HDPLDA(4, n_iter=2, verbose=0).fit(small, vocabulary=words)
    assert v.vocabulary_.words == words and v.components_.shape == (4, len(words))
    assert v.privacy_["vocabulary"].startswith("supplied by the user")


def test_cli_vocabulary_file(textfile, tmp_path, capsys):
    vocab = ["tax", "budget", "war", "army", "students", "teachers", "unseenword"]
    (tmp_path / "v.txt").write_text("\n".join(vocab) + "\n")
    assert _train(["--algorithm", "hdp", "--vocabulary", str(tmp_path / "v.txt")], textfile, tmp_path / "m") == 0
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["vocabulary"] == vocab and meta["privacy"]["vocabulary"].startswith("supplied by the user")
    assert main(["train", "--corpus", str(textfile), "--vocabulary", str(tmp_path / "none.txt")]) == 2
    assert "one word per line" in capsys.readouterr().err


# ----------------------------------------------------------- 5. CDP reports
@pytest.mark.parametrize("cls", [CDPLDA, CDPLDAPlus])
def test_cdp_reports_not_private_with_partial_count_figure(small, cls, capsys):
    rep = cls(4, paper_epsilon=1.0, n_iter=3, verbose=0).fit(small).privacy_
    assert rep["private"] is False and rep["epsilon"] == float("inf") and rep["delta"] is None
    assert rep["unit"] == "word" and "replacement" in rep["neighbouring_relation"] and rep["theorem"]
    part = rep["count_release_epsilon"]
    assert "partial" in part["label"] and part["epsilon_basic"] == pytest.approx(2.0 * rep["parameters"]["noise_releases"])
    assert part["epsilon_pld"] <= part["epsilon_basic"] + 1e-9 and part["delta"] == 1e-5
    from dptopic.cli._common import print_privacy

    print_privacy(rep)
    out = capsys.readouterr().out
    assert "NO" in out and "partial figure" in out and "nominal" in out


# ----------------------------------------------------------- 6./7. secure mode
def test_kernel_state_from_secrets(monkeypatch):
    calls = []
    monkeypatch.setattr(secrets, "randbits", lambda k: calls.append(k) or 0x1234_5678_9ABC_DEF0 + len(calls))
    s = kernel_state(None)
    assert s.dtype == np.uint64 and calls == [64, 64] and s.tolist() == [0x1234_5678_9ABC_DEF1, 0x1234_5678_9ABC_DEF2]


def test_secure_training_seeds_the_sampler_from_secrets(small, monkeypatch):
    pytest.importorskip("opendp")
    calls = []
    real = secrets.randbits
    monkeypatch.setattr(secrets, "randbits", lambda k: calls.append(k) or real(k))
    m = HDPLDA(4, n_iter=1, secure=True, n_jobs=2, verbose=0).fit(small.subset(range(20)))
    assert len(calls) >= 4  # two 64-bit words per worker state
    assert "secrets" in m.privacy_["randomness"] and "not a cryptographic generator" in m.privacy_["randomness"]


def test_secure_continuous_noise_is_applied_by_opendp_to_the_values(monkeypatch):
    dp = pytest.importorskip("opendp.prelude")
    seen = []
    real = dp.m.make_laplace

    def spy(*args, **kw):
        meas = real(*args, **kw)
        return lambda arg: seen.append(list(arg)) or meas(arg)

    monkeypatch.setattr(dp.m, "make_laplace", spy)
    values = np.array([[3.5, 1e6], [0.25, 7.0]])
    noisy, ev = laplace_mechanism(values, 1.0, secure=True, discrete=False, changes=(1, 1))
    assert seen == [values.ravel().tolist()] and noisy.shape == values.shape and ev.scale == 2.0
    assert np.all(np.abs(noisy - values) < 200)
    with pytest.raises(DPTopicError, match="applied to the values"):
        laplace_noise((2,), 1.0, None, discrete=False, secure=True)


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


# ------------------------------------------------------ no pointers to the spec
def test_no_user_facing_pointer_to_the_internal_spec():
    pat = re.compile(r"spec (§|Sec\.|A-\d)|shared/spec|ALGORITHMS\.md|\(A-\d\d|\bA-\d\d\)")
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "src").rglob("*.py")]
    hits = [f"{f.relative_to(ROOT)}:{i}" for f in files
            for i, line in enumerate(f.read_text().splitlines(), 1) if pat.search(line)]
    assert not hits, hits


def test_private_fit_transform_returns_covered_training_theta(small):
    m = HDPLDA(4, n_iter=2, verbose=0)
    theta = m.fit_transform(small)
    assert theta is m.training_theta_ and theta.shape == (small.n_docs, 4)


def test_computing_on_private_training_documents_is_labelled_outside_the_guarantee():
    """transform/perplexity of a private model on documents that trained a private model say that the result reads
    their private words; held-out documents and non-private models are left alone."""
    import warnings

    import numpy as np

    import dptopic

    rng = np.random.default_rng(11)
    train, held_out = rng.integers(0, 4, (60, 12)), rng.integers(0, 4, (20, 12)) + 4
    m = dptopic.DocDPCooccurrence(n_topics=2, epsilon=5.0).fit(train)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.transform(held_out)
        dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(train).transform(train)
    assert not [x for x in w if "outside the model's guarantee" in str(x.message)]
    for call in (lambda: m.transform(train[:5]), lambda: m.perplexity(train)):
        with pytest.warns(UserWarning, match="trained a private model in this process.*outside the model's guarantee"):
            call()


def test_training_documents_warning_counts_them_and_names_training_theta_only_where_released():
    import warnings

    import numpy as np

    import dptopic

    rng = np.random.default_rng(12)
    train = rng.integers(0, 4, (40, 10))
    held_out = np.vstack([rng.integers(0, 4, (7, 10)) + 4, train[:3]])   # 3 training documents among 10
    m = dptopic.DocDPCooccurrence(n_topics=2, epsilon=5.0).fit(train)
    with pytest.warns(UserWarning, match=r"3 of these 10 documents trained a private model") as rec:
        m.transform(held_out)
    assert not any("training_theta_" in str(w.message) for w in rec)   # DocDPCooccurrence does not release it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = dptopic.HDPLDA(n_topics=2, n_iter=3, epsilon_laplace=50.0, epsilon_inherent=50.0).fit(train)
    with pytest.warns(UserWarning, match=r"10 of these 10 documents.*training_theta_ \(released at fit time\)"):
        h.transform(train[:10])
