"""Shared output helpers for the experiments: the atomic CSV and PNG writers live in :mod:`dptopic._io`."""
from .._io import save_fig, write_csv

__all__ = ["save_fig", "write_csv"]
