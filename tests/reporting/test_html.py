"""The HTML report: the audit's empirical epsilon in words (no Python dict), its counts explained beside the attack
table's, and the privacy card's plain-language and vocabulary rows."""
import html as html_text
import io
import json
import re
import shutil
import warnings
from html import unescape

import pytest

import dptopic
from dptopic.accounting.card import LARGE_DELTA, STRONG_EPSILON_LIMIT, privacy_card
from dptopic.accounting.local import f_from_epsilon, local_privacy_report
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.models import DocDPCooccurrence
from dptopic.protocol.document_reports import document_privacy_report
from dptopic.reporting.html import _privacy_section, render_report
from helpers import fit_fedlda, quiet_fit

DOCUMENT_REPORT = {"private": True, "unit": "document", "delta": 1e-5, "epsilon_pld": 4.0, "epsilon": 4.0,
                   "epsilon_method": "PLD", "neighbouring_relation": "document-level add/remove",
                   "scope": "covers the release.", "vocabulary_source": "supplied", "noise": "gaussian"}


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _page(audit=None, report=DOCUMENT_REPORT):
    card = privacy_card(report, "DocDPCooccurrence", check=False)
    return render_report(title="t", trainer="DocDPCooccurrence", card=card, topics=[[("apple", 0.5)]], audit=audit)


LIRA_AUDIT = {
    "attacks": {"lira_online": {"auc": 0.51, "auc_se": 0.01, "n_members": 41216, "n_nonmembers": 41216,
                                "tpr_at_fpr_0.01": 0.02, "tpr_at_fpr_0": 0.0}},
    "empirical_epsilon": {"epsilon_lower_bound": 0.0, "relation": "add_remove", "n_members": 20608,
                          "n_nonmembers": 20608, "n_models": 32, "n_attacks": 2, "per_attack_confidence": 0.975,
                          "per_attack": {"lira_online": 0.0, "huang_entropy": 0.1234}},
    "claimed_privacy": {"private": True, "epsilon": 4.0, "delta": 1e-5, "unit": "document"},
    "verdict": "consistent with the claim"}


def test_empirical_epsilon_cell_in_words_and_counts_explained():
    page = _text(_page(LIRA_AUDIT))
    assert "{'" not in page and "per_attack" not in page and "n_models" not in page
    assert "each attack's bound: lira_online: 0; huang_entropy: 0.123" in page      # bounds rounded down
    assert "members scored for the bound: 20,608" in page and "41,216" in page
    assert "evaluated on about half of them" in page      # why 20,608 is not 41,216


def test_one_run_audit_names_its_figures_and_trains_no_shadow_models():
    audit = {"design": "one-run", "claimed_privacy": {"private": True, "epsilon": 4.0, "delta": 1e-5,
                                                       "unit": "document"},
             "empirical_epsilon": {"epsilon_lower_bound": 0.5, "epsilon_lower_bound_delta0": 0.6, "n_canaries": 200,
                                   "k_plus": 50, "p_value_at_zero": 0.01},
             "settings": {"design": "one-run", "audited": {"algorithm": "lda", "class": "LDA", "params": {}},
                          "corpus": {"spec": "docs.txt", "read": "as train reads it"}}}
    page = _text(_page(audit))
    section = page[page.index("Audit: membership inference"):page.index("The privacy card as JSON")]
    assert "lower bound at δ = 0: 0.6" in section and "canaries: 200" in section and "p-value at ε = 0: 0.01" in section
    assert "k_plus" not in section and "guessed in (highest scores): 50" in section
    audited = section[section.index("what was audited"):]
    assert "one model on the corpus and the canaries" in audited and "shadow models)" in audited   # "(no shadow models)"
    assert "retraining shadow models" not in audited and "training shadow models" not in audited


def test_document_level_card_rows_say_what_it_protects_and_which_word_list():
    rec = {"name": "fruit.txt", "n_words": 3, "sha256": "ab" * 32}
    page = _text(_page(report=dict(DOCUMENT_REPORT, vocabulary_list=rec)))
    assert "what this protects one whole document" in page
    assert "vocabulary supplied: a public word list" in page and f"the list fruit.txt, 3 words, sha256 {'ab' * 32}" in page


