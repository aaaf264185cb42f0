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
