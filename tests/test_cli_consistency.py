"""One spelling of a flag works wherever its meaning is the same (2026-11-24)."""
import json

import pytest

from dptopic.cli.main import main

WORDS = "apple pear fruit banana engine wheel brake car god know space orbit".split()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("m")
    docs = [" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(10)) for i in range(40)]
    (d / "c.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs))
    assert main(["train", "--algorithm", "lda", "--corpus", str(d / "c.jsonl"), "--topics", "2", "--iterations", "2",
                 "--seed", "0", "--quiet", "--out", str(d / "m")]) in (0, None)
    return d


@pytest.mark.parametrize("flag", ["-n", "--top-n", "--top"])
def test_words_per_topic_take_every_spelling(model, flag, capsys):
    capsys.readouterr()
    assert main(["topics", str(model / "m"), flag, "3", "--format", "json"]) in (0, None)
    topics = json.loads(capsys.readouterr().out)["topics"]
    assert all(len(t["words"]) == 3 for t in topics)
    assert main(["evaluate", str(model / "m"), "--corpus", str(model / "c.jsonl"), flag, "4", "--json"]) in (0, None)
    assert json.loads(capsys.readouterr().out)["top_n"] == 4
    assert main(["report", str(model / "m"), "--out", str(model / f"r{flag}.html"), flag, "2"]) in (0, None)
    assert (model / f"r{flag}.html").exists()
