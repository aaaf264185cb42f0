"""``dptopic.models.lplda``."""
import json

import numpy as np
import pytest

from dptopic.errors import CorruptModelError


def _edited(src, dst, edit_meta=None, arrays=None, drop=None):
    import shutil

    shutil.copytree(src, dst)
    meta = json.loads((dst / "model.json").read_text())
    meta.pop("array_sha256", None)          # the arrays' digests are optional
    if drop:
        meta["arrays"].remove(drop)
        (dst / f"{drop}.npy").unlink()
    for name, value in (arrays or {}).items():
        np.save(dst / f"{name}.npy", value)
    if edit_meta:
        edit_meta(meta)
    (dst / "model.json").write_text(json.dumps(meta))
    return dst


def _one_line_corrupt(folder):
    import dptopic

    with pytest.raises(CorruptModelError) as e:
        dptopic.load(folder)
    assert "\n" not in str(e.value) and str(e.value).count("re-save the model") == 1
    assert str(e.value).count("corrupt model") == 1
    return str(e.value)


@pytest.mark.filterwarnings('ignore')
def test_damaged_local_models_are_refused_in_one_line(saved_local_models, tmp_path):
    def set_training(key, value):
        return lambda m: m["training"].__setitem__(key, value)

    cases = [
        _edited(saved_local_models / "doc", tmp_path / "d1", set_training("n_reports", "x")),
        _edited(saved_local_models / "doc", tmp_path / "d2", lambda m: m["privacy"].pop("epsilon_doc")),
        _edited(saved_local_models / "olp", tmp_path / "o1", set_training("n_batches", None)),
        _edited(saved_local_models / "olp", tmp_path / "o2", set_training("n_docs_seen", 1.5)),
        _edited(saved_local_models / "olp", tmp_path / "o3", arrays={"stream_state": np.array([np.nan, 0.5, np.nan, np.nan])}),
        _edited(saved_local_models / "olp", tmp_path / "o4", arrays={"stream_state": np.float64(1.0)}),
        _edited(saved_local_models / "olp", tmp_path / "o5", drop="stream_state"),
        _edited(saved_local_models / "lp", tmp_path / "l1", arrays={"report_stats": np.float64(0.5)}),
        _edited(saved_local_models / "lp", tmp_path / "l2", drop="noisy_counts"),
        _edited(saved_local_models / "lp", tmp_path / "l3", arrays={"estimates": np.zeros((2, 2, 2))}),
        _edited(saved_local_models / "lp", tmp_path / "l4", arrays={"targets": np.array([True] * 12)}),
        _edited(saved_local_models / "lp", tmp_path / "l5", arrays={"variance_paper": np.full(12, np.nan)}),
        _edited(saved_local_models / "lp", tmp_path / "l6", arrays={"report_stats": np.array([2.0, 4.0, 1.0])}),
    ]
    for folder in cases:
        _one_line_corrupt(folder)
