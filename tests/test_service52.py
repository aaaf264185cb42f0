"""Service review 52, against a real ``dptopic serve`` on 127.0.0.1 (SQLite): every epsilon the service and its
clients show is rounded up (never below the one composed), a body with a transfer coding the server does not decode
is refused, an admin JSON body with a repeated key is refused and changes nothing, and a restart keeps the counts,
rounds and per-contributor ledger exactly."""
from __future__ import annotations

import html
import json
import re
import socket

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.accounting.local import epsilon_from_f, f_from_epsilon  # noqa: E402
from dptopic.local import Randomizer  # noqa: E402
from dptopic.service import codec  # noqa: E402

from service_helpers import TOKEN, Server, count_rows, get_json, http, make_data, post_reports  # noqa: E402

EPS_WORD = 1.23444      # to 4 digits, round-to-nearest shows it as 1.234: below the guarantee
FED_EPS = 4.12344       # likewise 4.123; 30 entries: 123.7032 per user, shown 123.7
FED_ENTRIES = 30
ARGS = ("--train-interval", "0", "--epsilon-word", str(EPS_WORD), "--fed-epsilon-per-entry", str(FED_EPS), "--fed-topics", "3",
        "--fed-pad-length", str(FED_ENTRIES), "--fed-min-updates", "1")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("svc52")
    words, texts = make_data(tmp, vocab_size=120, n_docs=120, n_prior=40)
    db = f"sqlite:///{tmp / 's.db'}"
    env = {"tmp": tmp, "words": words, "texts": texts, "db": db, "server": Server(tmp, db, *ARGS).start()}
    yield env
    env["server"].stop()    # the restart test replaces it


_N = iter(range(10**6))


def _key() -> str:
    return f"svc52-key-{next(_N):06d}"


def _body(words, texts) -> bytes:
    rz = Randomizer(words, f=f_from_epsilon(EPS_WORD), secure=True)
    return codec.encode_reports(rz.randomize([t.split() for t in texts]))


