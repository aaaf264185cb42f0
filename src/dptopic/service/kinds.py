"""The kinds of local-DP report the service takes: the one place a kind is registered.

A server takes one kind, fixed for its database (``report_kind``) and named in ``/v1/config``
(``report_kind`` and ``report_format``: format name and version). Each kind says, in one class:

* its file format (the :mod:`dptopic.protocol` module with ``MAGIC``, ``FORMAT`` and ``VERSION``);
* how an upload is parsed and checked against the server's settings, and how stored rows become
  a training batch again (through :mod:`dptopic.service.codec`);
* which model the server trains on it;
* the privacy it states: per report, and per contributor after ``n`` reports.

What a contributor's client does with a kind (its randomizer, the bytes of a report) is
:mod:`dptopic.contributor.kinds`': the server never imports the contributor's code.

To add a kind, add its format to :mod:`dptopic.protocol.formats`, subclass :class:`ReportKind` here and add an
instance to :data:`KINDS`, and give its randomizer to :mod:`dptopic.contributor.kinds`; the HTTP layer, the
trainer, the status page, the configuration checks and ``dptopic submit`` dispatch through these and need no change. Importing this module loads no numerical library.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from ..errors import DPTopicError, ParameterError
from ..protocol import formats
from . import codec

_BASIC = "basic composition of pure eps-LDP reports (Dwork & Roth 2014, Thm 3.16)"
_UNIT = "local DP, per contributor (all their reports)"



def _epsilon_of_other_kind() -> ParameterError:
    """The refusal of a budget of the other report kind: word-level reports are randomized with ``f`` (the flip
    parameter; on a command line its epsilon per word), document-level ones with ``epsilon_doc``."""
    return ParameterError("word-level reports need {f}; document-level reports take {epsilon_doc} instead.", "f",
                          key="service.kinds.epsilon_of_other_kind", others=("epsilon_doc", "epsilon_word"))

class ReportKind(ABC):
    """One kind of report. Subclasses set the class attributes and implement the abstract methods."""

    name: str = ""
    model_name: str = ""
    trainer: str = ""           # the name of the registry's entry (dptopic.models.registry) that trains the reports
    format_fields: dict = {}  # extra fields of /v1/config's report_format

    # -------------------------------------------------------------- format
    @property
    def module(self):
        """The :mod:`dptopic.protocol` module that reads and writes this kind's file format."""
        return formats.format_module(self.name)

    def report_format(self) -> dict:
        return formats.report_format(self.name)

    # -------------------------------------------------------------- server
    def check_config(self, cfg) -> None:
        """Refuse (one line) settings this kind cannot serve."""

    def settings(self, cfg) -> dict:
        """What the stored reports are made with, besides vocabulary, V and format (bound to the database)."""
        return {}

    @abstractmethod
    def epsilon_doc(self, cfg) -> float:
        """The epsilon of one report for a whole document."""

    @abstractmethod
    def decode(self, body: bytes, cfg, fingerprint: str):
        """Parse and check an upload (raises ``codec.MalformedReports`` / ``codec.IncompatibleReports``)."""

    @abstractmethod
    def from_rows(self, rows: list[bytes], cfg):
        """Stored rows (a training batch) back to a report set."""

    @abstractmethod
    def new_model(self, cfg):
        """A fresh model of the kind's trainer for the server's settings."""

    @abstractmethod
    def contributor_privacy(self, cfg, n: int) -> dict:
        """The guarantee of one contributor who sent ``n`` reports (their events compose)."""

    @abstractmethod
    def privacy_line(self, cfg, fmt=str, fmt_eps=None) -> str:
        """The status page's sentence on the privacy of every report (``fmt`` formats its numbers, ``fmt_eps`` its
        epsilons, which the status page rounds up; ``fmt`` when None)."""


