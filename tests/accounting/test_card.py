"""``dptopic.accounting.card``."""
import warnings
import pytest
from dptopic.corpus.synthetic import lda_corpus
from dptopic.models import FedLDA
from dptopic.reporting import privacy_card
import dptopic



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


def _letters(i: int) -> str:
    return "word" + "".join("abcdefghij"[int(d)] for d in str(i))


def _texts(n_docs, vocab_size, seed):
    c, _, _, _ = lda_corpus(n_docs=n_docs, vocab_size=vocab_size, n_topics=3, doc_length=12, seed=seed)
    return [" ".join(_letters(w) for w in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


def _fit(exclusion="none", **kw):
    from dptopic.corpus import Corpus

    c = Corpus.from_texts(_texts(40, 30, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FedLDA(n_topics=3, rounds=2, pad_length=kw.pop("pad_length_", 8), n_clients=10, exclusion=exclusion,
                      verbose=0, seed=0, **kw).fit(c)


@pytest.fixture(scope="module")
def none_model():
    return _fit("none", epsilon_per_entry=5.0, report_words=6)


def test_floor_card_with_a_public_vocabulary_still_names_the_labels():
    rep = {"private": True, "epsilon": 10.0, "delta": 1e-5, "epsilon_method": "PLD", "guarantee": "partial",
           "unit": "user", "epsilon_per_entry": 1.0, "vocabulary_source": "supplied",
           "parameters": {"exclusion": "floor", "replacement": "topic", "entries_per_round": 5, "rounds": 2},
           "events": []}
    card = privacy_card(rep, "FedLDA", check=False)
    assert card["guarantee"] == "partial" and "topic label" in card["guarantee_note"]
    assert "vocabulary" not in card["guarantee_note"] and "Zipf" not in card["guarantee_note"]


def test_none_rule_card_leaves_out_the_rrp_parameters(none_model):
    params = none_model.privacy_["parameters"]
    assert not {"eta", "delta0", "failure_rate_delta", "gamma", "variant", "replacement"} & set(params)
    assert params["report_words"] == 6 and params["vocab_size"] == len(none_model.vocabulary_)


def _quiet_fit(model, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, **kw)


TRAINERS = {"DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, verbose=0),
            "DocDPEM": lambda: dptopic.DocDPEM(n_topics=2, epsilon=1.0, n_iter=2, verbose=0),
            "DPSVI": lambda: dptopic.DPSVI.from_budget(1.0, 1e-5, n_topics=2, verbose=0),
            "HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_laplace=3.0, verbose=0)}


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=200, vocab_size=40, n_topics=2, doc_length=20, seed=1).corpus


@pytest.mark.parametrize("name", ["DocDPCooccurrence", "DocDPEM", "DPSVI"])
def test_document_level_reports_say_where_their_coins_come_from_and_name_group_privacy(name, small):
    from dptopic.reporting import privacy_card

    m = _quiet_fit(TRAINERS[name](), small)
    rep = m.privacy_
    assert rep["randomness"].startswith("standard mode") and "floating-point" in rep["randomness"]
    assert "k times epsilon" in rep["scope"] and rep["scope"].count("group privacy") == 1
    card = privacy_card(rep, type(m).__name__)
    assert card["implementation"]["randomness"] == rep["randomness"]
