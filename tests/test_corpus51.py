"""A text folder holding a broken link is refused in one line (the document it stood for is not left out unawares)."""
import os

import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError


def test_a_broken_link_in_a_text_folder_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("apple banana cherry\n")
    (tmp_path / "b.txt").write_text("dog elephant fish\n")
    os.symlink(tmp_path / "gone.txt", tmp_path / "c.txt")
    with pytest.raises(DPTopicError, match="broken link") as e:
        Corpus.from_directory(tmp_path)
    assert "c.txt" in str(e.value) and "\n" not in str(e.value)
    os.remove(tmp_path / "c.txt")
    os.symlink(tmp_path / "b.txt", tmp_path / "c.txt")          # a working link is a document like any other
    assert Corpus.from_directory(tmp_path).n_docs == 3


def test_a_broken_hidden_link_is_left_out_like_any_hidden_file(tmp_path):
    (tmp_path / "a.txt").write_text("apple banana cherry\n")
    os.symlink(tmp_path / "gone.txt", tmp_path / ".c.txt")
    assert Corpus.from_directory(tmp_path).n_docs == 1
