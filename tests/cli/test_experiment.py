"""``dptopic experiment`` (and the Dask scheduler, transform's CSV, the Python API beside it): the ``--out`` marker lists each command's own files
and ``--overwrite`` deletes none (an earlier run's files stay, listed as ``earlier``); verdicts mark untestable claims
None (LiRA at low FPR, classifier-mia's Fig. 7 claims); arguments are checked before any work; one-line errors and
honest notes."""
import csv
import json
import socket
import time
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest

from dptopic._io import OUTPUT_MARKER, check_output_folder, mark_output_folder, refuse_other_writer
from dptopic.cli.main import main
from dptopic.errors import DPTopicError
from helpers import cli_error_line

REPO = Path(__file__).resolve().parents[2]


def _bad(args, capsys):
    try:
        rc = main([str(a) for a in args])
    except SystemExit as e:  # an argparse type check
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: ") and "Traceback" not in err, err
    return err


def _runs(folder) -> dict:
    return {c: r["files"] for c, r in json.loads((Path(folder) / OUTPUT_MARKER).read_text())["runs"].items()}


def _run(folder, command, writes, overwrite=True, share=False):
    """A command's run as the experiments make it: check, start, write ``writes``, finish."""
    check_output_folder(folder, overwrite=overwrite)
    if share:   # experiments share a folder with each other
        refuse_other_writer(folder, command, share_with="experiment ")
    else:
        refuse_other_writer(folder, command)
    mark_output_folder(folder, command)
    for name, text in writes.items():
        (Path(folder) / name).write_text(text)
    mark_output_folder(folder, command, done=True)


# ---- --overwrite rewrites a command's files and deletes none; the marker lists each run's files
def test_overwrite_deletes_nothing_and_lists_the_earlier_runs_files_apart(tmp_path):
    out = tmp_path / "fed"
    _run(out, "experiment fedlda", {"fedlda_table.csv": "20ng", "fedlda_budget.png": "20ng"}, overwrite=False)
    _run(out, "experiment fedlda", {"fedlda_table.csv": "sotu"})   # --no-figures this time
    assert (out / "fedlda_budget.png").read_text() == "20ng"      # the earlier run's figure stays ...
    assert (out / "fedlda_table.csv").read_text() == "sotu"
    assert _runs(out) == {"dptopic experiment fedlda": ["fedlda_table.csv"]}   # ... never listed as this run's
    mark = json.loads((out / OUTPUT_MARKER).read_text())
    assert mark["runs"]["dptopic experiment fedlda"]["earlier"] == ["fedlda_budget.png"]


def test_experiments_share_a_folder_and_keep_each_others_files(tmp_path):
    out = tmp_path / "figures"
    _run(out, "experiment fedlda", {"fedlda_table.csv": "a"}, overwrite=False)
    _run(out, "experiment svi", {"svi_fig1_demo.csv": "b"}, share=True)
    _run(out, "experiment svi", {"svi_fig1_demo.csv": "c"}, share=True)   # svi's own rerun keeps fedlda's table
    assert (out / "fedlda_table.csv").read_text() == "a"
    assert _runs(out) == {"dptopic experiment fedlda": ["fedlda_table.csv"],
                          "dptopic experiment svi": ["svi_fig1_demo.csv"]}
    with pytest.raises(DPTopicError, match="written by 'dptopic experiment"):
        refuse_other_writer(out, "audit")                            # an audit still never shares


def test_a_refused_folder_names_the_users_file(tmp_path):
    out = tmp_path / "hdp"
    _run(out, "experiment hdp-utility", {"hdp_utility.csv": "x"}, overwrite=False)
    (out / "mynotes.txt").write_text("mine")
    with pytest.raises(DPTopicError, match=r"holds mynotes\.txt, which dptopic did not write.*move it"):
        check_output_folder(out, overwrite=True)
    assert (out / "mynotes.txt").read_text() == "mine"


def test_a_model_folder_refused_for_a_users_file_names_it(tmp_path):
    from dptopic import LDA
    from dptopic._io import check_output_dir

    LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(["apple banana", "river lake"] * 4).save(tmp_path / "m")
    (tmp_path / "m" / "mine.txt").write_text("mine")
    with pytest.raises(DPTopicError, match=r"holds a dptopic model and also mine\.txt, which dptopic did not write"):
        check_output_dir(tmp_path / "m", overwrite=True)


