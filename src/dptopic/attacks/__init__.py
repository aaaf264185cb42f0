"""Auditing attacks: they measure how much a trained topic model leaks."""
from .topic_attack import AttackResult, TopicAttack, choose_targets, run_topic_attack

__all__ = ["TopicAttack", "AttackResult", "run_topic_attack", "choose_targets"]