TOPICS = [[("apple", 0.5), ("pear", 0.2)], [("noiseword", 0.4)], [("the", 0.3)]]


def _support_page(supported, **kw):
    card = privacy_card(DOCUMENT_REPORT, "DocDPCooccurrence", check=False)
    return render_report(title="t", trainer="DocDPCooccurrence", card=card, topics=TOPICS, background=[2],
                         supported=supported, **kw)


def test_a_topic_below_the_noise_opens_the_page_with_a_banner_and_its_card_shows_no_words():
    html = _support_page([True, False, True])
    assert html.index('id="utility-warning"') < html.index('id="topics"')
    banner = _text(html.split('id="utility-warning"')[1].split("</div>")[0])
    assert "Only 2 of 3 topics stand above the noise" in banner and "supports 2 distinct topics at ε = 4" in banner
    for more in ("more documents", "a larger ε", "public documents of the domain", "fewer topics"):
        assert more in banner
    assert "inside the guarantee" in banner
    cards = re.findall(r"<div class='topic( unsupported)?'><h3>([^<]*)</h3>", html)
    assert [bool(c) for c, _ in cards] == [False, True, False]
    assert "noiseword" not in html and "apple" in html
    assert "background" in cards[2][1]
    shown = _support_page([True, False, True], show_unsupported=True)
    assert "noiseword" in shown and "<div class='topic unsupported'>" in shown


def test_no_banner_when_every_topic_stands_out_or_none_was_assessed():
    for supported in ([True, True, True], None):
        html = _support_page(supported)
        assert "utility-warning" not in html and "'topic unsupported'" not in html and "noiseword" in html
    assert "All 3 topics stand above the noise" in _text(_support_page([True, True, True]))


# ---------------------------------------------------------------------------------------------------------------------
# The privacy card and the HTML report of local-DP and served models, as a review board reads them.

@pytest.fixture(scope="module")
def olp():
    """A served word-level model's report: eps_word 3 on 500 words, the top contributor at 600 reports."""
    return local_privacy_report(f_from_epsilon(3.0), 500, reports_per_contributor=600)


@pytest.fixture(scope="module")
def ldpdoc():
    """A served document-level model's report: eps_doc 8, the top contributor at 300 reports."""
    return document_privacy_report(8.0, 200, 300)


def _card_page(card, trainer="T", **kw):
    return render_report(title="t", trainer=trainer, card=card, topics=[[("tax", 0.5)]], **kw)


def _figure_rows(page):
    table = page.split("Composition figures side by side")[1].split("</table>")[0]
    return {html_text.unescape(re.sub("<.*?>", "", what)): (eps, delta) for what, eps, delta in
            re.findall(r"<tr><td>(.*?)</td><td class='num'>(.*?)</td><td class='num'>(.*?)</td></tr>", table)}


def _row(page, label):
    m = re.search(rf"<tr><th>{re.escape(label)}</th><td>(.*?)</td></tr>", page)
    return None if m is None else html_text.unescape(re.sub("<.*?>", "", m.group(1)))


def _badge(page):
    return re.search(r'<div class="badge (\w+)">(.*?)</div>', page).groups()


def _terminal(report):
    from rich.console import Console

    from dptopic.reporting.terminal import print_privacy

    buf = io.StringIO()
    print_privacy(report, Console(file=buf, width=400, highlight=False))
    return buf.getvalue()


# 1. the per-contributor word-level epsilon, and the single report's labelled as such

def test_a_served_word_level_card_shows_the_contributors_word_level_epsilon(olp):
    card = privacy_card(olp, "OLPLDA", check=False)
    whole = card["figures"]["epsilon_word_contributor"]
    assert whole["epsilon"] == pytest.approx(1800.0) and whole["delta"] == 0.0
    assert whole["what"].startswith("per contributor, word level")
    one = card["figures"]["epsilon_word"]
    assert one["epsilon"] == pytest.approx(3.0) and one["what"].startswith("per report")
    rows = _figure_rows(_card_page(card, "OLPLDA"))
    assert rows[whole["what"]] == ("1800", "0") and rows[one["what"]] == ("3", "0")
    out = _terminal(olp)            # dptopic topics and train print both too
    assert re.search(r"eps per contributor, word level\s*│\s*1800", out)
    assert re.search(r"eps per report, word level\s*│\s*3 ", out)


