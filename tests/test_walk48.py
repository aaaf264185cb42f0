"""Stop 48's fixes outside the service (walk-throughs and the list left by stop 47), one test each."""
from __future__ import annotations

import numpy as np
import pytest


def _small_model(tmp_path):
    from dptopic import LDA
    from dptopic.corpus import Corpus

    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(["apple", "pear", "plum", "kiwi", "fig", "lime"], 12)) for _ in range(20)]
    m = LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(Corpus.from_texts(texts))
    m.save(tmp_path / "m")
    return m, tmp_path / "m"


def test_load_reads_each_array_file_once_and_checks_the_bytes_it_parses(tmp_path, monkeypatch):
    import dptopic._io as io_mod
    from dptopic import LDA

    m, folder = _small_model(tmp_path)
    hashed = []
    real = io_mod._HashingReader.hexdigest

    def spy(self):              # every array's digest comes from the reader that fed numpy its bytes
        hashed.append(self)
        return real(self)

    def no_second_pass(path):
        raise AssertionError(f"{path} hashed by a second read")

    def no_whole_file(self):
        raise AssertionError(f"{self} read whole into memory beside its array")

    opened = []
    real_open = open

    def counting_open(file, *a, **k):
        if str(file).endswith(".npy"):
            opened.append(str(file))
        return real_open(file, *a, **k)

    def no_np_load(*a, **k):
        raise AssertionError("np.load reads the file again, apart from the bytes hashed")

    monkeypatch.setattr("builtins.open", counting_open)
    monkeypatch.setattr(np, "load", no_np_load)
    monkeypatch.setattr(io_mod._HashingReader, "hexdigest", spy)
    monkeypatch.setattr(io_mod, "_file_sha256", no_second_pass)
    from pathlib import Path
    monkeypatch.setattr(Path, "read_bytes", no_whole_file)
    loaded = LDA.load(folder)
    files = sorted(str(p) for p in folder.glob("*.npy"))
    assert len(hashed) == len(files) and len(set(map(id, hashed))) == len(hashed)
    assert sorted(opened) == files                   # each array file opened once
    np.testing.assert_array_equal(loaded.components_, m.components_)
    monkeypatch.undo()
    # an edited array is still refused by its digest
    target = sorted(folder.glob("*.npy"))[0]
    np.save(target, np.load(target) * 1.0 + 1e-3)
    with pytest.raises(Exception, match="SHA-256 differs"):
        LDA.load(folder)


def test_load_refuses_bytes_appended_to_an_array_file(tmp_path):
    """The digest covers the whole file: bytes after the array (which numpy would not read) are still refused."""
    from dptopic import LDA

    _, folder = _small_model(tmp_path)
    target = sorted(folder.glob("*.npy"))[0]
    with open(target, "ab") as f:
        f.write(b"\x00" * 3)
    with pytest.raises(Exception, match="SHA-256 differs"):
        LDA.load(folder)


def test_a_model_fitted_on_uci_files_records_that_its_words_came_with_the_counts(tmp_path):
    from dptopic import LDA
    from dptopic.corpus import Corpus
    from dptopic.corpus.preprocess import BAG_OF_WORDS_FILE

    (tmp_path / "vocab.txt").write_text("apple\npear\nplum\nfig\n")
    rows = [(d, w, 1 + (d + w) % 3) for d in range(1, 9) for w in range(1, 5) if (d + w) % 2]
    (tmp_path / "docword.txt").write_text(f"8\n4\n{len(rows)}\n" + "".join(f"{d} {w} {c}\n" for d, w, c in rows))
    c = Corpus.from_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")
    m = LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(c)
    assert m.tokenizer_["source"] == BAG_OF_WORDS_FILE and "UCI vocab file" in m.tokenizer_["tokens"]
    m.save(tmp_path / "m")
    assert LDA.load(tmp_path / "m").tokenizer_["source"] == BAG_OF_WORDS_FILE
    c.save(tmp_path / "c")          # the corpus keeps it through a save (dptopic corpus prepare)
    assert LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(Corpus.load(tmp_path / "c")).tokenizer_["source"] \
        == BAG_OF_WORDS_FILE
    # reading text into it warns with advice for a bag-of-words file (there is no vectorizer to reuse)
    import warnings

    from dptopic.corpus.preprocess import warn_if_other_tokenizer

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warn_if_other_tokenizer(m.tokenizer_, words=["apple", "w1500"])
    (msg,) = [str(w.message) for w in seen]
    assert "bag-of-words file was counted" in msg and "pipeline.transform" not in msg and "'w1500'" in msg
    # text still records dptopic's own tokeniser
    assert "source" not in LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(
        Corpus.from_texts(["apple pear plum fig", "fig plum pear apple"] * 4)).tokenizer_


