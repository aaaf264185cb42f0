"""Issue 20: the items not covered by test_issue20_privacy/_cli/_fed. Each fails on the code before the fix."""
import json
import socket
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

import dptopic
from dptopic.corpus import Corpus, lda_corpus
from dptopic.errors import DPTopicError

WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dptopic", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def _one_line_error(r):
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    return r.stderr


# ---- item 4: one report per document, empty ones included
def test_randomize_keeps_documents_without_vocabulary_words(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(WORDS))
    (tmp_path / "d.txt").write_text("apple pear\nzzz qqq\nplum\n")
    r = _cli("randomize", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--corpus",
             str(tmp_path / "d.txt"), "--out", str(tmp_path / "r.dpr"))
    assert r.returncode == 0, r.stderr
    from dptopic.local import ReportSet

    assert ReportSet.load(tmp_path / "r.dpr").n_reports == 3
    assert "1 of 3 documents contain no word" in r.stderr
    (tmp_path / "e.txt").write_text("zzz\nqqq\n")     # no vocabulary word at all: still written, and said so
    r = _cli("randomize", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--corpus",
             str(tmp_path / "e.txt"), "--out", str(tmp_path / "e.dpr"))
    assert r.returncode == 0 and ReportSet.load(tmp_path / "e.dpr").n_reports == 2 and "2 of 2" in r.stderr


# ---- item 5: the contributor-side default is the OS CSPRNG
def test_randomizer_default_is_cryptographic():
    from dptopic.local import Randomizer

    rz = Randomizer(WORDS, epsilon_word=1.0)
    assert rz.secure and not rz.simulation and "CSPRNG" in rz.privacy_report()["randomness"]
    fast = Randomizer.for_simulation(WORDS, epsilon_word=1.0)
    assert not fast.secure and "SIMULATION" in fast.privacy_report()["randomness"]
    assert rz.randomize([["apple"], [], ["fig", "kiwi"]]).n_reports == 3


# ---- item 8: secure DP set union draws its noise from OpenDP
def test_secure_set_union_noise_is_opendps(monkeypatch):
    pytest.importorskip("opendp")
    from dptopic.corpus.private_vocabulary import dp_set_union
    from dptopic.mechanisms import laplace

    calls = []
    real = laplace._opendp_release

    def spy(values, scale, integer):
        calls.append((np.shape(values), scale, integer))
        return real(values, scale, integer)

    monkeypatch.setattr(laplace, "_opendp_release", spy)
    c = lda_corpus(n_docs=200, vocab_size=40, n_topics=3, doc_length=20, seed=0).corpus
    _, ev = dp_set_union(c, 2.0, 1e-6, secure=True, mechanism="laplace")
    assert calls and calls[0][0] == (40,) and not calls[0][2] and "OpenDP" in ev.label
    with pytest.raises(DPTopicError, match="refuses a seed"):
        dp_set_union(c, 2.0, 1e-6, secure=True, seed=1)
    # the default (Gaussian policy) draws from OpenDP's Gaussian sampler
    from dptopic.mechanisms import gaussian

    drawn = []
    real_g = gaussian._opendp_gaussian
    monkeypatch.setattr(gaussian, "_opendp_gaussian", lambda v, std: drawn.append(np.shape(v)) or real_g(v, std))
    _, ev = dp_set_union(c, 2.0, 1e-6, secure=True)
    assert drawn == [(40,)] and "OpenDP" in ev.label and "gaussian" in ev.label


# ---- item 9: LiRA's halves are equal on an odd corpus
def test_lira_halves_are_equal_on_an_odd_corpus():
    from dptopic.attacks.lira import run_lira

    c = lda_corpus(n_docs=31, vocab_size=20, n_topics=2, doc_length=10, seed=1).corpus

    def train(corpus, rng):
        return dptopic.LDA(n_topics=2, n_iter=3, seed=rng, verbose=0).fit(corpus).components_

    res = run_lira(c, train, n_shadows=4, seed=0, verbose=0)
    assert res.settings["n_docs_audited"] == 30 and "sat the audit out" in res.settings["halves"]