def test_one_report_per_contributor_does_not_repeat_the_word_level_figure():
    card = privacy_card(local_privacy_report(f_from_epsilon(3.0), 50), "LPLDA", check=False)
    assert "epsilon_word_contributor" not in card["figures"] and card["figures"]["epsilon_word"]["epsilon"] == 3.0


# 2. the relation of the headline's unit; eps_doc on the document-level card

def test_local_cards_state_the_relation_of_their_per_contributor_headline(olp, ldpdoc):
    for report, n, trainer in ((olp, 600, "OLPLDA"), (ldpdoc, 300, "LocalDocumentLDA")):
        card = privacy_card(report, trainer, check=False)
        assert card["privacy_unit"] == f"contributor (local DP, {n} documents)"
        relation = card["neighbouring_relation"]
        assert relation.startswith(f"any two sets of up to {n} documents of one contributor")
        assert "One report alone: " + report["neighbouring_relation"] in relation     # the report's, after it
        assert _row(_card_page(card, trainer), "neighbouring relation").startswith(f"any two sets of up to {n} documents")
        assert f"any two sets of up to {n} documents" in _terminal(report)
    single = privacy_card(document_privacy_report(8.0, 200, 1), "LocalDocumentLDA", check=False)
    assert single["neighbouring_relation"] == document_privacy_report(8.0, 200, 1)["neighbouring_relation"]


def test_the_document_level_card_shows_eps_doc_per_report(ldpdoc, olp):
    card = privacy_card(ldpdoc, "LocalDocumentLDA", check=False)
    doc = card["figures"]["epsilon_doc"]
    assert doc["epsilon"] == 8.0 and doc["delta"] == 0.0 and doc["what"].startswith("per report, document level")
    assert _figure_rows(_card_page(card, "LocalDocumentLDA"))[doc["what"]] == ("8", "0")
    assert "&quot;epsilon_doc&quot;" in _card_page(card, "LocalDocumentLDA")      # in the card's JSON on the page too
    assert re.search(r"eps per report, document level\s*│\s*8 ", _terminal(ldpdoc))
    assert privacy_card(olp, "OLPLDA", check=False)["figures"]["epsilon_doc"]["epsilon"] == pytest.approx(1500.0)


# 3. green only for a guarantee the page calls meaningful

def test_the_headline_box_is_green_only_within_the_range_the_card_calls_meaningful(olp, ldpdoc):
    for report in (olp, ldpdoc):
        card = privacy_card(report, check=False)
        assert card["guarantee"] == "full" and card["epsilon"] > STRONG_EPSILON_LIMIT
        cls, text = _badge(_card_page(card))
        assert cls != "full" and "(guarantee, weak" in text
    report = {"private": True, "unit": "document", "epsilon": STRONG_EPSILON_LIMIT, "delta": 1e-6,
              "epsilon_method": "PLD", "vocabulary_source": "supplied"}
    assert _badge(_card_page(privacy_card(report, check=False))) == ("full", "ε = 16, δ = 1e-06 per document (guarantee)")
    for weak in ({"epsilon": STRONG_EPSILON_LIMIT * 1.01}, {"epsilon": 1.0, "delta": LARGE_DELTA * 10}):
        card = privacy_card(dict(report, **weak), check=False)
        assert card["guarantee"] == "full" and _badge(_card_page(card))[0] == "weak"


# 4. the audit table: n/r and percentages, as the terminal

AUDIT = {"claimed_privacy": {"private": True, "epsilon": 531.2, "delta": 1e-5, "unit": "word"},
         "attacks": {"lira_online": {"auc": 0.611, "auc_se": 0.022, "tpr_at_fpr_0.01": 0.11, "tpr_at_fpr_0.001": 0.05,
                                     "tpr_at_fpr_0": 0.05, "n_members": 300, "n_nonmembers": 300}}}


def _attack_cells(page):
    table = page.split("<h3>Attacks</h3>")[1].split("</table>")[0]
    heads = [html_text.unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table)
    return dict(zip(heads, cells))


