"""Reproductions of the papers' figures, one module per paper (CSV + PNG + a JSON verdict).

* :mod:`.zhao_central` -- Zhao et al., central DP: Fig. 4 (topic attack) and Fig. 5 (HDP-LDA utility).
"""
from .zhao_central import hdp_utility, topic_attack_experiment

__all__ = ["hdp_utility", "topic_attack_experiment"]
