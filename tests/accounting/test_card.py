"""``dptopic.accounting.card``: what a document-level guarantee protects, in plain words, which word list a model
was trained on, and the card as the pages and the terminal print it."""
import hashlib
import math
import random
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.accounting.card import privacy_card, vocabulary_text
from dptopic.accounting.events import ApproxDPEvent
from dptopic.accounting.set_union import SET_UNION_RELATION, fdptm_report
from dptopic.cli.main import main
from dptopic.corpus import Corpus, lda_corpus
from dptopic.corpus.wordlist import WORD_LIST_HASH, word_list_record
from dptopic.errors import DPTopicError
from dptopic.evaluation import (
    cv_coherence,
    npmi_coherence,
    topic_diversity,
    topic_quality,
    umass_coherence,
    umass_pairwise_mean,
)
from dptopic.models import DPSVI, HDPLDA
from dptopic.reporting.html import render_report
from helpers import SMALL_PRIVATE_TRAINERS, quiet_fit


def test_a_private_vocabularys_card_labels_the_added_figures_as_theorem_4_1_and_names_the_every_event_pld():
    # walk C, finding 9: "tight PLD" labelled eps_V + the trainer's PLD (1.5), above the claimed every-event PLD
    from dptopic.accounting.card import _figures

    rep = {"vocabulary_selection": {"epsilon": 0.5}, "topic_model": {"delta": 1e-5}, "delta": 1.1e-5,
           "epsilon_pld": 1.5, "epsilon_pld_tight": 1.469, "epsilon_rdp": 1.6, "epsilon_basic": 1.5}
    f = _figures(rep)
    assert "Thm 4.1" in f["epsilon_pld"]["what"] and not f["epsilon_pld"]["what"].startswith("tight")
    assert "every event" in f["epsilon_pld_tight"]["what"] and "Thm 4.1" in f["epsilon_rdp"]["what"]
    plain = _figures({"delta": 1e-5, "epsilon_pld": 1.0})
    assert plain["epsilon_pld"]["what"].startswith("tight")


def test_floor_card_with_a_public_vocabulary_still_names_the_labels():
    rep = {"private": True, "epsilon": 10.0, "delta": 1e-5, "epsilon_method": "PLD", "guarantee": "partial",
           "unit": "user", "epsilon_per_entry": 1.0, "vocabulary_source": "supplied",
           "parameters": {"exclusion": "floor", "replacement": "topic", "entries_per_round": 5, "rounds": 2},
           "events": []}
    card = privacy_card(rep, "FedLDA", check=False)
    assert card["guarantee"] == "partial" and "topic label" in card["guarantee_note"]
    assert "vocabulary" not in card["guarantee_note"] and "Zipf" not in card["guarantee_note"]


def test_none_rule_card_leaves_out_the_rrp_parameters(fedlda_none_model):
    params = fedlda_none_model.privacy_["parameters"]
    assert not {"eta", "delta0", "failure_rate_delta", "gamma", "variant", "replacement"} & set(params)
    assert params["report_words"] == 6 and params["vocab_size"] == len(fedlda_none_model.vocabulary_)



@pytest.mark.parametrize("name", ["DocDPCooccurrence", "DocDPEM", "DPSVI"])
def test_document_level_reports_say_where_their_coins_come_from_and_name_group_privacy(name, corpus200):
    from dptopic.accounting.card import privacy_card

    m = quiet_fit(SMALL_PRIVATE_TRAINERS[name](), corpus200)
    rep = m.privacy_
    assert rep["randomness"].startswith("standard mode") and "floating-point" in rep["randomness"]
    assert "k times epsilon" in rep["scope"] and rep["scope"].count("group privacy") == 1
    card = privacy_card(rep, type(m).__name__)
    assert card["implementation"]["randomness"] == rep["randomness"]


