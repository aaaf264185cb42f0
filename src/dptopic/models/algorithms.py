"""``ALGORITHMS``: each trainer's name and its estimator class, for the trainers that both ``dptopic train
--algorithm`` and ``dptopic audit --algorithm`` take by name (every trainer of ``dptopic train`` but ``ldp-doc``,
which the audit does not attack). A view of :data:`dptopic.models.registry.TRAINERS`, where each trainer is declared."""
from .registry import TRAINERS

ALGORITHMS = {t.name: t.cls for t in TRAINERS.values() if t.cli and t.audit is not None}