def test_the_attack_table_shows_nr_where_the_scores_cannot_resolve_the_fpr():
    card = privacy_card({"private": False, "reason": "r"}, "LDA")
    page = _card_page(card, audit=AUDIT)
    cells = _attack_cells(page)
    assert cells["TPR at FPR 0.1%"] == "n/r"      # 300 non-members: fewer than 1/0.001
    assert cells["TPR at FPR 1%"] == "11.000%" and cells["TPR at FPR 0"] == "5.000%"   # percentages, as the terminal
    assert "n/r (not resolved)" in page and "docs/auditing.md" in page
    many = {"attacks": {"a": dict(AUDIT["attacks"]["lira_online"], n_nonmembers=2000)},
            "claimed_privacy": AUDIT["claimed_privacy"]}
    page = _card_page(card, audit=many)
    assert _attack_cells(page)["TPR at FPR 0.1%"] == "5.000%" and "n/r (not resolved)" not in page


def test_the_attack_table_follows_the_terminals_rule():
    from rich.console import Console

    from dptopic.reporting.terminal import audit_results_table as results_table

    buf = io.StringIO()
    Console(file=buf, width=200).print(results_table({"lira_online": dict(AUDIT["attacks"]["lira_online"])}))
    terminal = buf.getvalue()
    cells = _attack_cells(_card_page(privacy_card({"private": False}, "LDA"), audit=AUDIT))
    for col in ("TPR at FPR 1%", "TPR at FPR 0.1%", "TPR at FPR 0"):
        assert cells[col] in terminal


# 5. the terminal and the card say the same about a pure headline

def test_a_pure_headline_reads_delta_0_on_the_terminal_and_the_card(ldpdoc):
    out = _terminal(ldpdoc)
    assert "epsilon = 2400, pure epsilon-DP: delta = 0 (basic composition)" in out
    assert "at delta = 1e-05 (basic" not in out and "))" not in out.split("GUARANTEE")[1].split("\n")[0]
    card = privacy_card(ldpdoc, check=False)
    assert card["delta"] == 0.0 and card["epsilon_is"] == "basic composition; pure epsilon-DP: delta = 0"
    page = _card_page(card)
    assert _row(page, "ε, δ (the guarantee)") == "2400, 0 (basic composition; pure epsilon-DP: delta = 0)"
    assert "δ = 0 per contributor" in _badge(page)[1]
    approx = privacy_card(dict(ldpdoc, epsilon=2399.0, epsilon_method="PLD"), check=False)
    assert approx["epsilon_is"] == "PLD" and approx["delta"] == 1e-5


# 6. wording

HDP = {"private": True, "unit": "word", "neighbouring_relation": "word-level replacement", "theorem": "t",
       "delta": 1e-5, "epsilon_basic": 550.0, "epsilon_pld": 531.18, "epsilon_rdp": 532.9, "epsilon": 531.18,
       "epsilon_method": "PLD", "noise": "discrete",
       "scope": ("covers every noisy count release. Not covered: the choice of hyper-parameters. Vocabulary treated as"
                 " public (chosen from the training corpus, not protected); document count and lengths are public"
                 " under word replacement."),
       "vocabulary": ("chosen from the training corpus and published in the model; treated as public, i.e. NOT"
                      " protected: pass a public vocabulary (fit(..., vocabulary=...), --vocabulary FILE) to avoid"
                      " this"),
       "vocabulary_source": "data"}


def test_the_hdp_card_states_the_vocabulary_once_and_names_no_internal_key():
    card = privacy_card(HDP, "HDPLDA", check=False)
    assert card["not_covered"].lower().count("chosen from the training corpus") == 1
    assert card["guarantee"] == "partial" and "vocabulary" in card["guarantee_note"]    # still said, once, there
    assert "per_document" not in card["strength_note"] and "per-document row" in card["strength_note"]
    bare = privacy_card({k: v for k, v in HDP.items() if k != "scope"}, "HDPLDA", check=False)
    assert "Vocabulary: chosen from the training corpus" in bare["not_covered"]   # a scope that does not say it


