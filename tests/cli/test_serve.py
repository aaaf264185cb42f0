"""``dptopic serve``, ``submit`` and ``fed-client`` on the command line: bad input is refused in one line that names
what the user gave, before anything is sent, spent or written."""
from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from conftest import cli_ok, cli_output, flat
from dptopic.cli.main import main
from helpers import cli_error_line, one_line_stderr, run_dptopic
from service_helpers import free_port, make_data, write_token

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
    assert f"--state {name} is not a" in line and "state file" in line, line
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
    (WORD + ["--fed-epsilon-per-entry", "2", "--fed-failure-rate", "0.2"], "--fed-failure-rate"),
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


def test_a_setting_without_effect_is_refused_only_when_given():
    from dptopic.cli.serve import refuse_idle_settings
    from dptopic.errors import DPTopicError

    settings = {"prior": None, "report_kind": "word", "format": "csv", "host": "127.0.0.1"}
    with pytest.raises(DPTopicError, match=r"^--format has no effect here: it is the format of --prior"):
        refuse_idle_settings(settings, given={"format"})
    refuse_idle_settings(settings, given=set())
    with pytest.raises(DPTopicError, match="--format has no effect"):   # not at its default: taken as given
        refuse_idle_settings(settings)


@pytest.mark.parametrize("extra, expected", [
    (["--report-kind", "document", "--epsilon-word", "2"],
     "error: --report-kind document takes --epsilon-doc (per document), not --epsilon-word."),
    ([], "error: --epsilon-word is required for word-level reports (or --report-kind document with --epsilon-doc)."),
    (WORD + ["--epsilon-doc", "4"], "error: --epsilon-doc is for --report-kind document; word-level reports take"
                                    " --epsilon-word."),
    (WORD + ["--fed-user-budget", "40", "--fed-pad-length", "8"], "error: --fed-user-budget chooses the epsilon per"
     " entry and the entries itself: drop --fed-epsilon-per-entry and --fed-pad-length."),
    (WORD + ["--fed-topics", "2"], "error: --fed-topics has no effect without FedLDA: add --fed-epsilon-per-entry"
     " EPS_ENTRY (or --fed-user-budget EPS_USER) to run FedLDA rounds, or drop it."),
    (WORD + ["--host", "example.org"], "error: --host example.org would expose the server beyond this machine: put it"
     " behind a TLS reverse proxy and pass --allow-remote to confirm."),
    (WORD + ["--max-body-bytes", "65"], "error: --max-body-bytes 65 is smaller than the smallest upload"),
], ids=["document with epsilon-word", "no epsilon", "word with epsilon-doc", "user budget with pad length",
        "fed flag without fedlda", "remote host", "body limit"])
def test_serve_writes_the_librarys_refusals_in_its_flags(serve_base, capsys, extra, expected):
    """service.startup refuses in its parameters (epsilon_word=, max_body_bytes=); serve writes the line in flags."""
    base, tmp = serve_base
    line = _refusal(capsys, base + extra)
    assert line.startswith(expected), line
    assert "_" not in line.split(":")[1].split("(")[0], line        # no Python name before the reason
    assert not (tmp / "s.db").exists()


# ---------------------------------------------------------------- serve: FedLDA's epsilon per entry has its own name
def test_serve_refuses_the_old_fed_epsilon_naming_the_per_entry_flag(serve_base, capsys):
    """--fed-epsilon was a figure per reported entry: refused, never read as the per-user total."""
    base, tmp = serve_base
    line = _refusal(capsys, base + WORD + ["--fed-epsilon", "2", "--fed-topics", "2"])
    assert "--fed-epsilon is gone" in line and "--fed-epsilon-per-entry" in line and "--fed-user-budget" in line, line
    assert not (tmp / "s.db").exists()


def test_serve_takes_fed_epsilon_per_entry(serve_base, capsys):
    base, tmp = serve_base
    line = _refusal(capsys, base + WORD + ["--fed-epsilon-per-entry", "2", "--fed-topics", "2"])
    assert "the server would have started" in line, line


# ---------------------------------------------------------------------------------------------------------------------
# `dptopic serve --prior`: the public prior corpus is read in the server's vocabulary, so none of its words is lost
# to a cap on words built from the prior's own text (which kept its 1,000 most common words).

