"""``results``'s parser (run by cli/results.py)."""
from __future__ import annotations

from .._common import (
    add_model_arg,
    add_request_args,
)
from .._flags import add_reading_args


def _add_input_args(p, what: str) -> None:
    add_model_arg(p)
    p.add_argument("--corpus", required=True, help=f"the documents to {what} (read in the model's vocabulary)")
    add_reading_args(p)


DEFAULT_ID_FIELD = "id"     # transform's doc_id column: this JSONL field / CSV column when every record has it


def register(sub) -> None:
    t = sub.add_parser("transform", help="document-topic proportions of documents under a saved model (CSV or .npy)")
    _add_input_args(t, "infer topic proportions for")
    t.add_argument("--id-field", default=None, metavar="NAME",
                   help="JSONL field / CSV column holding each document's id, written in the doc_id column (default:"
                        f" {DEFAULT_ID_FIELD!r} when the records have it; a folder's file names; otherwise doc0, doc1, ...)")
    t.add_argument("--out", required=True,
                   help="theta.csv (with a doc_id column) or theta.npy (D x K); in the CSV, an id that begins with =, +,"
                        " -, @, a tab or a carriage return (and is not a plain number such as -1) is written with a leading '"
                        " so that spreadsheets do not run"
                        " it as a formula (strip it to get the id back), and proportions carry every digit")
    t.add_argument("--overwrite", action="store_true", help="replace --out if it is a table this command wrote")
    t.set_defaults(run="results:cmd_transform")
    e = sub.add_parser("export", help="export a saved model for other tools (pyLDAvis)")
    e.add_argument("--to", required=True, choices=("pyldavis",), help="the target tool")
    _add_input_args(e, "describe")
    e.add_argument("--corpus-public", action="store_true",
                   help="--corpus is public: its document lengths and term frequencies need no privacy note")
    e.add_argument("--kept-words-only", action="store_true",
                   help="document-level models (DocDPCooccurrence, DocDPEM): export only the words the release"
                        " estimated per topic, each topic renormalised over them; without it most of such a topic's"
                        " weight can be smoothing over the other words (the export's 'smoothing' entry says how much),"
                        " which pyLDAvis shows as flat topics")
    e.add_argument("--show-unsupported", action="store_true",
                   help="document-level private models: also export the topics that do not stand above the noise of"
                        " the release (left out by default, each document's proportions renormalised over the others)")
    e.add_argument("--out", required=True, help="the JSON file to write")
    e.add_argument("--overwrite", action="store_true", help="replace --out if it is an export this command wrote")
    e.set_defaults(run="results:cmd_export")
    p = sub.add_parser("pull", help="fetch a collection server's current model into a model folder",
                       description="Fetch the active model of a 'dptopic serve' server (its topics and privacy report,"
                                   " as public as /v1/topics) into a new model folder that 'dptopic topics', 'report'"
                                   " and 'privacy verify' read.")
    p.add_argument("--server", required=True, help="the server, e.g. http://127.0.0.1:8000")
    p.add_argument("--out", required=True, help="a new or empty folder for the model")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it already holds a dptopic model")
    p.add_argument("--fed", action="store_true",
                   help="fetch the FedLDA model instead (GET /v1/fed/model): the broadcast of the latest closed round,"
                        " with its per-user privacy report (servers started with --fed-epsilon-per-entry)")
    add_request_args(p, "request", 3, "while the server is unavailable")
    p.set_defaults(run="results:cmd_pull")