def test_a_non_private_card_has_no_empty_cells_and_no_noise_row():
    card = privacy_card({"private": False, "epsilon": float("inf"), "unit": "word", "reason": "plain CGS"}, "LDA")
    page = _card_page(card, "LDA")
    assert _row(page, "accounting method") == "—"
    assert _row(page, "what is NOT covered").startswith("everything") and _row(page, "what is covered").startswith(
        "nothing")
    assert _row(page, "noise reproducible") is None
    noisy = _card_page(privacy_card(HDP, "HDPLDA", check=False), "HDPLDA")
    assert _row(noisy, "noise reproducible") == "no"         # noise was added, without a seed


# 7. layout

def test_labels_wrap_at_word_boundaries_and_bars_keep_a_gap():
    page = _card_page(privacy_card(HDP, "HDPLDA", check=False))
    th = re.search(r"\nth\{([^}]*)\}", page).group(1)
    assert "overflow-wrap:normal" in th and "word-break:normal" in th and "hyphens:manual" in th
    assert "min-width" in th
    page = render_report(title="t", trainer="LDA", card=privacy_card({"private": False}, "LDA"),
                         topics=[[("commerce", 0.5), ("tax", 0.2)]])
    rect_x = float(re.search(r'<rect x="([\d.]+)"', page).group(1))
    # "commerce" in Chromium's default sans at 11 px is about 58 px wide (7.2 px a letter), starting at x = 2
    assert rect_x - (2 + 8 * 7.2) >= 6


def test_a_word_level_headline_is_never_the_green_box():
    """ε = 8 per word is 800 for a document of 100 words: the range the green box stands for is per document or
    larger, so a word-level headline takes the warning colour and says so, however small its epsilon."""
    report = {"private": True, "unit": "word", "epsilon": 8.0, "delta": 1e-6, "epsilon_method": "PLD",
              "vocabulary_source": "supplied", "scope": "covers everything. NOT covered: nothing."}
    card = privacy_card(report, check=False)
    assert card["guarantee"] == "full" and "strength_note" not in card
    cls, text = _badge(_card_page(card))
    assert cls == "weak" and "per word only" in text and "L × ε" in text
    assert _badge(_card_page(privacy_card(dict(report, unit="document"), check=False)))[0] == "full"



# ----------------------------------------------------------------- 1: odd values in a privacy report's extra fields
ODD = [{"epsilon_nominal": "x"}, {"claimed_by_paper": 5}, {"count_release_epsilon": {"a": 1}},
       {"count_release_epsilon": 7}, {"warnings": 5}, {"epsilon_basic": "abc"}, {"epsilon_pld": "abc"},
       {"epsilon_rdp": [1]}, {"epsilon_paper": "x"}, {"per_document": 5}, {"per_document": {"examples": 3}},
       {"per_document": {"rule": "r", "examples": {"10": "x"}}}, {"epsilon_nominal": 10**400}]


@pytest.mark.parametrize("odd", ODD, ids=[next(iter(o)) + str(i) for i, o in enumerate(ODD)])
def test_html_report_renders_odd_values(hdp_model_dir, odd):
    from dptopic.accounting.card import privacy_card
    from dptopic.reporting.html import render_report

    report = dict(json.loads((hdp_model_dir / "model.json").read_text())["privacy"], **odd)
    for private in (True, False):
        report["private"] = private
        html = render_report(title="t", trainer="HDPLDA", card=privacy_card(report, "HDPLDA"),
                             topics=[[("a", 0.5), ("b", 0.5)]])
        assert "Privacy card" in html


# ----------------------------------------------------------------- 2: an audit whose claimed_privacy is not an object
@pytest.mark.parametrize("claim", ["x", 5, None, ["a"]])
def test_html_audit_section_with_odd_claim(claim):
    from dptopic.accounting.card import privacy_card
    from dptopic.reporting.html import render_report

    audit = {"claimed_privacy": claim, "empirical_epsilon": {"lira": 0.1}, "attacks": {"lira": {"auc": 0.5}}}
    html = render_report(title="t", trainer="LDA", card=privacy_card({"private": False}, "LDA"),
                         topics=[[("a", 1.0)]], audit=audit)
    assert "membership inference" in html


