"""``local``'s parser (run by cli/local.py)."""
from __future__ import annotations

from .._common import (
    FORMATS,
    positive_float,
)


def _flip_args(p):
    g = p.add_mutually_exclusive_group()
    g.add_argument("--epsilon-word", type=positive_float, default=None,
                   help="per-word local epsilon (Zhao et al. Thm 4); the document's epsilon is V times it")
    g.add_argument("--f", type=float, default=None, help="flip parameter in (0, 1) instead of --epsilon-word")


def register(sub) -> None:
    r = sub.add_parser("randomize", help="contributor side: turn documents into locally private reports",
                       description="Randomize documents on the contributor's side. --unit word (Zhao et al. 2020,"
                                   " Sec. V): each document becomes its word-presence vector over the public"
                                   " vocabulary, every bit flipped with probability f/2 (private per word). --unit"
                                   " document: two of the document's tokens, as a word pair, through k-subset"
                                   " selection (private per document). Only the report file leaves the"
                                   " device. There is no seed option: a known seed would let anyone undo the"
                                   " randomization; coins come from the OS CSPRNG.")
    r.add_argument("--vocabulary", required=True, help="the public vocabulary: a text file, one word per line, or wordfreq:LANG[:SIZE] (a general word"
                        " list of that language; pip install 'dptopic[wordlist]')")
    r.add_argument("--unit", choices=("word", "document"), default="word",
                   help="word (default): LP-LDA's per-word reports (eps_doc = V x eps_word); document: one word pair"
                        " per document by k-subset selection, eps_doc per document (docs/local_dp.md)")
    r.add_argument("--epsilon-doc", type=positive_float, default=None,
                   help="--unit document: the per-document epsilon (default 8); use a vocabulary of a few hundred"
                        " frequent words")
    _flip_args(r)
    r.add_argument("--corpus", required=True, help="the documents: a path in any format the loaders read")
    r.add_argument("--format", default="auto", choices=FORMATS, help="input format (auto: by name)")
    r.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    r.add_argument("--out", required=True, help="report file to write (a new file, or a report file with --overwrite)")
    r.add_argument("--overwrite", action="store_true", help="replace --out if it is a report file")
    r.set_defaults(run="local:cmd_randomize")
