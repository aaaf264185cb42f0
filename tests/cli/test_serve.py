"""``dptopic serve``, ``submit`` and ``fed-client`` on the command line: bad input is refused in one line that names
what the user gave, before anything is sent, spent or written."""
from __future__ import annotations

import pytest

from dptopic.cli.main import main
import argparse
import sqlite3
import subprocess
import sys
import dptopic

# nothing listens on port 9 (discard): a command that got as far as the server would say it cannot reach it
NO_SERVER = "http://127.0.0.1:9"

BAD_STATE_FILES = {
    "prose.txt": b"my own notes, not a state file\n",
    "empty.json": b"",
    "truncated.json": b'{"format": "dptopic-submit-state", "version": 1, "uploads": [',
    "nul.json": b"\0" * 64,
}


def _refusal(capsys, argv) -> str:
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:         # argparse's own refusals
        rc = e.code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: "), (rc, err)
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("command", ["submit", "fed-client"])
@pytest.mark.parametrize("name", sorted(BAD_STATE_FILES))
def test_a_state_file_that_is_not_one_is_refused_naming_it_and_left_alone(tmp_path, monkeypatch, capsys, command,
                                                                          name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs.txt").write_text("apple banana cherry\ngrape lemon mango\n")
    (tmp_path / name).write_bytes(BAD_STATE_FILES[name])
    line = _refusal(capsys, [command, "--server", NO_SERVER, "--corpus", "docs.txt", "--state", name,
                             "--retries", "0"])
    assert f"--state '{name}' is not a" in line and "state file" in line, line
    assert "empty" in line if name == "empty.json" else "not JSON" in line, line
    assert (tmp_path / name).read_bytes() == BAD_STATE_FILES[name]      # the user's file is not touched


# ---------------------------------------------------------------- serve: a flag without effect is refused
@pytest.fixture
def serve_base(tmp_path, monkeypatch):
    """serve's base command line (a vocabulary, a prior, a database path), and a server that never starts: a start
    that got past the checks raises instead of serving."""
    from dptopic.cli import serve
    from dptopic.errors import DPTopicError

    def started(*a, **kw):
        raise DPTopicError("the server would have started")

    monkeypatch.setattr(serve, "_serve_on", started)
    words = [f"word{c}{d}" for c in "abcdefgh" for d in "abcdefgh"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    (tmp_path / "prior.txt").write_text("\n".join(" ".join(words[i:i + 8]) for i in range(0, 48, 4)) + "\n")
    return ["serve", "--vocabulary", tmp_path / "vocab.txt", "--database", f"sqlite:///{tmp_path / 's.db'}",
            "--topics", "3", "--port", "8799"], tmp_path


WORD = ["--epsilon-word", "2"]
DOCUMENT = ["--report-kind", "document", "--epsilon-doc", "4"]


@pytest.mark.parametrize("extra, flag", [
    (WORD + ["--format", "jsonl"], "--format"),
    (WORD + ["--format", "auto"], "--format"),                  # given at its default value: still given
    (WORD + ["--text-field", "body"], "--text-field"),
    (WORD + ["--prior-iterations", "5"], "--prior-iterations"),
    (DOCUMENT + ["--iterations", "5"], "--iterations"),
    (DOCUMENT + ["--prior-iterations", "5"], "--prior-iterations"),
    (DOCUMENT + ["--lam", "0.3"], "--lam"),
    (DOCUMENT + ["--omega", "0.3"], "--omega"),
    (DOCUMENT + ["--delta", "1e-6"], "--delta"),
    (WORD + ["--fed-epsilon", "2", "--fed-failure-rate", "0.2"], "--fed-failure-rate"),
    (WORD + ["--database-timeout", "5"], "--database-timeout"),
    (WORD + ["--allow-remote"], "--allow-remote"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_serve_refuses_a_flag_that_has_no_effect_in_the_mode_chosen(serve_base, capsys, extra, flag):
    base, tmp = serve_base
    line = _refusal(capsys, base + extra)
    assert line.startswith(f"error: {flag} has no effect"), line
    assert not (tmp / "s.db").exists()                  # refused before the database is made


@pytest.mark.parametrize("extra", [
    WORD + ["--prior", "{prior}", "--format", "text", "--text-field", "text", "--prior-iterations", "5", "--lam", "0.3",
            "--omega", "0.3", "--delta", "1e-6", "--iterations", "5"],
    DOCUMENT + ["--batch-size", "10", "--topics", "3"],
    WORD + ["--host", "127.0.0.1", "--body-timeout", "5", "--header-timeout", "5"],
], ids=["word with a prior", "document", "loopback"])
def test_serve_takes_the_same_flags_where_they_have_an_effect(serve_base, capsys, extra):
    base, tmp = serve_base
    line = _refusal(capsys, base + [str(tmp / "prior.txt") if a == "{prior}" else a for a in extra])
    assert "the server would have started" in line, line


def test_a_contributors_rare_word_is_not_cut_before_the_servers_vocabulary_applies(tmp_path):
    """The text is read keeping every word: a default cap of 1,000 dropped the rarest before the mapping."""
    from dptopic.cli.serve import _client_corpus

    filler = [f"fill{a}{b}{c}" for a in "abcdefghij" for b in "abcdefghij" for c in "abcdefghijklmno"]   # 1,500
    p = tmp_path / "mine.txt"
    p.write_text(" ".join(w + " " + w for w in filler) + " zebra\n")
    c = _client_corpus(argparse.Namespace(corpus=str(p), format="auto", text_field="text"))
    assert "zebra" in c.vocabulary and c.vocab_size == 1501
    assert c.restrict(["zebra", "fillaaa"], drop_empty=False).n_tokens == 3


WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dptopic", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def _one_line_error(r):
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    return r.stderr


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
    assert cfg.fed_epsilon == pytest.approx(eps) and cfg.fed_pad_length == entries
    assert "drop --fed-epsilon" in _one_line_error(_cli(*base, "--fed-user-budget", "90", "--fed-epsilon", "3"))


# ---- item 19: serve refuses, at start-up, settings that would break every request
def test_serve_validates_settings_at_start_up(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(WORDS))
    base = ["serve", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--topics", "3",
            "--database", f"sqlite:///{tmp_path / 's.db'}"]
    assert "exceeds the vocabulary" in _one_line_error(_cli(*base, "--topics", "10"))
    assert "too small" in _one_line_error(_cli(*base, "--fed-epsilon", "1e-300", "--fed-topics", "3"))
    assert "(0, 500]" in _one_line_error(_cli(*base, "--fed-epsilon", "1e308", "--fed-topics", "3"))
    assert "in memory" in _one_line_error(_cli(*base[:-2], "--database", "sqlite://"))
    assert "1-65535" in _one_line_error(_cli(*base, "--port", "70000"))
    assert "--fed-epsilon" in _one_line_error(_cli(*base, "--fed-min-updates", "3"))
    own = tmp_path / "mine.db"
    with sqlite3.connect(own) as con:
        con.execute("create table notes (x)")
    assert "not dptopic's" in _one_line_error(_cli(*base[:-2], "--database", f"sqlite:///{own}"))
    with sqlite3.connect(own) as con:
        assert [r[0] for r in con.execute("select name from sqlite_master")] == ["notes"]   # untouched
    (tmp_path / "token").write_text("t" * 40)
    assert "is a directory" in _one_line_error(_cli(*base, "--token-file", str(tmp_path)))


# ------------------------------------------------------------------ bounds and one-line errors
def _error_line(capsys, argv) -> str:
    try:
        rc = main([str(x) for x in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error") and "Traceback" not in err, (rc, err)
    return lines[0]


@pytest.mark.parametrize("server", ["http://a b:8000", "http://127.0.0.1:9/x\ny", "http://" + "a" * 64 + ".example:8000"])
@pytest.mark.parametrize("command", [["pull", "--out", "p"], ["submit", "--corpus", "docs.txt"],
                                     ["fed-client", "--corpus", "docs.txt"]])
def test_a_server_url_http_refuses_is_one_line(tmp_path, monkeypatch, capsys, server, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs.txt").write_text("apple banana cherry\ndog elephant fish\n")
    line = _error_line(capsys, [*command, "--server", server, "--retries", "0", "--timeout", "1"])
    assert "invalid server URL" in line
