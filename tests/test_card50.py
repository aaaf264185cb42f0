"""Privacy review 50: the privacy card's figures and notes claim no more than the run's releases prove."""
from __future__ import annotations

import warnings

import pytest

from dptopic.accounting.events import ApproxDPEvent
from dptopic.accounting.set_union import DOCUMENT_RELATION, fdptm_report
from dptopic.corpus import lda_corpus
from dptopic.models import DPSVI, HDPLDA
from dptopic.accounting.card import privacy_card


@pytest.fixture(scope="module")
def small():
    corpus = lda_corpus(n_docs=120, vocab_size=40, n_topics=3, doc_length=20, seed=3).corpus
    return corpus, corpus.vocabulary


def test_hdp_paper_figure_counts_the_fresh_final_release(small):
    """final_release='fresh' adds one eps_L release: the card's pure "paper's own accounting" row (delta 0) must not
    state less than the run spent (it read T(eps_L + eps_I) = 55 beside basic composition's 56)."""
    corpus, vocab = small
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = HDPLDA(n_topics=3, n_iter=3, epsilon_laplace=1.0, epsilon_inherent=10.0, final_release="fresh",
                   verbose=0).fit(corpus, vocabulary=vocab)
    rep = m.privacy_
    assert rep["epsilon_basic"] == pytest.approx(3 * (1.0 + 10.0) + 1.0)
    assert rep["epsilon_paper"] == pytest.approx(rep["epsilon_basic"])
    row = privacy_card(rep, "HDPLDA", check=False)["figures"]["epsilon_paper"]
    assert row["delta"] == 0.0 and row["epsilon"] >= rep["epsilon_basic"]


def test_hdp_paper_figure_without_a_fresh_release_is_unchanged(small):
    corpus, vocab = small
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = HDPLDA(n_topics=3, n_iter=3, epsilon_laplace=1.0, epsilon_inherent=10.0, verbose=0).fit(
            corpus, vocabulary=vocab)
    assert m.privacy_["epsilon_paper"] == pytest.approx(33.0) == m.privacy_["epsilon_basic"]


def test_svi_figures_note_neither_says_none_nor_names_a_figure_the_composition_does_not_claim(small):
    """The card prints the SVI note under its figure table: no Python "None", and no "the guarantee claimed is
    epsilon_pld" when a private vocabulary's composition claims epsilon_pld_tight."""
    corpus, vocab = small
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPSVI(n_topics=3, noise_multiplier=2.0, sampling_rate=0.2, n_epochs=1, verbose=0).fit(
            corpus, vocabulary=vocab)
    note = m.privacy_["paper_figures_note"]
    assert "None" not in note
    assert "claimed is epsilon_pld" not in note and "epsilon_method" in note
    vocab_event = ApproxDPEvent(0.5, 1e-6, relation=DOCUMENT_RELATION, unit="document")
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
    event = ApproxDPEvent(1.0, 1e-6, relation=DOCUMENT_RELATION, unit="document")
    rep = fdptm_report(event, _user_level_report())
    (note,) = [w for w in rep["warnings"] if "different privacy units" in w]
    assert "document of L users" not in note
    assert "user of L documents the vocabulary's part grows to L times epsilon_V" in note
    assert rep["guarantee"] == "partial"


def test_private_vocabulary_with_a_word_level_trainer_keeps_its_group_privacy_note():
    event = ApproxDPEvent(1.0, 1e-6, relation=DOCUMENT_RELATION, unit="document")
    rep = fdptm_report(event, dict(_user_level_report(), unit="word"))
    (note,) = [w for w in rep["warnings"] if "different privacy units" in w]
    assert "for a document of L words the topic model's part grows to L times its epsilon" in note


def test_a_composed_cards_budget_says_it_is_the_topic_models_alone(small):
    """With a private vocabulary the headline (eps_V added) exceeds the trainer's budget the card copies: the card
    says whose budget it is, rather than showing a budget below the claim unexplained."""
    corpus, vocab = small
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPSVI.from_budget(1.0, 1e-5, n_topics=3, sampling_rate=0.2, verbose=0).fit(corpus, vocabulary=vocab)
    plain = privacy_card(m.privacy_, "DPSVI", check=False)
    assert plain["budget"] == {"epsilon": 1.0, "delta": 1e-5}
    event = ApproxDPEvent(0.5, 1e-6, relation=DOCUMENT_RELATION, unit="document")
    card = privacy_card(fdptm_report(event, m.privacy_, m.ledger_), "DPSVI", check=False)
    assert card["epsilon"] > card["budget"]["epsilon"] == 1.0
    assert "topic model alone" in card["budget"]["covers"]


def test_olp_scope_says_a_saved_folder_holds_the_prior_documents_presence_rows():
    import numpy as np

    from dptopic.local import Randomizer
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


def test_cli_table_names_the_fresh_final_release_in_the_paper_cross_check(small):
    from rich.console import Console

    from dptopic.cli._common import print_privacy

    corpus, vocab = small
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