# ---- item 11: evaluate reads documents in the model's vocabulary
def test_evaluate_uses_the_models_vocabulary(tmp_path):
    rng = np.random.default_rng(0)
    vocab = [f"{a}{b}" for a in "bcdfgh" for b in ("ax", "ex", "ix", "ox", "ux")][:30]
    texts = [" ".join(rng.choice(vocab, 12)) for _ in range(120)]
    c = Corpus.from_texts(texts, stop_words=None, max_vocab=None)
    dptopic.LDA(n_topics=3, n_iter=30, seed=0, verbose=0).fit(c).save(tmp_path / "m")
    (tmp_path / "t.txt").write_text("\n".join(texts[:40]))
    r = _cli("evaluate", "--model", str(tmp_path / "m"), "--corpus", str(tmp_path / "t.txt"), "--json", "--seed", "0")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    m = dptopic.load(tmp_path / "m")
    want = m.perplexity(Corpus.from_texts(texts[:40], vocabulary=m.vocabulary_), mode="completion", seed=0)
    assert got["perplexity"] == pytest.approx(want)
    assert "40 documents" in got["reference"] and -1 <= got["npmi"] <= 1
    assert "--max-vocab" in _one_line_error(_cli("evaluate", "--model", str(tmp_path / "m"), "--corpus",
                                                   str(tmp_path / "t.txt"), "--max-vocab", "5"))


# ---- item 13: a save writes the parameters that produced the fitted state
def test_set_params_after_fit_does_not_change_what_save_writes(tmp_path):
    X = lda_corpus(n_docs=60, vocab_size=40, n_topics=3, doc_length=20, seed=0).corpus
    m = dptopic.LDA(n_topics=20, n_iter=3, seed=0, verbose=0).fit(X)
    m.set_params(n_topics=10)
    m.save(tmp_path / "lda")
    assert dptopic.load(tmp_path / "lda").n_topics == 20
    h = dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=2.0, n_iter=2, verbose=0).fit(X)
    h.set_params(epsilon_laplace=0.01)
    h.save(tmp_path / "hdp")
    meta = json.loads((tmp_path / "hdp" / "model.json").read_text())
    assert meta["params"]["epsilon_laplace"] == 1.0 == meta["privacy"]["parameters"]["epsilon_laplace"]


# ---- item 18: nesting bounded before parsing
def test_deeply_nested_json_is_one_line(tmp_path):
    deep = '{"text": ' + "[" * 30000 + "]" * 30000 + "}"
    (tmp_path / "d.jsonl").write_text(deep + "\n")
    assert "deeper than" in _one_line_error(_cli("corpus", "info", str(tmp_path / "d.jsonl")))
    from dptopic._io import load_json

    with pytest.raises(DPTopicError, match="deeper than 64"):
        load_json("[" * 65 + "]" * 65)
    assert load_json('{"a": [[1], "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]}') is not None


def test_serve_fed_user_budget_sets_the_split_from_the_vocabulary(tmp_path):
    pytest.importorskip("starlette")
    from dptopic.accounting.fedlda import entries_for_user_budget
    from dptopic.cli.main import build_parser
    from dptopic.cli.serve import build_config

    (tmp_path / "v.txt").write_text("\n".join(WORDS))
    base = ["serve", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--topics", "3",
            "--database", f"sqlite:///{tmp_path / 's.db'}", "--fed-topics", "3"]
    cfg = build_config(build_parser().parse_args(base + ["--fed-user-budget", "90"]))
    eps, entries = entries_for_user_budget(90, len(WORDS))
    assert cfg.fed_epsilon_per_entry == pytest.approx(eps) and cfg.fed_pad_length == entries
    assert "drop --fed-epsilon-per-entry" in _one_line_error(_cli(*base, "--fed-user-budget", "90", "--fed-epsilon-per-entry", "3"))


