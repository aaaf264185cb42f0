"""The streaming reader (corpus/stream.py): a JSONL file read in chunks, in this process or in a pool, gives the corpus
``Corpus.from_jsonl`` gives (arrays, ids, ledger keys, metadata), so a model trained on it is the same."""
import json
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.corpus import Corpus, stream
from dptopic.corpus.identity import TokenKeys
from dptopic.corpus.readers import read_corpus
from dptopic.errors import DPTopicError

WORDS = ["market", "stocks", "trade", "price", "goal", "match", "team", "score", "the", "and", "café", "naïve",
         "Économie", "straße", "http://example.org/page", "@handle", "mail@example.com", "x", "vote", "party"]


def write_corpus(path, n=1500, seed=0, blank_every=97):
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            if i % blank_every == 0:
                f.write("\n")
            text = " ".join(rng.choice(WORDS, size=int(rng.integers(0, 25))))
            f.write(json.dumps({"text": text, "id": f"d{i}", "user": f"u{i % 40}", "label": int(i % 3)}) + "\n")
    return path


def assert_same_corpus(a: Corpus, b: Corpus) -> None:
    assert np.array_equal(a.doc_ptr, b.doc_ptr) and np.array_equal(a.word_ids, b.word_ids)
    assert a.word_ids.dtype == b.word_ids.dtype
    assert a.vocabulary.words == b.vocabulary.words
    assert (a.doc_ids, a.labels, a.user_ids) == (b.doc_ids, b.labels, b.user_ids)
    assert np.array_equal(a.content_keys, b.content_keys)
    for field in TokenKeys.FIELDS:
        assert np.array_equal(getattr(a.token_keys, field), getattr(b.token_keys, field)), field
    assert a.metadata == b.metadata
    assert (a.n_empty_dropped, a._vocabulary_cut) == (b.n_empty_dropped, b._vocabulary_cut)


READINGS = [dict(max_vocab=8), dict(max_vocab=None, min_df=2), dict(max_df=0.5, stop_words=None),
            dict(lowercase=False, keep_urls=True, max_vocab=None), dict(vocabulary=["market", "goal", "café", "zzz"]),
            dict(vocabulary=["market", "goal", "café"], drop_empty=False)]


@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("processes,chunk_docs", [(1, stream.CHUNK_DOCS), (1, 7), (2, 113)])
def test_the_stream_reads_the_corpus_from_jsonl_reads(tmp_path, reading, processes, chunk_docs):
    p = write_corpus(tmp_path / "c.jsonl")
    fields = dict(id_field="id", user_field="user", label_field="label")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the given vocabulary's unreachable word, said by both
        want = Corpus.from_jsonl(p, **fields, **reading)
        got = stream.read_jsonl(p, **fields, **reading, processes=processes, chunk_docs=chunk_docs)
    assert_same_corpus(got, want)


def test_read_corpus_reads_jsonl_through_the_stream(tmp_path, monkeypatch):
    p = write_corpus(tmp_path / "c.jsonl", n=300)
    calls = []
    read = stream.read_chunk
    monkeypatch.setattr(stream, "read_chunk", lambda *a: calls.append(a[2]) or read(*a))
    monkeypatch.setattr(stream, "CHUNK_DOCS", 100)
    monkeypatch.setattr(stream, "default_processes", lambda: 1)     # a pool's workers would count their own calls
    c = read_corpus(p, text_field="text", id_field="id", user_field="user")
    assert calls == [1, 101, 201, 301]          # the first line of each chunk (a blank line each 97th document)
    assert_same_corpus(c, Corpus.from_jsonl(p, id_field="id", user_field="user"))


def test_a_pool_holds_a_few_chunks_of_text_whatever_the_files_size(tmp_path, monkeypatch):
    p = write_corpus(tmp_path / "c.jsonl", n=2000)
    made, taken, ahead = [0], [0], []
    lines_of = stream._chunks_of_lines

    def counted(*a):
        for item in lines_of(*a):
            made[0] += 1
            ahead.append(made[0] - taken[0])
            yield item

    add = stream._Appended.add

    def add_counted(self, chunk):
        taken[0] += 1
        add(self, chunk)

    monkeypatch.setattr(stream, "_chunks_of_lines", counted)
    monkeypatch.setattr(stream._Appended, "add", add_counted)
    stream.read_jsonl(p, processes=2, chunk_docs=20)
    assert made[0] > 90 and max(ahead) <= 2 * 2 + 1


