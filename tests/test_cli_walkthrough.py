"""What a fuzzing walk-through of the command line found (2026-11-23), each pinned: one line, exit 2, no traceback,
and an exit status a shell pipeline can read."""
import json
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


def test_corpus_info_summarises_a_shard_folder_as_the_one_file_corpus(model, tmp_path):
    # the shards are read one at a time; the summary is the one of the same corpus prepared as one file (bar the
    # shards' own record), and options that would read text again are refused in one line
    for out, extra in ((tmp_path / "sh", ["--shards", "3"]), (tmp_path / "one.npz", [])):
        r = _cli("corpus", "prepare", "--corpus", model / "docs.txt", "--out", out, *extra)
        assert r.returncode == 0, r.stderr
    sharded, whole = (_cli("corpus", "info", p, "--json", "--top", "50") for p in (tmp_path / "sh", tmp_path / "one.npz"))
    assert sharded.returncode == 0 and whole.returncode == 0, sharded.stderr + whole.stderr
    a, b = json.loads(sharded.stdout), json.loads(whole.stdout)
    a.pop("metadata", None), b.pop("metadata", None)
    assert a == b and a["documents"] > 3 and len(a["top_words"]) > 5
    _one_line(_cli("corpus", "info", tmp_path / "sh", "--max-vocab", "5"), "folder of corpus shards",
              "--max-vocab does not apply")


def test_a_full_batch_budget_too_small_names_iterations_not_epochs():
    from dptopic.accounting.gaussian import calibrate_noise_multiplier
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="or fewer iterations") as e:
        calibrate_noise_multiplier(1e-300, 1e-5, 1.0, 3)
    assert "epochs" not in str(e.value)
    with pytest.raises(DPTopicError, match="fewer epochs or a smaller sampling rate"):
        calibrate_noise_multiplier(1e-300, 1e-5, 0.1, 30)


# ---- flags that did nothing, values changed silently, inputs read loosely (the list left at stop 39)
def test_a_field_flag_on_a_format_without_fields_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("hello world again\nfoo bar baz\n")
    _one_line(_cli("corpus", "info", tmp_path / "a.txt", "--text-field", "body"),
              "--text-field names a JSONL field or CSV column", "file of one document per line", "drop it")
    _one_line(_cli("corpus", "info", "demo", "--label-field", "party"), "--label-field", "the built-in corpus")
    (tmp_path / "a.jsonl").write_text('{"body": "hello world again"}\n')   # where the flag applies, it still works
    r = _cli("corpus", "info", tmp_path / "a.jsonl", "--text-field", "body", "--stop-words", "none")
    assert r.returncode == 0, r.stderr


def test_report_refuses_reference_flags_without_a_reference(model, tmp_path):
    for flag in (("--format", "csv"), ("--reference-public",), ("--text-field", "body")):
        _one_line(_cli("report", "--model", model / "m", "--out", tmp_path / "r.html", *flag),
                  f"{flag[0]} describe", "add --reference CORPUS")
    assert not (tmp_path / "r.html").exists()


def test_privacy_hdp_takes_one_question_at_a_time():
    _one_line(_cli("privacy", "hdp", "--clip", "10", "--epsilon", "2000", "--epsilon-laplace", "0.1"),
              "give at most one of --epsilon", "--epsilon-laplace")
    r = _cli("privacy", "hdp", "--clip", "10")
    assert r.returncode == 0 and "give --epsilon to split" in " ".join(r.stdout.split()), r.stdout


def test_audit_refuses_more_targets_than_shadows(model):
    _one_line(_cli("audit", "--algorithm", "lda", "--corpus", model / "docs.txt", "--shadows", "4", "--targets", "9",
                   "--out", model / "audit"), "invalid --targets 9", "at most --shadows (4)")


def test_lira_records_the_targets_it_attacked():
    import numpy as np

    from dptopic.attacks.lira import ShadowScores, run_lira
    from dptopic.corpus import Corpus

    rng = np.random.default_rng(0)
    n, d = 4, 6
    members = np.zeros((n, d), bool)
    members[0::2, :3] = members[1::2, 3:] = True
    shadows = ShadowScores(scores=rng.normal(size=(n, d)), members=members, huang={}, privacy=None, n_excluded=0)
    corpus = Corpus.from_texts(["tax war"] * d, stop_words=None)
    res = run_lira(corpus, None, shadows=shadows, n_targets=99)
    assert res.settings["n_targets"] == n


def test_train_says_save_metrics_changes_nothing_without_privacy(model, tmp_path):
    r = _cli("train", "--corpus", model / "docs.txt", "--algorithm", "lda", "--topics", "2", "--iterations", "2",
             "--out", tmp_path / "m", "--quiet", "--save-metrics")
    assert r.returncode == 0, r.stderr
    assert "--save-metrics changes nothing here" in " ".join(r.stdout.split())


