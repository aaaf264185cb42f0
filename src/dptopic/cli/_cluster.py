"""``--scheduler`` / ``--dask-local``: train on a Dask cluster (the ``dask`` backend)."""
from __future__ import annotations

import argparse
from contextlib import contextmanager
from pathlib import Path

from ..backends.cluster import check_scheduler_address as check
from ..backends.cluster import dask_cluster
from ..corpus.shards import folder_shards
from ..errors import DPTopicError
from ._common import add_corpus_args


@contextmanager
def cluster_from_args(a):
    """Yield ``(backend, client)`` for the model: ``("threads", None)`` unless a cluster was asked for."""
    with dask_cluster(a.scheduler, a.dask_local, {"scheduler": "--scheduler", "local_workers": "--dask-local"}) as pair:
        yield pair


def check_scheduler_address(address: str) -> str:
    """``--scheduler``'s address, checked (:func:`dptopic.backends.cluster.check_scheduler_address`)."""
    return check(address, "--scheduler")


def shard_dir(spec):
    """``spec`` if it names a directory of corpus shards (``corpus prepare --shards``), else None."""
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
