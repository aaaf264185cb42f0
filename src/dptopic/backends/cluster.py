"""A Dask cluster to train on: the scheduler's address checked and probed (a port held by another service would
hang ``distributed.Client`` for good), a local cluster started for the block, distributed's logs kept off stderr.

:func:`dask_cluster` yields the ``backend``/``client`` pair that :func:`dptopic.train` and the trainers take
(docs/scaling.md).
"""
from __future__ import annotations

import logging
import socket
import struct
import time
from contextlib import contextmanager
from urllib.parse import urlsplit

from ..errors import DPTopicError


def check_scheduler_address(address: str, name: str = "scheduler") -> str:
    """A scheduler address that names a host and a port (``tcp://HOST:PORT`` or ``HOST:PORT``), else one line
    (naming the address as ``name``)."""
    text = str(address).strip()
    try:
        parts = urlsplit(text if "://" in text else "tcp://" + text)
        scheme, hostname, port = parts.scheme, parts.hostname, parts.port
    except ValueError:  # e.g. an unclosed IPv6 bracket, or a port out of range
        scheme = hostname = port = None
    if not text or scheme not in ("tcp", "tls", "inproc", "ws", "wss") or not hostname or port is None:
        raise DPTopicError(f"invalid {name} {address!r}: give the Dask scheduler's address as tcp://HOST:PORT"
                           " (e.g. tcp://10.0.0.5:8786).")
    return text


#: how long a TCP scheduler address may take to send its greeting before it is refused (seconds)
PROBE_SECONDS = 10.0

#: how long a refused connection is tried again before the address is reported unreachable (seconds): a scheduler
#: started just before the command may not listen yet
REFUSED_GRACE = 3.0


def probe_scheduler(address: str, seconds: float = PROBE_SECONDS) -> str | None:
    """Refuse, in one line, a ``tcp://`` address whose listener is not a Dask scheduler.

    A Dask scheduler greets every new connection at once with its handshake, a framed message: the message's
    length and then its number of frames, each an 8-byte little-endian integer. ``distributed.Client`` waits for that greeting without a time limit, so a
    port held by another service (a web server, the dashboard's port, SSH) would hang the command. Other schemes
    (TLS, websockets, in-process) are left to ``Client``'s own timeout. An address that refuses the connection
    (nothing listens on the port) is tried again for :data:`REFUSED_GRACE` seconds, then reported by returning
    ``"refused"`` (``Client`` would retry it for its whole timeout); any other failure to connect is left to
    ``Client``, whose error names it."""
    parts = urlsplit(address if "://" in address else "tcp://" + address)
    if parts.scheme != "tcp":
        return

    deadline = time.monotonic() + REFUSED_GRACE
    while True:     # a scheduler started a moment ago may not listen yet: a refusal is final after a short grace
        try:
            sock = socket.create_connection((parts.hostname, parts.port), timeout=seconds)
            break
        except ConnectionRefusedError:
            if time.monotonic() >= deadline:
                return "refused"
            time.sleep(0.25)
        except OSError:
            return None
    greeting = b""
    try:
        sock.settimeout(seconds)
        while len(greeting) < 16:
            chunk = sock.recv(16 - len(greeting))
            if not chunk:
                break
            greeting += chunk
    except OSError:  # includes the time-out
        pass
    finally:
        sock.close()
    length, n_frames = struct.unpack("<QQ", greeting) if len(greeting) == 16 else (0, 0)
    if 8 <= length < 1 << 30 and 1 <= n_frames <= 64:
        return None
    what = ("sent no greeting" if not greeting else "closed the connection" if len(greeting) < 16
            else "answered in another protocol")
    raise DPTopicError(f"{address} accepted the connection but {what} within {seconds:g} s: it is not a Dask"
                       " scheduler; give the scheduler's address (tcp://HOST:PORT, port 8786 by default, not the"
                       " dashboard's 8787).")


