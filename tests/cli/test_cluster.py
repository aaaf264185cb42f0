"""``dptopic cluster``: what the command does with its flags and files, and its one-line refusals."""
import logging

import pytest

from dptopic.errors import DPTopicError
from helpers import TcpListener


# ----------------------------------------------------------------- 9: --scheduler and --dask-local
@pytest.mark.parametrize("address", ["tcp://[::1:5", "tcp://host:99999", "[::1"])
def test_scheduler_address_malformed(address):
    from dptopic.cli._cluster import check_scheduler_address

    with pytest.raises(DPTopicError, match="invalid --scheduler"):
        check_scheduler_address(address)


@pytest.mark.parametrize("greeting, hang_up, what", [(b"", False, "sent no greeting"),
                                                     (b"SSH-2.0-OpenSSH_9.2\r\n", False, "another protocol"),
                                                     (b"HTTP/1.1", True, "closed the connection")])
def test_scheduler_address_held_by_another_service_is_refused_not_waited_on(greeting, hang_up, what):
    # distributed.Client waits for a scheduler's handshake without a time limit, so a port held by a web server
    # hung `--scheduler` for good; the probe refuses it in one line
    from dptopic.cli._cluster import probe_scheduler

    srv = TcpListener(greeting, hang_up)
    try:
        with pytest.raises(DPTopicError, match=what):
            probe_scheduler(srv.address, seconds=0.5)
    finally:
        srv.close()


def test_scheduler_probe_passes_a_dask_greeting_and_leaves_a_closed_port_to_the_client():
    import struct

    from dptopic.cli._cluster import probe_scheduler

    srv = TcpListener(struct.pack("<QQQ", 58, 1, 42) + b"x" * 42)
    try:
        probe_scheduler(srv.address, seconds=0.5)  # no error
    finally:
        srv.close()
    probe_scheduler(srv.address, seconds=0.5)  # nothing listens any more: Client's own error names it


def test_the_cli_keeps_distributed_logs_off_stderr():
    # item 2: distributed's loggers printed ERROR lines and tracebacks during a CLI run on a cluster
    from dptopic.cli._cluster import quiet_cluster_logs

    client = logging.getLogger("distributed.client")
    client.setLevel(logging.WARNING)        # distributed's default config gives it a level of its own
    before = (logging.getLogger("distributed").level, client.level)
    with quiet_cluster_logs():
        assert not client.isEnabledFor(logging.ERROR)
        assert not logging.getLogger("distributed.scheduler").isEnabledFor(logging.ERROR)
        assert not logging.getLogger("distributed.nanny.new_child").isEnabledFor(logging.WARNING)
    assert (logging.getLogger("distributed").level, client.level) == before
