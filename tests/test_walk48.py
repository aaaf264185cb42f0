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
    from pathlib import Path

    import dptopic._io as io_mod
    from dptopic import LDA

    m, folder = _small_model(tmp_path)
    reads = []
    real = Path.read_bytes

    def counting(self):
        reads.append(self.name)
        return real(self)

    def no_second_pass(path):
        raise AssertionError(f"{path} hashed by a second read")

    monkeypatch.setattr(Path, "read_bytes", counting)
    monkeypatch.setattr(io_mod, "_file_sha256", no_second_pass)
    loaded = LDA.load(folder)
    npy = [r for r in reads if r.endswith(".npy")]
    assert npy and len(npy) == len(set(npy))
    np.testing.assert_array_equal(loaded.components_, m.components_)
    monkeypatch.undo()
    # an edited array is still refused by its digest
    target = sorted(folder.glob("*.npy"))[0]
    np.save(target, np.load(target) * 1.0 + 1e-3)
    with pytest.raises(Exception, match="SHA-256 differs"):
        LDA.load(folder)
