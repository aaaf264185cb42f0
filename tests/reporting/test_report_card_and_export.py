"""What a walk-through of `dptopic report`, the privacy card, `export` and the commands' help found, pinned."""
import argparse
import html as html_text
import json
import os
import re
import stat
import warnings

import pytest

import dptopic
from conftest import TWO_TOPIC_TEXTS as TRAIN
from dptopic.accounting.card import privacy_card
from dptopic.cli.main import build_parser, main
from dptopic.reporting.html import render_report
from helpers import run_dptopic


def _cli(*args):
    return run_dptopic(*args)


def _fit(model, corpus, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # seeds, a vocabulary from the data, refits: what these tests look at
        return model.fit(corpus, **kw)


def _commands(parser, path=()):
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))


COMMANDS = list(_commands(build_parser()))


def test_the_command_tree_is_walked():
    assert ("audit",) in COMMANDS and ("privacy", "verify") in COMMANDS and len(COMMANDS) > 20


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "dptopic")
def test_every_command_and_subcommand_prints_its_help(path, capsys):
    # a '%' in a help text that argparse reads as a format ('10% of' in audit --restrict) was a TypeError
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    out = capsys.readouterr()
    assert done.value.code == 0 and "usage: dptopic" in out.out and "Traceback" not in out.err


# ---------------------------------------------------------------- the card
def test_a_seeded_fit_says_on_the_card_and_the_page_that_its_noise_is_reproducible(planted, tmp_path):
    words = planted.corpus.vocabulary.words
    m = _fit(dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=2, seed=7, verbose=0),
             planted.corpus, vocabulary=words)
    assert m.privacy_["noise_reproducible"] is True
    card = privacy_card(m.privacy_, "HDPLDA")
    assert card["noise_reproducible"] is True and "seed" in card["seed_warning"]
    html = render_report(title="t", trainer="HDPLDA", card=card, topics=[[("tax", 0.5)]])
    badge = re.search(r'<div class="badge (\w+)">(.*?)</div>', html)
    assert badge.group(1) != "full" and "seed stays secret" in badge.group(2)   # not a clean guarantee
    assert "Noise reproducible" in html
    m.save(tmp_path / "m")      # the card saved in model.json (and `topics --format json`) carries it too
    assert json.loads((tmp_path / "m" / "model.json").read_text())["privacy_card"]["noise_reproducible"] is True
    unseeded = _fit(dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=2, verbose=0),
                    planted.corpus, vocabulary=words)
    card = privacy_card(unseeded.privacy_, "HDPLDA")
    assert "noise_reproducible" not in card
    page = render_report(title="t", trainer="HDPLDA", card=card, topics=[[("tax", 0.5)]])
    # unseeded, but a word-level epsilon: never the green box, which is kept for a strong per-document (or larger)
    # guarantee; the badge says what a whole document gets
    badge = re.search(r'<div class="badge (\w+)">(.*?)</div>', page)
    assert badge.group(1) == "weak" and "per word only" in badge.group(2) and "seed" not in badge.group(2)


PURE_USER_REPORT = {"private": True, "unit": "user", "neighbouring_relation": "one user's reports", "theorem": "t",
                    "delta": 1e-5, "epsilon_basic": 2560.0, "epsilon_pld": 2560.0, "epsilon_rdp": 2560.0,
                    "epsilon": 2560.0, "epsilon_method": "basic composition (pure epsilon-DP: holds with delta = 0 too)",
                    "epsilon_nominal": 5.0, "epsilon_per_entry": 5.0, "guarantee": "partial", "scope": "covers it."}


def _figure_rows(html):
    table = html.split("Composition figures side by side")[1].split("</table>")[0]
    return {html_text.unescape(re.sub("<.*?>", "", what)): (eps, delta) for what, eps, delta in
            re.findall(r"<tr><td>(.*?)</td><td class='num'>(.*?)</td><td class='num'>(.*?)</td></tr>", table)}


