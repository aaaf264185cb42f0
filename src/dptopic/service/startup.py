"""What a server decides before it serves: its configuration from the public settings (the FedLDA split of a per-user
budget, the report kind's epsilon), the checks that a start would otherwise fail on or leave useless (the host, the
port, the upload limit, the database's other tables) and the warnings its contributors would meet; then the run on
the sockets held. ``dptopic serve`` parses its flags, calls these and prints; a Python user calls the same.

The refusals are :class:`~dptopic.errors.ParameterError` naming the parameters (``host``, ``max_body_bytes``);
``dptopic serve`` writes them in its flags.
"""
from __future__ import annotations

import errno
import ipaddress
import re
import socket

from ..accounting.local import check_reporting_f, f_from_epsilon
from ..errors import DPTopicError, ParameterError
from .config import ServiceConfig

CLIENT_STOP_WORDS = "none"
"""The stop words of the contributors' tokeniser (``submit``, ``fed-client``, ``randomize``): none, the public
vocabulary decides which words count."""

FED_DEFAULTS = {"topics": 20, "failure_rate": 0.1, "pad_length": 512, "sample_ratio": 1.0, "min_updates": 2,
                "report_words": None}
LOOPBACK = ("127.0.0.1", "::1", "localhost")
_HOST_NAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                        r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")


def need_service_extra() -> None:
    """Refuse in one line when the ``service`` extra (SQLAlchemy, Starlette, uvicorn) is not installed."""
    try:
        import sqlalchemy  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise DPTopicError(f"the service needs the 'service' extra ({e.name} is missing): pip install 'dptopic[service]'.") from None


def check_host(host: str, allow_remote: bool = False) -> None:
    """An IP address or a host name; one other than this machine only with ``allow_remote`` (behind a TLS proxy)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not _HOST_NAME.fullmatch(host):
            raise ParameterError("invalid {host=}: give an IP address or a host name (127.0.0.1 by default).",
                                 "host", host) from None
    if host not in LOOPBACK and not allow_remote:
        exposes = "{host=} would expose the server beyond this machine: put it behind a TLS reverse proxy and "
        raise ParameterError(exposes + "pass allow_remote=True to confirm.", "host", host,
                             key="service.startup.check_host", others=("allow_remote",))


def check_port_free(host: str, port: int, keep: bool = False) -> list:
    """Refuse, in one line, a ``port`` that ``host`` cannot listen on (another server holds it, or it needs
    privileges): checked before the database is created or changed, so that a failed start leaves nothing behind.

    Binds each address ``host`` resolves to as uvicorn's event loop would (``SO_REUSEADDR``, IPv6 sockets IPv6-only; an
    address family this machine lacks is skipped). ``keep``: the sockets listen at once and are returned for the
    server to serve on, so that no other program can take the port between this check and the start (a client that
    connects meanwhile waits in the queue); otherwise they are let go at once (and ``[]`` is returned)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise ParameterError("{host=} does not resolve ({why}): give an IP address or a host name this machine knows"
                             " (127.0.0.1 by default).", "host", host, why=e.strerror) from None
    seen, bound = set(), []
    try:
        for family, kind, proto, _, addr in infos:
            if (family, addr[:2]) in seen:
                continue
            seen.add((family, addr[:2]))
            try:
                sock = socket.socket(family, kind, proto)
            except OSError:     # an address family this machine does not offer: the server skips it too
                continue
            bound.append(sock)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(addr)
            except OSError as e:
                bound.pop().close()
                if e.errno == errno.EADDRNOTAVAIL:
                    continue
                if e.errno == errno.EADDRINUSE:
                    raise ParameterError("port {value} on {address} is in use (another program listens there):"
                                         " choose another {port}, or stop the program that holds it.", "port", port,
                                         address=host) from None
                if e.errno in (errno.EACCES, errno.EPERM):
                    raise ParameterError("port {value} on {address} needs privileges to listen on (ports below 1024"
                                         " do): choose another {port}, 1024 or above.", "port", port,
                                         address=host) from None
                raise _cannot_listen(port, host, e) from None
    except BaseException:
        close_all(bound)
        raise
    if not keep:
        close_all(bound)
        return []
    if not bound:
        raise ParameterError("no address of {host=} can be listened on here: give an IP address of this machine"
                             " (127.0.0.1 by default).", "host", host)
    try:    # listening holds the port (a bound socket alone lets another SO_REUSEADDR socket bind it); clients queue
        for sock in bound:
            sock.listen(2048)
    except OSError as e:
        close_all(bound)
        raise _cannot_listen(port, host, e) from None
    return bound