def test_serve_prior_keeps_a_rare_vocabulary_word(tmp_path):
    pytest.importorskip("starlette")
    import itertools

    from dptopic.cli.main import build_parser
    from dptopic.cli.serve import build_config
    letters = "bcdfghjklmnp"
    common = ["".join(t) + "a" for t in itertools.islice(itertools.product(letters, repeat=3), 1200)]  # 1,200 words
    vocab = common + ["zebrafish"]                       # the server's vocabulary holds a word the prior uses once
    docs = [" ".join(common[(j * 37 + k) % 1200] for k in range(60)) for j in range(400)]
    docs.append("zebrafish " + " ".join(common[:5]))
    (tmp_path / "prior.txt").write_text("\n".join(docs) + "\n")
    (tmp_path / "v.txt").write_text("\n".join(vocab) + "\n")
    args = ["serve", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--topics", "3",
            "--database", f"sqlite:///{tmp_path / 's.db'}", "--prior", str(tmp_path / "prior.txt"), "--format", "text"]
    cfg = build_config(build_parser().parse_args(args))
    prior = cfg.prior
    assert list(prior.vocabulary.words) == vocab
    col = prior.to_bow().tocsc()[:, vocab.index("zebrafish")]
    assert col.sum() == 1                                # the rare word's one occurrence survives
    assert prior.to_bow().sum() == 400 * 60 + 6


ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- D: the URL with its scheme
def test_an_unreachable_database_is_named_with_its_scheme_and_no_password(tmp_path, capsys):
    make_data(tmp_path, vocab_size=40, n_docs=20, n_prior=10)
    for url, shown in (("postgresql+psycopg://u@127.0.0.1:1/db", "'postgresql+psycopg://u@127.0.0.1:1/db'"),
                       ("postgresql+psycopg://u:s3cret-pw@127.0.0.1:1/db", "'postgresql+psycopg://u:***@127.0.0.1:1/db'")):
        code, out, err = cli_output(capsys, "serve", "--database", url, "--port", str(free_port()),
                              "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--topics", "4")
        assert code == 2
        assert err.startswith(f"error: cannot use database {shown}:"), err
        assert "s3cret" not in err and "Traceback" not in err


# ----------------------------------------------------------------------------- F(i): serve --help
def test_serve_help_says_what_every_option_does(capsys):
    with pytest.raises(SystemExit) as e:
        main(["serve", "--help"])
    assert e.value.code == 0
    text = flat(capsys.readouterr().out)
    import argparse

    from dptopic.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    bare = [a.option_strings[0] for a in sub.choices["serve"]._actions if not a.help]
    assert bare == [], bare                              # every option says what it does
    assert "--host HOST address to listen on (default 127.0.0.1" in text
    assert "--max-body-bytes MAX_BODY_BYTES largest request body accepted, in bytes" in text
    assert "(default 4194304" in text
    assert "--max-reports-per-request MAX_REPORTS_PER_REQUEST most reports in one upload" in text
    assert "(default 10000)" in text
    assert ("--topics TOPICS topics K of the model the server trains (OLP-LDA, or LocalDocumentLDA for --report-kind"
            " document; default 20)") in text


# ----------------------------------------------------------------------------- B: the guide on the headline epsilon
def test_service_guide_says_the_headline_is_the_tightest_bound():
    from dptopic.accounting.local import f_from_epsilon, local_privacy_report

    guide = flat((ROOT / "docs" / "service_guarantees.md").read_text())
    section = guide.split("## What the server learns", 1)[1].split("## ", 1)[0]
    assert "composes by PLD at its δ" not in section
    # the service guide states the rule by pointing to the privacy guide, where it is stated for every model
    assert "headline `epsilon` is the tightest valid bound at its δ, as every model's ([privacy.md](privacy.md))" in section
    privacy = flat((ROOT / "docs" / "privacy.md").read_text())
    rule = privacy.split("### Which figure is the guarantee", 1)[1].split("###", 1)[0]
    assert "`epsilon_method` saying which accountant gave it" in rule
    assert "smallest of the valid bounds at that `delta` (tight PLD, RDP, and basic composition" in rule
    # what the guide states is what the code does: the headline is the least of the three figures
    for n in (1, 40, 400):
        rep = local_privacy_report(f_from_epsilon(2.0), 120, 1e-5, n)
        assert rep["epsilon"] == pytest.approx(min(rep["epsilon_pld"], rep["epsilon_rdp"], rep["epsilon_basic"]))


