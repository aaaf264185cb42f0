"""What ``dptopic export`` writes, computed from a fitted model (and, for pyLDAvis, documents read in its vocabulary):
pyLDAvis's inputs, the words a document-level release estimated per topic, how much weight lies outside them, and
what of the file the model's privacy card covers."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shlex
from pathlib import Path

import numpy as np

from .._io import atomic_write_bytes, check_output_file
from ..accounting.card import epsilon_text, privacy_card
from ..errors import ParameterError
from ..evaluation.topic_quality import ranking_text, word_ranking
from ..models import CDPLDA, HDPLDA
from ..models.registry import TRAINERS
from .terminal import estimated_note, placed_note, support_summary, topic_support

KEPT_WORDS_ESTIMATORS = tuple(t.class_name for t in TRAINERS.values() if {"document", "user"} <= set(t.units))
"""The estimators (class names) of the document-level trainers (``dptopic.training.build.DOCUMENT_LEVEL``), whose
topics spread weight the release did not estimate per topic over the words outside those it did
(``kept_words_only``)."""


def pyldavis_data(model, docs, theta=None, words=None, topics=None) -> dict:
    """The five inputs of ``pyLDAvis.prepare``: topic-term and document-topic distributions, document lengths,
    vocabulary and term frequencies; one row per document of ``docs``, so a document with no word of the vocabulary
    has length 0 and the row ``transform`` gives it (the prior mean). ``words`` (word ids): only these words, each
    topic renormalised over them, the lengths and frequencies counting their tokens only (the topic proportions stay
    those of the whole model). ``topics`` (topic ids): only these topics, each document's proportions renormalised
    over them (pyLDAvis asks rows that sum to 1)."""
    phi = np.asarray(model.components_, dtype=np.float64)
    theta = np.asarray(model.transform(docs) if theta is None else theta, dtype=np.float64)
    tf = np.bincount(docs.word_ids, minlength=docs.vocab_size)
    vocab = list(model.vocabulary_.words)
    lengths = docs.doc_lengths
    if words is not None:
        phi, tf, vocab = phi[:, words], tf[words], [vocab[i] for i in words]
        inside = np.zeros(docs.vocab_size, dtype=bool)
        inside[words] = True
        doc = np.repeat(np.arange(docs.n_docs), docs.doc_lengths)
        lengths = np.bincount(doc[inside[docs.word_ids]], minlength=docs.n_docs)
    if topics is not None and len(topics) < phi.shape[0]:   # only these topics: each document renormalised over them
        phi, theta = phi[topics], theta[:, topics]
        total = theta.sum(axis=1, keepdims=True)
        theta = np.divide(theta, total, out=np.full_like(theta, 1.0 / len(topics)), where=total > 0)
    phi = phi / phi.sum(axis=1, keepdims=True)
    return {"topic_term_dists": phi.tolist(), "doc_topic_dists": theta.tolist(),
            "doc_lengths": lengths.astype(int).tolist(), "vocab": vocab, "term_frequency": tf.astype(int).tolist()}


UNESTIMATED = " (not estimated)"
"""The mark a pyLDAvis export puts after a word that the model's release estimated in no topic."""
PLACED = " (placed by public vectors)"
"""The mark a pyLDAvis export puts after a word that the release estimated in no topic but public word vectors placed
(:meth:`~dptopic.models.base.TopicModel.placed_words`)."""


def placed_flags(model, topics) -> list | None:
    """For each topic's listed words (``topic_words(..., mark_placed=False)``), whether public word vectors placed it
    rather than the release; None for a model without such words."""
    placed = model.placed_words() if callable(getattr(model, "placed_words", None)) else None
    if placed is None:
        return None
    index = {w: i for i, w in enumerate(model.vocabulary_.words)}
    return [[bool(placed[k, index[w[0] if isinstance(w, tuple) else w]]) for w in t] for k, t in enumerate(topics)]


def kept_words(model):
    """The word ids whose weight a document-level model's release estimated per topic, or None for another model.

    ``DocDPCooccurrence``: the words of its co-occurrence release (``kept_words_``; for a saved model, the columns
    whose weight differs between its non-background topics: every other word gets one shared tail, spread by noisy
    word frequency, the same in each topic). ``DocDPEM``: the words with a cell above the denoising threshold in some
    topic (every other cell holds the topic's floor, the same for all its words). Read from the released topics only
    (post-processing)."""
    if type(model).__name__ not in ("DocDPCooccurrence", "DocDPEM"):
        return None
    mask = model.estimated_words()          # (topics x words) or None
    if mask is None:
        return None if type(model).__name__ == "DocDPEM" else np.arange(np.asarray(model.components_).shape[1])
    themes = [k for k in range(mask.shape[0]) if k not in set(model.background_topic_ids())] or list(range(len(mask)))
    return np.flatnonzero(mask[themes].any(axis=0))