def test_a_loaded_model_checks_a_dataframes_columns_as_the_fitted_one_does(tmp_path):
    pd = pytest.importorskip("pandas")
    import dptopic
    from dptopic.errors import DPTopicError

    df = pd.DataFrame(np.random.default_rng(0).poisson(1.0, (60, 6)), columns=list("abcdef"))
    m = dptopic.LDA(n_topics=2, n_iter=10, seed=0, verbose=0).fit(df)
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m")
    np.testing.assert_array_equal(loaded.feature_names_in_, m.feature_names_in_)
    assert loaded.n_features_in_ == 6
    reordered = df[df.columns[::-1]]
    for model in (m, loaded):
        with pytest.raises(DPTopicError, match="columns"):
            model.transform(reordered[:1])
        with pytest.raises(DPTopicError, match="feature_names_in_"):
            model.get_feature_names_out(list("fedcba"))
    np.testing.assert_allclose(loaded.transform(df[:3]), m.transform(df[:3]))
    # a model fitted without column names stays without them after a load
    m2 = dptopic.LDA(n_topics=2, n_iter=10, seed=0, verbose=0).fit(df.to_numpy())
    m2.save(tmp_path / "m2")
    assert not hasattr(dptopic.load(tmp_path / "m2"), "feature_names_in_")


def test_the_pipeline_saving_recipe_of_the_sklearn_page_runs_as_written(tmp_path, monkeypatch):
    from pathlib import Path

    from sklearn.pipeline import Pipeline

    import dptopic

    page = (Path(__file__).resolve().parents[1] / "docs" / "sklearn.md").read_text()
    block = page.split("### Saving a fitted pipeline", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    rng = np.random.default_rng(0)
    words = ["apple", "pear", "plum", "kiwi", "fig", "lime", "rock", "sand", "clay", "stone", "the", "and"]
    texts = [" ".join(rng.choice(words[:6] if i % 2 else words[6:], 15)) for i in range(60)]
    pipe = Pipeline([("vec", dptopic.CountVectorizer(min_df=2, stop_words="english")),
                     ("lda", dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0))]).fit(texts)
    before = pipe.transform(texts)
    monkeypatch.chdir(tmp_path)
    scope = {"pipe": pipe, "texts": texts}
    exec(compile(block, "docs/sklearn.md", "exec"), scope)
    np.testing.assert_allclose(scope["theta"], before)
    assert scope["pipe"] is not pipe and "the" not in scope["lda"].vocabulary_.words


@pytest.mark.parametrize("cls, other, ours", [("LDA", "max_iter", "n_iter"), ("LDA", "doc_topic_prior", "alpha"),
                                               ("LDA", "topic_word_prior", "beta"), ("OnlineVB", "topic_word_prior", "eta"),
                                               ("OnlineVB", "max_iter", "n_epochs"), ("OnlineVB", "learning_decay", "kappa"),
                                               ("FedLDA", "max_iter", "rounds"), ("LDA", "num_topics", "n_topics"),
                                               ("LDA", "evaluate_every", "eval_every")])
def test_another_librarys_parameter_name_is_answered_with_dptopics(cls, other, ours):
    import dptopic
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match=f"takes {ours}=, not {other}="):
        getattr(dptopic, cls)(**{other: 3})


def test_an_option_dptopic_does_not_have_is_named_with_the_parameters_it_has():
    import dptopic
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="LDA has no learning_decay= .*n_topics, alpha, beta, n_iter"):
        dptopic.LDA(learning_decay=0.7)
    with pytest.raises(DPTopicError, match="LDA has no learning_method="):
        dptopic.LDA(learning_method="online")
    assert dptopic.OnlineVB(kappa=0.7).kappa == 0.7 and dptopic.LDA(eval_every=5).eval_every == 5


def test_a_column_selection_of_a_vectorizer_matrix_keeps_its_words():
    import dptopic

    texts = ["apple pear plum rock", "rock sand clay apple", "pear plum fig sand", "clay stone rock fig"] * 5
    X = dptopic.CountVectorizer().fit_transform(texts)
    words = list(X.feature_names)
    for cols in ([5, 1, 4], slice(None, None, -1), np.array([True, False] * (len(words) // 2) + [True] * (len(words) % 2))):
        sub = X[:, cols]
        assert list(sub.feature_names) == list(np.asarray(words, dtype=object)[cols])
        np.testing.assert_array_equal(sub.toarray(), X.toarray()[:, cols])
        assert sub.public_vocabulary is False
        m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(sub)
        assert list(m.vocabulary_.words) == list(sub.feature_names)
    assert list(X[2:5, :].feature_names) == words         # rows only: unchanged
    pub = dptopic.CountVectorizer(vocabulary=words).fit_transform(texts)
    assert pub.public_vocabulary and not pub[:, [0, 1]].public_vocabulary   # a selection may come from the data


def test_fedlda_warns_when_the_vocabulary_is_not_listed_most_common_first():
    import warnings

    from dptopic import FedLDA
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=120, vocab_size=60, n_topics=3, doc_length=30, seed=0).corpus
    counts = np.bincount(c.word_ids, minlength=c.vocab_size)
    words = np.asarray(c.vocabulary.words, dtype=object)
    by_count = list(words[np.argsort(-counts, kind="stable")])
    shuffled = list(np.random.default_rng(1).permutation(by_count))

    def users(order):
        r = c.restrict(order, drop_empty=False)
        return [r.subset(range(i, i + 10)) for i in range(0, 120, 10)]

    def fit(order):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            FedLDA(n_topics=3, epsilon_per_entry=5.0, rounds=1, pad_length=16, report_words=15, seed=0,
                   verbose=0).fit(users(order))
        return [str(w.message) for w in seen if "most common first" in str(w.message)]

    assert fit(by_count) == []
    said = fit(shuffled)
    assert len(said) == 1 and "first 15 words" in said[0] and "outside the guarantee" in said[0], said
