"""The trainer's models (``service/storage/models.py``): the version-guarded training commit and rotations."""
import pytest

pytest.importorskip("sqlalchemy")

from dptopic.service.storage import Submission  # noqa: E402


def test_training_commit_is_guarded_by_the_model_version(storage):
    storage.store([Submission("key-cccccccc", "h", None, [b"\x00"] * 5)])
    m = storage.active_model()
    assert storage.commit_batch(m["id"], m["version"], 1, 3, 3, None, None, "skipped", "test", 0.0)
    # a second writer holding the old version (or an old cursor) changes nothing
    assert not storage.commit_batch(m["id"], m["version"], 1, 3, 3, None, None, "skipped", "again", 0.0)
    assert not storage.commit_batch(m["id"], m["version"] + 1, 2, 3, 2, None, None, "skipped", "back", 0.0)
    m2 = storage.active_model()
    assert (m2["version"], m2["last_report_id"], m2["n_reports_used"]) == (m["version"] + 1, 3, 3)
    assert len(storage.batches()) == 1
    info = storage.rotate("test")
    assert info["starts_after_report"] == 3 and storage.active_model()["last_report_id"] == 3
