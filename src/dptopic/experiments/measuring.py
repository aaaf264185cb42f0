"""What every experiment's run shares: the note that its figures are measurements, not a private release, and the
warnings its many fits on the same documents would repeat (each said once, by that note)."""
from __future__ import annotations

import warnings
from contextlib import contextmanager

from ..errors import DataVocabularyWarning, SeededNoiseWarning

MEASUREMENT_NOTE = ("note: an experiment fits several models on the same documents: their budgets add up, and its"
                    " figures measure the trainers on this corpus; they are not a private release of it.")

REUSE_WARNINGS = (r".*already used by an earlier private fit", r".*trained a private model in this process")


@contextmanager
def measuring():
    """Within it, the per-fit warnings that an experiment's runs would repeat are silent: the documents' reuse by
    several private fits (:data:`MEASUREMENT_NOTE` says it once), and the fixed seeds and data-chosen vocabularies of
    measurements that release nothing."""
    with warnings.catch_warnings():
        for text in REUSE_WARNINGS:
            warnings.filterwarnings("ignore", message=text, category=UserWarning)
        for quiet in (SeededNoiseWarning, DataVocabularyWarning):
            warnings.simplefilter("ignore", quiet)
        yield


__all__ = ["MEASUREMENT_NOTE", "measuring"]
