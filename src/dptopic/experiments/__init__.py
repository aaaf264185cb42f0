"""Reproductions of the papers' figures, one module per paper (CSV + PNG + a JSON verdict).

* :mod:`.zhao_central` -- Zhao et al., central DP: Fig. 4 (topic attack) and Fig. 5 (HDP-LDA utility).
* :mod:`.park_svi` -- Park et al., private SVI: Fig. 1 (perplexity vs epsilon) and Table 1 (top words).
"""
from .park_svi import svi_tradeoff
from .zhao_central import hdp_utility, topic_attack_experiment

__all__ = ["hdp_utility", "topic_attack_experiment", "svi_tradeoff"]