def _cannot_listen(port: int, host: str, e: OSError) -> ParameterError:
    """The refusal of a ``port`` on ``host`` that the system would not let us listen on, for a reason of its own."""
    return ParameterError("cannot listen on port {value} on {address} ({why}): choose another {port} or {host}.",
                          "port", port, address=host, why=(e.strerror or str(e)).lower())


def close_all(sockets) -> None:
    for sock in sockets:
        sock.close()


def serve_config(vocabulary, *, report_kind: str = "word", epsilon_word=None, epsilon_doc=None, prior=None,
                 admin_token=None, fed_user_budget=None, fed_epsilon_per_entry=None, fed_topics=None,
                 fed_failure_rate=None, fed_pad_length=None, fed_sample_ratio=None, fed_min_updates=None,
                 fed_report_words=None, **settings) -> ServiceConfig:
    """The :class:`ServiceConfig` of a server: the report kind's epsilon (``epsilon_word`` for word-level reports,
    ``epsilon_doc`` for document-level ones, default 8), FedLDA on when ``fed_epsilon_per_entry`` or
    ``fed_user_budget`` (the per-user total, split into the epsilon per entry and the entries by
    :meth:`~dptopic.models.FedLDA.from_user_budget`) is given, a FedLDA setting refused without it; ``settings``: the
    other parameters of :class:`ServiceConfig`."""
    fed = {"topics": fed_topics, "failure_rate": fed_failure_rate, "pad_length": fed_pad_length,
           "sample_ratio": fed_sample_ratio, "min_updates": fed_min_updates, "report_words": fed_report_words}
    if fed_user_budget is not None:
        if fed_epsilon_per_entry is not None or fed_pad_length is not None:
            raise ParameterError("{fed_user_budget} chooses the epsilon per entry and the entries itself: drop"
                                 " {fed_epsilon_per_entry} and {fed_pad_length}.", "fed_user_budget", fed_user_budget)
        from ..models import FedLDA  # start-up: the models load scikit-learn (a FedLDA server's split only)

        words = len(vocabulary.words)
        split = FedLDA.from_user_budget(fed_user_budget, min(words, fed_report_words or words),
                                        sample_ratio=FED_DEFAULTS["sample_ratio"] if fed_sample_ratio is None
                                        else fed_sample_ratio)
        fed_epsilon_per_entry, fed["pad_length"] = split.epsilon_per_entry_, split.pad_length   # the service's is per entry
    if fed_epsilon_per_entry is None and any(v is not None for v in fed.values()):
        given = next(k for k, v in fed.items() if v is not None)
        raise ParameterError("{parameter} has no effect without FedLDA: give {fed_epsilon_per_entry} (or"
                             " {fed_user_budget}) to run FedLDA rounds, or drop it.", f"fed_{given}", fed[given],
                             key="service.startup.serve_config")
    fed = {k: FED_DEFAULTS[k] if v is None else v for k, v in fed.items()}
    if report_kind == "document":
        if epsilon_word is not None:
            raise ParameterError("{report_kind=} takes {epsilon_doc} (per document), not {epsilon_word}.",
                                 "epsilon_word", epsilon_word, values={"report_kind": report_kind})
        f, kind = None, {"report_kind": "document", "epsilon_doc": 8.0 if epsilon_doc is None else epsilon_doc}
    else:
        if epsilon_word is None:
            raise ParameterError("{epsilon_word} is required for word-level reports (or {report_kind=} with"
                                 " {epsilon_doc}).", "epsilon_word", values={"report_kind": "document"})
        if epsilon_doc is not None:
            raise ParameterError("{epsilon_doc} is for {report_kind=}; word-level reports take {epsilon_word}.",
                                 "epsilon_doc", epsilon_doc, values={"report_kind": "document"})
        f, kind = check_reporting_f(f_from_epsilon(epsilon_word)), {}
    return ServiceConfig(vocabulary, f, prior=prior, **kind, **settings, admin_token=admin_token,
                         fed_epsilon_per_entry=fed_epsilon_per_entry, fed_user_epsilon=fed_user_budget,
                         **{f"fed_{k}": v for k, v in fed.items()})


