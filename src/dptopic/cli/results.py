"""Results out: ``transform`` (document-topic proportions of new documents) and ``export`` (pyLDAvis)."""
from __future__ import annotations

import hashlib
import io
import json
import math
import re
import sys
from pathlib import Path

from ..errors import DPTopicError
from ._common import FORMATS, add_model_arg, make_console, owner_only_note

PRIVATE_INPUT_NOTE = ("the model is private, but these figures are computed from the documents of --corpus: they are"
                      " NOT covered by its privacy report (if --corpus holds private documents, treat the output as"
                      " private data{})")


def private_input_note(model) -> str:
    """The warning for figures computed from documents under a private model; the Gibbs trainers that release the
    training documents' proportions (``training_theta_``) are pointed to them."""
    has = hasattr(type(model), "_training_theta")          # HDPLDA, CDPLDA: released with the topics at fit time
    return PRIVATE_INPUT_NOTE.format("; for the training documents use training_theta_ of the fitted model in Python,"
                                     " which the report covers" if has else "")


def _add_input_args(p, what: str) -> None:
    add_model_arg(p)
    p.add_argument("--corpus", required=True, help=f"the documents to {what} (read in the model's vocabulary)")
    p.add_argument("--format", default="auto", choices=FORMATS, help="input format (auto: by name)")
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    p.add_argument("--vocab", default=None, help="UCI vocab file (default: next to the docword file)")


def _model_and_docs(a):
    from .. import load
    from ._common import read_into_model

    model = load(a.model)
    given = getattr(a, "id_field", None)
    docs = read_into_model(model, a.corpus, a.format, a.vocab, a.text_field, flag="--corpus", keep_empty=True,
                           id_field=given or DEFAULT_ID_FIELD, require_ids=given is not None)
    return model, docs


DEFAULT_ID_FIELD = "id"     # transform's doc_id column: this JSONL field / CSV column when every record has it


THETA_NPY_FORMAT = "dptopic-theta-npy"


def _theta_stamp(path: Path) -> Path:
    """The hidden file beside a ``.npy`` table that ``transform`` wrote: it names the table's SHA-256, so only a file
    byte for byte as this command wrote it is recognised as ours (any 2-D array could otherwise be a user's own)."""
    return path.with_name(f".{path.name}.dptopic")


def _sha256(chunks) -> str:
    """SHA-256 of the bytes in ``chunks`` (the table just written, or a file read 1 MiB at a time)."""
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(chunk)
    return h.hexdigest()


