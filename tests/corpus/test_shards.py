"""A stale or hand-made shard commit record (``.shards-commit.json``) whose set is not in place removes nothing: the
record alone is dropped, with a warning, and the old set stays readable."""
import json

import numpy as np
import pytest

from dptopic.corpus import shards as shards_module
from dptopic.corpus.shards import ShardSet, folder_shards, write_shards
from dptopic.corpus import Corpus


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
