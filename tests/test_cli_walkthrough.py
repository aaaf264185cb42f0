"""What a fuzzing walk-through of the command line found (2026-11-23), each pinned: one line, exit 2, no traceback,
and an exit status a shell pipeline can read."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True, env=ENV,
                          timeout=300, cwd=cwd)


def _one_line(r, *phrases):
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    for p in phrases:
        assert p in lines[0], lines[0]


@pytest.mark.parametrize("name, data, phrases", [
    ("l1.csv", ("text\n" + "plain words\n" * 50 + "Le café était réputé\n").encode("latin-1"),
     ("not UTF-8 text", "byte 0xe9 on line 52", "iconv")),
    ("l1.jsonl", '{"text": "Le café était"}\n'.encode("latin-1"), ("not UTF-8 text", "line 1")),
    ("l1.txt", "café résumé government\nthe dog\n".encode("latin-1"), ("not UTF-8 text", "byte 0xe9 on line 1")),
    ("u16.csv", "text\nhello world\n".encode("utf-16"), ("is UTF-16 text", "iconv -f UTF-16")),
    ("u16.txt", "hello world\n".encode("utf-16"), ("is UTF-16 text",)),
])
def test_text_that_is_not_utf8_is_refused_rather_than_read_without_its_accents(tmp_path, name, data, phrases):
    (tmp_path / name).write_bytes(data)
    _one_line(_cli("corpus", "info", tmp_path / name, "--stop-words", "none"), *phrases)


def test_utf8_with_accents_and_a_byte_order_mark_still_reads(tmp_path):
    (tmp_path / "ok.csv").write_bytes(("\ufefftext\n" + "le café était réputé\n" * 5).encode("utf-8"))
    r = _cli("corpus", "info", tmp_path / "ok.csv", "--stop-words", "none", "--json")
    assert r.returncode == 0, r.stderr
    import json

    assert "café" in [w["word"] for w in json.loads(r.stdout)["top_words"]]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "docs.txt").write_text("\n".join(["tax budget deficit spending revenue"] * 20
                                          + ["army navy war soldiers defense"] * 20))
    r = _cli("train", "--corpus", d / "docs.txt", "--algorithm", "lda", "--topics", "2", "--iterations", "5",
             "--out", d / "m", "--quiet")
    assert r.returncode == 0, r.stderr
    return d


@pytest.mark.parametrize("args", [("topics", "--model", "{m}"), ("corpus", "info", "demo"),
                                  ("corpus", "info", "demo", "--json")])
def test_a_reader_that_goes_away_gets_the_same_exit_status_from_every_output(model, args):
    args = [a.format(m=model / "m") for a in args]
    p = subprocess.Popen([sys.executable, "-m", "dptopic", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=ENV)
    p.stdout.close()                                           # `| head -0`: the reader is gone before any output
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 141 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_documents_without_a_word_of_the_model_say_so(model, tmp_path):
    (tmp_path / "zoo.txt").write_text("zebra quokka\nlemur yak\n")
    _one_line(_cli("evaluate", "--model", model / "m", "--corpus", tmp_path / "zoo.txt"),
              "none of the 2 documents has a word of the given vocabulary")


def test_report_files_of_the_other_kind_name_the_right_trainer(model, tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("tax\nbudget\ndeficit\narmy\nnavy\nwar\n")
    for unit, out, flag in (("document", "doc.rep", ["--epsilon-doc", "8"]), ("word", "word.rep", ["--epsilon-word", "3"])):
        r = _cli("randomize", "--corpus", model / "docs.txt", "--unit", unit, *flag, "--vocabulary", vocab, "--out",
                 tmp_path / out)
        assert r.returncode == 0, r.stderr
    _one_line(_cli("train", "--algorithm", "lp", "--reports", tmp_path / "doc.rep", "--topics", "2", "--out",
                   tmp_path / "x"), "document-level reports", "ldp-doc")
    _one_line(_cli("train", "--algorithm", "ldp-doc", "--reports", tmp_path / "word.rep", "--topics", "2", "--out",
                   tmp_path / "y"), "word-level reports", "--algorithm lp")


def test_recommend_suggests_only_what_train_accepts():
    for extra in (["--epsilon", "1e308"], ["--epsilon", "1", "--topics", "100000000"]):
        r = _cli("recommend", "--unit", "document", "--docs", "100", *extra)
        out = " ".join(r.stdout.split())
        assert r.returncode == 0 and "train it: not at these settings" in out and "--corpus FILE" not in out, r.stderr
    r = _cli("recommend", "--unit", "document", "--epsilon", "1", "--docs", "100")
    assert "train it: dptopic train --unit document --epsilon 1 --topics 20 --corpus FILE" in " ".join(r.stdout.split())


def test_a_shard_folder_given_to_corpus_info_is_named(model, tmp_path):
    r = _cli("corpus", "prepare", "--corpus", model / "docs.txt", "--shards", "2", "--out", tmp_path / "sh")
    assert r.returncode == 0, r.stderr
    _one_line(_cli("corpus", "info", tmp_path / "sh"), "folder of corpus shards")


def test_a_full_batch_budget_too_small_names_iterations_not_epochs():
    from dptopic.accounting.gaussian import calibrate_noise_multiplier
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="or fewer iterations") as e:
        calibrate_noise_multiplier(1e-300, 1e-5, 1.0, 3)
    assert "epochs" not in str(e.value)
    with pytest.raises(DPTopicError, match="fewer epochs or a smaller sampling rate"):
        calibrate_noise_multiplier(1e-300, 1e-5, 0.1, 30)
