"""``serve``: the collection server (its clients, ``submit`` and ``fed-client``: cli/submit.py). See docs/service.md."""
from __future__ import annotations

import logging
import warnings

from ..datasets import PUBLIC_VOCABULARY_DECIDES
from ..errors import DPTopicError
from ..protocol.codec import DEFAULT_MAX_EPSILON as LIMIT
from ..reporting.terminal import make_console
from ..service import create_app, startup
from ..service.config import read_token_file
from ..service.http import server_options
from ._flags import flag_errors
from ._run_common import load_corpus, read_vocabulary
from .budget import served_ledger
from .secure_sum import (
    refuse_secure_flags,
    serve_secure_sum,
)


def _loopback(host) -> bool:
    return host in startup.LOOPBACK


# settings that take effect in some modes only: (name, default, whether it has no effect, why, what to do)
IDLE_SETTINGS = (
    ("format", "auto", lambda a: a.get("prior") is None, "it is the format of --prior, and none is given",
     "drop it, or add --prior FILE"),
    ("text_field", "text", lambda a: a.get("prior") is None, "it names the text of --prior, and none is given",
     "drop it, or add --prior FILE"),
    ("prior_iterations", 200, lambda a: a.get("prior") is None or a.get("report_kind") == "document",
     "it sets the Gibbs sweeps on --prior, and none is given", "drop it, or add --prior FILE"),
    ("iterations", 50, lambda a: a.get("report_kind") == "document",
     "--report-kind document trains LocalDocumentLDA, which takes no Gibbs sweeps", "drop it"),
    ("lam", 0.5, lambda a: a.get("report_kind") == "document", "it is OLP-LDA's, and --report-kind document trains"
     " LocalDocumentLDA", "drop it"),
    ("omega", 0.4, lambda a: a.get("report_kind") == "document", "it is OLP-LDA's, and --report-kind document trains"
     " LocalDocumentLDA", "drop it"),
    ("delta", 1e-5, lambda a: a.get("report_kind") == "document", "document-level reports are pure eps_doc-DP, with no"
     " delta", "drop it"),
    ("fed_failure_rate", None, lambda a: True, "the server's FedLDA rounds use the 'none' rule (each entry randomized"
     " by subset selection), which excludes no rare words", "drop it"),
    ("database_timeout", 15.0, lambda a: not str(a.get("database")).startswith("postgresql"),
     "it limits PostgreSQL's statements, and --database is not PostgreSQL (SQLite waits for its lock up to 30 s)",
     "drop it"),
    ("allow_remote", False, lambda a: _loopback(a.get("host")),
     "--host listens on this machine only", "drop it"),
)


def refuse_idle_settings(settings, given=None) -> None:
    """Refuse, in one line, a setting given that has no effect with the others (``--format`` without ``--prior``), as
    the ``--fed-*`` flags without ``--fed-epsilon-per-entry`` are: a user who gave it meant something that will not
    happen. ``settings``: serve's settings by name; ``given``: the names the user set (default: those not at their
    default)."""
    for dest, default, idle, why, fix in IDLE_SETTINGS:
        written = dest in given if given is not None else settings.get(dest, default) != default
        if written and idle(settings):
            flag = "--" + dest.replace("_", "-")
            raise DPTopicError(f"{flag} has no effect here: {why}; {fix}.")


def refuse_idle_flags(a) -> None:
    """Refuse, in one line, a flag given that has no effect with the others (:func:`refuse_idle_settings`)."""
    refuse_idle_settings(vars(a), getattr(a, "_given", None))    # the flags written (cli.main's parser)


def warn_above_client_limit(cfg, fed_user_budget=None) -> None:
    """Warn (one line) when the epsilon per report is above what ``dptopic submit`` and ``fed-client`` accept by
    default (``--max-epsilon``, 16; :func:`dptopic.service.startup.above_client_limit`): contributors who keep their
    default refuse to send anything. A warning, not a refusal: a contributor may raise the limit."""
    for parameter, eps, client in startup.above_client_limit(cfg, fed_user_budget):
        flag = (f"--fed-epsilon-per-entry (chosen by --fed-user-budget {fed_user_budget:g})"
                if parameter == "fed_user_budget" else SERVE_FLAGS[parameter])
        warnings.warn(f"{flag} {eps:.4g} is above {LIMIT:g}, the largest epsilon per report that dptopic {client}"
                      f" accepts by default (--max-epsilon): contributors who keep that default will refuse to"
                      f" randomize or send anything; they must pass --max-epsilon {eps:.4g} or more to take part.",
                      UserWarning, stacklevel=2)