def test_each_composition_figure_shows_its_own_delta_never_the_headlines():
    card = privacy_card(PURE_USER_REPORT, "FedLDA", check=False)
    assert card["delta"] == 0.0      # the headline is pure
    rows = _figure_rows(render_report(title="t", trainer="FedLDA", card=card, topics=[[("tax", 0.5)]]))
    assert rows["tight: privacy loss distributions (PLD)"] == ("2560", "1e-05")     # computed at 1e-05, not 0
    assert rows["cross-check: Renyi DP"] == ("2560", "1e-05")
    assert rows["basic sequential composition"] == ("2560", "0")
    per_entry = next(k for k in rows if "per reported entry" in k)
    assert rows[per_entry] == ("5", "—") and "not per user" in per_entry   # 5 is per entry, at no delta of its own
    # under an approximate headline the nominal claim does not borrow its delta either
    cdp = {k: v for k, v in PURE_USER_REPORT.items() if k != "epsilon_per_entry"}
    card = privacy_card(dict(cdp, epsilon_method="PLD", epsilon=2559.0), "CDPLDA", check=False)
    rows = _figure_rows(render_report(title="t", trainer="CDPLDA", card=card, topics=[[("tax", 0.5)]]))
    assert rows["the paper's nominal claim (not proven)"] == ("5", "—")


def test_fedlda_trust_model_says_it_was_a_simulation_and_which_randomizer(planted):
    c = planted.corpus
    none = _fit(dptopic.FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=1, pad_length=16, n_clients=4, verbose=0), c)
    floor = _fit(dptopic.FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=1, pad_length=16, n_clients=4, exclusion="floor",
                                verbose=0), c)
    a, b = privacy_card(none.privacy_, "FedLDA")["trust_model"], privacy_card(floor.privacy_, "FedLDA")["trust_model"]
    for t in (a, b):
        assert "simulated" in t and "one process" in t and "simulation generator" in t
        assert not t.startswith("federated with local DP: each client perturbs")
    assert "subset selection" in a and "RRP" not in a       # exclusion="none" is subset selection
    assert "RRP word replacement" in b


def test_the_card_shows_the_figures_the_docs_promise(planted):
    c = planted.corpus
    cdp = privacy_card(_fit(dptopic.CDPLDAPlus(n_topics=3, n_iter=3, paper_epsilon=1.0, verbose=0), c).privacy_, "CDPLDAPlus")
    part = cdp["figures"]["count_release_epsilon"]
    assert part["epsilon"] == pytest.approx(5.9999, abs=1e-3) and part["delta"] == 1e-5 and "NOT the model" in part["what"]
    assert cdp["figures"]["epsilon_nominal"]["epsilon"] == 3.0 and "not proven" in cdp["figures"]["epsilon_nominal"]["what"]
    svi = _fit(dptopic.DPSVI(n_topics=3, noise_multiplier=2.0, sampling_rate=0.02, verbose=0), c)
    card = privacy_card(svi.privacy_, "DPSVI")
    for key in ("epsilon_moments_accountant_paper", "epsilon_moments_accountant", "epsilon_strong_composition"):
        assert card["figures"][key]["epsilon"] == pytest.approx(svi.privacy_[key])
        assert card["figures"][key]["delta"] == svi.privacy_["delta"] and "not the guarantee" in card["figures"][key]["what"]
    assert card["figures_note"] == svi.privacy_["paper_figures_note"]
    assert card["fits"].startswith("this report covers this fit alone")
    html = render_report(title="t", trainer="DPSVI", card=card, topics=[[("tax", 0.5)]])
    assert "covers this fit alone" in html and "moments accountant" in html
    local = {"private": True, "unit": "document (local DP)", "delta": 1e-5, "epsilon_basic": 180.0, "epsilon_pld": 180.0,
             "epsilon_rdp": 180.0, "epsilon": 180.0, "epsilon_method": "PLD", "epsilon_word": 3.0,
             "epsilon_word_relation": "two documents that differ in the presence of one vocabulary word"}
    word = privacy_card(local, "LPLDA", check=False)["figures"]["epsilon_word"]
    assert word["epsilon"] == 3.0 and word["delta"] == 0.0 and "presence of one vocabulary word" in word["what"]