def test_an_older_marker_is_read_and_its_files_are_never_deleted(tmp_path):
    out = tmp_path / "old"
    out.mkdir()
    for n in ("fedlda_table.csv", "lira.png"):
        (out / n).write_text("old")
    # an older dptopic listed every file present, whichever command wrote it
    (out / OUTPUT_MARKER).write_text(json.dumps({"written_by": "dptopic experiment fedlda",
                                                 "files": ["fedlda_table.csv", "lira.png"]}))
    _run(out, "experiment fedlda", {"fedlda_table.csv": "new"})
    assert (out / "lira.png").read_text() == "old"                 # kept: the old marker cannot say who wrote it
    mark = json.loads((out / OUTPUT_MARKER).read_text())
    assert mark["runs"] == {"dptopic experiment fedlda": {"files": ["fedlda_table.csv"]}}
    assert mark["kept"] == ["lira.png"]


def test_the_docs_figures_folder_takes_its_documented_fedlda_command(tmp_path):
    # docs/fedlda.md: `dptopic experiment fedlda --seed 0 --out docs/figures --overwrite` (on a copy, files faked)
    src = REPO / "docs" / "figures"
    out = tmp_path / "figures"
    out.mkdir()
    names = [e.name for e in src.iterdir()]
    for n in names:
        (out / n).write_bytes((src / n).read_bytes() if n == OUTPUT_MARKER else b"x")
    check_output_folder(out, overwrite=True, command="experiment fedlda")
    refuse_other_writer(out, "experiment fedlda", share_with="experiment ")
    mark_output_folder(out, "experiment fedlda")
    assert {e.name for e in out.iterdir()} == set(names)           # nothing is deleted when the run starts
    for n in ("fedlda_table.csv", "fedlda_summary.json"):           # a run that writes two of its six files
        (out / n).write_bytes(b"new")
    mark_output_folder(out, "experiment fedlda", done=True)
    assert {e.name for e in out.iterdir()} == set(names)
    mark = json.loads((out / OUTPUT_MARKER).read_text())
    fed = mark["runs"]["dptopic experiment fedlda"]
    assert fed["files"] == ["fedlda_summary.json", "fedlda_table.csv"]
    assert fed["earlier"] == ["fedlda_budget.png", "fedlda_figures.csv", "fedlda_ratio.png", "fedlda_topics.png"]
    assert {"svi_fig1_demo.png", "svi_fig1_20newsgroups.png", "report.png"} <= set(mark["kept"])   # still kept


# ---- arguments checked before any work; the classes that exist; help for every flag
def test_svi_sampling_rate_is_refused_before_the_corpus_is_read(tmp_path, capsys, monkeypatch):
    from dptopic.cli import _run_common

    monkeypatch.setattr(_run_common, "experiment_corpora", lambda *a, **k: pytest.fail("the corpus was read"))
    err = _bad(["experiment", "svi", "--sampling-rates", "0.1", "1.5", "--out", tmp_path / "s"], capsys)
    assert "--sampling-rates" in err and "1.5" in err and not (tmp_path / "s").exists()


def test_lira_shadows_are_refused_before_any_work(tmp_path, capsys):
    try:
        main(["experiment", "lira", "--shadows", "3", "--out", str(tmp_path / "l")])
    except SystemExit:
        pass
    err = capsys.readouterr().err
    assert "invalid --shadows 3" in err and "note: an experiment fits" not in err   # no work announced


@pytest.mark.parametrize("extra, expected", [
    (["--dp-algorithm", "svi", "--eps-t-grid", "1"], "error: --dp-algorithm, --eps-t-grid and --dp-set belong to the"
                                                     " FDPTM sweep: give --private-vocabulary too."),
    (["--private-vocabulary", "1", "--dp-algorithm", "svi"], "error: the eps_T sweep needs both a private trainer"
                                                             " (--dp-algorithm, e.g. svi) and --eps-t-grid."),
])
def test_the_fdptm_sweeps_settings_are_refused_in_the_flags_given(tmp_path, capsys, extra, expected):
    """experiments.manzonelli_lira refuses in its parameters (dp_algorithm, eps_t_grid); experiment lira writes
    flags."""
    assert _bad(["experiment", "lira", *extra, "--out", tmp_path / "l"], capsys) == expected
    assert not (tmp_path / "l").exists()


def test_unknown_classes_are_listed(tmp_path, capsys):
    docs = tmp_path / "lab.jsonl"
    docs.write_text("".join(json.dumps({"text": f"word{i % 7} game team win", "party": "AB"[i % 2]}) + "\n"
                            for i in range(20)))
    err = _bad(["experiment", "classifier-mia", "--corpus", docs, "--label-field", "party", "--classes", "Foo", "Bar",
                "--out", tmp_path / "c"], capsys)
    assert "Foo Bar" in err and "its classes are A, B" in err