@pytest.mark.parametrize("bad", ['{"text": 3}', '{"body": "no text field"}'])
def test_a_bad_line_in_a_later_chunk_is_refused_as_from_jsonl_refuses_it(tmp_path, bad):
    p = write_corpus(tmp_path / "c.jsonl", n=400)
    with open(p, "a") as f:
        f.write(bad + "\n" + json.dumps({"text": "more words here"}) + "\n")
    with pytest.raises(DPTopicError) as want:
        Corpus.from_jsonl(p)
    for processes in (1, 2):        # an error raised in a worker arrives whole: its message and what it names
        with pytest.raises(DPTopicError) as got:
            stream.read_jsonl(p, processes=processes, chunk_docs=50)
        assert str(got.value) == str(want.value) and "line 406" in str(got.value)
        assert type(got.value) is type(want.value) and vars(got.value) == vars(want.value)


def test_an_empty_file_is_refused_as_from_jsonl_refuses_it(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text("\n\n")
    with pytest.raises(DPTopicError, match="holds no records"):
        stream.read_jsonl(p)


@pytest.mark.parametrize("unit,kw", [("document", {}), ("user", dict(user_field="user"))])
def test_a_model_trained_on_the_streamed_corpus_is_the_same(tmp_path, unit, kw):
    p = write_corpus(tmp_path / "c.jsonl", n=1200)
    fitted = []
    for corpus in (Corpus.from_jsonl(p, **kw), stream.read_jsonl(p, processes=2, chunk_docs=100, **kw)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = dptopic.train(corpus, unit=unit, epsilon=2.0, n_topics=3, seed=5, metrics=False)
        fitted.append(r.model.components_)
    assert np.array_equal(fitted[0], fitted[1])


@pytest.mark.parametrize("processes", [1, 2])
def test_the_shards_of_a_corpus_read_as_one_file_of_their_lines(tmp_path, processes):
    p = write_corpus(tmp_path / "c.jsonl", n=700)
    lines = p.read_text().splitlines(keepends=True)
    shards = [tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c2.jsonl"]
    for q, (a, b) in zip(shards, [(0, 100), (100, 450), (450, len(lines))]):
        q.write_text("".join(lines[a:b]))
    got = stream.read_jsonl(shards, user_field="user", processes=processes, chunk_docs=60)
    assert_same_corpus(got, Corpus.from_jsonl(p, user_field="user"))


def test_the_progress_bar_counts_the_documents_read(tmp_path, monkeypatch):
    import contextlib

    p = write_corpus(tmp_path / "c.jsonl", n=500)
    advanced, opened = [], []

    class Bar:
        def advance(self, n=1, **fields):
            advanced.append(n)

    @contextlib.contextmanager
    def bar(total, description, verbose=1, transient=False):
        opened.append((total, description, transient))
        yield Bar()

    monkeypatch.setattr(stream._progress, "progress_bar", bar)
    monkeypatch.setattr(stream, "PROGRESS_MIN_DOCS", 100)
    c = stream.read_jsonl(p, progress=True, chunk_docs=60, processes=1)
    assert opened == [(None, "reading", True)] and sum(advanced) == c.n_docs + c.n_empty_dropped
    stream.read_jsonl(p, chunk_docs=60, processes=1)        # no bar unless asked (the CLI asks)
    assert len(opened) == 1


def test_chunks_are_joined_as_numpy_concatenates_them_each_let_go_once_copied():
    rng = np.random.default_rng(3)
    for shape in ((7,), (5, 32)):
        parts = [rng.integers(0, 2**63, (n, *shape[1:]), dtype=np.uint64) for n in (3, 0, 9, 1)]
        want = np.concatenate(parts)
        got = stream._joined(parts)
        assert got.dtype == want.dtype and np.array_equal(got, want) and parts == []


@pytest.mark.parametrize("reading", [READINGS[0], READINGS[4], READINGS[5]])
@pytest.mark.parametrize("processes,chunk_docs", [(1, 7), (2, 113)])
def test_a_corpus_past_keys_in_memory_keeps_its_keys_on_disk_and_reads_the_same(tmp_path, monkeypatch, reading,
                                                                                 processes, chunk_docs):
    from dptopic.corpus import key_file

    p = write_corpus(tmp_path / "c.jsonl")
    fields = dict(id_field="id", user_field="user", label_field="label")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = stream.read_jsonl(p, **fields, **reading, processes=processes, chunk_docs=chunk_docs)
        monkeypatch.setattr(key_file, "KEYS_IN_MEMORY", 100)
        got = stream.read_jsonl(p, **fields, **reading, processes=processes, chunk_docs=chunk_docs)
    assert isinstance(got._token_keys, key_file.KeysOnDisk) and isinstance(want._token_keys, TokenKeys)
    assert_same_corpus(got, want)
    assert got.token_keys is not got.token_keys         # read back at each read, held by its reader alone
    rows = np.arange(0, got.n_docs, 3)
    assert_same_corpus(got.subset(rows), want.subset(rows))
    assert isinstance(got.restrict(got.vocabulary.words[:2], drop_empty=False)._token_keys, key_file.KeysOnDisk)
    assert_same_corpus(Corpus.load(got.save(tmp_path / "got.npz")), Corpus.load(want.save(tmp_path / "want.npz")))


@pytest.mark.parametrize("fails_at", ["open", "append keys", "append ids"])
def test_keys_and_ids_the_temporary_folder_cannot_take_stay_in_memory(tmp_path, monkeypatch, fails_at):
    """No temporary folder, or one that runs out of room partway: the keys or the ids that could not be written are
    kept in memory, with none lost (the corpus read in memory)."""
    from dptopic.corpus import key_file, token_file

    p = write_corpus(tmp_path / "c.jsonl")
    want = stream.read_jsonl(p, processes=1, chunk_docs=50)
    monkeypatch.setattr(key_file, "KEYS_IN_MEMORY", 100)
    monkeypatch.setattr(token_file, "TOKENS_IN_MEMORY", 100)
    if fails_at == "open":
        def no_file(*a, **k):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(key_file.tempfile, "TemporaryFile", no_file)
    else:
        store = key_file.KeysOnDisk if fails_at == "append keys" else token_file.TokensOnDisk
        appended = store.append

        def full_after_some(self, part):
            if len(self) > 300:
                raise OSError(28, "No space left on device")
            appended(self, part)
        monkeypatch.setattr(store, "append", full_after_some)
    got = stream.read_jsonl(p, processes=1, chunk_docs=50)
    assert isinstance(got._token_keys, TokenKeys) == (fails_at != "append ids")
    assert isinstance(got._word_ids, np.ndarray) == (fails_at != "append keys")
    assert_same_corpus(got, want)


@pytest.mark.parametrize("reading", READINGS)
def test_a_corpus_past_tokens_in_memory_keeps_its_ids_on_disk_and_reads_the_same(tmp_path, monkeypatch, reading):
    """Past TOKENS_IN_MEMORY documents the chunks' ids go to a file, the vocabulary is counted and cut from it a block
    at a time into another, and the corpus keeps its ids there: the same corpus as read in memory."""
    from dptopic.corpus import token_file

    p = write_corpus(tmp_path / "c.jsonl")
    fields = dict(id_field="id", user_field="user", label_field="label")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = stream.read_jsonl(p, **fields, **reading, processes=1, chunk_docs=200)
        monkeypatch.setattr(token_file, "TOKENS_IN_MEMORY", 100)
        monkeypatch.setattr(token_file, "BLOCK_DOCS", 70)
        load = token_file.TokensOnDisk.load
        monkeypatch.setattr(token_file.TokensOnDisk, "load", lambda self: pytest.fail("the ids read whole"))
        got = stream.read_jsonl(p, **fields, **reading, processes=1, chunk_docs=200)
        monkeypatch.setattr(token_file.TokensOnDisk, "load", load)
    assert isinstance(got._word_ids, token_file.TokensOnDisk) and isinstance(want._word_ids, np.ndarray)
    rows = np.arange(0, got.n_docs, 3)
    assert np.array_equal(got.subset(rows).word_ids, want.subset(rows).word_ids)
    assert_same_corpus(got, want)
