"""``corpus``: corpus tools."""
from __future__ import annotations

from ..errors import DPTopicError
from ._common import add_corpus_args, make_console, corpus_from_args


def _is_corpus(path) -> bool:
    from ..corpus import Corpus

    try:
        Corpus.load(path)
    except DPTopicError:
        return False
    return True


def cmd_corpus_prepare(a):
    from .._io import check_output_file

    check_output_file(a.out, _is_corpus, overwrite=a.overwrite)
    corpus = corpus_from_args(a)
    out = corpus.save(a.out)
    make_console().print(f"{corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size} "
                     f"({corpus.n_empty_dropped} empty dropped) written to {out}")


def register(sub) -> None:
    c = sub.add_parser("corpus", help="corpus tools")
    csub = c.add_subparsers(dest="corpus_command", required=True, metavar="ACTION")
    cp = csub.add_parser("prepare", help="load, preprocess and save a corpus (.npz)")
    add_corpus_args(cp)
    cp.add_argument("--out", required=True, help="the .npz file to write (a new file, or a corpus with --overwrite)")
    cp.add_argument("--overwrite", action="store_true", help="replace --out if it already holds a dptopic corpus")
    cp.set_defaults(func=cmd_corpus_prepare)
