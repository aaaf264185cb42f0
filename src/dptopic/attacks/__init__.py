"""Auditing attacks: they measure how much a trained topic model leaks."""
from .baselines import HUANG_STATISTICS, huang_scores, huang_theta
from .classifier_mia import classifier_mia
from .lira import (
                   LiRAResult,
                   ShadowScores,
                   estimator_trainer,
                   leave_one_out,
                   lira_offline,
                   lira_online,
                   run_lira,
                   sklearn_trainer,
                   train_shadows,
)
from .metrics import empirical_epsilon, plot_roc, summarize
from .one_run import one_run_audit, one_run_epsilon_bound, one_run_p_value
from .topic_attack import AttackResult, TopicAttack, choose_targets, run_topic_attack

__all__ = ["TopicAttack", "AttackResult", "run_topic_attack", "choose_targets", "run_lira", "train_shadows",
           "leave_one_out", "lira_online", "lira_offline", "estimator_trainer", "sklearn_trainer", "LiRAResult",
           "ShadowScores", "huang_scores", "huang_theta", "HUANG_STATISTICS", "summarize", "empirical_epsilon",
           "plot_roc", "classifier_mia", "one_run_audit", "one_run_epsilon_bound", "one_run_p_value"]
