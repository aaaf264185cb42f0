"""How many reports a contributor sent, as a model states it (``dptopic.models._contributors``): kept through save, load and more
training, and a stated fraction read up, never down."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dptopic.contributor.document_randomizer import DocumentRandomizer
from dptopic.contributor.randomizer import Randomizer


def _planted_docs(words, n_docs=200):
    from dptopic.corpus import lda_corpus

    c = lda_corpus(n_docs=n_docs, vocab_size=len(words), n_topics=3, doc_length=20, seed=1).corpus
    return [[words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]] for d in range(c.n_docs)]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", ["document", "word"])
def test_a_stated_reports_per_contributor_survives_save_load_and_more_training(tmp_path, kind):
    import dptopic
    from dptopic.models import OLPLDA, LocalDocumentLDA
    from service_helpers import make_words

    words = make_words(50)
    docs = _planted_docs(words)
    if kind == "document":
        rz = DocumentRandomizer(words, 8.0)
        m = LocalDocumentLDA(n_topics=3).fit(rz.randomize(docs[:100]))
    else:
        rz = Randomizer(words, epsilon_word=2.0)
        m = OLPLDA(prior_corpus="none", n_topics=3, n_iter=3, batch_size=100).partial_fit(rz.randomize(docs[:100]))
    m.for_contributors(9)
    stated = m.privacy_["epsilon"]
    m.save(tmp_path / "m")
    back = dptopic.load(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    if kind == "document":       # the saved parameters agree with the report
        assert meta["params"]["reports_per_contributor"] == 9
    back.partial_fit(rz.randomize(docs[100:]))
    assert back.privacy_["reports_per_contributor"] == 9 and back.privacy_["epsilon"] == pytest.approx(stated)
    back.for_contributors(2)                                        # never lowered
    assert back.privacy_["reports_per_contributor"] == 9
    back.for_contributors(np.int64(12))                             # a count from NumPy or SQL is a count
    assert back.privacy_["reports_per_contributor"] == 12
    for bad in (0, 2.5, True, "3", None):                           # the same one-line refusal in both classes
        with pytest.raises(dptopic.DPTopicError, match="invalid reports"):
            back.for_contributors(bad)
    assert back.privacy_["reports_per_contributor"] == 12


def test_a_stated_fraction_of_reports_is_read_up_never_down():
    import dptopic
    from dptopic.models._contributors import stated_reports

    assert stated_reports({"reports_per_contributor": 2.5}) == 3 and stated_reports({"reports_per_contributor": 4}) == 4
    for junk in ({}, None, {"reports_per_contributor": True}, {"reports_per_contributor": "9"},
                 {"reports_per_contributor": 0}, {"reports_per_contributor": float("nan")}):
        assert stated_reports(junk) == 1
    with pytest.raises(dptopic.DPTopicError, match="not a count"):
        stated_reports({"reports_per_contributor": float("inf")})