def test_svi_budget_beyond_the_least_noise_warns_with_what_it_spends():
    import dptopic

    with pytest.warns(UserWarning, match=r"spends epsilon = 50\.4\d, below the budget"):
        m = dptopic.DPSVI.from_budget(1e308, 1e-5, n_topics=3)
    assert m.noise_multiplier == 0.25
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")       # a budget the noise can meet says nothing
        dptopic.DPSVI.from_budget(1.0, 1e-5, n_topics=3)


@pytest.mark.parametrize("data, phrase", [(bytes(range(256)) * 8, "binary file"), ("café\n".encode("latin-1"), "not UTF-8")])
def test_stop_word_and_vocabulary_files_are_read_as_strict_utf8(tmp_path, data, phrase):
    (tmp_path / "w.txt").write_bytes(data)
    _one_line(_cli("corpus", "info", "demo", "--stop-words", tmp_path / "w.txt"), phrase)
    _one_line(_cli("train", "--corpus", "demo", "--vocabulary", tmp_path / "w.txt", "--out", tmp_path / "m"), phrase)


def test_a_corpus_of_another_format_version_is_refused(tmp_path):
    import io
    import json

    import numpy as np

    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

    Corpus.from_texts(["tax budget deficit", "army navy war"], stop_words=None).save(tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes().decode())
    assert meta["version"] == 1
    meta["version"] = 2
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    (tmp_path / "c.npz").write_bytes(buf.getvalue())
    with pytest.raises(DPTopicError, match="format version 2, and this dptopic reads version 1"):
        Corpus.load(tmp_path / "c.npz")


def test_records_sharing_an_id_are_refused(tmp_path):
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

    (tmp_path / "d.jsonl").write_text('{"id": "a", "text": "hello world again"}\n{"id": "b", "text": "x y z"}\n'
                                      '{"id": "a", "text": "foo bar baz"}\n')
    with pytest.raises(DPTopicError, match="records 1 and 3 share the id 'a'"):
        Corpus.from_jsonl(tmp_path / "d.jsonl", id_field="id")
    with pytest.warns(UserWarning, match=r"records 1 and 3 share the field 'id' value 'a', so the documents are named doc0"):
        c = Corpus.from_jsonl(tmp_path / "d.jsonl", id_field="id", require_ids=False, stop_words=None)
    assert c.doc_ids[0] == "doc0"
    (tmp_path / "d.csv").write_text("id,text\n1,hello world\n1,foo bar\n")
    with pytest.raises(DPTopicError, match="records 1 and 2 share the id '1'"):
        Corpus.from_csv(tmp_path / "d.csv", id_column="id")


def test_a_database_other_than_sqlite_or_postgresql_is_named_not_left_to_a_missing_driver():
    from dptopic.service.storage import Storage, StorageError

    for url in ("mysql://u@localhost/x", "mssql+pyodbc://u@dsn"):
        with pytest.raises(StorageError, match=r"is not supported: the service stores its data in SQLite"):
            Storage(url)


def test_one_attempt_is_not_plural():
    import socket

    from dptopic.service.client import ServerError, ServiceClient

    with socket.socket() as s:          # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ServerError, match=r"failed after 1 attempt \("):
        ServiceClient(f"http://127.0.0.1:{port}", retries=0, timeout=2).request("GET", "/v1/config")
    with pytest.raises(ServerError, match=r"failed after 2 attempts \("):
        ServiceClient(f"http://127.0.0.1:{port}", retries=1, timeout=2, backoff=0.01).request("GET", "/v1/config")


@pytest.mark.parametrize("rows, where", [("1 1 x\n", "line 4, field 3 is 'x', not a whole number"),
                                         ("1 1 2\n1 2 2.5\n", "line 5, field 3 is '2.5', not a whole number"),
                                         ("1 1 2\n2 2\n", "line 5 has 2 fields, not 3")])
def test_a_bad_uci_line_is_named_by_its_line_in_the_file(tmp_path, rows, where):
    (tmp_path / "vocab.x.txt").write_text("a\nb\nc\nd\n")
    (tmp_path / "docword.x.txt").write_text(f"3\n4\n{rows.count(chr(10))}\n{rows}")
    _one_line(_cli("corpus", "info", tmp_path / "docword.x.txt", "--vocab", tmp_path / "vocab.x.txt"), where)


def test_a_model_folder_may_be_given_as_privacy_verify_takes_it(model):
    m = model / "m"
    a, b = _cli("topics", m, "--format", "csv"), _cli("topics", "--model", m, "--format", "csv")
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout.startswith("topic,rank,word,weight"), a.stderr
    r = _cli("evaluate", m, "--corpus", model / "docs.txt", "--json")
    assert r.returncode == 0 and '"npmi"' in r.stdout, r.stderr
    _one_line(_cli("topics"), "no model given", "dptopic topics MODEL, or --model MODEL")
    _one_line(_cli("topics", m, "--model", model / "other"), "two models given")
    assert _cli("topics", m, "--model", m, "--format", "csv").stdout == a.stdout     # the same folder twice is fine


