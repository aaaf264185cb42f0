"""``dptopic corpus prepare`` and ``corpus info``: the loaders and shard folders through the CLI, each refusal in one
line."""
import argparse
import errno
import gzip
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import dptopic
from dptopic.backends import ShardSet, training_source
from dptopic.cli.main import main
from dptopic.corpus import Corpus
from dptopic.corpus.corpus import data_cut_of
from dptopic.errors import DPTopicError
from helpers import FOUR_DOCS_TEXT, SMALL_PRIVATE_TRAINERS, cli_error_line, one_line_stderr, prepare_shards, run_dptopic


def _disk_full_on_write(monkeypatch, which: int):
    """Corpus.save's atomic write raises ENOSPC on its ``which``-th call (the disk fills while a shard is written)."""
    import dptopic.corpus.corpus as C

    real, calls = C.atomic_write_bytes, {"n": 0}

    def flaky(path, data, **kw):
        calls["n"] += 1
        if calls["n"] == which:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data, **kw)

    monkeypatch.setattr(C, "atomic_write_bytes", flaky)


# ---------------------------------------------------------------- 1. a failed --shards --overwrite keeps the old set
def test_failed_shard_overwrite_keeps_the_old_complete_set(tmp_path, capsys, monkeypatch):
    out = tmp_path / "sh"
    assert prepare_shards(tmp_path, out, 4) == 0
    before = {p.name: p.read_bytes() for p in out.glob("shard-*.npz")}
    marker = (out / ".dptopic-output").read_text()
    capsys.readouterr()
    _disk_full_on_write(monkeypatch, 2)
    assert prepare_shards(tmp_path, out, 2, "--overwrite") == 2       # the old code deleted the old set first
    assert "No space left" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.glob("shard-*.npz")} == before
    assert not list(out.glob(".shard-*"))                              # no temporaries left behind
    assert json.loads((out / ".dptopic-output").read_text())["runs"] == json.loads(marker)["runs"]
    src = training_source(out)
    assert src.n_docs == 4 and len(src.paths) == 4
    monkeypatch.undo()
    assert prepare_shards(tmp_path, out, 2, "--overwrite") == 0       # a smaller set replaces it, extras removed
    assert sorted(p.name for p in out.glob("shard-*.npz")) == ["shard-00000.npz", "shard-00001.npz"]
    assert training_source(out).n_docs == 4


def test_failed_first_shard_run_leaves_no_folder(tmp_path, capsys, monkeypatch):
    _disk_full_on_write(monkeypatch, 2)
    assert prepare_shards(tmp_path, tmp_path / "new", 4) == 2
    assert not (tmp_path / "new").exists()


# ---------------------------------------------------------------- 2. the default --max-vocab says what it cut
def _uci_big(tmp_path, V=30, D=12):
    (tmp_path / "vocab.big.txt").write_text("".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26)}\n" for i in range(V)))
    rows = [(d, w) for d in range(1, D + 1) for w in range(1, V + 1) if (d + w) % 3 == 0]
    (tmp_path / "docword.big.txt").write_text(f"{D}\n{V}\n{len(rows)}\n" + "".join(f"{d} {w} 2\n" for d, w in rows))
    return tmp_path / "docword.big.txt"


