"""Compiled (numba) sampling kernels. Pure functions over arrays plus an RNG state."""
from .counts import count_assignments
from .dense import dense_sweep
from .em import document_statistic, max_doc_loglik
from .engine import ShardedSweeper, Shard, SweepArrays, make_shards, sweep_shard
from .frozen import frozen_sweep
from .foldin import fold_in, token_log_likelihood
from .local import local_sweep
from .noise import add_discrete_laplace, discrete_laplace_threshold
from .randomized_response import packed_column_sums, presence_packed, randomize_presence
from .rrp import rrp_replace, sample_labels, subset_local_sweep, subset_select, subset_theta_em
from .rng import kernel_state, next_uniform
from .sparse import sparse_sweep

__all__ = ["dense_sweep", "document_statistic", "max_doc_loglik", "sparse_sweep", "frozen_sweep", "count_assignments", "fold_in", "token_log_likelihood", "sweep_shard",
           "ShardedSweeper", "Shard", "SweepArrays", "make_shards", "kernel_state", "next_uniform",
           "randomize_presence", "presence_packed", "packed_column_sums",
           "local_sweep", "rrp_replace", "subset_select", "subset_local_sweep", "subset_theta_em", "sample_labels", "add_discrete_laplace", "discrete_laplace_threshold"]
from .vb import dirichlet_expectation, doc_elbo, vb_estep  # noqa: E402

__all__ += ["vb_estep", "doc_elbo", "dirichlet_expectation"]