def _user_report(sigma=3.7308217955163516):
    """A user-level report of one Gaussian release calibrated to epsilon 1 at delta 1e-5 (DocDPCooccurrence's)."""
    from dptopic.person_bound import USER_RELATION

    return {"private": True, "unit": "user", "neighbouring_relation": USER_RELATION, "epsilon": 0.999944,
            "delta": 1e-5, "epsilon_method": "PLD", "scope": "covers the release. NOT covered: the vocabulary.",
            "events": [{"type": "poisson_subsampled_gaussian", "noise_multiplier": sigma, "sampling_rate": 1.0,
                        "relation": USER_RELATION, "count": 1}]}


def test_the_user_card_says_added_or_removed_and_prints_the_replacement_figure():
    from dptopic.accounting.events import SubsampledGaussianEvent

    card = privacy_card(_user_report(), "DocDPCooccurrence", check=False)
    assert "added or removed" in card["protects"] and "changed" not in card["protects"]
    # replacing one person moves the non-negative releases by sqrt(2): the epsilon of sigma / sqrt(2), same delta
    want = SubsampledGaussianEvent(3.7308217955163516 / 2 ** 0.5, 1.0).epsilon_at(1e-5)
    assert card["replacement"]["epsilon"] == pytest.approx(want, rel=2e-3) and 1.46 < want < 1.47
    from dptopic.accounting.card import epsilon_text

    assert f"epsilon = {epsilon_text(card['replacement']['epsilon'])}" in card["protects"]


def test_the_user_card_states_group_privacy_computed_at_its_delta_and_shared_ids_as_not_covered():
    from dptopic.accounting.events import SubsampledGaussianEvent

    card = privacy_card(_user_report(), "DocDPCooccurrence", check=False)
    group = card["group_privacy"]
    assert group["delta"] == 1e-5 and set(group["epsilon"]) == {"2", "10"}
    for k in (2, 10):       # k people move the release by k: the Gaussian's epsilon at sigma / k, by PLD
        want = SubsampledGaussianEvent(3.7308217955163516 / k, 1.0).epsilon_at(1e-5)
        assert group["epsilon"][str(k)] == pytest.approx(want, rel=2e-3)
        assert group["epsilon"][str(k)] > k * 0.999944           # more than k x epsilon: delta's share grows
    assert 2.15 < group["epsilon"]["2"] < 2.16 and 14.4 < group["epsilon"]["10"] < 14.5
    assert "k x epsilon" not in card["protects"].replace("more than k x epsilon", "")
    assert "shared or anonymous accounts" in card["not_covered"]
    # and the textbook form, k x epsilon with delta grown to k e^((k-1) epsilon) delta: 2 e 1e-5 for k = 2
    assert f"k = 2: delta {2 * math.e * 1e-5:.3g}" in group["note"]


DOCUMENT_REPORT = {"private": True, "unit": "document", "delta": 1e-5, "epsilon_pld": 4.0, "epsilon": 4.0,
                   "epsilon_method": "PLD", "neighbouring_relation": "document-level add/remove",
                   "scope": "covers the release.", "vocabulary_source": "supplied", "noise": "gaussian"}


def test_document_level_card_says_what_it_protects():
    card = privacy_card(DOCUMENT_REPORT, "DocDPCooccurrence", check=False)
    protects = card["protects"]
    assert protects.startswith("one whole document") and f"{math.exp(4.0):.3g}" in protects
    assert "delta = 1e-05" in protects and "as a group of k documents" in protects and "k x epsilon" not in protects
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


# ---------------------------------------------------------------------------------------------------------------------
# `dptopic report`, the privacy card and the evaluation measures: each test fails on the code
# before its fix.

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


# ---------------------------------------------------------------------------------------------------------------------
# The privacy card's figures and notes claim no more than the run's releases prove.

@pytest.fixture(scope="module")
def small_with_vocabulary():
    corpus = lda_corpus(n_docs=120, vocab_size=40, n_topics=3, doc_length=20, seed=3).corpus
    return corpus, corpus.vocabulary


