"""Public word vectors: reading an installed source or a user's file, what the card records of them, and the
one-line refusal of a corrupt file or of vectors that do not match the vocabulary's language."""
import gzip
import hashlib

import numpy as np
import pytest

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
    with pytest.raises(DPTopicError, match="unknown public vectors 'glove-9z'"):
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
