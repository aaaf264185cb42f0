"""The one place where the server touches the library's formats and trainers.

Everything the HTTP layer and the storage layer need from :mod:`dptopic.protocol` (the report formats, FedLDA's
messages and aggregation, the codecs both sides share: :mod:`dptopic.protocol.codec`) and :mod:`dptopic.models`
(the trainers, a model's rows) goes through these functions, so a change of format or trainer touches one module.
Nothing here re-implements a format: reports are parsed by :meth:`dptopic.protocol.reports.ReportSet.from_bytes`,
models are written by their own ``save``/``load`` (JSON + ``.npy``, never pickle).
"""
from __future__ import annotations

import functools
import hashlib
import math
import struct

import numpy as np

from .._io import load_json
from ..accounting.local import epsilon_from_f
from ..errors import DPTopicError
from ..protocol import formats
from ..protocol.codec import PSEUDONYM, PSEUDONYM_RULE, report_format, vocabulary_fingerprint


class MalformedReports(DPTopicError):
    """The body is not a well-formed report file (bad magic, checksum, length, header)."""


class IncompatibleReports(DPTopicError):
    """Well-formed reports made with another vocabulary, another ``f`` or another length."""


_kind_of = formats.kind_of_body


def _checked_header(body: bytes, kind: str) -> dict | None:
    """The header of a checksummed report file of ``kind`` in its format, or ``None`` (then the file is simply
    malformed). Called only after the parser refused the file, to tell a file made with other settings from a broken
    one."""
    module = formats.format_module(kind)
    data = bytes(body)
    if _kind_of(data) != kind or len(data) < 12 + 32 or hashlib.sha256(data[:-32]).digest() != data[-32:]:
        return None
    (n,) = struct.unpack("<I", data[8:12])
    try:
        head = load_json(data[12:12 + n].decode("utf-8"), "the report header") if 12 + n <= len(data) - 32 else None
    except (DPTopicError, ValueError, UnicodeDecodeError):
        return None
    return head if isinstance(head, dict) and head.get("format") == module.FORMAT else None


def _count(head: dict, key: str):
    """``head[key]`` when it is a JSON integer (not a boolean), else ``None``."""
    v = head.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _other_version(body: bytes, kind: str):
    """The format version a checksummed report file of ``kind`` declares, when it is not the version this server
    reads; ``None`` otherwise (then the file is simply malformed). Called only after the parser refused the file."""
    head = _checked_header(body, kind)
    version = None if head is None else _count(head, "version")  # "1" is a mistyped header, not another version
    return None if version is None or version == formats.format_module(kind).VERSION else version


def _refuse_other_version(body: bytes, kind: str, error: DPTopicError, vocab_size: int | None = None,
                          f: float | None = None, epsilon: float | None = None):
    """Raise :class:`IncompatibleReports` for a refused file whose header declares another format version, another
    V (``vocab_size``), another ``f`` (word level) or another ``epsilon`` (document level) than the server's: made
    with other settings, which is what the uploader must change first (the parser's consistency checks come after: a
    header for another V fails the padding check too, and an f no server takes fails the range check). Else
    :class:`MalformedReports` with the parser's message."""
    version = _other_version(body, kind)
    if version is not None:
        raise IncompatibleReports(f"uploaded reports use {kind}-level report format version {str(version)[:10]} but"
                                  f" this server takes version {report_format(kind)['version']} (see /v1/config"
                                  " report_format): randomize again with this server's dptopic version.") from None
    head = _checked_header(body, kind)
    if head is not None and _count(head, "version") is not None:
        V = _count(head, "vocab_size")
        if vocab_size is not None and V is not None and V >= 1 and V != vocab_size:
            raise _other_vocab_size(V, vocab_size) from None
        for name, want, top in (("f", f, 1.0), ("epsilon", epsilon, math.inf)):
            got = _real(head.get(name))  # a flip parameter in (0, 1), an epsilon > 0; anything else: a broken header
            if want is None or got is None or not 0 < got < top \
                    or math.isclose(got, float(want), rel_tol=1e-12, abs_tol=0.0):
                continue
            shown, server = _differing(got, float(want)), _differing(float(want), got)
            if name == "f":
                raise IncompatibleReports(f"uploaded reports: randomized with f={shown} but this server collects"
                                          f" f={server} (eps_word={_eps_word(want):.4g}): randomize again with the"
                                          " server's settings (GET /v1/config).") from None
            raise IncompatibleReports(f"uploaded reports were made at eps_doc={shown} but this server takes {server}:"
                                      " randomize again with the server's settings (GET /v1/config epsilon_doc).") \
                from None
    raise MalformedReports(str(error)) from None


