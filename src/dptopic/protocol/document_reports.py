"""Document-level local DP: each document reports one word pair through k-subset selection.

Contributor side (:class:`~dptopic.contributor.document_randomizer.DocumentRandomizer`): a document keeps only the tokens of the public
vocabulary (a few hundred frequent words), picks two of its tokens (two distinct positions) uniformly,
and reports their unordered word pair (the same word twice when it repeats) through k-subset selection
(:func:`dptopic.mechanisms.frequency_oracle.subset_selection`) over every word pair of the vocabulary
plus one "no pair" item (a document with fewer than two vocabulary tokens reports that item, so every
document sends exactly one report). Any two documents give report distributions within ``e^eps``: the
report is ``eps``-LDP for the whole document (``eps_doc``), and a contributor who sends ``m`` reports
is covered with ``m * eps`` by basic composition.

Server side (:func:`pair_cooccurrence`, :class:`~dptopic.models.LocalDocumentLDA`): unbiased counts of every
pair estimate ``sum_d (c_d c_d^T - diag(c_d)) / (L_d (L_d - 1))`` (``c_d`` the document's word counts over the
vocabulary, ``L_d`` its tokens there), the token co-occurrence matrix of Arora et al. (2013), whose topics are recovered by non-negative factorisation
(:func:`dptopic.moments.topics_from_cooccurrence`). Everything the server computes reads only the
reports (post-processing).

File format ``dptopic-ldp-document-reports`` version 1: ``b"DPTLDPD\\n"``, a 4-byte little-endian header
length, a UTF-8 JSON header (``format``, ``version``, ``kind: "document"``, ``vocab_size``,
``vocabulary_sha256``, ``epsilon``, ``subset_size``, ``n_reports``, optionally ``vocabulary``), the reports
as little-endian ``uint32`` (``n_reports x subset_size``, each row strictly increasing), and a SHA-256 of
every preceding byte.
"""
from __future__ import annotations

import hashlib
import json
import math
import struct
from pathlib import Path

import numpy as np

from .._io import atomic_write_bytes
from ..accounting import PrivacyLedger
from ..accounting.card import epsilon_text
from ..accounting.events import PureDPEvent
from ..accounting.local import local_unit
from ..corpus import Vocabulary
from ..errors import DPTopicError, ParameterError
from ..mechanisms.frequency_oracle import LOCAL_RELATION, THEOREM, subset_selection_estimate, subset_size
from .reports import MAGIC as WORD_MAGIC
from .reports import (
    UPLOAD_NONCE,
    HeaderFieldError,
    ReportSet,
    header_field,
    parse_header,
    report_bytes,
    upload_nonce_of,
    vocabulary_fingerprint,
)

MAGIC = b"DPTLDPD\n"
FORMAT = "dptopic-ldp-document-reports"
KIND = "document"
VERSION = 1

MADE_BY = "written by a DocumentRandomizer, which 'dptopic randomize' runs for the document unit"
"""Who writes document-level reports, as refusals name it: the contributor's randomizer (and the command that runs
it)."""
REMAKE = "re-create it with a DocumentRandomizer (which 'dptopic randomize' runs for the document unit)"
"""How a refusal of a document-report file says to make a good one."""

MAX_WORDS = 2000
DEFAULT_EPSILON = 8.0


def n_pairs(vocab_size: int) -> int:
    """Unordered word pairs ``{i, j}``, ``i == j`` included: ``V (V + 1) / 2``."""
    return vocab_size * (vocab_size + 1) // 2


def domain_size(vocab_size: int) -> int:
    """Every unordered word pair, plus one "no pair" item (the last)."""
    return n_pairs(vocab_size) + 1


REPORT_ITEM_BYTES = 4
"""Bytes of one item of a document-level report (a uint32)."""


