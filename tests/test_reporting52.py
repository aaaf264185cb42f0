"""Walk-through 52 of `dptopic report`, the privacy card and the evaluation measures: each test fails on the code
before its fix."""
import math
import random

import numpy as np
import pytest

import dptopic
from dptopic.cli.main import main
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import (cv_coherence, npmi_coherence, topic_diversity, topic_quality, umass_coherence,
                                umass_pairwise_mean)
from dptopic.reporting import privacy_card, render_report

VOCAB = [f"w{i}" for i in range(6)]
COMP = np.array([[.3, .25, .2, .15, .05, .05], [.05, .05, .15, .2, .25, .3]])


def _ref(docs):
    return Corpus.from_tokens(docs, vocabulary=VOCAB)


@pytest.fixture(scope="module")
def lda_folder(tmp_path_factory):
    rng = random.Random(0)
    words = ["apple", "banana", "cherry", "grape", "melon", "truck", "engine", "wheel", "road", "brake"]
    docs = [[rng.choice(words[:5] if i % 2 else words[5:]) for _ in range(12)] for i in range(60)]
    folder = tmp_path_factory.mktemp("m52") / "lda"
    dptopic.LDA(n_topics=2, n_iter=10, seed=0, verbose=0).fit(Corpus.from_tokens(docs)).save(folder)
    return folder


def _report_text(path) -> str:
    return " ".join(path.read_text("utf-8").split())


# 1: the page dropped evaluate's note on top words absent from the reference (NPMI -1, C_v undefined, no word why)
def test_report_says_when_top_words_are_absent_from_the_reference(lda_folder, tmp_path):
    ref = tmp_path / "one.txt"
    ref.write_text("apple banana\n", "utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(lda_folder), "--out", str(out), "--reference", str(ref), "--format", "text"]) in (0, None)
    html = _report_text(out)
    assert "have top words that occur in no reference document" in html
    assert "1 document, 2 tokens" in html and "1 documents" not in html
    assert "<th>absent_top_words</th>" not in html        # a note, not a figure row


def test_topic_quality_names_one_document_in_the_singular():
    q = topic_quality(COMP, _ref([["w0", "w1", "w2", "w3", "w4", "w5"]]), top_n=3, reference_name="r")
    assert q["reference"] == "r: 1 document, 6 tokens"


# 2: NaN or infinite topic weights gave arbitrary top words and figures, silently
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_measures_refuse_non_finite_topic_weights(bad):
    comp = COMP.copy()
    comp[0, 2] = bad
    ref = _ref([["w0", "w1"], ["w2", "w3"]])
    for f in (npmi_coherence, cv_coherence, umass_pairwise_mean, umass_coherence, topic_quality):
        with pytest.raises(DPTopicError, match="finite"):
            f(comp, ref, top_n=3)
    with pytest.raises(DPTopicError, match="finite"):
        topic_diversity(comp, 3)


# 3: topic_diversity read top_n=True as 1, 2.5 as 2, and NaN raised a bare ValueError
@pytest.mark.parametrize("top_n", [True, 2.5, math.nan, 0, -1])
def test_diversity_refuses_a_top_n_that_is_not_a_positive_integer(top_n):
    with pytest.raises(DPTopicError, match="top_n"):
        topic_diversity(COMP, top_n)


def test_diversity_still_reads_every_word_for_a_large_top_n():
    assert topic_diversity(COMP, 25) == topic_diversity(COMP, 6) == 0.5
    assert topic_diversity(COMP, np.int64(1)) == 1.0


# 4: a card with NO guarantee (events that add up to none, as FedLDA's tail rule) said what it "covers"
def test_no_guarantee_card_does_not_say_what_the_events_cover():
    rep = {"private": True, "epsilon": None, "delta": 1e-5, "unit": "user", "neighbouring_relation": "one user",
           "epsilon_method": "none: the events' own deltas add to 5.12e+03",
           "scope": "covers the word of every entry one user reports. NOT covered: the topic labels."}
    card = privacy_card(rep, "FedLDA", check=False)
    assert card["guarantee"] == "none"
    assert card["covered"].startswith("nothing: NO (epsilon, delta) guarantee")
    assert "covers the word of every entry" in card["covered"]      # what the events were accounted for, labelled
    html = render_report(title="t", trainer="FedLDA", card=card, topics=[[("a", 1.0)]])
    assert "<th>what is covered</th><td>nothing: NO (epsilon, delta) guarantee" in html
    # a private report keeps its scope as it is
    ok = privacy_card({"private": True, "epsilon": 1.0, "delta": 1e-5, "epsilon_method": "PLD", "unit": "document",
                       "scope": "covers the counts. NOT covered: x."}, "DocDPEM", check=False)
    assert ok["covered"] == "covers the counts."


# 5: an undefined figure was printed "nan" on the page
def test_page_prints_no_nan():
    card = privacy_card({"private": False, "reason": "plain CGS"}, "LDA")
    html = render_report(title="t", trainer="LDA", card=card, topics=[[("a", 1.0)]],
                         evaluation={"reference": "r", "perplexity": float("nan")})
    assert ">nan<" not in html and "<th>perplexity</th><td>undefined</td>" in html


# 6: with --compare-to and no --reference the page lost topic diversity, which it shows without either
def test_compare_to_without_reference_keeps_topic_diversity(lda_folder, tmp_path):
    out = tmp_path / "c.html"
    assert main(["report", str(lda_folder), "--out", str(out), "--compare-to", str(lda_folder)]) in (0, None)
    html = _report_text(out)
    assert "topic diversity (top 25)" in html and "match to the topics of" in html
