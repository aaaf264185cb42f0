"""Evaluation: held-out perplexity, UMass coherence, topic recovery, log-likelihood."""
from .coherence import umass_coherence
from .likelihood import joint_log_likelihood
from .perplexity import infer_theta, perplexity, split_completion
from .recovery import cosine_matrix, topic_recovery

__all__ = ["perplexity", "infer_theta", "split_completion", "umass_coherence", "topic_recovery",
           "cosine_matrix", "joint_log_likelihood"]
