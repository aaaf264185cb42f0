"""The service's own time limit on PostgreSQL (``service/storage/deadline.py``): the watchdog that shuts a silent
server's connection down at its deadline."""
import socket
import time

import pytest

pytest.importorskip("sqlalchemy")

from dptopic.service.storage.deadline import _WATCHDOG  # noqa: E402


def test_watchdog_never_shuts_down_a_socket_that_took_a_closed_descriptor_s_number():
    """libpq may close its descriptor inside a watched wait (the server ended the connection); a socket opened then
    may get the same number. The watchdog holds its own copy, so the deadline shuts down only the watched socket."""
    a, b = socket.socketpair()
    entry = _WATCHDOG.watch(a.fileno(), time.monotonic() + 0.3)
    number = a.fileno()
    a.close()                               # the owner closes it while the wait is still registered
    c, d = socket.socketpair()
    try:
        if c.fileno() != number:
            pytest.skip("the new socket did not reuse the closed descriptor's number here")
        b.settimeout(60)
        assert b.recv(1) == b""             # past the deadline the watched socket is shut down (its peer reads EOF)
        c.sendall(b"x")                     # the new socket still works
        assert d.recv(1) == b"x"
        assert _WATCHDOG.unwatch(entry) is True
    finally:
        for s in (b, c, d):
            s.close()
