"""Configuration of the collection service, validated once."""
from __future__ import annotations

import functools
import hmac
from dataclasses import dataclass, field
from pathlib import Path

from .._io import warn_if_shared
from .._validation import Int, IsNone, Real, validate_params
from ..accounting.events import EPSILON_MAX
from ..accounting.fedlda import listed_alphabetically
from ..accounting.local import epsilon_from_f
from ..errors import DPTopicError, ParameterError

DEFAULT_DATABASE = "sqlite:///dptopic-service.db"


@dataclass
class ServiceConfig:
    """Everything ``dptopic serve`` is started with.

    Parameters
    ----------
    database : SQLAlchemy URL: ``sqlite:///PATH`` (default, WAL mode) or ``postgresql+psycopg://...``.
    vocabulary : the public vocabulary (:class:`~dptopic.corpus.Vocabulary`).
    f : flip parameter of the contributors' randomizer (``f = 2/(1 + e^eps_word)``); ``None`` for document-level
        reports.
    report_kind : ``"word"`` (LP-LDA's per-word reports, trained by OLP-LDA) or ``"document"`` (one word pair per
        document by k-subset selection, eps_doc per document, trained by :class:`~dptopic.models.LocalDocumentLDA`): a kind registered in
        :mod:`dptopic.service.kinds`.
    epsilon_doc : the per-document epsilon of document-level reports.
    prior : public prior corpus ``D_0`` for OLP-LDA (disjoint from the contributors), or ``None``.
    n_topics, batch_size, n_iter, lam, omega, prior_iter, delta : OLP-LDA's parameters
        (:class:`~dptopic.models.OLPLDA`); ``batch_size`` reports make one mini-batch.
    train_interval : seconds between the trainer's looks at the report table (0: only on demand).
    max_body_bytes : largest request body accepted (413 above).
    body_timeout : seconds a request body may go without a byte arriving before it is refused (408).
    database_timeout : seconds a request's transaction or read may take on PostgreSQL before it is refused (503):
        a database that stopped answering is not waited on for ever (the trainer's commit gets ten times as long,
        at least 5 minutes; :class:`~dptopic.service.storage.Storage`).
    max_reports_per_request : most reports in one upload.
    admin_token : bearer token of the admin endpoints (``None``: admin endpoints disabled).
    fed_epsilon_per_entry : FedLDA's epsilon per reported entry (of its RRP perturbation), not a total; ``None``
        disables the FedLDA endpoints. (``fed_epsilon=``, its former name, is refused; databases keep recording it
        under the settings key ``fed_epsilon``.)
    fed_topics, fed_failure_rate, fed_gamma, fed_pad_length, fed_sample_ratio : the other public
        FedLDA protocol parameters (:class:`~dptopic.protocol.fedlda.RRPConfig`).
    fed_min_updates : a round closes by itself once this many updates arrived (0: only by the admin).
    fed_report_words : FedLDA's reports range over the vocabulary's first this many words (listed most common
        first); ``None``: every word. ``dptopic privacy fed-report-words`` gives the number for the users expected
        (docs/fedlda.md, "Fewer words in each report").
    fed_user_epsilon : the per-user total that chose ``fed_epsilon_per_entry`` and ``fed_pad_length``
        (``FedLDA.from_user_budget``), or ``None``; said in a refusal of those settings, not bound to the database.
    ledger, ledger_dataset : the dataset ledger each served release is charged to, per contributor
        (:mod:`dptopic.service.ledger`; a file or a ``postgresql://`` URL; None: none), and the name it is recorded
        under (None: by the persons it covers).
    """

    vocabulary: object
    f: float | None
    database: str = DEFAULT_DATABASE
    report_kind: str = "word"
    epsilon_doc: float = 8.0
    prior: object = None
    n_topics: int = 20
    batch_size: int = 160
    n_iter: int = 50
    lam: float = 0.5
    omega: float = 0.4
    prior_iter: int = 200
    delta: float = 1e-5
    train_interval: float = 2.0
    max_body_bytes: int = 4 * 1024 * 1024
    body_timeout: float = 30.0
    database_timeout: float = 15.0
    max_reports_per_request: int = 10_000
    admin_token: str | None = field(default=None, repr=False)
    fed_epsilon_per_entry: float | None = None
    fed_topics: int = 20
    fed_failure_rate: float = 0.1
    fed_gamma: float = 1.0
    fed_pad_length: int = 512
    fed_sample_ratio: float = 1.0
    fed_min_updates: int = 2
    fed_report_words: int | None = None
    fed_user_epsilon: float | None = None
    ledger: str | None = None
    ledger_dataset: str | None = None

    _parameter_constraints = {
        "f": [IsNone(), Real(0, 1, "neither")],
        "epsilon_doc": [Real(0, 50, "right")],
        "n_topics": [Int(2, 100_000)],
        "batch_size": [Int(1, 1_000_000_000)],
        "n_iter": [Int(1, 10_000_000)],
        "lam": [Real(0, 1, "both")],
        "omega": [Real(0, 1, "both")],
        "prior_iter": [Int(1, 10_000_000)],
        "delta": [Real(0, 1, "neither")],
        "train_interval": [Real(0, 1e6, "left")],   # beyond ~11 days a timer fails
        "max_body_bytes": [Int(64, None)],
        "body_timeout": [Real(0, 3600, "right")],
        "database_timeout": [Real(0, 3600, "right")],
        "max_reports_per_request": [Int(1, 1_000_000_000)],
        "fed_epsilon_per_entry": [IsNone(), Real(0, None, "neither")],
        "fed_topics": [Int(2, 100_000)],
        "fed_failure_rate": [Real(0, 1, "neither")],
        "fed_gamma": [Real(1, None, "left")],
        "fed_pad_length": [Int(1, 10_000_000)],     # as FedLDA(pad_length=)
        "fed_sample_ratio": [Real(0, 1, "right")],
        "fed_min_updates": [Int(0, 1_000_000_000)],
        "fed_report_words": [IsNone(), Int(2, 1_000_000_000)],
    }

    def __post_init__(self):
        from ..corpus import Vocabulary  # start-up: corpus loads numba

        if not isinstance(self.vocabulary, Vocabulary):
            self.vocabulary = Vocabulary(list(self.vocabulary))
        if len(self.vocabulary) < 1:
            raise ParameterError("empty {vocabulary}: give at least one word (one word per line of its file).",
                                 "vocabulary")
        validate_params(vars(self), self._parameter_constraints)

        from . import kinds  # off the CLI start: cli.serve imports this module

        kinds.get(self.report_kind).check_config(self)
        if not isinstance(self.database, str) or "://" not in self.database:
            raise DPTopicError(f"invalid database URL {self.database!r}: use sqlite:///PATH or"
                               " postgresql+psycopg://USER@HOST/DB.")
        if self.database.startswith("sqlite") and (self.database.rstrip("/").endswith(":") or ":memory:" in self.database
                                                    or self.database.split("://", 1)[1].strip("/") == ""):
            raise DPTopicError(f"database {self.database!r} is in memory: every connection would see its own empty"
                               " database and nothing would be durable; give sqlite:///PATH to a file.")
        if self.admin_token is not None and len(self.admin_token) < 16:
            raise ParameterError("the admin token ({admin_token}) is shorter than 16 characters: give a long random"
                                 " string (e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))').",
                                 "admin_token")
        V = len(self.vocabulary)
        fed_k = self.fed_topics if self.fed_epsilon_per_entry else 0
        for name, k in (("n_topics", self.n_topics), ("fed_topics", fed_k)):
            if k > V:
                raise ParameterError("{parameter}={value} exceeds the vocabulary size {V}: every mini-batch would be"
                                     " refused; give at most {V} topics or a larger {vocabulary}.", name, k, V=V)
        if self.fed_report_words is not None:
            if self.fed_epsilon_per_entry is None:
                raise ParameterError("{fed_report_words} has no effect without FedLDA: give {fed_epsilon_per_entry},"
                                     " or drop it.", "fed_report_words", self.fed_report_words)
            if not self.fed_topics <= self.fed_report_words <= V:
                raise ParameterError("{fed_report_words=} must lie between {fed_topics} ({k}) and the vocabulary size"
                                     " ({V}).", "fed_report_words", self.fed_report_words, k=self.fed_topics, V=V)

            if self.fed_report_words < V and listed_alphabetically(self.vocabulary):
                raise ParameterError("{fed_report_words=} keeps the vocabulary's first words as its most common, but"
                                     " {vocabulary} is in alphabetical order: list it most common first (dptopic"
                                     " corpus prepare writes it so), or drop {fed_report_words}.", "fed_report_words",
                                     self.fed_report_words)
        if self.fed_epsilon_per_entry is not None:
            if not 0 < self.fed_epsilon_per_entry <= EPSILON_MAX:
                raise ParameterError("invalid {fed_epsilon_per_entry=:g}: give a per-entry epsilon in (0, {most:g}]"
                                     " (the smallest that works depends on the vocabulary).", "fed_epsilon_per_entry",
                                     self.fed_epsilon_per_entry, most=EPSILON_MAX)
            from ..protocol.fedlda import rounds_to_no_entry  # start-up: protocol.fedlda loads numpy

            if rounds_to_no_entry(self.fed_pad_length, self.fed_sample_ratio):  # as FedLDA refuses it
                raise ParameterError("{fed_pad_length=} is too small for {fed_sample_ratio=:g}: an update would round"
                                     " to no entry; give {fed_pad_length} * {fed_sample_ratio} >= 0.5.",
                                     "fed_pad_length", self.fed_pad_length,
                                     values={"fed_sample_ratio": self.fed_sample_ratio})


    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    @property
    def fed_vocabulary(self):
        """The words FedLDA's reports range over: the vocabulary's first ``fed_report_words`` (all by default)."""
        from ..corpus import Vocabulary  # start-up: corpus loads numba

        n = self.fed_report_words
        return self.vocabulary if n is None or n >= len(self.vocabulary) else Vocabulary(self.vocabulary.words[:n])

    @property
    def epsilon_word(self) -> float:
        return None if self.f is None else epsilon_from_f(self.f)

    def check_token(self, presented: str | None) -> bool:
        """Constant-time comparison of a presented bearer token with the admin token."""
        if self.admin_token is None or presented is None:
            return False
        return hmac.compare_digest(presented.encode("utf-8"), self.admin_token.encode("utf-8"))


