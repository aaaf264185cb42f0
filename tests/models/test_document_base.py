"""User-level DP of the document-level trainers (unit="user"): the accounting, the per-document path kept, and the
refusals before anything is spent."""
import numpy as np
import pytest
import scipy.sparse as sp

import dptopic
from dptopic.accounting.card import privacy_card
from dptopic.accounting.gaussian import calibrate_gaussian_pair, calibrate_noise_multiplier
from dptopic.errors import DPTopicError
from dptopic.models import DocDPCooccurrence, DocDPEM
from dptopic.person_bound import USER_RELATION

TRAINERS = [(DocDPCooccurrence, {}), (DocDPEM, {"n_iter": 2, "inner": 5})]


def _people(corpus, n_people=60):
    return [f"p{i % n_people:03d}" for i in range(corpus.n_docs)]


@pytest.mark.parametrize("cls, kw", TRAINERS)
def test_one_document_a_person_gives_the_document_level_topics_exactly(planted, cls, kw):
    """Each person's sum of one document is that document's contribution (norm <= 1, not rescaled): with the same seed
    the releases, hence the topics, are the document level's (bit for bit for the co-occurrence release; up to
    rounding for EM, whose E-step kernel fuses each multiply-add into the running sum); only the unit changes."""
    c = planted.corpus
    doc = cls(n_topics=5, epsilon=1.0, seed=4, **kw).fit(c)
    user = cls(n_topics=5, epsilon=1.0, seed=4, unit="user", **kw).fit(c, user_ids=[f"d{i:04d}" for i in
                                                                                    range(c.n_docs)])
    if cls is DocDPCooccurrence:
        np.testing.assert_array_equal(user.components_, doc.components_)
    np.testing.assert_allclose(user.components_, doc.components_, rtol=1e-9, atol=0)
    assert user.privacy_["epsilon"] == doc.privacy_["epsilon"]
    assert doc.privacy_["unit"] == "document" and user.privacy_["unit"] == "user"


