"""Exports for people: CSV tables and matplotlib figures, written atomically."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from .atomic import atomic_write_bytes


def write_csv(path, header, rows, private: bool = False) -> None:
    """A CSV file written atomically (experiments' and benchmarks' tables); 0600 when ``private`` (figures computed
    from private documents)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    atomic_write_bytes(Path(path), buf.getvalue().encode(), private=private)


def save_fig(fig, path, private: bool = False) -> None:
    """A matplotlib figure written atomically as PNG (0600 when ``private``: drawn from private documents)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    atomic_write_bytes(Path(path), buf.getvalue(), private=private)