def test_every_experiment_flag_has_help(capsys):
    with pytest.raises(SystemExit):
        main(["experiment", "hdp-utility", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "seeds 0, 1, ..., N-1" in text and "eps_L values" in text
    from dptopic.cli.main import build_parser

    sub = next(a for a in build_parser()._subparsers._group_actions if a.choices and "experiment" in a.choices)
    esub = next(a for a in sub.choices["experiment"]._subparsers._group_actions)
    missing = [(n, act.dest) for n, p in esub.choices.items() for act in p._actions
               if act.help is None and act.dest != "help"]
    assert not missing, missing


# ---- LiRA's low-FPR checks need 1/FPR non-member scores; the run's time is the whole run's
def test_lira_checks_at_an_fpr_the_sample_cannot_resolve_are_not_tested():
    from dptopic.experiments.manzonelli_lira import lira_checks

    attack = {"auc": 0.8, "tpr_at_fpr_0.01": 0.25, "tpr_at_fpr_0.001": 0.25}
    attacks = {"lira_online": attack, **{h: {"tpr_at_fpr_0.001": 0.0} for h in ("huang_entropy", "huang_std",
                                                                              "huang_max")}}
    checks, untested = lira_checks(attacks, n_nonmembers=100)
    assert checks["online LiRA auc >= published 0.75"] is True
    assert checks["online LiRA tpr_at_fpr_0.01 >= published 0.12"] is True        # 100 scores resolve 1%
    low = [c for c in checks if "0.001" in c or "0.1%" in c]
    assert len(low) == 4 and all(checks[c] is None and "1,000" in untested[c] for c in low)
    checks, _ = lira_checks(attacks, n_nonmembers=1000)
    assert all(v is True for v in checks.values())


def test_lira_command_says_not_tested_and_times_the_whole_run(tmp_path, capsys):
    out = tmp_path / "lira"
    assert main(["experiment", "lira", "--corpus", "demo", "--subsample", "60", "--topics", "2", "--max-vocab", "50",
                 "--shadows", "4", "--trainer", "cgs", "--cgs-iterations", "2", "--targets", "2", "--seed", "0",
                 "--jobs", "1", "--quiet", "--out", str(out)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "not tested online LiRA TPR@0.1% > huang_entropy" in text and "cannot resolve FPR 0.1%" in text
    s = json.loads((out / "results.json").read_text())
    assert s["n_scores"]["non_members"] == 60 and s["checks"]["online LiRA tpr_at_fpr_0.001 >= published 0.04"] is None
    assert s["paper_shape_checks"] == s["checks"] and s["untested"]


def test_lira_seconds_count_from_the_callers_start(monkeypatch, tmp_path):
    from dptopic.corpus import lda_corpus
    from dptopic.experiments.manzonelli_lira import lira_experiment

    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=10, alpha=0.5, beta=0.1, seed=0).corpus
    s = lira_experiment(c, tmp_path, trainer="cgs", n_topics=2, n_shadows=4, seed=0, n_jobs=1, cgs_iterations=2,
                        verbose=0, started=time.perf_counter() - 100.0)   # the corpus load took 100 s, say
    assert s["seconds"] >= 100.0


# ---- classifier-mia's verdict on the Fig. 7 claims
def test_fig7_checks_test_each_claim_and_leave_the_others_none():
    from dptopic.experiments.manzonelli_lira import fig7_checks

    # standard errors small enough that every difference read is significant (beyond 1.96 SE of the difference,
    # 0.014 here); rows without the target's standard errors compare its accuracy by the point estimates
    rows = [["lda", None, 0.56, 0.005, 0.90, 0.90],
            ["cdp", 1.0, 0.51, 0.005, 0.87, 0.87], ["cdp", 5.0, 0.54, 0.005, 0.905, 0.90],
            ["lp", 1.0, 0.53, 0.005, 0.73, 0.73], ["lp", 5.0, 0.50, 0.005, 0.89, 0.89]]
    checks, untested = fig7_checks(rows, ("lda", "cdp", "lp"))
    assert checks["(a) cdp: attack accuracy below non-private CGS (lda) at every eps"] is True
    assert checks["(a) cdp: attack accuracy grows with eps (higher at the largest eps than at the smallest)"] is True
    assert checks["(a) lp: attack accuracy grows with eps (higher at the largest eps than at the smallest)"] is False
    assert checks["(b) lp: prediction accuracy grows with eps (higher at the largest eps than at the smallest)"] is True
    assert checks["LP-LDA beats CDP-LDA at weak privacy (prediction accuracy at the largest eps)"] is False
    assert not untested and None not in checks.values()
    checks, untested = fig7_checks([r for r in rows if r[0] != "lp" and r[1] != 5.0], ("lda", "cdp"))
    assert checks["(b) cdp: prediction accuracy grows with eps (higher at the largest eps than at the smallest)"] is None
    assert "one value" in untested["(b) cdp: prediction accuracy grows with eps (higher at the largest eps than at the"
                                   " smallest)"]
    assert checks["LP-LDA beats CDP-LDA at weak privacy (prediction accuracy at the largest eps)"] is None


# ---- FedLDA's perplexity caveat
def test_fedlda_summary_says_the_none_rules_perplexity_is_not_comparable():
    from dptopic.experiments.fedlda import perplexity_caveat

    class Train:
        vocab_size = 1000

    table = [{"task": "20ng", "exclusion": "-", "epsilon_per_word": None, "report_words": None},
             {"task": "20ng", "exclusion": "none", "epsilon_per_word": 5.0, "report_words": 219},
             {"task": "20ng", "exclusion": "tail", "epsilon_per_word": 5.0, "report_words": None}]
    c = perplexity_caveat(table, {"20ng": (Train(), None, None, None)})
    assert "not comparable" in c["note"] and "Zipf" in c["note"]
    assert c["table_runs"] == {"20ng none eps=5": {"vocab_size": 1000, "words_outside_reports": 781}}
    assert perplexity_caveat(table[:1], {"20ng": (Train(),)}) is None


# ---- a refused scheduler port fails at once
def test_a_refused_scheduler_port_fails_at_once():
    pytest.importorskip("distributed")
    from dptopic.cli._cluster import cluster_from_args

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                   # nothing listens there now
    t0 = time.perf_counter()
    with pytest.raises(DPTopicError, match=r"cannot reach the Dask scheduler at .*connection refused"):
        with cluster_from_args(Namespace(scheduler=f"tcp://127.0.0.1:{port}", dask_local=None)):
            pass
    assert time.perf_counter() - t0 < 12.0     # Client(timeout="20s") was not waited on (a 3 s grace is)


def test_a_scheduler_that_listens_a_moment_later_is_reached():
    """A scheduler started just before the command (dask scheduler & then dptopic train) may not listen yet: a
    refusal is tried again for a short grace before it is final."""
    import struct
    import threading

    from dptopic.backends.cluster import REFUSED_GRACE, probe_scheduler

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()

    def late_scheduler():
        time.sleep(REFUSED_GRACE / 3)
        with socket.socket() as srv:
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("127.0.0.1", port))
            srv.listen()
            conn, _ = srv.accept()
            with conn:
                conn.sendall(struct.pack("<QQ", 64, 2))      # a Dask handshake's frame header

    t = threading.Thread(target=late_scheduler, daemon=True)
    t.start()
    assert probe_scheduler(f"tcp://127.0.0.1:{port}") is None
    t.join(5)


# ---- transform's CSV neither runs formulas in a spreadsheet nor rounds the proportions
def test_transform_csv_neutralises_formulas_and_keeps_every_digit(tmp_path, capsys):
    from dptopic import LDA

    texts = ["game team win score", "vote party law senate", "game score team", "law vote senate party"] * 5
    LDA(n_topics=3, n_iter=5, seed=0, verbose=0).fit(texts).save(tmp_path / "m")
    ids = ["=HYPERLINK(\"http://x\")", "+1x", "-2+3", "@sum", "\tt", "plain", "-1", "+4.5"]
    docs = tmp_path / "d.jsonl"
    docs.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts)))
    assert main(["transform", "--model", str(tmp_path / "m"), "--corpus", str(docs), "--out",
                 str(tmp_path / "t.csv")]) == 0
    with open(tmp_path / "t.csv", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    # plain signed numbers run nothing in a spreadsheet and stay as written, so joins on them hold
    assert [r[0] for r in rows] == ["'" + i for i in ids[:5]] + ["plain", "-1", "+4.5"]
    sums = np.array([sum(float(x) for x in r[1:]) for r in rows])
    assert np.all(np.abs(sums - 1.0) < 1e-9)


# ---- LocalDocumentLDA says why it takes no seed
def test_local_document_lda_refuses_a_seed_in_one_line():
    from dptopic.models import LocalDocumentLDA

    with pytest.raises(DPTopicError, match="takes no seed: it has no randomness of its own"):
        LocalDocumentLDA(n_topics=3, seed=0)
    assert "seed" not in LocalDocumentLDA().get_params()


# ---- the uniform-guess baseline and the short-run note
def test_topic_attack_gives_the_uniform_guess_and_hdp_utility_a_short_run_note(tiny, tmp_path):
    from dptopic import experiments

    tiny = tiny.corpus
    a = experiments.topic_attack_experiment(tiny, tmp_path / "a", n_topics=2, n_iter=2, seeds=range(1), n_targets=2)
    assert a["uniform_guess_p_true"] == pytest.approx(1 / tiny.vocab_size)
    tr, te = tiny.train_test_split(0.25, seed=0)
    h = experiments.hdp_utility(tr, te, tmp_path / "h", eps_grid=(1.0,), n_topics=2, n_iter=2, seeds=(0,))
    assert "too short to test the paper's shape" in h["short_run_note"] and "T = 100" in h["short_run_note"]
    assert json.loads((tmp_path / "h" / "hdp_utility_summary.json").read_text())["short_run_note"]


# ``dptopic experiment``: what the command does with its flags and files, and its one-line refusals.


def _ok(args, capsys):
    assert main(args) == 0
    capsys.readouterr()


def _bad_b(args, capsys):
    try:
        rc = main(args)
    except SystemExit as e:  # an argparse type check
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_experiment_out_rule(tmp_path, capsys):
    mine = tmp_path / "mydir"
    mine.mkdir()
    (mine / "topic_attack.csv").write_text("mine")
    args = ["experiment", "topic-attack", "--topics", "2", "--iterations", "2", "--seeds", "1", "--targets", "2",
            "--max-docs", "40"]
    assert "refusing" in _bad_b(args + ["--out", str(mine), "--overwrite"], capsys)
    assert (mine / "topic_attack.csv").read_text() == "mine"
    out = tmp_path / "ours"
    _ok(args + ["--out", str(out)], capsys)
    assert "--overwrite" in _bad_b(args + ["--out", str(out)], capsys)
    _ok(args + ["--out", str(out), "--overwrite"], capsys)


def test_every_experiment_has_overwrite():
    from dptopic.cli.main import build_parser

    ap = build_parser()
    sub = next(a for a in ap._subparsers._group_actions if a.choices and "experiment" in a.choices)
    exp = sub.choices["experiment"]
    esub = next(a for a in exp._subparsers._group_actions)
    for name, p in esub.choices.items():
        assert any("--overwrite" in act.option_strings for act in p._actions), name


@pytest.mark.parametrize("argv", [
    ["experiment", "hdp-utility", "--seeds", str(2 ** 63)], ["experiment", "topic-attack", "--seeds", "300000000"],
    ["experiment", "ldp-utility", "--seeds", "1001"], ["experiment", "svi", "--seeds", "300000000"],
    ["experiment", "lira", "--shadows", str(2 ** 63)], ["experiment", "lira", "--shadows", "10002"],
    ["experiment", "lira", "--k-grid", "2", "999999999"], ["experiment", "classifier-mia", "--shadows", "99999999"]])
def test_experiment_counts_that_would_never_finish_are_refused_before_any_work(tmp_path, capsys, argv):
    line = cli_error_line(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert "--seeds" in line or "--shadows" in line or "--k-grid" in line
    assert not (tmp_path / "out").exists()


def test_an_experiments_note_leaves_standard_error_to_the_error(tmp_path, capsys):
    line = cli_error_line(capsys, ["experiment", "hdp-utility", "--topics", "200000", "--iterations", "1", "--seeds", "1",
                                "--out", str(tmp_path / "out")])
    assert "200000" in line or "200,000" in line


def test_experiment_lira_shows_an_unresolved_tpr_as_nr_and_leaves_its_cell_empty(tmp_path, capsys):
    import csv

    rc = main(["experiment", "lira", "--corpus", "demo", "--subsample", "150", "--topics", "3", "--shadows", "4",
               "--max-vocab", "50", "--trainer", "cgs", "--cgs-iterations", "3", "--seed", "1", "--quiet", "--out", str(tmp_path / "l")])
    out = " ".join(capsys.readouterr().out.split())
    assert rc in (0, None)
    assert "TPR@0.1% n/r" in out and "n/r: fewer non-member scores than 1/FPR" in out
    assert "empirical epsilon lower bound" in out
    rows = list(csv.DictReader((tmp_path / "l" / "table1.csv").open()))
    assert rows and all(r["tpr_at_fpr_0.001"] == "" and r["tpr_at_fpr_0.01"] != "" for r in rows)
