"""The documents' keys on disk (dptopic.corpus.key_file): the same rows as in memory, in files without a name."""
import os
import tempfile

import numpy as np
import pytest

from dptopic.corpus.identity import TokenKeys, token_keys
from dptopic.corpus.key_file import KeysOnDisk


def some_keys(n_docs: int, seed: int) -> TokenKeys:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 40, n_docs)
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    return token_keys(ptr, rng.integers(0, 30, int(ptr[-1])), [f"w{i}" for i in range(30)])


def assert_same_keys(a: TokenKeys, b: TokenKeys) -> None:
    for f in TokenKeys.FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f


def test_chunks_appended_read_back_as_their_concatenation():
    chunks = [some_keys(n, seed) for seed, n in enumerate([50, 1, 0, 37])]
    on_disk = KeysOnDisk(chunks[0])
    for c in chunks[1:]:
        on_disk.append(c)
    whole = TokenKeys.concatenate(chunks)
    assert len(on_disk) == len(whole) == 88
    assert_same_keys(on_disk.load(), whole)
    assert_same_keys(on_disk.load(), whole)         # read again: the files are not consumed


def test_rows_taken_or_kept_are_the_rows_of_the_keys_in_memory():
    keys = some_keys(60, 1)
    on_disk = KeysOnDisk(keys)
    rows = np.array([59, 0, 3, 3, 17])
    assert_same_keys(on_disk.take(rows), keys.take(rows))
    kept = on_disk.kept(rows)
    assert isinstance(kept, KeysOnDisk) and len(kept) == 5
    assert_same_keys(kept.load(), keys.take(rows))
    mask = np.arange(60) % 7 == 0
    assert_same_keys(on_disk.take(mask), keys.take(mask))


def test_keys_of_another_shape_are_refused_and_nothing_is_written():
    keys = some_keys(10, 2)
    on_disk = KeysOnDisk(keys)
    odd = TokenKeys(keys.bags, keys.bands[:, :3], keys.signatures, keys.lengths)
    with pytest.raises(ValueError, match="bands"):
        on_disk.append(odd)
    assert len(on_disk) == 10
    assert_same_keys(on_disk.load(), keys)


def test_the_files_have_no_name_in_the_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    on_disk = KeysOnDisk(some_keys(20, 3))
    assert len(on_disk) == 20 and os.listdir(tmp_path) == []


def test_a_file_cut_short_is_an_os_error_not_short_keys():
    on_disk = KeysOnDisk(some_keys(20, 4))
    on_disk._files["bands:3"].truncate(100)
    with pytest.raises(OSError, match="ended after"):
        on_disk.load()


def test_the_ledgers_documents_and_a_save_read_keys_on_disk_once_and_leave_the_sketches_there(tmp_path,
                                                                                            monkeypatch):
    from dptopic.corpus import Corpus
    from dptopic.corpus.ledger_documents import documents_of

    rng = np.random.default_rng(5)
    lengths = rng.integers(1, 30, 40)
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(0, 12, int(ptr[-1]))
    words = [f"w{i}" for i in range(12)]
    keys = token_keys(ptr, ids, words)
    corpus = Corpus(ptr, ids, words, token_keys=KeysOnDisk(keys))
    reads = []
    load, column = KeysOnDisk.load, KeysOnDisk.column
    monkeypatch.setattr(KeysOnDisk, "load", lambda self: reads.append("load") or load(self))
    monkeypatch.setattr(KeysOnDisk, "column", lambda self, f: reads.append(f) or column(self, f))
    docs = documents_of(corpus)
    # no column read: the sketches stay on disk for the ledger's record to read a band at a time, the signatures
    # never whole, the bags and lengths whole by each step that reads them; the read bags are written beside them
    assert reads == []
    assert np.array_equal(np.asarray(docs.bags), keys.bags) and np.array_equal(np.asarray(docs.lengths), keys.lengths)
    assert sorted(reads) == ["bags", "lengths"]
    assert np.asarray(docs.read_bags).dtype == np.uint64 and len(docs.read_bags) == 40
    assert docs.bands.column(2).tolist() == keys.bands[:, 2].tolist()
    assert np.array_equal(np.asarray(docs.bands), keys.bands) and np.array_equal(docs.signatures, keys.signatures)
    reads.clear()
    corpus.save(tmp_path / "c.npz")
    assert reads.count("load") == 1


def test_the_bands_are_kept_a_file_a_band_and_read_a_band_at_a_time():
    from dptopic.corpus.key_file import BandsOnDisk

    chunks = [some_keys(n, seed) for seed, n in enumerate([30, 0, 12])]
    on_disk = KeysOnDisk(chunks[0])
    for c in chunks[1:]:
        on_disk.append(c)
    whole = TokenKeys.concatenate(chunks)
    kept = on_disk.with_sketches_on_disk()
    bands = kept.bands
    assert isinstance(bands, BandsOnDisk) and np.shape(bands) == whole.bands.shape == (42, on_disk.n_bands)
    assert len(bands) == 42 and bands.size == whole.bands.size and bands.ndim == 2
    for j in range(on_disk.n_bands):
        got = bands.column(j)
        assert got.dtype == np.uint64 and np.array_equal(got, whole.bands[:, j])
    assert np.array_equal(np.asarray(bands), whole.bands) and np.asarray(bands, dtype=np.int64).dtype == np.int64
    for f in ("bags", "signatures", "lengths"):
        assert np.array_equal(getattr(kept, f), getattr(whole, f))


