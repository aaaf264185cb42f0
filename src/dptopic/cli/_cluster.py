"""``--scheduler`` / ``--dask-local``: train on a Dask cluster (the ``dask`` backend)."""
from __future__ import annotations

from contextlib import contextmanager

from ..errors import DPTopicError
from ._common import positive_int


def add_cluster_args(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="train on this Dask cluster (needs dptopic[dask]); --corpus may then be a shard directory")
    g.add_argument("--dask-local", type=positive_int, default=None, metavar="N",
                   help="start a local Dask cluster of N worker processes and train on it")


def check_scheduler_address(address: str) -> str:
    """A scheduler address that names a host and a port (``tcp://HOST:PORT`` or ``HOST:PORT``), else one line."""
    from urllib.parse import urlsplit

    text = str(address).strip()
    parts = urlsplit(text if "://" in text else "tcp://" + text)
    try:
        port = parts.port
    except ValueError:
        port = None
    if not text or parts.scheme not in ("tcp", "tls", "inproc", "ws", "wss") or not parts.hostname or port is None:
        raise DPTopicError(f"invalid --scheduler {address!r}: give the Dask scheduler's address as tcp://HOST:PORT"
                           " (e.g. tcp://10.0.0.5:8786).")
    return text


@contextmanager
def cluster_from_args(a):
    """Yield ``(backend, client)`` for the model: ``("threads", None)`` unless a cluster was asked for."""
    if a.scheduler is None and a.dask_local is None:
        yield "threads", None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise DPTopicError("--scheduler/--dask-local need the 'distributed' package: pip install 'dptopic[dask]'.") from None
    if a.scheduler is not None:
        address = check_scheduler_address(a.scheduler)
        try:
            client = Client(address, timeout="20s")
        except (OSError, ValueError, TypeError) as e:  # refused, timed out, or an address distributed cannot parse
            detail = " ".join(str(e).split())[:160] or type(e).__name__
            raise DPTopicError(f"cannot reach the Dask scheduler at {a.scheduler} ({detail}); check the address"
                               " (tcp://HOST:PORT) and that the scheduler is running.") from None
        with client:
            yield "dask", client
        return
    with LocalCluster(n_workers=a.dask_local, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            Client(cl) as client:
        yield "dask", client


def shard_dir(spec):
    """``spec`` if it names a directory of corpus shards (``corpus prepare --shards``), else None."""
    from pathlib import Path

    from ..backends.shards import SHARD_PATTERN

    if spec is None:
        return None
    p = Path(spec)
    return p if p.is_dir() and any(p.glob(SHARD_PATTERN)) else None


def fit_shards(model, a, console) -> None:
    """Train on a shard directory: the workers read the shards; there is no held-out split on the driver."""
    from ..backends import training_source

    shards = training_source(shard_dir(a.corpus))
    console.print(f"[bold]corpus[/]: {len(shards.paths)} shards, {shards.n_docs} documents, {shards.n_tokens} tokens,"
                  f" V={shards.vocab_size}; held-out evaluation skipped (run 'dptopic evaluate' on a test corpus)")
    model.fit(shards)
    model.metrics_ = {}