def _option(names, key: str) -> str:
    """How a caller sets the option ``key`` to True: ``names[key]`` (a command line's flag), else ``key=True``."""
    return (names or {}).get(key, f"{key}=True")


def _documents(names) -> str:
    """The documents the figures were read from, as the caller named them (``names["corpus"]``)."""
    return f"the documents of {names['corpus']}" if "corpus" in (names or {}) else "the documents given"


def spread_summary(model, words, names=None) -> dict:
    """How much of each topic's weight lies outside ``words`` (the kept words), and on each topic's top 10 words."""
    phi = np.asarray(model.components_, dtype=np.float64)
    phi = phi / phi.sum(axis=1, keepdims=True)
    outside = 1.0 - phi[:, words].sum(axis=1)
    top10 = np.sort(phi, axis=1)[:, -10:].sum(axis=1)
    return {"kept_words": int(len(words)), "vocabulary_words": int(phi.shape[1]),
            "weight_outside_kept_words": round(float(outside.mean()), 4),
            "weight_on_top_10_words": round(float(top10.mean()), 4),
            "note": (f"{type(model).__name__} estimated each topic on {len(words)} of the {phi.shape[1]} words; the rest"
                     " of each topic's weight is smoothing the release did not estimate per topic (means over topics"
                     " above): where it is large, pyLDAvis shows flat topics and large perplexities; "
                     f"{_option(names, 'kept_words_only')} exports the kept words only, each topic renormalised over"
                     " them")}


def export_privacy(model) -> tuple[dict, str]:
    """What an export says of its model's guarantee, from the model's privacy card: the headline (guarantee, epsilon,
    delta, unit) first and then the rest of the card, as a dict the file carries, so that it says what it is when
    passed on alone, and one sentence on what of the file that guarantee covers."""
    card = privacy_card(getattr(model, "privacy_", None) or {}, type(model).__name__, check=False)
    head = {k: card.get(k) for k in ("guarantee", "epsilon", "delta", "privacy_unit", "epsilon_is", "dp_flavour")}
    head.update({k: card[k] for k in ("reason", "not_covered", "vocabulary_source", "noise_reproducible",
                                      "seed_warning") if card.get(k)})
    head["card_schema"] = card["schema"]
    # and the rest of the card (relation, accounting, theorem, figures, strength, warnings): a file passed on alone
    # carries the whole statement, not a headline a reviewer cannot check
    head.update({k: v for k, v in card.items() if k not in head and k != "schema" and v not in (None, "", [], {})})
    g = card["guarantee"]
    if g == "none":
        return head, ("the model claims no differential privacy guarantee (" + str(card.get("reason") or "")
                      + "): nothing in this file is covered")
    claim = (f"epsilon = {epsilon_text(card['epsilon'])}, delta = {card['delta'] or 0:g} per {card['privacy_unit']}"
             + (", only while the seed stays secret (noise reproducible)" if card.get("noise_reproducible") else ""))
    if g == "full":
        return head, f"topic_term_dists and vocab are released under the model's privacy guarantee ({claim})"
    if card.get("vocabulary_source") == "data":
        return head, (f"topic_term_dists is released under the model's PARTIAL guarantee ({claim}); vocab is NOT"
                      " covered: the model's vocabulary was chosen from its training documents (privacy.not_covered"
                      " lists what else is not)")
    return head, (f"topic_term_dists and vocab are released under the model's PARTIAL guarantee ({claim}): what it"
                  " does not cover is in privacy.not_covered")


# ------------------------------------------------------------------ the document-topic table (dptopic transform)
PRIVATE_INPUT_NOTE = ("the model is private, but these figures are computed from {documents}: they are NOT covered by"
                      " its privacy report (if those are private documents, treat the output as private data{more})")


def private_input_note(model, names=None) -> str:
    """The warning for figures computed from documents under a private model; the Gibbs trainers that release the
    training documents' proportions (``training_theta_``: HDPLDA and CDPLDA) are pointed to them. ``names``: how the
    caller named the documents (``names["corpus"]``)."""
    has = isinstance(model, (HDPLDA, CDPLDA))       # released with the topics at fit time
    return PRIVATE_INPUT_NOTE.format(documents=_documents(names), more="; for the training documents use"
                                     " training_theta_ of the fitted model in Python, which the report covers"
                                     if has else "")