def _other_vocab_size(V: int, server: int) -> IncompatibleReports:
    return IncompatibleReports(f"uploaded reports: made for a vocabulary of {V} words but this server's has {server}:"
                               " randomize again with the vocabulary /v1/config lists.")


def _real(v) -> float | None:
    """A header's JSON number as a finite float, or ``None`` (not a number, a boolean, or beyond a float's range)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        v = float(v)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


def _eps_word(f: float) -> float:
    return epsilon_from_f(float(f))


def decode_document_reports(body: bytes, vocabulary, epsilon: float, fingerprint: str):
    """Parse an upload of document-level reports and check it against the server's vocabulary and epsilon."""
    from ..protocol.document_reports import DocumentReportSet  # start-up: protocol.document_reports loads numba

    if _kind_of(body) == "word":
        raise IncompatibleReports("uploaded reports are word-level (kind 'word', format dptopic-ldp-reports) but this"
                                  " server takes document-level reports (kind 'document'; see /v1/config): randomize"
                                  " each document with a DocumentRandomizer (dptopic randomize, per document).")
    try:
        rs = DocumentReportSet.from_bytes(body, where="uploaded reports")
    except DPTopicError as e:
        _refuse_other_version(body, "document", e, vocab_size=len(vocabulary), epsilon=epsilon)
    if rs.vocab_size != len(vocabulary) or rs.vocabulary_sha256 != fingerprint:
        raise IncompatibleReports("uploaded reports were made with another vocabulary: use the one /v1/config lists.")
    if not math.isclose(rs.epsilon, float(epsilon), rel_tol=1e-12):
        raise IncompatibleReports(f"uploaded reports were made at eps_doc={_differing(rs.epsilon, float(epsilon))}"
                                  f" but this server takes {_differing(float(epsilon), rs.epsilon)}: randomize again"
                                  " with the server's settings (GET /v1/config epsilon_doc).")
    if rs.n_reports == 0:
        raise MalformedReports("uploaded reports: the file holds no reports; send at least one.")
    return rs


def _differing(x: float, other: float) -> str:
    """``x`` with as few significant digits as show it differs from ``other`` (``8.0000000001`` against 8, not both
    ``8``); all 17 when no fewer do."""
    for digits in (6, 9, 12, 15):
        if f"{x:.{digits}g}" != f"{other:.{digits}g}":
            return f"{x:.{digits}g}"
    return repr(float(x))


