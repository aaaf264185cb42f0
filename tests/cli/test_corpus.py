"""Findings of a walk-through of the corpus tools (corpus prepare/info, the loaders, shards): each test below failed
before its fix."""
import errno
import json
import warnings

import numpy as np
import pytest

from dptopic.backends import ShardSet, training_source, write_shards
from dptopic.cli.main import main
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError

TEXT = "apple banana cherry\nbanana cherry durian\napple durian cherry\nelder fig grape\n"


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def _prepare_shards(tmp_path, out, n, *extra):
    src = tmp_path / "ok.txt"
    src.write_text(TEXT)
    return main(["corpus", "prepare", "--corpus", str(src), "--out", str(out), "--shards", str(n),
                 "--stop-words", "none", *extra])


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
    assert _prepare_shards(tmp_path, out, 4) == 0
    before = {p.name: p.read_bytes() for p in out.glob("shard-*.npz")}
    marker = (out / ".dptopic-output").read_text()
    capsys.readouterr()
    _disk_full_on_write(monkeypatch, 2)
    assert _prepare_shards(tmp_path, out, 2, "--overwrite") == 2       # the old code deleted the old set first
    assert "No space left" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.glob("shard-*.npz")} == before
    assert not list(out.glob(".shard-*"))                              # no temporaries left behind
    assert json.loads((out / ".dptopic-output").read_text())["runs"] == json.loads(marker)["runs"]
    src = training_source(out)
    assert src.n_docs == 4 and len(src.paths) == 4
    monkeypatch.undo()
    assert _prepare_shards(tmp_path, out, 2, "--overwrite") == 0       # a smaller set replaces it, extras removed
    assert sorted(p.name for p in out.glob("shard-*.npz")) == ["shard-00000.npz", "shard-00001.npz"]
    assert training_source(out).n_docs == 4


def test_failed_first_shard_run_leaves_no_folder(tmp_path, capsys, monkeypatch):
    _disk_full_on_write(monkeypatch, 2)
    assert _prepare_shards(tmp_path, tmp_path / "new", 4) == 2
    assert not (tmp_path / "new").exists()


def test_shard_reader_refuses_a_partial_or_mixed_set(tmp_path):
    c = Corpus.from_texts(TEXT.splitlines(), stop_words=None)
    paths = write_shards(c, tmp_path / "a", 4)
    assert all(Corpus.load(p).metadata["shard"]["count"] == 4 for p in paths)
    assert sum(Corpus.load(p).n_empty_dropped for p in paths) == c.n_empty_dropped
    paths[2].unlink()                      # what a run that stopped part-way leaves
    with pytest.raises(DPTopicError, match=r"incomplete: it holds 3 of the 4 shards.*corpus prepare --shards"):
        training_source(tmp_path / "a")
    other = write_shards(c, tmp_path / "b", 4)
    other[2].rename(paths[2])              # a shard of another run
    with pytest.raises(DPTopicError, match="more than one 'corpus prepare --shards' run"):
        training_source(tmp_path / "a")
    with pytest.raises(DPTopicError, match="more than one"):
        ShardSet([paths[0], other[1]])


def test_train_refuses_a_partial_shard_folder_in_one_line(tmp_path, capsys):
    out = tmp_path / "sh"
    assert _prepare_shards(tmp_path, out, 4) == 0
    (out / "shard-00003.npz").unlink()
    (out / ".dptopic-output").unlink()
    capsys.readouterr()
    err = _error(capsys, ["train", "--corpus", str(out), "--topics", "2", "--iterations", "2",
                          "--out", str(tmp_path / "m")])
    assert "incomplete" in err and str(out) in err and "corpus prepare" in err


def test_old_shards_without_a_record_read_unless_their_run_did_not_finish(tmp_path):
    from dptopic._io import mark_output_folder

    c = Corpus.from_texts(TEXT.splitlines(), stop_words=None)
    out = tmp_path / "old"
    mark_output_folder(out, "corpus prepare --shards")
    for j, idx in enumerate(([0, 1], [2, 3])):          # as the earlier version wrote them: no record
        c.subset(idx).save(out / f"shard-{j:05d}.npz")
    with pytest.raises(DPTopicError, match="may be incomplete.*did not finish"):
        training_source(out)
    mark_output_folder(out, "corpus prepare --shards", done=True)
    assert training_source(out).n_docs == 4


# ---------------------------------------------------------------- 2. the default --max-vocab says what it cut
def _uci_big(tmp_path, V=30, D=12):
    (tmp_path / "vocab.big.txt").write_text("".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26)}\n" for i in range(V)))
    rows = [(d, w) for d in range(1, D + 1) for w in range(1, V + 1) if (d + w) % 3 == 0]
    (tmp_path / "docword.big.txt").write_text(f"{D}\n{V}\n{len(rows)}\n" + "".join(f"{d} {w} 2\n" for d, w in rows))
    return tmp_path / "docword.big.txt"


def test_uci_file_keeps_its_own_vocabulary_unless_max_vocab_is_given(tmp_path, capsys, monkeypatch):
    import dptopic.cli._common as common

    monkeypatch.setattr(common, "DEFAULT_MAX_VOCAB", 10)
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