def test_a_private_vocabularys_card_marks_the_trainers_own_figures_as_the_topic_model_alone(planted):
    # (review, 2026-11-24) DP-SVI's moments-accountant figure, without epsilon_V, stood beside the composed guarantee
    # at the composed delta, below the headline as if it covered the whole release
    from dptopic.training.fdptm import fit_fdptm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svi, _ = fit_fdptm(dptopic.DPSVI(n_topics=3, noise_multiplier=2.0, sampling_rate=0.02, verbose=0),
                           planted.corpus, 1.0, 1e-6)
    rep = svi.privacy_
    figures = privacy_card(rep, "DPSVI")["figures"]
    own = figures["epsilon_moments_accountant"]
    assert "topic model ALONE" in own["what"] and own["delta"] == rep["topic_model"]["delta"] != rep["delta"]
    assert "ALONE" not in figures["epsilon_pld"]["what"] and figures["epsilon_pld"]["delta"] == rep["delta"]


def test_no_guarantee_names_no_unit_and_no_noise():
    card = privacy_card({"private": False, "epsilon": float("inf"), "unit": "word", "neighbouring_relation": "word-level",
                         "reason": "plain CGS"}, "LDA")
    assert card["privacy_unit"] is None and card["neighbouring_relation"] is None
    html = render_report(title="t", trainer="LDA", card=card, topics=[[("tax", 0.5)]])
    assert "<th>privacy unit</th><td>none: no differential privacy guarantee</td>" in html
    assert "noise: None" not in html and "noise: none added" in html and "word-level" not in html


def test_an_epsilon_shown_is_never_rounded_down():
    card = privacy_card({"private": True, "unit": "document", "delta": 1e-5, "epsilon_pld": 0.99994, "epsilon_rdp": 1.2,
                         "epsilon_basic": 40.0, "scope": "covers it."}, "DPSVI", check=False)
    html = render_report(title="t", trainer="DPSVI", card=card, topics=[[("tax", 0.5)]])
    assert "0.9999" not in html.split('<h2 id="card-json">')[0]      # the card's JSON keeps the exact figure
    assert "ε = 1, δ = 1e-05 per document" in html
    from dptopic.accounting.card import epsilon_text

    assert (epsilon_text(0.99994), epsilon_text(599.9), epsilon_text(17.38721), epsilon_text(2560.0)) == \
        ("1", "599.9", "17.39", "2560")
    # the terminal's privacy table and the verification's detail round up too (they printed 0.9999 and 2089.15)
    from dptopic.accounting.verify import rounded_up
    from dptopic.reporting.terminal import epsilon_cell as _g

    assert (_g(0.99994), _g(2089.156), _g(float("inf")), _g("edited")) == ("1", "2090", "inf", "edited")
    assert rounded_up(2089.1551, 6) == 2089.16
    # a delta shown is never below the one proven either: delta_T + delta_V = 1.0333e-5 read 1.03e-05
    card = privacy_card({"private": True, "unit": "document", "delta": 1.0333e-5, "epsilon_pld": 1.5,
                         "epsilon_basic": 3.0, "scope": "covers it."}, "DPSVI", check=False)
    page = render_report(title="t", trainer="DPSVI", card=card, topics=[[("tax", 0.5)]]).split('<h2 id="card-json">')[0]
    assert "1.04e-05" in page and "1.03e-05" not in page


def test_the_embedded_card_json_keeps_non_ascii_text_readable_and_escaped():
    card = privacy_card({"private": True, "unit": "word", "delta": 1e-5, "epsilon_pld": 2.0, "epsilon_basic": 2.0,
                         "scope": "covers straße </pre><script>x</script>."}, "HDPLDA", check=False)
    html = render_report(title="t", trainer="HDPLDA", card=card, topics=[[("tax", 0.5)]])
    embedded = re.search(r"<pre>(.*?)</pre>", html, re.S).group(1)
    assert "straße" in embedded and "\\u00df" not in embedded
    assert "<script>" not in html and "&lt;/pre&gt;&lt;script&gt;" in embedded


# ---------------------------------------------------------------- the page
def test_a_long_word_is_cut_visibly_at_its_end_and_shown_whole_in_a_tooltip():
    long = "internationalization"
    html = render_report(title="t", trainer="LDA", card=privacy_card({}, "LDA"),
                         topics=[[(long, 0.3), ("tax", 0.1)]])
    labels = re.findall(r"<text [^>]*><title>(.*?)</title>(.*?)</text>", html)
    assert (long, "international…") in labels and ("tax", "tax") in labels
    shown = dict(labels)[long]
    assert long.startswith(shown[:-1]) and len(shown) <= 14      # its start, never its end
    assert 'text-anchor="end"' not in html.split('<div class="topics">')[1]