def test_user_level_accounting_matches_dp_accounting(planted):
    """The person is the unit and the sensitivity is 1: the two releases are the document level's, so the epsilon
    is the PLD of two Gaussian mechanisms of multipliers calibrate_gaussian_pair(1, 1e-5, 3), recomputed here by
    dp-accounting."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    m = DocDPCooccurrence(n_topics=10, epsilon=1.0, delta=1e-5, seed=0, unit="user", background_share=0.25).fit(
        planted.corpus, user_ids=_people(planted.corpus))
    s_rank, s = calibrate_gaussian_pair(1.0, 1e-5, 3.0)
    assert m.noise_std_ == pytest.approx(s) and m.ranking_noise_std_ == pytest.approx(s_rank)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(s_rank), dp_event.GaussianDpEvent(s)]))
    assert m.privacy_["epsilon"] == pytest.approx(acc.get_epsilon(1e-5), abs=2e-3)
    assert m.privacy_["epsilon"] <= 1.0
    rep = m.privacy_
    assert rep["unit"] == "user" and rep["neighbouring_relation"] == USER_RELATION
    assert "one person's documents" in rep["theorem"]
    card = privacy_card(rep, "DocDPCooccurrence", check=True)
    assert card["privacy_unit"] == "user" and card["ledger_check"]["status"] == "verified"
    assert "scaled to norm at most 1" in card["user_bound"]
    assert "two or more user ids" in card["not_covered"]
    assert "group privacy" not in card["covered"] and "One document is the unit" not in rep["scope"]


def test_em_accounting_is_the_document_levels_with_the_person_as_unit(planted):
    m = DocDPEM(n_topics=5, epsilon=2.0, n_iter=3, inner=5, seed=0, unit="user", documents_per_user=4).fit(
        planted.corpus, user_ids=_people(planted.corpus))
    assert m.noise_std_ == pytest.approx(calibrate_noise_multiplier(2.0, 1e-5, 1.0, 3))
    card = privacy_card(m.privacy_, "DocDPEM", check=True)
    assert card["ledger_check"]["status"] == "verified" and card["privacy_unit"] == "user"
    assert card["user_bound"].startswith("at most 4 documents a person")


def test_a_corpus_read_with_user_ids_needs_none_given(planted, tmp_path):
    c = planted.corpus
    with_ids = dptopic.Corpus(c.doc_ptr, c.word_ids, c.vocabulary, user_ids=_people(c))
    a = DocDPCooccurrence(n_topics=5, seed=2, unit="user").fit(with_ids)
    b = DocDPCooccurrence(n_topics=5, seed=2, unit="user").fit(c, user_ids=_people(c))
    np.testing.assert_array_equal(a.components_, b.components_)
    # a count matrix takes user_ids= too; its empty rows are dropped with their ids
    X = sp.vstack([c.to_bow(), sp.csr_matrix((1, c.vocab_size))]).tocsr()
    m = DocDPCooccurrence(n_topics=5, seed=2, unit="user").fit(X, user_ids=_people(c) + ["nobody"])
    # words summed in another order: rounding of 1e-16, carried by the recovery's refinement steps to about 1e-6
    np.testing.assert_allclose(m.components_, b.components_, rtol=1e-4)


def test_for_unit_user_is_the_document_trainer_per_person(planted):
    m = dptopic.for_unit("user", 1.0, n_topics=5)
    assert isinstance(m, DocDPCooccurrence) and m.unit == "user"
    with pytest.raises(DPTopicError, match="needs the person of each document"):
        m.fit(planted.corpus)


@pytest.mark.parametrize("cls, kw", TRAINERS)
@pytest.mark.parametrize("params, ids, message", [
    ({"unit": "user"}, None, "needs the person of each document: pass user_ids="),
    ({"unit": "user"}, "numbers", "the user id of document 0 is int '0', not a string"),
    ({"unit": "user"}, "short", "user_ids has 10 entries but there are 300 documents"),
    ({"unit": "user"}, "missing", "document 7 has no user id"),
    ({"unit": "user"}, "blank", "document 7 has a blank user id"),
    ({}, "ok", "user_ids= makes the guarantee per person: give"),
    ({"documents_per_user": 3}, None, "documents_per_user=3 bounds each person's documents"),
])
def test_bad_user_ids_are_refused_in_one_line_before_anything_is_spent(planted, cls, kw, params, ids, message):
    c = planted.corpus
    given = {None: None, "numbers": list(range(c.n_docs)), "short": ["a"] * 10, "ok": _people(c),
             "missing": [None if i == 7 else "a" for i in range(c.n_docs)],
             "blank": [" " if i == 7 else "a" for i in range(c.n_docs)]}[ids]
    m = cls(n_topics=5, seed=0, **kw, **params)
    with pytest.raises(DPTopicError, match=message) as e:
        m.fit(c, **({} if given is None else {"user_ids": given}))
    assert "\n" not in str(e.value) and "--" not in str(e.value)      # the library's names, no flag
    assert not hasattr(m, "ledger_")            # no release was made


def test_user_level_refuses_streamed_input(planted):
    c = planted.corpus
    with pytest.raises(DPTopicError, match="groups each person's documents in memory"):
        DocDPCooccurrence(n_topics=5, unit="user").fit([c.subset(range(100)), c.subset(range(100, 300))],
                                                       user_ids=_people(c))


def test_user_level_refuses_texts_whose_empty_ones_were_dropped():
    texts = ["apple banana cherry apple", "", "banana cherry grape melon", "grape melon apple"] * 5
    with pytest.raises(DPTopicError, match="hold no word and were dropped, so user_ids no longer match") as e:
        DocDPCooccurrence(n_topics=2, unit="user").fit(texts, user_ids=[str(i) for i in range(len(texts))])
    assert "5 of the texts (an exact count of the private data: outside the guarantee" in str(e.value)


def test_people_are_grouped_as_python_strings_never_merged_by_a_numpy_string_array():
    from dptopic.person_bound import person_codes

    codes = person_codes(["v", "v\u0000", "v", "w", "v\u0000\u0000"])
    assert codes.tolist()[0] == codes.tolist()[2] and len(set(codes.tolist())) == 4


@pytest.mark.parametrize("cls, kw", TRAINERS)
def test_user_ids_given_beside_a_corpus_s_own_different_ones_are_refused(planted, cls, kw):
    c = planted.corpus
    with_ids = dptopic.Corpus(c.doc_ptr, c.word_ids, c.vocabulary, user_ids=_people(c))
    m = cls(n_topics=5, seed=0, unit="user", **kw)
    with pytest.raises(DPTopicError, match=r"^user_ids= differs from the corpus's own user ids \(document 1:"
                                           r" 'p000' against 'p001'\): give one of them") as e:
        m.fit(with_ids, user_ids=["p000"] * c.n_docs)
    assert "\n" not in str(e.value) and not hasattr(m, "ledger_")


def test_the_person_field_is_recorded_on_the_model_its_report_and_card(tmp_path):
    import json

    rng = np.random.default_rng(0)
    words = ["apple", "pear", "plum", "fig", "kiwi", "lime", "nut", "oat"]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"text": " ".join(rng.choice(words, 8)), "author": f"a{i % 40}"}) + "\n"
                            for i in range(200)))
    corpus = dptopic.Corpus.from_jsonl(path, user_field="author")
    m = DocDPCooccurrence(n_topics=2, unit="user", seed=0).fit(corpus)
    assert m.user_field_ == "field 'author'" and m.privacy_["user_field"] == "field 'author'"
    assert privacy_card(m.privacy_, "DocDPCooccurrence")["user_field"] == "field 'author'"
    assert dptopic.load(m.save(tmp_path / "m")).user_field_ == "field 'author'"
    given = DocDPCooccurrence(n_topics=2, unit="user", seed=0).fit(corpus.to_bow(), user_ids=corpus.user_ids)
    assert given.privacy_["user_field"] == "user_ids given to fit (no field named)"


def test_the_small_corpus_warning_of_a_user_level_fit_counts_people():
    from dptopic.advice import too_small_message

    msg = too_small_message("user", 1.0, 50, 20, what="people")
    assert "50 people" in msg and "documents" not in msg


def test_a_user_level_model_suggests_no_private_vocabulary(planted):
    """Under the user unit a warning and the card suggested --private-vocabulary, which --unit user refuses (DP set
    union selects words per document)."""
    import warnings as _warnings

    from dptopic.accounting.card import privacy_card
    from dptopic.errors import DataVocabularyWarning

    c = planted.corpus
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        m = DocDPCooccurrence(n_topics=3, epsilon=2.0, unit="user", seed=0).fit(c, user_ids=_people(c))
    said = [str(w.message) for w in caught if issubclass(w.category, DataVocabularyWarning)]
    assert said and not any("private-vocabulary" in s for s in said)
    assert "private-vocabulary" not in " ".join(privacy_card(m.privacy_, "DocDPCooccurrence")["partial_reasons"])


@pytest.mark.parametrize("params, message", [
    ({"person_statistic": "profile"}, r"^person_statistic='profile' makes each person's contribution from all their"
                                      " documents: give DocDPCooccurrence\\(unit='user', ...\\)"),
    ({"person_statistic": "profile", "unit": "user", "documents_per_user": 3},
     r"^person_statistic='profile' reads every document of each person: leave documents_per_user out"),
    ({"person_statistic": "pooled", "unit": "user"}, "person_statistic"),
])
def test_the_person_profile_is_refused_in_one_line_outside_the_user_unit(planted, params, message):
    c = planted.corpus
    m = DocDPCooccurrence(n_topics=5, seed=0, **params)
    with pytest.raises(DPTopicError, match=message) as e:
        m.fit(c, **({"user_ids": _people(c)} if params.get("unit") == "user" else {}))
    assert "\n" not in str(e.value) and "--" not in str(e.value)
    assert not hasattr(m, "ledger_")


def test_the_person_profile_releases_each_persons_word_profile_at_the_same_noise(planted):
    """person_statistic='profile' changes the co-occurrence statistic only: the same plan, the same first release
    (hence the same words, with the same seed), and the card says how each person was bounded."""
    from dptopic.person_bound import USER_BOUND

    c = planted.corpus
    people = _people(c)
    summed = DocDPCooccurrence(n_topics=5, epsilon=1.0, seed=3, unit="user").fit(c, user_ids=people)
    profile = DocDPCooccurrence(n_topics=5, epsilon=1.0, seed=3, unit="user", person_statistic="profile").fit(
        c, user_ids=people)
    assert profile.noise_std_ == summed.noise_std_ and profile.privacy_["epsilon"] == summed.privacy_["epsilon"]
    np.testing.assert_array_equal(profile.kept_words_, summed.kept_words_)
    assert not np.allclose(profile.releases_["cooccurrence"], summed.releases_["cooccurrence"])
    assert profile.privacy_["user_bound"] == USER_BOUND["profile"]
    assert profile.privacy_["parameters"]["person_statistic"] == "profile"
    assert "u u^T" in privacy_card(profile.privacy_)["theorem"]


def test_the_person_profile_marks_no_topic_supported_for_people_without_topics(tmp_path):
    """Each person's u u^T puts u_i^2 on the release's diagonal, a full-rank part that people without topics have too:
    the support tests read the profile's release off its diagonal, so 800 people writing 1 to 3 short documents
    from one word distribution get no topic marked supported, as with the sum (before: 16 of 20 at epsilon 4), and
    the refit's suggestion reads the release as the fit did; topics the people do write about stay supported."""
    from dptopic.corpus import Corpus, lda_corpus

    rng = np.random.default_rng(0)
    V, P = 1000, 800
    f = 1.0 / np.arange(1, V + 1)
    person = np.repeat(np.arange(P), rng.integers(1, 4, size=P))
    ptr = np.r_[0, np.cumsum(rng.integers(1, 6, size=len(person)))]
    flat = Corpus(ptr, rng.choice(V, size=ptr[-1], p=f / f.sum()).astype(np.int32), [f"w{i}" for i in range(V)])
    users = [f"p{p}" for p in person]
    for statistic in ("sum", "profile"):
        m = DocDPCooccurrence(n_topics=20, epsilon=4.0, seed=1, unit="user", person_statistic=statistic,
                              public_vectors=None).fit(flat, user_ids=users)
        assert not m.supported_topics_.any(), statistic
    from dptopic.moments.refit import suggest_n_topics

    m.save(tmp_path / "m")
    suggestion = suggest_n_topics(dptopic.load(tmp_path / "m"), [2, 5, 20])
    assert not any(suggestion["supported"].values()) and suggestion["outliers"] <= 1
    planted = lda_corpus(n_docs=1500, vocab_size=400, n_topics=5, doc_length=40, alpha=0.1, beta=0.05, seed=3)
    topics = DocDPCooccurrence(n_topics=5, epsilon=20.0, seed=1, unit="user", person_statistic="profile",
                               public_vectors=None).fit(planted.corpus, user_ids=[f"p{i // 2}" for i in range(1500)])
    assert topics.supported_topics_.sum() >= 4