def _page(url: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", http("GET", url + "/")[2].decode()))


def _contributor_rows(page: str) -> list[tuple[str, ...]]:
    table = page.split("id=\"contributors\"", 1)[1].split("</table>", 1)[0]
    return [tuple(re.findall(r"<td>([^<]*)</td>", row)) for row in re.findall(r"<tr>(.*?)</tr>", table)[1:]]


def _shown_at_least(shown: str, true: float) -> None:
    assert float(shown) >= true, f"epsilon shown as {shown}, below the {true!r} composed"


def test_the_status_page_never_shows_an_epsilon_below_the_composed_one(env):
    """eps_word = 1.23444 was shown as 1.234, a contributor's 3 reports (3.70332) as 3.703, FedLDA's per-entry 4.12344
    as 4.123 and its per-user 123.7032 as 123.7: a privacy figure below the guarantee. Now rounded up."""
    url, words, texts = env["server"].url, env["words"], env["texts"]
    assert post_reports(url, _body(words, texts[:3]), _key(), "carol52")[0] == 201
    eps_word = epsilon_from_f(f_from_epsilon(EPS_WORD))
    page = _page(url)
    m = re.search(r"eps_word = ([0-9.e+]+) per word, eps_doc = ([0-9.e+]+) per document", page)
    _shown_at_least(m.group(1), eps_word)
    _shown_at_least(m.group(2), 120 * eps_word)
    assert m.group(1) == "1.235" and m.group(2) == "148.2"
    (rank, n, word, doc), = [r for r in _contributor_rows(page) if r[1] == "3"]
    _shown_at_least(word, 3 * eps_word)
    _shown_at_least(doc, 3 * 120 * eps_word)
    assert word == "3.704"
    m = re.search(r"per-entry epsilon ([0-9.e+]+), 30 entries per update: epsilon ([0-9.e+]+) per user", page)
    _shown_at_least(m.group(1), FED_EPS)
    _shown_at_least(m.group(2), FED_EPS * FED_ENTRIES)
    assert (m.group(1), m.group(2)) == ("4.124", "123.8")
    # what /v1/topics gives (exact floats) is the figure the page rounds up
    most = get_json(url + "/v1/topics")[1]["per_contributor"]["privacy_of_that_contributor"]
    assert most["epsilon_contributor_word_basic"] == pytest.approx(3 * eps_word, rel=1e-12)


def _cli(capsys, argv) -> str:
    from dptopic.cli.main import main

    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    assert rc in (0, None), out.err
    return " ".join(out.out.split())


def test_submit_and_fed_client_print_what_was_spent_rounded_up(env, capsys):
    """``dptopic submit`` printed eps_word=1.234 per document and 3.703 for three; ``fed-client`` printed 123.7 by basic
    composition: each below what the contributor spent."""
    url, tmp, texts = env["server"].url, env["tmp"], env["texts"]
    docs = tmp / "mine.txt"
    docs.write_text("\n".join(texts[10:13]) + "\n")
    out = _cli(capsys, ["submit", "--server", url, "--corpus", docs, "--state", "none", "--contributor", "dave52"])
    assert "eps_word=1.235, eps_doc=148.2 per document" in out, out
    assert "together eps_word=3.704 for one word's presence" in out, out
    out = _cli(capsys, ["fed-client", "--server", url, "--corpus", docs, "--state", "none", "--client-id", "erin52",
                        "--rounds", "1", "--poll", "0.1", "--round-timeout", "60"])
    m = re.search(r"epsilon of your reports \(this user\): ([0-9.e+]+) basic", out)
    assert m is not None, out
    _shown_at_least(m.group(1), FED_EPS * FED_ENTRIES)
    assert m.group(1) == "123.8"


def _raw(port: int, request: bytes) -> tuple[int, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _chunked(body: bytes, size: int = 50) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                    for i in range(0, len(body), size)) + b"0\r\n\r\n"


@pytest.mark.parametrize("path", ["/v1/reports", "/v1/fed/updates"])
def test_a_body_with_a_transfer_coding_the_server_does_not_decode_is_refused(env, path):
    """``Transfer-Encoding: gzip, chunked``: httptools takes the chunks apart and passed the rest on, so the bytes were
    read (and a valid report stored, 201) as if no coding applied; h11 refuses such a request. Now 400 and nothing
    stored; plain chunked still works."""
    srv, words, texts = env["server"], env["words"], env["texts"]
    body = _body(words, texts[20:22]) if path == "/v1/reports" else b"DPTF" + b"\0" * 40
    before = count_rows(env["db"])

    def send(coding: bytes, key: str):
        return _raw(srv.port, b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                              b"Idempotency-Key: %s\r\nTransfer-Encoding: %s\r\nConnection: close\r\n\r\n"
                    % (path.encode(), key.encode(), coding) + _chunked(body))

    for coding in (b"gzip, chunked", b"deflate,chunked"):
        status, doc = send(coding, _key())
        assert status == 400 and doc["error"]["code"] == "bad_request", doc
        assert "Transfer-Encoding" in doc["error"]["message"] and "\n" not in doc["error"]["message"]
    assert count_rows(env["db"]) == before
    if path == "/v1/reports":
        status, doc = send(b"chunked", _key())
        assert status == 201 and doc["reports"] == 2, doc
        assert count_rows(env["db"])["n_reports"] == before["n_reports"] + 2


@pytest.mark.parametrize("path, body", [
    ("/v1/admin/train", b'{"max_batches": 100000, "max_batches": 1}'),
    ("/v1/admin/rotate", b'{"note": "first", "note": "second"}'),
    ("/v1/admin/rotate", b'{"note": "x", "extra": {"a": 1, "a": 2}, "note": "y"}'),
])
def test_an_admin_body_that_repeats_a_key_is_refused_and_changes_nothing(env, path, body):
    """Python's JSON keeps a repeated key's last value, other parsers (a proxy, a gateway) its first: ``{"note": "a",
    "note": "b"}`` rotated the model with "b", and max_batches 100000 then 1 was taken as 1. The report header already
    refuses a repeated field; the admin bodies now do too (400, nothing changed)."""
    url = env["server"].url
    before = count_rows(env["db"])
    status, _, data = http("POST", url + path, body, {"Authorization": f"Bearer {TOKEN}",
                                                      "Content-Type": "application/json"}, timeout=120)
    doc = json.loads(data)
    assert status == 400 and doc["error"]["code"] == "bad_json", doc
    assert "more than once" in doc["error"]["message"]
    assert count_rows(env["db"]) == before
    # a body that gives each key once is still taken (a nested object's own keys are no concern of the endpoint's)
    status, _, _ = http("POST", url + "/v1/admin/train", b'{"force": false, "max_batches": 1}',
                        {"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    assert status == 200


def _ledger(url: str) -> dict:
    topics = get_json(url + "/v1/topics")[1]
    page = _page(url)
    gauges = {line.split()[0]: line.split()[1] for line in http("GET", url + "/metrics")[2].decode().splitlines()
              if line.startswith("dptopic_") and "_total" not in line}
    return {"stored": topics["reports_stored"], "pending": topics["reports_pending"], "model": topics["model_id"],
            "version": topics["model_version"], "per_contributor": topics["per_contributor"],
            "rows": _contributor_rows(page), "round": http("GET", url + "/v1/fed/round")[1]["dptopic-round"],
            "fed_rows": re.findall(r"<tr><td>\d+</td><td>\d+</td></tr>", page),
            "received": re.search(r"Reports received: <b id=\"reports-stored\">\d+</b> in [^;]*;", page).group(0),
            "gauges": gauges}


def test_a_restart_keeps_counts_rounds_and_the_per_contributor_ledger_exactly(env):
    """Replays, a duplicate upload and a FedLDA update before a stop; a start on the same database shows the same
    counts, round, contributors and epsilons (runs last in this module: it restarts the server)."""
    srv, words, texts = env["server"], env["words"], env["texts"]
    url = srv.url
    body, key = _body(words, texts[30:34]), _key()
    assert post_reports(url, body, key, "frank52")[0] == 201
    assert post_reports(url, body, key, "someone-else")[0] == 200        # a retry: tallied once, under frank52
    assert post_reports(url, body, _key(), "frank52")[1]["error"]["code"] == "duplicate_body"
    rows = count_rows(env["db"])
    assert rows["submissions"][key] == 4 and rows["per_key"][key] == 4
    before = _ledger(url)
    assert ("4" in [r[1] for r in before["rows"]]) and before["stored"] == rows["n_reports"]
    srv.stop()
    again = Server(env["tmp"], env["db"], *ARGS).start()
    env["server"] = again
    assert _ledger(again.url) == before
    assert count_rows(env["db"]) == rows