THETA_NPY_FORMAT = "dptopic-theta-npy"


def theta_stamp(path: Path) -> Path:
    """The hidden file beside a ``.npy`` table that ``transform`` wrote: it names the table's SHA-256, so only a file
    byte for byte as this command wrote it is recognised as ours (any 2-D array could otherwise be a user's own)."""
    return path.with_name(f".{path.name}.dptopic")


def _sha256(chunks) -> str:
    """SHA-256 of the bytes in ``chunks`` (the table just written, or a file read 1 MiB at a time)."""
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(chunk)
    return h.hexdigest()


def stamp_record(stamp: Path):
    """The record in a stamp file ``transform`` wrote, or None (missing, not a plain file, or not one of ours)."""
    try:
        if stamp.is_symlink() or not stamp.is_file() or stamp.stat().st_size > 4096:
            return None
        meta = json.loads(stamp.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and meta.get("format") == THETA_NPY_FORMAT else None


def is_theta_table(path: Path) -> bool:
    if path.suffix.lower() == ".npy":
        meta = stamp_record(theta_stamp(path))
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


def check_theta_out(path, overwrite: bool = False) -> Path:
    """The checked path of a document-topic table to write (``.csv`` or ``.npy``): a new file, or with ``overwrite`` a
    table this module wrote (:func:`is_theta_table`); a ``.npy`` whose stamp file (:func:`theta_stamp`) is not a plain
    file this module wrote is refused."""
    p = Path(path)

    def refusal(template: str, **fields) -> ParameterError:      # the path is ``out``, as the caller names it
        return ParameterError(template, "out", str(path), path=str(path), **fields)

    if p.suffix.lower() not in (".csv", ".npy"):
        raise refusal("{out} {path!r} must end in .csv or .npy.")
    if overwrite and p.suffix.lower() == ".npy" and p.is_file() and not p.is_symlink() and not is_theta_table(p):
        raise refusal("{out} {path!r} is a .npy file that dptopic cannot tell it wrote (your own array, or a table from"
                      " an older version): refusing to replace it; remove it yourself or choose another {out}.")
    out = check_output_file(path, is_theta_table, overwrite=overwrite, what="document-topic table")
    stamp = theta_stamp(out)
    if out.suffix.lower() == ".npy" and (stamp.is_symlink() or (stamp.exists() and not stamp.is_file())):
        raise refusal("{stamp!r} (where transform records the .npy tables it wrote) is not a plain file: remove it, or"
                      " choose another {out}.", stamp=str(stamp))
    if out.suffix.lower() == ".npy" and stamp.is_file() and stamp_record(stamp) is None:
        raise refusal("{stamp!r} (where transform records the .npy tables it wrote) is a file dptopic did not write:"
                      " refusing to replace it; remove it yourself, or choose another {out}.", stamp=str(stamp))
    return out


def write_theta_table(out: Path, theta, ids) -> None:
    """Write ``theta`` (documents x topics) to ``out``, readable by its owner only (one row per document): a ``.npy``
    array with its stamp beside it, or a CSV with a ``doc_id`` column (``ids``) and every digit of each proportion."""
    theta = np.asarray(theta, dtype=np.float64)
    if out.suffix.lower() == ".npy":
        buf = io.BytesIO()
        np.save(buf, theta, allow_pickle=False)
        data = buf.getvalue()
        atomic_write_bytes(out, data, private=True)
        atomic_write_bytes(theta_stamp(out), json.dumps({"format": THETA_NPY_FORMAT, "file": out.name,
                                                         "sha256": _sha256([data])}).encode("utf-8"))
        return
    lines = ["doc_id," + ",".join(f"topic_{k}" for k in range(theta.shape[1]))]
    # every digit of each proportion (repr: the shortest text that reads back as the same float), so a row read
    # back sums to 1 as closely as the array does
    lines += [csv_cell(i) + "," + ",".join(repr(float(x)) for x in row) for i, row in zip(ids, theta)]
    atomic_write_bytes(out, ("\n".join(lines) + "\n").encode("utf-8"), private=True)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV injection")."""

_PLAIN_NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")
"""An id that is a signed number: a spreadsheet reads it as that number, no formula, so it is kept as written (joins on
it hold)."""


def csv_cell(s) -> str:
    """One CSV cell for a document id: an id that begins like a formula (=, +, -, @, a tab or a carriage return) and is
    not a plain signed number gets a leading single quote, so that a spreadsheet shows it as text instead of running it (the OWASP rule for CSV
    injection); then quoted where CSV needs it."""
    s = str(s)
    if s.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(s):    # "-1" runs nothing
        s = "'" + s
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n\r') else s


SPREAD_WARNING = 0.25
"""The share of each topic's weight (mean over topics) outside the kept words from which ``export`` warns on stderr."""


def learned_words(model) -> dict:
    """FedLDA with fewer report words than words: which words were learned (the vocabulary's first ``report_words``)
    and a note that the others are a shared Zipf fill; empty for every other model."""
    n = getattr(model, "report_words_", None)
    V = len(model.vocabulary_)
    if not isinstance(n, int) or n >= V:
        return {}
    return {"report_words": n,
            "report_words_note": f"only the vocabulary's first {n} of {V} words (report_words) were learned from the"
                                 f" users' reports; the other {V - n} get the same Zipf-law weights in every topic"
                                 " (a shared fill, not learned)"}


def _check_export(model, kept, supported, kept_words_only: bool, show_unsupported: bool, source) -> None:
    """:func:`pyldavis_export`'s refusals (``model`` and ``source`` name the model to a caller of the command line)."""
    where = {"values": {"model": source}, "source": str(source)}
    if kept_words_only and kept is None:
        raise ParameterError(
            "{kept_words_only} applies to a document-level model ({levels}), whose topics spread weight they did not"
            " estimate over the other words; the model is {cls}, which estimates every word: drop {kept_words_only}.",
            "kept_words_only", True, key="reporting.export.check_export", others=("model",),
            levels=", ".join(KEPT_WORDS_ESTIMATORS),
            cls=type(model).__name__, **where)
    if kept_words_only and not len(kept):
        raise ParameterError("the model's release estimated no word above the noise, so there are no kept words to"
                             " export: drop {kept_words_only}.", "kept_words_only", True,
                             key="reporting.export.check_export.2", others=("model",), **where)
    if supported is not None and not show_unsupported and not any(supported):
        raise ParameterError("none of the model's {n} topics stands above the noise of its release, so there is"
                             " nothing to export; set {show_unsupported}=True to export them all, noise included.",
                             "show_unsupported", False, key="reporting.export.check_export.3", others=("model",),
                             n=len(supported), **where)


def check_export_out(path, overwrite: bool = False) -> Path:
    """The checked path of a pyLDAvis export to write (one ``.json`` file): a new file, or with ``overwrite`` an
    export this module wrote."""
    if Path(path).suffix.lower() != ".json":
        raise ParameterError("{out} {path!r} must end in .json: the export is one JSON file.", "out", str(path),
                             path=str(path))

    def ours(p):
        try:
            return json.loads(p.read_text("utf-8")).get("format") == "dptopic-pyldavis"
        except (OSError, ValueError, AttributeError):
            return False

    return check_output_file(path, ours, overwrite=overwrite, what="pyLDAvis export")


def pyldavis_export(model, docs, *, kept_words_only: bool = False, show_unsupported: bool = False,
                    corpus_public: bool = False, source=None, names=None) -> dict:
    """The JSON document of a pyLDAvis export (what ``dptopic export`` writes): :func:`pyldavis_data` of the topics
    shown (those above the noise of the release unless ``show_unsupported``; ``kept_words_only``: the words a
    document-level release estimated per topic, :func:`kept_words`), with how dptopic ranks the words, each topic's
    support, the smoothing outside the kept words, the model's privacy card and what of the file it covers
    (``corpus_public``: the documents ``docs`` are public, so the figures read from them need no note). ``source``:
    where the model was read from, as a refusal names it to a caller who names the model by a flag; ``names``: how the
    caller sets ``kept_words_only``, ``show_unsupported`` and names the documents (``corpus``), for the notes (by
    default as parameters). Refused in one line: ``kept_words_only`` for a model that estimates every word or whose
    release estimated none, and a model none of whose topics stands above the noise unless ``show_unsupported``."""
    kept = kept_words(model)
    supported, background = topic_support(model)
    _check_export(model, kept, supported, kept_words_only, show_unsupported, source)
    K = model.components_.shape[0]
    shown = list(range(K)) if supported is None or show_unsupported else [k for k in range(K) if supported[k]]
    doc = {"format": "dptopic-pyldavis", "version": 1,
           "usage": "pyLDAvis.prepare(**{k: d[k] for k in ('topic_term_dists', 'doc_topic_dists', 'doc_lengths',"
                    " 'vocab', 'term_frequency')})",
           **pyldavis_data(model, docs, words=kept if kept_words_only else None, topics=shown)}
    # how dptopic shows these topics' words, so a reader of pyLDAvis's relevance slider can set it alike
    doc["top_words"] = (f"dptopic shows these topics' words {ranking_text(word_ranking(model))}, p(w) the topics' mean;"
                        " pyLDAvis's relevance slider takes p(w) from term_frequency")
    # one entry per exported topic, in the order of topic_term_dists' rows: its id in the model and, for a model
    # that assessed it, whether it stands above the noise (post-processing of the release, inside the guarantee)
    doc["topics"] = [{"topic": k, **({} if supported is None else {"supported": supported[k],
                                                                    "background": background[k]})} for k in shown]
    mask = model.estimated_words()
    if mask is not None and not kept_words_only:    # words no topic's release estimated: marked where pyLDAvis shows them
        themes = [k for k in range(K) if not mask[k].all()]
        estimated = mask[themes].any(axis=0)
        placed = model.placed_words()
        placed = np.zeros(len(estimated), dtype=bool) if placed is None else placed.any(axis=0) & ~estimated
        doc["vocab"] = [w if estimated[i] else w + (PLACED if placed[i] else UNESTIMATED)
                        for i, w in enumerate(doc["vocab"])]
        doc["estimated_words"] = {"estimated": int(estimated.sum()), "vocabulary_words": int(len(estimated)),
                                  "note": f"the words marked '{UNESTIMATED.strip()}' were estimated in no topic by the"
                                          " release: their weight is a tail shared by every topic"
                                          + (f" ({_option(names, 'kept_words_only')} leaves them out)"
                                             if kept is not None else "")}
        if placed.any():
            doc["estimated_words"].update({"placed_by_public_vectors": int(placed.sum()), "note": (
                doc["estimated_words"]["note"] + f"; the words marked '{PLACED.strip()}' were estimated in no topic"
                " either, but the public word vectors placed them in the topics of their nearest released words"
                " (public knowledge, not learned from the data)")})
    if supported is not None:
        left = [k for k in range(K) if k not in shown]
        doc["support"] = {"supported": sum(supported), "topics": K, "left_out": left,
                          "note": support_summary(supported) + (
                              f"; topics {', '.join(map(str, left))} are below it and left out, doc_topic_dists"
                              f" renormalised over the others ({_option(names, 'show_unsupported')} exports them all)"
                              if left else "")}
    if kept is not None:
        doc["smoothing"] = spread_summary(model, kept, names)
        doc["smoothing"]["kept_words_only"] = bool(kept_words_only)
        if kept_words_only:
            doc["smoothing"]["note"] = (f"only the {len(kept)} kept words are exported, each topic renormalised over"
                                        " them; doc_lengths and term_frequency count their tokens only")
    doc["privacy"], released = export_privacy(model)
    learned = learned_words(model)      # FedLDA: the words past report_words are a shared fill, not learned
    if learned:
        doc.update(learned)
        released += "; " + learned["report_words_note"]
    if getattr(model, "privacy_", {}).get("private"):
        doc["privacy_note"] = released + ("" if corpus_public else "; doc_topic_dists, doc_lengths and"
                                          f" term_frequency are computed from {_documents(names)} and are NOT"
                                          " covered by the model's privacy report")
    return doc


def topics_document(model, n: int, source, show_unsupported: bool = False, names=None) -> dict:
    """A model's topics as a JSON document (what ``dptopic topics`` prints as JSON): each topic's ``n`` top words and
    their weights P(word | topic), how the words are ranked, which topics stand above the noise of the release (for a
    model that assessed it; the words of those below it left out unless ``show_unsupported``) and the model's privacy
    card. ``source``: the saved model's folder, as the document names it; ``names``: how the caller sets
    ``show_unsupported`` (by default as the parameter)."""
    topics = model.topic_words(n, weights=True, mark_placed=False)
    placed = placed_flags(model, topics)
    supported, background = topic_support(model)
    note = estimated_note(model)
    # a topic below the noise: listed with its flag, its words left out unless show_unsupported
    hidden = set() if supported is None or show_unsupported else {k for k, s in enumerate(supported) if not s}

    def entry(k, t):
        e = {"topic": k, "words": [] if k in hidden else [w for w, _ in t],
             "weights": [] if k in hidden else [float(p) for _, p in t]}
        if placed is not None:          # which words the public vectors placed, not the release
            e["placed_by_public_vectors"] = [] if k in hidden else placed[k]
        if supported is not None:       # absent for a model without the assessment
            e.update({"supported": supported[k], "background": background[k]})
        return e

    doc = {"model": str(source), "class": type(model).__name__,
           "words": f"{ranking_text(word_ranking(model))}; weights are P(word | topic)" + (f"; {note}" if note else ""),
           "topics": [entry(k, t) for k, t in enumerate(topics)]}
    if placed is not None:
        doc["placed_words_note"] = placed_note(model)
    if supported is not None:
        doc["support"] = {"supported": sum(supported), "topics": len(supported),
                          "note": support_summary(supported)
                          + (f"; the words of the topics below it are left out ({_option(names, 'show_unsupported')}"
                             " includes them)" if hidden else "")}
    doc["privacy_card"] = privacy_card(model.privacy_, type(model).__name__)
    doc.update(learned_words(model))
    return doc


def topics_csv(model, n: int, source, show_unsupported: bool = False, names=None) -> tuple[str, list]:
    """A model's topics as a CSV table (what ``dptopic topics`` prints as CSV): ``(table, notes)``, the table of each
    topic's ``n`` top words (rank, weight P(word | topic), and for a model that assessed it whether the topic stands
    above the noise; the rows of those below it left out unless ``show_unsupported``), and the notes for standard error:
    where the privacy card is (``source``: the saved model's folder) and how the words are ranked; ``names`` as for
    :func:`topics_document` (and :func:`privacy_card_line`)."""
    topics = model.topic_words(n, weights=True, mark_placed=False)
    placed = placed_flags(model, topics)
    supported, background = topic_support(model)
    hidden = set() if supported is None or show_unsupported else {k for k, s in enumerate(supported) if not s}
    card = privacy_card_line(model, source, names)
    # the rank column follows the model's display order: said with the card's line, as the JSON says it
    note = estimated_note(model)
    ranked = f"words {ranking_text(word_ranking(model))} (weight: P(word | topic))" + (f"; {note}" if note else "")
    notes = [f"{card}; {ranked}" if card else f"note: {ranked}"]
    if placed is not None:
        notes.append(f"note: {placed_note(model)}")
    if supported is not None:
        notes.append(f"note: {support_summary(supported)}" + (
            f"; topics {', '.join(map(str, sorted(hidden)))} are below it: their rows are left out"
            f" ({_option(names, 'show_unsupported')} includes them)" if hidden else "") + ".")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    # the supported and background columns only for a model with the assessment (an LDA's CSV is as it was)
    w.writerow(["topic", "rank", "word", "weight"] + ([] if supported is None else ["supported", "background"])
               + ([] if placed is None else ["placed_by_public_vectors"]))
    for k, t in enumerate(topics):
        if k in hidden:
            continue
        flags = [] if supported is None else [str(supported[k]).lower(), str(background[k]).lower()]
        for r, (word, p) in enumerate(t):
            w.writerow([k, r + 1, word, f"{p:.6g}"] + flags + ([] if placed is None else [str(placed[k][r]).lower()]))
    return buf.getvalue(), notes


def privacy_card_line(model, path, names=None) -> str:
    """One line pointing a CSV's reader to the model's privacy card (the JSON carries it in full). ``names``: a
    command line's flags for ``model`` and ``format`` (the card is then pointed to as that command shows it), else
    the card is pointed to as Python reads it."""
    card = privacy_card(getattr(model, "privacy_", None) or {}, type(model).__name__, check=False)
    g = card["guarantee"]
    what = ("no differential privacy guarantee" if g == "none" else
            f"{g} guarantee, epsilon = {epsilon_text(card['epsilon'])} per {card['privacy_unit']}")
    note = learned_words(model).get("report_words_note")
    names = names or {}
    if "model" in names and "format" in names:
        see = (f"see 'dptopic topics {names['model']} {shlex.quote(str(path))}' or {names['format']} json")
    else:
        see = (f"see the privacy_ of the model saved at {str(path)!r} (dptopic.accounting.card.privacy_card), or"
               " topics_document")
    return (f"note: these topics come with the model's privacy card ({what}): {see}" + (f"; {note}" if note else "")
            + ".")
