"""benchmarks/bench_user_level.py end to end on a tiny setting: people drawn from planted topics, each trainer's
recovery printed with its ratio to non-private LDA on the same documents."""
import contextlib
import io

import numpy as np
import pytest


def test_people_write_one_to_sixty_documents_from_their_own_mix(bench, planted):
    K, V = 5, planted.corpus.vocab_size
    phi = np.random.default_rng(0).dirichlet(np.ones(V), size=K)
    theta = np.eye(K)                       # each real document about one topic: a person keeps one
    corpus, users = bench.draw_people(phi, theta, np.full(K, 10), list(planted.corpus.vocabulary), 50, 0)
    counts = np.unique(users, return_counts=True)[1]
    assert len(counts) == 50 and counts.min() >= 1 and counts.max() <= 60 and corpus.n_docs == counts.sum()
    assert bench.joined(corpus, users).n_docs == 50


def test_bench_user_level_prints_recovery_and_ratio_to_lda(bench, planted, monkeypatch):
    monkeypatch.setattr(bench, "source", lambda name, vocab_size: planted.corpus)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--people", "40", "--topics", "3", "--iters", "3", "--per-user", "2", "--epsilon", "4", "--oracle"])
    text = out.getvalue()
    assert "command: python benchmarks/bench_user_level.py --people 40" in text
    rows = [[c.strip() for c in line.split("  ") if c.strip()] for line in text.splitlines()
            if line.startswith("40  ")]
    names = [r[3] for r in rows]
    assert names[0].startswith("LDA") and rows[0][-1] == "1.00"
    assert any(n.startswith("user: sum") for n in names) and any("at most 2 documents" in n for n in names)
    assert names[-1].startswith("ceiling: each person's exact moment")
    for r in rows[1:]:
        assert float(r[-1]) == pytest.approx(float(r[-2].split()[0]) / float(rows[0][-2]), abs=0.01)
