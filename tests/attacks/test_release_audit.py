"""The white-box one-run audit (dptopic.attacks.release_audit): canaries scored on DocDPCooccurrence's released
co-occurrence matrix. Its bound comes close to the claim in one run, refutes a per-document claim for persons, and
raises no false alarm against a per-person claim."""
import numpy as np
import pytest

from dptopic.attacks.release_audit import (
    canary_pairs,
    expected_accuracy,
    ideal_bound,
    planned_share,
    release_audit,
    with_units,
)
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.models import LDA, DocDPCooccurrence


@pytest.fixture(scope="module")
def sotu():
    from dptopic.datasets import load_sotu

    return load_sotu()


def test_a_canary_document_adds_one_over_root_two_to_its_own_two_cells_only(sotu):
    """The score reads exactly the cells one canary moves: its pair matrix has two entries 1, Frobenius norm sqrt 2."""
    from dptopic.kernels.pair_moments import normalised_cooccurrence_bow

    pairs = canary_pairs(sotu, 50, np.random.default_rng(0))
    assert len({tuple(sorted(p)) for p in pairs}) == 50 and (pairs[:, 0] != pairs[:, 1]).all()
    one = with_units(sotu.subset([]), pairs[:1], np.array([True]), 1, False)
    kept = np.arange(sotu.vocab_size)
    X = one.to_bow()
    m = normalised_cooccurrence_bow((X.indptr, X.indices, X.data), kept, sotu.vocab_size)
    a, b = pairs[0]
    assert m[a, b] == pytest.approx(2 ** -0.5) and m[b, a] == pytest.approx(2 ** -0.5)
    assert np.count_nonzero(m) == 2


def test_person_canaries_carry_ids_no_document_has():
    c = Corpus(np.array([0, 2, 4]), np.array([0, 1, 1, 2], np.int32), __import__("dptopic").corpus.Vocabulary(
        ["a", "b", "c", "d"]), user_ids=["canary 0", "x"])
    out = with_units(c, np.array([[0, 1], [2, 3]]), np.array([True, True]), 3, True)
    assert out.n_docs == 8 and len(set(out.user_ids[2:])) == 2 and "canary 0" not in out.user_ids[2:]


def test_the_planned_guesses_depend_on_the_noise_and_the_count_only():
    assert planned_share(10_000, 1 / 1.14) == 0.01
    assert 0.5 < expected_accuracy(1.0, 0.01) <= 1
    # the bound an ideal audit expects grows with the canaries
    assert ideal_bound(1_000, 1 / 1.14) < ideal_bound(10_000, 1 / 1.14)


def test_the_release_audit_comes_near_the_claim_in_one_run(sotu):
    r = release_audit(sotu, DocDPCooccurrence(n_topics=20, epsilon=8), n_canaries=1_000, seed=1)
    assert r["words_held"] == 1_000 and r["score"] == "release"
    assert r["epsilon_lower_bound"] > 2.3            # an ideal audit of this noise expects 2.7 from 1,000 canaries
    assert r["verdict"] == "consistent with the claim"
    assert r["claimed_privacy"]["epsilon"] == pytest.approx(8, abs=0.01)


def test_persons_of_twenty_documents_refute_a_per_document_claim(sotu):
    r = release_audit(sotu, DocDPCooccurrence(n_topics=20, epsilon=1), n_canaries=500, canary_unit="person",
                      canary_documents=20, seed=2)
    assert r["epsilon_lower_bound"] > 1 and r["verdict"] == "exceeds the claim"
    assert "does not cover the person" in r["verdict_note"]


def _people(corpus):
    return Corpus(corpus.doc_ptr, corpus.word_ids, corpus.vocabulary,
                  user_ids=[f"p{d // 5}" for d in range(corpus.n_docs)])


def test_the_same_persons_raise_no_alarm_against_a_per_person_claim(sotu):
    r = release_audit(_people(sotu), DocDPCooccurrence(n_topics=20, epsilon=1, unit="user"), n_canaries=500,
                      canary_unit="person", canary_documents=20, seed=3)
    assert r["epsilon_lower_bound"] <= 1 and r["verdict"] == "consistent with the claim"
    assert r["claimed_privacy"]["unit"] == "user"


