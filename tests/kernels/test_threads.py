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


@pytest.mark.parametrize("n,threads,min_slice,parts", [(0, 4, 1, 1), (10, 1, 1, 1), (10, 3, 1, 3), (10, 8, 4, 2),
                                                       (7, 4, 100, 1), (100, None, 1, None)])
def test_slices_cover_the_range_once_each_the_first_on_the_callers_thread(n, threads, min_slice, parts):
    import threading

    from dptopic.kernels._threads import run_in_slices, usable_cores

    seen = []
    run_in_slices(lambda a, b: seen.append((a, b, threading.get_ident())), n, threads, min_slice)
    seen.sort()
    want = min(usable_cores(), n) if parts is None else parts
    assert len(seen) == want
    assert [a for a, _, _ in seen] == [0] + [b for _, b, _ in seen[:-1]] and seen[-1][1] == n
    assert all(b - a >= min(min_slice, n) for a, b, _ in seen)
    assert seen[0][2] == threading.get_ident()          # the first slice on the caller's thread
    assert want == 1 or any(t != threading.get_ident() for _, _, t in seen)     # the others on the pool's


def test_a_failing_slice_is_raised_to_the_caller():
    from dptopic.kernels._threads import run_in_slices

    def work(a, b):
        if a > 0:
            raise ValueError("slice failed")
    with pytest.raises(ValueError, match="slice failed"):
        run_in_slices(work, 10, 2, 1)


@pytest.mark.parametrize("ahead", [0, 1, 3, None])
def test_ordered_ahead_yields_each_result_in_order_with_at_most_ahead_started_beyond_the_one_consumed(ahead):
    import threading
    import time

    from dptopic.kernels._threads import ordered_ahead, usable_cores

    started, lock, consumed = [], threading.Lock(), []

    def work(i):
        with lock:
            started.append((i, len(consumed)))     # the item, and how many results were consumed when it started
        time.sleep(0.05 if i == 0 else 0.002 * (i % 3))   # uneven: later items finish first, the first last
        return i * i

    for r in ordered_ahead(work, range(12), ahead):
        time.sleep(0.01)                # the caller's own work on a result, while the next ones are made
        consumed.append(r)
    assert consumed == [i * i for i in range(12)]
    assert sorted(i for i, _ in started) == list(range(12))
    limit = min(4, usable_cores() - 1) if ahead is None else ahead
    # never more than `ahead` items beyond those consumed: while the caller holds a result, `ahead` are being made
    assert all(i <= n + limit for i, n in started)
    assert limit == 0 or max(i - n for i, n in started) >= 1      # and some were worked on ahead


def test_ordered_ahead_passes_a_failure_on_and_starts_nothing_more_once_the_consumer_stops():
    from dptopic.kernels._threads import ordered_ahead

    def fail_at_2(i):
        if i == 2:
            raise ValueError("item 2")
        return i

    got = []
    with pytest.raises(ValueError, match="item 2"):
        for r in ordered_ahead(fail_at_2, range(10), 2):
            got.append(r)
    assert got == [0, 1]
    seen = []
    gen = ordered_ahead(lambda i: seen.append(i) or i, range(100), 2)
    assert next(gen) == 0
    gen.close()
    assert len(seen) <= 4                          # the first, and at most `ahead` + 1 more submitted