def smallest_upload(cfg) -> int:
    """Bytes of the smallest upload of reports this server takes: one report of its kind for its vocabulary, with the
    file's header (without the word list, with an upload nonce, as ``dptopic submit`` sends it) and checksum; every
    upload ``dptopic submit`` sends is at least this long (a nonce-less file posted by hand is 50 bytes shorter)."""
    import numpy as np  # numpy: kept off this module's import (a light start)

    from ..protocol import codec  # off the CLI start: cli.serve imports this module

    fingerprint = codec.vocabulary_fingerprint(cfg.vocabulary)
    V = cfg.vocab_size
    if cfg.report_kind == "document":
        from ..protocol.document_reports import (  # start-up: protocol.document_reports loads numba
            DocumentReportSet,
            domain_size,
            subset_size,
        )

        k = subset_size(domain_size(V), float(cfg.epsilon_doc))
        one = DocumentReportSet(np.arange(k, dtype=np.uint32)[None, :], V, fingerprint, float(cfg.epsilon_doc))
    else:
        from ..protocol.reports import ReportSet  # start-up: protocol.reports loads numba

        one = ReportSet(np.zeros((1, (V + 7) // 8), dtype=np.uint8), V, fingerprint, cfg.f)
    return len(codec.encode_reports(one))


def check_body_limit(cfg) -> None:
    """Refuse a ``max_body_bytes`` below the smallest upload of one report: the server would start and answer every
    upload with 413."""
    need = smallest_upload(cfg)
    if cfg.max_body_bytes < need:
        raise ParameterError("{max_body_bytes=} is smaller than the smallest upload this server takes ({need} bytes:"
                             " one {kind}-level report for a vocabulary of {words} words, with its header and"
                             " checksum): every upload would be refused with 413; give at least {need} (uploads of"
                             " many reports need more; default 4194304).", "max_body_bytes", cfg.max_body_bytes,
                             need=need, kind=cfg.report_kind, words=cfg.vocab_size)
    if cfg.fed_epsilon_per_entry is not None:
        # a participant draws its reports, and spends their epsilon, before it uploads: an update the server would
        # refuse as too large spends for nothing
        from . import codec  # off the CLI start: cli.serve imports this module

        words = len(cfg.fed_vocabulary)
        update = codec.fed_largest_update(codec.fed_config(cfg), words)
        if cfg.max_body_bytes < update:
            raise ParameterError("{max_body_bytes=} is smaller than a FedLDA update at these settings (up to {update}"
                                 " bytes: {entries} entries of reports over {words} words): participants would draw,"
                                 " and spend, then be refused with 413; raise {max_body_bytes} or lower"
                                 " {fed_pad_length}.", "max_body_bytes", cfg.max_body_bytes, update=update,
                                 entries=codec.fed_config(cfg).n_entries, words=words)


def above_client_limit(cfg, fed_user_budget=None) -> list:
    """The epsilons per report of ``cfg`` above what ``dptopic submit`` and ``fed-client`` accept by default
    (:data:`~dptopic.protocol.codec.DEFAULT_MAX_EPSILON`, 16), which contributors who keep their default refuse:
    ``(parameter, epsilon, client)`` for each (``client``: ``"submit"`` or ``"fed-client"``); ``parameter`` is
    ``fed_user_budget`` when that budget chose FedLDA's epsilon per entry."""
    from ..protocol.codec import DEFAULT_MAX_EPSILON as LIMIT  # off the CLI start: cli.serve imports this module

    asked = [("epsilon_doc", cfg.epsilon_doc, "submit") if cfg.report_kind == "document"
             else ("epsilon_word", cfg.epsilon_word, "submit")]
    if cfg.fed_epsilon_per_entry is not None:
        asked.append(("fed_epsilon_per_entry" if fed_user_budget is None else "fed_user_budget",
                      cfg.fed_epsilon_per_entry, "fed-client"))
    return [(p, eps, client) for p, eps, client in asked if eps > LIMIT * (1 + 1e-12)]


def warn_unreachable_vocabulary(vocabulary) -> None:
    """Warn (as ``dptopic randomize`` does) about vocabulary words that the contributors' clients never count: their
    tokeniser (``submit``, ``fed-client``, ``randomize``: no stop words, lower case, at least 3 letters) never produces
    a word with a space, upper case or fewer than 3 letters, so every report carries pure noise for it. A warning, not
    a refusal: the list is public and the server still works."""
    from ..corpus.corpus import warn_unreachable_words  # start-up: corpus.corpus loads numba
    from ..corpus.preprocess import Preprocessor  # start-up: corpus.preprocess loads numba

    warn_unreachable_words(vocabulary.words, Preprocessor(stop_words=CLIENT_STOP_WORDS))


def check_startup(cfg) -> None:
    """Everything a configuration is checked for before the port is taken or the database touched: FedLDA's settings
    for its vocabulary, the upload limit; then the warning on vocabulary words its contributors never count (the
    epsilons they would refuse: :func:`above_client_limit`)."""
    if cfg.fed_epsilon_per_entry is not None:  # K <= V and an epsilon the replacement can honour for this vocabulary
        from ..protocol.fedlda import check_config  # start-up: protocol.fedlda loads numpy
        from . import codec  # off the CLI start: cli.serve imports this module

        check_config(codec.fed_config(cfg), len(cfg.fed_vocabulary))
    check_body_limit(cfg)
    warn_unreachable_vocabulary(cfg.vocabulary)


def check_database(cfg, allow_foreign_tables: bool = False):
    """The database checked before serving (other programs' tables, a bad URL, a newer schema, another vocabulary):
    one line each; the probing :class:`~dptopic.service.app.Service` (its trainer not started)."""
    from .app import Service  # start-up: service.app loads sqlalchemy, starlette
    from .storage import foreign_tables  # start-up: service.storage loads sqlalchemy

    foreign = foreign_tables(cfg.database)
    if foreign and not allow_foreign_tables:
        held = "{database=} already holds tables that are not dptopic's ({tables}): give a new database, or pass "
        raise ParameterError(held + "allow_foreign_tables=True to add the service's tables beside them.", "database",
                             cfg.database, key="service.startup.check_database", others=("allow_foreign_tables",),
                             tables=", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else ""))
    probe = Service(cfg, start_trainer=False)
    probe.preflight()
    return probe


SECURE_SUM_PEOPLE = 3000     # the smallest round measured within 0.03 of the central trainer (docs/secure_sum.md)


def kept_settings_warning(kept, names=None) -> str | None:
    """The warning for a restart with other trainer settings than the database's active model was trained with (``kept``:
    its probe's ``settings_kept_by_model()``, triples ``(setting, value kept, value asked)``): that model keeps its own,
    said in one line naming each setting as ``names`` writes it (``prior``: the prior corpus). None when none differs."""
    if not kept:
        return None
    held = ", ".join(("a prior corpus" if v else "no prior corpus") if k == "prior" else f"{k}={v:g}"
                     if isinstance(v, float) else f"{k}={v}" for k, v, _ in kept)
    flags = ", ".join((names or {}).get(k, k) for k, _, _ in kept)
    return (f"[bold yellow]warning[/]: the database's active model keeps {held}: {flags} of this start apply to a new"
            " model only (POST /v1/admin/rotate starts one), not to the one trained so far.")


def secure_sum_settings(vocabulary, *, unit=None, epsilon=None, delta: float = 1e-5, min_contributors=None,
                        dropout_tolerance=None, collusion=None, max_body_bytes: int | None = None,
                        cohort_size: int | None = None, max_words: int | None = None, committee=None,
                        directory: dict | None = None, **others) -> dict:
    """The keyword arguments of :class:`~dptopic.service.secure_sum.config.SecureSumConfig` for a secure-sum round
    over ``vocabulary``: its plan (:class:`~dptopic.protocol.secure_sum.plan.SecureSumPlan`: ``epsilon`` per
    person, ``min_contributors``, ``dropout_tolerance`` of them may drop out, default a tenth, ``collusion``
    colluders at most, ``max_words`` words at most in the second sum, default
    :data:`~dptopic.protocol.secure_sum.plan.DEFAULT_MAX_WORDS`) and an upload limit: ``max_body_bytes``, refused
    when it cannot hold the round's largest upload (None: that upload's size). ``cohort_size``: a round in cohorts
    of at most that many (its plan a :class:`~dptopic.protocol.secure_sum.cohorts.CohortPlan`, the keyword arguments
    :class:`~dptopic.service.secure_sum.cohort_app.CohortSumConfig`'s; ``dropout_tolerance`` the dropouts expected
    in the whole round). ``committee``: the committee mode (:mod:`dptopic.protocol.secure_sum.committee`: "auto", a
    size, or None/0 for none), of a single round, served by
    :func:`~dptopic.service.secure_sum.committee_app.create_committee_app`, or of each cohort
    (:class:`~dptopic.protocol.secure_sum.cohorts.CohortPlan`'s ``committee``). ``directory``: a single round's
    directory (:func:`~dptopic.protocol.secure_sum.enrollment.read_directory`'s), which names the operator's plan
    and mode (:func:`directory_plan`): ``dropout_tolerance`` and ``collusion`` default to its, and a plan or a mode
    other than it names is refused.
    ``others``: the word-level server's report settings, refused when given."""
    from ..protocol.secure_sum.plan import SecureSumPlan  # start-up: protocol.secure_sum loads numpy

    _refuse_other_settings(unit, epsilon, min_contributors, others)
    if directory is not None and cohort_size is None:
        pinned = directory_plan(directory, committee)
        dropout_tolerance = pinned["dropouts"] if dropout_tolerance is None else dropout_tolerance
        collusion = pinned["collusion"] if collusion is None else collusion
    F = dropout_tolerance if dropout_tolerance is not None else min_contributors // 10
    if cohort_size is not None:
        from ..protocol.secure_sum.cohorts import CohortPlan  # start-up: protocol.cohorts loads numpy

        plan = CohortPlan(float(epsilon), float(delta), int(min_contributors), int(F), len(vocabulary), cohort_size,
                          collusion, max_words=max_words, committee=committee)
        parts = [*plan.cohort_plans, plan.bridge_plan]
        need = max(p.upload_bytes(max(p.dims)) for p in parts) + 64
        plan_of_upload = parts[0]
    else:
        plan = plan_of_upload = SecureSumPlan(float(epsilon), float(delta), int(min_contributors), int(F),
                                              len(vocabulary), collusion, max_words=max_words, committee=committee)
        need = plan.upload_bytes(max(plan.dims)) + 64
    if max_body_bytes is not None and max_body_bytes < need:
        raise ParameterError("{max_body_bytes=} cannot hold the round's largest upload ({need} bytes, the"
                             " co-occurrence triangle over {words} words): raise it, or leave it out.",
                             "max_body_bytes", max_body_bytes, need=need, words=plan_of_upload.max_kept_words)
    if directory is not None and cohort_size is None:
        for name, value in (("dropouts", plan.dropouts), ("collusion", plan.collusion)):
            if value != pinned[name]:
                raise ParameterError("{" + name + "=} differs from the {pinned} the invitations pin ({directory}):"
                                     " leave it out (the server takes the invitations'), or invite again.", name,
                                     value, pinned=pinned[name], others=("directory",))
    return {"vocabulary": vocabulary, "plan": plan, "max_body_bytes": need if max_body_bytes is None else max_body_bytes}


def _refuse_other_settings(unit, epsilon, min_contributors, others: dict) -> None:
    """A secure sum's own settings, before its plan is made: the user unit, an epsilon per person and a number of
    contributors, none of the word-level server's report settings."""
    if unit != "user":
        raise ParameterError("a secure sum needs unit='user' (the guarantee is per person), not {unit=}.", "unit", unit,
                             key="service.startup.secure_sum_settings", others=("report_kind",),
                             values={"report_kind": "secure-sum"})
    if epsilon is None or min_contributors is None:
        raise ParameterError("a secure sum needs {epsilon} (per person) and {min_contributors}.",
                             "epsilon" if epsilon is None else "min_contributors",
                             others=("min_contributors", "report_kind"),
                             key="service.startup.secure_sum_settings.2",
                             values={"report_kind": "secure-sum"})
    for name in ("epsilon_word", "epsilon_doc", "prior"):
        if others.get(name) is not None:
            raise ParameterError("{parameter} is not for a secure sum: drop it.", name, others[name],
                                 key="service.startup.secure_sum_settings.3", others=("report_kind",),
                                 values={"report_kind": "secure-sum"})


def directory_plan(directory: dict, committee=None) -> dict:
    """The operator's plan a single round's ``directory`` names (its layout,
    :data:`~dptopic.protocol.secure_sum.enrollment.LAYOUT_KEYS`), once the mode a server is started in (``committee``:
    None or
    0 for none, else "auto" or a size) is the one it names; one line saying what to do otherwise, before anything is
    served or stored: a server does not start a round its contributors' invitations would refuse."""
    named = bool(directory.get("committee", False))
    if bool(committee) != named:
        if named:
            raise ParameterError("{directory} names a committee round (the operator invited with the committee mode):"
                                 " serve it with {committee}='auto' (or a size).", "directory",
                                 others=("committee",), key="service.startup.directory_plan")
        raise ParameterError("{directory} names a round without a committee: drop {committee}, or invite again with"
                             " the committee mode.", "directory", others=("committee",))
    layout = directory.get("layout")
    if layout is None:
        raise ParameterError("{directory} names no plan (its round's dropouts and collusion: a directory of an older"
                             " dptopic): invite again, and hand the contributors their new invitations.", "directory")
    return layout


def banner(cfg, url: str) -> str:
    """The line a server says as it starts: its vocabulary, reports, model, prior, FedLDA and admin settings (an
    epsilon shown rounded up) and ``url``."""
    from .status import fmt_epsilon as eps  # off the CLI start: cli.serve imports this module

    if hasattr(cfg, "plan"):        # a secure-sum round (service.secure_sum.config.SecureSumConfig)
        plan = cfg.plan
        return (f"dptopic serve: secure sum, V={len(cfg.vocabulary)}, K={cfg.n_topics}, epsilon={plan.epsilon:g} per"
                f" person (delta={plan.delta:g}), {plan.n} invited contributors (round {cfg.round_id}), up to"
                f" {plan.dropouts} dropping out and {plan.collusion} colluding, {plan.degree} neighbours each,"
                f" threshold {plan.threshold}; sums modulo 2^{plan.bits} at scale 2^{int(plan.scale).bit_length() - 1}"
                f" (noise x{plan.noise_inflation:.4f} for the rounding); upload limit {cfg.max_body_bytes} bytes; admin"
                f" {'on' if cfg.admin_token else 'off'}; {url}")
    reports = (f"document-level reports, eps_doc={eps(cfg.epsilon_doc, 6)}, LocalDocumentLDA K={cfg.n_topics}"
               if cfg.report_kind == "document" else
               f"eps_word={eps(cfg.epsilon_word)} (f={cfg.f:.6g}), OLP-LDA K={cfg.n_topics}")
    fed = cfg.fed_epsilon_per_entry
    return (f"dptopic serve: V={cfg.vocab_size}, {reports} batch={cfg.batch_size},"
            f" prior={'none' if cfg.prior is None else f'{cfg.prior.n_docs} documents'},"
            f" FedLDA {'off' if fed is None else f'eps={eps(fed, 6)} over {len(cfg.fed_vocabulary)} words'},"
            f" admin {'on' if cfg.admin_token else 'off'}; {url}")


def run_server(app, sockets, host: str, port: int, *, quiet: bool = False, **options) -> bool:
    """Serve ``app`` with uvicorn on the ``sockets`` held (:func:`check_port_free` with ``keep=True``) until stopped
    (Ctrl-C: a graceful shut-down); whether it started. ``options``: more of uvicorn's ``Config``."""
    import uvicorn  # uvicorn: optional (the [service] extra)

    config = uvicorn.Config(app, host=host, port=port, log_level="warning" if quiet else "info",
                            access_log=not quiet, **options)
    server = uvicorn.Server(config)
    try:
        server.run(sockets=sockets)
    except KeyboardInterrupt:       # Ctrl-C: uvicorn shut down gracefully, then re-raised it (uvicorn.run catches it)
        pass
    return bool(getattr(server, "started", False))


__all__ = ["need_service_extra", "check_host", "check_port_free", "close_all", "serve_config", "smallest_upload",
           "check_body_limit", "above_client_limit", "warn_unreachable_vocabulary", "check_startup",
           "check_database", "run_server", "banner", "FED_DEFAULTS", "secure_sum_settings", "SECURE_SUM_PEOPLE"]
