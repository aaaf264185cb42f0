"""The thread pool a kernel driver holds (kernels/_threads.py)."""
import pytest

from dptopic.kernels._threads import PoolOwner


def test_a_pool_is_made_only_for_threads_beyond_the_callers_and_shut_down_at_the_end_of_a_with_block():
    owner = PoolOwner()
    owner._start_pool(0)
    assert owner._pool is None
    with PoolOwner() as owner:
        owner._start_pool(2, "test")
        pool = owner._pool
        assert pool.submit(lambda: 3).result() == 3
    assert owner._pool is None
    with pytest.raises(RuntimeError):       # shut down: takes no more work
        pool.submit(lambda: 3)
