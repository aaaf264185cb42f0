"""A stale or hand-made shard commit record (``.shards-commit.json``) whose set is not in place removes nothing: the
record alone is dropped, with a warning, and the old set stays readable."""
import json
import shutil

import numpy as np
import pytest

from dptopic.backends import training_source
from dptopic.corpus import Corpus
from dptopic.corpus import shards as shards_module
from dptopic.corpus.shard_folder import SHARD_RUN
from dptopic.corpus.shards import ShardSet, folder_shards, write_shards
from dptopic.errors import DPTopicError


def _corpus():
    return Corpus.from_tokens([["a", "b", "c"], ["b", "c"], ["c", "d"], ["a", "d"]] * 5)


@pytest.mark.parametrize("run", ["not-the-sets-id", "x" * 16])
def test_a_commit_record_for_a_set_not_in_place_removes_nothing(tmp_path, run):
    folder = tmp_path / "sh"
    write_shards(_corpus(), folder, 3)
    # a record that claims a 1-shard set replaced the old one and asks for shards 1 and 2 to go
    rec_run = run
    (folder / shards_module._COMMIT).write_text(json.dumps(
        {"set": rec_run, "count": 1, "remove": ["shard-00001.npz", "shard-00002.npz"]}))
    with pytest.warns(UserWarning, match="no shard was removed"):
        paths = folder_shards(folder)
    assert not (folder / shards_module._COMMIT).exists()
    assert ShardSet(paths, folder=folder).n_docs == 20          # the old set, whole
    assert sorted(p.name for p in folder.glob("shard-*.npz")) == ["shard-00000.npz", "shard-00001.npz",
                                                                  "shard-00002.npz"]


def test_a_genuine_interrupted_replacement_is_still_finished(tmp_path, monkeypatch):
    folder = tmp_path / "sh"
    write_shards(_corpus(), folder, 3)
    calls = {"n": 0}
    real = shards_module._finish_locked

    def stop_before_finishing(f):     # the commit record is written, the renames never happen
        calls["n"] += 1
        raise KeyboardInterrupt
    monkeypatch.setattr(shards_module, "_finish_locked", stop_before_finishing)
    with pytest.raises(KeyboardInterrupt):
        write_shards(_corpus().subset(np.arange(10)), folder, 2, replace=True)
    monkeypatch.setattr(shards_module, "_finish_locked", real)
    assert (folder / shards_module._COMMIT).exists() and calls["n"] == 1
    back = ShardSet(folder_shards(folder), folder=folder)
    assert back.n_docs == 10 and len(back.paths) == 2
    assert not (folder / shards_module._COMMIT).exists()