# ---- item 19: serve refuses, at start-up, settings that would break every request
def test_serve_validates_settings_at_start_up(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(WORDS))
    base = ["serve", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--topics", "3",
            "--database", f"sqlite:///{tmp_path / 's.db'}"]
    assert "exceeds the vocabulary" in _one_line_error(_cli(*base, "--topics", "10"))
    assert "too small" in _one_line_error(_cli(*base, "--fed-epsilon-per-entry", "1e-300", "--fed-topics", "3"))
    assert "(0, 500]" in _one_line_error(_cli(*base, "--fed-epsilon-per-entry", "1e308", "--fed-topics", "3"))
    assert "in memory" in _one_line_error(_cli(*base[:-2], "--database", "sqlite://"))
    assert "1-65535" in _one_line_error(_cli(*base, "--port", "70000"))
    assert "--fed-epsilon-per-entry" in _one_line_error(_cli(*base, "--fed-min-updates", "3"))
    own = tmp_path / "mine.db"
    with sqlite3.connect(own) as con:
        con.execute("create table notes (x)")
    assert "not dptopic's" in _one_line_error(_cli(*base[:-2], "--database", f"sqlite:///{own}"))
    with sqlite3.connect(own) as con:
        assert [r[0] for r in con.execute("select name from sqlite_master")] == ["notes"]   # untouched
    (tmp_path / "token").write_text("t" * 40)
    assert "is a directory" in _one_line_error(_cli(*base, "--token-file", str(tmp_path)))


def test_malformed_http_framing_gets_the_json_error(tmp_path):
    pytest.importorskip("uvicorn")
    from service_helpers import Server, make_data

    make_data(tmp_path)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'h.db'}", "--train-interval", "0").start()
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
            data = b""
            while chunk := s.recv(4096):
                data += chunk
    finally:
        srv.stop()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
    assert json.loads(body)["error"]["code"] == "bad_request"


# ---- items 20-22: caps, ranges and flags that do not apply
def test_caps_ranges_and_foreign_flags(tmp_path):
    out = ["--out", str(tmp_path / "m")]
    assert "steps" in _one_line_error(_cli("train", "--algorithm", "svi", "--epsilon", "1", "--sampling-rate",
                                           "1e-300", *out))
    assert "steps" in _one_line_error(_cli("train", "--algorithm", "svi", "--epsilon", "1", "--epochs", "1e9", *out))
    assert "alpha" in _one_line_error(_cli("train", "--alpha", "1e-320", "--iterations", "2", *out))
    assert "alpha" in _one_line_error(_cli("train", "--algorithm", "online-vb", "--alpha", "1e-320", *out))
    assert "whole passes" in _one_line_error(_cli("train", "--algorithm", "online-vb", "--epochs", "0.2", *out))
    assert "--iterations" in _one_line_error(_cli("train", "--algorithm", "fed", "--iterations", "5", *out))
    assert "--corpus" in _one_line_error(_cli("train", "--algorithm", "lp", "--corpus", "demo", "--max-vocab", "3",
                                              *out))
    assert "exceeds the vocabulary" in _one_line_error(_cli("train", "--algorithm", "online-vb", "--topics", "100000",
                                                            *out))
    (tmp_path / "v.txt").write_text("\n".join(WORDS))
    (tmp_path / "d.txt").write_text("apple pear\n")
    assert "protects nothing" in _one_line_error(_cli("randomize", "--vocabulary", str(tmp_path / "v.txt"), "--f",
                                                      "1e-320", "--corpus", str(tmp_path / "d.txt"), "--out",
                                                      str(tmp_path / "r.dpr")))
    assert "is a directory" in _one_line_error(_cli("train", "--algorithm", "lp", "--reports", str(tmp_path), *out))
    with pytest.raises(DPTopicError, match="alpha"):
        dptopic.LDA(alpha=1e-320).fit(lda_corpus(n_docs=10, vocab_size=10, n_topics=2, doc_length=5, seed=0).corpus)


# ---- item 23: warnings in one line; no hidden folder left by a killed save
def test_cli_warnings_are_one_line(tmp_path):
    r = _cli("train", "--algorithm", "fed", "--topics", "3", "--clients", "10", "--rounds", "1", "--pad-length", "16",
             "--seed", "1", "--max-vocab", "50", "--out", str(tmp_path / "f"))
    assert r.returncode == 0, r.stderr
    assert "warning: FedLDA with an explicit seed" in r.stderr and "UserWarning" not in r.stderr


def test_a_killed_saves_hidden_folder_is_cleaned_by_the_next_save(tmp_path):
    X = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    m = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(X)
    stale = tmp_path / ".model.abcd1234"          # what a save killed before its rename leaves
    stale.mkdir()
    np.save(stale / "components.npy", np.zeros(3))
    (stale / "model.json").write_text("{}")
    keep = tmp_path / ".model.old-notes"           # not ours: never touched
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    m.save(tmp_path / "model")
    assert not stale.exists() and (keep / "notes.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".model.old-notes", "model"]
