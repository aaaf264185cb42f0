"""Plumbing of the local-DP experiments (tiny sizes; the real runs are in docs/experiments.md)."""
import json

import numpy as np

from dptopic.corpus import lda_corpus
from dptopic.experiments import ldp_utility, olp_experiment


def test_local_experiments_write_csv_png_and_verdicts(tmp_path):
    c = lda_corpus(n_docs=400, vocab_size=60, n_topics=3, doc_length=20, alpha=0.1, beta=0.05, seed=2).corpus
    train, test = c.subset(np.arange(340)), c.subset(np.arange(340, 400))
    s = ldp_utility(train, test, tmp_path / "a", eps_grid=(1.0, 8.0), n_topics=3, n_iter=5, seeds=(0,))
    assert len(s["lp_lda"]) == 2 and set(s["paper_shape_checks"]) >= {"lp_better_at_largest_epsilon"}
    assert (tmp_path / "a" / "ldp_utility.png").stat().st_size > 1000
    s = olp_experiment(train, test, tmp_path / "b", eps_grid=(1.0, 8.0), n_topics=3, n_iter=3, prior_iter=5,
                       batch_size=40, n_batches=3, prior_size=40, prior_sizes=(20, 40), batch_sizes=(40, 60))
    rows = (tmp_path / "b" / "olp_batches.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 3  # header + 3 curves x 3 batches
    assert json.loads((tmp_path / "b" / "olp_summary.json").read_text())["fig10"]["batch_sizes"] == [40, 60]
    assert (tmp_path / "b" / "olp.png").stat().st_size > 1000
