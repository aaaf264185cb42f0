"""A path given to an estimator where documents go: a prepared corpus or a shard folder is read, any other corpus
file is refused in one line naming the call that reads it, for every estimator's fit, partial_fit and transform
(through the shared base)."""
import re
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.errors import DPTopicError

WORDS = "apple banana cherry grape lemon mango peach plum river mountain valley ocean".split()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paths")
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS, 8)) for _ in range(30)]
    (tmp / "tweets.jsonl").write_text("".join(f'{{"text": "{t}"}}\n' for t in texts))
    (tmp / "docs.csv").write_text("text\n" + "\n".join(texts) + "\n")
    (tmp / "docs.tsv").write_text("id\ttext\n" + "".join(f"{i}\t{t}\n" for i, t in enumerate(texts)))
    (tmp / "docs.txt").write_text("\n".join(texts) + "\n")
    (tmp / "folder").mkdir()
    for i, t in enumerate(texts):
        (tmp / "folder" / f"{i}.txt").write_text(t)
    return tmp, texts


ESTIMATORS = [lambda: dptopic.LDA(n_topics=2, n_iter=2, verbose=0),
              lambda: dptopic.HDPLDA(n_topics=2, n_iter=2, verbose=0),
              lambda: dptopic.DocDPEM(n_topics=2, verbose=0),
              lambda: dptopic.DocDPCooccurrence(n_topics=2, verbose=0),
              lambda: dptopic.FedLDA(n_topics=2, verbose=0),
              lambda: dptopic.OnlineVB(n_topics=2, verbose=0),
              lambda: dptopic.DPSVI(n_topics=2, verbose=0)]


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("name,call", [("tweets.jsonl", "dptopic.Corpus.from_jsonl("),
                                       ("docs.csv", "dptopic.Corpus.from_csv("),
                                       ("docs.tsv", "delimiter='\\t'"),
                                       ("docs.txt", "dptopic.Corpus.from_texts(open("),
                                       ("folder", "dptopic.Corpus.from_directory(")])
def test_fit_on_a_corpus_file_path_names_the_call_that_reads_it(files, make, name, call):
    tmp, _ = files
    model = make()
    path = str(tmp / name)
    with pytest.raises(DPTopicError) as e:
        model.fit(path)
    msg = str(e.value)
    assert "corrupt corpus shard" not in msg and "\n" not in msg
    assert msg.startswith(f"{type(model).__name__} reads a path only as a prepared corpus (.npz) or a shard folder")
    assert repr(path) in msg and call in msg, msg
    if hasattr(model, "partial_fit"):
        with pytest.raises(DPTopicError, match=re.escape(call)):
            make().partial_fit(path)


def test_the_calls_named_read_the_files(files):
    tmp, texts = files
    for corpus in (dptopic.Corpus.from_jsonl(str(tmp / "tweets.jsonl"), text_field="text"),
                   dptopic.Corpus.from_csv(str(tmp / "docs.csv"), text_column="text"),
                   dptopic.Corpus.from_csv(str(tmp / "docs.tsv"), text_column="text", delimiter="\t"),
                   dptopic.Corpus.from_directory(str(tmp / "folder")),
                   dptopic.Corpus.from_texts(open(str(tmp / "docs.txt"), encoding="utf-8").read().splitlines())):
        assert corpus.n_docs == len(texts)


def test_transform_on_a_path_names_the_call_that_reads_it_in_the_models_words(files):
    tmp, texts = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(texts)
    path = str(tmp / "tweets.jsonl")
    for method in ("transform", "perplexity", "score"):
        with pytest.raises(DPTopicError, match=re.escape("vocabulary=model.vocabulary_")) as e:
            getattr(model, method)(path)
        assert str(e.value).startswith("LDA takes documents here, not a path") and repr(path) in str(e.value)
    theta = model.transform(dptopic.Corpus.from_jsonl(path, text_field="text", vocabulary=model.vocabulary_))
    assert theta.shape == (len(texts), 2)


def test_a_prepared_corpus_path_still_trains(files):
    tmp, texts = files
    corpus = dptopic.Corpus.from_texts(texts)
    saved = corpus.save(tmp / "prepared.npz")
    model = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(str(saved))
    assert model.components_.shape == (2, corpus.vocab_size)
