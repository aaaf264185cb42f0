"""Public word vectors: reading an installed source or a user's file, what the card records of them, and the
one-line refusal of a corrupt file or of vectors that do not match the vocabulary's language."""
import gzip
import hashlib

import numpy as np
import pytest

from dptopic.corpus import vector_files
from dptopic.corpus import vectors as V
from dptopic.corpus.vectors import KnownSource, PublicVectors, default_vectors, load_public_vectors
from dptopic.errors import DPTopicError

WORDS = ["space", "rocket", "orbit", "hockey", "team", "goal"]


def _arr(n=len(WORDS), d=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def write_npy(folder, words=WORDS, arr=None, name="vec"):
    arr = _arr(len(words)) if arr is None else arr
    np.save(folder / f"{name}.npy", arr)
    (folder / f"{name}.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    return folder / f"{name}.npy"


def write_glove(path, words=WORDS, arr=None, header=False):
    arr = _arr(len(words)) if arr is None else arr
    lines = ([f"{len(words)} {arr.shape[1]}"] if header else []) + [
        w + " " + " ".join(f"{x:.6f}" for x in row) for w, row in zip(words, arr)]
    text = "\n".join(lines) + "\n"
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_npy_with_word_list_reads_words_vectors_and_rank(tmp_path):
    arr = _arr()
    v = load_public_vectors(str(write_npy(tmp_path, arr=arr)))
    assert v.words == WORDS and v.dimension == 4 and v.source == "file" and v.name == "vec.npy"
    E, found, rank = v.for_words(["orbit", "Space", "unknown"])
    np.testing.assert_allclose(E[0], arr[2])
    np.testing.assert_allclose(E[1], arr[0])        # looked up in lower case when the word as given is absent
    assert found.tolist() == [True, True, False] and rank.tolist() == [3, 1, len(WORDS) + 1]
    assert not E[2].any()


def test_glove_and_word2vec_text_formats_give_the_same_vectors(tmp_path):
    arr = _arr()
    a = load_public_vectors(write_glove(tmp_path / "g.txt", arr=arr))
    b = load_public_vectors(write_glove(tmp_path / "w2v.txt", arr=arr, header=True))
    c = load_public_vectors(write_glove(tmp_path / "g.txt.gz", arr=arr))
    for v in (a, b, c):
        assert v.words == WORDS
        np.testing.assert_allclose(v.vectors, arr, atol=1e-6)


def test_entry_records_name_sha256_dimension_and_coverage(tmp_path):
    path = write_glove(tmp_path / "g.txt")
    v = load_public_vectors(path)
    e = v.entry(["space", "team", "xyz", "abc"], default=True)
    assert e["name"] == "g.txt" and e["dimension"] == 4 and e["words"] == len(WORDS)
    assert e["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert e["vocabulary_coverage"] == 0.5 and e["default"] is True and e["covered"] is False


@pytest.mark.parametrize("content, phrase", [
    ("space 0.1 0.2\nrocket 0.3\n", "line 2 has 1 value, not 2"),
    ("space 0.1 0.2\nrocket 0.3 abc\n", "line 2 holds a value that is not a number"),
    ("space 0.1 0.2\nrocket nan 0.1\n", "NaN or infinite"),
    ("5 2\nspace 0.1 0.2\n", "announces 5 words but it holds 1"),
    ("", "holds no vectors"),
    ("space\t\n", "line 1 holds a word and no values"),      # said as such, not "line 1 has 0 values, not 0"
    ("space\n", "line 1 holds a word and no values"),
    (" space 0.1 0.2\n", "line 1 starts with a space or tab"),
])
def test_corrupt_text_file_is_refused_in_one_line(tmp_path, content, phrase):
    path = tmp_path / "bad.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DPTopicError) as e:
        load_public_vectors(path)
    assert phrase in str(e.value) and "bad.txt" in str(e.value) and "\n" not in str(e.value)


def test_corrupt_npy_and_word_list_are_refused_in_one_line(tmp_path):
    p = write_npy(tmp_path, words=WORDS[:5])                # 6 rows, 5 words
    np.save(p, _arr())
    with pytest.raises(DPTopicError, match="has 6 rows but its word list 5 words"):
        load_public_vectors(p)
    bad = _arr()
    bad[3, 1] = np.inf
    with pytest.raises(DPTopicError, match=r"row 4 \(the vector of 'hockey'\) holds NaN or infinite"):
        load_public_vectors(write_npy(tmp_path, arr=bad, name="inf"))
    (tmp_path / "lonely.npy").write_bytes((tmp_path / "vec.npy").read_bytes())
    with pytest.raises(DPTopicError, match="needs its word list beside it: lonely.txt"):
        load_public_vectors(tmp_path / "lonely.npy")
    (tmp_path / "junk.npy").write_bytes(b"not an array")
    (tmp_path / "junk.txt").write_text("a\n")
    with pytest.raises(DPTopicError, match="not a readable .npy array"):
        load_public_vectors(tmp_path / "junk.npy")


def test_unknown_name_and_missing_path_are_refused(tmp_path):
    with pytest.raises(DPTopicError, match="public_vectors 'glove-9z' names no known vectors and no file"):
        load_public_vectors("glove-9z")
    with pytest.raises(DPTopicError, match="no such file"):
        load_public_vectors(tmp_path / "nothere.txt")


def test_vectors_of_another_language_are_refused_in_one_line(tmp_path):
    v = load_public_vectors(write_glove(tmp_path / "en.txt"))
    french = ["fusée", "orbite", "équipe", "but", "espace", "space"]
    with pytest.raises(DPTopicError) as e:
        v.check_covers(french)
    msg = str(e.value)
    assert "has vectors for 1 of the vocabulary's 6 words" in msg and "language" in msg and "\n" not in msg
    assert v.check_covers(WORDS[:4] + ["zz"]) == 0.8


def fake_package(tmp_path, monkeypatch, arr=None, words=WORDS, name="tiny-en"):
    """A source installed as a package (a module on the path with its data files), registered as a known one."""
    pkg = tmp_path / "tinyvectors"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    np.save(pkg / "data" / "emb.npy", _arr(len(words)) if arr is None else arr)
    (pkg / "data" / "words.txt").write_text("\n".join(words) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    source = KnownSource(name=name, distribution="tinyvectors", module="tinyvectors", language="en",
                         description="a test source", vectors_file="data/emb.npy", words_file="data/words.txt")
    monkeypatch.setattr(V, "KNOWN_SOURCES", {name: source})
    monkeypatch.setattr(V, "_LOADED", {})
    return source


def test_known_source_reads_from_its_installed_package(tmp_path, monkeypatch):
    fake_package(tmp_path, monkeypatch)
    v = load_public_vectors("tiny-en")
    assert v.source == "package" and v.language == "en" and v.words == WORDS
    assert load_public_vectors("tiny-en") is v          # read once per process
    chosen, note = default_vectors(["space", "team", "goal"])
    assert chosen is v and note.startswith("tiny-en (4 dimensions, 100.0% of the vocabulary")


def test_default_uses_no_vectors_of_another_language(tmp_path, monkeypatch):
    fake_package(tmp_path, monkeypatch)
    chosen, note = default_vectors(["fusée", "orbite", "équipe"])
    assert chosen is None and "not its language" in note


def test_known_source_not_installed_is_refused_with_how_to_install(monkeypatch):
    monkeypatch.setattr(V, "KNOWN_SOURCES", {"glove-6b-50d": KnownSource(
        "glove-6b-50d", "no-such-dist", "no_such_module_xyz", "en", "", "a.npy", "b.txt")})
    with pytest.raises(DPTopicError, match=r"not installed: pip install 'dptopic\[vectors\]'"):
        load_public_vectors("glove-6b-50d")
    chosen, note = default_vectors(["space"])
    assert chosen is None and "no public word vectors installed" in note


def test_a_package_file_that_does_not_match_its_install_hash_is_refused(tmp_path, monkeypatch):
    fake_package(tmp_path, monkeypatch)
    monkeypatch.setattr(V, "_installed_hashes", lambda source: ({"tinyvectors/data/emb.npy": "A" * 43}, "1.0"))
    with pytest.raises(DPTopicError, match="does not match the hash it was installed with"):
        load_public_vectors("tiny-en")


def test_public_vectors_deep_copy_and_repr_stay_small():
    v = PublicVectors(name="x", words=["a"], vectors=np.zeros((1, 2)), sha256="0" * 64)
    assert "vectors" in repr(v) and v.dimension == 2


@pytest.mark.parametrize("make, phrase", [
    (lambda: PublicVectors("x", WORDS, np.where(np.eye(6, 4) > 0, np.nan, _arr())), "row 1 (the vector of 'space')"
                                                                                    " holds NaN or infinite"),
    (lambda: PublicVectors("x", WORDS, np.where(np.eye(6, 4) > 0, np.inf, _arr())), "NaN or infinite"),
    (lambda: PublicVectors("x", ["w"] * 401, np.zeros((400, 3), np.float32)), "has 400 rows but its word list 401"),
    (lambda: PublicVectors("x", WORDS, np.zeros(6)), "holds an array of shape (6,)"),
    (lambda: PublicVectors("x", WORDS, np.zeros((0, 4))), "has 0 rows but its word list 6"),
    (lambda: PublicVectors("x", [], np.zeros((0, 4))), "holds no vectors"),
    (lambda: PublicVectors("x", "space rocket", _arr(2)), "its words are a str"),
    (lambda: PublicVectors("x", ["space", 7], _arr(2)), "word 2 is an int"),
    (lambda: PublicVectors("x", ["space", ""], _arr(2)), "word 2 is an empty str"),
    (lambda: PublicVectors("x", WORDS, [["a"] * 4] * 6), "type <U1"),
    (lambda: PublicVectors(None, WORDS, _arr()), "name is None"),
    (lambda: PublicVectors("", WORDS, _arr()), "name is empty"),
    (lambda: PublicVectors("x", WORDS, _arr(), sha256="abc"), "sha256 is a str not 64 lower-case hex digits"),
    (lambda: PublicVectors("x", WORDS, _arr(), language=5), "language is an int"),
])
def test_vectors_built_in_python_are_checked_as_a_file_is(make, phrase):
    with pytest.raises(DPTopicError) as e:
        make()
    assert phrase in str(e.value) and "\n" not in str(e.value)


def test_vectors_built_in_python_without_a_digest_get_one_of_their_content():
    arr = _arr()
    a = PublicVectors("mine", WORDS, arr)
    assert a.sha256 == PublicVectors("other", list(WORDS), arr.copy()).sha256 and len(a.sha256) == 64
    assert a.sha256 != PublicVectors("mine", WORDS[::-1], arr).sha256
    b = PublicVectors("ints", WORDS[:2], [[1, 2], [3, 4]])        # integers are read as floats
    assert b.vectors.dtype.kind == "f" and b.dimension == 2
    assert b.entry(WORDS)["sha256"] == b.sha256


def test_vectors_changed_after_they_were_made_are_refused_when_read():
    v = PublicVectors("mine", WORDS, _arr())
    v.vectors = np.full((6, 4), np.nan)
    with pytest.raises(DPTopicError, match="PublicVectors 'mine': row 1 .* NaN or infinite"):
        load_public_vectors(v)
    v.vectors, v.words = _arr(5), WORDS
    with pytest.raises(DPTopicError, match="has 5 rows but its word list 6 words"):
        load_public_vectors(v)


def _read_in_time(spec, seconds=60.0):
    """``load_public_vectors(spec)``'s refusal, read in a thread that must finish within ``seconds`` (a FIFO would
    block it for good)."""
    import threading

    out = {}

    def read():
        try:
            load_public_vectors(spec)
        except DPTopicError as e:
            out["error"] = str(e)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"reading {spec} did not end"
    return out.get("error")


@pytest.mark.parametrize("spec, phrase", [
    ("", "the name is empty"),
    ("folder", "is a folder, not a file"),
    ("/dev/zero", "is a device (such as /dev/zero or /dev/null), not a regular file"),
    ("pipe.txt", "is a named pipe (FIFO)"),
    ("nothere.txt", "no such file"),
])
def test_a_folder_a_device_a_fifo_and_an_empty_name_are_named_for_what_they_are(tmp_path, spec, phrase):
    import os

    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "folder").mkdir()
    error = _read_in_time(spec if spec in ("", "/dev/zero") else str(tmp_path / spec))
    assert error is not None and phrase in error and "\n" not in error
    assert spec == "nothere.txt" or "no such file" not in error


@pytest.mark.parametrize("payload, phrase", [
    (b"\x00" * 5_000_000, "holds a NUL byte (on line 1)"),
    (b"a" * 5_000_000, "line 1 is longer than 132,096 bytes (a word of at most 1,024 bytes and at most 4,096 values"),
    (b"space 0.1 0.2\n" + b"rocket " + b"1" * 200_000, "line 2 is longer than 1,088 bytes (a word of at most 1,024"
                                                        " bytes and its 2 values of at most 32 characters each)"),
    (b"\n" * 5_000_000, "holds more than 1,000 blank lines"),
    (b"900000000 2\nspace 0.1 0.2\n", "announces 900,000,000 words of 2 values: give at most 4,096 values a word and"
                                      " 1,073,741,824 in all"),
])
def test_a_text_file_is_read_within_the_bounds_of_its_format(tmp_path, payload, phrase):
    """A gzipped stream of NUL bytes, one endless line, endless blank lines: refused at the first line past the format's
    bounds, which the message states, never read whole."""
    path = tmp_path / "big.txt.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(payload)
    error = _read_in_time(path)
    assert error is not None and phrase in error and "big.txt.gz" in error and "\n" not in error


def test_a_file_with_more_values_than_the_bound_is_refused_as_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(vector_files, "MAX_VALUES", 4 * 4)
    path = write_glove(tmp_path / "many.txt")
    with pytest.raises(DPTopicError, match=r"holds more than 16 values \(4 words of 4 by line 5\)"):
        load_public_vectors(path)


def test_tabs_a_byte_order_mark_and_an_upper_case_gz_read_as_the_plain_format(tmp_path):
    arr = _arr()
    rows = [w + "\t" + "\t".join(f"{x:.6f}" for x in r) for w, r in zip(WORDS, arr)]
    (tmp_path / "tabs.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "tabs.tsv").read_bytes().replace(b"\t", b" "))
    write_glove(tmp_path / "upper.txt.gz", arr=arr)
    (tmp_path / "upper.txt.gz").rename(tmp_path / "UPPER.TXT.GZ")
    for name in ("tabs.tsv", "bom.txt", "UPPER.TXT.GZ"):
        v = load_public_vectors(tmp_path / name)
        assert v.words == WORDS and v.rows_of(["space"]).tolist() == [0], name
        np.testing.assert_allclose(v.vectors, arr, atol=1e-6)
    write_npy(tmp_path, arr=arr, name="bomlist")
    (tmp_path / "bomlist.txt").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "bomlist.txt").read_bytes())
    assert load_public_vectors(tmp_path / "bomlist.npy").words == WORDS


def test_a_word_list_larger_than_its_rows_can_hold_is_refused_unread(tmp_path):
    p = write_npy(tmp_path, words=WORDS)
    (tmp_path / "vec.txt").write_text("\n".join(WORDS) + "\n" + "x" * 10_000 + "\n", encoding="utf-8")
    with pytest.raises(DPTopicError, match="more than 6 words of at most 1,024 bytes a line take"):
        load_public_vectors(p)
