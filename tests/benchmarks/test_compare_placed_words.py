"""benchmarks/compare_placed_words.py: the candidate rule it measures (the words public vectors placed kept below each
topic's first estimated words) leaves each topic a distribution whose first words are estimated, and its tables read
back from its files."""
import contextlib
import io
import json

import numpy as np
import pytest


def _topics(seed=0, K=6, V=400, n_kept=60):
    """Topics whose kept words hold half of each row and whose other words are heavy in some topics (as a spread makes
    them)."""
    rng = np.random.default_rng(seed)
    beta = rng.gamma(0.2, size=(K, V))
    for cols in (slice(0, n_kept), slice(n_kept, V)):
        beta[:, cols] *= 0.5 / beta[:, cols].sum(axis=1, keepdims=True)
    return beta, np.arange(n_kept), np.arange(n_kept, V)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_rule_puts_estimated_words_first_and_keeps_each_topic_a_distribution(bench, seed):
    beta, kept, placed = _topics(seed)
    assert np.isin(np.argsort(-beta, axis=1, kind="stable")[:, :10], placed).any()
    out = bench.estimated_first(beta, kept, placed)
    assert not np.isin(np.argsort(-out, axis=1, kind="stable")[:, :10], placed).any()
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out[:, kept], beta[:, kept], rtol=1e-12)      # only the placed words' shares move
    np.testing.assert_allclose(out[:, placed].sum(axis=1), beta[:, placed].sum(axis=1), rtol=1e-12)
    assert bench.placed_in_top(beta, placed) > 0 and bench.placed_in_top(out, placed) == 0


def test_a_topic_whose_placed_words_cannot_fit_below_gives_the_rest_to_its_kept_words(bench):
    beta = np.array([[0.05, 0.04, 0.03, 0.02, 0.01] + [0.85 / 5] * 5])
    out = bench.estimated_first(beta, np.arange(5), np.arange(5, 10), top=3)
    assert out[0, 5:].max() < out[0, 2] and out.sum() == pytest.approx(1.0)
    ratio = out[0, :5] / beta[0, :5]
    np.testing.assert_allclose(ratio, ratio[0])        # the kept words scaled alike: their order and shape kept


def test_the_tables_read_back_with_npmi_itself_where_ldas_is_negative(bench, tmp_path):
    row = {k: [0.5, 0.0, 0.4, 0.6] for k in bench.KEYS + bench.RAW}
    result = {"corpus": "c", "n_docs": 100, "n_topics": 20, "lda": {"npmi": -0.2, "coverage": 0.8, "accuracy": 0.7},
              "floors": {"word-frequencies": {"coverage_share": 0.5, "accuracy_share": 0.4}},
              "rows": [{"model": "after", "epsilon": 1.0, "routes": ["spread"], **row}]}
    (tmp_path / "r.json").write_text(json.dumps(result))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert bench.main(["--from-json", str(tmp_path / "r.json")]) == 0
    text = out.getvalue()
    assert "NPMI (LDA's is negative: no ratio)" in text and "| after | 1 | spread | 0.500 (0.400-0.600)" in text
    assert "word-frequencies (control)" in text
