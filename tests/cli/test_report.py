"""``dptopic report``: every file it is given is named, as typed, when it cannot be used; the word list a model was
trained on is named on the page."""
import hashlib
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

import dptopic
from dptopic.accounting.card import CARD_SCHEMA, privacy_card
from dptopic.cli.main import main
from dptopic.reporting.html import render_report
from helpers import quiet_fit, run_dptopic


@pytest.fixture(scope="module")
def model(tmp_path_factory, tiny):
    import dptopic

    d = tmp_path_factory.mktemp("report-cli")
    dptopic.LDA(n_topics=2, n_iter=2, seed=0).fit(tiny.corpus).save(d / "m")
    return d / "m"


def _error(args, capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


@pytest.mark.parametrize("name, content, says", [
    ("precious.txt", b"my private notes\n", "is not valid JSON (Expecting value, line 1)"),
    ("empty.json", b"", "is empty"),
    ("latin1.json", b"\xff\xfe\x80 caf\xe9\n", "is not UTF-8 text"),
    ("nul.json", b"\0" * 64, "is not UTF-8 text"),
    ("list.json", b"[1, 2]", "is JSON but not a dptopic audit"),
    ("missing.json", None, "does not exist"),
])
def test_audit_file_is_named_as_given(model, tmp_path, capsys, monkeypatch, name, content, says):
    if content is not None:
        (tmp_path / name).write_bytes(content)
    monkeypatch.chdir(tmp_path)      # a relative name, as a user types it
    err = _error(["report", "--model", str(model), "--audit", name, "--out", "r.html"], capsys)
    assert f"--audit {name!r} {says}" in err and "audit.json" in err     # and what to give instead
    assert not (tmp_path / "r.html").exists()


def test_audit_folder_names_its_audit_json(model, tmp_path, capsys):
    (tmp_path / "run").mkdir()
    err = _error(["report", "--model", str(model), "--audit", str(tmp_path / "run"), "--out",
                  str(tmp_path / "r.html")], capsys)
    assert f"--audit {str(tmp_path / 'run')!r} holds no audit.json" in err
    (tmp_path / "run" / "audit.json").write_text("{not json")
    err = _error(["report", "--model", str(model), "--audit", str(tmp_path / "run"), "--out",
                  str(tmp_path / "r.html")], capsys)
    assert f"--audit {str(tmp_path / 'run' / 'audit.json')!r} is not valid JSON" in err


def test_word_list_given_to_train_is_named_with_its_size_and_hash(tmp_path, capsys):
    from dptopic.datasets import sotu_texts

    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:200]))
    words = ["united", "states", "congress", "government", "public", "people", "country", "great", "war", "peace",
             "nation", "year", "made", "time", "power", "law", "present", "american", "interest", "state"]
    (tmp_path / "lists").mkdir()
    listed = tmp_path / "lists" / "civics.txt"
    listed.write_text("".join(w + "\n" for w in words))
    assert main(["train", "--algorithm", "hdp", "--epsilon-laplace", "1", "--epsilon-inherent", "2", "--topics", "2",
                 "--iterations", "2", "--vocabulary", str(listed), "--corpus", str(docs), "--seed", "0", "--out",
                 str(tmp_path / "m"), "--quiet"]) == 0
    import dptopic

    rec = dptopic.load(tmp_path / "m").privacy_["vocabulary_list"]
    digest = hashlib.sha256(listed.read_bytes()).hexdigest()      # what sha256sum prints for the file
    assert rec["name"] == "civics.txt" and rec["n_words"] == 20 and rec["sha256"] == digest   # no folders
    capsys.readouterr()
    assert main(["report", "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "the list civics.txt, 20 words, sha256 " + digest in page and str(tmp_path / "lists") not in page


# ---------------------------------------------------------------------------------------------------------------------
# `dptopic report`: the privacy card (one schema for every trainer) and a self-contained HTML page.

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)

WORD_REPORT = {"private": True, "unit": "word", "neighbouring_relation": "word-level replacement",
               "theorem": "Thm 3", "delta": 1e-5, "epsilon_basic": 617.9, "epsilon_pld": 599.9, "epsilon_rdp": 601.0,
               "epsilon_paper": 617.9, "scope": "covers the counts. Not covered: transform() on training documents.",
               "noise": "discrete", "accounting": {"pld": "dp-accounting"}}


def test_card_names_one_guarantee_and_keeps_the_others_as_cross_checks():
    card = privacy_card(WORD_REPORT, "HDPLDA")
    assert card["schema"] == CARD_SCHEMA and card["guarantee"] == "full"
    assert (card["epsilon"], card["delta"], card["epsilon_is"]) == (599.9, 1e-5, "PLD")   # the tightest valid figure
    assert {k: v["epsilon"] for k, v in card["figures"].items()} == {
        "epsilon_pld": 599.9, "epsilon_rdp": 601.0, "epsilon_basic": 617.9, "epsilon_paper": 617.9}
    assert card["covered"] == "covers the counts." and card["not_covered"].startswith("Not covered: transform()")
    assert card["per_document"]["examples"]["100"] == pytest.approx(59990.0)   # L x epsilon
    assert card["trust_model"].startswith("central") and card["dp_flavour"].startswith("approximate")
    # a report that names its guarantee is taken at its word
    named = privacy_card(dict(WORD_REPORT, epsilon=601.0, epsilon_method="RDP"), "HDPLDA")
    assert (named["epsilon"], named["epsilon_is"]) == (601.0, "RDP")


def test_card_of_partial_local_and_non_private_reports():
    part = privacy_card(dict(WORD_REPORT, guarantee="partial", unit="user"), "FedLDA")
    assert part["guarantee"] == "partial" and part["trust_model"].startswith("federated") and "per_document" not in part
    none = privacy_card({"private": False, "epsilon": float("inf"), "reason": "plain CGS"}, "LDA")
    assert none["guarantee"] == "none" and none["epsilon"] is None and none["reason"] == "plain CGS"
    assert privacy_card({}, "LDA")["guarantee"] == "none"


def test_every_trained_models_card_has_the_same_fields(planted):
    lda = dptopic.LDA(n_topics=3, n_iter=5, seed=0).fit(planted.corpus)
    hdp = dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=3).fit(planted.corpus)
    a, b = privacy_card(lda.privacy_, "LDA"), privacy_card(hdp.privacy_, "HDPLDA")
    common = {"schema", "trainer", "guarantee", "privacy_unit", "epsilon", "delta", "dp_flavour", "trust_model",
              "accounting_method", "theorem", "figures", "covered", "not_covered", "implementation"}
    assert common <= set(a) and common <= set(b)
    assert a["guarantee"] == "none" and b["epsilon"] > 0
    # fitted without vocabulary=: the words are taken as chosen from the data and released outside epsilon
    assert b["guarantee"] == "partial" and "vocabulary" in b["guarantee_note"] and "Vocabulary" in b["not_covered"]
    given = dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=3).fit(
        planted.corpus, vocabulary=planted.corpus.vocabulary.words)
    c = privacy_card(given.privacy_, "HDPLDA")
    assert c["guarantee"] == "full" and "guarantee_note" not in c
    assert c["figures"]["epsilon_paper"]["delta"] == 0.0  # Zhao et al.'s own figure is pure


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.refs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.refs += [(tag, k, v) for k, v in attrs if k in ("src", "href", "srcset", "action", "data", "poster")]