@pytest.mark.slow
def test_no_false_alarm_against_a_per_person_claim_in_twenty_runs(sotu):
    people = _people(sotu)
    bounds = [release_audit(people, DocDPCooccurrence(n_topics=20, epsilon=1, unit="user"), n_canaries=500,
                            canary_unit="person", canary_documents=20, seed=100 + s)["epsilon_lower_bound"]
              for s in range(20)]
    assert max(bounds) <= 1, bounds


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, least", [(4, 1.8), (8, 3.2)])
def test_ten_thousand_canaries_reach_the_targets_in_under_three_minutes(sotu, epsilon, least):
    import time

    t = time.perf_counter()
    r = release_audit(sotu, DocDPCooccurrence(n_topics=20, epsilon=epsilon), n_canaries=10_000, seed=1)
    assert time.perf_counter() - t < 180
    assert r["epsilon_lower_bound"] >= least, r


def test_docdpem_is_scored_on_every_iteration_of_its_release(sotu):
    from dptopic.models import DocDPEM

    r = release_audit(sotu, DocDPEM(n_topics=20, epsilon=16), n_canaries=500, seed=1)
    assert r["releases_scored"] == 3 and r["n_canaries"] == 500
    assert 1 < r["epsilon_lower_bound"] <= r["ideal_bound"] and r["verdict"] == "consistent with the claim"
    with pytest.raises(DPTopicError, match="at most 500"):
        release_audit(sotu, DocDPEM(n_topics=2), n_canaries=501)


def test_refusals_are_one_line(sotu):
    with pytest.raises(DPTopicError, match="docdp-cooc"):
        release_audit(sotu, LDA(n_topics=2), n_canaries=10)
    with pytest.raises(DPTopicError, match="user_field=FIELD") as e:       # a parameter, the CLI's flag
        release_audit(sotu, DocDPCooccurrence(n_topics=2, unit="user"), n_canaries=10)
    assert "give --user-field FIELD." in e.value.message({"user_field": "--user-field"})
    with pytest.raises(DPTopicError, match="canary_unit='person'"):
        release_audit(sotu, DocDPCooccurrence(n_topics=2), n_canaries=10, canary_documents=3)
    with pytest.raises(DPTopicError, match="fewer than"):
        release_audit(sotu.restrict(__import__("dptopic").corpus.Vocabulary(sotu.vocabulary.words[:5])),
                      DocDPCooccurrence(n_topics=2), n_canaries=100)


def _dpsvi(**kw):
    from dptopic.models import DPSVI

    return DPSVI.from_budget(kw.pop("epsilon", 4), n_topics=3, sampling_rate=kw.pop("sampling_rate", 0.5), n_epochs=1,
                             verbose=0, **kw)


def _hdp(**kw):
    from dptopic.models import HDPLDA

    return HDPLDA(**{"n_topics": 3, "epsilon_laplace": 1, "epsilon_inherent": 2, "n_iter": 4, "verbose": 0, **kw})


@pytest.fixture(scope="module")
def small(sotu):
    return sotu.subset(range(2_000))


def test_a_dpsvi_canary_adds_its_token_count_to_its_own_column_only(small):
    """The score's premise: a canary document's expected sufficient statistics sum to its length over its own word's
    column, and a known document adds nothing there."""
    from dptopic.attacks.release_audit import with_fresh_words
    from dptopic.mechanisms.observer import observing

    V = small.vocab_size
    corpus = with_fresh_words(small, [np.full(7, V)], 2)
    seen = []
    with observing(lambda r: seen.append(r.values)):
        _dpsvi(sampling_rate=1.0, seed=0).fit(corpus)
    assert seen and all(v[:, V] .sum() == pytest.approx(7) and not v[:, V + 1].any() for v in seen)


@pytest.mark.parametrize("make, relation", [(_dpsvi, "add_remove"), (_hdp, "replace")])
def test_the_release_audit_runs_for_dpsvi_and_hdp_lda(small, make, relation):
    r = release_audit(small, make(), n_canaries=200, seed=1)
    assert r["relation"] == relation and r["n_canaries"] == 200 and r["releases_scored"] >= 2
    assert 0 <= r["epsilon_lower_bound"] <= r["claimed_privacy"]["epsilon"]
    assert r["verdict"] == "consistent with the claim"
    with pytest.raises(DPTopicError, match=r"^canary_unit=.person. does not apply to .*: drop canary_unit\."):
        release_audit(small, make(), n_canaries=10, canary_unit="person", canary_documents=2)


