"""``corpus``: corpus tools."""
from __future__ import annotations

from ..errors import DPTopicError
from ._common import add_corpus_args, corpus_from_args, make_console, positive_int


def _is_corpus(path) -> bool:
    from ..corpus import Corpus

    try:
        Corpus.load(path)
    except DPTopicError:
        return False
    return True


def cmd_corpus_prepare(a):
    from .._io import check_output_dir, check_output_file

    if a.shards is not None:  # a new or empty folder: shard files are added, never replaced
        check_output_dir(a.out, what="corpus shards")
    else:
        check_output_file(a.out, _is_corpus, overwrite=a.overwrite)
    corpus = corpus_from_args(a)
    if a.shards is not None:
        from ..backends import write_shards

        paths = write_shards(corpus, a.out, a.shards)
        make_console().print(f"{corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size} written"
                             f" as {len(paths)} shards to {a.out}")
        return
    out = corpus.save(a.out)
    make_console().print(f"{corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size} "
                         f"({corpus.n_empty_dropped} empty dropped) written to {out}")


def register(sub) -> None:
    c = sub.add_parser("corpus", help="corpus tools")
    csub = c.add_subparsers(dest="corpus_command", required=True, metavar="ACTION")
    cp = csub.add_parser("prepare", help="load, preprocess and save a corpus (.npz)")
    add_corpus_args(cp)
    cp.add_argument("--out", required=True,
                    help="the .npz file to write (a new file, or a corpus with --overwrite); with --shards: a directory")
    cp.add_argument("--overwrite", action="store_true", help="replace --out if it already holds a dptopic corpus")
    cp.add_argument("--shards", type=positive_int, default=None, metavar="N",
                    help="write N shard files (shard-00000.npz, ...) of about equal token counts into --out,"
                         " for training on a Dask cluster (each worker reads its own shards)")
    cp.set_defaults(func=cmd_corpus_prepare)
