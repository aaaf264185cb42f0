"""Private fits charged to their dataset's ledger (dataset_ledger.charge), and DocDPCooccurrence's free refit."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.errors import BudgetExceededError, DPTopicError
from dptopic.models import HDPLDA, LDA, DocDPCooccurrence, docdp_cooc, load
from dptopic.moments.refit import suggest_n_topics, topics_at


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _cooc(**kw):
    return DocDPCooccurrence(n_topics=kw.pop("n_topics", 5), epsilon=1.0, **kw)


def test_python_fits_are_not_charged_unless_asked(tiny, tmp_path, monkeypatch):
    path = tmp_path / "l.sqlite"
    _cooc().fit(tiny.corpus, vocabulary=list(tiny.corpus.vocabulary.words))
    assert not path.exists()
    monkeypatch.setenv("DPTOPIC_LEDGER", str(path))
    m = _cooc().fit(tiny.corpus)
    (d,) = DatasetLedger(path).show()["datasets"]
    assert d["name"].startswith("content:") and len(d["releases"]) == 1
    assert m.privacy_["dataset_ledger"]["n_releases"] == 1
    _cooc(ledger=False).fit(tiny.corpus)          # off, whatever the environment says
    assert len(DatasetLedger(path).releases(d["name"])) == 1


def test_the_default_name_is_the_documents_content_in_any_order(planted, tmp_path):
    from dptopic.corpus import Corpus
    from dptopic.corpus.ledger_documents import documents_of

    led = DatasetLedger(tmp_path / "l.sqlite")

    def name(X):
        return led.content_name(documents_of(X))

    c = planted.corpus
    X = c.to_bow()
    assert name(X) == name(X[::-1])
    assert name(c) == name(c.subset(np.arange(c.n_docs)[::-1]))
    assert name(c) != name(c.subset(np.arange(c.n_docs - 1)))
    texts = ["apple banana  cherry", "river mountain valley", "apple cherry banana"]
    assert name(texts) == name(Corpus.from_texts(texts)) == name([t + " " for t in texts[::-1]])
    assert name([t.split() for t in texts]) == name(texts)
    assert documents_of(iter([1, 2])) is None
    with pytest.raises(DPTopicError, match="give dataset=NAME"):
        _cooc(ledger=tmp_path / "l.sqlite").fit(lambda: iter([]))


def test_two_fits_on_one_dataset_total_between_one_and_two(tiny, tmp_path):
    L = tmp_path / "l.sqlite"
    m = _cooc(ledger=L, dataset="posts").fit(tiny.corpus)
    m2 = clone(m).fit(tiny.corpus)
    assert m2.get_params()["ledger"] == L and m2.get_params()["dataset"] == "posts"
    tot = DatasetLedger(L).total("posts")
    assert tot["n_releases"] == 2 and 1.0 < tot["epsilon_total"] <= 2.0
    assert m2.privacy_["dataset_ledger"]["line"].startswith("releases recorded for these documents in ledger")
    assert m.privacy_["epsilon"] <= 1.0 + 1e-9      # the model's own guarantee is its fit's alone


def test_a_capped_fit_is_refused_before_any_noise(tiny, tmp_path, monkeypatch):
    L = tmp_path / "l.sqlite"
    DatasetLedger(L).set_cap("posts", 0.5, 1e-5)
    drawn = []
    real = docdp_cooc.gaussian_mechanism
    monkeypatch.setattr(docdp_cooc, "gaussian_mechanism", lambda *a, **k: drawn.append(1) or real(*a, **k))
    m = _cooc(ledger=L, dataset="posts")
    with pytest.raises(BudgetExceededError, match="refused before any noise was drawn"):
        m.fit(tiny.corpus)
    assert drawn == [] and not hasattr(m, "components_")
    assert DatasetLedger(L).releases("posts") == []


def test_the_model_folder_is_recorded_when_saved_and_loads_with_its_total(tiny, tmp_path):
    L = tmp_path / "l.sqlite"
    m = _cooc(ledger=L, dataset="posts").fit(tiny.corpus)
    m.save(tmp_path / "m")
    (r,) = DatasetLedger(L).releases("posts")
    assert r["model_path"] == str((tmp_path / "m").resolve())
    back = load(tmp_path / "m")
    assert back.privacy_["dataset_ledger"]["dataset"] == "posts"
    assert "ledger" not in back._saved_params()


def test_a_grid_search_charges_every_fit(tiny, tmp_path):
    L = tmp_path / "l.sqlite"
    search = GridSearchCV(_cooc(ledger=str(L), dataset="posts"), {"n_topics": [2, 3]}, cv=2, refit=True)
    search.fit(tiny.corpus.to_bow())
    assert len(DatasetLedger(L).releases("posts")) == 5      # 2 values x 2 folds + the refit


def test_non_spending_trainers_take_no_ledger_parameters():
    assert "ledger" not in LDA().get_params()
    with pytest.raises(DPTopicError):
        LDA(ledger="x")
    assert {"ledger", "dataset"} <= set(HDPLDA().get_params())


def test_a_bad_ledger_parameter_is_refused_before_reading(tiny, tmp_path):
    for bad in (3, "", "  ", 1.5, ["x"]):
        with pytest.raises(DPTopicError, match="ledger="):
            _cooc(ledger=bad).fit(tiny.corpus)
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"garbage" * 100)
    m = _cooc(ledger=bad, dataset="d")
    with pytest.raises(DPTopicError, match="nothing was spent"):
        m.fit(tiny.corpus)
    assert not hasattr(m, "components_")


@pytest.mark.parametrize("kw, says", [
    ({"dataset": "", "ledger": "l.sqlite"}, "invalid dataset name dataset=''"),
    ({"dataset": "content:abc", "ledger": "l.sqlite"}, "the ledger names datasets itself"),
    ({"dataset": "audit-shadow:x", "ledger": "l.sqlite"}, "the ledger names datasets itself"),
    ({"dataset": "posts", "ledger": False}, "ledger=False records none"),
    ({"dataset": "posts"}, "no ledger is on"),
    ({"ledger": "mysql://x@y/z"}, "is a mysql:// URL"),
])
def test_a_dataset_name_or_ledger_the_command_line_refuses_is_refused_before_anything_is_read(kw, says, tiny, tmp_path,
                                                                                               monkeypatch):
    """Python took ``dataset=''``, ``dataset=`` with ``ledger=False`` (or with no ledger at all), names that mimic the
    ledger's own, and a ``mysql://`` ledger (a SQLite file at ./mysql:/...): each is refused in one line naming the
    parameter, before any document is read, and nothing is created."""
    from dptopic.dataset_ledger import charge

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DPTOPIC_LEDGER", raising=False)
    monkeypatch.setattr(charge, "dataset_name", lambda *a: pytest.fail("the documents were read"))
    m = _cooc(**kw)
    with pytest.raises(DPTopicError, match=says) as e:
        m.fit(tiny.corpus)
    assert getattr(e.value, "parameter", None) in ("dataset", "ledger") and "\n" not in str(e.value)
    assert not hasattr(m, "components_") and list(tmp_path.iterdir()) == []


def test_an_hdp_fit_is_charged_once_with_its_whole_plan(tiny, tmp_path):
    L = tmp_path / "l.sqlite"
    m = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=4, verbose=0, ledger=L, dataset="t").fit(tiny.corpus)
    (r,) = DatasetLedger(L).releases("t")
    assert sum(n for _, n in r["groups"]) == 8 and r["unit"] == "word"
    assert r["epsilon"] == pytest.approx(m.privacy_["epsilon"], rel=1e-6)


def test_a_fit_without_guarantee_leaves_the_dataset_without_total(tiny, tmp_path):
    L = tmp_path / "l.sqlite"
    HDPLDA(n_topics=3, epsilon_laplace=None, n_iter=2, verbose=0, ledger=L, dataset="t").fit(tiny.corpus)
    (r,) = DatasetLedger(L).releases("t")
    assert r["guarantee"] is False and DatasetLedger(L).total("t")["epsilon_total"] is None


# ---------------------------------------------------------------------------------------------------- refit at K
def test_refit_at_the_same_k_gives_the_fits_topics(planted):
    m = _cooc(n_topics=5).fit(planted.corpus)
    comp, supported = topics_at(m, 5)
    np.testing.assert_allclose(comp, m.components_, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(supported, m.supported_topics_)


def test_refit_at_another_k_adds_no_release_and_keeps_the_card(planted, tmp_path, monkeypatch):
    L = tmp_path / "l.sqlite"
    m = _cooc(n_topics=5, ledger=L, dataset="posts").fit(planted.corpus)
    card = dict(m.privacy_)
    monkeypatch.setattr(docdp_cooc, "gaussian_mechanism", lambda *a, **k: pytest.fail("noise drawn"))
    m.refit(n_topics=3)
    assert m.components_.shape[0] == 3 and m.n_topics == 3 and m.privacy_ == card
    assert len(DatasetLedger(L).releases("posts")) == 1
    m.save(tmp_path / "k3")
    back = load(tmp_path / "k3")
    back.refit(n_topics=4)
    assert back.components_.shape[0] == 4
    assert len(DatasetLedger(L).releases("posts")) == 1
    assert DatasetLedger(L).releases("posts")[0]["model_path"] is None    # the refit's folder is not the release's


def test_refit_refuses_a_k_the_release_cannot_give(planted):
    from dptopic.errors import ParameterError

    m = _cooc(n_topics=5).fit(planted.corpus)
    with pytest.raises(ParameterError, match="more topics than") as e:
        m.refit(n_topics=len(m.kept_words_) + 5)
    # a ParameterError: the command line writes it as --topics K, never n_topics=
    assert e.value.parameter == "n_topics" and "--topics 61" in e.value.message({"n_topics": "--topics"}).replace(
        str(len(m.kept_words_) + 5), "61")


@pytest.mark.parametrize("scales", [[np.inf, np.nan, 0, 0], [1e-300, np.nan, 0, 0], [1.0, -1.0, 0, 0],
                                    [1.0, np.nan, 0, 7], ["a", "b", "c", "d"]])
def test_release_scales_that_disagree_with_the_report_are_refused_on_load(planted, tmp_path, scales):
    """Tampered scales (the model.json's checksums rewritten too) gave tracebacks, or a refit at a noise scale the
    report never stated."""
    import hashlib
    import json

    from dptopic.errors import CorruptModelError

    m = _cooc(n_topics=4).fit(planted.corpus)
    folder = m.save(tmp_path / "m")
    np.save(tmp_path / "m" / "release_scales.npy", np.array(scales))
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["array_sha256"]["release_scales"] = hashlib.sha256(
        (tmp_path / "m" / "release_scales.npy").read_bytes()).hexdigest()
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="release"):
        load(folder)


def test_the_releases_suggest_the_planted_number_of_topics():
    from dptopic.corpus import lda_corpus

    syn = lda_corpus(n_docs=1500, vocab_size=300, n_topics=5, doc_length=60, alpha=0.1, beta=0.05, seed=3)
    m = _cooc(n_topics=8, seed=0).fit(syn.corpus)
    s = suggest_n_topics(m)
    assert s["n_topics"] == 5, s


def test_audit_shadows_are_charged_to_their_own_dataset(tiny, tmp_path):
    from dptopic.dataset_ledger.charge import shadow_runs

    L = tmp_path / "l.sqlite"
    with shadow_runs():
        _cooc(n_topics=2, ledger=L, dataset="posts").fit(tiny.corpus)
    assert DatasetLedger(L).datasets() == ["audit-shadow:posts"]


def test_the_card_and_report_show_the_datasets_total(tiny, tmp_path):
    from dptopic.accounting.card import privacy_card
    from dptopic.reporting.html import render_report

    L = tmp_path / "l.sqlite"
    vocab = list(tiny.corpus.vocabulary.words)
    first = _cooc(n_topics=2, ledger=L, dataset="posts").fit(tiny.corpus, vocabulary=vocab)
    card = privacy_card(first.privacy_, "DocDPCooccurrence")
    assert card["dataset_total"]["releases"] == 1 and not card["dataset_total"]["exceeds_model"]
    html = render_report(title="t", trainer="DocDPCooccurrence", card=card, topics=[])
    assert 'class="badge full"' in html and "releases recorded for these documents" in html
    second = _cooc(n_topics=2, ledger=L, dataset="posts").fit(tiny.corpus, vocabulary=vocab)
    card = privacy_card(second.privacy_, "DocDPCooccurrence")
    assert card["dataset_total"]["exceeds_model"] and "over 2 releases" in card["dataset_total"]["line"]
    html = render_report(title="t", trainer="DocDPCooccurrence", card=card, topics=[])
    assert 'class="badge full"' not in html and 'class="badge weak"' in html and "total is larger: see below" in html


def test_a_private_vocabulary_is_a_release_of_its_own(tmp_path):
    from dptopic.training.fdptm import fit_fdptm

    L = tmp_path / "l.sqlite"
    texts = ["apple banana cherry grape lemon"] * 60 + ["river mountain valley ocean forest"] * 60
    fit_fdptm(_cooc(n_topics=2, ledger=L, dataset="posts"), texts, 1.0, 1e-6)
    kinds = [r["kind"] for r in DatasetLedger(L).releases("posts")]
    assert kinds == ["vocabulary", "fit"]


def test_a_charge_lets_its_documents_go_once_recorded_and_adds_to_its_release_by_id(tiny, tmp_path):
    from dptopic.accounting import ApproxDPEvent
    from dptopic.corpus.ledger_documents import documents_of
    from dptopic.dataset_ledger.charge import Charge

    led = DatasetLedger(tmp_path / "l.sqlite")
    charge = Charge(led, "posts", "DocDPCooccurrence", 1e-5, documents=documents_of(tiny.corpus))
    first = charge.debit("document", [(ApproxDPEvent(0.5, 0.0, label="first", unit="document"), 1)])
    assert charge.documents is None         # recorded: the release's id names them from here on
    assert charge.debit("document", [(ApproxDPEvent(0.25, 0.0, label="second", unit="document"), 1)]) == first
    (release,) = led.releases("posts")
    assert 0.5 < release["epsilon"] <= 0.75 and len(release["groups"]) == 2      # both halves, one release
    again = Charge(led, "posts", "DocDPCooccurrence", 1e-5, documents=documents_of(tiny.corpus))
    again.debit("document", [(ApproxDPEvent(0.5, 0.0, label="first", unit="document"), 1)])
    assert len({r["docset"] for r in led.releases("posts")}) == 1      # the same documents, the same set
