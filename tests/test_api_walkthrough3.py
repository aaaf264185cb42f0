"""Fixes from a new user's walk-through (scikit-learn/gensim background): docs that state what the code does,
docstrings that name every parameter, FedLDA's warnings and list input, a readable DocumentReportSet."""
from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dptopic
from dptopic.corpus import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.local import DocumentRandomizer, DocumentReportSet
from dptopic.models import CDPLDA, DPSVI, HDPLDA, OLPLDA, CDPLDAPlus, FedLDA, OnlineLDA

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=60, vocab_size=40, n_topics=2, doc_length=15, seed=1).corpus


# ----------------------------------------------------------------- docs/svi.md
def test_svi_quick_start_comment_states_the_epsilons_the_snippet_prints(small):
    lines = (DOCS / "svi.md").read_text().splitlines()
    i = next(j for j, line in enumerate(lines) if 'm.privacy_["epsilon_rdp"]' in line and line.startswith("print("))
    comment = lines[i].split("#", 1)[1]
    for line in lines[i + 1:]:                 # a comment continued on the next lines
        if not line.lstrip().startswith("#"):
            break
        comment += " " + line.split("#", 1)[1]
    m = DPSVI.from_budget(epsilon=2.0, delta=1e-5, n_epochs=1, sampling_rate=0.05, n_topics=2, clip=10.0, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(small)
    pld, rdp = m.privacy_["epsilon_pld"], m.privacy_["epsilon_rdp"]
    assert pld <= 2.0 < rdp                    # the budget binds the PLD figure only
    assert f"{pld:.3f}" in comment and f"{rdp:.3f}" in comment
    assert "by construction" not in comment and "PLD" in comment and "looser" in comment


# ----------------------------------------------------------------- docstrings
def _parameters_section(cls) -> str:
    doc = inspect.getdoc(cls) or ""
    m = re.search(r"^Parameters\n-+\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", doc, re.S | re.M)
    assert m, f"{cls.__name__} has no Parameters section"
    return m.group(1)


@pytest.mark.parametrize("cls", [CDPLDA, CDPLDAPlus, HDPLDA, OLPLDA, FedLDA, DPSVI, OnlineLDA],
                         ids=lambda c: c.__name__)
def test_every_constructor_parameter_is_described_in_the_class_docstring(cls):
    section = _parameters_section(cls)
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    missing = [p for p in names if not re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", section)]
    assert not missing, f"{cls.__name__}'s Parameters section omits {missing}"


def test_cdplda_docstring_names_its_default_noise_as_discrete():
    assert CDPLDA().noise == "discrete" and CDPLDAPlus().noise == "discrete"
    doc = inspect.getdoc(CDPLDA)
    assert "``Lap(1/ε)`` noise is added" not in doc
    assert "discrete Laplace" in doc and 'noise="discrete"' in doc
    assert "discrete" in _parameters_section(CDPLDA).split("noise :", 1)[1].split("\n")[0]


@pytest.mark.parametrize("cls", [OnlineLDA, OLPLDA], ids=lambda c: c.__name__)
def test_online_models_say_what_save_writes_and_how_to_resume(cls):
    doc = inspect.getdoc(cls.save)
    assert doc and "dptopic.load" in doc and "partial_fit" in doc and "prior_corpus" in doc


# ----------------------------------------------------------------- FedLDA
def test_fedlda_fit_warnings_point_at_the_callers_line(small):
    X = small.to_bow()
    X = X[:, np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")]   # columns most common first
    m = FedLDA(n_topics=2, rounds=1, pad_length=8, report_words=5, seed=0, verbose=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.fit(X)                                          # report_words order, seed, vocabulary from the data
        m.fit(X)                                          # ... and documents used again
    names = {type(w.message).__name__ for w in caught}
    texts = " | ".join(str(w.message) for w in caught)
    assert {"SeededNoiseWarning", "DataVocabularyWarning"} <= names
    assert "report_words keeps the first 5 columns" in texts and "already used by an earlier" in texts
    assert all(w.filename == __file__ for w in caught), [(w.filename, str(w.message)[:50]) for w in caught]


@pytest.mark.parametrize("kind", ["csr", "dense"])
def test_fedlda_list_of_count_matrices_says_what_to_pass(small, kind):
    X = small.to_bow()
    users = [X[:30], X[30:]] if kind == "csr" else [X[:30].toarray(), X[30:].toarray()]
    with pytest.raises(DPTopicError, match=r"Corpus\.from_bow\(X_u, vocabulary=words\)") as e:
        FedLDA(n_topics=2, rounds=1, pad_length=8, verbose=0).fit(users)
    assert "cannot use a list as a corpus" not in str(e.value) and "\n" not in str(e.value)
    assert ("csr_matrix" if kind == "csr" else "ndarray") in str(e.value)
    # what the message says to do works
    words = list(small.vocabulary.words)
    corpora = [dptopic.Corpus.from_bow(u, vocabulary=words) for u in users]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FedLDA(n_topics=2, rounds=1, pad_length=8, report_words="all", verbose=0).fit(corpora)
    assert m.n_clients_ == 2 and list(m.vocabulary_.words) == words
    assert not sp.issparse(m.components_) and m.components_.shape == (2, len(words))


# ----------------------------------------------------------------- DocumentReportSet
def test_document_report_set_has_a_readable_repr(small):
    words = list(small.vocabulary.words)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = DocumentRandomizer.for_simulation(words, epsilon=8.0, seed=0).randomize(small.subset(np.arange(3)))
    assert isinstance(rs, DocumentReportSet)
    text = repr(rs)
    assert text == (f"DocumentReportSet(3 reports, V={len(words)}, eps_doc=8, subset_size={rs.subset_size})")
    assert "object at 0x" not in repr(rs[:1]) and repr(rs[:1]).startswith("DocumentReportSet(1 reports")
