"""The one place where the service touches the library's formats and trainers.

Everything the HTTP layer and the storage layer need from :mod:`dptopic.local` (the report
format), :mod:`dptopic.models` (OLP-LDA) and :mod:`dptopic.federated` (FedLDA messages) goes
through these functions, so a change of format or trainer touches one module. Nothing here
re-implements a format: reports are parsed by :meth:`dptopic.local.ReportSet.from_bytes`,
models are written by their own ``save``/``load`` (JSON + ``.npy``, never pickle).
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import struct
import tempfile
from dataclasses import asdict
from dataclasses import fields
from pathlib import Path

import numpy as np

from ..errors import DPTopicError
from . import formats
from .._io import load_json
from ..accounting import PrivacyLedger, rrp_event
from ..accounting.fedlda import user_spend
from ..accounting.local import epsilon_from_f

#: a contributor's pseudonym (the Dptopic-Contributor header) and a FedLDA client's id: stored, so bounded
PSEUDONYM = re.compile(r"[A-Za-z0-9_\-.:]{1,128}")     # used with fullmatch: "$" would let a final newline in
PSEUDONYM_RULE = "1-128 characters of A-Z a-z 0-9 _ - . :"


class MalformedReports(DPTopicError):
    """The body is not a well-formed report file (bad magic, checksum, length, header)."""


class IncompatibleReports(DPTopicError):
    """Well-formed reports made with another vocabulary, another ``f`` or another length."""


report_format = formats.report_format
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
    from ..local.document import DocumentReportSet  # start-up: local.document loads numba

    if _kind_of(body) == "word":
        raise IncompatibleReports("uploaded reports are word-level (kind 'word', format dptopic-ldp-reports) but this"
                                  " server takes document-level reports (kind 'document'; see /v1/config): randomize"
                                  " with 'dptopic randomize --unit document'.")
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


def vocabulary_fingerprint(vocabulary) -> str:
    from ..local import vocabulary_fingerprint as fp  # start-up: local loads numba

    return fp(vocabulary)


def decode_reports(body: bytes, vocabulary, f: float, fingerprint: str | None = None):
    """Parse an uploaded report file and check it against the server's vocabulary and ``f`` (``fingerprint``: the
    vocabulary's, when the caller has it already).

    Raises :class:`MalformedReports` or :class:`IncompatibleReports` (one line each); returns
    the :class:`~dptopic.local.ReportSet` otherwise.
    """
    from ..local import ReportSet  # start-up: local loads numba

    if _kind_of(body) == "document":
        raise IncompatibleReports("uploaded reports are document-level (kind 'document') but this server takes"
                                  " word-level reports (kind 'word'; see /v1/config): randomize with 'dptopic randomize"
                                  " --epsilon-word'.")
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
    want = fingerprint if fingerprint is not None else vocabulary_fingerprint(vocabulary)
    if rs.vocabulary_sha256 != want:
        raise IncompatibleReports(f"uploaded reports: made with another vocabulary of the same size ({rs.vocab_size}"
                                  f" words; fingerprint {str(rs.vocabulary_sha256)[:12]} but this server's is"
                                  f" {want[:12]}): randomize again with the vocabulary /v1/config lists.")
    if rs.n_reports == 0:
        raise MalformedReports("uploaded reports: the file holds no reports; send at least one.")
    return rs


def report_rows(reports) -> list[bytes]:
    """One ``bytes`` per report (its packed bits, or its items as little-endian uint32), in order: what the
    database stores."""
    packed = reports.packed if hasattr(reports, "packed") else reports.reports.astype("<u4")
    return [packed[i].tobytes() for i in range(packed.shape[0])]


def rows_to_document_reports(rows, vocabulary, epsilon: float):
    """Rebuild a :class:`~dptopic.local.DocumentReportSet` from stored rows (a training batch)."""
    from ..local.document import DocumentReportSet, domain_size, subset_size  # start-up: local.document loads numba

    k = subset_size(domain_size(len(vocabulary)), float(epsilon))
    buf = b"".join(rows)
    if len(buf) != len(rows) * 4 * k:
        raise DPTopicError(f"stored reports have the wrong length (expected {4 * k} bytes each): the database was"
                           " written for another vocabulary or epsilon.")
    R = np.frombuffer(buf, dtype="<u4").astype(np.uint32).reshape(len(rows), k)
    return DocumentReportSet(R, len(vocabulary), vocabulary_fingerprint(vocabulary), float(epsilon), vocabulary)


def rows_to_reports(rows, vocabulary, f: float):
    """Rebuild a :class:`~dptopic.local.ReportSet` from stored rows (a training mini-batch)."""
    from ..local import ReportSet  # start-up: local loads numba

    V = len(vocabulary)
    nb = (V + 7) // 8
    buf = b"".join(rows)
    if len(buf) != len(rows) * nb:
        raise DPTopicError(f"stored reports have the wrong length (expected {nb} bytes each): the database was"
                           " written for another vocabulary.")
    packed = np.frombuffer(buf, dtype=np.uint8).reshape(len(rows), nb)
    return ReportSet(packed, V, vocabulary_fingerprint(vocabulary), f, vocabulary)


def encode_reports(reports) -> bytes:
    """The upload body for a report set of any kind (the vocabulary is never embedded), with a fresh
    ``upload_nonce``: honest uploads never share their bytes, so the server can refuse one upload stored twice
    under two keys without refusing two contributors whose reports happen to coincide."""
    from ..local.reports import new_upload_nonce  # start-up: local.reports loads numba

    return reports.to_bytes(include_vocabulary=False, nonce=new_upload_nonce())


def randomizer(vocabulary, f: float):
    """The contributor-side randomizer; coins from the OS CSPRNG, no seed (reports leave the device)."""
    from ..local import Randomizer  # start-up: local loads numba

    return Randomizer(vocabulary, f=f, secure=True)


# ----------------------------------------------------------------------------- trainer
def train_batch(model, reports, vocabulary, reports_per_contributor: int | None = None) -> str | None:
    """One mini-batch through the library's training steps for a stream (:func:`dptopic.training.train_batch`, the
    steps ``dptopic.train`` runs on a report file): the inputs checked, ``partial_fit`` (a refused batch leaves the
    model unchanged), the guarantee stated for contributors who sent up to ``reports_per_contributor`` reports each,
    the card. The trainer then stores the model's own ``save`` (:func:`model_to_blobs`) in the batch's transaction.

    Returns the step's note, one line, or None: OLP-LDA's prior-overlap finding ("the prior corpus seems to overlap
    the stream"), the only safeguard on the ``--prior`` documents. The trainer records it in the batch's ``note`` and
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
    """``(model.json text, {array name: .npy bytes})`` written by the model's own ``save``."""
    with tempfile.TemporaryDirectory(prefix="dptopic-model-") as tmp:
        d = Path(model.save(Path(tmp) / "m"))
        meta = (d / "model.json").read_text("utf-8")
        arrays = {p.stem: p.read_bytes() for p in sorted(d.glob("*.npy"))}
    return meta, arrays


def model_from_blobs(meta: str, arrays: dict[str, bytes]):
    """Inverse of :func:`model_to_blobs`, through the model's own ``load`` (``allow_pickle=False``)."""
    from ..models import load  # start-up: the models load scikit-learn (a stored model is read on first use)

    with tempfile.TemporaryDirectory(prefix="dptopic-model-") as tmp:
        d = Path(tmp) / "m"
        d.mkdir()
        (d / "model.json").write_text(meta, "utf-8")
        for name, data in arrays.items():
            if os.sep in name or name.startswith("."):
                raise DPTopicError(f"stored model array name {name!r} is invalid: the database is corrupt.")
            (d / f"{name}.npy").write_bytes(data)
        return load(d)


# ----------------------------------------------------------------------------- FedLDA
class StaleMessage(DPTopicError):
    """A FedLDA update for another round than the open one."""


def fed_config(cfg):
    """The public FedLDA protocol parameters every client shares (:class:`~dptopic.federated.RRPConfig`)."""
    from ..federated import RRPConfig  # start-up: federated loads numba

    return RRPConfig(cfg.fed_topics, float(cfg.fed_epsilon_per_entry), float(cfg.fed_failure_rate),
                     float(cfg.fed_gamma), cfg.fed_pad_length, float(cfg.fed_sample_ratio))


# the protocol's keys before RRPConfig named them by what they are (the same meaning: epsilon per reported entry and
# the randomizer's failure rate): a participant still reads them from an older server; a server sends only the new
# names, since a key "epsilon" would read as a guarantee's total
FED_WIRE_RENAMED = {"epsilon": "epsilon_per_entry", "delta": "failure_rate"}


def fed_config_dict(rrp) -> dict:
    return {**asdict(rrp), "entries_per_update": rrp.n_entries}


def fed_config_from_dict(d: dict):
    from ..federated import RRPConfig  # start-up: federated loads numba

    names = {f.name for f in fields(RRPConfig)}
    d = {**{new: d[old] for old, new in FED_WIRE_RENAMED.items() if old in d and new not in d}, **d}
    return RRPConfig(**{k: v for k, v in d.items() if k in names})


def fed_fingerprint(vocabulary) -> str:
    from ..federated import vocabulary_fingerprint as fp  # start-up: federated loads numba

    return fp(list(vocabulary.words))


def _fed_server(vocabulary, rrp, beta: float, clients, round_: int, rng=None):
    from ..federated import FedServer  # start-up: federated loads numba

    s = FedServer.from_config(vocabulary, rrp, clients, beta=beta, rng=rng)
    s.round = round_
    return s


def fed_initial_broadcast(vocabulary, rrp, beta: float = 0.01) -> bytes:
    """Round 0's message: the data-independent random start of :class:`~dptopic.federated.FedServer`."""
    return _fed_server(vocabulary, rrp, beta, [], 0).broadcast()


def fed_largest_update(rrp, vocab_size: int) -> int:
    """Bytes of the largest update a participant sends to a server with these settings (``vocab_size``: the words
    reports range over): every entry a report of the resolved size, the longest client id allowed. Data-independent,
    so ``serve`` can check it against its body limit before any participant draws (and spends) anything."""
    from ..federated import ClientUpdate  # start-up: federated loads numba

    m, s = rrp.n_entries, max(1, rrp.report_size(vocab_size))
    words = np.zeros((m, s) if rrp.exclusion == "none" else (m,), np.int32)
    return len(ClientUpdate(0, "x" * 128, "0" * 16, np.zeros(m, np.int32), words).encode()) + 64   # round, digits


def fed_check_update(body: bytes, vocabulary, rrp, round_: int, beta: float = 0.01):
    """Validate one encoded update for the open round; returns ``(client id, round)``.

    Raises :class:`MalformedReports` (undecodable), :class:`StaleMessage` (another round),
    :class:`IncompatibleReports` (another vocabulary, wrong size or ids out of range).
    """
    from ..federated import ClientUpdate, decode_message  # start-up: federated loads numba

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
    from ..federated import decode_message  # start-up: federated loads numba

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
    from ..federated import decode_message  # start-up: federated loads numba

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
    from ..federated import decode_message  # start-up: federated loads numba
    from ..models.fedlda import FedLDA  # start-up: models.fedlda loads numba

    msg = decode_message(released["message"])
    rounds = int(released["rounds"])
    training = {"n_clients": int(released["n_clients"]),
                "clients_note": "distinct client ids that sent an update to a closed round, as the server counts them:"
                                " a user that took part without keeping its reports (fed-client --state) counts once"
                                " per run",
                "rounds": [{"round": int(r), "updates": int(n)} for r, n in released["updates"]],
                "released_round": int(released["round"])}
    return FedLDA.from_broadcast(msg.phi, cfg.vocabulary, rrp, rounds, beta=beta,
                                 report_words="all" if cfg.fed_report_words is None else int(cfg.fed_report_words),
                                 training=training,
                                 deployment=FED_DEPLOYMENT.format(round=int(released["round"]), rounds=rounds))


def fed_privacy(rrp, rounds: int, delta: float = 1e-5, vocab_size: int | None = None) -> dict:
    """Per-user guarantee after taking part in ``rounds`` rounds (through the ledger)."""
    event = rrp_event(rrp.epsilon_per_entry, rrp.failure_rate, rrp.gamma, rrp.variant, rrp.exclusion, vocab_size=vocab_size)
    ledger = PrivacyLedger(unit="user", relation="one user's reports over all rounds", theorem=event.theorem,
                           discretization=1e-2)
    if rounds > 0:  # entries randomized once ("none") are spent once, whatever the number of rounds
        ledger.spend(event, user_spend(rrp.exclusion, rrp.n_entries, rounds))
    rep = ledger.report(delta)
    rep["rounds"] = rounds
    rep["entries_per_round"] = rrp.n_entries
    from ..models.fedlda import FED_RRP_COINS, FED_SECURE, coverage  # start-up: models.fedlda loads numba

    rep.update(coverage(rrp.replacement, rrp.exclusion))  # topic labels go out in the clear: partial
    rep["randomness"] = FED_SECURE if rrp.exclusion == "none" else FED_RRP_COINS   # as fed_client draws them
    return rep


def fed_client(client_id: str, corpus, rrp, reports=None):
    """A FedLDA participant holding ``corpus``: its reports' coins come from the operating system's CSPRNG, the rest
    (which entries are sampled, the labels) from fresh OS entropy (no seed). ``reports``: the randomized reports
    it drew in an earlier run, reused (nothing is randomized again)."""
    from ..federated import FedClient  # start-up: federated loads numba

    return FedClient(client_id, corpus, rrp, np.random.default_rng(), secure=rrp.exclusion == "none", reports=reports)
