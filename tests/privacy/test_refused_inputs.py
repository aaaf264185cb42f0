"""An input refused spends nothing: each refusal of a training run's input comes before its first release, so the
dataset's ledger is what it was, row for row, and no mechanism drew noise (the releases' observer saw none), even with
a private vocabulary, whose DP set union is the run's first release (``private_vocabulary=(8, 1e-6)``)."""
import gzip
import sqlite3
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.corpus import Corpus
from dptopic.corpus.vectors import PublicVectors
from dptopic.errors import DPTopicError
from dptopic.mechanisms.observer import observing

TOPICS = [[f"{stem}{chr(97 + i)}" for i in range(10)] for stem in ("apple", "river", "stone")]
RUN = dict(algorithm="docdp-cooc", epsilon=1.0, n_topics=2, private_vocabulary=(8.0, 1e-6), dataset="posts",
           metrics=False)


@pytest.fixture(scope="module")
def corpus():
    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(TOPICS[d % 3], 12)) for d in range(150)]
    return Corpus.from_texts(texts, max_vocab=None)


@pytest.fixture(scope="module")
def recorded(corpus, tmp_path_factory):
    """A ledger holding one earlier release of the corpus."""
    path = tmp_path_factory.mktemp("ledger") / "l.sqlite"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.train(corpus, ledger=str(path), **RUN)
    return path


def _rows(path) -> list:
    """Every row of every table of the ledger (SQLite), in order: what a refused run must leave as it found."""
    with sqlite3.connect(path) as con:
        return list(con.iterdump())


def _spoiled(words, how):
    v = PublicVectors("mine", list(words), np.ones((len(words), 4)))
    if how == "nan":
        v.vectors[1, 2] = np.nan
    else:
        v.words = v.words + ["extra"]
    return v


def _refused(tmp_path, corpus, which):
    words = list(corpus.vocabulary.words)
    if which == "a malformed vectors file":
        (tmp_path / "bad.txt").write_text("applea 0.1 0.2\napplea 0.3\n")
        return dict(public_vectors=str(tmp_path / "bad.txt"))
    if which == "a gzipped vectors file of NUL bytes":
        with gzip.open(tmp_path / "zeros.txt.gz", "wb") as fh:
            fh.write(b"\0" * 1_000_000)
        return dict(public_vectors=str(tmp_path / "zeros.txt.gz"))
    if which == "a device as the vectors file":
        return dict(public_vectors="/dev/zero")
    if which == "vectors built in Python with a NaN row":
        return dict(public_vectors=_spoiled(words, "nan"))
    if which == "vectors built in Python with a word too many":
        return dict(public_vectors=_spoiled(words, "words"))
    if which == "vectors the settings would not read":
        (tmp_path / "v.txt").write_text("".join(f"{w} 0.1 0.2\n" for w in words))
        return dict(public_vectors=str(tmp_path / "v.txt"), recovery="nmf")
    return {"a callback that cannot be called": dict(callback=5),
            "metrics that name none": dict(metrics="bogus"),
            "a split of no estimator": dict(split_as="x"),
            "a person's field at the document unit": dict(user_field="user"),
            "a public corpus that is a list": dict(public_corpus=["applea appleb"]),
            "a vocabulary policy no set union takes": dict(vocabulary_policy="bogus"),
            "a seed no generator takes beside a built model": dict(model=dptopic.DocDPCooccurrence(n_topics=2),
                                                                   seed="x")}[which]


@pytest.mark.parametrize("which", [
    "a malformed vectors file", "a gzipped vectors file of NUL bytes", "a device as the vectors file",
    "vectors built in Python with a NaN row", "vectors built in Python with a word too many",
    "vectors the settings would not read", "a callback that cannot be called", "metrics that name none",
    "a split of no estimator", "a person's field at the document unit", "a public corpus that is a list",
    "a vocabulary policy no set union takes", "a seed no generator takes beside a built model"])
def test_a_refused_input_leaves_the_ledger_as_it_was_and_draws_no_noise(corpus, recorded, tmp_path, which):
    import shutil

    ledger = tmp_path / "l.sqlite"
    shutil.copy(recorded, ledger)
    before = _rows(ledger)
    kw = {**RUN, **_refused(tmp_path, corpus, which)}
    if "model" in kw:       # the trainer given, built: its own parameters hold its budget
        for k in ("algorithm", "epsilon", "n_topics"):
            kw.pop(k)
    releases = []
    with observing(releases.append), pytest.raises(DPTopicError) as e:
        dptopic.train(corpus, ledger=str(ledger), **kw)
    assert "\n" not in str(e.value)
    assert releases == [], f"{which}: {len(releases)} release(s) drawn before the refusal"
    assert _rows(ledger) == before, f"{which}: the ledger changed"


def test_the_check_sees_a_run_that_spends_before_its_refusal(corpus, recorded, tmp_path, monkeypatch):
    """The check can fail: with the vectors' check left to the fit, after the private vocabulary, a
    malformed file is refused only once the words are drawn and recorded, and both are seen."""
    import shutil

    from dptopic.training import run

    ledger = tmp_path / "l.sqlite"
    shutil.copy(recorded, ledger)
    before = _rows(ledger)
    monkeypatch.setattr(run, "check_before_release", lambda *a, **k: None)
    releases = []
    with observing(releases.append), pytest.raises(DPTopicError, match="line 2 has 1 value"):
        dptopic.train(corpus, ledger=str(ledger), **RUN, **_refused(tmp_path, corpus, "a malformed vectors file"))
    assert releases and _rows(ledger) != before