def decode_reports(body: bytes, vocabulary, f: float, fingerprint: str | None = None):
    """Parse an uploaded report file and check it against the server's vocabulary and ``f`` (``fingerprint``: the
    vocabulary's, when the caller has it already).

    Raises :class:`MalformedReports` or :class:`IncompatibleReports` (one line each); returns
    the :class:`~dptopic.protocol.reports.ReportSet` otherwise.
    """
    from ..protocol.reports import ReportSet  # start-up: protocol.reports loads numba

    if _kind_of(body) == "document":
        raise IncompatibleReports("uploaded reports are document-level (kind 'document') but this server takes"
                                  " word-level reports (kind 'word'; see /v1/config): randomize with a"
                                  " Randomizer (dptopic randomize, per word).")
    want = fingerprint if fingerprint is not None else vocabulary_fingerprint(vocabulary)
    # a header as dptopic submit writes it for this server's settings is read without parsing its JSON
    rs = _known_header(len(vocabulary), want, f).read(body) if f is not None else None
    if rs is None:
        try:
            rs = ReportSet.from_bytes(body, where="uploaded reports")
        except DPTopicError as e:
            _refuse_other_version(body, "word", e, vocab_size=len(vocabulary), f=f)
    if f is not None and not math.isclose(float(f), rs.f, rel_tol=1e-12, abs_tol=0.0):
        raise IncompatibleReports(f"the reports were randomized with f={_differing(rs.f, float(f))}"
                                  f" (eps_word={rs.epsilon_word:.4g}) but this server collects"
                                  f" f={_differing(float(f), rs.f)} (eps_word={epsilon_from_f(float(f)):.4g}):"
                                  " randomize again with the server's settings (GET /v1/config).")
    if rs.vocab_size != len(vocabulary):    # as a refused file is answered (_refuse_other_version)
        raise _other_vocab_size(rs.vocab_size, len(vocabulary))
    # f and V are checked above, the words here, each in words for the uploader (ReportSet.check's advice is for
    # someone training on a report file: "use the vocabulary the reports were randomized with")
    if rs.vocabulary_sha256 != want:
        raise IncompatibleReports(f"uploaded reports: made with another vocabulary of the same size ({rs.vocab_size}"
                                  f" words; fingerprint {str(rs.vocabulary_sha256)[:12]} but this server's is"
                                  f" {want[:12]}): randomize again with the vocabulary /v1/config lists.")
    if rs.n_reports == 0:
        raise MalformedReports("uploaded reports: the file holds no reports; send at least one.")
    return rs


@functools.lru_cache(maxsize=8)
def _known_header(vocab_size: int, fingerprint: str, f: float):
    """:class:`~dptopic.protocol.reports.KnownHeader` of a server's settings (made once)."""
    from ..protocol.reports import ReportSet  # start-up: protocol.reports loads numba

    return ReportSet.known_header(vocab_size, fingerprint, f)


def report_rows(reports) -> list[bytes]:
    """One ``bytes`` per report (its packed bits, or its items as little-endian uint32), in order: what the
    database stores."""
    packed = reports.packed if hasattr(reports, "packed") else reports.reports.astype("<u4")
    return [packed[i].tobytes() for i in range(packed.shape[0])]


def rows_to_document_reports(rows, vocabulary, epsilon: float):
    """Rebuild a :class:`~dptopic.protocol.document_reports.DocumentReportSet` from stored rows (a training batch)."""
    from ..protocol.document_reports import (  # start-up: protocol.document_reports loads numba
        DocumentReportSet,
        domain_size,
        subset_size,
    )

    k = subset_size(domain_size(len(vocabulary)), float(epsilon))
    buf = b"".join(rows)
    if len(buf) != len(rows) * 4 * k:
        raise DPTopicError(f"stored reports have the wrong length (expected {4 * k} bytes each): the database was"
                           " written for another vocabulary or epsilon.")
    R = np.frombuffer(buf, dtype="<u4").astype(np.uint32).reshape(len(rows), k)
    return DocumentReportSet(R, len(vocabulary), vocabulary_fingerprint(vocabulary), float(epsilon), vocabulary)


def rows_to_reports(rows, vocabulary, f: float):
    """Rebuild a :class:`~dptopic.protocol.reports.ReportSet` from stored rows (a training mini-batch)."""
    from ..protocol.reports import ReportSet  # start-up: protocol.reports loads numba

    V = len(vocabulary)
    nb = (V + 7) // 8
    buf = b"".join(rows)
    if len(buf) != len(rows) * nb:
        raise DPTopicError(f"stored reports have the wrong length (expected {nb} bytes each): the database was"
                           " written for another vocabulary.")
    packed = np.frombuffer(buf, dtype=np.uint8).reshape(len(rows), nb)
    return ReportSet(packed, V, vocabulary_fingerprint(vocabulary), f, vocabulary)


