"""Results out: ``transform`` (document-topic proportions of new documents) and ``export`` (pyLDAvis)."""
from __future__ import annotations

import json
import sys

from .. import load
from .._io import atomic_write_bytes
from ..contributor.client import ServiceClient
from ..corpus.numbered_ids import NumberedIds
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
from ._common import owner_only_note, refuse_show_unsupported
from ._flags import with_flag_names
from ._run_common import read_into_model
from .parsers.results import DEFAULT_ID_FIELD


def _model_and_docs(a):
    model = load(a.model)
    given = getattr(a, "id_field", None)
    docs = read_into_model(model, a.corpus, a.format, a.vocab, a.text_field, parameter="corpus", keep_empty=True,
                           id_field=given or DEFAULT_ID_FIELD, require_ids=given is not None)
    return model, docs


def cmd_transform(a):
    out = check_theta_out(a.out, a.overwrite)
    model, docs = _model_and_docs(a)
    theta = model.transform(docs)
    write_theta_table(out, theta, docs.doc_ids or NumberedIds(docs.n_docs))
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