def test_the_audit_section_lists_its_bound_and_settings_one_per_line():
    emp = {"epsilon_lower_bound": 0.12345, "relation": "replace_one", "confidence": 0.95, "delta": 1e-5,
           "threshold": 1.5, "n_members": 100, "n_nonmembers": 100, "method": "Clopper-Pearson", "attack": "lira_online"}
    audit = {"attacks": {"lira_online": {"auc": 0.51}}, "empirical_epsilon": emp,
             "claimed_privacy": {"private": True, "epsilon": 2.0, "delta": 1e-5, "unit": "word"},
             "metrics_guarantee": "outside the guarantee: computed from documents of the private corpus",
             "settings": {"n_shadows": 64, "n_docs": 300, "trainer": "HDPLDA(n_topics=3)", "seed": None}}
    html = render_report(title="t", trainer="HDPLDA", card=privacy_card({}, "LDA"), topics=[[("tax", 0.5)]], audit=audit)
    section = html.split("<h2 id='audit'>")[1]
    assert "<b>0.123</b>" in section                    # a lower bound, rounded down
    assert "relation: replace_one, confidence" not in section and "confidence (see the note): 0.95" in section
    assert "Audit settings" in section and "<th>n shadows</th><td>64</td>" in section
    assert section.index("outside the guarantee") < section.index("empirical ε lower bound")


# ---------------------------------------------------------------- the command line


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("walk")
    corpus = dptopic.Corpus.from_texts(TRAIN)
    _fit(dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=2, verbose=0),
         corpus).save(d / "data")                                                  # its vocabulary from the data
    _fit(dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=2, verbose=0),
         corpus, vocabulary=corpus.vocabulary.words).save(d / "public")
    docs = d / "docs.txt"
    docs.write_text("apple banana cherry\nriver valley mountain\n")
    return d, docs


def test_export_says_what_the_models_own_report_covers(tmp_path, saved):
    d, docs = saved
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "data"), "--corpus", str(docs), "--out",
             str(tmp_path / "a.json"))
    assert r.returncode == 0, r.stderr
    v = json.loads((tmp_path / "a.json").read_text())
    assert "topic_term_dists and vocab are released under" not in v["privacy_note"]
    assert "vocab is NOT covered" in v["privacy_note"] and "PARTIAL" in v["privacy_note"]
    assert "vocab is NOT covered" in r.stderr
    p = v["privacy"]       # passed on alone, the file says what it is
    assert p["guarantee"] == "partial" and p["privacy_unit"] == "word" and p["delta"] == 1e-5 and p["epsilon"] > 0
    assert p["vocabulary_source"] == "data"
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "public"), "--corpus", str(docs), "--out",
             str(tmp_path / "b.json"))
    v = json.loads((tmp_path / "b.json").read_text())
    assert r.returncode == 0 and v["privacy"]["guarantee"] == "full"
    assert v["privacy_note"].startswith("topic_term_dists and vocab are released under the model's privacy guarantee")
    assert "NOT covered by the model's privacy report" in v["privacy_note"]    # the --corpus figures


def test_a_report_with_an_audit_is_owner_only_and_a_match_is_labelled(tmp_path, saved):
    from dptopic import load
    from dptopic.attacks.lira import claimed_epsilon

    d, _ = saved
    model = d / "public"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "audit.json").write_text(json.dumps({"attacks": {"lira_online": {"auc": 0.5}},
                                                           "claimed_privacy": claimed_epsilon(load(model).privacy_)}))
    old = os.umask(0o022)
    try:
        r = _cli("report", "--model", str(model), "--out", str(tmp_path / "r.html"), "--audit", str(tmp_path / "a"))
        assert r.returncode == 0, r.stderr
        assert stat.S_IMODE(os.stat(tmp_path / "r.html").st_mode) == 0o600
        assert "readable by you only" in " ".join(r.stdout.split())
        r = _cli("report", "--model", str(model), "--out", str(tmp_path / "m.html"), "--compare-to", str(d / "data"))
        assert r.returncode == 0, r.stderr
    finally:
        os.umask(old)
    key = re.search(r"<th>(match to the topics of [^<]*)</th>", (tmp_path / "m.html").read_text()).group(1)
    assert "outside the guarantee" in key