def report_size(vocab_size: int, epsilon: float, limit: float) -> tuple:
    """``(bytes, epsilon_min, vocab_max)``: the bytes of one document's report over ``vocab_size`` words at
    ``epsilon`` (k-subset selection sends about V(V+1)/2 / (e^epsilon + 1) word pairs), the smallest epsilon (2
    decimals, rounded up) and the largest vocabulary at ``epsilon`` whose reports stay within ``limit`` bytes (both
    None when the report already does). Public settings only: a forecast made before randomizing."""
    def size(v, eps):
        return REPORT_ITEM_BYTES * subset_size(domain_size(v), eps)

    per_doc = size(vocab_size, epsilon)
    if per_doc <= limit:
        return per_doc, None, None
    eps_min = math.ceil(100 * math.log(REPORT_ITEM_BYTES * domain_size(vocab_size) / limit - 1)) / 100
    while size(vocab_size, eps_min) > limit:
        eps_min += 0.01
    v_max = next((v for v in range(vocab_size - 1, 1, -1) if size(v, epsilon) <= limit), 2)
    return per_doc, eps_min, v_max


def pair_index(i, j, vocab_size: int):
    """Index of the pair ``{i, j}`` (``i <= j`` after sorting) in ``[0, V(V+1)/2)``: the upper triangle with its
    diagonal, row after row."""
    i, j = np.minimum(i, j), np.maximum(i, j)
    return i * (2 * vocab_size - i + 1) // 2 + (j - i)


def check_vocabulary(vocabulary) -> Vocabulary:
    """``vocabulary`` as a :class:`Vocabulary` of 2 to :data:`MAX_WORDS` words; one line otherwise."""
    v = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
    if not 2 <= len(v) <= MAX_WORDS:
        raise DPTopicError(f"a document-level report needs a public vocabulary of 2 to {MAX_WORDS} words (a few hundred"
                           f" frequent words work best); got {len(v)}.")
    return v


def check_epsilon(epsilon) -> float:
    """``epsilon`` as a float in (0, 50]; one line naming the parameter otherwise."""
    if not (isinstance(epsilon, (int, float, np.floating)) and 0 < epsilon <= 50 and math.isfinite(epsilon)):
        raise ParameterError("invalid {epsilon=}: the per-document epsilon must be a number in (0, 50].", "epsilon",
                             epsilon)
    return float(epsilon)


SERVER_SIDE_COINS = ("the guarantee assumes each report was drawn with fresh coins on its contributor's device (dptopic"
                     " randomize and submit take them from the operating system's CSPRNG); the server cannot check this:"
                     " reports made with a seed (DocumentRandomizer.for_simulation, a test) protect nothing from whoever knows the"
                     " seed. The server adds no randomness the guarantee rests on")


def document_privacy_report(epsilon: float, vocab_size: int, reports_per_contributor: int = 1,
                            randomness: str = SERVER_SIDE_COINS) -> dict:
    """The guarantee of document-level reports: per document, and per contributor by basic composition."""
    if not (isinstance(reports_per_contributor, (int, np.integer)) and reports_per_contributor >= 1):
        raise DPTopicError(f"invalid reports_per_contributor={reports_per_contributor!r}: must be an integer >= 1.")
    D = domain_size(vocab_size)
    ledger = PrivacyLedger(unit=local_unit(reports_per_contributor), relation=LOCAL_RELATION, theorem=THEOREM)
    ledger.spend(PureDPEvent(float(epsilon), label=f"one document's pair by k-subset selection (D={D})",
                             theorem=THEOREM, relation=LOCAL_RELATION), int(reports_per_contributor))
    rep = ledger.report(1e-5)
    rep.update({
        "model": "local", "kind": KIND, "epsilon_doc": float(epsilon),
        "epsilon_contributor": float(epsilon) * int(reports_per_contributor),
        "reports_per_contributor": int(reports_per_contributor), "vocab_size": int(vocab_size),
        "domain_size": D, "subset_size": subset_size(D, float(epsilon)),
        "mechanism": "one uniformly sampled word pair per document, reported by k-subset selection",
        "noise": "k-subset selection on the contributors' devices",
        "randomness": randomness,
        "scope": ("covers everything the server computes from the reports (post-processing), for any two documents"
                  " of a contributor (eps_doc) and all of a contributor's reports together (eps_contributor, basic"
                  " composition). NOT covered: the public vocabulary, how many reports a contributor sends and when,"
                  " and contributors who send more reports than stated."),
    })
    return rep


