"""Results out: ``transform`` (document-topic proportions of new documents) and ``export`` (pyLDAvis)."""
from __future__ import annotations

import json
import sys

from .. import load
from .._io import atomic_write_bytes
from ..contributor.client import ServiceClient
from ..reporting.export import (
    SPREAD_WARNING,
    check_export_out,
    check_theta_out,
    private_input_note,
    pyldavis_export,
    write_theta_table,
)
from ..reporting.pull import pull
from ..reporting.terminal import make_console, warn
from ._common import (
    add_model_arg,
    add_request_args,
    owner_only_note,
    read_into_model,
    refuse_show_unsupported,
)
from ._flags import add_reading_args, with_flag_names


def _add_input_args(p, what: str) -> None:
    add_model_arg(p)
    p.add_argument("--corpus", required=True, help=f"the documents to {what} (read in the model's vocabulary)")
    add_reading_args(p)


def _model_and_docs(a):
    model = load(a.model)
    given = getattr(a, "id_field", None)
    docs = read_into_model(model, a.corpus, a.format, a.vocab, a.text_field, parameter="corpus", keep_empty=True,
                           id_field=given or DEFAULT_ID_FIELD, require_ids=given is not None)
    return model, docs


DEFAULT_ID_FIELD = "id"     # transform's doc_id column: this JSONL field / CSV column when every record has it




def cmd_transform(a):
    out = check_theta_out(a.out, a.overwrite)
    model, docs = _model_and_docs(a)
    theta = model.transform(docs)
    write_theta_table(out, theta, docs.doc_ids or [f"doc{i}" for i in range(docs.n_docs)])
    if getattr(model, "privacy_", {}).get("private"):
        print(f"warning: {private_input_note(model, {'corpus': '--corpus'})}.", file=sys.stderr)
    empty = int((docs.doc_lengths == 0).sum())
    make_console().print(f"{docs.n_docs} documents x {theta.shape[1]} topics written to {out}"
                         + owner_only_note("--corpus")
                         + (f"; {empty} with no word of the model's vocabulary: their rows are the prior mean" if empty else ""))


def export_warnings(doc: dict, model, kept_words_only: bool = False, corpus_public: bool = False) -> list:
    """The warnings ``dptopic export`` gives about the document it wrote (``reporting.export.pyldavis_export``): most
    of the topics' weight spread over the words outside the kept ones (``reporting.export.SPREAD_WARNING``), and
    figures read from documents not declared public."""
    out = []
    sm = doc.get("smoothing")
    if sm and not kept_words_only and sm["weight_outside_kept_words"] >= SPREAD_WARNING:
        out.append(f"{sm['weight_outside_kept_words']:.0%} of each topic's weight (mean over topics) is smoothing over"
                   f" the {sm['vocabulary_words'] - sm['kept_words']} words outside the {sm['kept_words']} that"
                   f" {type(model).__name__} estimated per topic ({sm['weight_on_top_10_words']:.0%} on its top 10"
                   " words), so pyLDAvis will show flat topics and large perplexities: pass --kept-words-only to"
                   " export the kept words only, renormalised.")
    if "privacy_note" in doc and not corpus_public:
        out.append(f"{doc['privacy_note']} (pass --corpus-public if --corpus is a public corpus).")
    return out


# the names of the export's parameters on this command line
EXPORT_FLAGS = {"kept_words_only": "--kept-words-only", "show_unsupported": "--show-unsupported", "model": "--model",
                "out": "--out"}


@with_flag_names(EXPORT_FLAGS)
def cmd_export(a):
    out = check_export_out(a.out, a.overwrite)
    model, docs = _model_and_docs(a)
    if a.show_unsupported:
        refuse_show_unsupported(model, a.model)
    doc = pyldavis_export(model, docs, kept_words_only=a.kept_words_only, show_unsupported=a.show_unsupported,
                          corpus_public=a.corpus_public, source=a.model, names={**EXPORT_FLAGS, "corpus": "--corpus"})
    for line in export_warnings(doc, model, a.kept_words_only, a.corpus_public):
        warn(line)
    atomic_write_bytes(out, json.dumps(doc).encode("utf-8"), private=not a.corpus_public)
    n_docs, n_topics = len(doc["doc_lengths"]), len(doc["topics"])
    left = model.components_.shape[0] - n_topics
    make_console().print(f"pyLDAvis data for {n_topics} topics" + (f" ({left} below the noise left out)" if left else "")
                         + f" and {n_docs} document{'' if n_docs == 1 else 's'} written to {out}"
                         + ("" if a.corpus_public else owner_only_note("--corpus", "--corpus-public")))


@with_flag_names({"fed": "--fed"})
def cmd_pull(a):
    info = pull(a.server, a.out, overwrite=a.overwrite, client=ServiceClient(a.server, timeout=a.timeout, retries=a.retries),
                fed=a.fed)
    make_console().print(pull_line(info, a.fed))


def pull_line(info: dict, fed: bool = False) -> str:
    """What ``dptopic pull`` says of the model it fetched (``info``: :func:`dptopic.reporting.pull.pull`'s answer):
    the server's active model, or with ``fed`` the FedLDA model of its latest closed round."""
    if fed:
        return (f"FedLDA model of round {info['round']} written to {info['out']}: read it with 'dptopic topics',"
                " 'transform' or 'report'")
    return (f"model {info['model_id']} (version {info['model_version']}, {info['class']}) written to {info['out']}:"
            " read it with 'dptopic topics', 'evaluate' or 'report'")


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
    t.set_defaults(func=cmd_transform)
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
    e.set_defaults(func=cmd_export)
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
    p.set_defaults(func=cmd_pull)