def test_uci_file_keeps_its_own_vocabulary_unless_max_vocab_is_given(tmp_path, capsys, monkeypatch):
    import dptopic.datasets as datasets

    monkeypatch.setattr(datasets, "DEFAULT_MAX_VOCAB", 10)
    dw = _uci_big(tmp_path)
    assert main(["corpus", "info", str(dw), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["vocabulary_size"] == 30
    assert main(["corpus", "info", str(dw), "--json", "--max-vocab", "5"]) == 0
    assert json.loads(capsys.readouterr().out)["vocabulary_size"] == 5


def test_default_max_vocab_says_how_much_it_kept(tmp_path, capsys):
    words = [f"w{chr(97 + i // 676)}{chr(97 + i // 26 % 26)}{chr(97 + i % 26)}" for i in range(1200)]
    (tmp_path / "t.txt").write_text("".join(" ".join(words[i:i + 60]) + "\n" for i in range(0, 1200, 60)))
    assert main(["corpus", "info", str(tmp_path / "t.txt"), "--json"]) == 0
    err = capsys.readouterr().err
    assert "--max-vocab 1000 (the default) kept the 1000 most frequent of 1200 words, 83% of the 1200 tokens" in err
    assert main(["corpus", "info", str(tmp_path / "t.txt"), "--json", "--max-vocab", "2000"]) == 0
    assert "--max-vocab" not in capsys.readouterr().err


# ---------------------------------------------------------------- 7, 8, 9. malformed JSONL and UCI lines
@pytest.mark.parametrize("line, kind", [("42", "a number"), ('"hello"', "a string"), ("null", "null")])
def test_jsonl_scalar_line_is_named_for_what_it_is(tmp_path, capsys, line, kind):
    p = tmp_path / "d.jsonl"
    p.write_text('{"text": "apple banana cherry"}\n' + line + "\n")
    err = cli_error_line(capsys, ["corpus", "info", str(p)])
    assert f"line 2 is {kind}, not a JSON object" in err and "--text-field" not in err


def test_uci_duplicate_entry_is_refused_with_its_line(tmp_path, capsys):
    (tmp_path / "vocab.dup.txt").write_text("apple\nbanana\ncherry\ndurian\n")
    (tmp_path / "docword.dup.txt").write_text("2\n4\n4\n1 1 2\n2 3 1\n1 1 3\n2 4 5\n")
    err = cli_error_line(capsys, ["corpus", "info", str(tmp_path / "docword.dup.txt")])
    assert "line 6 repeats the entry of line 4 (document 1, word 1)" in err


@pytest.mark.parametrize("W", [4, 5])
def test_uci_blank_vocabulary_line_is_refused_with_its_number(tmp_path, capsys, W):
    (tmp_path / "vocab.b.txt").write_text("apple\n\nbanana\ncherry\ndurian\n")
    (tmp_path / "docword.b.txt").write_text(f"2\n{W}\n3\n1 1 2\n1 2 1\n2 3 1\n")
    err = cli_error_line(capsys, ["corpus", "info", str(tmp_path / "docword.b.txt")])
    assert "line 2 is blank" in err


def test_uci_document_id_above_d_names_its_line_and_value(tmp_path, capsys):
    (tmp_path / "vocab.d.txt").write_text("apple\nbanana\ncherry\n")
    (tmp_path / "docword.d.txt").write_text("1\n3\n3\n1 1 2\n\n1 2 1\n7 3 1\n")
    err = cli_error_line(capsys, ["corpus", "info", str(tmp_path / "docword.d.txt")])
    assert "line 7 has document id 7" in err and "[1, 1]" in err


def test_empty_corpus_path_is_refused_as_empty(capsys):
    assert "corpus path is empty" in cli_error_line(capsys, ["corpus", "info", ""])
    for call in (lambda: Corpus.from_jsonl(""), lambda: Corpus.from_directory("")):
        with pytest.raises(DPTopicError, match="corpus path is empty"):
            call()


def test_empty_jsonl_and_header_only_csv_name_the_file(tmp_path, capsys):
    (tmp_path / "e.jsonl").write_text("\n\n")
    (tmp_path / "h.csv").write_text("text,label\n")
    for name in ("e.jsonl", "h.csv"):
        err = cli_error_line(capsys, ["corpus", "info", str(tmp_path / name)])
        assert name in err and "empty corpus" in err


# ---------------------------------------------------------------- 6. the cuts are recorded with the corpus
def test_corpus_records_the_vocabulary_cuts_and_info_shows_them(tmp_path, capsys):
    c = Corpus.from_texts(FOUR_DOCS_TEXT.splitlines(), max_vocab=5, min_df=1, max_df=0.9, stop_words=None)
    assert c.metadata["vocabulary_cuts"] == {"max_vocab": 5, "min_df": 1, "max_df": 0.9}
    c.save(tmp_path / "c.npz")
    assert Corpus.load(tmp_path / "c.npz").metadata["vocabulary_cuts"]["max_vocab"] == 5
    pruned = c.prune(max_vocab=3)
    assert pruned.metadata["vocabulary_cuts"]["pruned"] == {"max_vocab": 3, "min_df": 1, "max_df": None}
    assert "vocabulary_cuts" not in c.restrict(c.vocabulary.words[:3]).metadata     # the caller's words
    (tmp_path / "t.txt").write_text(FOUR_DOCS_TEXT)
    assert main(["corpus", "info", str(tmp_path / "t.txt"), "--json", "--max-df", "3"]) == 0
    meta = json.loads(capsys.readouterr().out)["metadata"]
    assert meta["vocabulary_cuts"]["max_df"] == 3 and meta["reading"]["lowercase"] is True


def _cli(capsys, *argv):
    from dptopic.cli.main import main

    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_empty_stop_word_file_is_refused_not_read_as_no_list(tmp_path, capsys):
    (tmp_path / "d.txt").write_text("apple banana cherry\ncherry grape apple\n")
    (tmp_path / "stop.txt").write_text("\n  \n")
    err = _cli(capsys, "corpus", "info", str(tmp_path / "d.txt"), "--stop-words", str(tmp_path / "stop.txt"))
    assert "holds no words" in err and "'none'" in err
    with pytest.raises(DPTopicError, match="holds no words"):
        Corpus.from_texts(["apple banana cherry"], stop_words="english+" + str(tmp_path / "stop.txt"))


# ------------------------------------------------------------------ CSV
@pytest.mark.parametrize("header, says", [("text ,label", "'text ', which differs in spaces around it"),
                                           ("Text,label", "'Text', which differs in case")])
def test_csv_column_that_differs_in_spaces_or_case_is_named(tmp_path, capsys, header, says):
    p = tmp_path / "c.csv"
    p.write_text(f"{header}\napple banana,a\ncherry apple,b\n")
    err = _cli(capsys, "corpus", "info", str(p))
    assert says in err and "--text-field" in err, err


# ------------------------------------------------------------------ .npz
def test_npz_of_another_program_says_what_it_holds(tmp_path, capsys):
    p = tmp_path / "x.npz"
    np.savez(p, weights=np.arange(3))
    err = _cli(capsys, "corpus", "info", str(p))
    assert "not a dptopic corpus: it has no 'meta' array (arrays: weights)" in err, err


def test_truncated_npz_says_truncated(tmp_path, capsys):
    good = Corpus.from_texts(["apple banana cherry", "cherry grape apple"])
    good.save(tmp_path / "c.npz")
    data = (tmp_path / "c.npz").read_bytes()
    (tmp_path / "t.npz").write_bytes(data[:len(data) // 2])
    err = _cli(capsys, "corpus", "info", str(tmp_path / "t.npz"))
    assert "truncated or damaged" in err, err


# ------------------------------------------------------------------ UCI
def test_uci_vocabulary_with_a_repeated_word_names_the_file_and_lines(tmp_path, capsys):
    (tmp_path / "docword.x.txt").write_text("2\n3\n3\n1 1 2\n1 2 1\n2 3 4\n")
    (tmp_path / "vocab.x.txt").write_text("apple\ncherry\napple\n")
    err = _cli(capsys, "corpus", "info", str(tmp_path / "docword.x.txt"))
    assert "vocab.x.txt" in err and "line 3 repeats the word 'apple' of line 1" in err, err


def test_gzip_with_trailing_bytes_is_not_called_not_gzip(tmp_path, capsys):
    p = tmp_path / "d.txt.gz"
    p.write_bytes(gzip.compress(b"apple banana cherry\ncherry grape apple\n") + b"\x00\x00junk")
    err = _cli(capsys, "corpus", "info", str(p))
    assert "followed by bytes that are not gzip data" in err and "is not gzip data" not in err, err


WORDS = "apple banana cherry grape lemon mango"


# ---------------------------------------------------------------- 1. labels: one rule in every loader
@pytest.mark.parametrize("name, body, line", [
    ("empty.csv", f"text,label\n{WORDS},a\n{WORDS},\n{WORDS},b\n", 3),
    ("blank.csv", f'text,label\n{WORDS},a\n{WORDS},b\n{WORDS},"  "\n', 4),
    ("empty.tsv", f"text\tlabel\n{WORDS}\ta\n{WORDS}\t\n", 3),
    ("null.jsonl", json.dumps({"text": WORDS, "label": "a"}) + "\n" + json.dumps({"text": WORDS, "label": None}) + "\n", 2),
    ("empty.jsonl", json.dumps({"text": WORDS, "label": "a"}) + "\n" + json.dumps({"text": WORDS, "label": ""}) + "\n", 2),
    ("missing.jsonl", json.dumps({"text": WORDS, "label": "a"}) + "\n" + json.dumps({"text": WORDS}) + "\n", 2),
])
@pytest.mark.parametrize("command", [["corpus", "info"], ["corpus", "prepare", "--out", "c.npz", "--corpus"],
                                     ["train", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "m", "--corpus"]])
def test_a_document_without_a_label_is_refused_in_every_format(tmp_path, capsys, monkeypatch, name, body, line,
                                                               command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(body)
    err = cli_error_line(capsys, [*command, name, "--label-field", "label"])
    assert f"line {line}" in err and "no label" in err, err
    assert "--label-field" in err and "drop the unlabelled ones" in err, err
    assert not (tmp_path / "c.npz").exists()


def test_unit_document_streams_a_shard_folder_and_takes_background_share(tmp_path, capsys):
    from dptopic.cli.main import main
    texts = ["budget deficit tax revenue spending said", "tax revenue budget treasury surplus said",
             "army navy war defense troops said", "war troops army peace treaty said",
             "school education teachers students said", "students teachers education college said"]
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(texts * 30))
    shards = tmp_path / "shards"
    assert main(["corpus", "prepare", "--corpus", str(p), "--shards", "2", "--out", str(shards)]) in (0, None)
    out = tmp_path / "m"
    assert main(["train", "--corpus", str(shards), "--unit", "document", "--epsilon", "50", "--topics", "4",
                 "--background-share", "0.9", "--out", str(out), "--quiet"]) in (0, None)
    text = capsys.readouterr().out
    assert "2 shards" in text and "model written" in text
    meta = json.loads((out / "model.json").read_text())
    assert meta["class"] == "DocDPCooccurrence" and meta["params"]["background_share"] == 0.9
    assert meta["privacy"]["parameters"]["background_topics"] == 2       # "said" is in every document
    m = dptopic.load(out)
    assert m.topic_words(1)[-2] == ["said"]
    # the shard folder keeps its vocabulary, and the flag belongs to docdp-cooc alone
    assert main(["train", "--corpus", str(shards), "--unit", "document", "--epsilon", "1", "--topics", "3",
                 "--vocabulary", str(p), "--out", str(tmp_path / "m2"), "--quiet"]) == 2
    assert "--vocabulary has no effect on a shard folder" in capsys.readouterr().err
    assert main(["train", "--corpus", str(p), "--algorithm", "lda", "--background-share", "0.2", "--topics", "3",
                 "--out", str(tmp_path / "m3"), "--quiet"]) == 2
    assert "--background-share has no effect" in capsys.readouterr().err


# ---------------------------------------------------------------- 3. a contributor's text; corpus info/prepare
def _client(path):
    from dptopic.cli.submit import _client_corpus  # what submit and fed-client read

    return _client_corpus(argparse.Namespace(corpus=str(path), format="auto", text_field="text"))


@pytest.mark.parametrize("data", [b"", b"\n", b" \n\n", b"\xef\xbb\xbf"])
def test_a_contributors_empty_file_is_one_line(tmp_path, capsys, data):
    p = tmp_path / "mine.txt"
    p.write_bytes(data)
    with pytest.raises(DPTopicError, match="no non-blank lines; give one document per line"):
        _client(p)
    assert "no non-blank lines" in cli_error_line(capsys, ["corpus", "info", p])


@pytest.mark.parametrize("data, says", [
    (b"caf\xe9 apple\n", "is not UTF-8 text: byte 0xe9 on line 1"),
    ("apple banana\n".encode("utf-16"), "is UTF-16 text"),
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "looks like a binary file"),
])
def test_a_contributors_unreadable_file_is_one_line(tmp_path, capsys, data, says):
    p = tmp_path / "mine.txt"
    p.write_bytes(data)
    with pytest.raises(DPTopicError, match=says):
        _client(p)
    assert says in cli_error_line(capsys, ["corpus", "prepare", "--corpus", p, "--out", tmp_path / "c.npz"])


# ---------------------------------------------------------------- 4. text folders
def test_a_text_folder_with_names_that_are_not_utf8(tmp_path, capsys):
    root = os.fsencode(tmp_path / "docs")
    for rel in (b"caf\xe9/a.txt", b"ok/b\xfe.txt", b"ok/c.txt"):
        path = root + b"/" + rel
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(b"apple banana cherry\n")
    c = Corpus.from_directory(tmp_path / "docs", stop_words=None)
    assert c.labels == ["caf\\xe9", "ok", "ok"] and c.doc_ids == ["caf\\xe9/a.txt", "ok/b\\xfe.txt", "ok/c.txt"]
    for v in c.labels + c.doc_ids:
        v.encode("utf-8")       # every output holds them: transform writes the ids beside its rows
    assert main(["corpus", "info", str(tmp_path / "docs"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["labels"] == {"caf\\xe9": 1, "ok": 2}


SRC = str(Path(__file__).resolve().parents[2] / "src")


# ----------------------------------------------------------------- 3: corpus info on a corpus of no documents
@pytest.fixture
def empty_npz(tmp_path):
    c = dptopic.Corpus.from_texts(["apple banana cherry", "dog cat mouse"])
    c.save(tmp_path / "c.npz")
    z = dict(np.load(tmp_path / "c.npz", allow_pickle=False))
    meta = json.loads(bytes(z["meta"]).decode())
    meta.pop("doc_ids", None)
    z["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    z["doc_ptr"] = np.array([0], dtype=z["doc_ptr"].dtype)
    z["word_ids"] = z["word_ids"][:0]
    z["content_keys"] = z["content_keys"][:0]       # one digest per document: none
    np.savez(tmp_path / "empty.npz", **z)
    return tmp_path / "empty.npz"


def test_corpus_summary_of_no_documents(empty_npz):
    from dptopic.corpus import Corpus
    from dptopic.corpus.summary import corpus_summary

    info = corpus_summary(Corpus.load(empty_npz))
    assert info["documents"] == 0 and info["document_length"] == {"min": 0, "median": 0.0, "mean": 0.0, "max": 0}
    assert all(w["document_share"] == 0.0 for w in info["top_words"])


def test_corpus_info_cli_of_no_documents(empty_npz):
    r = run_dptopic("corpus", "info", empty_npz, "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["documents"] == 0


def _cli_3(*args, cwd=None):
    return run_dptopic(*args, cwd=cwd)


# ---- item 18: nesting bounded before parsing
def test_deeply_nested_json_is_one_line(tmp_path):
    deep = '{"text": ' + "[" * 30000 + "]" * 30000 + "}"
    (tmp_path / "d.jsonl").write_text(deep + "\n")
    assert "deeper than" in one_line_stderr(_cli_3("corpus", "info", str(tmp_path / "d.jsonl")))
    from dptopic._io import load_json

    with pytest.raises(DPTopicError, match="deeper than 64"):
        load_json("[" * 65 + "]" * 65)
    assert load_json('{"a": [[1], "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]}') is not None


# Hand-counted: document frequencies over the 4 documents (stop words "the", "and" are in sklearn's list)
#   apple 4 | banana 3 | cherry 2 | Paris/paris: "Paris" in doc 0, "paris" in doc 1 | durian 1
TEXTS = [
    "apple banana cherry Paris the",
    "apple banana paris and",
    "apple banana cherry durian",
    "apple apple apple",
]


def _cli_4(*args, cwd=None):
    return run_dptopic(*args, cwd=cwd)


def test_cli_prepare_and_info(tmp_path):
    src = tmp_path / "docs.txt"
    src.write_text("\n".join(TEXTS) + "\n")
    out = tmp_path / "c.npz"
    r = _cli_4("corpus", "prepare", "--corpus", str(src), "--max-df", "0.75", "--min-df", "2", "--out", str(out), "--private")
    assert r.returncode == 0, r.stderr
    assert sorted(Corpus.load(out).vocabulary.words) == ["banana", "cherry", "paris"]
    r = _cli_4("corpus", "info", str(out), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert (info["documents"], info["vocabulary_size"]) == (3, 3)   # "apple apple apple" is left empty
    assert info["tokens"] == 7 and info["empty_documents_dropped"] == 1
    assert [w["word"] for w in info["top_words"]] == ["banana", "cherry", "paris"]
    assert info["top_words"][0] == {"word": "banana", "tokens": 3, "documents": 3, "document_share": 1.0}
    assert "NOT protected" in r.stderr and "NOT protected" in info["warning"]
    r = _cli_4("corpus", "info", str(src), "--stop-words", "none", "--top", "2")
    assert r.returncode == 0, r.stderr
    assert "NOT protected" not in r.stderr                          # not marked private
    assert "apple" in r.stdout and "5 words" not in r.stdout


def test_cli_preprocessing_errors(tmp_path):
    src = tmp_path / "docs.txt"
    src.write_text("\n".join(TEXTS) + "\n")
    r = _cli_4("corpus", "info", str(src), "--min-df", "3", "--max-df", "2")
    assert r.returncode == 2 and "--max-df 2" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = _cli_4("corpus", "info", str(src), "--max-df", "1.5")
    assert r.returncode == 2 and "(0, 1]" in r.stderr
    r = _cli_4("corpus", "info", str(src), "--stop-words", "nosuchlist")
    assert r.returncode == 2 and "unknown stop-word list" in r.stderr
    out = tmp_path / "c.npz"
    assert _cli_4("corpus", "prepare", "--corpus", str(src), "--out", str(out)).returncode == 0
    r = _cli_4("corpus", "info", str(out), "--no-lowercase")
    assert r.returncode == 2 and "raw text" in r.stderr


# ------------------------------------------------------------------ a shard set replaced atomically
_KILL_AT = r'''
import os, sys
K = int(sys.argv[1]); n = [0]
def hook(ev, args):
    if ev in ("os.rename", "os.remove") and "shard-" in os.fsdecode(args[0]) and not os.fsdecode(args[0]).endswith(".tmp"):
        n[0] += 1
        if n[0] == K:
            os._exit(137)           # as a SIGKILL: no handler, no clean-up
sys.addaudithook(hook)
from dptopic.cli.main import main
sys.exit(main(sys.argv[2:]))
'''


def _texts(path, seed):
    rng = np.random.default_rng(seed)
    words = "apple banana cherry dog elephant fish grape house igloo jungle kite lemon".split()
    path.write_text("\n".join(" ".join(rng.choice(words, 20)) for _ in range(60)) + "\n")


def test_train_refuses_a_prepared_corpus_cut_by_its_counts_in_one_line(tmp_path, capsys):
    texts = tmp_path / "docs.txt"
    rng = np.random.default_rng(0)
    words = [f"word{c}" for c in "abcdefghij"]
    texts.write_text("\n".join(" ".join(rng.choice(words, 6)) for _ in range(600)) + "\n")
    prepared = tmp_path / "cut.npz"
    assert main(["corpus", "prepare", "--corpus", str(texts), "--max-vocab", "4", "--out", str(prepared)]) == 0
    every = tmp_path / "all.npz"       # the way the message names: every word kept
    assert main(["corpus", "prepare", "--corpus", str(texts), "--max-vocab", "all", "--out", str(every)]) == 0
    assert data_cut_of(Corpus.load(every)) is None and Corpus.load(every).vocab_size == 10
    capsys.readouterr()
    try:
        rc = main(["train", "--algorithm", "docdp-cooc", "--epsilon", "2", "--topics", "2", "--corpus", str(prepared),
                   "--private-vocabulary", "1,1e-5", "--out", str(tmp_path / "m"), "--test-size", "0"])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err
    assert "built with --max-vocab 4" in lines[0] and "--max-vocab all" in lines[0] and not (tmp_path / "m").exists()
    assert main(["train", "--algorithm", "docdp-cooc", "--epsilon", "2", "--topics", "2", "--corpus", str(every),
                 "--private-vocabulary", "8,1e-5", "--out", str(tmp_path / "m2"), "--test-size", "0", "--quiet"]) == 0


def test_corpus_info_names_the_filler_words_only_when_there_are_some(tmp_path, capsys):
    filler = tmp_path / "fill.txt"
    filler.write_text("the cat sat on a mat today\nthe dog ran far away today\nthe bird flew high above\n"
                      "fish swim deep below\n")
    assert main(["corpus", "info", str(filler), "--stop-words", "none"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "1 word is in more than half of the documents (the), often filler: --max-df 0.5 drops it" in out
    assert main(["corpus", "info", str(filler), "--stop-words", "none", "--json"]) in (0, None)
    import json

    assert json.loads(capsys.readouterr().out)["words_in_most_documents"] == ["the"]
    none = tmp_path / "none.txt"
    none.write_text("alpha beta\ngamma delta\nepsilon zeta\n")
    assert main(["corpus", "info", str(none)]) in (0, None)
    assert "--max-df 0.5" not in capsys.readouterr().out


@pytest.mark.parametrize("kill_at", [pytest.param(1, marks=pytest.mark.slow), 2, pytest.param(3, marks=pytest.mark.slow)])
def test_a_shard_set_killed_among_its_renames_is_never_a_mix_of_two_runs(tmp_path, kill_at):
    """`corpus prepare --shards N --overwrite` replaced the old set one file at a time: killed between two renames,
    the folder held shards of both runs and every read refused it (the old corpus lost). The complete new set is now
    committed first, and the next reader finishes its renames."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from dptopic.corpus.shards import ShardSet, folder_shards

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    _texts(tmp_path / "docs.txt", 0)
    (tmp_path / "kill.py").write_text(_KILL_AT)
    prep = ["corpus", "prepare", "--corpus", str(tmp_path / "docs.txt"), "--out", str(tmp_path / "sh"),
            "--stop-words", "none"]
    assert main(prep + ["--shards", "3"]) in (0, None)
    old = ShardSet(folder_shards(tmp_path / "sh"), folder=tmp_path / "sh")
    assert old.vocab_size == 12 and len(old.paths) == 3
    r = subprocess.run([sys.executable, str(tmp_path / "kill.py"), str(kill_at), *prep, "--shards", "2",
                        "--max-vocab", "5", "--overwrite"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 137, r.stderr[-500:]
    new = ShardSet(folder_shards(tmp_path / "sh"), folder=tmp_path / "sh")     # read: the replacement is finished
    assert new.vocab_size == 5 and len(new.paths) == 2 and new.n_docs == 60
    assert sorted(p.name for p in (tmp_path / "sh").iterdir() if p.name.startswith((".shard", "shard"))) == [
        "shard-00000.npz", "shard-00001.npz"]
    # and the folder takes another run as before
    assert main(prep + ["--shards", "4", "--overwrite"]) in (0, None)
    assert len(ShardSet(folder_shards(tmp_path / "sh"), folder=tmp_path / "sh").paths) == 4


def test_corpus_prepare_says_why_it_wrote_fewer_shards(tmp_path, capsys):
    (tmp_path / "d.txt").write_text("\n".join(f"apple banana cherry {i}" for i in range(6)) + "\n")
    assert main(["corpus", "prepare", "--corpus", str(tmp_path / "d.txt"), "--shards", "10", "--out",
                 str(tmp_path / "sh")]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "fewer than the 10 asked" in out


# ---------------------------------------------------------------- item 6: a folder left by a killed prepare --shards
@pytest.mark.parametrize("partial", [True, False])
def test_a_folder_left_by_a_killed_shard_run_is_named_incomplete(tmp_path, partial, capsys):
    from pathlib import Path

    from dptopic._io import mark_output_folder
    from dptopic.backends import training_source
    from dptopic.cli.main import main
    from dptopic.corpus import Corpus
    from dptopic.corpus.shard_folder import SHARD_RUN

    folder = tmp_path / "xKILL"
    mark_output_folder(str(folder), SHARD_RUN)       # what a run killed while writing leaves
    if partial:
        Path(folder, ".shard-00000.npz.partial").write_bytes(b"half a shard")
    for read in (lambda: Corpus.from_directory(folder), lambda: training_source(str(folder))):
        with pytest.raises(DPTopicError, match="is incomplete: its write_shards run did not finish; re-create it:"
                                               " write the shard set again in its place"):
            read()
    assert main(["corpus", "info", str(folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is incomplete" in err[0] and "no *.txt files" not in err[0]


def test_corpus_info_gives_no_stop_word_hint_for_a_corpus_prepared_with_its_own(tmp_path, capsys):
    from dptopic.cli.main import main

    src = tmp_path / "s.txt"
    src.write_text("apple banana cherry grape\ndate elder fig apple\ngrape apple banana melon\n")
    (tmp_path / "stop.txt").write_text("melon\n")
    for stop, hinted in ((f"english+{tmp_path / 'stop.txt'}", False), ("english", True)):
        out = tmp_path / f"c{hinted}.npz"
        assert main(["corpus", "prepare", "--corpus", str(src), "--stop-words", stop, "--out", str(out)]) == 0
        capsys.readouterr()
        assert main(["corpus", "info", str(out)]) == 0
        assert ("--stop-words english+FILE" in " ".join(capsys.readouterr().out.split())) is hinted


WORDS_2 = ["recipe", "oven", "flour", "sugar", "storm", "rain", "wind", "cloud", "market", "stock", "bank", "fund"]


def _texts_2(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS_2[4 * (i % 3):4 * (i % 3) + 4], 10)) for i in range(n)]


def _err_args(capsys, *argv):
    """Run the CLI in this process; its stderr must be one 'error:' line, exit status 2."""
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("error:"), err
    return err[0]


def test_a_prepared_npz_read_as_jsonl_or_csv_is_called_binary_not_a_latin1_text(tmp_path, capsys):
    from dptopic.corpus import Corpus

    npz = tmp_path / "docs.npz"
    Corpus.from_texts(_texts_2()).save(npz)
    for fmt in ("jsonl", "csv"):
        line = _err_args(capsys, "corpus", "info", npz, "--format", fmt)
        assert "binary file" in line and "--format npz" in line and "iconv" not in line, line
    with pytest.raises(DPTopicError, match="binary file") as e:
        Corpus.from_jsonl(npz)
    assert "Windows-1252" not in str(e.value)
    latin = tmp_path / "l1.csv"               # real Latin-1 text keeps its own advice
    latin.write_bytes("text\ncafé recipe oven\n".encode("latin-1"))
    assert "iconv" in _err_args(capsys, "corpus", "info", latin)


def test_a_csv_without_the_text_column_names_the_flag_that_picks_it(tmp_path, capsys):
    p = tmp_path / "docs.csv"
    p.write_text("id,body,label\n" + "".join(f"{i},{t},x\n" for i, t in enumerate(_texts_2(10))))
    line = _err_args(capsys, "corpus", "info", p)
    assert "no column 'text'" in line and "--text-field" in line, line
    assert "--label-field" in _err_args(capsys, "corpus", "info", p, "--text-field", "body", "--label-field", "lab")
    from dptopic.corpus import Corpus

    with pytest.raises(DPTopicError, match="set text_column"):
        Corpus.from_csv(p)


# ------------------------------------------------------------------ odd files named for what they are
def test_prepare_shards_into_a_name_ending_npz_is_refused_before_any_work(tmp_path, capsys):
    from dptopic.cli.main import main

    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(f"apple banana cherry {i}" for i in range(20)) + "\n")
    code = main(["corpus", "prepare", "--corpus", str(docs), "--out", str(tmp_path / "shards.npz"), "--shards", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "names a .npz file" in err and "--out" in err
    assert len([ln for ln in err.strip().splitlines() if ln.strip()]) == 1
    assert not (tmp_path / "shards.npz").exists()
    assert main(["corpus", "prepare", "--corpus", str(docs), "--out", str(tmp_path / "shards"), "--shards", "2"]) in (0, None)


def test_corpus_prepare_on_a_public_vocabulary_is_remembered_by_files_and_shards(tmp_path, corpus200):
    from dptopic.cli.main import main

    words = ["word" + "".join(chr(97 + int(c)) for c in str(i)) for i in range(corpus200.vocab_size)]  # letters only
    (tmp_path / "docs.txt").write_text("\n".join(" ".join(words[w] for w in corpus200.doc(d))
                                                 for d in range(corpus200.n_docs))
                                       + "\n")
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    base = ["corpus", "prepare", "--corpus", str(tmp_path / "docs.txt"), "--stop-words", "none"]
    assert main(base + ["--out", str(tmp_path / "data.npz")]) == 0
    assert not dptopic.Corpus.load(tmp_path / "data.npz").vocabulary_supplied
    given = ["corpus", "prepare", "--corpus", str(tmp_path / "docs.txt"), "--vocabulary", str(tmp_path / "vocab.txt")]
    assert main(given + ["--out", str(tmp_path / "given.npz")]) == 0
    c = dptopic.Corpus.load(tmp_path / "given.npz")
    assert c.vocabulary_supplied and c.vocabulary.words == words
    assert main(given + ["--shards", "2", "--out", str(tmp_path / "shards")]) == 0
    assert main(base + ["--shards", "2", "--out", str(tmp_path / "data-shards")]) == 0
    assert ShardSet(sorted((tmp_path / "shards").glob("shard-*.npz"))).vocabulary_supplied
    assert not ShardSet(sorted((tmp_path / "data-shards").glob("shard-*.npz"))).vocabulary_supplied
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for src, source in ((tmp_path / "shards", "supplied"), (tmp_path / "data-shards", "data")):
            assert SMALL_PRIVATE_TRAINERS["DocDPCooccurrence"]().fit(str(src)).privacy_["vocabulary_source"] == source
            assert SMALL_PRIVATE_TRAINERS["HDPLDA"]().fit(str(src)).privacy_["vocabulary_source"] == source
    assert main(given + ["--max-vocab", "10", "--out", str(tmp_path / "x.npz")]) == 2
    assert not (tmp_path / "x.npz").exists()


def test_corpus_prepare_drops_web_addresses_unless_keep_urls_is_given(tmp_path):
    from dptopic.corpus import Corpus
    from helpers import run_dptopic

    src = tmp_path / "feed.txt"
    src.write_text("cbc news http://www.cbc.ca/cmp/rss health report\nhealth report www.cbc.ca/news today\n"
                   "tips@cbc.ca or @cbcnews about the health report\n")
    r = run_dptopic("corpus", "prepare", "--corpus", src, "--out", tmp_path / "a.npz")
    assert r.returncode == 0, r.stderr
    words = set(Corpus.load(tmp_path / "a.npz").vocabulary.words)
    assert not words & {"http", "www", "cmp", "rss", "tips", "cbcnews"}, words
    r = run_dptopic("corpus", "prepare", "--corpus", src, "--keep-urls", "--out", tmp_path / "b.npz")
    assert r.returncode == 0, r.stderr
    assert {"http", "www", "cmp", "cbcnews"} <= set(Corpus.load(tmp_path / "b.npz").vocabulary.words)
    r = run_dptopic("corpus", "prepare", "--corpus", tmp_path / "a.npz", "--keep-urls", "--out", tmp_path / "c.npz")
    assert r.returncode == 2 and "--keep-urls applies to raw text" in r.stderr, r.stderr


def test_corpus_info_with_a_user_field_lists_people_with_similar_ids(tmp_path):
    import json

    from helpers import run_dptopic

    ids = ["alice@example.com", "Alice@example.com", "bob", "carol"]
    with open(tmp_path / "c.jsonl", "w") as f:
        for i in range(40):
            f.write(json.dumps({"text": "river water boat fish bank money loan market", "user": ids[i % 4]}) + "\n")
    r = run_dptopic("corpus", "info", tmp_path / "c.jsonl", "--user-field", "user")
    assert r.returncode == 0, r.stderr
    assert "4 people" in r.stdout and "'Alice@example.com', 'alice@example.com': 20 documents" in r.stdout
    r = run_dptopic("corpus", "info", tmp_path / "c.jsonl", "--user-field", "user", "--json")
    assert json.loads(r.stdout)["people"]["similar_groups"] == 1
