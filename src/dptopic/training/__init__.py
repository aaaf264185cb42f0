"""A training run in one call (``dptopic.train``): read and check every input, split by the model's unit, fit,
held-out metrics (outside the guarantee), the private vocabulary's composition, the word-list record, the card, save.

The layer between ``models`` (the estimators) and ``attacks`` (which train shadow models): ``dptopic train``,
``dptopic demo`` and the shard and Dask paths call it, so that both front doors make each decision once.
"""
from .build import DOCUMENT_LEVEL, build_model, resolve_algorithm
from .run import (PAD_LENGTH_FACTOR, WORDS_PER_TOPIC, TrainingResult, card, check_inputs, choose_vocabulary,
                  compose_vocabulary, fit, forecast, held_out_metrics, pad_length_note, record_words, save, split,
                  train, warn_if_few_private_words)

__all__ = ["train", "TrainingResult", "build_model", "resolve_algorithm", "check_inputs", "choose_vocabulary", "split",
           "forecast", "fit", "held_out_metrics", "compose_vocabulary", "record_words", "card", "save",
           "pad_length_note", "warn_if_few_private_words", "DOCUMENT_LEVEL", "WORDS_PER_TOPIC", "PAD_LENGTH_FACTOR"]
