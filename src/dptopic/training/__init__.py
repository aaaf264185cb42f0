"""A training run in one call (``dptopic.train``): read and check every input, split by the model's unit, fit,
held-out metrics (outside the guarantee), the private vocabulary's composition, the word-list record, the card, save.

The layer between ``models`` (the estimators) and ``attacks`` (which train shadow models): ``dptopic train``,
``dptopic demo`` and the shard and Dask paths call it, and ``dptopic serve``'s trainer calls its steps for one
mini-batch of reports (:func:`train_batch`), so that every front door makes each decision once.
"""
from .build import DOCUMENT_LEVEL, build_model, resolve_algorithm
from .by_unit import UNIT_TRAINERS, for_unit
from .incremental import train_batch
from .run import (
                  PAD_LENGTH_FACTOR,
                  WORDS_PER_TOPIC,
                  TrainingResult,
                  card,
                  check_inputs,
                  check_reports,
                  choose_vocabulary,
                  compose_vocabulary,
                  fit,
                  fit_reports,
                  forecast,
                  held_out_metrics,
                  pad_length_note,
                  record_words,
                  save,
                  split,
                  state_contributors,
                  train,
                  warn_if_few_private_words,
)

__all__ = ["train", "train_batch", "TrainingResult", "for_unit", "UNIT_TRAINERS", "build_model", "resolve_algorithm",
           "check_inputs", "choose_vocabulary", "split", "forecast", "fit", "held_out_metrics", "compose_vocabulary",
           "record_words", "card", "save", "check_reports", "fit_reports", "state_contributors", "pad_length_note",
           "warn_if_few_private_words", "DOCUMENT_LEVEL", "WORDS_PER_TOPIC", "PAD_LENGTH_FACTOR"]
