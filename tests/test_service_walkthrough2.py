"""A second user walk-through of the collection service and the contributor commands (serve, randomize, submit),
each finding pinned: a port already in use is refused in one line before the database is touched; a database URL is
shown with its scheme and its password masked; /v1/topics says the range of ``words``; a compressed upload is
refused (415) instead of stored as it came; randomize names the flag that is wrong (a misplaced --epsilon-doc, the
UCI vocabulary, a text file read as .npz, a vocabulary folder), counts in the singular, and warns before writing
megabytes per document; serve's help says what every option does; the service guide states how the released
model's headline epsilon is chosen."""
from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.cli.main import main  # noqa: E402
from dptopic.local import Randomizer  # noqa: E402

from service_helpers import SRC, Server, free_port, get_json, http, make_data  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _run(*args, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "dptopic", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def _cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, _flat(out), _flat(err)


# ----------------------------------------------------------------------------- A: a port already in use
def test_serve_refuses_a_port_in_use_in_one_line_and_creates_no_database(tmp_path):
    make_data(tmp_path, vocab_size=40, n_docs=20, n_prior=10)
    db = tmp_path / "service.db"
    with socket.socket() as listener:       # a real listener on the port serve is asked for
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        r = _run("serve", "--database", f"sqlite:///{db}", "--host", "127.0.0.1", "--port", str(port),
                 "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--topics", "4")
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr                    # no banner, no uvicorn INFO/ERROR lines
    assert lines[0].startswith(f"error: port {port} on 127.0.0.1 is in use")
    assert "choose another --port" in lines[0] and "Traceback" not in r.stderr
    assert not any(tmp_path.glob("service.db*"))        # nothing created: no tables, vocabulary or epsilon bound


# ----------------------------------------------------------------------------- D: the URL with its scheme
def test_an_unreachable_database_is_named_with_its_scheme_and_no_password(tmp_path, capsys):
    make_data(tmp_path, vocab_size=40, n_docs=20, n_prior=10)
    for url, shown in (("postgresql+psycopg://u@127.0.0.1:1/db", "'postgresql+psycopg://u@127.0.0.1:1/db'"),
                       ("postgresql+psycopg://u:s3cret-pw@127.0.0.1:1/db", "'postgresql+psycopg://u:***@127.0.0.1:1/db'")):
        code, out, err = _cli(capsys, "serve", "--database", url, "--port", str(free_port()),
                              "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--topics", "4")
        assert code == 2
        assert err.startswith(f"error: cannot use database {shown}:"), err
        assert "s3cret" not in err and "Traceback" not in err


# ----------------------------------------------------------------------------- E and F(ii): a live server
@pytest.fixture(scope="module")
def live(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("walk2-live")
    words, texts = make_data(tmp, vocab_size=60, n_docs=50, n_prior=20)
    srv = Server(tmp, f"sqlite:///{tmp / 'svc.db'}", "--train-interval", "0").start()
    try:
        yield srv, words, texts
    finally:
        srv.stop()


def test_topics_says_the_range_of_words(live):
    srv = live[0]
    for raw in ("-1", "100000000", "0", "101", "99999999999999999999999"):
        status, _, data = http("GET", f"{srv.url}/v1/topics?words={raw}")
        msg = json.loads(data)["error"]["message"]
        assert status == 400 and "from 1 to 100" in msg and "must be an integer" not in msg, (raw, msg)
        assert "out of range" in msg
    for raw in ("abc", "1_0", "%205"):
        status, _, data = http("GET", f"{srv.url}/v1/topics?words={raw}")
        msg = json.loads(data)["error"]["message"]
        assert status == 400 and "an integer from 1 to 100" in msg, (raw, msg)
    assert get_json(srv.url + "/v1/topics?words=100")[0] == 200
    assert get_json(srv.url + "/v1/topics?words=000000000000000000003")[0] == 200    # leading zeros: 3


def test_an_upload_with_a_content_encoding_is_refused_and_stores_nothing(live):
    srv, words, texts = live
    rz = Randomizer(words, epsilon_word=2.0)
    body = rz.randomize([t.split() for t in texts[:5]]).to_bytes(include_vocabulary=False)
    before = get_json(srv.url + "/v1/topics")[1]["reports_stored"]
    base = {"Content-Type": "application/octet-stream"}
    for i, (encoding, payload) in enumerate((("gzip", body), ("gzip", gzip.compress(body)), ("br", body),
                                             ("identity, gzip", body), ("deflate", body))):
        status, _, data = http("POST", srv.url + "/v1/reports", payload,
                               {**base, "Idempotency-Key": f"walk2-encoded-{i:04d}", "Content-Encoding": encoding})
        assert status == 415, (encoding, status, data)
        err = json.loads(data)["error"]
        assert err["code"] == "unsupported_content_encoding", (encoding, err)
        assert "send it uncompressed" in err["message"] and "\n" not in err["message"]
    assert get_json(srv.url + "/v1/topics")[1]["reports_stored"] == before    # nothing stored
    status, _, _ = http("POST", srv.url + "/v1/reports", body,
                        {**base, "Idempotency-Key": "walk2-identity-0001", "Content-Encoding": "identity"})
    assert status == 201
    assert get_json(srv.url + "/v1/topics")[1]["reports_stored"] == before + 5


def test_submit_counts_one_document_in_the_singular(live, tmp_path, capsys):
    srv, _, texts = live
    (tmp_path / "one.txt").write_text(texts[10] + "\n")
    code, out, err = _cli(capsys, "submit", "--server", srv.url, "--corpus", str(tmp_path / "one.txt"),
                          "--retries", "0")
    assert code == 0, err
    assert f"1 randomized report uploaded to {srv.url} in 1 upload." in out, out
    assert "Privacy of these 1 document" not in out and "1 randomized reports" not in out


# ----------------------------------------------------------------------------- C: randomize's messages
@pytest.fixture
def files(tmp_path):
    (tmp_path / "v.txt").write_text("apple\nbanana\ncherry\ndates\neggs\n")
    (tmp_path / "docs.txt").write_text("apple banana\ncherry dates eggs\n")
    return tmp_path


def test_randomize_names_a_misplaced_epsilon_doc(files, capsys):
    code, _, err = _cli(capsys, "randomize", "--unit", "word", "--epsilon-doc", "3", "--vocabulary",
                        str(files / "v.txt"), "--corpus", str(files / "docs.txt"), "--out", str(files / "r.bin"))
    assert code == 2 and err.startswith("error: --epsilon-doc is for --unit document"), err
    assert "add --unit document" in err and "needs --epsilon-word" not in err


def test_randomize_of_a_uci_corpus_names_no_missing_option(files, capsys):
    # randomize has no --vocab: the message does not send the user to one
    code, _, err = _cli(capsys, "randomize", "--format", "uci", "--vocabulary", str(files / "v.txt"),
                        "--epsilon-word", "2", "--corpus", str(files / "docs.txt"), "--out", str(files / "r.bin"))
    assert code == 2 and "pass --vocab" not in err and "reads the UCI vocabulary from there" in err, err
    assert "--vocabulary is the public word list" in err and "docword.NAME.txt and vocab.NAME.txt" in err
    (files / "docword.x.txt").write_text("2\n5\n1\n1 1 1\n")
    code, _, err = _cli(capsys, "randomize", "--corpus", str(files / "docword.x.txt"), "--vocabulary",
                        str(files / "v.txt"), "--epsilon-word", "2", "--out", str(files / "r.bin"))
    assert code == 2 and "pass --vocab" not in err and "no vocab.x.txt beside 'docword.x.txt'" in err, err


def test_randomize_says_a_text_file_is_not_an_npz_corpus(files, capsys):
    for fmt, path in (("npz", files / "docs.txt"), ("auto", files / "fake.npz")):
        path.write_text("apple banana\n")
        code, _, err = _cli(capsys, "randomize", "--format", fmt, "--corpus", str(path), "--vocabulary",
                            str(files / "v.txt"), "--epsilon-word", "2", "--out", str(files / "r.bin"))
        assert code == 2 and f"'{path}' is not an .npz corpus" in err, err
        assert "ValueError" not in err and "corrupt" not in err and "--format" in err


def test_randomize_says_a_vocabulary_folder_is_a_folder(files, capsys):
    (files / "vdir").mkdir()
    code, _, err = _cli(capsys, "randomize", "--vocabulary", str(files / "vdir"), "--epsilon-word", "2",
                        "--corpus", str(files / "docs.txt"), "--out", str(files / "r.bin"))
    assert code == 2 and f"--vocabulary '{files / 'vdir'}' is a folder" in err and "not found" not in err, err
    assert not (files / "r.bin").exists()


# ----------------------------------------------------------------------------- F(ii), F(iii): randomize's output
def test_randomize_counts_one_report_in_the_singular(tmp_path, capsys):
    (tmp_path / "v.txt").write_text("apple\nbanana\ncherry\ndates\neggs\n")
    (tmp_path / "one.txt").write_text("apple banana cherry\n")
    code, out, err = _cli(capsys, "randomize", "--vocabulary", str(tmp_path / "v.txt"), "--corpus",
                          str(tmp_path / "one.txt"), "--epsilon-word", "2", "--out", str(tmp_path / "w.bin"))
    assert code == 0 and "1 randomized report written to" in err and "reports written" not in err, err
    code, out, err = _cli(capsys, "randomize", "--unit", "document", "--vocabulary", str(tmp_path / "v.txt"),
                          "--corpus", str(tmp_path / "one.txt"), "--epsilon-doc", "20", "--out", str(tmp_path / "d.bin"))
    assert code == 0 and "1 document-level report written to" in err, err
    assert "1 item per report" in err and "1 items" not in err
    assert "warning" not in err                          # a report of a few bytes: no size warning


def test_randomize_warns_once_before_writing_megabytes_per_document(tmp_path, capsys):
    words = ["x" + "".join(p) for p in itertools.product("abcdefghijk", repeat=3)][:1100]
    (tmp_path / "v.txt").write_text("\n".join(words) + "\n")
    (tmp_path / "docs.txt").write_text(f"{words[0]} {words[1]} {words[2]}\n{words[3]} {words[4]}\n")
    code, out, err = _cli(capsys, "randomize", "--unit", "document", "--vocabulary", str(tmp_path / "v.txt"),
                          "--corpus", str(tmp_path / "docs.txt"), "--epsilon-doc", "0.1", "--out",
                          str(tmp_path / "d.bin"))
    assert code == 0, err
    m = re.search(r"warning: at --epsilon-doc 0\.1 over 1100 words each document-level report holds ([\d,]+) items"
                  r" \(([\d.]+) MB per document\), so 2 documents will write ([\d.]+) MB: --epsilon-doc ([\d.]+) or"
                  r" more, or a --vocabulary of at most (\d+) words, keeps each report under 1 MB\.", err)
    assert m, err
    assert err.count("warning: at --epsilon-doc") == 1
    assert err.index("warning: at --epsilon-doc") < err.index("document-level reports written to")   # before
    items = int(m.group(1).replace(",", ""))
    size = (tmp_path / "d.bin").stat().st_size
    assert 2 * 4 * items <= size < 2 * 4 * items + 100_000          # the figures are what was written
    assert float(m.group(3)) == pytest.approx(2 * 4 * items / 1e6, abs=0.06)
    # the suggestions hold: that epsilon, or that many words, keeps a report under 1 MB (the mechanism unchanged)
    from dptopic.local.document import domain_size
    from dptopic.mechanisms.frequency_oracle import subset_size

    assert 4 * subset_size(domain_size(1100), float(m.group(4))) <= 1_000_000
    assert 4 * subset_size(domain_size(int(m.group(5))), 0.1) <= 1_000_000
    assert 4 * subset_size(domain_size(int(m.group(5)) + 1), 0.1) > 1_000_000


# ----------------------------------------------------------------------------- F(i): serve --help
def test_serve_help_says_what_every_option_does(capsys):
    with pytest.raises(SystemExit) as e:
        main(["serve", "--help"])
    assert e.value.code == 0
    text = _flat(capsys.readouterr().out)
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

    guide = _flat((ROOT / "docs" / "service.md").read_text())
    section = guide.split("## What the server learns", 1)[1].split("## ", 1)[0]
    assert "composes by PLD at its δ" not in section
    assert ("headline `epsilon` is the tightest valid bound at its δ: the smallest of the PLD composition, the RDP"
            " composition and basic composition") in section
    assert "`epsilon_method` says which was taken" in section
    # what the guide states is what the code does: the headline is the least of the three figures
    for n in (1, 40, 400):
        rep = local_privacy_report(f_from_epsilon(2.0), 120, 1e-5, n)
        assert rep["epsilon"] == pytest.approx(min(rep["epsilon_pld"], rep["epsilon_rdp"], rep["epsilon_basic"]))
