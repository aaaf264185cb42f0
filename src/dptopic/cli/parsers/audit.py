"""``audit``'s parser (run by cli/audit.py)."""
from __future__ import annotations

from ...attacks.settings import COVERAGE_LIMIT, MAX_SHADOWS, ONE_RUN_CANARIES
from .._common import (
    add_corpus_args,
    jobs_int,
    positive_int,
)


def register(sub) -> None:
    p = sub.add_parser("audit", help="attack shadow models retrained with a model's training procedure (LiRA) and"
                                     " compare with its privacy claim")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", default=None,
                     help="a saved model directory: its training procedure (class and parameters) is audited by"
                          " retraining shadow models on --corpus; the saved model itself is not scored")
    src.add_argument("--algorithm", default=None, help="a trainer name (lda, hdp, cdp, ...; every one 'dptopic train --help' lists but ldp-doc)")
    add_corpus_args(p)
    p.add_argument("--topics", type=positive_int, default=None, help="number of topics (with --algorithm; default: the trainer's own: 50 for lda, hdp and cdp, 20 for docdp and docdp-cooc)")
    p.add_argument("--iterations", type=positive_int, default=None, help="training iterations (with --algorithm; default: the trainer's own: 200 for lda, 100 for hdp and cdp)")
    p.add_argument("--alpha", type=float, default=None, help="document-topic prior of the shadow models (default: the trainer's)")
    p.add_argument("--beta", type=float, default=None, help="topic-word prior of the shadow models (default: the trainer's)")
    p.add_argument("--epsilon", type=float, default=None, help="the guarantee the trainer claims, in total, in its"
                   " unit (as 'dptopic train --epsilon'; hdp and fed split it into their components: set a component"
                   " instead with --set epsilon_laplace=... or --set epsilon_per_entry=...; cdp/cdp+ claim none: --set"
                   " paper_epsilon=...; default: the trainer's own)")
    p.add_argument("--delta", type=float, default=None, help="the trainer's delta (default: the trainer's own, 1e-5 for most)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="any other trainer parameter (repeatable)")
    p.add_argument("--restrict", action="store_true",
                   help="with --model: drop corpus words the model does not know and audit the rest (without it, a"
                        f" corpus more than {COVERAGE_LIMIT:.0%}% of whose tokens the model does not know is refused)")
    p.add_argument("--design", choices=("lira", "one-run"), default="lira",
                   help="lira: shadow models on complementary halves (approximate confidence); one-run: ONE model"
                        " trained with independently included canaries, an exact-confidence bound for adding or"
                        " removing a canary document (Steinke, Nasr & Jagielski 2023; docs/auditing.md)")
    p.add_argument("--canaries", type=int, default=None,
                   help=f"with --design one-run: canary documents (default {ONE_RUN_CANARIES}; with --score release,"
                        " canary documents or persons, default 10,000)")
    p.add_argument("--canary-length", type=positive_int, default=None,
                   help="with --design one-run: tokens per canary, drawn from 2 rare words of its own (default 100;"
                        " longer only up to the corpus's own token count, and all canaries together only up to what"
                        " memory holds: an error names the bound)")
    p.add_argument("--score", choices=("model", "release"), default=None,
                   help="with --design one-run: model (default): canaries scored through the released topics;"
                        " release: white-box, canaries scored on the released statistic itself, placed on words the"
                        " release holds, the known documents subtracted (docdp-cooc, docdp, svi, hdp; docs/auditing.md)")
    p.add_argument("--canary-unit", choices=("document", "person"), default=None,
                   help="with --score release: each canary one document (default) or one person of"
                        " --canary-documents documents (does the claim cover a person?)")
    p.add_argument("--canary-documents", type=positive_int, default=None, metavar="K",
                   help="with --canary-unit person: documents per canary person (default 20)")
    p.add_argument("--user-field", default=None, metavar="FIELD",
                   help="the JSONL field / CSV column holding each document's person: needed to audit a user-level"
                        " model (train --unit user), whose shadows group the documents by person")
    p.add_argument("--shadows", type=int, default=None,
                   help=f"LiRA: shadow models, even, in [4, {MAX_SHADOWS:,}] (default 64)")
    p.add_argument("--targets", type=positive_int, default=None,
                   help="how many shadow models serve in turn as the attacked target (default: all)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the epsilon lower bound (default 0.95): approximate for --design lira (its"
                        " scores share shadow models), exact for --design one-run (Steinke, Nasr & Jagielski 2023,"
                        " Thm 3.1); see docs/auditing.md")
    p.add_argument("--seed", type=int, default=None,
                   help="seed (>= 0) for the shadow splits and training (default: fresh OS entropy)")
    p.add_argument("--jobs", type=jobs_int, default=None, help="LiRA: worker threads training shadows (default 2)")
    p.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="a public vocabulary (one word per line, or wordfreq:LANG[:SIZE]), as for train; with --model"
                        " the default is the model's own vocabulary (give the list it was trained on if it was trained"
                        " with --vocabulary)")
    p.add_argument("--out", default="runs/audit",
                   help="a new or empty folder for audit.json and roc.png (default: runs/audit)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if an earlier 'dptopic audit' wrote it (results of another command are never replaced)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run="audit:cmd_audit")
