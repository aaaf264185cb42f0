"""Reproductions of the papers' figures, one module per paper (CSV + PNG + a JSON verdict).

* :mod:`.zhao_central` -- Zhao et al., central DP: Fig. 4 (topic attack) and Fig. 5 (HDP-LDA utility).
* :mod:`.zhao_local` -- Zhao et al., local DP: Fig. 6 (LP-LDA utility), Figs. 8-10 (OLP-LDA).
* :mod:`.park_svi` -- Park et al., private SVI: Fig. 1 (perplexity vs epsilon) and Table 1 (top words).
* :mod:`.fedlda` -- Wang, Tong & Shi, FedLDA poster: budget / topics / sampling-ratio figures and the table.
* :mod:`.manzonelli_lira` -- Manzonelli et al. 2024: LiRA (Table 1, Figs. 2-3), FDPTM (Figs. 4-6); Zhao et al. Fig. 7.
"""
from .fedlda import fedlda_experiment
from .manzonelli_lira import classifier_mia_experiment, fdptm_experiment, lira_experiment
from .park_svi import svi_tradeoff
from .zhao_central import hdp_utility, topic_attack_experiment
from .zhao_local import ldp_utility, olp_experiment

__all__ = ["hdp_utility", "topic_attack_experiment", "ldp_utility", "olp_experiment", "fedlda_experiment",
           "svi_tradeoff", "lira_experiment", "fdptm_experiment", "classifier_mia_experiment"]