def test_card_and_html_show_the_check(private_models):
    from dptopic.accounting.card import privacy_card
    from dptopic.reporting.html import render_report

    card = privacy_card(private_models[2].privacy_, "DocDPCooccurrence")
    assert card["ledger_check"]["status"] == "verified"
    assert "ledger_check" not in privacy_card(private_models[2].privacy_, "DocDPCooccurrence", check=False)
    html = render_report(title="t", trainer="DocDPCooccurrence", card=card, topics=[[("a", 1.0)]])
    assert "recomputed from its events" in html and "verified" in html


def test_the_report_puts_a_small_audits_warning_beside_its_bound():
    from dptopic.reporting.html import _audit_section

    audit = {"claimed_privacy": {"private": False}, "empirical_epsilon": {"epsilon_lower_bound": 2.1},
             "settings": {"small_audit": "this audit is too small to mean much: 4 shadow models", "n_shadows": 4}}
    page = _audit_section(audit, None)
    assert page.index("too small to mean much") < page.index("empirical ε lower bound")


# ---------------------------------------------------------------- finding 8: print and layout
def _card():
    return privacy_card({"private": True, "unit": "document", "neighbouring_relation": "add/remove", "theorem": "t",
                         "delta": 1e-5, "epsilon": 1.0, "epsilon_pld": 1.0, "scope": "covers it. NOT covered: that."},
                        "DocDPEM")