class DocumentReportSet:
    """A set of document-level reports: ``reports`` is ``uint32`` ``(n, k)``, each row strictly increasing."""

    def __init__(self, reports, vocab_size: int, vocabulary_sha256: str, epsilon: float, vocabulary=None):
        if not (isinstance(vocab_size, (int, np.integer)) and 2 <= vocab_size <= MAX_WORDS):
            raise DPTopicError(f"invalid vocab_size={vocab_size!r}: must be an integer in [2, {MAX_WORDS}].")
        self.vocab_size = int(vocab_size)
        self.epsilon = check_epsilon(epsilon)
        D = domain_size(self.vocab_size)
        self.subset_size = k = subset_size(D, self.epsilon)
        R = np.asarray(reports)
        if R.ndim != 2 or R.shape[1] != k or R.dtype != np.uint32:
            raise DPTopicError(f"reports must be a uint32 array of shape (n, {k}) for {vocab_size} words at epsilon"
                               f" {self.epsilon:g}; {REMAKE.replace(' it ', ' them ')}.")
        if R.size and (int(R.max()) >= D or (k > 1 and not np.all(R[:, 1:] > R[:, :-1]))):
            raise DPTopicError("corrupt reports: items out of range or not strictly increasing within a report;"
                               " re-create them.")
        self.reports = R
        self.vocabulary_sha256 = str(vocabulary_sha256)
        self.vocabulary = None if vocabulary is None else check_vocabulary(vocabulary)
        if self.vocabulary is not None and (len(self.vocabulary) != self.vocab_size
                                            or vocabulary_fingerprint(self.vocabulary) != self.vocabulary_sha256):
            sizes = ("" if len(self.vocabulary) == self.vocab_size else
                     f" (it has {len(self.vocabulary)} words, the reports {self.vocab_size})")
            raise DPTopicError(f"the vocabulary does not match the reports' fingerprint{sizes}; use the vocabulary they"
                               " were made with.")

    @property
    def n_reports(self) -> int:
        return int(self.reports.shape[0])

    def inclusion_counts(self) -> np.ndarray:
        """How many reports contain each item of the domain: all the server needs (a sufficient statistic)."""
        D = domain_size(self.vocab_size)
        return np.bincount(self.reports.ravel().astype(np.int64), minlength=D)[:D].astype(np.float64)

    def __len__(self) -> int:
        return self.n_reports

    def __repr__(self) -> str:
        return (f"DocumentReportSet({self.n_reports} reports, V={self.vocab_size}, eps_doc={self.epsilon:.4g},"
                f" subset_size={self.subset_size})")

    def __getitem__(self, idx) -> "DocumentReportSet":
        """A slice (or index array) of the reports, as a report set."""
        R = self.reports[idx]
        return DocumentReportSet(R.reshape(-1, self.subset_size), self.vocab_size, self.vocabulary_sha256, self.epsilon,
                                 self.vocabulary)

    def header(self, include_vocabulary: bool = True) -> dict:
        h = {"format": FORMAT, "version": VERSION, "kind": KIND, "vocab_size": self.vocab_size,
             "vocabulary_sha256": self.vocabulary_sha256, "epsilon": self.epsilon, "subset_size": self.subset_size,
             "n_reports": self.n_reports}
        if include_vocabulary and self.vocabulary is not None:
            h["vocabulary"] = list(self.vocabulary.words)
        return h

    upload_nonce: str | None = None
    """The ``upload_nonce`` of the bytes this set was read from (None when they had none; see
    :mod:`dptopic.protocol.reports`)."""

    def to_bytes(self, include_vocabulary: bool = True, nonce: str | None = None) -> bytes:
        """The file format above; ``nonce``: an ``upload_nonce`` for the header (one upload's bytes made unique)."""
        h = self.header(include_vocabulary)
        if nonce is not None:
            h[UPLOAD_NONCE] = upload_nonce_of({UPLOAD_NONCE: nonce}, "upload nonce:")
        head = json.dumps(h, separators=(",", ":")).encode("utf-8")
        body = MAGIC + struct.pack("<I", len(head)) + head + self.reports.astype("<u4").tobytes()
        return body + hashlib.sha256(body).digest()

    @classmethod
    def from_bytes(cls, data: bytes, vocabulary=None, epsilon=None, where: str = "reports") -> "DocumentReportSet":
        bad = f"{where}:"
        data = report_bytes(data, where)
        if data[:8] == b"DPTLDPR\n":    # protocol.reports' format
            raise ParameterError("{where} holds word-level reports (a Randomizer's, 'dptopic randomize'), not a"
                                 " document-report file: train on them with a word-level trainer, {algorithm=word} or"
                                 " olp (LPLDA, OLPLDA), not ldp-doc (LocalDocumentLDA).", "algorithm", where=where,
                                 word="lp")
        if len(data) < len(MAGIC) + 4 + 32 or data[:8] != MAGIC:
            raise DPTopicError(f"{bad} not a dptopic document-report file (bad magic or too short); {REMAKE}.")
        if hashlib.sha256(data[:-32]).digest() != data[-32:]:
            raise DPTopicError(f"{bad} checksum mismatch (truncated or modified); re-send or re-create it.")
        (hl,) = struct.unpack("<I", data[8:12])
        if 12 + hl > len(data) - 32:
            raise DPTopicError(f"{bad} the header runs past the end; re-create it.")
        try:    # nesting bounded before parsing (as the word-level format); no field given twice
            text = bytes(data[12:12 + hl]).decode("utf-8")
        except UnicodeDecodeError:
            raise DPTopicError(f"{bad} the header is not a JSON object; re-create it.") from None
        head = parse_header(text, bad, REMAKE)
        if head.get("format") != FORMAT or head.get("kind") != KIND:
            raise DPTopicError(f"{bad} reports of kind {str(head.get('kind'))[:20]!r} ({str(head.get('format'))[:40]}),"
                               f" not {KIND!r}; give document-level reports ({MADE_BY}).")
        try:    # an integer: true and 1.0 equal 1 in Python, "1" is a mistyped header, none of them dptopic's
            version = header_field(head, "version", "count")
        except HeaderFieldError as e:
            raise DPTopicError(f"{bad} {e}; {REMAKE}.") from None
        if version != VERSION:
            raise DPTopicError(f"{bad} format version {version}; this dptopic reads version {VERSION}: upgrade"
                               " dptopic or re-create the reports.")
        try:
            V, n, k = (header_field(head, key, "count") for key in ("vocab_size", "n_reports", "subset_size"))
            eps, sha = header_field(head, "epsilon", "real"), header_field(head, "vocabulary_sha256", "text")
        except HeaderFieldError as e:
            raise DPTopicError(f"{bad} {e}; {REMAKE}.") from None
        payload = bytes(data[12 + hl:-32])
        if n < 0 or k < 1 or len(payload) != 4 * n * k:
            raise DPTopicError(f"{bad} payload of {len(payload)} bytes does not hold {n} reports of {k} items.")
        words = head.get("vocabulary")
        if words is not None and (not isinstance(words, list) or len(words) != V
                                  or vocabulary_fingerprint(words) != sha):
            raise DPTopicError(f"{bad} the embedded vocabulary does not match its fingerprint and size; {REMAKE}.")
        vocab = words if vocabulary is None else vocabulary
        nonce = upload_nonce_of(head, bad)
        rs = cls(np.frombuffer(payload, dtype="<u4").astype(np.uint32).reshape(n, k), V, sha, eps, vocab)
        rs.upload_nonce = nonce
        if rs.subset_size != k:
            raise DPTopicError(f"{bad} subset size {k} does not match {V} words at epsilon {eps:g}.")
        if epsilon is not None and not math.isclose(float(epsilon), eps, rel_tol=1e-12):
            raise DPTopicError(f"{bad} made at epsilon {eps:g}, but {float(epsilon):g} is expected.")
        return rs

    def save(self, path) -> Path:
        atomic_write_bytes(Path(path), self.to_bytes())
        return Path(path)

    @classmethod
    def load(cls, path, vocabulary=None, epsilon=None) -> "DocumentReportSet":
        p = Path(path)
        if not p.is_file():
            raise DPTopicError(f"no report file at {str(p)!r}.")
        return cls.from_bytes(p.read_bytes(), vocabulary, epsilon, where=str(p))

    @classmethod
    def concatenate(cls, sets) -> "DocumentReportSet":
        sets = list(sets)
        if not sets:
            raise DPTopicError("nothing to concatenate: give at least one DocumentReportSet.")
        other = next((s for s in sets if not isinstance(s, DocumentReportSet)), None)
        if other is not None:
            raise DPTopicError(f"cannot concatenate a {type(other).__name__} with document-level reports: reports of"
                               " one kind only (word-level sets: ReportSet.concatenate).")
        a = sets[0]
        for s in sets[1:]:
            if (s.vocab_size, s.vocabulary_sha256, s.epsilon) != (a.vocab_size, a.vocabulary_sha256, a.epsilon):
                raise DPTopicError("report sets made with different vocabularies or epsilons cannot be combined.")
        return cls(np.concatenate([s.reports for s in sets]), a.vocab_size, a.vocabulary_sha256, a.epsilon,
                   next((s.vocabulary for s in sets if s.vocabulary is not None), None))


