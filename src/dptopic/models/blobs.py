"""A saved model as text and bytes (``model.json`` and its ``.npy`` arrays), for a server's database and the HTTP API.

Written and read by the model's own ``save`` and :func:`~dptopic.models.load` (JSON + ``.npy``, never pickle), so
nothing here re-implements a format.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import DPTopicError
from .base import load


def model_to_blobs(model) -> tuple[str, dict[str, bytes]]:
    """``(model.json text, {array name: .npy bytes})`` written by the model's own ``save``."""
    with tempfile.TemporaryDirectory(prefix="dptopic-model-") as tmp:
        d = Path(model.save(Path(tmp) / "m"))
        meta = (d / "model.json").read_text("utf-8")
        arrays = {p.stem: p.read_bytes() for p in sorted(d.glob("*.npy"))}
    return meta, arrays


def model_from_blobs(meta: str, arrays: dict[str, bytes]):
    """Inverse of :func:`model_to_blobs`, through the model's own ``load`` (``allow_pickle=False``)."""
    with tempfile.TemporaryDirectory(prefix="dptopic-model-") as tmp:
        d = Path(tmp) / "m"
        d.mkdir()
        (d / "model.json").write_text(meta, "utf-8")
        for name, data in arrays.items():
            if os.sep in name or name.startswith("."):
                raise DPTopicError(f"stored model array name {name!r} is invalid: the database is corrupt.")
            (d / f"{name}.npy").write_bytes(data)
        return load(d)
