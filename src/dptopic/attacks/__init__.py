"""Auditing attacks: they measure how much a trained topic model leaks.

Names are imported on first use (PEP 562, as in ``dptopic/experiments/__init__.py``): the command line's parsers read
the audit's bounds (:mod:`.settings`) without loading the attacks' models, numba or scikit-learn."""
from .._lazy_names import lazy_names as _lazy_names

_EXPORTS = {"HUANG_STATISTICS": "baselines", "huang_scores": "baselines", "huang_theta": "baselines",
            "classifier_mia": "classifier_mia",
            **{name: "lira" for name in ("LiRAResult", "ShadowScores", "estimator_trainer", "leave_one_out",
                                         "lira_offline", "lira_online", "run_lira", "sklearn_trainer",
                                         "train_shadows")},
            "empirical_epsilon": "metrics", "plot_roc": "metrics", "summarize": "metrics",
            "one_run_audit": "one_run", "one_run_epsilon_bound": "one_run", "one_run_p_value": "one_run",
            **{name: "topic_attack" for name in ("AttackResult", "TopicAttack", "choose_targets", "run_topic_attack")}}

__all__ = ["TopicAttack", "AttackResult", "run_topic_attack", "choose_targets", "run_lira", "train_shadows",
           "leave_one_out", "lira_online", "lira_offline", "estimator_trainer", "sklearn_trainer", "LiRAResult",
           "ShadowScores", "huang_scores", "huang_theta", "HUANG_STATISTICS", "summarize", "empirical_epsilon",
           "plot_roc", "classifier_mia", "one_run_audit", "one_run_epsilon_bound", "one_run_p_value"]

__getattr__, __dir__ = _lazy_names(__name__, _EXPORTS, globals())
