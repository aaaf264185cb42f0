"""The privacy units' bounds and defaults: the largest epsilon a run under a unit takes, its default delta, and the
settings of the trainer each unit gets that decide what budget it can spend.

The trainer registry (``models/registry.py``) refuses settings by these, ``dptopic.for_unit`` builds the unit's
trainer with them, and the forecast of the topics to expect (``dptopic.advice``, below the models: the small-corpus
warning of ``DocDPCooccurrence.fit``, of ``dptopic train`` and ``dptopic recommend`` alike) reads them: so they sit
here, below all three, beside the plans whose floors they bound (``plan.py``, ``budget.py``).
"""
from __future__ import annotations

from types import MappingProxyType

UNIT_EPSILON_MAX = MappingProxyType({"document": 500.0, "word": 1e7, "user": 500.0})
"""The largest epsilon ``dptopic.for_unit`` (and the command line's unit option) takes: a document-level budget
above 500 protects nothing; a word-level one is per word and starts in the hundreds."""
TRAIN_DELTA = 1e-5
"""The delta ``dptopic.for_unit`` (and ``dptopic train``) use by default."""
WORD_ITERATIONS = 50
"""The iterations of the word-level trainer (HDPLDA.from_budget) that the utility table measured, and that
``dptopic.for_unit("word", ...)`` (and ``dptopic train`` under the word unit) runs."""
WORD_EPSILON_INHERENT = 10.0
"""HDPLDA's inherent part per iteration (``HDPLDA.DEFAULT_EPSILON_INHERENT``, not imported: accounting loads no
estimator): ``WORD_ITERATIONS`` of them cost 500 before any noise."""
HDP_DEFAULT_BETA = 1.0
"""HDPLDA's default topic-word prior beta (not imported, as above), the default of the privacy calculator of HDP-LDA
(``accounting.calculators.hdp_calculator``, ``dptopic privacy hdp``)."""
DOCUMENT_RANKING_NOISE = 3.0
"""The ratio of the two noise multipliers of ``dptopic.for_unit("document")`` (``DocDPCooccurrence`` with its
defaults, ``ranking_noise="auto"`` and ``word_choice="frequency"``: ``resolve_ranking_noise`` in
``models/docdp_cooc.py``, not imported: accounting loads no estimator)."""


def unreachable_epsilon(unit: str, epsilon: float, delta: float = TRAIN_DELTA,
                        ratio: float = DOCUMENT_RANKING_NOISE) -> float | None:
    """The smallest epsilon ``dptopic.for_unit(unit)`` (and ``dptopic train`` under that unit) reaches at ``delta``
    when ``epsilon`` lies below it, else None: the floor of ``DocDPCooccurrence``'s two releases
    (:func:`~dptopic.accounting.plan.docdp_cooc_unreachable_epsilon`) for a document or a person (one person bounded as
    one document); None for the word unit (no such floor: below its inherent cost no trainer runs)."""
    if unit not in ("document", "user"):
        return None
    from .plan import docdp_cooc_unreachable_epsilon  # numpy: the registry's reading of the units loads none

    return docdp_cooc_unreachable_epsilon(float(epsilon), float(delta), float(ratio), UNIT_EPSILON_MAX["document"])