#: the loggers whose records a CLI run on a cluster keeps off stderr: worker restarts, failed broadcasts and reconnect
#: attempts are distributed's to log, and the CLI says what matters in its own lines (an error, a replay warning)
QUIET_LOGGERS = ("distributed", "tornado")


@contextmanager
def quiet_cluster_logs(level: int | None = None):
    """Raise the level of ``distributed``'s (and tornado's) loggers, and of every child logger that sets its own,
    to CRITICAL for the block; the levels are put back after it."""
    level = logging.CRITICAL if level is None else level
    manager = logging.Logger.manager
    saved = []
    names = [n for n in list(manager.loggerDict)
             if any(n == root or n.startswith(root + ".") for root in QUIET_LOGGERS)]
    for name in sorted(set(names) | set(QUIET_LOGGERS)):
        logger = logging.getLogger(name)
        if name in QUIET_LOGGERS or logger.level != logging.NOTSET:
            saved.append((logger, logger.level))
            logger.setLevel(level)
    try:
        yield
    finally:
        for logger, old in saved:
            logger.setLevel(old)


@contextmanager
def dask_cluster(scheduler: str | None = None, local_workers: int | None = None, names=None):
    """Yield ``(backend, client)`` for a training run (:func:`dptopic.train`'s ``backend``/``client``): ``("threads",
    None)`` with neither argument; ``("dask", client)`` connected to the scheduler at ``scheduler``
    (``tcp://HOST:PORT``, checked and probed first: a refused or foreign port is one line), or to a local cluster of
    ``local_workers`` worker processes started for the block. ``names``: how messages name the two arguments (the
    command line passes its flags). distributed's logs are kept off stderr for the block."""
    names = {"scheduler": "scheduler", "local_workers": "local_workers", **(names or {})}
    if scheduler is None and local_workers is None:
        yield "threads", None
        return
    try:
        from distributed import Client, LocalCluster  # an optional dependency (dptopic[dask])
    except ImportError:
        raise DPTopicError(f"{names['scheduler']}/{names['local_workers']} need the 'distributed' package: pip install"
                           " 'dptopic[dask]'.") from None
    with quiet_cluster_logs():
        if scheduler is not None:
            address = check_scheduler_address(scheduler, names["scheduler"])

            def unreachable(detail):
                return DPTopicError(f"cannot reach the Dask scheduler at {scheduler} ({detail}); check the address"
                                    " (tcp://HOST:PORT) and that the scheduler is running.")

            if probe_scheduler(address) == "refused":  # nothing listens there: say so now, not after Client's 20 s
                raise unreachable("connection refused: nothing listens on that port")
            try:
                client = Client(address, timeout="20s")
            except (OSError, ValueError, TypeError) as e:  # refused, timed out, or an address distributed cannot parse
                raise unreachable(" ".join(str(e).split())[:160] or type(e).__name__) from None
            with client:
                yield "dask", client
            return
        # silence_logs: the worker processes' own log level (their restarts are distributed's to log)
        with LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.CRITICAL) as cl, Client(cl) as client:
            yield "dask", client


def scheduler_lost(error: BaseException, on_cluster: bool) -> str | None:
    """The one line that says ``error`` means the Dask scheduler went away mid-run, or None when it does not:
    distributed's ``CommClosedError``, any OSError of distributed's own, or, for a run on a cluster (``on_cluster``),
    the plain ``OSError`` / ``TimeoutError`` it raises once its reconnect time-out is over ("Timed out trying to
    connect to tcp://...")."""
    if not isinstance(error, OSError):
        return None
    ours = type(error).__name__ == "CommClosedError" or type(error).__module__.startswith("distributed")
    text = str(error)
    # a file that could not be opened is no lost scheduler, whatever its name holds
    timed_out = (on_cluster and not getattr(error, "filename", None) and "Timed out trying to connect" in text
                 and "://" in text)
    if not (ours or timed_out):
        return None
    detail = getattr(error, "strerror", None) or text or type(error).__name__
    return (f"lost the connection to the Dask scheduler ({' '.join(str(detail).split())[:120]}): check that it is"
            " still running, then run the command again.")
