"""``corpus``'s parser (run by cli/corpus.py)."""
from __future__ import annotations

from .._common import (
    add_corpus_args,
    add_preprocessing_args,
    positive_int,
)
from .._flags import add_reading_args


def register(sub) -> None:
    c = sub.add_parser("corpus", help="corpus tools")
    csub = c.add_subparsers(dest="corpus_command", required=True, metavar="ACTION")
    cp = csub.add_parser("prepare", help="load, preprocess and save a corpus (.npz)")
    add_corpus_args(cp)
    cp.add_argument("--out", required=True,
                    help="the .npz file to write (a new file, or a corpus with --overwrite); with --shards: a directory")
    cp.add_argument("--vocabulary", default=None, metavar="FILE",
                    help="a public word list (one word per line) instead of words chosen from the data: the corpus"
                         " keeps it, and a private model trained on it records the vocabulary as supplied (public)")
    cp.add_argument("--overwrite", action="store_true", help="replace --out if it already holds a dptopic corpus")
    cp.add_argument("--shards", type=positive_int, default=None, metavar="N",
                    help="write N shard files (shard-00000.npz, ...) of about equal token counts into --out:"
                         " the document-level trainers (--unit document, docdp, docdp-cooc) stream such a folder"
                         " in flat memory, one shard at a time; on a Dask cluster each worker reads its own shards;"
                         " the Gibbs trainers on threads load every shard into memory. Like every corpus file they"
                         " are readable by their owner only (mode 0600)")
    cp.add_argument("--private", action="store_true",
                    help="mark the corpus as private: 'corpus info' then warns that its statistics are not protected")
    cp.set_defaults(run="corpus:cmd_corpus_prepare")

    ci = csub.add_parser("info", help="documents, tokens, vocabulary size and the most frequent words of a corpus")
    ci.add_argument("corpus", metavar="FILE", help="a prepared .npz, a text/JSONL/CSV/UCI file or folder, 'demo'")
    add_reading_args(ci, label=True)
    add_preprocessing_args(ci)
    ci.add_argument("--top", type=positive_int, default=20, help="how many of the most frequent words to list (default 20)")
    ci.add_argument("--json", action="store_true", help="print the summary as JSON")
    ci.add_argument("--user-field", default=None, metavar="FIELD", help="the field naming each document's person: also"
                    " count the people and list the ids that may be one person, by evidence: the same id in another"
                    " case or form, largely the same documents, or an alias given")
    ci.add_argument("--person-aliases", default=None, metavar="FILE",
                    help="with --user-field: ids that are one person (git's .mailmap, or a two-column CSV), listed"
                         " together")
    ci.add_argument("--private", action="store_true", help="treat the corpus as private (warn) even if not marked")
    ci.set_defaults(run="corpus:cmd_corpus_info")
