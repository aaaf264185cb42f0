"""``--scheduler`` / ``--dask-local``: train on a Dask cluster (the ``dask`` backend)."""
from __future__ import annotations

import argparse
import logging
import os
import socket
import struct
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import DPTopicError
from ._common import add_corpus_args, positive_int


MAX_LOCAL_WORKERS = 256  # --dask-local: worker processes on this one machine


def _local_workers(s: str) -> int:
    """``--dask-local N``: a whole number of worker processes in [1, MAX_LOCAL_WORKERS]."""

    n = positive_int(s)
    if n > MAX_LOCAL_WORKERS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_LOCAL_WORKERS} worker processes on one machine (this"
                                         " one has {} cores), got {}; for more, start a Dask cluster and give"
                                         " --scheduler".format(_cores(), s))
    return n


def _cores() -> str:
    return str(os.cpu_count() or "an unknown number of")


def add_cluster_args(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="train on this Dask cluster (needs dptopic[dask]); --corpus may then be a shard directory")
    g.add_argument("--dask-local", type=_local_workers, default=None, metavar="N",
                   help=f"start a local Dask cluster of N worker processes (at most {MAX_LOCAL_WORKERS}) and train on it")


def check_scheduler_address(address: str) -> str:
    """A scheduler address that names a host and a port (``tcp://HOST:PORT`` or ``HOST:PORT``), else one line."""

    text = str(address).strip()
    try:
        parts = urlsplit(text if "://" in text else "tcp://" + text)
        scheme, hostname, port = parts.scheme, parts.hostname, parts.port
    except ValueError:  # e.g. an unclosed IPv6 bracket, or a port out of range
        scheme = hostname = port = None
    if not text or scheme not in ("tcp", "tls", "inproc", "ws", "wss") or not hostname or port is None:
        raise DPTopicError(f"invalid --scheduler {address!r}: give the Dask scheduler's address as tcp://HOST:PORT"
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
    ``"refused"`` (``Client`` would retry it for its whole timeout); any other failure to connect is left to ``Client``, whose error names it."""

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
def cluster_from_args(a):
    """Yield ``(backend, client)`` for the model: ``("threads", None)`` unless a cluster was asked for."""
    if a.scheduler is None and a.dask_local is None:
        yield "threads", None
        return
    try:
        from distributed import Client, LocalCluster  # heavy: not loaded at the CLI's start-up
    except ImportError:
        raise DPTopicError("--scheduler/--dask-local need the 'distributed' package: pip install 'dptopic[dask]'.") from None
    with quiet_cluster_logs():
        with _cluster(a, Client, LocalCluster) as pair:
            yield pair


@contextmanager
def _cluster(a, Client, LocalCluster):

    if a.scheduler is not None:
        address = check_scheduler_address(a.scheduler)

        def unreachable(detail):
            return DPTopicError(f"cannot reach the Dask scheduler at {a.scheduler} ({detail}); check the address"
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
    with LocalCluster(n_workers=a.dask_local, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cl, \
            Client(cl) as client:
        yield "dask", client


def shard_dir(spec):
    """``spec`` if it names a directory of corpus shards (``corpus prepare --shards``), else None."""
    from ..corpus.shards import folder_shards  # read on use: the CLI's start-up stays light

    if spec is None:
        return None
    p = Path(spec)
    return p if p.is_dir() and folder_shards(p) else None


# How a shard folder ('corpus prepare --shards') meets train's corpus flags, one rule for all of them: the folder is
# read as it was prepared, so a flag is honoured where its value asks for what training on it does anyway, and refused
# otherwise. The flags are those add_corpus_args gives train, and train's own below.
_SHARD_HONOURS = {"format": ("auto",), "test_size": (0,)}      # dest -> the values that say what the folder does
_TRAIN_CORPUS_FLAGS = {"vocabulary": ("--vocabulary", None), "private_vocabulary": ("--private-vocabulary", None),
                       "vocabulary_policy": ("--vocabulary-policy", None), "test_size": ("--test-size", 0.2)}
_NOT_PREPARED_WITH = ("private_vocabulary", "vocabulary_policy", "test_size")   # no 'corpus prepare' flags


def _corpus_flags() -> dict:
    """``{dest: (flag, default)}`` for every option of train that says how a corpus is read: the options of
    :func:`add_corpus_args`, read from a parser it builds (a flag added there is covered here), and train's own."""


    p = argparse.ArgumentParser(add_help=False)
    add_corpus_args(p)
    flags = {act.dest: (act.option_strings[0], act.default) for act in p._actions if act.dest != "corpus"}
    return {**flags, **_TRAIN_CORPUS_FLAGS}


def refuse_corpus_flags_for_shards(a) -> None:
    """Every corpus flag given with a shard folder is honoured (``_SHARD_HONOURS``) or refused, all in one line."""
    given = getattr(a, "_given", None)
    bad = []
    for dest, (flag, default) in _corpus_flags().items():
        value = getattr(a, dest, default)
        if (dest in given if given is not None else value != default) and value not in _SHARD_HONOURS.get(dest, ()):
            bad.append((dest, "--no-lowercase" if dest == "lowercase" and value is False else flag))
    if not bad:
        return
    flags = [flag for _, flag in bad]
    them = "it" if len(bad) == 1 else "them"
    fixes = []
    prepare = [flag for dest, flag in bad if dest not in _NOT_PREPARED_WITH]
    if prepare:
        fixes.append(f"{' / '.join(prepare)}: give {'it' if len(prepare) == 1 else 'them'} to 'dptopic corpus prepare'"
                     " and make the shards again")
    private = [flag for dest, flag in bad if dest in ("private_vocabulary", "vocabulary_policy")]
    if private:
        fixes.append(f"{' / '.join(private)}: train on the corpus file the shards were prepared from")
    if any(dest == "test_size" for dest, _ in bad):
        fixes.append("--test-size: every shard trains and none is held out, as --test-size 0 says; run 'dptopic"
                     " evaluate' on a test corpus afterwards")
    raise DPTopicError(f"{' / '.join(flags)} {'has' if len(bad) == 1 else 'have'} no effect on a shard folder, which is"
                       f" read as 'dptopic corpus prepare' made it: drop {them} ({'; '.join(fixes)}).")