def test_the_page_prints_its_json_card_colours_and_long_lines():
    card = _card()
    html = render_report(title="t", trainer="DocDPEM", card=card, topics=[[("tax", 0.5)]])
    css = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    assert "@media print" in css and "print-color-adjust:exact" in css and "white-space:pre-wrap" in css
    assert ".print-only{display:block}" in css and "details{display:none}" in css.split("@media print")[1]
    # the card's JSON twice: in the <details> on screen, and in a block only print shows (a closed <details>
    # does not print)
    printed = re.search(r'<div class="print-only">.*?<pre>(.*?)</pre></div>', html, re.S).group(1)
    assert json.loads(printed.replace("&quot;", '"').replace("&#x27;", "'").replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&amp;", "&"))["schema"] == card["schema"]
    # still nothing run and nothing fetched
    assert "<script" not in html and "url(" not in html and "@import" not in html and " src='http" not in html


def test_attack_columns_and_trainer_settings_are_readable():
    from dptopic.reporting.html import attack_column

    assert attack_column("tpr_at_fpr_0.01") == "TPR at FPR 1%" and attack_column("tpr_at_fpr_0") == "TPR at FPR 0"
    assert attack_column("auc_se_models") == "AUC SE over models" and attack_column("odd_key") == "odd key"
    audit = {"attacks": {"lira_online": {"auc": 0.5, "tpr_at_fpr_0.001": 0.001}}, "claimed_privacy": {},
             "settings": {"trainer": "DocDPCooccurrence {'n_topics': 20, 'tail': None}",   # an earlier audit.json
                          "audited": {"class": "DocDPCooccurrence", "params": {"n_topics": 20, "tail": None}}}}
    html = render_report(title="t", trainer="DocDPEM", card=_card(), topics=[[("tax", 0.5)]], audit=audit)
    assert "DocDPCooccurrence: n_topics = 20, tail = none" in html and "{&#x27;n_topics" not in html


def test_an_earlier_audit_json_is_shown_as_an_audit_of_the_procedure():
    # written before this wording: "attacked: the saved model m_doc (...)"; the page rebuilds it from the record
    audit = {"attacks": {"lira_online": {"auc": 0.5}}, "claimed_privacy": {},
             "settings": {"n_shadows": 4, "attacked": "the saved model m_doc (DocDPCooccurrence, sha256:08b1…)",
                          "audited": {"what": "saved model", "model": "m_doc", "class": "DocDPCooccurrence",
                                      "fingerprint": "sha256:08b1b12e209f", "params": {"n_topics": 20}},
                          "corpus": {"spec": "demo", "read": "into the model's vocabulary"}}}
    html = render_report(title="t", trainer="DocDPEM", card=_card(), topics=[[("tax", 0.5)]], audit=audit)
    row = re.search(r"<tr><th>what was audited</th><td>(.*?)</td></tr>", html).group(1)
    assert row.startswith("the training procedure of the saved model m_doc") and "4 shadow models" in row
    assert "not scored" in row


def _flat(s: str) -> str:
    return " ".join(s.split())


@pytest.fixture(scope="module")
def tail_model():
    return fit_fedlda("tail", epsilon_per_entry=5.0)


# 1 ------------------------------------------------------------------------------------------------------------
def test_tail_card_names_the_rule_s_reasons_before_the_vocabulary(tail_model):
    card = privacy_card(tail_model.privacy_, "FedLDA")
    reasons = card.get("partial_reasons") or []
    if card["guarantee"] == "partial":
        note = card["guarantee_note"]
        assert note.index("Zipf") < note.index("topic label") < note.index("vocabulary")
    else:   # the tail rule's events added up to no guarantee: the events' unit, labelled, in the card and the page
        assert card["privacy_unit"] == "user" and "NO (epsilon, delta) guarantee" in card["privacy_unit_note"]
        html = render_report(title="t", trainer="FedLDA", card=card, topics=[[("a", 1.0)]])
        assert "<th>privacy unit</th><td>user" in html and "none: no differential privacy guarantee" not in html
        assert not reasons


# 7 ------------------------------------------------------------------------------------------------------------
def test_fed_page_shows_the_per_user_arithmetic(fedlda_none_model):
    card = privacy_card(fedlda_none_model.privacy_, "FedLDA")
    html = _flat(render_report(title="t", trainer="FedLDA", card=card, topics=[[("a", 1.0)]]))
    m = fedlda_none_model._config().n_entries
    assert f"x {m} entries per user" in html and "paid once whatever the 2 rounds" in html
    assert "per report" in html and "first 6 of" in html
    assert "(one word)" not in card["figures"]["epsilon_nominal"]["what"]


@pytest.mark.parametrize("eps, unit, weak", [(600.0, "word", True), (20.0, "document", True), (8.0, "document", False),
                                             (16.0, "document", False)])
def test_the_card_calls_a_large_epsilon_weak(eps, unit, weak):
    from dptopic.accounting.card import privacy_card
    from dptopic.reporting.html import _privacy_section

    rep = {"private": True, "epsilon": eps, "delta": 1e-5, "epsilon_method": "PLD", "unit": unit,
           "vocabulary_source": "supplied", "scope": "covers everything. NOT covered: nothing."}
    card = privacy_card(rep, "X")
    assert ("strength_note" in card) == weak
    if weak:
        assert "weak guarantee" in card["strength_note"] and ("per-document row" in card["strength_note"]) == (unit == "word")
        assert "weak guarantee" in _privacy_section(card)


def test_background_topics_are_named_and_labelled(tmp_path):
    from dptopic.accounting.card import privacy_card
    from dptopic.reporting.html import render_report

    c = lda_corpus(n_docs=400, vocab_size=300, n_topics=10, doc_length=40, seed=2).corpus
    m = quiet_fit(dptopic.DocDPCooccurrence(n_topics=10, epsilon=4.0, verbose=0, recovery="nmf"), c)
    ids = m.background_topic_ids()
    assert ids == list(range(10 - m.n_background_topics_, 10)) and len(ids) > 0
    m.save(tmp_path / "m")
    assert dptopic.load(tmp_path / "m").background_topic_ids() == ids      # from the saved report
    assert quiet_fit(dptopic.LDA(n_topics=3, n_iter=2, verbose=0), c).background_topic_ids() == []
    page = render_report(title="t", trainer="DocDPCooccurrence", card=privacy_card(m.privacy_, "DocDPCooccurrence"),
                         topics=m.topic_words(5, weights=True), background=ids)
    assert page.count("(background: corpus-wide words)") == len(ids)


# ---------------------------------------------------------------------------------- a pyLDAvis page that works offline
def _pyldavis_data(tmp_path):
    """pyLDAvis's prepared data for a small LDA model, through 'dptopic export --to pyldavis' as the docs show."""
    pyLDAvis = pytest.importorskip("pyLDAvis")
    import json as _json

    import dptopic
    from helpers import run_dptopic

    texts = ["apple banana cherry grape", "river valley mountain lake", "apple cherry grape lemon",
             "valley river lake stream"] * 10
    (tmp_path / "c.txt").write_text("\n".join(texts) + "\n")
    dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0).fit(
        dptopic.Corpus.from_texts(texts, stop_words=None)).save(tmp_path / "m")
    r = run_dptopic("export", "--to", "pyldavis", tmp_path / "m", "--corpus", tmp_path / "c.txt", "--out",
                    tmp_path / "vis.json")
    assert r.returncode == 0, r.stderr
    d = _json.loads((tmp_path / "vis.json").read_text())
    return pyLDAvis.prepare(**{k: d[k] for k in ("topic_term_dists", "doc_topic_dists", "doc_lengths", "vocab",
                                                  "term_frequency")}, sort_topics=False)


