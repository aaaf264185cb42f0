"""Shard lists and folders: a missing shard in a list is refused (never read as text), a shard given twice or copied
is refused, a relative shard folder reaches Dask workers that run elsewhere, a killed run's atomic-write temporaries
go with the next --overwrite, and an extra shard in a folder is named; a list mixing corpus files and texts is
refused, and a complete folder renamed out of order is read in its prepare run's order."""
import os
import re
import shutil

import numpy as np
import pytest

from dptopic import LDA, DocDPEM
from dptopic.backends import training_source
from dptopic.corpus.shards import ShardSet, write_shards
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError


def _corpus():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    return Corpus.from_tokens([list(rng.choice(words, size=8)) for _ in range(40)])


@pytest.fixture
def shards(tmp_path):
    return write_shards(_corpus(), tmp_path / "sh", 4)


@pytest.mark.parametrize("cls,kw", [(LDA, dict(n_iter=2)), (DocDPEM, dict(epsilon=1.0))])
def test_a_missing_shard_in_a_list_is_refused_not_read_as_text(shards, cls, kw):
    missing = str(shards[0].parent / "shard-00009.npz")
    with pytest.raises(DPTopicError, match=re.escape(f"corpus shard {missing!r} does not exist")):
        cls(n_topics=2, verbose=0, **kw).fit([str(shards[0]), missing])


def test_a_list_of_npz_names_is_a_shard_source_even_when_none_exists(tmp_path):
    with pytest.raises(DPTopicError, match="corpus shard 'a.npz' does not exist"):
        training_source(["a.npz", "b.NPZ"])


@pytest.mark.parametrize("cls,kw", [(LDA, dict(n_iter=2)), (DocDPEM, dict(epsilon=1.0))])
def test_the_same_shard_twice_is_refused(shards, cls, kw):
    s0 = str(shards[0])
    with pytest.raises(DPTopicError, match="is given twice: give each shard once"):
        cls(n_topics=2, verbose=0, **kw).fit([s0, s0])
    other = shards[0].parent / ".." / "sh" / "shard-00000.npz"     # the same file by another path
    with pytest.raises(DPTopicError, match="is given twice .*as .* too"):
        ShardSet([shards[0], other])


def test_a_copy_of_a_shard_in_a_list_is_refused(shards, tmp_path):
    copy = tmp_path / "elsewhere" / "shard-00001.npz"
    copy.parent.mkdir()
    shutil.copy(shards[1], copy)
    with pytest.raises(DPTopicError, match=r"are the same shard \(shard 1 of one 'corpus prepare --shards' run"):
        ShardSet([shards[0], shards[1], copy])
    with pytest.raises(DPTopicError, match="are the same shard"):
        LDA(n_topics=2, n_iter=2, verbose=0).fit([str(shards[1]), str(copy)])
    assert ShardSet([shards[0], copy]).n_docs == ShardSet(shards[:2]).n_docs    # a copy alone is just that shard


@pytest.mark.parametrize("name,of", [("shard-00001 (copy).npz", 1), ("shard-00004.npz", 0)])
def test_an_extra_shard_in_a_folder_is_named(shards, name, of):
    folder = shards[0].parent
    shutil.copy(shards[of], folder / name)
    with pytest.raises(DPTopicError) as e:
        training_source(folder)
    msg = str(e.value)
    assert "holds an extra shard" in msg and repr(name) in msg and f"a copy of its shard {of}" in msg, msg
    assert "5 of the 4" not in msg and "\n" not in msg
    (folder / name).unlink()
    assert training_source(folder).n_docs == 40


def test_overwrite_removes_a_killed_runs_atomic_write_temporaries(shards):
    folder = shards[0].parent
    ours = folder / "..shard-00202.npz.partial.l4o8i_c5.tmp"     # Corpus.save's temporary for a staged shard
    ours.write_bytes(b"half a shard")
    not_ours = [folder / "..notes.txt.abcdefgh.tmp", folder / "..shard-00001.npz.partial.tmp"]
    for q in not_ours:
        q.write_bytes(b"x")
    write_shards(_corpus().subset(np.arange(20)), folder, 2, replace=True)
    assert not ours.exists()
    assert all(q.exists() for q in not_ours)
    assert training_source(folder).n_docs == 20


def test_a_relative_shard_folder_reaches_workers_in_another_directory(tmp_path, monkeypatch, dask_client):
    write_shards(_corpus(), tmp_path / "sh", 2)
    monkeypatch.chdir(tmp_path)       # the workers stay where the cluster started them
    m = LDA(n_topics=2, n_iter=2, backend="dask", client=dask_client, seed=0, verbose=0).fit("sh")
    assert m.components_.shape == (2, 12)


def test_a_cluster_without_workers_says_it_waits_before_it_waits():
    """Review 55: with no live worker the run showed only a progress bar standing still for 120 s."""
    pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend

    class NoWorkers:
        def scheduler_info(self):
            return {"workers": {}}

        def wait_for_workers(self, n, timeout=None):
            raise TimeoutError

    b = DaskBackend.__new__(DaskBackend)
    b.client = NoWorkers()
    with pytest.warns(UserWarning, match="no live worker yet: waiting up to 120 s"):
        with pytest.raises(DPTopicError, match="no live worker \\(waited 120 s\\)"):
            b._workers()


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