def pair_cooccurrence(report_set: DocumentReportSet) -> tuple[np.ndarray, float]:
    """``(Q, std)``: the symmetric V x V estimate of ``sum_d (c c^T - diag c) / (L (L - 1))`` over the reporting
    documents (module note) and the standard deviation of an off-diagonal cell's noise where the true count is 0.
    Post-processing of the reports."""
    return cooccurrence_from_counts(report_set.inclusion_counts(), report_set.n_reports, report_set.vocab_size,
                                    report_set.epsilon)


def cooccurrence_from_counts(inclusions, n_reports: int, vocab_size: int, epsilon: float) -> tuple[np.ndarray, float]:
    """:func:`pair_cooccurrence` from the reports' inclusion counts (:meth:`DocumentReportSet.inclusion_counts`)."""
    V = int(vocab_size)
    est, std = subset_selection_estimate(inclusions, n_reports, domain_size(V), epsilon)
    iu = np.triu_indices(V)
    Q = np.zeros((V, V))
    Q[iu] = est[:n_pairs(V)]
    # an unordered pair {i, j} of distinct words is drawn with probability 2 c_i c_j / (L (L - 1)), the pair {i, i}
    # with c_i (c_i - 1) / (L (L - 1)): halving the off-diagonal counts and mirroring gives the matrix
    off = np.triu(Q, 1) / 2.0
    Q = off + off.T + np.diag(np.diag(Q))
    return Q, float(std[0]) / 2.0


