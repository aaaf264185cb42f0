"""``dptopic train --public-vectors``: a corrupt file or vectors of another language refused in one line (exit 2,
nothing written), ``none`` turns them off, and a run with vectors says so and puts them on the card."""
import json

import numpy as np
import pytest

from helpers import run_dptopic


def _names(stem, n=150):
    """Made-up words of letters only (the tokeniser drops digits)."""
    return [stem + "".join("abcdefghijklmnopqrstuvwxyz"[(i // 26 ** p) % 26] for p in (1, 0)) for i in range(n)]


def _corpus(path, n=300, seed=0):
    rng = np.random.default_rng(seed)
    space, sport = _names("space"), _names("sport")
    lines = []
    for _ in range(n):
        words = space if rng.random() < 0.5 else sport
        lines.append(json.dumps({"text": " ".join(rng.choice(words, size=30))}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _vectors(path, words, dim=4):
    rng = np.random.default_rng(1)
    rows = []
    for w in words:
        v = 0.2 * rng.normal(size=dim)
        v[0 if w.startswith("space") else 1] += 1
        rows.append(w + " " + " ".join(f"{x:.4f}" for x in v))
    path.write_text("\n".join(rows) + "\n")
    return path


def test_corrupt_vectors_file_is_refused_in_one_line_before_anything_is_written(tmp_path):
    corpus = _corpus(tmp_path / "c.jsonl")
    bad = tmp_path / "bad.txt"
    bad.write_text("space1 0.1 0.2\nspace2 0.3\n")
    r = run_dptopic("train", "--corpus", corpus, "--unit", "document", "--epsilon", "1", "--topics", "2",
                    "--public-vectors", bad, "--out", tmp_path / "m", "--no-ledger")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert "bad.txt" in line and "line 2 has 1 value, not 2" in line
    assert not (tmp_path / "m" / "model.json").exists()


def test_vectors_of_another_language_are_refused(tmp_path):
    corpus = _corpus(tmp_path / "c.jsonl")
    other = _vectors(tmp_path / "fr.txt", _names("mot", 40))
    r = run_dptopic("train", "--corpus", corpus, "--unit", "document", "--epsilon", "1", "--topics", "2",
                    "--public-vectors", other, "--out", tmp_path / "m", "--no-ledger")
    assert r.returncode == 2 and "language" in r.stderr and "fr.txt" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: --public-vectors (fr.txt) has vectors for 0 of")


def test_given_vectors_are_said_and_on_the_card_and_none_turns_them_off(tmp_path):
    corpus = _corpus(tmp_path / "c.jsonl")
    words = _names("space") + _names("sport")
    vec = _vectors(tmp_path / "v.txt", words)
    r = run_dptopic("train", "--corpus", corpus, "--unit", "document", "--epsilon", "2", "--topics", "2",
                    "--max-vocab", "300", "--public-vectors", vec, "--out", tmp_path / "m", "--no-ledger")
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "public vectors: v.txt (4 dimensions" in out and "given with --public-vectors" in out
    card = json.loads((tmp_path / "m" / "model.json").read_text())["privacy_card"]
    assert card["public_vectors"]["name"] == "v.txt" and card["public_vectors"]["dimension"] == 4
    r = run_dptopic("train", "--corpus", corpus, "--unit", "document", "--epsilon", "2", "--topics", "2",
                    "--max-vocab", "300", "--public-vectors", "none", "--out", tmp_path / "n", "--no-ledger")
    assert r.returncode == 0 and "public vectors:" not in r.stdout
    assert "public_vectors" not in json.loads((tmp_path / "n" / "model.json").read_text())["privacy_card"]


def test_topics_mark_the_placed_words_and_say_in_one_line_that_they_read_no_private_data(tmp_path):
    """``dptopic topics`` (terminal, JSON, CSV) lists the words the public vectors placed marked '*', and one line of
    its own says what the mark means: placed by the named public vectors, not learned from the data, and read from
    the release and the public vectors alone (no private data: inside the guarantee)."""
    corpus = _corpus(tmp_path / "c.jsonl", n=1500)
    vec = _vectors(tmp_path / "v.txt", _names("space") + _names("sport"))
    r = run_dptopic("train", "--corpus", corpus, "--unit", "document", "--epsilon", "4", "--topics", "2",
                    "--max-vocab", "300", "--public-vectors", vec, "--out", tmp_path / "m", "--no-ledger", "--quiet",
                    "--seed", "0")      # a fixed draw: which words the vectors place depends on the noise
    assert r.returncode == 0, r.stderr
    r = run_dptopic("topics", tmp_path / "m", "--show-unsupported")
    assert r.returncode == 0, r.stderr
    assert any(w.endswith("*") for line in r.stdout.splitlines() if "│" in line for w in line.split())
    marks = [line for line in r.stdout.splitlines() if line.startswith("'*' marks")]
    assert len(marks) == 1, r.stdout           # said once, on a line of its own
    assert "public word vectors v.txt placed" in marks[0] and "not learned from the data" in marks[0]
    assert "no private data" in marks[0] and "inside the guarantee" in marks[0]
    doc = json.loads(run_dptopic("topics", tmp_path / "m", "--format", "json", "--show-unsupported").stdout)
    assert "no private data" in doc["placed_words_note"] and "'*' marks" in doc["placed_words_note"]
    r = run_dptopic("topics", tmp_path / "m", "--format", "csv", "--show-unsupported")
    assert any(x.startswith("note: '*' marks") and "no private data" in x for x in r.stderr.splitlines())


def test_rectangular_route_per_person_is_refused_in_one_line_naming_the_flags(tmp_path):
    """``--vectors-route rectangular --unit user``: one line in the command's own flags, exit status 2, no model."""
    import numpy as np

    rng = np.random.default_rng(0)
    words = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
    src = tmp_path / "c.jsonl"
    lines = [f'{{"text": "{" ".join(rng.choice(words, 8))}", "user": "u{i % 20}"}}\n' for i in range(200)]
    src.write_text("".join(lines))
    vec = tmp_path / "v.txt"
    vec.write_text("".join(f"{w} {rng.normal():.3f} {rng.normal():.3f}\n" for w in words))
    r = run_dptopic("train", "--algorithm", "docdp-cooc", "--corpus", src, "--unit", "user", "--user-field", "user",
                    "--epsilon", "1", "--topics", "3", "--public-vectors", vec, "--vectors-route", "rectangular",
                    "--out", tmp_path / "m", "--quiet")
    err = r.stderr
    assert r.returncode == 2, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors == ["error: --vectors-route rectangular applies at the document unit only, not per person: no"
                      " per-person bound of its statistic is built; give --vectors-route 'auto', 'spread' or"
                      " 'groups'."], err
    assert not (tmp_path / "m").exists()


def _releases(ledger) -> int:
    """How many releases the ledger (SQLite) records; 0 when no ledger was made."""
    import sqlite3

    if not ledger.exists():
        return 0
    with sqlite3.connect(ledger) as con:
        return con.execute("select count(*) from releases").fetchone()[0]


def test_a_malformed_vectors_file_is_refused_before_the_private_vocabulary_is_drawn(tmp_path):
    """With --private-vocabulary the DP set union is the run's first release: a malformed --public-vectors file is
    refused before it (exit 2, one line, nothing recorded on the ledger, no model)."""
    corpus = _corpus(tmp_path / "c.jsonl")
    bad = tmp_path / "bad.txt"
    bad.write_text("spaceaa 0.1 0.2\nspaceab 0.3\n")
    ledger = tmp_path / "l.sqlite"
    r = run_dptopic("train", "--corpus", corpus, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2",
                    "--private-vocabulary", "8,1e-6", "--public-vectors", bad, "--ledger", ledger, "--dataset", "d",
                    "--out", tmp_path / "m")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [x for x in r.stderr.strip().splitlines() if not x.startswith(("warning:", "note:"))]
    assert len(lines) == 1 and "bad.txt" in lines[0] and "line 2 has 1 value, not 2" in lines[0], r.stderr
    assert "private vocabulary:" not in r.stdout and _releases(ledger) == 0
    assert not (tmp_path / "m" / "model.json").exists()


@pytest.mark.parametrize("spec, says", [
    ("", "the name is empty"),
    ("folder", "is a folder, not a file"),
    ("/dev/zero", "is a device (such as /dev/zero or /dev/null), not a regular file"),
    ("pipe.txt", "is a named pipe (FIFO)"),
])
def test_public_vectors_that_are_no_file_are_named_for_what_they_are(tmp_path, spec, says):
    import os

    corpus = _corpus(tmp_path / "c.jsonl", n=60)
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe.txt")
    given = spec if spec in ("", "/dev/zero") else tmp_path / spec
    r = run_dptopic("train", "--corpus", corpus, "--unit", "document", "--epsilon", "1", "--topics", "2",
                    "--public-vectors", given, "--out", tmp_path / "m", "--no-ledger", timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [x for x in r.stderr.strip().splitlines() if not x.startswith(("warning:", "note:"))]
    assert len(lines) == 1 and says in lines[0] and "no such file" not in lines[0], r.stderr