def _external_references(page: str) -> list:
    import re

    tags = re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", page, re.I)
    return [t for t in tags if re.search(r"\b(?:src|href)\s*=", t, re.I)]


def test_the_pyldavis_page_inlines_its_scripts_and_loads_nothing_from_elsewhere(tmp_path):
    from dptopic.reporting.html import pyldavis_page

    vis = _pyldavis_data(tmp_path)
    page = pyldavis_page(vis)
    assert _external_references(page) == []
    assert "new LDAvis(" in page and "d3js.org" not in page.split("<script>")[0]
    import pyLDAvis.urls

    d3 = open(pyLDAvis.urls.D3_LOCAL, encoding="utf-8").read()
    assert d3[:200] in page                      # d3 itself is in the page, not a link to it


def test_the_pyldavis_page_keeps_a_script_tag_in_the_data_from_ending_its_script(tmp_path):
    from dptopic.reporting.html import pyldavis_page

    js = tmp_path / "js"
    js.mkdir()
    for name, text in (("d3.v5.min.js", "var d3 = {};"), ("ldavis.v3.0.0.js", "var LDAvis = function () {};"),
                       ("ldavis.v1.0.0.css", "svg {}")):
        (js / name).write_text(text)
    data = {"mdsDat": {}, "tinfo": {"Term": ["</script><script>alert(1)</script>"]}, "token.table": {}}
    page = pyldavis_page(data, js_dir=js)
    assert page.count("</script>") == 3 and "alert(1)" in page
    assert _external_references(page) == []
    with pytest.raises(DPTopicError, match="pyLDAvis"):
        pyldavis_page({"topics": []}, js_dir=js)


CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (make test installs Debian's chromium when it can)")
def test_the_pyldavis_page_renders_offline_in_headless_chromium(tmp_path):
    import subprocess

    from dptopic.reporting.html import pyldavis_page

    out = tmp_path / "vis.html"
    out.write_text(pyldavis_page(_pyldavis_data(tmp_path)), encoding="utf-8")
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--enable-logging=stderr", "--v=0", "--host-resolver-rules=MAP * ~NOTFOUND"]   # no network at all
    r = subprocess.run(flags + ["--virtual-time-budget=5000", "--dump-dom", out.as_uri()], capture_output=True,
                       text=True, timeout=120)
    assert "<svg" in r.stdout and "Failed to load resource" not in r.stderr, r.stderr[-2000:]
    assert "apple" in r.stdout.split("<script>")[-1] or "apple" in r.stdout


# --------------------------------------------------------------------------------------------------------------
# The privacy card and the HTML report of a model trained with a guarantee per person (unit="user") say the unit, how
# each person's contribution was bounded, and what is not covered.
def test_user_level_card_and_report_name_the_person_and_the_bound(planted):
    c = planted.corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DocDPCooccurrence(n_topics=5, epsilon=1.0, unit="user", documents_per_user=3).fit(
            c, user_ids=[f"p{i % 50}" for i in range(c.n_docs)], vocabulary=list(c.vocabulary))
    card = privacy_card(m.privacy_, "DocDPCooccurrence")
    assert card["privacy_unit"] == "user" and card["guarantee"] == "full"
    assert card["user_bound"] == "at most 3 documents a person (chosen at random), each weighted 1/3"
    assert card["not_covered"].startswith("NOT covered: a person whose documents carry two or more user ids")
    html = _privacy_section(card)
    assert "each person&#x27;s contribution" in html or "each person's contribution" in html
    assert "at most 3 documents a person" in html and "two or more user ids" in html
