"""The HTML report: the audit's empirical epsilon in words (no Python dict), its counts explained beside the attack
table's, and the privacy card's plain-language and vocabulary rows."""
import re
from html import unescape

from dptopic.reporting import privacy_card, render_report

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
    assert "3 of 3 topics stand above the noise" in _text(_support_page([True, True, True]))
