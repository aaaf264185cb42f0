"""Reproductions of the papers' figures, one module per paper (CSV + PNG + a JSON verdict).

* :mod:`.zhao_central` -- Zhao et al., central DP: Fig. 4 (topic attack) and Fig. 5 (HDP-LDA utility).
* :mod:`.fedlda` -- Wang, Tong & Shi, FedLDA poster: budget / topics / sampling-ratio figures and the table.
"""
from .fedlda import fedlda_experiment
from .zhao_central import hdp_utility, topic_attack_experiment

__all__ = ["fedlda_experiment", "hdp_utility", "topic_attack_experiment"]
