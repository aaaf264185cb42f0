"""``dptopic.training.fdptm``."""
import math
import warnings

import pytest

import dptopic
from dptopic.corpus import as_corpus, lda_corpus
from dptopic.corpus.corpus import data_cut_of
from dptopic.training.fdptm import restrict_to_private_vocabulary
from helpers import VOCABULARY_TRAINERS, quiet_fit, small_lda_texts


def test_fdptm_with_dpsvi_trains_and_reports():
    from dptopic.training.fdptm import fit_fdptm

    X = lda_corpus(n_docs=200, vocab_size=50, n_topics=3, doc_length=30, seed=1).corpus
    m, _ = fit_fdptm(dptopic.DPSVI(n_topics=3, noise_multiplier=1.0, sampling_rate=0.2, n_epochs=1, verbose=0),
                     X, 2.0, 1e-6)
    p = m.privacy_
    assert p["private"] and math.isfinite(p["epsilon_pld_tight"]) and p["epsilon"] <= p["epsilon_pld"] + 1e-9


def test_a_private_vocabulary_beside_a_trainer_with_no_guarantee_composes_to_none(tmp_path):
    # (review, 2026-11-24) FedLDA's tail rule gives no (epsilon, delta); composing a private vocabulary with it crashed
    # in dp_accounting (IndexError) at fit, and the recomputation at load did too
    import warnings

    import dptopic
    from dptopic.accounting.verify import verify_report
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.training.fdptm import fit_fdptm

    corpus = lda_corpus(n_docs=300, vocab_size=60, n_topics=3, doc_length=30, seed=0).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, _ = fit_fdptm(dptopic.FedLDA(n_topics=3, rounds=2, n_clients=10, exclusion="tail", verbose=0), corpus,
                         1.0, 1e-6)
    p = m.privacy_
    assert p["epsilon"] is None and p["guarantee"] == "none" and p["epsilon_method"].startswith("none")
    assert verify_report(p).status == "verified"
    m.save(tmp_path / "m")
    assert dptopic.load(tmp_path / "m").privacy_["guarantee"] == "none"


def _neighbours():
    """D and D + u where a top-1,000 cut built from the documents holds 'target' under D and drops it under D + u
    (u's word outranks it): the candidate list itself would differ between the neighbours."""
    fill = [[f"filler{i:03d}"] * 201 for i in range(998)]
    D = fill + [["anchor", "anchor"] for _ in range(200)] + [["target"] for _ in range(200)]
    return D, D + [["intruder"] * 201]


def test_the_private_vocabulary_of_texts_or_words_starts_from_every_word():
    D, Dp = _neighbours()
    # the default cut of a vocabulary built from words is what the review showed would break the guarantee
    assert "target" in as_corpus(D).vocabulary.words and "target" not in as_corpus(Dp).vocabulary.words
    assert data_cut_of(as_corpus(Dp)) == "built with max_vocab=1000"
    for data in (D, Dp):
        full = as_corpus(data, uncut=True)
        assert "target" in full.vocabulary.words and data_cut_of(full) is None
    # 'target' (200 documents) is released from both neighbours, as set union's stability promises at this size
    for data in (D, Dp):
        restricted, event = restrict_to_private_vocabulary(data, 1.0, 1e-5, seed=0)
        assert "target" in restricted.vocabulary.words and event.epsilon == 1.0


@pytest.fixture(scope="module")
def texts():
    return small_lda_texts()


@pytest.mark.parametrize("name", sorted(VOCABULARY_TRAINERS))
def test_a_private_vocabularys_report_does_not_say_the_vocabulary_is_uncovered(texts, name):
    from dptopic.training.fdptm import fit_fdptm

    plain = quiet_fit(VOCABULARY_TRAINERS[name](), [t.split() for t in texts]).privacy_["scope"]
    assert "built from the training documents" in plain or "chosen from the training corpus, not protected" in plain
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, _ = fit_fdptm(VOCABULARY_TRAINERS[name](), dptopic.Corpus.from_tokens([t.split() for t in texts], max_vocab=None), 8.0, 1e-5, delta0=1)
    scope = m.privacy_["scope"]
    assert m.privacy_["vocabulary_source"] == "private" and "DP set union" in scope
    assert "built from the training documents" not in scope and "not protected" not in scope


def test_a_private_vocabulary_and_its_topic_model_each_spend_their_share_and_the_whole_at_most_the_sum():
    """Each component is calibrated against the accountant that states it: the topic model's own figure is its
    epsilon to within 1% below, the vocabulary's is epsilon_V exactly, and the composition claims at most their sum
    (the tight composition of every event may claim less: 1.468 for 1 + 0.5)."""
    import warnings

    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.training.fdptm import fit_fdptm

    corpus = lda_corpus(n_docs=400, vocab_size=60, n_topics=3, doc_length=30, seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, _ = fit_fdptm(dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0, verbose=0), corpus, 0.5, 1e-6)
    rep = m.privacy_
    assert 0.99 <= rep["topic_model"]["epsilon_pld"] <= 1.0 and rep["vocabulary_selection"]["epsilon"] == 0.5
    assert 0.97 * 1.5 <= rep["epsilon"] <= 1.5


def test_public_vectors_are_checked_before_the_vocabulary_is_drawn(tmp_path, monkeypatch):
    """fit_fdptm reads and checks the estimator's public vectors before DP set union draws: a malformed file, or
    vectors built in Python and spoiled after, spend nothing."""
    import numpy as np

    from dptopic.corpus.vectors import PublicVectors
    from dptopic.errors import DPTopicError
    from dptopic.training import fdptm

    X = lda_corpus(n_docs=60, vocab_size=30, n_topics=2, doc_length=20, seed=1).corpus
    monkeypatch.setattr(fdptm, "dp_set_union", lambda *a, **k: pytest.fail("the words were drawn"))
    bad = tmp_path / "bad.txt"
    bad.write_text("w0 0.1 0.2\nw1 0.3\n")
    spoiled = PublicVectors("mine", ["w0", "w1"], np.ones((2, 3)), "0" * 64)
    spoiled.vectors[1, 0] = np.inf
    for spec, why in ((str(bad), "line 2 has 1 value, not 2"), (spoiled, "row 2 .* holds NaN or infinite"),
                      (str(tmp_path), "is a folder, not a file")):
        with pytest.raises(DPTopicError, match=why):
            fdptm.fit_fdptm(dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, public_vectors=spec, ledger=False), X,
                            8.0, 1e-6)