# ----------------------------------------------------------------------------- trainer
def train_batch(model, reports, vocabulary, reports_per_contributor: int | None = None) -> str | None:
    """One mini-batch through the library's training steps for a stream (:func:`dptopic.training.train_batch`, the
    steps ``dptopic.train`` runs on a report file): the inputs checked, ``partial_fit`` (a refused batch leaves the
    model unchanged), the guarantee stated for contributors who sent up to ``reports_per_contributor`` reports each,
    the card. The trainer then stores the model's own ``save`` (:func:`model_to_blobs`) in the batch's transaction.

    Returns the step's note, one line, or None: OLP-LDA's prior-overlap finding ("the prior corpus seems to overlap
    the stream"), the only safeguard on the ``prior`` documents. The trainer records it in the batch's ``note`` and
    logs it (:meth:`Trainer.step`); the model's warnings are not printed to the server's stderr (``quiet``).
    """
    from ..training import train_batch as training_batch  # start-up: the trainers load scikit-learn (first batch)

    result = training_batch(model, reports, vocabulary=vocabulary, reports_per_contributor=reports_per_contributor,
                            quiet=True)
    return " ".join(result.notes) or None


def model_summary(model) -> dict:
    """Counters the service shows next to the topics."""
    return {"n_batches": int(getattr(model, "n_batches_", 0)), "n_reports_seen": int(getattr(model, "n_docs_seen_", 0))}


def topics(model, n_words: int = 10) -> list[dict]:
    out = []
    for k, pairs in enumerate(model.topic_words(n_words, weights=True)):
        out.append({"topic": k, "words": [w for w, _ in pairs], "weights": [round(float(p), 6) for _, p in pairs]})
    return out


def model_to_blobs(model) -> tuple[str, dict[str, bytes]]:
    """``(model.json text, {array name: .npy bytes})``: :func:`dptopic.models.blobs.model_to_blobs`."""
    from ..models.blobs import model_to_blobs as to_blobs  # start-up: the models load scikit-learn (first model)

    return to_blobs(model)


def model_from_blobs(meta: str, arrays: dict[str, bytes]):
    """A stored model back: :func:`dptopic.models.blobs.model_from_blobs`."""
    from ..models.blobs import model_from_blobs as from_blobs  # start-up: the models load scikit-learn (first read)

    return from_blobs(meta, arrays)


# ----------------------------------------------------------------------------- FedLDA
class StaleMessage(DPTopicError):
    """A FedLDA update for another round than the open one."""


def fed_config(cfg):
    """The public FedLDA protocol parameters every client shares (:class:`~dptopic.protocol.fedlda.RRPConfig`)."""
    from ..protocol.fedlda import RRPConfig  # start-up: protocol.fedlda loads numpy

    return RRPConfig(cfg.fed_topics, float(cfg.fed_epsilon_per_entry), float(cfg.fed_failure_rate),
                     float(cfg.fed_gamma), cfg.fed_pad_length, float(cfg.fed_sample_ratio))


def _fed_server(vocabulary, rrp, beta: float, clients, round_: int, rng=None):
    from ..protocol.fedlda_server import FedServer  # start-up: protocol.fedlda_server loads numpy

    s = FedServer.from_config(vocabulary, rrp, clients, beta=beta, rng=rng)
    s.round = round_
    return s


def fed_initial_broadcast(vocabulary, rrp, beta: float = 0.01) -> bytes:
    """Round 0's message: the data-independent random start of :class:`~dptopic.protocol.fedlda_server.FedServer`."""
    return _fed_server(vocabulary, rrp, beta, [], 0).broadcast()


def fed_largest_update(rrp, vocab_size: int) -> int:
    """Bytes of the largest update a participant sends to a server with these settings (``vocab_size``: the words
    reports range over): every entry a report of the resolved size, the longest client id allowed. Data-independent,
    so ``serve`` can check it against its body limit before any participant draws (and spends) anything."""
    from ..protocol.fedlda_messages import ClientUpdate  # start-up: fedlda_messages loads numpy

    m, s = rrp.n_entries, max(1, rrp.report_size(vocab_size))
    words = np.zeros((m, s) if rrp.exclusion == "none" else (m,), np.int32)
    return len(ClientUpdate(0, "x" * 128, "0" * 16, np.zeros(m, np.int32), words).encode()) + 64   # round, digits


