"""``dptopic.backends.cluster``: the probe of a scheduler's address, the quiet logs, and what says that the Dask
scheduler went away mid-run."""
import logging

import pytest

from dptopic.backends.cluster import scheduler_lost
from dptopic.errors import DPTopicError
from helpers import TcpListener


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


@pytest.mark.parametrize("greeting, hang_up, what", [(b"", False, "sent no greeting"),
                                                     (b"SSH-2.0-OpenSSH_9.2\r\n", False, "another protocol"),
                                                     (b"HTTP/1.1", True, "closed the connection")])
def test_scheduler_address_held_by_another_service_is_refused_not_waited_on(greeting, hang_up, what):
    # distributed.Client waits for a scheduler's handshake without a time limit, so a port held by a web server
    # hung `--scheduler` for good; the probe refuses it in one line
    from dptopic.backends.cluster import probe_scheduler

    srv = TcpListener(greeting, hang_up)
    try:
        with pytest.raises(DPTopicError, match=what):
            probe_scheduler(srv.address, seconds=0.5)
    finally:
        srv.close()


def test_scheduler_probe_passes_a_dask_greeting_and_leaves_a_closed_port_to_the_client():
    import struct

    from dptopic.backends.cluster import probe_scheduler

    srv = TcpListener(struct.pack("<QQQ", 58, 1, 42) + b"x" * 42)
    try:
        probe_scheduler(srv.address, seconds=0.5)  # no error
    finally:
        srv.close()
    probe_scheduler(srv.address, seconds=0.5)  # nothing listens any more: Client's own error names it


def test_cluster_runs_keep_distributed_logs_off_stderr():
    # item 2: distributed's loggers printed ERROR lines and tracebacks during a CLI run on a cluster
    from dptopic.backends.cluster import quiet_cluster_logs

    client = logging.getLogger("distributed.client")
    client.setLevel(logging.WARNING)        # distributed's default config gives it a level of its own
    before = (logging.getLogger("distributed").level, client.level)
    with quiet_cluster_logs():
        assert not client.isEnabledFor(logging.ERROR)
        assert not logging.getLogger("distributed.scheduler").isEnabledFor(logging.ERROR)
        assert not logging.getLogger("distributed.nanny.new_child").isEnabledFor(logging.WARNING)
    assert (logging.getLogger("distributed").level, client.level) == before
