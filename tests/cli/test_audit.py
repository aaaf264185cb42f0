"""``dptopic audit``: the one-run design's canaries are bounded before anything is built, the help says which
design's confidence is exact, and the console's lines are left whole off a terminal."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from dptopic.attacks import lira, metrics
from dptopic.cli.main import build_parser, main
from dptopic.corpus import lda_corpus
from helpers import run_dptopic, subprocess_error_line, write_posts


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    from dptopic.datasets import sotu_texts

    d = tmp_path_factory.mktemp("audit-cli")
    src = d / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    return src


def _error(args, capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def _never(*args, **kwargs):
    raise AssertionError("reached although the canaries were refused")


def test_canary_length_beyond_memory_is_refused_before_the_corpus_is_read(docs, tmp_path, capsys, monkeypatch):
    import dptopic.attacks.one_run as one_run
    import dptopic.cli.audit as audit

    monkeypatch.setattr(audit, "_audit_corpus", _never)        # nothing read, trained or allocated
    monkeypatch.setattr(one_run, "make_canaries", _never)
    err = _error(["audit", "--design", "one-run", "--canaries", "10", "--canary-length", "1000000000",
                  "--algorithm", "lda", "--corpus", str(docs), "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--canary-length 1,000,000,000" in err and f"{one_run.MAX_CANARY_TOKENS:,}" in err and "memory" in err
    assert f"at most {one_run.MAX_CANARY_TOKENS // 10:,}" in err
    assert not (tmp_path / "a").exists()
    # a count of canaries that memory cannot hold names --canaries
    err = _error(["audit", "--design", "one-run", "--canaries", "1000000000", "--algorithm", "lda", "--corpus",
                  str(docs), "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--canaries 1,000,000,000" in err and "memory" in err


def test_canary_longer_than_the_corpus_is_refused_before_training(docs, tmp_path, capsys, monkeypatch):
    import dptopic.attacks.one_run as one_run

    monkeypatch.setattr(one_run, "make_canaries", _never)
    err = _error(["audit", "--design", "one-run", "--canaries", "4", "--canary-length", "2000000", "--algorithm",
                  "lda", "--corpus", str(docs), "--max-vocab", "200", "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--canary-length 2,000,000" in err and "longer than the whole corpus" in err and "tokens" in err


def test_confidence_help_says_exact_for_one_run(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    at = text.rindex("--confidence CONFIDENCE") + len("--confidence CONFIDENCE")   # the option, not the usage
    confidence = text[at:text.index("--seed", at)]
    assert "approximate for --design lira" in confidence and "exact for --design one-run" in confidence


def test_console_lines_are_whole_off_a_terminal_and_name_settings_in_words(docs, tmp_path, capsys):
    assert main(["audit", "--design", "one-run", "--canaries", "20", "--canary-length", "20", "--algorithm", "lda",
                 "--topics", "3", "--iterations", "3", "--corpus", str(docs), "--max-vocab", "200", "--seed", "0",
                 "--out", str(tmp_path / "a"), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(ln for ln in lines if ln.startswith("audit (one-run design)"))
    # one line, not broken at 80 columns (a break left "; " dangling at the end of the corpus line)
    assert head.endswith("one model trained") and "V=200; 20 canaries" in head
    assert "lda (n_iter = 3, n_topics = 3)" in head and "{" not in head      # the trainer's settings, not a dict
    bound = next(ln for ln in lines if ln.startswith("empirical epsilon lower bound"))
    assert "exact 95% confidence" in bound and not any(ln.rstrip() != ln for ln in lines)


def test_empty_corpus_file_is_named_as_empty(docs, tmp_path, capsys):
    model = tmp_path / "m"
    assert main(["train", "--algorithm", "lda", "--corpus", str(docs), "--max-vocab", "200", "--topics", "3",
                 "--iterations", "2", "--seed", "0", "--out", str(model), "--quiet"]) == 0
    (tmp_path / "empty.txt").write_text("")
    capsys.readouterr()
    err = _error(["audit", "--model", str(model), "--corpus", str(tmp_path / "empty.txt"), "--out",
                  str(tmp_path / "a"), "--quiet"], capsys)
    assert repr(str(tmp_path / "empty.txt")) in err and "no non-blank lines" in err


# ---------------------------------------------------------------- --epsilon is the guarantee in total, as in train
def test_epsilon_is_the_total_guarantee_and_a_total_too_small_is_refused_before_the_corpus_is_read(
        docs, tmp_path, capsys, monkeypatch):
    """hdp splits --epsilon into its per-iteration part as ``train --epsilon`` does; a total the inherent part alone
    exceeds is refused before anything is read or trained."""
    import dptopic.cli.audit as audit

    monkeypatch.setattr(audit, "_audit_corpus", _never)
    err = _error(["audit", "--algorithm", "hdp", "--topics", "3", "--iterations", "2", "--epsilon", "0.5",
                  "--corpus", str(docs), "--shadows", "4", "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--epsilon 0.5 cannot cover 2 iterations" in err


def test_epsilon_maps_to_the_trainers_total(docs):
    """The procedure audited takes --epsilon as its ``epsilon`` (the total), never as a component."""
    from dptopic.attacks.audit import trainer_procedure

    text = trainer_procedure("hdp", topics=3, iterations=2, epsilon=40.0).description
    assert "epsilon = 40" in text and "epsilon_laplace" not in text


def test_a_baseline_without_a_guarantee_refuses_epsilon_naming_its_papers_figure(docs, tmp_path, capsys):
    err = _error(["audit", "--algorithm", "cdp", "--topics", "3", "--iterations", "2", "--epsilon", "1",
                  "--corpus", str(docs), "--shadows", "4", "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--set paper_epsilon=VALUE" in err and "claims none" in err


# ----------------------------------------------------------------- 8: audit --shadows
def test_audit_shadows_is_bounded(tmp_path):
    subprocess_error_line(run_dptopic("audit", "--model", tmp_path, "--corpus", "demo", "--shadows", "100000000000000000000"),
                    "--shadows")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    from dptopic.datasets import sotu_texts

    d = tmp_path_factory.mktemp("audit")
    src = d / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    model = d / "model"
    assert main(["train", "--corpus", str(src), "--max-vocab", "200", "--topics", "4", "--iterations", "5",
                 "--out", str(model), "--quiet", "--seed", "0"]) == 0
    return src, model, d


def test_audit_algorithm_writes_report(small, capsys):
    src, _, d = small
    out = d / "a1"
    assert main(["audit", "--algorithm", "hdp", "--topics", "3", "--iterations", "2", "--set", "epsilon_laplace=0.5",
                 "--set", "epsilon_inherent=1", "--corpus", str(src), "--max-vocab", "200", "--shadows", "6",
                 "--seed", "0", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "audit.json").read_text())
    assert set(doc["attacks"]) >= {"lira_online", "lira_offline", "huang_entropy"}
    for s in doc["attacks"].values():
        assert 0 <= s["auc"] <= 1 and {"tpr_at_fpr_0.01", "tpr_at_fpr_0.001", "tpr_at_fpr_0"} <= set(s)
    claim = doc["claimed_privacy"]
    assert claim["private"] and claim["epsilon"] == pytest.approx(2 * (0.5 + 1.0), rel=0.05)
    assert doc["empirical_epsilon"]["epsilon_lower_bound"] <= claim["epsilon"]
    assert (out / "roc.png").stat().st_size > 1000
    # figures computed from the corpus's documents: owner-only whatever the umask (they were 0644)
    assert all((out / f).stat().st_mode & 0o777 == 0o600 for f in ("audit.json", "roc.png"))
    printed = capsys.readouterr().out
    assert "empirical epsilon lower bound" in printed and "claimed epsilon" in printed
    s = doc["attacks"]["lira_online"]                 # piped (not a terminal): the table is not cut at 80 columns
    assert f"{s['auc']:.3f} ± {s['auc_se']:.3f}" in printed and "TPR@FPR=0.1%" in printed


def test_tables_are_not_cut_off_a_terminal():
    import io

    from rich.console import Console

    from dptopic.reporting.terminal import audit_results_table as results_table
    from dptopic.reporting.terminal import print_table

    row = {"auc": 0.576, "auc_se": 0.012, "tpr_at_fpr_0.01": 0.05, "tpr_at_fpr_0.001": 0.01, "tpr_at_fpr_0": 0.0}
    console = Console(file=io.StringIO(), width=40, highlight=False)      # a file: not a terminal, 40 columns
    print_table(console, results_table({"lira_online_fixed_variance": row, "huang_entropy": row}))
    printed = console.file.getvalue()
    assert printed.count("0.576 ± 0.012") == 2 and "TPR@FPR=0.1%" in printed and "…" not in printed
    assert console.width == 40                                            # the console is left as it was


def test_audit_saved_model(small):
    src, model, d = small
    out = d / "a2"
    assert main(["audit", "--model", str(model), "--corpus", str(src), "--shadows", "4",
                 "--seed", "1", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "audit.json").read_text())["claimed_privacy"]["private"] is False


def _bad_b(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_audit_bad_input(small, tmp_path, capsys):
    src, model, _ = small
    base = ["--corpus", str(src), "--max-vocab", "200", "--out", str(tmp_path / "x"), "--quiet"]
    assert "shadows" in _bad_b(["audit", "--algorithm", "lda", "--shadows", "2"] + base, capsys)
    assert "epsilon" in _bad_b(["audit", "--algorithm", "hdp", "--epsilon", "0"] + base, capsys)
    assert "epsilon" in _bad_b(["audit", "--algorithm", "hdp", "--epsilon", "-1"] + base, capsys)
    assert "delta" in _bad_b(["audit", "--algorithm", "hdp", "--delta", "1.5"] + base, capsys)
    assert "delta" in _bad_b(["audit", "--algorithm", "hdp", "--delta", "0"] + base, capsys)
    assert "does not exist" in _bad_b(["audit", "--model", str(tmp_path / "nope")] + base, capsys)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.json").write_text("{not json")
    assert "corrupt" in _bad_b(["audit", "--model", str(broken)] + base, capsys)
    wide = ["--corpus", str(src), "--max-vocab", "400", "--out", str(tmp_path / "x"), "--quiet"]
    assert "model's own vocabulary" in _bad_b(["audit", "--model", str(model)] + wide, capsys)
    assert "unknown algorithm" in _bad_b(["audit", "--algorithm", "nope"] + base, capsys)


# ---------------------------------------------------------------------------------------------------------------------
# Auditing DP-SVI and the FDPTM eps_T sweep; the empirical epsilon bound's relation and its coverage.

@pytest.fixture(scope="module")
def small_corpus():
    return lda_corpus(n_docs=120, vocab_size=80, n_topics=4, doc_length=40, alpha=0.2, beta=0.05, seed=5).corpus


# --------------------------------------------------------------- the bound
def test_epsilon_from_rates_relations():
    p, q, d = 0.6, 0.02, 1e-3
    assert metrics.epsilon_from_rates(p, q) == pytest.approx(np.log(p / q))
    assert metrics.epsilon_from_rates(p, q, d) == pytest.approx(np.log((p - d) / q))
    # add/remove via group privacy: without delta exactly half; with delta the root of the inequality
    assert metrics.epsilon_from_rates(p, q, 0.0, "add_remove") == pytest.approx(np.log(p / q) / 2)
    e = float(metrics.epsilon_from_rates(p, q, d, "add_remove"))
    x = np.exp(e)
    assert q * x * x + (1 + x) * d == pytest.approx(p)
    assert 0 < e < np.log((p - d) / q) / 2
    # a test no better than chance refutes nothing
    assert metrics.epsilon_from_rates(0.1, 0.2) == 0 and metrics.epsilon_from_rates(0.1, 0.2, 0, "add_remove") == 0
    with pytest.raises(Exception, match="relation"):
        metrics.empirical_epsilon(np.arange(10.0), np.arange(10) % 2, relation="swap")


def _randomized_response(eps, n, rng):
    """Independent trials of an eps-DP (replace-one) test: the membership bit kept w.p. e^eps/(1+e^eps)."""
    y = rng.random(n) < 0.5
    keep = rng.random(n) < np.exp(eps) / (1 + np.exp(eps))
    return np.where(keep, y, ~y).astype(float), y


def test_bound_is_tight_and_never_exceeds_a_known_epsilon():
    rng = np.random.default_rng(7)
    eps = 2.0
    # power: with 20,000 independent trials the bound comes close to the true epsilon, from below
    s, y = _randomized_response(eps, 20000, rng)
    e = metrics.empirical_epsilon(s, y, confidence=0.95)
    assert 1.75 < e["epsilon_lower_bound"] <= eps and e["relation"] == "replace_one"
    e = metrics.empirical_epsilon(s, y, confidence=0.95, relation="add_remove")
    assert 0.85 < e["epsilon_lower_bound"] <= eps / 2
    assert e["epsilon_lower_bound_replace_one"] == pytest.approx(2 * e["epsilon_lower_bound"])
    # coverage: over independent replicates the bound exceeds the true epsilon in at most ~5% of them
    over = sum(metrics.empirical_epsilon(*_randomized_response(eps, 400, rng), confidence=0.9,
                                         seed=i)["epsilon_lower_bound"] > eps for i in range(200))
    assert over <= 20  # expected <= 10 at confidence 0.9; 20 is > 3 standard deviations above


def test_claim_relation():
    assert lira.claim_relation(None) == "replace_one"
    assert lira.claim_relation({"private": True, "neighbouring_relation": "document-level add/remove: ..."}) == "add_remove"
    assert lira.claim_relation({"private": True, "neighbouring_relation": "word-level replacement"}) == "replace_one"
    assert lira.claim_relation({"private": False, "neighbouring_relation": "add/remove"}) == "replace_one"


# --------------------------------------------------------------- DP-SVI as an audited trainer
def test_svi_is_calibrated_from_a_budget():
    assert lira.epsilon_parameter("svi") == "epsilon"
    assert lira.epsilon_parameter("lp") == "epsilon_word" and lira.epsilon_parameter("hdp") == "epsilon_laplace"
    assert lira.epsilon_parameter("lda", required=False) is None
    a = lira.make_estimator("svi", n_topics=3, epsilon=1.0, n_epochs=2, sampling_rate=0.2)
    b = lira.make_estimator("svi", n_topics=3, epsilon=4.0, n_epochs=2, sampling_rate=0.2)
    assert a.noise_multiplier > b.noise_multiplier > 0  # less budget, more noise
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="not both"):
        lira.make_estimator("svi", n_topics=3, epsilon=1.0, noise_multiplier=2.0)
    with pytest.raises(DPTopicError, match="no parameter 'bogus'"):
        lira.make_estimator("svi", n_topics=3, epsilon=1.0, bogus=2)


@pytest.fixture(scope="module")
def sotu(tmp_path_factory):
    from dptopic.datasets import sotu_texts

    src = tmp_path_factory.mktemp("svi") / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    return src


def test_audit_cli_svi(sotu, tmp_path, capsys):
    out = tmp_path / "a"
    assert main(["audit", "--algorithm", "svi", "--epsilon", "2", "--topics", "3", "--set", "n_epochs=2",
                 "--set", "sampling_rate=0.3", "--corpus", str(sotu), "--max-vocab", "200", "--shadows", "4",
                 "--seed", "0", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "audit.json").read_text())
    claim, emp = doc["claimed_privacy"], doc["empirical_epsilon"]
    assert claim["private"] and claim["unit"] == "document"
    assert 1.5 < claim["epsilon"] <= 2.0 + 1e-9  # calibrated to the budget, never above it
    assert emp["relation"] == "add_remove" and 0 <= emp["epsilon_lower_bound"] <= claim["epsilon"]
    assert "adding/removing" in capsys.readouterr().out
    # a budget and an explicit noise multiplier together: one line, exit 2, before any training
    assert main(["audit", "--algorithm", "svi", "--epsilon", "2", "--set", "noise_multiplier=3", "--corpus",
                 str(sotu), "--out", str(tmp_path / "b"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "not both" in err
    assert not (tmp_path / "b").exists()


# --------------------------------------------------------------- FDPTM eps_T sweep (Fig. 5)
def test_fdptm_eps_t_sweep_with_svi(small_corpus, tmp_path):
    from dptopic.errors import DPTopicError
    from dptopic.experiments import manzonelli_lira as ml

    s = ml.fdptm_experiment(small_corpus, tmp_path, (20.0,), 1e-4, trainer="cgs", n_topics=3, n_shadows=4, seed=0,
                            n_jobs=1, cgs_iterations=5, dp_algorithm="svi", eps_t_grid=(1.0, 8.0),
                            dp_params={"n_epochs": 2, "sampling_rate": 0.3, "tau0": 10.0}, verbose=0)
    rows = {r["config"]: r for r in s["rows"]}
    assert set(rows) == {"public", "eps_V=20", "eps_V=20, eps_T=1", "eps_V=20, eps_T=8"}
    assert rows["eps_V=20, eps_T=1"]["eps_T"] == 1.0 and rows["eps_V=20"]["eps_T"] is None
    for r in s["rows"]:
        assert np.isfinite(r["umass_coherence"]) and 0 <= r["auc"] <= 1
    assert rows["eps_V=20"]["mean_vocab_size"] < small_corpus.vocab_size
    assert s["dp_params"]["sampling_rate"] == 0.3
    assert (tmp_path / "fig5_coherence_vs_eps_t.png").stat().st_size > 1000
    assert "eps_V=20, eps_T=8" in (tmp_path / "fdptm.csv").read_text()
    with pytest.raises(DPTopicError, match="eps_T sweep"):
        ml.fdptm_experiment(small_corpus, tmp_path, (20.0,), dp_algorithm="svi", verbose=0)
    with pytest.raises(DPTopicError, match="no epsilon parameter"):
        ml.fdptm_experiment(small_corpus, tmp_path, (20.0,), dp_algorithm="lda", eps_t_grid=(1.0,), verbose=0)


def test_experiment_cli_rejects_sweep_options_without_vocabulary(tmp_path, capsys):
    assert main(["experiment", "lira", "--corpus", "demo", "--dp-algorithm", "svi", "--eps-t-grid", "1",
                 "--out", str(tmp_path), "--quiet"]) == 2
    assert "--private-vocabulary" in capsys.readouterr().err


# item 14 -----------------------------------------------------------------------------------------------------------
def test_audit_model_trained_with_vocabulary_plots_every_variant(sotu_model_with_vocabulary, tmp_path, capsys,
                                                                  monkeypatch):
    from dptopic.attacks import metrics

    src, vocab, model, _ = sotu_model_with_vocabulary
    plotted = {}
    real = metrics.plot_roc
    monkeypatch.setattr(metrics, "plot_roc", lambda curves, path, title="", **kw: plotted.update(curves)
                        or real(curves, path, title, **kw))
    out = tmp_path / "a"
    assert main(["audit", "--model", str(model), "--corpus", str(src), "--shadows", "4", "--seed", "1",
                 "--out", str(out), "--quiet"]) == 0  # the model's own vocabulary, by default
    printed = capsys.readouterr().out
    names = set(json.loads((out / "audit.json").read_text())["attacks"])
    assert set(plotted) == names  # every variant the table shows is on roc.png
    for name in names:  # and no name is cut in the table
        assert name in printed
    out2 = tmp_path / "b"  # --vocabulary as for train
    assert main(["audit", "--model", str(model), "--corpus", str(src), "--vocabulary", str(vocab), "--shadows", "4",
                 "--seed", "1", "--out", str(out2), "--quiet"]) == 0


def test_audit_seed_and_set_errors(sotu_model_with_vocabulary, tmp_path, capsys):
    src = sotu_model_with_vocabulary[0]
    base = ["audit", "--algorithm", "lda", "--corpus", str(src), "--shadows", "4", "--out", str(tmp_path / "x"), "--quiet"]
    assert "--seed" in _bad_b(base + ["--set", "seed=5"], capsys)
    assert "seed" in _bad_b(base + ["--seed", "-1"], capsys)
    assert "n_topics" in _bad_b(base + ["--topics", "3", "--set", "n_topics=5"], capsys)
    assert "--topics" in _bad_b(["audit", "--model", str(sotu_model_with_vocabulary[2]), "--corpus", str(src), "--topics", "7",
                               "--out", str(tmp_path / "y"), "--quiet"], capsys)


# ------------------------------------------------------------------ audits and experiments
def _tiny_jsonl(path, n=120, seed=0):
    import json

    rng = np.random.default_rng(seed)
    themes = [["apple", "banana", "cherry", "grape", "melon"], ["engine", "wheel", "brake", "motor", "piston"],
              ["violin", "piano", "cello", "flute", "drums"]]
    path.write_text("\n".join(json.dumps({"text": " ".join(rng.choice(themes[i % 3], 12))}) for i in range(n)) + "\n")


def test_the_lp_audit_on_a_corpus_cut_vocabulary_claims_a_partial_guarantee(tmp_path, capsys):
    _tiny_jsonl(tmp_path / "d.jsonl")
    rc = main(["audit", "--algorithm", "lp", "--epsilon", "3", "--iterations", "2", "--topics", "3", "--corpus",
               str(tmp_path / "d.jsonl"), "--shadows", "4", "--seed", "5", "--quiet", "--out", str(tmp_path / "a")])
    out = " ".join(capsys.readouterr().out.split())
    assert rc in (0, None) and "partial guarantee" in out and "full guarantee" not in out


ROOT = Path(__file__).resolve().parents[2]


def _subparser(name):
    parser = build_parser()
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict) and name in action.choices:
            return action.choices[name]
    raise AssertionError(name)



# ---------------------------------------------------------------- finding 4: what an audit attacks
def test_audit_wording_says_the_procedure_was_audited_not_the_saved_model():
    from dptopic.attacks.lira import attacked_caption
    from dptopic.attacks.provenance import describe

    audited = {"what": "saved model", "model": "runs/m_doc", "class": "DocDPCooccurrence",
               "fingerprint": "sha256:08b1b12e209f2ea53a5a44", "params": {"n_topics": 20, "epsilon": 1.0}}
    corpus = {"spec": "demo", "read": "into the model's vocabulary"}
    line = describe(audited, corpus, 4)
    assert line.startswith("the training procedure of the saved model runs/m_doc (DocDPCooccurrence")
    assert "by retraining 4 shadow models on the corpus demo" in line
    assert line.endswith("the released model itself was not scored")
    assert "attacked the saved model" not in line
    procedure = describe({"what": "procedure", "algorithm": "lda", "class": "LDA",
                          "params": {"n_topics": 3, "alpha": 0.1}}, corpus, 4)
    assert "LDA: alpha = 0.1, n_topics = 3" in procedure and "{" not in procedure   # no dict repr
    caption = attacked_caption({"audited": audited, "corpus": corpus, "n_docs_audited": 10})
    assert caption.startswith("procedure of m_doc (DocDPCooccurrence") and " from m_doc" not in caption
    model_help = next(a.help for a in _subparser("audit")._actions if "--model" in a.option_strings)
    assert "training procedure" in model_help and "not scored" in model_help
    doc = (ROOT / "docs" / "auditing.md").read_text()
    assert "the saved model itself is\nnever scored" in doc or "the saved model itself is never scored" in doc


def test_audit_run_records_the_procedure_and_the_page_reads_well(hdp_cli_files, tmp_path, capsys):
    _, text, private = hdp_cli_files
    out = tmp_path / "a"
    assert main(["audit", "--model", str(private), "--corpus", str(text), "--shadows", "4", "--seed", "0",
                 "--quiet", "--out", str(out)]) == 0
    s = json.loads((out / "audit.json").read_text())["settings"]
    assert "not scored" in s["attacked"] and "4 shadow models" in s["attacked"]
    assert "{" not in s["trainer"] and "n_topics = 3" in s["trainer"]     # readable, not a dict's repr
    capsys.readouterr()
    page = tmp_path / "p.html"
    assert main(["report", str(private), "--audit", str(out), "--out", str(page)]) == 0
    html = page.read_text()
    assert "what was audited" in html and "the released model itself was not scored" in html
    trainer_row = re.search(r"<tr><th>trainer</th><td>(.*?)</td></tr>", html).group(1)
    assert trainer_row.startswith("HDPLDA: ") and "n_topics = 3" in trainer_row and "{" not in trainer_row
    # readable attack columns; the audit.json key stays in the tooltip
    assert ">TPR at FPR 0.1%</th>" in html and ">AUC SE over documents</th>" in html
    assert ">tpr_at_fpr_0.001</th>" not in html and "title='tpr_at_fpr_0.001'" in html
    assert "<table class='wide'>" in html


def _tiny(tmp_path):
    src = tmp_path / "tiny.txt"
    src.write_text("apple banana cherry\ndate elder fig\ngrape apple banana\n")
    return src


# ----------------------------------------------------------------- the one-run audit
def test_lira_only_flags_are_refused_with_one_run(tmp_path, capsys):
    from dptopic.cli.main import main

    for flags, name in ((["--shadows", "8"], "--shadows"), (["--jobs", "4"], "--jobs")):
        assert main(["audit", "--design", "one-run", "--algorithm", "lda", "--corpus", str(_tiny(tmp_path)),
                     "--out", str(tmp_path / "a"), *flags]) != 0
        err = capsys.readouterr().err
        assert f"{name} applies to the LiRA design only" in err and "Traceback" not in err


def test_too_many_canaries_names_the_flag_and_how_many_fit(tmp_path, capsys):
    from dptopic.cli.main import main

    assert main(["audit", "--design", "one-run", "--algorithm", "lda", "--topics", "2", "--iterations", "2",
                 "--corpus", str(_tiny(tmp_path)), "--canaries", "4", "--out", str(tmp_path / "a"), "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "at most 3 fit" in err and "--canaries" in err


def test_three_canaries_guess_instead_of_failing(tmp_path, capsys):
    """--canaries 3 (allowed: at least 2) failed on k_plus=0, k_minus=0, names the user never gave."""
    from dptopic.cli.main import main

    out = tmp_path / "a"
    assert main(["audit", "--design", "one-run", "--algorithm", "lda", "--topics", "2", "--iterations", "2",
                 "--corpus", str(_tiny(tmp_path)), "--canaries", "3", "--seed", "0", "--out", str(out),
                 "--quiet"]) == 0
    e = json.loads((out / "audit.json").read_text())["empirical_epsilon"]
    assert (e["k_plus"], e["k_minus"]) == (1, 1)


def test_audit_set_values_are_checked_before_any_shadow_model(tmp_path, capsys):
    from dptopic.cli.main import main

    assert main(["audit", "--algorithm", "hdp", "--set", "epsilon_inherent=abc", "--corpus", str(write_posts(tmp_path)),
                 "--out", str(tmp_path / "a")]) == 2
    cap = capsys.readouterr()
    assert "invalid epsilon_inherent='abc'" in cap.err and "shadow" not in (cap.out + cap.err).lower()


# ------------------------------------------------------------------ --score release, --user-field, --set names
def test_score_release_writes_the_bound_and_says_what_it_scored(docs, tmp_path, capsys):
    rc = main(["audit", "--design", "one-run", "--score", "release", "--algorithm", "docdp-cooc", "--epsilon", "8",
               "--corpus", str(docs), "--canaries", "1000", "--seed", "1", "--out", str(tmp_path / "a"), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert doc["score"] == "release" and doc["settings"]["score"] == "release"
    e = doc["empirical_epsilon"]
    assert e["n_canaries"] == 1000 and e["words_held"] == 1000 and e["epsilon_lower_bound"] > 2.3
    assert "scored on the release" in out and "ideal audit" in out
    assert "300 documents of --corpus" in doc["settings"]["scale"]


def test_canary_persons_against_a_per_document_claim_exceed_it(docs, tmp_path, capsys):
    rc = main(["audit", "--design", "one-run", "--score", "release", "--canary-unit", "person", "--canary-documents",
               "20", "--algorithm", "docdp-cooc", "--epsilon", "1", "--corpus", str(docs), "--canaries", "300",
               "--seed", "2", "--out", str(tmp_path / "a"), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0 and "verdict: exceeds the claim" in out and "does not cover the person" in out
    e = json.loads((tmp_path / "a" / "audit.json").read_text())["empirical_epsilon"]
    assert e["canary_unit"] == "person" and e["canary_documents"] == 20


@pytest.fixture(scope="module")
def people_file(tmp_path_factory):
    from dptopic.datasets import sotu_texts

    d = tmp_path_factory.mktemp("audit-people")
    texts = [t.replace("\n", " ") for t in sotu_texts()[0][:400]]
    (d / "people.jsonl").write_text("".join(json.dumps({"text": t, "user": f"p{i // 4}"}) + "\n"
                                            for i, t in enumerate(texts)))
    return d / "people.jsonl"


def test_a_user_level_model_is_audited_with_user_field(people_file, tmp_path, capsys):
    base = ["audit", "--design", "one-run", "--algorithm", "docdp-cooc", "--set", "unit=user", "--topics", "2",
            "--corpus", str(people_file), "--canaries", "20", "--canary-length", "10", "--seed", "1", "--quiet"]
    err = _error([*base, "--out", str(tmp_path / "no")], capsys)
    assert "--user-field FIELD" in err
    assert main([*base, "--user-field", "user", "--out", str(tmp_path / "a")]) == 0
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert doc["claimed_privacy"]["unit"] == "user"
    rc = main(["audit", "--design", "one-run", "--score", "release", "--canary-unit", "person", "--canary-documents",
               "5", "--algorithm", "docdp-cooc", "--set", "unit=user", "--user-field", "user", "--corpus", str(people_file),
               "--canaries", "50", "--seed", "1", "--out", str(tmp_path / "r"), "--quiet"])
    assert rc == 0
    assert json.loads((tmp_path / "r" / "audit.json").read_text())["claimed_privacy"]["unit"] == "user"


@pytest.mark.parametrize("args, fragment", [
    (["--design", "one-run", "--score", "release", "--algorithm", "lda"], "docdp-cooc, docdp, svi and hdp (DocDPCooccurrence, DocDPEM, DPSVI, HDPLDA) only"),
    (["--score", "release", "--algorithm", "docdp-cooc"], "--score applies to --design one-run only"),
    (["--design", "one-run", "--canary-unit", "person", "--algorithm", "docdp-cooc"], "--score release only"),
    (["--design", "one-run", "--score", "release", "--canary-documents", "5", "--algorithm", "docdp-cooc"],
     "--canary-unit person"),
    (["--design", "one-run", "--score", "release", "--canary-length", "5", "--algorithm", "docdp-cooc"],
     "--canary-length does not apply"),
    (["--design", "one-run", "--user-field", "user", "--algorithm", "docdp-cooc"], "user-level model only"),
    (["--algorithm", "fed", "--set", "delta=0.1"], "failure_rate"),
    (["--algorithm", "docdp-cooc", "--set", "budget=1"], "--epsilon (and --delta)"),
])
def test_audit_refusals_name_the_flag(args, fragment, tmp_path, capsys):
    err = _error(["audit", *args, "--corpus", "demo", "--out", str(tmp_path / "a")], capsys)
    assert fragment in err


def test_set_none_reads_as_none(docs, tmp_path, capsys):
    rc = main(["audit", "--design", "one-run", "--algorithm", "docdp-cooc", "--set", "max_false_words=none",
               "--topics", "2", "--corpus", str(docs), "--canaries", "10", "--canary-length", "10", "--seed", "1",
               "--out", str(tmp_path / "a"), "--quiet"])
    capsys.readouterr()
    assert rc == 0
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert doc["settings"]["audited"]["params"]["max_false_words"] is None


def test_the_audit_says_when_it_trains_on_fewer_documents_than_the_saved_model(tmp_path, capsys):
    from dptopic.attacks.audit import scale_note

    class Saved:
        training_stats_ = {"n_docs": 63_000}

    note = scale_note(5_000, Saved(), "lira")
    assert "2,500-document half of the 5,000 documents" in note
    assert "a 5,000-document subset of a 63,000-document procedure" in note
    assert "does not record" in scale_note(5_000, object(), "one-run")


@pytest.mark.parametrize("trainer, flags, relation", [
    ("svi", ["--epsilon", "4", "--set", "sampling_rate=0.5"], "add_remove"),
    ("hdp", ["--set", "epsilon_laplace=1", "--set", "epsilon_inherent=2", "--iterations", "3"], "replace")])
def test_score_release_audits_dpsvi_and_hdp_lda(docs, tmp_path, capsys, trainer, flags, relation):
    rc = main(["audit", "--design", "one-run", "--score", "release", "--algorithm", trainer, "--topics", "3", *flags,
               "--corpus", str(docs), "--canaries", "100", "--seed", "1", "--out", str(tmp_path / "a"), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0, out
    e = json.loads((tmp_path / "a" / "audit.json").read_text())["empirical_epsilon"]
    assert e["relation"] == relation and e["n_canaries"] == 100
    assert e["epsilon_lower_bound"] >= 0 and e["releases_scored"] >= 2


def test_the_audit_help_states_the_library_bounds():
    """The audit's parser states the bounds the library's audit reads: both from dptopic.attacks.settings, which
    loads nothing (the attacks load numpy)."""
    from dptopic.attacks import audit as library
    from dptopic.cli.parsers import audit

    assert (audit.COVERAGE_LIMIT, audit.MAX_SHADOWS, audit.ONE_RUN_CANARIES) == (
        library.COVERAGE_LIMIT, library.MAX_SHADOWS, library.ONE_RUN_CANARIES)
