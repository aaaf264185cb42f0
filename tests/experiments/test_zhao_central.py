import json

import pytest

from dptopic import experiments


def test_experiments_write_csv_png_and_verdict(planted, tmp_path):
    tr, te = planted.corpus.train_test_split(0.2, seed=0)
    s = experiments.hdp_utility(tr, te, tmp_path / "u", eps_grid=(0.5, 5.0), n_topics=5, n_iter=15, seeds=(0,))
    for f in ("hdp_utility.csv", "hdp_utility.png", "hdp_utility_summary.json"):
        assert (tmp_path / "u" / f).stat().st_size > 0
    assert (tmp_path / "u" / "hdp_utility.png").read_bytes()[:4] == b"\x89PNG"
    rows = (tmp_path / "u" / "hdp_utility.csv").read_text().splitlines()
    assert rows[0].startswith("algorithm") and len(rows) == 1 + 2 + 2 * 2
    assert set(s["paper_shape_checks"]) and isinstance(s["has_paper_shape"], bool)
    a = experiments.topic_attack_experiment(tr, tmp_path / "a", n_topics=5, n_iter=10, seeds=range(2), n_targets=5)
    saved = json.loads((tmp_path / "a" / "topic_attack_summary.json").read_text())
    assert saved["final_p_true"] == a["final_p_true"] and len(a["final_p_true"]) == 3
    # the summaries say which corpus the figures come from (a --max-docs cut shows in its size)
    assert (saved["n_docs"], saved["vocab_size"]) == (tr.n_docs, tr.vocab_size)
    fig5 = json.loads((tmp_path / "u" / "hdp_utility_summary.json").read_text())
    assert (fig5["n_train_docs"], fig5["n_test_docs"], fig5["vocab_size"]) == (tr.n_docs, te.n_docs, tr.vocab_size)


@pytest.mark.slow
def test_fig5_shape_on_demo_corpus(tmp_path):
    from dptopic.datasets import load_sotu

    tr, te = load_sotu().train_test_split(0.2, seed=0)
    s = experiments.hdp_utility(tr, te, tmp_path, eps_grid=(0.1, 1.0, 10.0), n_topics=20, n_iter=60, seeds=(0,))
    assert s["paper_shape_checks"]["limited_inherent_worse_than_non_private"]
    assert s["paper_shape_checks"]["hdp_perplexity_falls_as_epsilon_grows"]


@pytest.mark.slow
def test_fig4_shape_on_demo_corpus(tmp_path):
    from dptopic.datasets import load_sotu

    c = load_sotu().subset(range(4000))
    s = experiments.topic_attack_experiment(c, tmp_path, n_topics=20, n_iter=60, seeds=range(3), n_targets=20)
    assert s["paper_shape_checks"]["non_private_rises_with_iterations"]
    assert s["paper_shape_checks"]["hdp_lowest_at_last_iteration"]
"""``dptopic.experiments.zhao_central``."""



def test_topic_attack_over_one_seed_has_no_standard_error_and_owner_only_files(tmp_path):
    import csv
    import stat

    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.experiments import topic_attack_experiment

    c, *_ = lda_corpus(n_docs=40, vocab_size=60, n_topics=3, doc_length=20, alpha=0.2, seed=2)
    topic_attack_experiment(c, tmp_path, n_topics=3, n_iter=2, seeds=[0], n_targets=3)
    rows = list(csv.DictReader((tmp_path / "topic_attack.csv").open()))
    assert rows and all(r["p_true_stderr"] == "" for r in rows)
    for name in ("topic_attack.csv", "topic_attack.png", "topic_attack_summary.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
