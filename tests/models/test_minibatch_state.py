"""Mini-batch trainers (OnlineVB, OnlineLDA, OLPLDA, LocalDocumentLDA) and DPSVI's fit: a refused or failing batch
leaves the whole state as it was (its random stream included), the next batch gives what it would have given without
the failed one, and save/load between batches continues the stream."""
import json
import pickle
import warnings

import numpy as np
import pytest

import dptopic
import dptopic.models._variational as variational
import dptopic.models.dpsvi as svi
import dptopic.models.local_document_lda as ldp_document
import dptopic.models.online_lda as online
from dptopic import DPTopicError
from dptopic.corpus import lda_corpus

pytestmark = [pytest.mark.filterwarnings("ignore::dptopic.SeededNoiseWarning"),
              pytest.mark.filterwarnings("ignore::dptopic.SmallCorpusWarning"),
              pytest.mark.filterwarnings("ignore::dptopic.DataVocabularyWarning"),
              pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit"),
              pytest.mark.filterwarnings("ignore:.*trained a private model in this process"),
              pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=90, vocab_size=12, n_topics=2, doc_length=10, seed=1).corpus


@pytest.fixture(scope="module")
def batches(corpus):
    return [corpus.subset(np.arange(a, a + 20)) for a in (0, 20, 40)]


@pytest.fixture(scope="module")
def other():
    return lda_corpus(n_docs=20, vocab_size=14, n_topics=2, doc_length=10, seed=2).corpus


@pytest.fixture(scope="module")
def reports(corpus, other):
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.contributor.randomizer import Randomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = Randomizer.for_simulation(corpus.vocabulary, epsilon_word=3.0, seed=0).randomize(corpus.subset(np.arange(60)))
        return {"A": rs[:20], "B": rs[20:40], "C": rs[40:60],
                "other f": Randomizer.for_simulation(corpus.vocabulary, epsilon_word=1.0, seed=0).randomize(
                    corpus.subset(np.arange(20))),
                "other vocabulary": Randomizer.for_simulation(other.vocabulary, epsilon_word=3.0, seed=0).randomize(other),
                "document-level": DocumentRandomizer.for_simulation(corpus.vocabulary, epsilon=4.0, seed=0).randomize(
                    corpus.subset(np.arange(20))),
                "doc other eps": DocumentRandomizer.for_simulation(corpus.vocabulary, epsilon=2.0, seed=0).randomize(
                    corpus.subset(np.arange(20))),
                "doc other vocabulary": DocumentRandomizer.for_simulation(other.vocabulary, epsilon=4.0,
                                                                          seed=0).randomize(other)}


def _state(model) -> dict:
    """Every attribute, private ones and Generators (their state) included, pickled."""
    return {k: pickle.dumps(v) for k, v in vars(model).items()}


def _one_line(e) -> None:
    assert isinstance(e.value, DPTopicError) and "\n" not in str(e.value).strip()


MAKERS = {
    "OnlineVB": lambda: dptopic.OnlineVB(2, seed=0, verbose=0),
    "OnlineLDA": lambda: dptopic.OnlineLDA(n_topics=2, n_iter=2, seed=0, verbose=0),
}


def _bad_counts(good):
    cnt = good.to_bow().toarray()
    return {"wrong width": np.ones((3, 5)), "negative": cnt - 3, "nan": np.where(cnt > 0, np.nan, 0.0),
            "inf": np.where(cnt > 0, np.inf, 0.0), "fractional": cnt + 0.5, "no documents": cnt[:0],
            "all-empty documents": np.zeros((4, cnt.shape[1])), "a string": "hello", "None": None}


# ------------------------------------------------------------------------------------------ refused batches
@pytest.mark.parametrize("name", MAKERS)
def test_a_refused_batch_leaves_the_stream_as_it_was(batches, name):
    A, B, _ = batches
    m = MAKERS[name]().partial_fit(A)
    before = _state(m)
    for bad, X in _bad_counts(B).items():
        with pytest.raises(DPTopicError) as e:
            m.partial_fit(X)
        _one_line(e)
        assert _state(m) == before, bad
    m.partial_fit(B)
    ref = MAKERS[name]().partial_fit(A).partial_fit(B)
    assert np.array_equal(m.components_, ref.components_)