def test_a_bad_uci_line_after_blank_lines_is_still_named_by_its_line(tmp_path):
    (tmp_path / "vocab.x.txt").write_text("a\nb\nc\nd\n")
    (tmp_path / "docword.x.txt").write_text("2\n4\n3\n1 1 2\n\n1 2 1\n2 3 x\n")
    _one_line(_cli("corpus", "info", tmp_path / "docword.x.txt", "--vocab", tmp_path / "vocab.x.txt"),
              "line 7, field 3 is 'x'")
    (tmp_path / "docword.y.txt").write_text("2\n4\n3\n1 1 2\n\n\n2 3\n")
    _one_line(_cli("corpus", "info", tmp_path / "docword.y.txt", "--vocab", tmp_path / "vocab.x.txt"),
              "line 7 has 2 fields, not 3")


def test_train_on_a_word_list_counts_stop_words_and_case_when_told_and_refuses_data_cuts(tmp_path):
    # (walk-through, 2026-11-24) with --vocabulary, --stop-words and --no-lowercase were silently ignored, so the
    # warning's own advice ("pass --stop-words none to count them") could not be followed; --max-vocab was ignored
    import random

    rnd = random.Random(7)
    words = "The the apple Apple banana BANANA cherry grape of and".split()
    (tmp_path / "t.txt").write_text("\n".join(" ".join(rnd.choices(words, k=8)) for _ in range(40)) + "\n")
    (tmp_path / "v.txt").write_text("the\nThe\napple\nApple\nbanana\ncherry\n")
    base = ["train", "--corpus", tmp_path / "t.txt", "--vocabulary", tmp_path / "v.txt", "--topics", "2",
            "--iterations", "2", "--seed", "0", "--quiet"]

    def tokens(out, *extra):
        r = _cli(*base, *extra, "--out", tmp_path / out)
        assert r.returncode == 0, r.stderr
        return " ".join(r.stdout.split())

    plain, counted = tokens("a"), tokens("b", "--stop-words", "none", "--no-lowercase")
    text = (tmp_path / "t.txt").read_text().split()
    exact = sum(w in {"the", "The", "apple", "Apple", "banana", "cherry"} for w in text)
    assert f"{exact} tokens" in counted and f"{exact} tokens" not in plain
    _one_line(_cli(*base, "--max-vocab", "3", "--out", tmp_path / "c"), "--vocabulary gives the words", "--max-vocab")
    r = _cli("train", "--corpus", tmp_path / "t.txt", "--unit", "document", "--epsilon", "1", "--delta", "1e-5",
             "--private-vocabulary", "5,1e-3", "--max-df", "0.5", "--out", tmp_path / "d")
    _one_line(r, "--private-vocabulary chooses the words", "--max-df")
    assert not (tmp_path / "c").exists() and not (tmp_path / "d").exists()


def test_corpus_prepare_on_a_word_list_counts_stop_words_when_told(tmp_path):
    (tmp_path / "t.txt").write_text("the apple banana the cherry\nthe apple the banana\n")
    (tmp_path / "v.txt").write_text("the\napple\nbanana\ncherry\n")
    r = _cli("corpus", "prepare", "--corpus", tmp_path / "t.txt", "--vocabulary", tmp_path / "v.txt", "--stop-words",
             "none", "--out", tmp_path / "c.npz")
    assert r.returncode == 0, r.stderr
    from dptopic.corpus import Corpus

    assert Corpus.load(tmp_path / "c.npz").n_tokens == 9        # "the" counted four times
    _one_line(_cli("corpus", "prepare", "--corpus", tmp_path / "t.txt", "--vocabulary", tmp_path / "v.txt",
                   "--min-df", "2", "--out", tmp_path / "d.npz"), "--vocabulary gives the words", "--min-df")


def test_stop_words_beside_a_word_list_on_a_prepared_corpus_are_refused(tmp_path):
    # (review, 2026-11-24) they were silently ignored there, while text read with them drops the list's stop words
    (tmp_path / "t.txt").write_text("the apple banana the cherry\nthe apple the banana\ncherry the apple\n" * 10)
    (tmp_path / "v.txt").write_text("the\napple\nbanana\ncherry\n")
    assert _cli("corpus", "prepare", "--corpus", tmp_path / "t.txt", "--stop-words", "none", "--out",
                tmp_path / "c.npz").returncode == 0
    _one_line(_cli("train", "--corpus", tmp_path / "c.npz", "--vocabulary", tmp_path / "v.txt", "--stop-words",
                   "english", "--topics", "2", "--out", tmp_path / "m"), "--stop-words applies to raw text")
    # no stop words ("none", also what randomize and serve ask for) removes nothing, so it stays allowed
    r = _cli("train", "--corpus", tmp_path / "c.npz", "--vocabulary", tmp_path / "v.txt", "--stop-words", "none",
             "--topics", "2", "--iterations", "2", "--out", tmp_path / "m2", "--quiet")
    assert r.returncode == 0, r.stderr
