"""Reproductions of the papers' figures, one module per paper (CSV + PNG + a JSON verdict).

* :mod:`.zhao_central` -- Zhao et al., central DP: Fig. 4 (topic attack) and Fig. 5 (HDP-LDA utility).
* :mod:`.zhao_local` -- Zhao et al., local DP: Fig. 6 (LP-LDA utility), Figs. 8-10 (OLP-LDA).
* :mod:`.park_svi` -- Park et al., private SVI: Fig. 1 (perplexity vs epsilon) and Table 1 (top words).
* :mod:`.fedlda` -- Wang, Tong & Shi, FedLDA poster: budget / topics / sampling-ratio figures and the table.
* :mod:`.manzonelli_lira` -- Manzonelli et al. 2024: LiRA (Table 1, Figs. 2-3), FDPTM (Figs. 4-6); Zhao et al. Fig. 7.
* :mod:`.secure_sum` -- ``dptopic experiment secure-sum``: a secure-sum round played by every person of a corpus, its
  contributor processes in :mod:`.secure_sum_players`.

Names are imported on first use: a spawned contributor process of the secure-sum experiment imports
:mod:`.secure_sum_players` (and so this package) without the models the other experiments load.
"""
from .._lazy_names import lazy_names as _lazy_names

_EXPORTS = {"hdp_utility": "zhao_central", "topic_attack_experiment": "zhao_central", "ldp_utility": "zhao_local",
            "olp_experiment": "zhao_local", "fedlda_experiment": "fedlda", "svi_tradeoff": "park_svi",
            "lira_experiment": "manzonelli_lira", "fdptm_experiment": "manzonelli_lira",
            "classifier_mia_experiment": "manzonelli_lira"}
__all__ = list(_EXPORTS)

__getattr__, __dir__ = _lazy_names(__name__, _EXPORTS, globals())
