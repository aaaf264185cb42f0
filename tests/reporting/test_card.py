"""The privacy card: what a document-level guarantee protects, in plain words, and which word list a model was
trained on."""
import hashlib
import math

from dptopic.reporting import privacy_card
from dptopic.accounting.card import vocabulary_text
from dptopic.corpus.wordlist import WORD_LIST_HASH, word_list_record

DOCUMENT_REPORT = {"private": True, "unit": "document", "delta": 1e-5, "epsilon_pld": 4.0, "epsilon": 4.0,
                   "epsilon_method": "PLD", "neighbouring_relation": "document-level add/remove",
                   "scope": "covers the release.", "vocabulary_source": "supplied", "noise": "gaussian"}


def test_document_level_card_says_what_it_protects():
    card = privacy_card(DOCUMENT_REPORT, "DocDPCooccurrence", check=False)
    protects = card["protects"]
    assert protects.startswith("one whole document") and f"{math.exp(4.0):.3g}" in protects
    assert "delta = 1e-05" in protects and "k x epsilon" in protects
    word = privacy_card(dict(DOCUMENT_REPORT, unit="word"), "HDPLDA", check=False)
    assert word["protects"].startswith("one word") and "per-document row" in word["protects"]
    assert "protects" not in privacy_card({"private": False}, "LDA", check=False)   # no guarantee, nothing protected


def test_word_list_is_recorded_by_name_size_and_hash(tmp_path):
    words = ["apple", "pear", "plum"]
    listed = tmp_path / "private-folder" / "fruit.txt"
    listed.parent.mkdir()
    listed.write_text("apple\npear\nplum\n")
    rec = word_list_record(str(listed), words)
    assert rec == {"name": "fruit.txt", "n_words": 3, "sha256": hashlib.sha256(listed.read_bytes()).hexdigest(),
                   "sha256_of": WORD_LIST_HASH}
    assert word_list_record("wordfreq:en:500", words)["name"] == "wordfreq:en:500"
    card = privacy_card(dict(DOCUMENT_REPORT, vocabulary_list=rec), "DocDPCooccurrence", check=False)
    assert card["vocabulary_list"] == rec
    assert vocabulary_text(card).endswith(f"the list fruit.txt, 3 words, sha256 {rec['sha256']}")
    older = privacy_card(DOCUMENT_REPORT, "DocDPCooccurrence", check=False)      # saved before the list was recorded
    assert "which list is not recorded" in vocabulary_text(older)