def _stamp_meta(stamp: Path):
    """The record in a stamp file ``transform`` wrote, or None (missing, not a plain file, or not one of ours)."""
    try:
        if stamp.is_symlink() or not stamp.is_file() or stamp.stat().st_size > 4096:
            return None
        meta = json.loads(stamp.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and meta.get("format") == THETA_NPY_FORMAT else None


def _is_ours_theta(path: Path) -> bool:
    if path.suffix.lower() == ".npy":
        meta = _stamp_meta(_theta_stamp(path))
        if meta is None:
            return False
        try:
            with open(path, "rb") as fh:
                return meta.get("sha256") == _sha256(iter(lambda: fh.read(1 << 20), b""))
        except (OSError, ValueError):
            return False
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline().startswith("doc_id,topic_0")
    except OSError:
        return False


def cmd_transform(a):
    from .._io import atomic_write_bytes, check_output_file

    import numpy as np

    p = Path(a.out)
    if p.suffix.lower() not in (".csv", ".npy"):
        raise DPTopicError(f"--out {a.out!r} must end in .csv or .npy.")
    if (a.overwrite and p.suffix.lower() == ".npy" and p.is_file() and not p.is_symlink()
            and not _is_ours_theta(p)):
        raise DPTopicError(f"--out {a.out!r} is a .npy file that dptopic cannot tell it wrote (your own array, or a"
                           " table from an older version): refusing to replace it; remove it yourself or choose"
                           " another --out.")
    out = check_output_file(a.out, _is_ours_theta, overwrite=a.overwrite, what="document-topic table")
    stamp = _theta_stamp(out)
    if out.suffix.lower() == ".npy" and (stamp.is_symlink() or (stamp.exists() and not stamp.is_file())):
        raise DPTopicError(f"{str(stamp)!r} (where transform records the .npy tables it wrote) is not a plain file:"
                           " remove it, or choose another --out.")
    if out.suffix.lower() == ".npy" and stamp.is_file() and _stamp_meta(stamp) is None:
        raise DPTopicError(f"{str(stamp)!r} (where transform records the .npy tables it wrote) is a file dptopic did"
                           " not write: refusing to replace it; remove it yourself, or choose another --out.")
    model, docs = _model_and_docs(a)
    theta = np.asarray(model.transform(docs), dtype=np.float64)
    if out.suffix.lower() == ".npy":
        buf = io.BytesIO()
        np.save(buf, theta, allow_pickle=False)
        data = buf.getvalue()
        atomic_write_bytes(out, data, private=True)     # one row per document of --corpus: readable by its owner
        atomic_write_bytes(stamp, json.dumps({"format": THETA_NPY_FORMAT, "file": out.name,
                                              "sha256": _sha256([data])}).encode("utf-8"))
    else:
        ids = docs.doc_ids or [f"doc{i}" for i in range(docs.n_docs)]
        lines = ["doc_id," + ",".join(f"topic_{k}" for k in range(theta.shape[1]))]
        # every digit of each proportion (repr: the shortest text that reads back as the same float), so a row read
        # back sums to 1 as closely as the array does
        lines += [_csv_cell(i) + "," + ",".join(repr(float(x)) for x in row) for i, row in zip(ids, theta)]
        atomic_write_bytes(out, ("\n".join(lines) + "\n").encode("utf-8"), private=True)
    if getattr(model, "privacy_", {}).get("private"):
        print(f"warning: {private_input_note(model)}.", file=sys.stderr)
    empty = int((docs.doc_lengths == 0).sum())
    make_console().print(f"{docs.n_docs} documents x {theta.shape[1]} topics written to {out}"
                         + owner_only_note("--corpus")
                         + (f"; {empty} with no word of the model's vocabulary: their rows are the prior mean" if empty else ""))


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV injection")."""

_PLAIN_NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")
"""An id that is a signed number: a spreadsheet reads it as that number, no formula, so it is kept as written (joins on
it hold)."""


def _csv_cell(s) -> str:
    """One CSV cell for a document id: an id that begins like a formula (=, +, -, @, a tab or a carriage return) and is
    not a plain signed number gets a leading single quote, so that a spreadsheet shows it as text instead of running it (the OWASP rule for CSV
    injection); then quoted where CSV needs it."""
    s = str(s)
    if s.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(s):    # "-1" runs nothing
        s = "'" + s
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n\r') else s


SPREAD_WARNING = 0.25
"""The share of each topic's weight (mean over topics) outside the kept words from which ``export`` warns on stderr."""


def __getattr__(name):
    """The export's computations live in :mod:`dptopic.reporting.export`; imports from here keep working."""
    if name in ("pyldavis_data", "kept_words", "spread_summary", "export_privacy", "DOCUMENT_LEVEL"):
        from ..reporting import export

        return getattr(export, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cmd_export(a):
    from .._io import atomic_write_bytes, check_output_file
    from ..reporting.export import DOCUMENT_LEVEL, export_privacy, kept_words, pyldavis_data, spread_summary

    def ours(p):
        try:
            return json.loads(p.read_text("utf-8")).get("format") == "dptopic-pyldavis"
        except (OSError, ValueError, AttributeError):
            return False

    if Path(a.out).suffix.lower() != ".json":
        raise DPTopicError(f"--out {a.out!r} must end in .json: the export is one JSON file.")
    out = check_output_file(a.out, ours, overwrite=a.overwrite, what="pyLDAvis export")
    model, docs = _model_and_docs(a)
    kept = kept_words(model)
    if a.kept_words_only and kept is None:
        raise DPTopicError(f"--kept-words-only applies to a document-level model ({', '.join(DOCUMENT_LEVEL)}), whose"
                           f" topics spread weight they did not estimate over the other words; --model {a.model!r} is"
                           f" {type(model).__name__}, which estimates every word: drop --kept-words-only.")
    if a.kept_words_only and not len(kept):
        raise DPTopicError(f"--model {a.model!r}: its release estimated no word above the noise, so there are no kept"
                           " words to export: drop --kept-words-only.")
    from ._common import refuse_show_unsupported, support_summary, topic_support

    if a.show_unsupported:
        refuse_show_unsupported(model, a.model)
    supported, background = topic_support(model)
    K = model.components_.shape[0]
    shown = list(range(K)) if supported is None or a.show_unsupported else [k for k in range(K) if supported[k]]
    if not shown:
        raise DPTopicError(f"--model {a.model!r}: none of its {K} topics stands above the noise of its release, so"
                           " there is nothing to export; pass --show-unsupported to export them all, noise included.")
    doc = {"format": "dptopic-pyldavis", "version": 1,
           "usage": "pyLDAvis.prepare(**{k: d[k] for k in ('topic_term_dists', 'doc_topic_dists', 'doc_lengths',"
                    " 'vocab', 'term_frequency')})",
           **pyldavis_data(model, docs, words=kept if a.kept_words_only else None, topics=shown)}
    from ..evaluation.topic_quality import ranking_text, word_ranking

    # how dptopic shows these topics' words, so a reader of pyLDAvis's relevance slider can set it alike
    doc["top_words"] = (f"dptopic shows these topics' words {ranking_text(word_ranking(model))}, p(w) the topics' mean;"
                        " pyLDAvis's relevance slider takes p(w) from term_frequency")
    # one entry per exported topic, in the order of topic_term_dists' rows: its id in the model and, for a model
    # that assessed it, whether it stands above the noise (post-processing of the release, inside the guarantee)
    doc["topics"] = [{"topic": k, **({} if supported is None else {"supported": supported[k],
                                                                    "background": background[k]})} for k in shown]
    if supported is not None:
        left = [k for k in range(K) if k not in shown]
        doc["support"] = {"supported": sum(supported), "topics": K, "left_out": left,
                          "note": support_summary(supported) + (
                              f"; topics {', '.join(map(str, left))} are below it and left out, doc_topic_dists"
                              " renormalised over the others (--show-unsupported exports them all)" if left else "")}
    if kept is not None:
        doc["smoothing"] = spread_summary(model, kept)
        doc["smoothing"]["kept_words_only"] = bool(a.kept_words_only)
        if a.kept_words_only:
            doc["smoothing"]["note"] = (f"only the {len(kept)} kept words are exported, each topic renormalised over"
                                        " them; doc_lengths and term_frequency count their tokens only")
        elif doc["smoothing"]["weight_outside_kept_words"] >= SPREAD_WARNING:
            sm = doc["smoothing"]
            print(f"warning: {sm['weight_outside_kept_words']:.0%} of each topic's weight (mean over topics) is"
                  f" smoothing over the {sm['vocabulary_words'] - sm['kept_words']} words outside the"
                  f" {sm['kept_words']} that {type(model).__name__} estimated per topic ({sm['weight_on_top_10_words']:.0%}"
                  " on its top 10 words), so pyLDAvis will show flat topics and large perplexities: pass"
                  " --kept-words-only to export the kept words only, renormalised.", file=sys.stderr)
    private = bool(getattr(model, "privacy_", {}).get("private"))
    doc["privacy"], released = export_privacy(model)
    from .train import learned_words

    learned = learned_words(model)      # FedLDA: the words past report_words are a shared fill, not learned
    if learned:
        doc.update(learned)
        released += "; " + learned["report_words_note"]
    if private:
        doc["privacy_note"] = released + ("" if a.corpus_public else "; doc_topic_dists, doc_lengths and"
                                          " term_frequency are computed from the documents of --corpus and are NOT"
                                          " covered by the model's privacy report")
    if private and not a.corpus_public:
        print(f"warning: {doc['privacy_note']} (pass --corpus-public if --corpus is a public corpus).", file=sys.stderr)
    atomic_write_bytes(out, json.dumps(doc).encode("utf-8"), private=not a.corpus_public)
    n_docs = len(doc["doc_lengths"])
    left = K - len(shown)
    make_console().print(f"pyLDAvis data for {len(shown)} topics" + (f" ({left} below the noise left out)" if left else "")
                         + f" and {n_docs}"
                         f" document{'' if n_docs == 1 else 's'} written to {out}" + ("" if a.corpus_public else
                                                           owner_only_note("--corpus", "--corpus-public")))


def cmd_pull(a):
    from ..service.client import ServiceClient, pull

    info = pull(a.server, a.out, overwrite=a.overwrite, client=ServiceClient(a.server, timeout=a.timeout, retries=a.retries),
                fed=a.fed)
    if a.fed:
        make_console().print(f"FedLDA model of round {info['round']} written to {info['out']}: read it with 'dptopic"
                             " topics', 'transform' or 'report'")
        return
    make_console().print(f"model {info['model_id']} (version {info['model_version']}, {info['class']}) written to"
                         f" {info['out']}: read it with 'dptopic topics', 'evaluate' or 'report'")


MAX_TIMEOUT = 1e6    # seconds per request (about 11 days): beyond the platform's timer range a request fails
MAX_RETRIES = 1000


def _timeout_arg(s: str) -> float:
    """``pull --timeout``: a finite number of seconds in (0, MAX_TIMEOUT]."""
    import argparse

    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a number") from None
    if not (math.isfinite(v) and 0 < v <= MAX_TIMEOUT):
        raise argparse.ArgumentTypeError(f"must be a number of seconds in (0, {MAX_TIMEOUT:g}], got {s}")
    return v


def _retries_arg(s: str) -> int:
    """``pull --retries``: a whole number in [0, MAX_RETRIES]."""
    import argparse

    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a whole number") from None
    if not 0 <= v <= MAX_RETRIES:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to {MAX_RETRIES}, got {s}")
    return v


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
    p.add_argument("--timeout", type=_timeout_arg, default=30.0,
                   help=f"seconds per request, in (0, {MAX_TIMEOUT:g}] (default 30)")
    p.add_argument("--retries", type=_retries_arg, default=3,
                   help=f"retries while the server is unavailable, 0 to {MAX_RETRIES} (default 3)")
    p.set_defaults(func=cmd_pull)