def test_hdp_paper_figure_counts_the_fresh_final_release(small_with_vocabulary):
    """final_release='fresh' adds one eps_L release: the card's pure "paper's own accounting" row (delta 0) must not
    state less than the run spent (it read T(eps_L + eps_I) = 55 beside basic composition's 56)."""
    corpus, vocab = small_with_vocabulary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = HDPLDA(n_topics=3, n_iter=3, epsilon_laplace=1.0, epsilon_inherent=10.0, final_release="fresh",
                   verbose=0).fit(corpus, vocabulary=vocab)
    rep = m.privacy_
    assert rep["epsilon_basic"] == pytest.approx(3 * (1.0 + 10.0) + 1.0)
    assert rep["epsilon_paper"] == pytest.approx(rep["epsilon_basic"])
    row = privacy_card(rep, "HDPLDA", check=False)["figures"]["epsilon_paper"]
    assert row["delta"] == 0.0 and row["epsilon"] >= rep["epsilon_basic"]


def test_hdp_paper_figure_without_a_fresh_release_is_unchanged(small_with_vocabulary):
    corpus, vocab = small_with_vocabulary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = HDPLDA(n_topics=3, n_iter=3, epsilon_laplace=1.0, epsilon_inherent=10.0, verbose=0).fit(
            corpus, vocabulary=vocab)
    assert m.privacy_["epsilon_paper"] == pytest.approx(33.0) == m.privacy_["epsilon_basic"]


def test_svi_figures_note_neither_says_none_nor_names_a_figure_the_composition_does_not_claim(small_with_vocabulary):
    """The card prints the SVI note under its figure table: no Python "None", and no "the guarantee claimed is
    epsilon_pld" when a private vocabulary's composition claims epsilon_pld_tight."""
    corpus, vocab = small_with_vocabulary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPSVI(n_topics=3, noise_multiplier=2.0, sampling_rate=0.2, n_epochs=1, verbose=0).fit(
            corpus, vocabulary=vocab)
    note = m.privacy_["paper_figures_note"]
    assert "None" not in note
    assert "claimed is epsilon_pld" not in note and "epsilon_method" in note
    vocab_event = ApproxDPEvent(0.5, 1e-6, relation=SET_UNION_RELATION, unit="document")
    composed = fdptm_report(vocab_event, m.privacy_, m.ledger_)
    assert composed["epsilon_method"] == "PLD, every event composed"
    card = privacy_card(composed, "DPSVI", check=False)
    assert card["epsilon"] == pytest.approx(composed["epsilon_pld_tight"])
    assert "claimed is epsilon_pld" not in card["figures_note"]


def _user_level_report() -> dict:
    return {"private": True, "unit": "user", "delta": 1e-5, "epsilon_basic": 20.0, "epsilon_pld": 20.0,
            "epsilon_rdp": 20.0, "neighbouring_relation": "one user's reports", "theorem": "t",
            "scope": "covers the reports. NOT covered: nothing else."}


def test_private_vocabulary_with_a_user_level_trainer_says_the_vocabulary_part_grows():
    """A user (FedLDA) holds L documents: group privacy enlarges the per-document vocabulary selection, not the
    user-level topic model (the note read "for a document of L users the topic model's part grows")."""
    event = ApproxDPEvent(1.0, 1e-6, relation=SET_UNION_RELATION, unit="document")
    rep = fdptm_report(event, _user_level_report())
    (note,) = [w for w in rep["warnings"] if "different privacy units" in w]
    assert "document of L users" not in note
    assert "user of L documents the vocabulary's part grows to L times epsilon_V" in note
    assert rep["guarantee"] == "partial"


def test_private_vocabulary_with_a_word_level_trainer_keeps_its_group_privacy_note():
    event = ApproxDPEvent(1.0, 1e-6, relation=SET_UNION_RELATION, unit="document")
    rep = fdptm_report(event, dict(_user_level_report(), unit="word"))
    (note,) = [w for w in rep["warnings"] if "different privacy units" in w]
    assert "for a document of L words the topic model's part grows to L times its epsilon" in note