def _self_contained(html: str):
    p = _Refs()
    p.feed(html)
    assert "script" not in p.tags and "link" not in p.tags and "iframe" not in p.tags
    assert all(v.startswith("data:") for _, _, v in p.refs), p.refs
    assert "url(" not in html and "@import" not in html


def test_html_is_self_contained_and_shows_card_topics_audit():
    card = privacy_card(WORD_REPORT, "HDPLDA")
    audit = {"attacks": {"lira_online_with_a_long_name": {"auc": 0.51, "tpr_at_0.1%_fpr": 0.002}},
             "empirical_epsilon": {"lower_bound": 0.3}, "claimed_privacy": {"epsilon": 599.9, "delta": 1e-5, "unit": "word"}}
    html = render_report(title="t <b>", trainer="HDPLDA", card=card,
                         topics=[[("space", 0.2), ("nasa", 0.1)], [("god", 0.3), ("church", 0.05)]],
                         evaluation={"reference": "test split", "NPMI": 0.21, "note": "outside the guarantee: x"},
                         audit=audit, roc_png=b"\x89PNG fake")
    _self_contained(html)
    assert "t &lt;b&gt;" in html and "<b>" not in html.split("<main>")[1].split("</h1>")[0]   # escaped
    for w in ("space", "nasa", "god", "church", "lira_online_with_a_long_name", "599.9", "outside the guarantee",
              "Not covered", "L = 100"):
        assert w in html
    assert html.count("<svg") == 2 and "data:image/png;base64," in html
    embedded = re.search(r"<pre>(.*?)</pre>", html, re.S).group(1)
    assert CARD_SCHEMA in embedded


