"""The audit's bounds and defaults (:mod:`dptopic.attacks.audit` reads them): a module of constants, which imports
nothing, so that the command line's help states them without loading the attacks."""
from __future__ import annotations

MAX_SHADOWS = 10_000  # shadow models each train a topic model: more than this would never finish
DEFAULT_SHADOWS = 64
DEFAULT_JOBS = 2
ONE_RUN_CANARIES = 200       # design one-run: canary documents
ONE_RUN_CANARY_LENGTH = 100  # design one-run: tokens per canary
PERSON_DOCUMENTS = 20     # score release, canary unit person: documents per canary person
RELEASE_CANARIES = 10_000  # score release: canary units
MAX_RELEASE_DOCUMENTS = 5_000_000   # canary documents the release audit holds in memory

COVERAGE_LIMIT = 0.10
"""With a saved model and without ``restrict``, an audit refuses a corpus that does not look like the one the model was
trained on, where the audit would attack other documents than the model saw, with their unknown words dropped:

* a vocabulary chosen from the training data as its most frequent words: more than this share of the tokens of the
  corpus's own most frequent words (as many as the model has, read as the model's were) are words it does not know;
* a vocabulary selected privately from the training documents (FDPTM: each of its words occurs there): more than this
  share of the model's words do not occur in the corpus;
* a vocabulary given to ``train`` as a word list (most tokens left out by design): when the model recorded how many
  of its words its training documents held, the corpus's documents hold fewer than (1 - this share) times as many."""
