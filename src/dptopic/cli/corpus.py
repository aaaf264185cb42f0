"""``corpus``: corpus tools."""
from __future__ import annotations

from ._common import add_corpus_args, make_console, corpus_from_args, positive_int


def cmd_corpus_prepare(a):
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
    cp.add_argument("--out", required=True, help="output .npz (with --shards: a directory)")
    cp.add_argument("--shards", type=positive_int, default=None, metavar="N",
                    help="write N shard files (shard-00000.npz, ...) of about equal token counts into --out,"
                         " for training on a Dask cluster (each worker reads its own shards)")
    cp.set_defaults(func=cmd_corpus_prepare)
