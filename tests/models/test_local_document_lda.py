"""``dptopic.models.local_document_lda``."""
import json
import warnings

import pytest

import dptopic
from dptopic import DPTopicError
from dptopic.accounting.verify import verify_report
from dptopic.errors import CorruptModelError
from helpers import fitted_state, quiet_small_fits


# ------------------------------------------------------------------------------- LocalDocumentLDA: fit is atomic
@quiet_small_fits
def test_a_refused_refit_of_local_document_lda_leaves_the_fitted_model(corpus30, counts30):
    from dptopic.contributor.document_randomizer import DocumentRandomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports = DocumentRandomizer(corpus30.vocabulary, epsilon=2.0, seed=0, simulation=True).randomize(corpus30)
    m = dptopic.LocalDocumentLDA(n_topics=2).fit(reports)
    before = fitted_state(m)
    for bad in (reports[:0], counts30, None):
        with pytest.raises(DPTopicError):
            m.fit(bad)
        assert fitted_state(m) == before
    m.set_params(n_topics=0)
    with pytest.raises(DPTopicError, match="invalid n_topics"):
        m.fit(reports)
    assert fitted_state(m) == before


@pytest.mark.filterwarnings("ignore:an explicit seed")
@pytest.mark.parametrize("field, value", [("unit", "word"), ("unit", "document"),
                                          ("neighbouring_relation", "add/remove one document")])
def test_a_document_level_local_models_unit_edited_is_refused(tmp_path, field, value):
    # local models had no run plan, so an edited unit or relation loaded as it was
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.models import LocalDocumentLDA

    s = dptopic.lda_corpus(n_docs=400, vocab_size=30, n_topics=3, doc_length=12, seed=2)
    rs = DocumentRandomizer.for_simulation(s.corpus.vocabulary, 8.0, seed=0).randomize(s.corpus)
    m = LocalDocumentLDA(n_topics=3, reports_per_contributor=2).fit(rs)
    d = tmp_path / "m"
    m.save(d)
    dptopic.load(d)                                   # as saved, it loads
    meta = json.loads((d / "model.json").read_text())
    assert meta["privacy"][field] != value
    meta["privacy"][field] = value
    meta.pop("privacy_card", None)
    (d / "model.json").write_text(json.dumps(meta))
    assert verify_report(meta["privacy"]).status == "verified"
    with pytest.raises(CorruptModelError, match="names the (unit|neighbouring relation)"):
        dptopic.load(d)


@pytest.mark.filterwarnings("ignore")
def test_local_document_lda_plans_one_report_per_contributor(corpus30):
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from helpers import assert_fit_spent_its_plan

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports = DocumentRandomizer(corpus30.vocabulary, epsilon=2.0, seed=0, simulation=True).randomize(corpus30)
    m = dptopic.LocalDocumentLDA(n_topics=2).fit(reports)
    plan = assert_fit_spent_its_plan(m)
    assert plan.releases[0].event.eps == 2.0 and plan.releases[0].count == 1
    plan = assert_fit_spent_its_plan(m.for_contributors(4))
    assert plan.releases[0].count == 4