def test_a_shard_run_killed_before_its_set_is_complete_leaves_the_old_set(tmp_path, monkeypatch):
    from dptopic.corpus import shards as shards_module
    from dptopic.corpus.shards import ShardSet, folder_shards, write_shards

    c = Corpus.from_tokens([["a", "b", "c"], ["b", "c"], ["c", "d"], ["a", "d"]] * 5)
    write_shards(c, tmp_path / "sh", 3)
    import dptopic._io as io_module

    def killed(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(io_module, "atomic_write_json", killed)      # stopped just before the commit
    with pytest.raises(KeyboardInterrupt):
        write_shards(c.subset(np.arange(10)), tmp_path / "sh", 2, replace=True)
    monkeypatch.undo()
    back = ShardSet(folder_shards(tmp_path / "sh"), folder=tmp_path / "sh")
    assert back.n_docs == 20 and len(back.paths) == 3
    assert not (tmp_path / "sh" / shards_module._COMMIT).exists()


def test_a_stale_commit_record_never_renames_another_runs_staged_shards(tmp_path):
    """A commit record names its set: staged shards of another run are left alone (and the reader then refuses the
    folder), never moved in as if they were the committed set's."""
    import json

    from dptopic.corpus import shard_folder
    from dptopic.corpus import shards as sh

    c = Corpus.from_tokens([["a", "b", "c"], ["b", "c"], ["c", "d"], ["a", "d"]] * 5)
    sh.write_shards(c, tmp_path / "s", 2)
    before = sorted(p.name for p in (tmp_path / "s").iterdir())
    staged = tmp_path / "s" / ".shard-00000.npz.partial"
    part = c.subset(np.arange(5))
    part.metadata[sh.SHARD_RECORD] = {"index": 0, "count": 1, "set": "other-run"}
    part.save(staged)
    (tmp_path / "s" / sh._COMMIT).write_text(json.dumps({"set": "stale", "count": 1, "remove": ["shard-00001.npz"]}))
    assert shard_folder.finish_replacement(tmp_path / "s") is True
    assert staged.exists()                                  # not renamed over the live shard 0
    assert not (tmp_path / "s" / sh._COMMIT).exists()
    assert "shard-00000.npz" in before and (tmp_path / "s" / "shard-00000.npz").exists()


def test_a_list_of_npz_names_is_a_shard_source_even_when_none_exists(tmp_path):
    with pytest.raises(DPTopicError, match="corpus shard 'a.npz' does not exist"):
        training_source(["a.npz", "b.NPZ"])


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
    write_shards(_corpus(), folder, 2, replace=True)                  # 20 documents in place of 40
    assert not ours.exists()
    assert all(q.exists() for q in not_ours)
    assert training_source(folder).n_docs == 20


def test_texts_that_merely_end_in_npz_are_still_texts(tmp_path):
    c = training_source(["the file report.npz", "no such file.npz here", "plain text"])
    assert isinstance(c, Corpus) and c.n_docs == 3


TEXT = "apple banana cherry\nbanana cherry durian\napple durian cherry\nelder fig grape\n"


def test_shard_reader_refuses_a_partial_or_mixed_set(tmp_path):
    c = Corpus.from_texts(TEXT.splitlines(), stop_words=None)
    paths = write_shards(c, tmp_path / "a", 4)
    assert all(Corpus.load(p).metadata["shard"]["count"] == 4 for p in paths)
    assert sum(Corpus.load(p).n_empty_dropped for p in paths) == c.n_empty_dropped
    paths[2].unlink()                      # what a run that stopped part-way leaves
    with pytest.raises(DPTopicError, match=r"incomplete: it holds 3 of the 4 shards.*replace=True"):
        training_source(tmp_path / "a")
    other = write_shards(c, tmp_path / "b", 4)
    other[2].rename(paths[2])              # a shard of another run
    with pytest.raises(DPTopicError, match="more than one write_shards run"):
        training_source(tmp_path / "a")
    with pytest.raises(DPTopicError, match="more than one"):
        ShardSet([paths[0], other[1]])


def test_old_shards_without_a_record_read_unless_their_run_did_not_finish(tmp_path):
    from dptopic._io import mark_output_folder

    c = Corpus.from_texts(TEXT.splitlines(), stop_words=None)
    out = tmp_path / "old"
    mark_output_folder(out, SHARD_RUN)
    for j, idx in enumerate(([0, 1], [2, 3])):          # as the earlier version wrote them: no record
        c.subset(idx).save(out / f"shard-{j:05d}.npz")
    with pytest.raises(DPTopicError, match="may be incomplete.*did not finish"):
        training_source(out)
    mark_output_folder(out, SHARD_RUN, done=True)
    assert training_source(out).n_docs == 4


def test_a_shard_folder_given_where_one_corpus_is_read_says_only_training_reads_it(tmp_path):
    from dptopic.corpus import Corpus
    from dptopic.corpus.shards import write_shards
    from dptopic.corpus.synthetic import lda_corpus

    write_shards(lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus, tmp_path / "sh", 2)
    with pytest.raises(DPTopicError, match=r"only training reads a shard folder whole .*one of its shard-\*\.npz"):
        Corpus.from_directory(tmp_path / "sh")


def test_where_a_prepared_corpus_goes_is_checked_before_any_document_is_read(tmp_path):
    from dptopic.corpus.shards import check_prepared_out
    from dptopic.errors import ParameterError

    names = {"out": "--out", "n_shards": "--shards"}
    with pytest.raises(ParameterError) as e:
        check_prepared_out(tmp_path / "c.npz", n_shards=2)
    assert e.value.message(names) == (f"--out {str(tmp_path / 'c.npz')!r} names a .npz file, but --shards 2 writes a"
                                      f" folder of shard files: give a folder name such as --out {tmp_path / 'c'}/ (or"
                                      " drop --shards for one .npz file).")
    with pytest.raises(ParameterError, match=r"^out '.*c\.txt': a prepared corpus is a \.npz file .* as '.*c\.npz'$"):
        check_prepared_out(tmp_path / "c.txt")
    check_prepared_out(tmp_path / "c.npz")
    check_prepared_out(tmp_path / "shards", n_shards=2)