def _signatures_written_in_three_chunks():
    """Keys of 557 documents written to disk in three appends (one of 7 rows): the keys, the signatures in memory and
    the signatures on disk."""
    chunks = [some_keys(n, seed) for seed, n in enumerate([300, 7, 250])]
    on_disk = KeysOnDisk(chunks[0])
    for c in chunks[1:]:
        on_disk.append(c)
    return on_disk, TokenKeys.concatenate(chunks).signatures, on_disk.with_sketches_on_disk().signatures


@pytest.mark.parametrize("bucket_bytes", [1 << 30, 3000])
def test_signatures_on_disk_are_read_in_any_order_a_batch_at_a_time_never_whole(bucket_bytes, monkeypatch):
    """SignaturesOnDisk.batches gives the rows asked for, in the order asked, a batch at a time: from one read in
    order (one bucket), or through temporary buckets (many), the file read a chunk at a time, never whole."""
    import dptopic.corpus.key_file as kf

    on_disk, whole, sig = _signatures_written_in_three_chunks()
    assert isinstance(sig, kf.SignaturesOnDisk) and sig.shape == whole.shape and len(sig) == 557
    assert sig.size == whole.size and sig.dtype == whole.dtype and np.array_equal(np.asarray(sig), whole)
    monkeypatch.setattr(kf, "CHUNK_ROWS", 64)
    monkeypatch.setattr(kf, "BUCKET_BYTES", bucket_bytes)
    monkeypatch.setattr(KeysOnDisk, "column", lambda *a: pytest.fail("the whole column read"))
    rows = np.random.default_rng(3).permutation(557)[:401]
    got = list(sig.batches(rows, 50))
    assert [len(b) for b in got] == [50] * 8 + [1]
    assert np.array_equal(np.concatenate(got), whole[rows])
    assert all(b.flags.c_contiguous and b.dtype == whole.dtype for b in got)
    assert list(sig.batches(rows[:0], 50)) == []


def test_a_column_on_disk_reads_back_the_array_written_each_time_it_is_read():
    from dptopic.corpus.key_file import ColumnOnDisk

    values = np.arange(1000, dtype=np.uint64) * np.uint64(2**40 + 7)
    col = ColumnOnDisk.of_array(values)
    assert isinstance(col, ColumnOnDisk) and len(col) == 1000 and col.shape == (1000,) and col.dtype == np.uint64
    first, again = np.asarray(col), np.asarray(col)
    assert np.array_equal(first, values) and np.array_equal(again, values) and first is not again
    first[:] = 0                                            # a read is the caller's: the file is unchanged
    assert np.array_equal(np.asarray(col, dtype=np.int64), values.astype(np.int64))
    assert len(np.asarray(ColumnOnDisk.of_array(values[:0]))) == 0
    with pytest.raises(ValueError, match="1-D"):
        ColumnOnDisk.of_array(values.reshape(10, 100))


def test_a_column_that_cannot_be_written_to_disk_stays_the_array(monkeypatch):
    from dptopic.corpus import key_file

    def no_room(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(key_file.tempfile, "TemporaryFile", no_room)
    values = np.arange(5, dtype=np.uint64)
    assert key_file.ColumnOnDisk.of_array(values) is not None
    assert np.array_equal(key_file.ColumnOnDisk.of_array(values), values)
    assert isinstance(key_file.ColumnOnDisk.of_array(values), np.ndarray)


def test_signatures_taken_at_any_rows_are_those_rows_and_skip_the_stretches_that_hold_none(monkeypatch):
    """SignaturesOnDisk.take gives the rows asked for (any order, repeats) as the table in memory does, reading in
    order only the stretches of TAKE_ROWS rows that hold one of them."""
    import dptopic.corpus.key_file as kf

    on_disk, whole, sig = _signatures_written_in_three_chunks()
    monkeypatch.setattr(kf, "TAKE_ROWS", 50)
    read = []
    between = KeysOnDisk.rows_between
    monkeypatch.setattr(KeysOnDisk, "rows_between", lambda self, f, a, b: read.append((a, b)) or between(self, f, a, b))
    monkeypatch.setattr(KeysOnDisk, "column", lambda *a: pytest.fail("the whole column read"))
    for rows in ([556, 3, 3, 120, 0, 555], [], list(range(557))[::-1]):
        read.clear()
        got = sig.take(np.array(rows, dtype=np.int64))
        assert got.shape == (len(rows), whole.shape[1]) and np.array_equal(got, whole[np.array(rows, dtype=np.int64)])
        assert read == sorted({(r // 50 * 50, min(r // 50 * 50 + 50, 557)) for r in rows})
