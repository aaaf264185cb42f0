"""``dptopic.backends.cluster``: what says that the Dask scheduler went away mid-run."""
import pytest

from dptopic.backends.cluster import scheduler_lost


def test_a_lost_scheduler_is_said_in_one_line_and_an_ordinary_error_is_not():
    timed_out = OSError("Timed out trying to connect to tcp://127.0.0.1:18786 after 20 s")
    assert scheduler_lost(timed_out, on_cluster=True).startswith("lost the connection to the Dask scheduler (Timed out")
    assert scheduler_lost(timed_out, on_cluster=False) is None      # not a cluster run: distributed did not raise it
    assert scheduler_lost(FileNotFoundError(2, "No such file", "s3://bucket/x.npz"), on_cluster=True) is None
    assert scheduler_lost(TimeoutError("lock timed out"), on_cluster=True) is None
    assert scheduler_lost(MemoryError(), on_cluster=True) is None


def test_distributed_s_own_error_is_a_lost_scheduler_wherever_it_comes_from():
    core = pytest.importorskip("distributed.comm.core")
    line = scheduler_lost(core.CommClosedError("ConnectionPool closing."), on_cluster=False)
    assert line == ("lost the connection to the Dask scheduler (ConnectionPool closing.): check that it is still"
                    " running, then run the command again.")