def _under_noised(monkeypatch, factor):
    """Every DPSVI and HDP-LDA release carries ``factor`` times the noise its ledger (and claim) accounts for."""
    import dptopic.models.dpsvi as svi
    import dptopic.models.hdp_lda as private
    from dptopic.mechanisms import observer

    def shrink(mechanism, norm):
        def released(values, *a, **k):
            with observer.observing(None):
                noisy, event = mechanism(np.array(values, copy=True), *a, **k)
            small = values + factor * (noisy - values)
            return observer.observe(values, small, 1.0, norm, factor, "under-noised", event), event
        return released

    monkeypatch.setattr(svi, "gaussian_mechanism", shrink(svi.gaussian_mechanism, "l2"))
    monkeypatch.setattr(private, "laplace_mechanism", shrink(private.laplace_mechanism, "l1"))


@pytest.mark.parametrize("make", [lambda: _dpsvi(epsilon=1), lambda: _hdp(epsilon_laplace=0.2, n_iter=3, beta=10,
                                                                             epsilon_inherent=0.5)])
def test_an_under_noised_release_is_refuted(small, monkeypatch, make):
    est = make()
    honest = release_audit(small, est, n_canaries=200, seed=2)
    assert honest["verdict"] == "consistent with the claim"
    _under_noised(monkeypatch, 0.01)
    r = release_audit(small, est, n_canaries=200, seed=2)
    assert honest["epsilon_lower_bound"] < r["epsilon_lower_bound"]
    assert r["claimed_privacy"]["epsilon"] == pytest.approx(honest["claimed_privacy"]["epsilon"])
    assert r["epsilon_lower_bound"] > r["claimed_privacy"]["epsilon"] and r["verdict"] == "exceeds the claim"


def test_the_audit_plans_against_the_trainers_release_plan():
    """How many releases the audited fit makes, and the noise its guesses are planned against, come from the trainer's
    release plan (an under-noised release is still scored as drawn: test_an_under_noised_release_is_refuted)."""
    from dptopic.attacks.release_audit import _planned_releases
    from dptopic.corpus import lda_corpus
    from dptopic.models import DocDPCooccurrence, DocDPEM

    small = lda_corpus(n_docs=10, vocab_size=30, n_topics=2, doc_length=5, seed=0).corpus
    wide = lda_corpus(n_docs=10, vocab_size=260, n_topics=2, doc_length=5, seed=0).corpus
    assert _planned_releases(DocDPCooccurrence(n_topics=2), small) == 1       # every word kept: no ranking
    assert _planned_releases(DocDPCooccurrence(n_topics=2), wide) == 2
    assert _planned_releases(DocDPEM(n_topics=2, n_iter=3), wide) == 3


def test_the_audited_runs_are_charged_to_the_audits_own_dataset(planted, tmp_path):
    """Issue 75, item 20: release_audit charged the user's own dataset (1 release became 3); its runs are shadows."""
    from dptopic.dataset_ledger.ledger import DatasetLedger

    L = tmp_path / "l.sqlite"
    est = DocDPCooccurrence(n_topics=5, epsilon=1, ledger=str(L), dataset="posts")
    est.fit(planted.corpus)
    release_audit(planted.corpus, est, n_canaries=200, seed=1)
    led = DatasetLedger(L)
    assert len(led.releases("posts")) == 1
    assert [d for d in led.datasets() if d != "posts"] == ["audit-shadow:posts"]
    assert led.total("posts")["n_releases"] == 1


def test_too_many_canaries_are_refused_naming_n_canaries_which_audit_writes_as_its_flag():
    from dptopic.corpus import Vocabulary
    from dptopic.errors import ParameterError

    c = Corpus(np.array([0, 2, 4]), np.array([0, 1, 1, 2], np.int32), Vocabulary(["a", "b", "c", "d"]))
    with pytest.raises(ParameterError, match=r"^the vocabulary of 4 words holds fewer than 50 distinct word pairs:"
                                             r" lower n_canaries") as e:
        canary_pairs(c, 50, np.random.default_rng(0))
    assert e.value.message({"n_canaries": "--canaries"}).endswith("lower --canaries or audit a corpus with more words.")
