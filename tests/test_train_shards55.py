"""``dptopic train`` on a shard folder (review 55): a trainer that cannot stream shards is refused before anything
is read, naming the ones that can (online-vb and svi said "only training reads a shard folder whole" from inside
training; fed printed the shard header, then an API message); ``--test-size``, which a shard folder cannot honour,
is refused rather than ignored."""
import numpy as np
import pytest

from dptopic.cli.main import main


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards55")
    words = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()
    rng = np.random.default_rng(0)
    src = tmp / "docs.txt"
    src.write_text("\n".join(" ".join(rng.choice(words, 12)) for _ in range(60)) + "\n")
    out = tmp / "sh"
    assert main(["corpus", "prepare", "--corpus", str(src), "--shards", "2", "--out", str(out) + "/"]) == 0
    return out


@pytest.mark.parametrize("args", [["--algorithm", "online-vb", "--epochs", "1"],
                                  ["--algorithm", "svi", "--epsilon", "1"],
                                  ["--algorithm", "fed", "--rounds", "2"]])
def test_a_trainer_that_cannot_stream_shards_is_refused_first(shards, tmp_path, capsys, args):
    capsys.readouterr()
    assert main(["train", "--corpus", str(shards), "--topics", "2", *args, "--out", str(tmp_path / "m")]) != 0
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and f"--algorithm {args[1]} cannot train from a shard folder" in err[0]
    assert "lda/cdp/cdp+/hdp/docdp/docdp-cooc" in err[0] and "corpus:" not in cap.out


def test_test_size_on_a_shard_folder_is_refused(shards, tmp_path, capsys):
    capsys.readouterr()
    assert main(["train", "--corpus", str(shards), "--topics", "2", "--iterations", "2", "--test-size", "0.3",
                 "--out", str(tmp_path / "m")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--test-size has no effect on a shard folder" in err[0]
    # without it, the same folder trains
    assert main(["train", "--corpus", str(shards), "--topics", "2", "--iterations", "2", "--seed", "0", "--quiet",
                 "--out", str(tmp_path / "m2")]) == 0
