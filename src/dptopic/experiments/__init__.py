"""Reproductions of the papers' figures, one module per paper (CSV + PNG + a JSON verdict).

* :mod:`.zhao_central` -- Zhao et al., central DP: Fig. 4 (topic attack) and Fig. 5 (HDP-LDA utility).
* :mod:`.manzonelli_lira` -- Manzonelli et al. 2024: LiRA (Table 1, Figs. 2-3), FDPTM (Figs. 4-6); Zhao et al. Fig. 7.
"""
from .manzonelli_lira import classifier_mia_experiment, fdptm_experiment, lira_experiment
from .zhao_central import hdp_utility, topic_attack_experiment

__all__ = ["hdp_utility", "topic_attack_experiment", "lira_experiment", "fdptm_experiment",
           "classifier_mia_experiment"]