def test_a_composed_cards_budget_says_it_is_the_topic_models_alone(small_with_vocabulary):
    """With a private vocabulary the headline (eps_V added) exceeds the trainer's budget the card copies: the card
    says whose budget it is, rather than showing a budget below the claim unexplained."""
    corpus, vocab = small_with_vocabulary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPSVI.from_budget(1.0, 1e-5, n_topics=3, sampling_rate=0.2, verbose=0).fit(corpus, vocabulary=vocab)
    plain = privacy_card(m.privacy_, "DPSVI", check=False)
    assert plain["budget"] == {"epsilon": 1.0, "delta": 1e-5}
    event = ApproxDPEvent(0.5, 1e-6, relation=SET_UNION_RELATION, unit="document")
    card = privacy_card(fdptm_report(event, m.privacy_, m.ledger_), "DPSVI", check=False)
    assert card["epsilon"] > card["budget"]["epsilon"] == 1.0
    assert "topic model alone" in card["budget"]["covers"]


def test_olp_scope_says_a_saved_folder_holds_the_prior_documents_presence_rows():
    import numpy as np

    from dptopic.contributor.randomizer import Randomizer
    from dptopic.models import OLPLDA

    corpus = lda_corpus(n_docs=120, n_topics=3, vocab_size=40, doc_length=20, seed=0).corpus
    prior, stream = corpus.subset(np.arange(60)), corpus.subset(np.arange(60, 120))
    rs = Randomizer(stream.vocabulary, epsilon_word=3.0, seed=1, simulation=True).randomize(stream)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with_prior = OLPLDA(prior, n_topics=3, n_iter=2, prior_iter=3, verbose=0).partial_fit(rs)
        without = OLPLDA(prior_corpus="none", n_topics=3, n_iter=2, verbose=0).partial_fit(rs)
    assert "prior documents' word-presence rows" in with_prior.privacy_["scope"]
    assert "word-presence rows" not in without.privacy_["scope"]


def test_cli_table_names_the_fresh_final_release_in_the_paper_cross_check(small_with_vocabulary):
    from rich.console import Console

    from dptopic.reporting.terminal import print_privacy

    corpus, vocab = small_with_vocabulary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh = HDPLDA(n_topics=2, n_iter=3, epsilon_laplace=1.0, final_release="fresh", verbose=0).fit(
            corpus, vocabulary=vocab)
        last = HDPLDA(n_topics=2, n_iter=3, epsilon_laplace=1.0, verbose=0).fit(corpus, vocabulary=vocab)
    texts = []
    for m in (fresh, last):
        con = Console(width=200, record=True)
        print_privacy(m.privacy_, con)
        texts.append(" ".join(con.export_text().split()))
    assert "+ eps_L, the final release" in texts[0]
    assert "+ eps_L, the final release" not in texts[1] and "T(eps_L+eps_I)" in texts[1]


def test_fed_with_a_private_vocabulary_reports_over_every_word_and_refuses_a_frequency_cut(tmp_path, capsys):
    """A DP set union vocabulary is alphabetical and carries no frequency order the guarantee covers: the CLI's
    FedLDA ranges its reports over all of it by default, and refuses --report-words auto or N in one line."""
    import json

    from dptopic.cli.main import main

    texts = tmp_path / "t.txt"
    words = ["apple", "berry", "cherry", "delta", "eagle", "falcon", "grape", "hazel", "iris", "juniper", "kiwi",
             "lemon"]
    texts.write_text("\n".join(" ".join(words[(i + j) % 12] for j in range(8)) for i in range(400)) + "\n")
    base = ["train", "--algorithm", "fed", "--corpus", str(texts), "--format", "text", "--private-vocabulary",
            "2,1e-4", "--epsilon-per-entry", "5", "--topics", "2", "--rounds", "1", "--clients", "20", "--pad-length", "8",
            "--quiet"]
    assert main([*base, "--report-words", "auto", "--out", str(tmp_path / "a")]) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "--report-words auto" in err and "--report-words all" in err and "Traceback" not in err
    assert main([*base, "--out", str(tmp_path / "m")]) == 0
    params = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]["parameters"]
    assert params["report_words_rule"] == "all" and params["report_words"] == 12


