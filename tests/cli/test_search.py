"""``dptopic search``: a private hyper-parameter search from the command line; the best run alone is released."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from dptopic.dataset_ledger.ledger import DatasetLedger
from helpers import SRC, one_line_stderr, run_dptopic

WORDS = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("search")
    rng = np.random.default_rng(0)
    halves = (WORDS[:7], WORDS[7:])
    with open(d / "docs.txt", "w") as f:
        for i in range(300):
            f.write(" ".join(rng.choice(halves[i % 2], 12)) + "\n")
    return d / "docs.txt"


def test_the_search_saves_the_best_run_and_its_card_states_the_search(corpus_file, tmp_path):
    L = tmp_path / "l.sqlite"
    r = run_dptopic("search", "--corpus", corpus_file, "--epsilon", "1", "--grid", "topics=2,3", "--expected-runs",
                    "2", "--ledger", L, "--dataset", "posts", "--out", tmp_path / "best")
    assert r.returncode == 0, r.stderr
    assert "secret number of runs" in r.stdout and "private search" in r.stdout
    meta = json.loads((tmp_path / "best" / "model.json").read_text())
    assert meta["params"]["n_topics"] in (2, 3) and not {"runs", "n_runs"} & set(meta["privacy"]["search"])
    assert meta["privacy_card"]["epsilon"] == pytest.approx(meta["privacy"]["search"]["epsilon"])
    shown = json.loads(run_dptopic("budget", "show", "--ledger", L, "--json").stdout)
    (d,) = shown["datasets"]
    assert [x["kind"] for x in d["releases"]] == ["search"]      # one release for the whole search


@pytest.mark.parametrize("grid, fragment", [("epsilon=1,2", "one budget for every run"),
                                            ("seed=1,2", "no option to search"),
                                            ("nothing=1", "--nothing is no option to search"),
                                            ("topics=2,x", "--grid topics=2,x"),
                                            ("topics", "is not NAME=V1,V2")])
def test_a_bad_grid_is_refused_in_one_line_naming_it(corpus_file, tmp_path, grid, fragment):
    r = run_dptopic("search", "--corpus", corpus_file, "--epsilon", "1", "--grid", grid, "--out", tmp_path / "m",
                    "--no-ledger")
    assert fragment in one_line_stderr(r) and not (tmp_path / "m").exists()


# ------------------------------------------------------------------ a reader that goes away, and Ctrl-C
def _search_process(corpus_file, tmp_path, *extra, stdout=subprocess.PIPE, ignore_sigint=False, runs=None):
    """``dptopic search`` in a real process (``runs``: K patched to that many runs, through main in ``python -c``);
    ``ignore_sigint``: started with SIGINT ignored, as a job a script runs in the background is."""
    code = "import sys\nfrom dptopic.cli.main import main\n"
    if runs is not None:
        code += f"from dptopic.training import private_search\nprivate_search.sample_runs = lambda *a, **k: {runs}\n"
    code += "sys.exit(main(sys.argv[1:]))\n"
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    argv = ["search", "--corpus", corpus_file, "--epsilon", "1", "--grid", "topics=2,3", "--expected-runs", "2",
            "--ledger", tmp_path / "l.sqlite", "--dataset", "posts", "--out", tmp_path / "best", *extra]
    return subprocess.Popen([sys.executable, "-c", code, *map(str, argv)], stdout=stdout, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path,
                            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint
                            else None)


def test_a_reader_that_goes_away_does_not_cost_the_search_its_model(corpus_file, tmp_path):
    """``dptopic search ... | head -1``: the model the release paid for is saved before anything is printed."""
    read, write = os.pipe()
    os.close(read)          # the reader is gone before the first line
    try:
        p = _search_process(corpus_file, tmp_path, stdout=write)
    finally:
        os.close(write)
    _, err = p.communicate(timeout=300)
    assert p.returncode in (0, 141), err
    assert "Traceback" not in err, err
    assert (tmp_path / "best" / "model.json").exists(), err
    (r,) = DatasetLedger(tmp_path / "l.sqlite").releases("posts")
    assert r["model_path"] == str((tmp_path / "best").resolve())


def test_ctrl_c_stops_a_search_started_with_sigint_ignored_and_says_what_stays_spent(corpus_file, tmp_path):
    """A search run in the background of a script inherits SIGINT ignored: it ran on after Ctrl-C. It now stops,
    releases nothing and says that the release recorded before its runs stays spent."""
    p = _search_process(corpus_file, tmp_path, ignore_sigint=True, runs=10 ** 9)
    L = tmp_path / "l.sqlite"
    try:
        for _ in range(600):        # until the search is recorded (its runs then go on for ever)
            if L.exists() and DatasetLedger(L).releases("posts"):
                break
            assert p.poll() is None, p.communicate()[1]
            time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    (r,) = DatasetLedger(L).releases("posts")
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("warning:")]
    assert p.returncode == 130 and len(lines) == 1, err
    assert lines[0].startswith("interrupted: the search was stopped and released nothing"), lines[0]
    assert f"release {r['id']} of dataset 'posts'" in lines[0] and "stays spent" in lines[0]
    assert not (tmp_path / "best").exists() and out == ""


# ------------------------------------------------------------------ the unit and the vocabulary, as train takes them
@pytest.fixture(scope="module")
def people_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("people")
    rng = np.random.default_rng(1)
    halves = (WORDS[:7], WORDS[7:])
    rows = [{"text": " ".join(rng.choice(halves[i % 2], 12)), "author": f"a{i % 60}"} for i in range(600)]
    (d / "posts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "words.txt").write_text("\n".join(WORDS) + "\n")
    return d


def test_a_user_level_search_over_a_public_vocabulary_is_charged_per_person(people_file, tmp_path):
    L = tmp_path / "l.sqlite"
    r = run_dptopic("search", "--corpus", people_file / "posts.jsonl", "--unit", "user", "--user-field", "author",
                    "--vocabulary", people_file / "words.txt", "--epsilon", "1", "--grid", "topics=2,3",
                    "--expected-runs", "2", "--ledger", L, "--dataset", "posts", "--out", tmp_path / "best")
    assert r.returncode == 0, r.stderr
    assert "--vocabulary" not in r.stderr      # the words are public: no warning sends the user to a missing flag
    meta = json.loads((tmp_path / "best" / "model.json").read_text())
    assert meta["privacy_card"]["privacy_unit"] == "user" and meta["privacy_card"]["guarantee"] == "full"
    assert meta["privacy"]["vocabulary_list"]["name"] == "words.txt"     # the list's name (train's record)
    (rel,) = DatasetLedger(L).releases("posts")
    total = DatasetLedger(L).person_total("a0")         # 10 documents, one person: charged once
    assert rel["unit"] == "user" and total["releases"] == [{"release": rel["id"], "group": 1}]
    assert total["epsilon"] == pytest.approx(meta["privacy"]["search"]["epsilon"], rel=1e-6)


def test_a_search_with_a_private_vocabulary_and_no_public_vectors(corpus_file, tmp_path):
    L = tmp_path / "l.sqlite"
    r = run_dptopic("search", "--corpus", corpus_file, "--private-vocabulary", "4,1e-6", "--public-vectors", "none",
                    "--epsilon", "1", "--grid", "topics=2", "--expected-runs", "2", "--ledger", L, "--dataset",
                    "posts", "--out", tmp_path / "best")
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "best" / "model.json").read_text())
    assert meta["params"]["public_vectors"] == "none" and "public_vectors" not in meta["privacy"]
    assert meta["privacy_card"]["vocabulary_source"] == "private"
    (rel,) = DatasetLedger(L).releases("posts")
    assert [e["type"] for e in rel["events"]] == ["approximate_dp", "random_stopping"]
    assert meta["privacy_card"]["epsilon"] == pytest.approx(rel["epsilon"], rel=1e-6)


@pytest.mark.parametrize("extra, fragment", [
    (("--unit", "word"), "--unit word trains hdp"),
    (("--user-field", "author"), "--user-field is for a guarantee per person"),
    (("--unit", "user"), "--user-field FIELD"),
    (("--unit", "user", "--user-field", "author", "--private-vocabulary", "1,1e-6"), "per document, not per person"),
    (("--unit", "user", "--user-field", "author", "--algorithm", "svi"), "--algorithm svi cannot give it"),
    (("--algorithm", "docdp", "--public-vectors", "none"), "--public-vectors has no effect with --algorithm docdp"),
    (("--public-vectors", "none", "--grid", "public-vectors=none"), "give it once"),
    (("--vocabulary", "words.txt", "--private-vocabulary", "1,1e-6"), "not both"),
    (("--vocabulary-policy", "laplace"), "--vocabulary-policy applies to --private-vocabulary"),
    (("--vocabulary", "missing.txt"), "vocabulary file 'missing.txt' not found"),
])
def test_the_units_and_vocabularys_refusals_are_trains_in_one_line(people_file, tmp_path, extra, fragment):
    extra = [str(people_file / x) if x == "words.txt" else x for x in extra]
    L = tmp_path / "l.sqlite"
    r = run_dptopic("search", "--corpus", people_file / "posts.jsonl", "--epsilon", "1", "--grid", "topics=2",
                    "--ledger", L, "--out", tmp_path / "m", *extra)
    assert fragment in one_line_stderr(r)
    assert not (tmp_path / "m").exists() and (not L.exists() or not DatasetLedger(L).releases())


# ------------------------------------------------------------------ the mean number of runs: one rule, both commands
@pytest.mark.parametrize("mean", ["0.5", "1", "1e300"])
def test_search_and_budget_plan_refuse_the_same_means_of_runs(corpus_file, tmp_path, mean):
    L = tmp_path / "l.sqlite"
    assert run_dptopic("train", "--corpus", corpus_file, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics",
                       "2", "--test-size", "0", "--ledger", L, "--dataset", "posts", "--out", tmp_path / "m",
                       "--quiet").returncode == 0
    search = one_line_stderr(run_dptopic("search", "--corpus", corpus_file, "--epsilon", "1", "--grid", "topics=2",
                                         "--expected-runs", mean, "--ledger", L, "--out", tmp_path / "s"))
    plan = one_line_stderr(run_dptopic("budget", "plan", "--ledger", L, "--dataset", "posts", "--algorithm",
                                       "docdp-cooc", "--epsilon", "1", "--search-runs", mean))
    rule = "a private search's mean number of runs must lie in (1, 1e+06]"
    assert rule in search and "--expected-runs" in search, search
    assert rule in plan and "--search-runs" in plan, plan
    assert len(DatasetLedger(L).releases("posts")) == 1 and not (tmp_path / "s").exists()