def _cli(*args):
    return run_dptopic(*args)


@pytest.fixture(scope="module")
def saved_private(tmp_path_factory, planted):
    d = tmp_path_factory.mktemp("m") / "hdp"
    dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=3).fit(planted.corpus).save(d)
    return d


def test_cli_report_writes_once_and_never_replaces_a_users_file(tmp_path, saved_private):
    out = tmp_path / "r.html"
    r = _cli("report", "--model", str(saved_private), "--out", str(out))
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    _self_contained(html)
    assert "Privacy card" in html and "topic 2" in html
    r = _cli("report", "--model", str(saved_private), "--out", str(out))
    assert r.returncode == 2 and "--overwrite" in r.stderr
    assert _cli("report", "--model", str(saved_private), "--out", str(out), "--overwrite").returncode == 0
    mine = tmp_path / "mine.html"
    mine.write_text("<html>my own page</html>")
    r = _cli("report", "--model", str(saved_private), "--out", str(mine), "--overwrite")
    assert r.returncode == 2 and mine.read_text() == "<html>my own page</html>"
    r = _cli("report", "--model", str(saved_private), "--out", str(tmp_path / "x.html"), "--audit", str(tmp_path))
    assert r.returncode == 2 and "audit.json" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_report_with_figures_from_a_private_reference_is_readable_by_its_owner_only(tmp_path, saved_private,
                                                                                       planted):
    import os
    import stat

    ref = tmp_path / "ref.npz"
    planted.corpus.save(ref)
    old = os.umask(0o022)
    try:
        for name, extra, mode in (("a.html", [], 0o644), ("b.html", ["--reference", str(ref)], 0o600),
                                  ("c.html", ["--reference", str(ref), "--reference-public"], 0o644)):
            r = _cli("report", "--model", str(saved_private), "--out", str(tmp_path / name), *extra)
            assert r.returncode == 0, r.stderr
            assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == mode, name
            assert ("readable by you only" in " ".join(r.stdout.split())) == (mode == 0o600)
    finally:
        os.umask(old)


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (make test installs Debian's chromium when it can)")
def test_report_renders_in_headless_chromium_without_errors_or_requests(tmp_path, saved_private):
    out = tmp_path / "r.html"
    assert _cli("report", "--model", str(saved_private), "--out", str(out)).returncode == 0
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--enable-logging=stderr", "--v=0", "--host-resolver-rules=MAP * ~NOTFOUND"]
    r = subprocess.run(flags + ["--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=120)
    assert "Privacy card" in r.stdout and r.stdout.count("<svg") == 3
    assert "CONSOLE" not in r.stderr and "Failed to load resource" not in r.stderr
    shot = tmp_path / "r.png"
    subprocess.run(flags + [f"--screenshot={shot}", "--window-size=1200,1600", out.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 10_000


def test_model_json_carries_the_card_under_one_schema(tmp_path, saved_private):
    lda = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(dptopic.Corpus.from_texts(
        ["apple banana cherry", "river valley mountain", "apple cherry", "valley river"] * 3, stop_words=None))
    lda.save(tmp_path / "lda")
    cards = [json.loads((d / "model.json").read_text())["privacy_card"] for d in (saved_private, tmp_path / "lda")]
    assert [c["schema"] for c in cards] == [CARD_SCHEMA, CARD_SCHEMA]
    assert cards[0]["guarantee"] == "partial" and cards[1]["guarantee"] == "none"  # saved_private: a vocabulary from its data
    assert set(cards[0]) >= {"privacy_unit", "epsilon", "delta", "trust_model", "covered", "not_covered"}


def test_cli_report_compare_to_adds_the_match_to_another_models_topics(tmp_path, saved_private):
    out = tmp_path / "r.html"
    r = _cli("report", "--model", str(saved_private), "--out", str(out), "--compare-to", str(saved_private))
    assert r.returncode == 0, r.stderr
    text = " ".join(out.read_text().split())
    assert re.search(r"match to the topics of [^<]*1 = the same topics;[^<]* reads only the two models, not the reference corpus\)</th><td>1(\.0+)?</td>", text), text[-2000:]
    assert re.search(r"1 = the same topics; yardstick: two runs of non-private LDA that differ only in their seed match"
                     r" 0\.\d\d to 0\.\d\d \(20 topics", text), text[-2000:]
    r = _cli("report", "--model", str(saved_private), "--out", str(tmp_path / "x.html"), "--compare-to",
             str(tmp_path / "missing"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_cli_report_refuses_an_audit_of_another_claim(tmp_path, saved_private):
    from dptopic import load
    from dptopic.attacks.lira import claimed_epsilon

    claim = claimed_epsilon(load(saved_private).privacy_)
    audit = {"attacks": {"lira_online": {"auc": 0.5}}, "claimed_privacy": claim}
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "audit.json").write_text(json.dumps(audit))
    ok = _cli("report", "--model", str(saved_private), "--out", str(tmp_path / "ok.html"), "--audit", str(tmp_path / "a"))
    assert ok.returncode == 0, ok.stderr
    audit["claimed_privacy"] = {**claim, "epsilon": claim["epsilon"] / 4}   # another model's audit
    (tmp_path / "a" / "audit.json").write_text(json.dumps(audit))
    r = _cli("report", "--model", str(saved_private), "--out", str(tmp_path / "no.html"), "--audit", str(tmp_path / "a"))
    assert r.returncode == 2 and "audit this model" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "no.html").exists()


def test_card_partial_rule_for_document_level_trainers_and_fdptm(planted):
    from dptopic.training.fdptm import fit_fdptm

    words = planted.corpus.vocabulary.words
    for make in (lambda: dptopic.DocDPEM(n_topics=3, epsilon=5.0, verbose=0),
                 lambda: dptopic.DocDPCooccurrence(n_topics=3, epsilon=5.0)):
        data = privacy_card(make().fit(planted.corpus).privacy_, "x")
        given = privacy_card(make().fit(planted.corpus, vocabulary=words).privacy_, "x")
        assert data["guarantee"] == "partial" and "vocabulary" in data["guarantee_note"]
        assert given["guarantee"] == "full" and "guarantee_note" not in given
    m, _ = fit_fdptm(dptopic.HDPLDA(n_topics=3, n_iter=2, verbose=0), planted.corpus, 5.0, 1e-5)
    card = privacy_card(m.privacy_, "HDPLDA")  # chosen privately: no note that it came from the data
    assert m.privacy_["vocabulary_source"] == "private" and "guarantee_note" not in card


def test_card_names_a_pure_guarantee_at_almost_the_headline_epsilon():
    # HDP-LDA's Laplace and inherent steps compose to a pure epsilon that PLD beats only in the last digits at delta > 0
    near = dict(WORD_REPORT, epsilon_basic=17.3874, epsilon_pld=17.3872, epsilon_rdp=17.3874, epsilon_paper=17.3874)
    card = privacy_card(near, "HDPLDA")
    assert card["epsilon"] == 17.3872 and card["delta"] == 1e-5
    assert "pure epsilon-DP (delta = 0) at epsilon = 17.39" in card["pure_note"]
    assert "pure epsilon-DP (delta = 0)" in render_report(title="t", trainer="HDPLDA", card=card, topics=[[("tax", 0.5)]])
    # where the delta buys a real saving (WORD_REPORT: 599.9 against 617.9), nothing is said
    assert "pure_note" not in privacy_card(WORD_REPORT, "HDPLDA")
    # a report whose basic figure holds only at a delta > 0 is not pure
    assert "pure_note" not in privacy_card(dict(near, delta_basic=1e-6), "HDPLDA")


@pytest.mark.filterwarnings('ignore')
def test_report_audit_deeply_nested_or_with_a_number_for_a_fingerprint(saved_local_models, tmp_path, capsys):
    import dptopic
    from dptopic.attacks.provenance import mismatch
    from dptopic.cli.main import main

    (tmp_path / "au").mkdir()
    (tmp_path / "au" / "audit.json").write_text('{"attacks": {}, "x": ' + "[" * 100000 + "]" * 100000 + "}")
    assert main(["report", str(saved_local_models / "lp"), "--audit", str(tmp_path / "au"), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "audit.json" in err
    text = mismatch({"fingerprint": 7, "model": "m", "class": "LPLDA"}, dptopic.load(saved_local_models / "lp"))
    assert text and "7…" in text


# ---------------------------------------------------------------- finding 3: "held-out" perplexity
def test_report_reference_perplexity_is_not_called_held_out(planted):
    from dptopic.reporting.page import evaluate_on

    model = quiet_fit(dptopic.LDA(n_topics=3, n_iter=3, seed=0, verbose=0), planted.corpus)
    ev = evaluate_on(model, planted.corpus, False, "the training corpus itself")
    keys = " ".join(ev)
    # nothing knows whether the reference was held out of training (here it was not): a neutral label
    assert "held-out" not in keys and "perplexity on the reference corpus (document completion)" in ev
    assert "note" not in ev     # not private: no guarantee to be outside of


def test_report_reference_note_keeps_diversity_inside(hdp_cli_files, tmp_path, capsys):
    _, text, private = hdp_cli_files
    out = tmp_path / "r.html"
    assert main(["report", str(private), "--reference", str(text), "--out", str(out)]) == 0
    html = out.read_text()
    assert "perplexity on the reference corpus" in html and "held-out perplexity" not in html
    assert "topic diversity reads only the released topics" in html
    assert "topic diversity reads only the released topics" in capsys.readouterr().err


def test_a_report_without_a_reference_still_shows_topic_diversity(tmp_path):
    # walk C, finding 7: diversity reads only the released topics, yet the page asked for --reference to show it
    import numpy as np

    import dptopic
    from dptopic.cli.main import main

    X = np.random.default_rng(0).poisson(1.0, size=(40, 12))
    dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(X, vocabulary=[f"w{i}" for i in range(12)]).save(
        tmp_path / "m")
    assert main(["report", str(tmp_path / "m"), "--out", str(tmp_path / "r.html")]) in (0, None)
    page = (tmp_path / "r.html").read_text()
    assert "topic diversity (top 25)" in page and "No evaluation was given" not in page
