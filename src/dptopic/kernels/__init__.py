"""Compiled (numba) sampling kernels. Pure functions over arrays plus an RNG state."""
from .counts import count_assignments
from .dense import dense_sweep
from .engine import ShardedSweeper, Shard, SweepArrays, make_shards, sweep_shard
from .frozen import frozen_sweep
from .foldin import fold_in, token_log_likelihood
from .local import local_sweep
from .rrp import rrp_replace
from .randomized_response import packed_column_sums, presence_packed, randomize_presence
from .rng import kernel_state, next_uniform
from .sparse import sparse_sweep

__all__ = ["dense_sweep", "sparse_sweep", "frozen_sweep", "count_assignments", "fold_in", "token_log_likelihood", "sweep_shard",
           "ShardedSweeper", "Shard", "SweepArrays", "make_shards", "kernel_state", "next_uniform",
           "local_sweep", "rrp_replace",
           "randomize_presence", "presence_packed", "packed_column_sums"]