@pytest.mark.parametrize("prior", ["none", "corpus"])
def test_olplda_refused_report_batches_leave_every_attribute(corpus, reports, prior):
    """With prior_corpus='none' the first batch left _params_at_validate recording prior_corpus=None (its start
    validated with the placeholder in place): the next refused batch changed it."""
    d0 = "none" if prior == "none" else corpus.subset(np.arange(60, 90))
    make = lambda: dptopic.OLPLDA(d0, n_topics=2, n_iter=2, prior_iter=2, seed=0, verbose=0)  # noqa: E731
    m = make().partial_fit(reports["A"])
    before = _state(m)
    for bad in ("other f", "other vocabulary", "document-level", "empty", "corpus", "None"):
        X = {"empty": reports["A"][:0], "corpus": corpus, "None": None}.get(bad) if bad in ("empty", "corpus", "None") \
            else reports[bad]
        with pytest.raises(DPTopicError) as e:
            m.partial_fit(X)
        _one_line(e)
        assert _state(m) == before, bad
    m.partial_fit(reports["B"])
    assert np.array_equal(m.components_, make().partial_fit(reports["A"]).partial_fit(reports["B"]).components_)


# --------------------------------------------------------------------------- a failure half-way through a step
def _failing_estep(ptr, ids, cts, eb, alpha, gamma, max_iter, tol, clip, ss, norms):
    ss[:] = 7.0                     # writes part of its output, then fails
    gamma[:] = 3.0
    raise DPTopicError("injected failure")


def test_online_vb_first_batch_failing_half_way_leaves_an_unfitted_model(batches, monkeypatch):
    """It kept lambda_ and n_updates_ without components_: every later partial_fit raised NotFittedError."""
    A, B, _ = batches
    m = dptopic.OnlineVB(2, seed=0, verbose=0)
    before = _state(m)
    with monkeypatch.context() as mp:
        mp.setattr(variational, "vb_estep", _failing_estep)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(A)
    assert _state(m) == before
    m.partial_fit(A)
    assert np.array_equal(m.lambda_, dptopic.OnlineVB(2, seed=0, verbose=0).partial_fit(A).lambda_)


def test_online_vb_batch_failing_half_way_keeps_the_random_stream(batches, monkeypatch):
    """The failed step had drawn γ's start from the stream: the next batch gave another λ than without it."""
    A, B, C = batches
    m = dptopic.OnlineVB(2, seed=0, verbose=0).partial_fit(A)
    before = _state(m)
    with monkeypatch.context() as mp:
        mp.setattr(variational, "vb_estep", _failing_estep)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(B)
    assert _state(m) == before
    m.partial_fit(C)
    assert np.array_equal(m.lambda_, dptopic.OnlineVB(2, seed=0, verbose=0).partial_fit(A).partial_fit(C).lambda_)


def _failing_finish(self, arrays, rng):
    self.topic_word_counts_ = np.zeros(1)
    raise DPTopicError("injected failure")


@pytest.mark.parametrize("first", [True, False], ids=["first batch", "later batch"])
def test_online_lda_batch_failing_half_way_changes_nothing(batches, monkeypatch, first):
    A, B, _ = batches
    m = MAKERS["OnlineLDA"]()
    if not first:
        m.partial_fit(A)
    before = _state(m)
    with monkeypatch.context() as mp:
        mp.setattr(online._MatrixPriorGibbs, "_finish", _failing_finish)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(B)
    assert _state(m) == before
    m.partial_fit(B)
    ref = MAKERS["OnlineLDA"]()
    if not first:
        ref.partial_fit(A)
    assert np.array_equal(m.components_, ref.partial_fit(B).components_)


@pytest.mark.parametrize("first", [True, False], ids=["first batch", "later batch"])
def test_olplda_batch_failing_half_way_changes_nothing(corpus, reports, monkeypatch, first):
    """A first batch failing after the overlap check kept its _overlap_note (and the 'none' start its validated
    parameters) though the batch was refused."""
    make = lambda: dptopic.OLPLDA(corpus.subset(np.arange(60, 90)), n_topics=2, n_iter=2, prior_iter=2,  # noqa: E731
                                  seed=0, verbose=0)
    m = make()
    if not first:
        m.partial_fit(reports["A"])
    before = _state(m)
    with monkeypatch.context() as mp:
        mp.setattr(online._MatrixPriorGibbs, "_finish", _failing_finish)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(reports["B"])
    assert _state(m) == before
    m.partial_fit(reports["B"])
    ref = make()
    if not first:
        ref.partial_fit(reports["A"])
    assert np.array_equal(m.components_, ref.partial_fit(reports["B"]).components_)


