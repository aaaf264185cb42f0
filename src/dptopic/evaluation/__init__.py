"""Evaluation: held-out perplexity; NPMI, C_v, UMass coherence and topic diversity; topic recovery, the match
between two models' topics and how much of a reference model's topics a model covers; downstream classification on
document-topic proportions; log-likelihood."""
from .coherence import umass_coherence
from .likelihood import joint_log_likelihood
from .perplexity import infer_theta, perplexity, split_completion
from .topic_matching import cosine_matrix, match_models, topic_match, topic_recovery
from .topic_quality import cv_coherence, npmi_coherence, topic_diversity, topic_quality, umass_pairwise_mean
from .training_run import npmi_and_diversity, training_run_metrics
from .utility import downstream_score, topic_coverage

__all__ = ["perplexity", "infer_theta", "split_completion", "umass_coherence", "topic_recovery", "topic_match",
           "match_models", "cosine_matrix", "joint_log_likelihood", "npmi_coherence", "cv_coherence",
           "topic_diversity", "topic_quality", "umass_pairwise_mean", "topic_coverage", "downstream_score",
           "training_run_metrics", "npmi_and_diversity"]
