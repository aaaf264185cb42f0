"""Reading corpus files as text (:mod:`dptopic.corpus.files`): binary files refused as they are read."""
import os

import pytest

from dptopic.errors import DPTopicError


@pytest.mark.parametrize("name", ["big.csv", "big.jsonl", "big.txt", "big.tsv", "big.txt.gz"])
def test_a_large_file_of_nul_bytes_is_refused_at_its_first_block_in_bounded_memory(tmp_path, name):
    import gzip
    import tracemalloc

    from dptopic.corpus.readers import read_corpus

    path = tmp_path / name
    if name.endswith(".gz"):        # 64 MiB of zeros compress to a small file
        path.write_bytes(gzip.compress(b"apple banana\n" + bytes(64 * 2 ** 20), compresslevel=1))
    else:
        path.write_bytes(b"")
        os.truncate(path, 256 * 2 ** 20)      # sparse: 256 MiB of NUL bytes that take no disk
    tracemalloc.start()
    try:
        with pytest.raises(DPTopicError, match="NUL byte"):
            read_corpus(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2 ** 20, f"{peak / 2 ** 20:.0f} MiB held to refuse {name}"


def test_a_nul_byte_after_the_first_block_is_refused_naming_its_line(tmp_path):
    from dptopic.corpus.readers import read_corpus

    path = tmp_path / "late.csv"
    path.write_bytes(b"text\n" + b"apple banana cherry\n" * 20_000 + b"grape\x00lemon\n" + b"mango melon\n" * 10)
    with pytest.raises(DPTopicError, match="line 20002"):
        read_corpus(path)


def test_a_gz_suffix_in_any_case_is_read_through_gzip(tmp_path):
    """``corpus.TXT.GZ`` is gzipped text as ``corpus.txt.gz`` is, by the whole-file reader and the line reader."""
    import gzip

    from dptopic.corpus import files

    path = tmp_path / "corpus.TXT.GZ"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("river water boat\nmoney loan bank\n")
    assert files.read_text_file(path) == "river water boat\nmoney loan bank\n"
    with files._open_text(path) as fh:
        assert fh.read().splitlines() == ["river water boat", "money loan bank"]
    assert files.is_gzip_name("a.Gz") and not files.is_gzip_name("a.gzip")