def report_file_summary(path) -> dict | None:
    """What a file of randomized reports (``dptopic randomize``'s output) holds, read from its header and checked as
    the trainers check it; None for any other file. Such a file is no corpus, so 'corpus info' describes it rather
    than calling it binary."""
    if not Path(path).is_file():
        return None
    with open(path, "rb") as fh:
        head = fh.read(len(WORD_MAGIC))
    if head not in (WORD_MAGIC, MAGIC):
        return None
    if head == WORD_MAGIC:
        r = ReportSet.load(path)
        out = {"kind": "word-level reports", "reports": r.n_reports, "vocabulary_size": r.vocab_size, "f": r.f,
               "epsilon_word": r.epsilon_word, "epsilon_doc": r.vocab_size * r.epsilon_word}
        what = (f"eps_word={epsilon_text(r.epsilon_word)} per word, eps_doc={epsilon_text(out['epsilon_doc'])} per"
                " report; train with lp or olp")
    else:
        r = DocumentReportSet.load(path)
        out = {"kind": "document-level reports", "reports": r.n_reports, "vocabulary_size": r.vocab_size,
               "epsilon_doc": r.epsilon}
        what = f"eps_doc={epsilon_text(r.epsilon)} per report; train with ldp-doc"
    out.update(vocabulary_embedded=r.vocabulary is not None, vocabulary_sha256=r.vocabulary_sha256)
    out["summary"] = (f"{path}: {r.n_reports} randomized {out['kind']} (dptopic randomize), vocabulary of"
                      f" {r.vocab_size} words ({'embedded' if r.vocabulary is not None else 'not embedded'}), {what}."
                      " Not a corpus: it holds randomized reports, not documents.")
    return out