def test_the_max_vocab_note_is_dropped_when_the_command_then_fails(tmp_path, capsys):
    # the note waits for the command's end: an error after the corpus loaded stays one line on stderr
    words = [f"w{chr(97 + i // 676)}{chr(97 + i // 26 % 26)}{chr(97 + i % 26)}" for i in range(1200)]
    (tmp_path / "t.txt").write_text("".join(" ".join(words[i:i + 60]) + "\n" for i in range(0, 1200, 60)))
    assert main(["train", "--corpus", str(tmp_path / "t.txt"), "--topics", "1500", "--iterations", "2",
                 "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "exceeds the vocabulary size 1000" in err and "note:" not in err, err
    # and a later command that succeeds does not print the failed one's note
    assert main(["corpus", "info", str(tmp_path / "t.txt"), "--json", "--max-vocab", "2000"]) == 0
    assert "note:" not in capsys.readouterr().err


# ---------------------------------------------------------------- 3. from_uci closes its docword file
def test_from_uci_closes_the_docword_file(tmp_path):
    dw = _uci_big(tmp_path)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Corpus.from_uci(dw, tmp_path / "vocab.big.txt")
        import gc

        gc.collect()
    assert not [w for w in seen if issubclass(w.category, ResourceWarning)]


# ---------------------------------------------------------------- 7, 8, 9. malformed JSONL and UCI lines
@pytest.mark.parametrize("line, kind", [("42", "a number"), ('"hello"', "a string"), ("null", "null")])
def test_jsonl_scalar_line_is_named_for_what_it_is(tmp_path, capsys, line, kind):
    p = tmp_path / "d.jsonl"
    p.write_text('{"text": "apple banana cherry"}\n' + line + "\n")
    err = _error(capsys, ["corpus", "info", str(p)])
    assert f"line 2 is {kind}, not a JSON object" in err and "--text-field" not in err


def test_uci_duplicate_entry_is_refused_with_its_line(tmp_path, capsys):
    (tmp_path / "vocab.dup.txt").write_text("apple\nbanana\ncherry\ndurian\n")
    (tmp_path / "docword.dup.txt").write_text("2\n4\n4\n1 1 2\n2 3 1\n1 1 3\n2 4 5\n")
    err = _error(capsys, ["corpus", "info", str(tmp_path / "docword.dup.txt")])
    assert "line 6 repeats the entry of line 4 (document 1, word 1)" in err


@pytest.mark.parametrize("W", [4, 5])
def test_uci_blank_vocabulary_line_is_refused_with_its_number(tmp_path, capsys, W):
    (tmp_path / "vocab.b.txt").write_text("apple\n\nbanana\ncherry\ndurian\n")
    (tmp_path / "docword.b.txt").write_text(f"2\n{W}\n3\n1 1 2\n1 2 1\n2 3 1\n")
    err = _error(capsys, ["corpus", "info", str(tmp_path / "docword.b.txt")])
    assert "line 2 is blank" in err


def test_uci_document_id_above_d_names_its_line_and_value(tmp_path, capsys):
    (tmp_path / "vocab.d.txt").write_text("apple\nbanana\ncherry\n")
    (tmp_path / "docword.d.txt").write_text("1\n3\n3\n1 1 2\n\n1 2 1\n7 3 1\n")
    err = _error(capsys, ["corpus", "info", str(tmp_path / "docword.d.txt")])
    assert "line 7 has document id 7" in err and "[1, 1]" in err


# ---------------------------------------------------------------- 11, 12. argument checks and messages
@pytest.mark.parametrize("bad", ["no", 1, None])
def test_lowercase_must_be_a_bool(bad):
    with pytest.raises(DPTopicError, match="invalid lowercase"):
        Corpus.from_texts(["Apple banana", "cherry Apple"], lowercase=bad)
    assert Corpus.from_texts(["Apple banana", "cherry Apple"], lowercase=np.bool_(False)).vocabulary.words[0] == "Apple"


def test_empty_corpus_path_is_refused_as_empty(capsys):
    assert "corpus path is empty" in _error(capsys, ["corpus", "info", ""])
    for call in (lambda: Corpus.from_jsonl(""), lambda: Corpus.from_directory("")):
        with pytest.raises(DPTopicError, match="corpus path is empty"):
            call()


def test_empty_jsonl_and_header_only_csv_name_the_file(tmp_path, capsys):
    (tmp_path / "e.jsonl").write_text("\n\n")
    (tmp_path / "h.csv").write_text("text,label\n")
    for name in ("e.jsonl", "h.csv"):
        err = _error(capsys, ["corpus", "info", str(tmp_path / name)])
        assert name in err and "empty corpus" in err


def test_from_bow_of_a_dataframe_uses_its_column_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame([[1, 0, 2], [0, 3, 1]], columns=["apple", "banana", "cherry"])
    assert Corpus.from_bow(df).vocabulary.words == ["apple", "banana", "cherry"]
    assert Corpus.from_bow(df, vocabulary=["a", "b", "c"]).vocabulary.words == ["a", "b", "c"]


# ---------------------------------------------------------------- 6. the cuts are recorded with the corpus
def test_corpus_records_the_vocabulary_cuts_and_info_shows_them(tmp_path, capsys):
    c = Corpus.from_texts(TEXT.splitlines(), max_vocab=5, min_df=1, max_df=0.9, stop_words=None)
    assert c.metadata["vocabulary_cuts"] == {"max_vocab": 5, "min_df": 1, "max_df": 0.9}
    c.save(tmp_path / "c.npz")
    assert Corpus.load(tmp_path / "c.npz").metadata["vocabulary_cuts"]["max_vocab"] == 5
    pruned = c.prune(max_vocab=3)
    assert pruned.metadata["vocabulary_cuts"]["pruned"] == {"max_vocab": 3, "min_df": 1, "max_df": None}
    assert "vocabulary_cuts" not in c.restrict(c.vocabulary.words[:3]).metadata     # the caller's words
    (tmp_path / "t.txt").write_text(TEXT)
    assert main(["corpus", "info", str(tmp_path / "t.txt"), "--json", "--max-df", "3"]) == 0
    meta = json.loads(capsys.readouterr().out)["metadata"]
    assert meta["vocabulary_cuts"]["max_df"] == 3 and meta["reading"]["lowercase"] is True


# ---------------------------------------------------------------- 4. progress while corpus prepare tokenises
def test_tokenising_progress_shows_a_bar_only_inside_the_block(monkeypatch, capsys):
    import dptopic.corpus.corpus as C

    import contextlib

    import dptopic._progress as P

    bars = []
    real = P.progress_bar

    @contextlib.contextmanager
    def recording(total, description, verbose=1, transient=False):
        bars.append((total, description, transient))
        with real(total, description, verbose, transient) as bar:
            yield bar

    monkeypatch.setattr(P, "progress_bar", recording)
    monkeypatch.setattr(C, "PROGRESS_MIN_DOCS", 10)
    texts = ["apple banana cherry"] * 50
    Corpus.from_texts(texts)
    assert bars == []
    with C.tokenising_progress():
        c = Corpus.from_texts(texts)
    # transient: shown on a terminal while it runs, no line left behind (a later one-line error stays one line)
    assert bars == [(50, "tokenising", True)] and c.n_docs == 50
    assert "tokenising" not in capsys.readouterr().err


def test_a_model_folder_records_the_vocabulary_cuts_that_built_its_words(tmp_path):
    # walk B, finding 6: model.json kept stop words, lowercase and min_length but not --max-vocab/--min-df/--max-df
    import json

    import dptopic
    from dptopic.cli.main import main

    (tmp_path / "pp.txt").write_text("apple banana cherry\nbanana cherry durian\napple durian cherry fig\nelder fig\n")
    assert main(["train", "--corpus", str(tmp_path / "pp.txt"), "--max-df", "3", "--max-vocab", "50", "--topics", "2",
                 "--iterations", "3", "--out", str(tmp_path / "m")]) in (0, None)
    tok = json.loads((tmp_path / "m" / "model.json").read_text())["tokenizer"]
    assert tok["vocabulary_cuts"] == {"max_vocab": 50, "min_df": 1, "max_df": 3}
    assert dptopic.load(tmp_path / "m").tokenizer_["vocabulary_cuts"]["max_df"] == 3


def test_jsonl_refuses_a_repeated_field_and_a_non_finite_label(tmp_path):
    # json.loads keeps the last of two equal keys and reads NaN/Infinity: a record with two texts, or a label that
    # would be read as the class "nan", must be refused in one line rather than read silently
    words = "galaxy orbit rocket launch galaxy orbit"
    dup = tmp_path / "dup.jsonl"
    dup.write_text(json.dumps({"text": words}) + "\n" + '{"text": "%s", "text": "moon"}\n' % words)
    with pytest.raises(DPTopicError, match=r"line 2 has the field 'text' more than once"):
        Corpus.from_jsonl(dup)
    for bad in ("NaN", "Infinity", "-Infinity"):
        f = tmp_path / f"{bad}.jsonl"
        f.write_text('{"text": "%s", "label": 1}\n{"text": "%s", "label": %s}\n' % (words, words, bad))
        with pytest.raises(DPTopicError, match=r"line 2 label 'label' is .*not a finite number"):
            Corpus.from_jsonl(f, label_field="label")
    # a key repeated inside a nested object is not a repeated field of the record
    nested = tmp_path / "nested.jsonl"
    nested.write_text('{"text": "%s", "meta": {"text": "a", "text": "b"}}\n' % words)
    assert Corpus.from_jsonl(nested).n_docs == 1
    # a repeated field that is not read, and finite numeric labels, stay accepted
    ok = tmp_path / "ok.jsonl"
    ok.write_text('{"text": "%s", "x": 1, "x": 2, "label": 1.5}\n{"text": "%s", "label": 2}\n' % (words, words))
    assert list(Corpus.from_jsonl(ok, label_field="label").labels) == ["1.5", "2"]