# ============================================================================ 1/11: FedLDA bound to the database


# ---------------------------------------------------------------------------- 9: vocabulary words never counted
def test_serve_warns_about_vocabulary_words_the_tokeniser_never_produces(capsys, tmp_path, no_uvicorn):
    words, _ = make_data(tmp_path, vocab_size=40, n_docs=5, n_prior=5)
    (tmp_path / "v.txt").write_text("\n".join(words + ["tax war", "is", "a"]) + "\n")
    err = cli_ok(capsys, ["serve", "--vocabulary", tmp_path / "v.txt", "--database",
                       f"sqlite:///{tmp_path / 'v.db'}", "--epsilon-word", 2, "--topics", 3, "--port", free_port()])
    warning = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1 and "3 that the tokeniser never produces" in warning[0], err
    assert "'tax war'" in warning[0]
    (tmp_path / "ok.txt").write_text("\n".join(words) + "\n")
    err = cli_ok(capsys, ["serve", "--vocabulary", tmp_path / "ok.txt", "--database",
                       f"sqlite:///{tmp_path / 'ok.db'}", "--epsilon-word", 2, "--topics", 3, "--port", free_port()])
    assert "warning:" not in err, err


def test_serve_refuses_a_body_limit_below_its_largest_fedlda_update(tmp_path, capsys):
    """With --fed-pad-length 600000 an update is about 4.8 MB, over the 4 MiB default: participants drew their
    reports, spent their epsilon, and the upload was refused (a reset connection)."""
    from dptopic.cli.main import main
    from dptopic.protocol.fedlda import RRPConfig
    from dptopic.service import codec

    vocab = tmp_path / "v.txt"
    vocab.write_text("\n".join(f"word{c}" for c in "abcdefghij") + "\n")
    base = ["serve", "--vocabulary", str(vocab), "--topics", "2", "--epsilon-word", "2", "--fed-epsilon-per-entry", "3",
            "--fed-topics", "2", "--database", f"sqlite:///{tmp_path / 'x.db'}"]
    assert main(base + ["--fed-pad-length", "600000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "smaller than a FedLDA update" in err and "--fed-pad-length" in err, err
    assert not (tmp_path / "x.db").exists()          # refused before the database is touched
    # the bound is an upper bound of what a client really sends
    from dptopic.contributor.fedlda import FedClient
    from dptopic.corpus import Corpus
    from dptopic.protocol.fedlda_server import FedServer

    rrp = RRPConfig(2, 3.0, 0.1, 1.0, 40, 1.0)
    words = [f"word{c}" for c in "abcdefghij"]
    corpus = Corpus.from_texts(["worda wordb wordc " * 5], vocabulary=words)
    server = FedServer.from_config(corpus.vocabulary, rrp, ["c" * 128], rng=np.random.default_rng(0))
    client = FedClient("c" * 128, corpus, rrp, np.random.default_rng(1))
    update = client.run_round(server.broadcast())
    assert len(update) <= codec.fed_largest_update(rrp, 10)
def test_a_contributors_rare_word_is_not_cut_before_the_servers_vocabulary_applies(tmp_path):
    """The text is read keeping every word: a default cap of 1,000 dropped the rarest before the mapping."""
    from dptopic.cli.submit import _client_corpus

    filler = [f"fill{a}{b}{c}" for a in "abcdefghij" for b in "abcdefghij" for c in "abcdefghijklmno"]   # 1,500
    p = tmp_path / "mine.txt"
    p.write_text(" ".join(w + " " + w for w in filler) + " zebra\n")
    c = _client_corpus(argparse.Namespace(corpus=str(p), format="auto", text_field="text"))
    assert "zebra" in c.vocabulary and c.vocab_size == 1501
    assert c.restrict(["zebra", "fillaaa"], drop_empty=False).n_tokens == 3


WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def _cli(*args, cwd=None):
    return run_dptopic(*args, cwd=cwd)


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
    assert "drop --fed-epsilon-per-entry" in one_line_stderr(_cli(*base, "--fed-user-budget", "90", "--fed-epsilon-per-entry", "3"))


# ---- item 19: serve refuses, at start-up, settings that would break every request
def test_serve_validates_settings_at_start_up(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(WORDS))
    base = ["serve", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--topics", "3",
            "--database", f"sqlite:///{tmp_path / 's.db'}"]
    assert "error: --topics 10 exceeds the vocabulary size" in one_line_stderr(_cli(*base, "--topics", "10"))
    assert "too small" in one_line_stderr(_cli(*base, "--fed-epsilon-per-entry", "1e-300", "--fed-topics", "3"))
    assert "(0, 500]" in one_line_stderr(_cli(*base, "--fed-epsilon-per-entry", "1e308", "--fed-topics", "3"))
    assert "in memory" in one_line_stderr(_cli(*base[:-2], "--database", "sqlite://"))
    assert "1-65535" in one_line_stderr(_cli(*base, "--port", "70000"))
    assert "--fed-epsilon-per-entry" in one_line_stderr(_cli(*base, "--fed-min-updates", "3"))
    own = tmp_path / "mine.db"
    with sqlite3.connect(own) as con:
        con.execute("create table notes (x)")
    assert "not dptopic's" in one_line_stderr(_cli(*base[:-2], "--database", f"sqlite:///{own}"))
    with sqlite3.connect(own) as con:
        assert [r[0] for r in con.execute("select name from sqlite_master")] == ["notes"]   # untouched
    write_token(tmp_path / "token", "t" * 40)
    assert "is a folder, not a file" in one_line_stderr(_cli(*base, "--token-file", str(tmp_path)))


@pytest.mark.parametrize("server", ["http://a b:8000", "http://127.0.0.1:9/x\ny", "http://" + "a" * 64 + ".example:8000"])
@pytest.mark.parametrize("command", [["pull", "--out", "p"], ["submit", "--corpus", "docs.txt"],
                                     ["fed-client", "--corpus", "docs.txt"]])
def test_a_server_url_http_refuses_is_one_line(tmp_path, monkeypatch, capsys, server, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs.txt").write_text("apple banana cherry\ndog elephant fish\n")
    line = cli_error_line(capsys, [*command, "--server", server, "--retries", "0", "--timeout", "1"])
    assert "invalid server URL" in line


# ---------------------------------------------------------------- what submit and fed-client print of their summaries
def _submitted(**kw):
    s = {"n_documents": 2, "state": None, "contributor": "c1", "already_acknowledged": 0, "reports": 4,
         "uploads": 1, "replayed_acks": 0, "vocab_size": 30, "epsilon_word": 1.0, "epsilon_doc": 3.0}
    return {**s, **kw}


def test_submit_lines_total_the_documents_epsilon_and_say_the_reports_were_not_kept():
    from dptopic.cli.submit import submit_lines

    lines = submit_lines(_submitted(), "http://server")
    assert "reports not kept (--state none)" in lines[0]
    assert lines[1] == "4 randomized reports uploaded to http://server in 1 upload."
    assert "eps_word=2 for one word's presence in each and eps=6 for the documents" in lines[-1]
    assert "spent again by every run" in lines[-1]
    kept = submit_lines(_submitted(state="/s", already_acknowledged=4, reports=0), "http://server")
    assert "nothing was sent, nothing more spent." in kept[1] and len(kept) == 3
    assert "spent once however often" in kept[-1]


def test_fed_client_lines_name_the_rounds_and_whether_reports_were_reused():
    from dptopic.cli.submit import fed_client_lines

    s = {"state": "/s", "reused_reports": True, "rounds": [1, 2], "client": "c", "epsilon_basic": 1.00001,
         "epsilon_pld": 0.5, "delta": 1e-5, "note": "a note"}
    took_part, note = fed_client_lines(s)
    assert took_part.startswith("took part in 2 round(s) as c; epsilon of your reports (this user): 1.001 basic")
    assert "reused the reports drawn before" in took_part and note == "a note"


def test_cli_errors_are_one_line(tmp_path, capsys):
    make_data(tmp_path)
    args = ["serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--host", "0.0.0.0"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "--allow-remote" in err
    port = free_port()  # nothing listens there
    assert main(["submit", "--server", f"http://127.0.0.1:{port}", "--corpus", str(tmp_path / "docs.txt"),
                 "--retries", "0", "--timeout", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "running" in err
    # FedLDA parameters with which an update would carry no entry: refused at start-up, before any database
    db = tmp_path / "never.db"
    assert main(["serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--database",
                 f"sqlite:///{db}", "--fed-epsilon-per-entry", "5", "--fed-pad-length", "10", "--fed-sample-ratio",
                 "0.0001"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "--fed-pad-length 10 is too small" in err
    assert not db.exists()
