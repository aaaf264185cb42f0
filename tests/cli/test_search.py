"""``dptopic search``: a private hyper-parameter search from the command line; the best run alone is released."""
import json

import numpy as np
import pytest

from helpers import one_line_stderr, run_dptopic

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
