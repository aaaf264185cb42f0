"""Shared output helpers for the experiments: atomic CSV and PNG writers."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from .._io import atomic_write_bytes


def write_csv(path: Path, header, rows) -> None:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    atomic_write_bytes(path, buf.getvalue().encode())


def save_fig(fig, path: Path) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    atomic_write_bytes(path, buf.getvalue())