def build_config(a):
    """The :class:`~dptopic.service.ServiceConfig` of these flags (:func:`dptopic.service.startup.serve_config`)."""
    if getattr(a, "retired_fed_epsilon", None) is not None:     # a figure per entry is never read as a total
        raise DPTopicError("--fed-epsilon is gone: FedLDA's epsilon per reported entry is now --fed-epsilon-per-entry"
                           " EPS_ENTRY (a per-user total: --fed-user-budget EPS_USER).")
    refuse_idle_flags(a)
    vocab = read_vocabulary(a.vocabulary)
    prior = None
    if a.prior is not None:
        # read in the server's vocabulary: a cap on words built from the prior's text would drop the server's
        # words that the prior uses rarely
        prior = load_corpus(a.prior, a.format, None, a.text_field, None, vocabulary=vocab,
                            stop_words=PUBLIC_VOCABULARY_DECIDES, vocab_settable=False)
        if prior.vocabulary != vocab:
            prior = prior.restrict(vocab)
    return startup.serve_config(
        vocab, report_kind=a.report_kind, epsilon_word=a.epsilon_word, epsilon_doc=a.epsilon_doc, prior=prior,
        admin_token=read_token_file(a.token_file) if a.token_file else None, fed_user_budget=a.fed_user_budget,
        fed_epsilon_per_entry=a.fed_epsilon, **{f"fed_{k}": getattr(a, f"fed_{k}") for k in startup.FED_DEFAULTS},
        database=a.database, n_topics=a.topics, batch_size=a.batch_size, n_iter=a.iterations, lam=a.lam,
        omega=a.omega, prior_iter=a.prior_iterations, delta=a.delta, train_interval=a.train_interval,
        max_body_bytes=a.max_body_bytes, body_timeout=a.body_timeout, database_timeout=a.database_timeout,
        max_reports_per_request=a.max_reports_per_request, **served_ledger(a))


# ServiceConfig's parameters (and FedLDA's, checked by protocol.fedlda.check_config) as serve's flags (cli._flags)
SERVE_FLAGS = {**{p: "--" + p.replace("_", "-") for p in (
    "epsilon_word", "epsilon_doc", "database", "batch_size", "lam", "omega", "delta", "train_interval", "max_body_bytes",
    "body_timeout", "database_timeout", "max_reports_per_request", "fed_epsilon_per_entry", "fed_topics",
    "fed_failure_rate", "fed_pad_length", "fed_sample_ratio", "fed_min_updates", "fed_report_words", "vocabulary",
    "fed_user_budget", "host", "port", "allow_remote", "allow_foreign_tables", "report_kind", "unit", "prior",
    "min_contributors", "dropout_tolerance", "directory")},
    "n_topics": "--topics", "n_iter": "--iterations", "prior_iter": "--prior-iterations", "admin_token": "--token-file",
    "fed_epsilon": "--fed-epsilon-per-entry", "user_epsilon": "--fed-user-budget", "fed_user_epsilon": "--fed-user-budget",
    # FedLDA's own names (RRPConfig, FedLDA.from_user_budget)
    **{p: "--fed-" + p.replace("_", "-") for p in ("epsilon_per_entry", "pad_length", "sample_ratio", "report_words")},
    "epsilon": "--fed-epsilon-per-entry"}


def serve_flag_names(a) -> dict:
    """The names for :func:`~dptopic.cli._flags.flag_errors` (``--fed-user-budget`` chooses the epsilon per entry and
    the entries itself: FedLDA's per-user total is it)."""
    return {**SERVE_FLAGS, "epsilon": "--fed-user-budget"} if a.fed_user_budget is not None else SERVE_FLAGS


def cmd_serve(a):
    with flag_errors(serve_flag_names(a)):
        if a.report_kind == "secure-sum":       # docs/secure_sum.md (its plan's own flags inside: --epsilon)
            return serve_secure_sum(a, serve_flag_names(a))
        refuse_secure_flags(a)
        _serve(a)


def _serve(a):
    startup.need_service_extra()
    startup.check_host(a.host, a.allow_remote)
    cfg = build_config(a)
    startup.check_startup(cfg)
    warn_above_client_limit(cfg, a.fed_user_budget)
    # before the database is touched: a failed start creates nothing; the port stays held until the server listens
    sockets = startup.check_port_free(a.host, a.port, keep=True)
    try:
        _serve_on(sockets, a, cfg, create_app)
    finally:
        startup.close_all(sockets)


def _serve_on(sockets, a, cfg, create_app) -> None:
    probe = startup.check_database(cfg, a.allow_foreign_tables)  # other tables, bad URL, newer schema: before serving
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    console = make_console(stderr=True)
    console.print(startup.banner(cfg, f"http://{a.host}:{a.port}/"), markup=False)
    kept = startup.kept_settings_warning(probe.settings_kept_by_model(), {**SERVE_FLAGS, "prior": "--prior"})
    if kept:    # a restart with other trainer flags: the model already trained keeps its own, said in one line
        console.print(kept, markup=True)
    app = create_app(cfg, setting_names=serve_flag_names(a))   # its answers name the server's settings by their flags
    if not startup.run_server(app, sockets, a.host, a.port, quiet=a.quiet, timeout_graceful_shutdown=10,
                      **server_options(header_timeout=a.header_timeout)):
        raise DPTopicError("the server did not start (uvicorn's message above says why): nothing was served.")


__all__ = ["build_config"]