# ------------------------------------------------------------------------------ save between batches, continue
@pytest.mark.parametrize("name", MAKERS)
def test_save_and_load_between_batches_continues_the_same_stream(batches, tmp_path, name):
    """The random stream was not saved: after load the seeded stream restarted, so the next batches drew the first
    batch's numbers again and gave other topics than the model that was never saved."""
    A, B, C = batches
    m = MAKERS[name]().partial_fit(A)
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m")
    for X in (B, C):
        m.partial_fit(X)
        loaded.partial_fit(X)
    assert np.array_equal(m.components_, loaded.components_)
    assert m.n_docs_seen_ == loaded.n_docs_seen_


def test_online_vb_partial_fit_after_fit_continues_that_fit_not_an_older_stream(corpus, batches, tmp_path):
    """fit() kept the Generator of an earlier partial_fit stream, and partial_fit went on drawing from it."""
    A, B, _ = batches
    m = dptopic.OnlineVB(2, n_epochs=1, batch_size=10, seed=0, verbose=0).partial_fit(A).fit(corpus).partial_fit(B)
    ref = dptopic.OnlineVB(2, n_epochs=1, batch_size=10, seed=0, verbose=0).fit(corpus)
    ref.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m").partial_fit(B)
    assert np.array_equal(m.lambda_, ref.partial_fit(B).lambda_)
    assert np.array_equal(loaded.lambda_, m.lambda_)


def test_olplda_saves_no_random_state_and_continues_validly_after_load(corpus, reports, tmp_path):
    """OLP-LDA never saves its seed nor its stream's state: after load it draws fresh randomness (documented)."""
    m = dptopic.OLPLDA(corpus.subset(np.arange(60, 90)), n_topics=2, n_iter=2, prior_iter=2, seed=0,
                       verbose=0).partial_fit(reports["A"])
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "rng_state" not in meta["arrays"] and meta["params"]["seed"] is None
    loaded = dptopic.load(tmp_path / "m").partial_fit(reports["B"])
    m.partial_fit(reports["B"])
    assert loaded.n_batches_ == m.n_batches_ == 2 and loaded.n_docs_seen_ == m.n_docs_seen_
    assert np.array_equal(loaded.mu_, m.mu_) and loaded.omega_history_ == m.omega_history_
    assert np.allclose(loaded.components_.sum(axis=1), 1)


@pytest.mark.parametrize("name", MAKERS)
def test_a_malformed_saved_random_state_is_named_once(batches, tmp_path, name):
    m = MAKERS[name]().partial_fit(batches[0])
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "rng_state" in meta["arrays"]
    del meta["array_sha256"]        # as a folder saved before array digests: the state's own check speaks
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    for bad in (np.arange(5, dtype=np.uint64), np.zeros(6, dtype=np.uint64), np.full(6, 1.0)):
        np.save(tmp_path / "m" / "rng_state.npy", bad)
        with pytest.raises(DPTopicError, match="rng_state.npy must hold") as e:
            dptopic.load(tmp_path / "m")
        _one_line(e)


# ---------------------------------------------------------------------------------------- DPSVI: fit aborted
def test_an_interrupted_dpsvi_refit_keeps_the_earlier_fit_and_its_ledger(corpus, monkeypatch):
    """An interrupt after a few private steps left lambda_ (noisy steps on the new documents) and a new ledger_ beside
    the earlier fit's components_ and privacy_: save() then wrote that lambda under the old report."""
    m = dptopic.DPSVI(n_topics=2, sampling_rate=0.25, n_epochs=1, seed=0, verbose=0).fit(corpus.subset(np.arange(40)))
    before = _state(m)
    calls = []

    def mechanism(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    real = svi.gaussian_mechanism
    with monkeypatch.context() as mp:
        mp.setattr(svi, "gaussian_mechanism", mechanism)
        with pytest.raises(KeyboardInterrupt):
            m.fit(corpus.subset(np.arange(40, 80)))
    assert _state(m) == before


# ------------------------------------------------------------------------------ LocalDocumentLDA (pinned)
def test_local_document_lda_refused_or_failing_batches_change_nothing(reports, monkeypatch, tmp_path, corpus):
    m = dptopic.LocalDocumentLDA(n_topics=2).partial_fit(reports["document-level"])
    before = _state(m)
    for X in (reports["doc other eps"], reports["doc other vocabulary"], reports["A"], None):
        with pytest.raises(DPTopicError) as e:
            m.partial_fit(X)
        _one_line(e)
        assert _state(m) == before

    def failing(*a, **k):
        raise DPTopicError("injected failure")

    with monkeypatch.context() as mp:
        mp.setattr(ldp_document, "topics_from_cooccurrence", failing)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(reports["document-level"])
    assert _state(m) == before
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m").partial_fit(reports["document-level"])
    assert np.array_equal(loaded.components_, m.partial_fit(reports["document-level"]).components_)