class WordReports(ReportKind):
    """LP-LDA's word-presence bits, each flipped with probability f/2 (Zhao et al. 2020); trained by OLP-LDA."""

    name = "word"
    trainer = "olp"             # the registry's entry (dptopic.models.registry) that trains these reports
    model_name = "OLP-LDA"
    format_fields = formats.FORMAT_FIELDS["word"]

    def check_config(self, cfg) -> None:
        if cfg.f is None:
            raise _epsilon_of_other_kind()

    def epsilon_doc(self, cfg) -> float:
        return cfg.vocab_size * cfg.epsilon_word

    def decode(self, body, cfg, fingerprint):
        return codec.decode_reports(body, cfg.vocabulary, cfg.f, fingerprint)

    def from_rows(self, rows, cfg):
        return codec.rows_to_reports(rows, cfg.vocabulary, cfg.f)

    def new_model(self, cfg):
        from ..training import build_model  # start-up: the trainers load scikit-learn (first batch)

        # built as dptopic.train builds a trainer (its parameters checked); unseeded, as every private trainer
        return build_model(self.trainer, n_topics=cfg.n_topics, delta=cfg.delta,
                           prior_corpus=cfg.prior if cfg.prior is not None else "none", f=cfg.f, lam=cfg.lam,
                           omega=cfg.omega, batch_size=cfg.batch_size, n_iter=cfg.n_iter, prior_iter=cfg.prior_iter,
                           n_jobs=1, verbose=0)

    def contributor_privacy(self, cfg, n):
        return {"reports": n, "epsilon_word": cfg.epsilon_word, "epsilon_doc": cfg.vocab_size * cfg.epsilon_word,
                "epsilon_contributor_doc_basic": n * cfg.vocab_size * cfg.epsilon_word,
                "epsilon_contributor_word_basic": n * cfg.epsilon_word,
                "delta": 0.0, "unit": _UNIT, "accounting": _BASIC}

    def privacy_line(self, cfg, fmt=str, fmt_eps=None):
        fmt_eps = fmt_eps or fmt
        return (f"Local privacy of every report (Zhao et al. 2020, Theorem 4): eps_word = {fmt_eps(cfg.epsilon_word)}"
                f" per word, eps_doc = {fmt_eps(cfg.vocab_size * cfg.epsilon_word)} per document"
                f" (V = {cfg.vocab_size}, f = {fmt(cfg.f)}).")





class DocumentReports(ReportKind):
    """One word pair of the document by k-subset selection, eps_doc per document; trained by LocalDocumentLDA."""

    name = "document"
    trainer = "ldp-doc"         # the registry's entry that trains these reports
    model_name = "LocalDocumentLDA"
    format_fields = formats.FORMAT_FIELDS["document"]

    def check_config(self, cfg) -> None:
        if cfg.f is not None:
            raise _epsilon_of_other_kind()
        max_words = self.module.MAX_WORDS
        if not 2 <= len(cfg.vocabulary) <= max_words:
            raise DPTopicError(f"document-level reports need a vocabulary of 2 to {max_words} words (a few hundred"
                               f" frequent words work best); got {len(cfg.vocabulary)}.")
        if cfg.prior is not None:
            raise ParameterError("{prior} is for word-level reports (OLP-LDA); document-level topics use the"
                                 " reports alone.", "prior")

    def settings(self, cfg):
        return {"epsilon_doc": cfg.epsilon_doc}

    def epsilon_doc(self, cfg) -> float:
        return cfg.epsilon_doc

    def decode(self, body, cfg, fingerprint):
        return codec.decode_document_reports(body, cfg.vocabulary, cfg.epsilon_doc, fingerprint)

    def from_rows(self, rows, cfg):
        return codec.rows_to_document_reports(rows, cfg.vocabulary, cfg.epsilon_doc)

    def new_model(self, cfg):
        from ..training import build_model  # start-up: the trainers load scikit-learn (first batch)

        return build_model(self.trainer, n_topics=cfg.n_topics)

    def contributor_privacy(self, cfg, n):
        return {"reports": n, "epsilon_doc": cfg.epsilon_doc, "epsilon_contributor_doc_basic": n * cfg.epsilon_doc,
                "epsilon_contributor_word_basic": None, "delta": 0.0, "unit": _UNIT, "accounting": _BASIC}

    def privacy_line(self, cfg, fmt=str, fmt_eps=None):
        return (f"Local privacy of every report (k-subset selection of one word pair per document):"
                f" eps_doc = {(fmt_eps or fmt)(cfg.epsilon_doc)} per document (V = {cfg.vocab_size}).")





KINDS: dict[str, ReportKind] = {k.name: k for k in (WordReports(), DocumentReports())}
NAMES: tuple[str, ...] = tuple(KINDS)


def get(name) -> ReportKind:
    """The registered kind called ``name``; one-line error for any other."""
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise DPTopicError(f"invalid report kind {str(name)[:20]!r}: one of {', '.join(repr(n) for n in NAMES)}.")
    return kind


def of_body(body: bytes) -> str | None:
    """The kind whose magic number starts ``body``, or ``None``."""
    return formats.kind_of_body(body)


def new_trainer(cfg):
    """A fresh model for the service configuration ``cfg`` (:class:`ServiceConfig`): the model its report kind names
    (OLP-LDA for word-level reports, LocalDocumentLDA for document-level ones)."""
    return get(cfg.report_kind).new_model(cfg)