# ---------------------------------------------------------------------------------------------------------------------
# The export carries the whole card; FedLDA's note agrees with a
# partial guarantee; the reference corpus's size is labelled outside the guarantee; the ROC legend names curves that
# coincide; topic bars show enough digits to tell near-uniform weights apart.

@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=80, vocab_size=40, n_topics=3, doc_length=30, seed=2).corpus


def test_the_export_carries_the_whole_privacy_card(corpus):
    from dptopic.reporting.export import export_privacy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.DocDPCooccurrence(n_topics=3, epsilon=2.0, delta=1e-5).fit(corpus)
    head, sentence = export_privacy(m)
    for key in ("guarantee", "epsilon", "delta", "privacy_unit", "neighbouring_relation", "accounting_method",
                "theorem", "figures", "not_covered"):
        assert head.get(key) not in (None, "", [], {}), key
    assert list(head)[:4] == ["guarantee", "epsilon", "delta", "privacy_unit"]


def test_fedlda_note_says_partial_when_the_vocabulary_came_from_the_data(corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.FedLDA(n_topics=3, rounds=1, pad_length=10, verbose=0).fit(corpus)
    assert m.privacy_["guarantee"] == "partial" and m.privacy_["vocabulary_source"] == "data"
    assert "full guarantee for what a user sends" not in m.privacy_["note"]
    assert "the model as a whole is PARTIAL" in m.privacy_["note"]


def test_the_reference_note_labels_the_corpus_size():
    from dptopic.reporting.page import reference_note

    assert "the reference corpus's exact size" in reference_note("the reference documents", "--reference-public")


def test_coinciding_roc_curves_share_one_legend_entry(tmp_path, monkeypatch):
    import dptopic._io as io
    from dptopic.attacks.metrics import plot_roc

    seen = {}
    real = io.save_fig
    monkeypatch.setattr(io, "save_fig", lambda fig, path, **kw: (seen.setdefault("labels", [
        t.get_text() for t in fig.axes[0].get_legend().get_texts()]), real(fig, path, **kw))[1])
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200).astype(bool)
    s = rng.normal(size=200) + y
    plot_roc({"a": (s, y), "a_fixed": (s.copy(), y), "b": (-s, y)}, tmp_path / "roc.png")
    labels = seen["labels"]
    assert any(t.startswith("a = a_fixed (AUC") for t in labels) and any(t.startswith("b (AUC") for t in labels)
    assert len(labels) == 3          # two curves and chance


def test_topic_bars_show_three_significant_digits():
    from dptopic.reporting.html import _topic_svg

    svg = _topic_svg(["tax", "war"], [0.00213, 0.00187])
    assert ">0.00213<" in svg and ">0.00187<" in svg


def test_a_secure_sum_in_cohorts_says_how_it_was_split_and_what_a_cohort_server_learned():
    from dptopic.protocol.secure_sum.cohorts import CohortPlan

    plan = CohortPlan(1.0, 1e-5, 10_000, 1000, 1000, 2000)
    card = privacy_card({"round": {"cohorts": plan.describe()}}, check=False)
    text = card["cohorts"]
    assert text.startswith("5 cohorts of 2000-2000") and f"{plan.round_plan.honest} honest shares" in text
    assert "cohort's server learned" in text and "modulo 2^32" in text and f"{plan.cohort_dropouts[0]} dropouts" in text
    assert "cohorts" not in privacy_card({"round": {"round_id": "r"}}, check=False)
