"""Execution engines for Gibbs training: threads on this machine, or a Dask cluster.

The trainers call only the :class:`Backend` interface (see ``docs/scaling.md``).
"""
from ..corpus.shards import ShardSet, training_source, write_shards
from ..errors import DPTopicError
from .base import Backend
from .dask import DaskBackend
from .threads import ThreadBackend

BACKENDS = ("threads", "dask")


def make_backend(name: str, n_jobs: int = 1, client=None, parallel: str = "adlda") -> Backend:
    """The backend a trainer's ``backend``/``client``/``n_jobs`` parameters ask for. A ``client`` is a Dask
    client, so it is refused with any other backend rather than silently left unused."""
    if client is not None and name != "dask":
        raise DPTopicError(f"client= is a Dask client, used only with backend='dask' (this model has backend={name!r}):"
                           " pass backend='dask' to train on that cluster, or drop client.")
    if name == "dask":
        return DaskBackend(client)
    return ThreadBackend(n_jobs, parallel)


__all__ = ["Backend", "ThreadBackend", "ShardSet", "make_backend", "training_source", "write_shards", "BACKENDS"]
