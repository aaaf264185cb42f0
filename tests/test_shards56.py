"""A list that mixes corpus files with texts is refused (never trained on as texts), and a complete shard folder
whose files were renamed out of order trains on its documents in the order its 'corpus prepare' run wrote them."""
import os

import numpy as np
import pytest

from dptopic import LDA
from dptopic.backends import training_source
from dptopic.backends.shards import ShardSet, write_shards
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError


def _corpus():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    return Corpus.from_tokens([list(rng.choice(words, size=8)) for _ in range(40)])


@pytest.fixture
def shards(tmp_path):
    return write_shards(_corpus(), tmp_path / "sh", 4)


def test_a_list_mixing_a_shard_and_texts_is_refused(shards):
    with pytest.raises(DPTopicError, match=r"mixes 1 corpus file\(s\) such as .*shard-00000.npz' with 2 texts"):
        LDA(n_topics=2, n_iter=2, verbose=0).fit([str(shards[0]), "a text about w1 w2", "another w3 w4"])
    with pytest.raises(DPTopicError, match="mixes 1 corpus file"):
        training_source([shards[0], "a text about w1 w2"])


def test_texts_that_merely_end_in_npz_are_still_texts(tmp_path):
    c = training_source(["the file report.npz", "no such file.npz here", "plain text"])
    assert isinstance(c, Corpus) and c.n_docs == 3


def test_a_complete_folder_renamed_out_of_order_is_read_in_its_runs_order(shards):
    folder = shards[0].parent
    expected = training_source(folder).load_all()
    for j in range(4):                                  # rotate the names: shard j's file is now shard-(j+1 mod 4)
        os.rename(folder / f"shard-{j:05d}.npz", folder / f"tmp-{j}.npz")
    for j in range(4):
        os.rename(folder / f"tmp-{j}.npz", folder / f"shard-{(j + 1) % 4:05d}.npz")
    s = training_source(folder)
    got = s.load_all()
    assert np.array_equal(got.doc_ptr, expected.doc_ptr) and np.array_equal(got.word_ids, expected.word_ids)
    assert [p.name for p in s.paths] == ["shard-00001.npz", "shard-00002.npz", "shard-00003.npz", "shard-00000.npz"]
    LDA(n_topics=2, n_iter=2, verbose=0, seed=0).fit(folder)