_dataclass_init = ServiceConfig.__init__


@functools.wraps(_dataclass_init)
def _init_refusing_fed_epsilon(self, *args, **kwargs):
    if "fed_epsilon" in kwargs:     # its meaning was per entry, never a total: refused rather than read silently
        raise DPTopicError("ServiceConfig(fed_epsilon=) is now fed_epsilon_per_entry=: FedLDA's epsilon per reported"
                           " entry, not a total.")
    _dataclass_init(self, *args, **kwargs)


ServiceConfig.__init__ = _init_refusing_fed_epsilon


def read_token_file(path) -> str:
    """The admin token: the first line of ``path`` (the file should be readable by the server only: a warning names it
    otherwise)."""
    p = Path(path)
    from ..corpus.files import not_a_regular_file, read_text_file  # strict UTF-8, a binary file refused

    if not p.is_file():
        raise DPTopicError(f"token file {str(path)!r} {not_a_regular_file(p) or 'does not exist'}:"
                           " give a regular file holding a long random token.")

    lines = read_text_file(p, "a text file holding a long random token (python -c 'import secrets;"
                              " print(secrets.token_urlsafe(32))')").strip().splitlines()
    token = lines[0].strip() if lines else ""
    if not token:
        raise DPTopicError(f"token file {str(path)!r} is empty: write a long random token into it.")
    warn_if_shared(p, "the token file", "the server's admin token (it closes steps and rounds)")
    return token