def fed_check_update(body: bytes, vocabulary, rrp, round_: int, beta: float = 0.01):
    """Validate one encoded update for the open round; returns ``(client id, round)``.

    Raises :class:`MalformedReports` (undecodable), :class:`StaleMessage` (another round),
    :class:`IncompatibleReports` (another vocabulary, wrong size or ids out of range).
    """
    from ..protocol.fedlda_messages import ClientUpdate, decode_message  # start-up: loads numpy

    try:
        msg = decode_message(body)
    except DPTopicError as e:
        raise MalformedReports(str(e)) from None
    if not isinstance(msg, ClientUpdate):
        raise MalformedReports("expected a FedLDA client update, got a model broadcast.")
    if not PSEUDONYM.fullmatch(msg.client):
        raise IncompatibleReports(f"update refused: its client id must be {PSEUDONYM_RULE} (got {len(msg.client)}"
                                  " characters); take part again with such an id.")
    if msg.round != round_:
        why = "from a future round" if msg.round > round_ else "stale or replayed"
        raise StaleMessage(f"update refused: it is for round {msg.round} but round {round_} is open ({why});"
                           " fetch /v1/fed/round and run the open round.")
    try:
        _fed_server(vocabulary, rrp, beta, [msg.client], round_).receive(body)
    except DPTopicError as e:
        raise IncompatibleReports(str(e)) from None
    return msg.client, msg.round


def fed_aggregate(vocabulary, rrp, round_: int, updates: list[bytes], beta: float = 0.01,
                  broadcast: bytes | None = None) -> bytes:
    """Close ``round_`` with its stored updates; returns the next round's broadcast message.

    ``broadcast``: the message that opened ``round_``. The ``"none"`` rule needs its Φ (the labels were
    drawn against it, and the server's counts are expectations under it)."""
    from ..protocol.fedlda_messages import decode_message  # start-up: fedlda_messages loads numpy

    clients = [decode_message(u).client for u in updates]
    server = _fed_server(vocabulary, rrp, beta, clients, round_)
    if broadcast is not None:
        server.phi = fed_phi(broadcast)
    elif rrp.exclusion == "none":
        raise DPTopicError("closing a FedLDA round of the 'none' rule needs the round's broadcast model.")
    for u in updates:
        server.receive(u)
    server.aggregate()
    return server.broadcast()


def fed_phi(message: bytes):
    from ..protocol.fedlda_messages import decode_message  # start-up: fedlda_messages loads numpy

    return decode_message(message).phi


FED_DEPLOYMENT = ("dptopic serve collected the updates: each client (dptopic fed-client) randomized its reports on its own"
                  " device, and the server saw only the randomized updates; this model is the server's broadcast after"
                  " round {round} (post-processing of those updates and the public vocabulary). The per-user epsilon is"
                  " that of a client that took part in all {rounds} closed round(s). The guarantee assumes each client"
                  " drew its reports with fresh coins from its operating system (as dptopic fed-client does) and kept"
                  " them for later rounds; the server cannot check either")


def fed_model(cfg, rrp, released: dict, beta: float = 0.01):
    """The FedLDA model a server with configuration ``cfg`` released: :meth:`~dptopic.models.FedLDA.from_broadcast`
    of the broadcast that the latest closed round produced (``released``: :meth:`Storage.fed_released`). Built from
    that broadcast, the public settings and the collector's own counts (clients, updates per round) only."""
    from ..models.fedlda import FedLDA  # start-up: models.fedlda loads numba
    from ..protocol.fedlda_messages import decode_message  # start-up: fedlda_messages loads numpy

    msg = decode_message(released["message"])
    rounds = int(released["rounds"])
    training = {"n_clients": int(released["n_clients"]),
                "clients_note": "distinct client ids that sent an update to a closed round, as the server counts them:"
                                " a user that took part without keeping its reports (in the fed client's state)"
                                " counts once per run",
                "rounds": [{"round": int(r), "updates": int(n)} for r, n in released["updates"]],
                "released_round": int(released["round"])}
    return FedLDA.from_broadcast(msg.phi, cfg.vocabulary, rrp, rounds, beta=beta,
                                 report_words="all" if cfg.fed_report_words is None else int(cfg.fed_report_words),
                                 training=training,
                                 deployment=FED_DEPLOYMENT.format(round=int(released["round"]), rounds=rounds))
