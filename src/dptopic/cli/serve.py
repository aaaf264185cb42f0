"""``serve`` (the collection server), ``submit`` and ``fed-client`` (its clients). See docs/service.md."""
from __future__ import annotations

import errno
import math
import re
import warnings

from ..errors import DPTopicError
from ._common import (FORMATS, PUBLIC_VOCABULARY_DECIDES, _int_arg, load_corpus, make_console, positive_float, positive_int,
                      read_vocabulary, unit_interval)
from ._flags import flag_errors
from .results import MAX_RETRIES, MAX_TIMEOUT, _retries_arg, _timeout_arg


def _port(text: str) -> int:
    import argparse

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"a TCP port lies in 1-65535, got {text}")
    return v


def check_port_free(host: str, port: int, keep: bool = False) -> list:
    """Refuse, in one line, a ``--port`` that ``--host`` cannot listen on (another server holds it, or it needs
    privileges): checked before the database is created or changed, so that a failed start leaves nothing behind.

    Binds each address ``host`` resolves to as uvicorn's event loop would (``SO_REUSEADDR``, IPv6 sockets IPv6-only; an
    address family this machine lacks is skipped). ``keep``: the sockets listen at once and are returned for the
    server to serve on, so that no other program can take the port between this check and the start (a client that
    connects meanwhile waits in the queue); otherwise they are let go at once (and ``[]`` is returned)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise DPTopicError(f"--host {host} does not resolve ({e.strerror}): give an IP address or a host name this"
                           " machine knows (127.0.0.1 by default).") from None
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
                    raise DPTopicError(f"port {port} on {host} is in use (another program listens there): choose another"
                                       " --port, or stop the program that holds it.") from None
                if e.errno in (errno.EACCES, errno.EPERM):
                    raise DPTopicError(f"port {port} on {host} needs privileges to listen on (ports below 1024 do):"
                                       " choose another --port, 1024 or above.") from None
                raise DPTopicError(f"cannot listen on port {port} on {host} ({(e.strerror or str(e)).lower()}): choose"
                                   " another --port or --host.") from None
    except BaseException:
        close_all(bound)
        raise
    if not keep:
        close_all(bound)
        return []
    if not bound:
        raise DPTopicError(f"no address of --host {host} can be listened on here: give an IP address of this machine"
                           " (127.0.0.1 by default).")
    try:    # listening holds the port (a bound socket alone lets another SO_REUSEADDR socket bind it); clients queue
        for sock in bound:
            sock.listen(2048)
    except OSError as e:
        close_all(bound)
        raise DPTopicError(f"cannot listen on port {port} on {host} ({(e.strerror or str(e)).lower()}): choose another"
                           " --port or --host.") from None
    return bound


def close_all(sockets) -> None:
    for sock in sockets:
        sock.close()


def _need_service_extra():
    try:
        import sqlalchemy  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise DPTopicError(f"the service needs the 'service' extra ({e.name} is missing): pip install 'dptopic[service]'.") from None


FED_DEFAULTS = {"topics": 20, "failure_rate": 0.1, "pad_length": 512, "sample_ratio": 1.0, "min_updates": 2,
                "report_words": None}


# serve's flags that take effect in some modes only: (dest, default, whether it has no effect, why, what to do)
_IDLE_FLAGS = (
    ("format", "auto", lambda a: a.prior is None, "it is the format of --prior, and none is given",
     "drop it, or add --prior FILE"),
    ("text_field", "text", lambda a: a.prior is None, "it names the text of --prior, and none is given",
     "drop it, or add --prior FILE"),
    ("prior_iterations", 200, lambda a: a.prior is None or a.report_kind == "document",
     "it sets the Gibbs sweeps on --prior, and none is given", "drop it, or add --prior FILE"),
    ("iterations", 50, lambda a: a.report_kind == "document",
     "--report-kind document trains LocalDocumentLDA, which takes no Gibbs sweeps", "drop it"),
    ("lam", 0.5, lambda a: a.report_kind == "document", "it is OLP-LDA's, and --report-kind document trains"
     " LocalDocumentLDA", "drop it"),
    ("omega", 0.4, lambda a: a.report_kind == "document", "it is OLP-LDA's, and --report-kind document trains"
     " LocalDocumentLDA", "drop it"),
    ("delta", 1e-5, lambda a: a.report_kind == "document", "document-level reports are pure eps_doc-DP, with no"
     " delta", "drop it"),
    ("fed_failure_rate", None, lambda a: True, "the server's FedLDA rounds use the 'none' rule (each entry randomized"
     " by subset selection), which excludes no rare words", "drop it"),
    ("database_timeout", 15.0, lambda a: not str(a.database).startswith("postgresql"),
     "it limits PostgreSQL's statements, and --database is not PostgreSQL (SQLite waits for its lock up to 30 s)",
     "drop it"),
    ("allow_remote", False, lambda a: a.host in ("127.0.0.1", "::1", "localhost"),
     "--host listens on this machine only", "drop it"),
)


def refuse_idle_flags(a) -> None:
    """Refuse, in one line, a flag given that has no effect with the others (``--format`` without ``--prior``), as
    the ``--fed-*`` flags without ``--fed-epsilon-per-entry`` are: a user who gave it meant something that will not
    happen."""
    given = getattr(a, "_given", None)      # the flags written on the command line (cli.main's parser)
    for dest, default, idle, why, fix in _IDLE_FLAGS:
        written = dest in given if given is not None else getattr(a, dest, default) != default
        if written and idle(a):
            flag = "--" + dest.replace("_", "-")
            raise DPTopicError(f"{flag} has no effect here: {why}; {fix}.")


def build_config(a):
    from ..accounting.local import check_reporting_f, f_from_epsilon
    from ..service import ServiceConfig
    from ..service.config import read_token_file

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
                            stop_words=PUBLIC_VOCABULARY_DECIDES, vocab_flag=None)
        if prior.vocabulary != vocab:
            prior = prior.restrict(vocab)
    token = read_token_file(a.token_file) if a.token_file else None
    fed = {k: getattr(a, f"fed_{k}") for k in FED_DEFAULTS}
    if a.fed_user_budget is not None:
        if a.fed_epsilon is not None or a.fed_pad_length is not None:
            raise DPTopicError("--fed-user-budget chooses the epsilon per entry and the entries itself: drop"
                               " --fed-epsilon-per-entry and --fed-pad-length.")
        from ..models import FedLDA

        split = FedLDA.from_user_budget(a.fed_user_budget, min(len(vocab.words), a.fed_report_words or len(vocab.words)),
                                        sample_ratio=FED_DEFAULTS["sample_ratio"] if a.fed_sample_ratio is None
                                        else a.fed_sample_ratio)
        a.fed_epsilon, fed["pad_length"] = split._entry_epsilon(), split.pad_length   # the service's is per entry
    if a.fed_epsilon is None and any(v is not None for v in fed.values()):
        given = next(k for k, v in fed.items() if v is not None)
        raise DPTopicError(f"--fed-{given.replace('_', '-')} has no effect without FedLDA: add --fed-epsilon-per-entry"
                           " EPS_ENTRY (or --fed-user-budget EPS_USER) to run FedLDA rounds, or drop it.")
    fed = {k: FED_DEFAULTS[k] if v is None else v for k, v in fed.items()}
    if a.report_kind == "document":
        if a.epsilon_word is not None:
            raise DPTopicError("--report-kind document takes --epsilon-doc (per document), not --epsilon-word.")
        f, kind = None, {"report_kind": "document", "epsilon_doc": 8.0 if a.epsilon_doc is None else a.epsilon_doc}
    else:
        if a.epsilon_word is None:
            raise DPTopicError("--epsilon-word is required for word-level reports (or --report-kind document with"
                               " --epsilon-doc).")
        if a.epsilon_doc is not None:
            raise DPTopicError("--epsilon-doc is for --report-kind document; word-level reports take --epsilon-word.")
        f, kind = check_reporting_f(f_from_epsilon(a.epsilon_word)), {}
    return ServiceConfig(vocab, f, database=a.database, prior=prior, **kind,
                         n_topics=a.topics, batch_size=a.batch_size, n_iter=a.iterations, lam=a.lam, omega=a.omega,
                         prior_iter=a.prior_iterations, delta=a.delta, train_interval=a.train_interval,
                         max_body_bytes=a.max_body_bytes, body_timeout=a.body_timeout,
                         database_timeout=a.database_timeout,
                         max_reports_per_request=a.max_reports_per_request,
                         admin_token=token, fed_epsilon_per_entry=a.fed_epsilon, fed_user_epsilon=a.fed_user_budget,
                         **{f"fed_{k}": v for k, v in fed.items()})


# ServiceConfig's parameters (and FedLDA's, checked by federated.client.check_config) as serve's flags (cli._flags)
SERVE_FLAGS = {"epsilon_word": "--epsilon-word", "epsilon_doc": "--epsilon-doc", "database": "--database",
               "n_topics": "--topics", "batch_size": "--batch-size", "n_iter": "--iterations", "lam": "--lam",
               "omega": "--omega", "prior_iter": "--prior-iterations", "delta": "--delta",
               "train_interval": "--train-interval", "max_body_bytes": "--max-body-bytes", "body_timeout": "--body-timeout",
               "database_timeout": "--database-timeout",
               "max_reports_per_request": "--max-reports-per-request", "admin_token": "--token-file",
               "fed_epsilon_per_entry": "--fed-epsilon-per-entry", "fed_epsilon": "--fed-epsilon-per-entry",
               "fed_topics": "--fed-topics",
               "fed_failure_rate": "--fed-failure-rate",
               "fed_pad_length": "--fed-pad-length", "fed_sample_ratio": "--fed-sample-ratio",
               "fed_min_updates": "--fed-min-updates", "fed_report_words": "--fed-report-words",
               "user_epsilon": "--fed-user-budget", "fed_user_epsilon": "--fed-user-budget",
               # FedLDA's own names (RRPConfig, FedLDA.from_user_budget)
               "epsilon": "--fed-epsilon-per-entry", "epsilon_per_entry": "--fed-epsilon-per-entry",
               "pad_length": "--fed-pad-length",
               "sample_ratio": "--fed-sample-ratio",
               "report_words": "--fed-report-words"}


def serve_flag_names(a) -> dict:
    """The names for :func:`~dptopic.cli._flags.flag_errors` (``--fed-user-budget`` chooses the epsilon per entry and
    the entries itself: FedLDA's per-user total is it)."""
    if a.fed_user_budget is not None:
        return {**SERVE_FLAGS, "epsilon": "--fed-user-budget", "vocabulary": "--vocabulary"}
    return {**SERVE_FLAGS, "vocabulary": "--vocabulary"}


def cmd_serve(a):
    from .secure_sum import refuse_secure_flags, serve_secure_sum

    if a.report_kind == "secure-sum":       # docs/secure_sum.md
        return serve_secure_sum(a)
    refuse_secure_flags(a)
    with flag_errors(serve_flag_names(a)):
        _serve(a)


def _serve(a):
    _need_service_extra()
    import uvicorn

    from ..service import create_app

    import ipaddress

    try:
        ipaddress.ip_address(a.host)
    except ValueError:
        if not re.fullmatch(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*",
                            a.host):
            raise DPTopicError(f"invalid --host {a.host!r}: give an IP address or a host name (127.0.0.1 by default)."
                               ) from None
    if a.host not in ("127.0.0.1", "::1", "localhost") and not a.allow_remote:
        raise DPTopicError(f"--host {a.host} would expose the server beyond this machine: put it behind a TLS reverse"
                           " proxy and pass --allow-remote to confirm.")
    cfg = build_config(a)
    if cfg.fed_epsilon_per_entry is not None:  # K <= V and an epsilon the replacement can honour for this vocabulary
        from ..federated.client import check_config
        from ..service import codec

        check_config(codec.fed_config(cfg), len(cfg.fed_vocabulary))
    check_body_limit(cfg)
    warn_above_client_limit(cfg, a)
    warn_unreachable_vocabulary(cfg.vocabulary)
    # before the database is touched: a failed start creates nothing; the port stays held until the server listens
    sockets = check_port_free(a.host, a.port, keep=True)
    try:
        _serve_on(sockets, a, cfg, create_app, uvicorn)
    finally:
        close_all(sockets)


def smallest_upload(cfg) -> int:
    """Bytes of the smallest upload of reports this server takes: one report of its kind for its vocabulary, with the
    file's header (without the word list, with an upload nonce, as ``dptopic submit`` sends it) and checksum; every
    upload ``dptopic submit`` sends is at least this long (a nonce-less file posted by hand is 50 bytes shorter)."""
    import numpy as np

    from ..service import codec

    fingerprint = codec.vocabulary_fingerprint(cfg.vocabulary)
    V = cfg.vocab_size
    if cfg.report_kind == "document":
        from ..local.document import DocumentReportSet, domain_size, subset_size

        k = subset_size(domain_size(V), float(cfg.epsilon_doc))
        one = DocumentReportSet(np.arange(k, dtype=np.uint32)[None, :], V, fingerprint, float(cfg.epsilon_doc))
    else:
        from ..local import ReportSet

        one = ReportSet(np.zeros((1, (V + 7) // 8), dtype=np.uint8), V, fingerprint, cfg.f)
    return len(codec.encode_reports(one))


def check_body_limit(cfg) -> None:
    """Refuse a ``--max-body-bytes`` below the smallest upload of one report: the server would start and answer every
    upload with 413."""
    need = smallest_upload(cfg)
    if cfg.max_body_bytes < need:
        raise DPTopicError(f"--max-body-bytes {cfg.max_body_bytes} is smaller than the smallest upload this server"
                           f" takes ({need} bytes: one {cfg.report_kind}-level report for a vocabulary of"
                           f" {cfg.vocab_size} words, with its header and checksum): every upload would be refused with"
                           f" 413; give at least {need} (uploads of many reports need more; default 4194304).")
    if cfg.fed_epsilon_per_entry is not None:
        # a participant draws its reports, and spends their epsilon, before it uploads: an update the server would
        # refuse as too large spends for nothing
        from ..service import codec

        words = len(cfg.fed_vocabulary)
        update = codec.fed_largest_update(codec.fed_config(cfg), words)
        if cfg.max_body_bytes < update:
            raise DPTopicError(f"--max-body-bytes {cfg.max_body_bytes} is smaller than a FedLDA update at these settings"
                               f" (up to {update} bytes: {codec.fed_config(cfg).n_entries} entries of reports over"
                               f" {words} words): participants would draw, and spend, then be refused with 413; raise"
                               " --max-body-bytes or lower --fed-pad-length.")


def warn_above_client_limit(cfg, a) -> None:
    """Warn (one line) when the epsilon per report is above what ``dptopic submit`` and ``fed-client`` accept by
    default (``--max-epsilon``, 16): contributors who keep their default refuse to send anything. A warning, not a
    refusal: a contributor may raise the limit."""
    from ..service.client import DEFAULT_MAX_EPSILON as LIMIT

    asked = []
    if cfg.report_kind == "document":
        asked.append(("--epsilon-doc", cfg.epsilon_doc, "dptopic submit"))
    else:
        asked.append(("--epsilon-word", cfg.epsilon_word, "dptopic submit"))
    if cfg.fed_epsilon_per_entry is not None:
        flag = "--fed-epsilon-per-entry" if a.fed_user_budget is None else \
            f"--fed-epsilon-per-entry (chosen by --fed-user-budget {a.fed_user_budget:g})"
        asked.append((flag, cfg.fed_epsilon_per_entry, "dptopic fed-client"))
    for flag, eps, client in asked:
        if eps > LIMIT * (1 + 1e-12):
            warnings.warn(f"{flag} {eps:.4g} is above {LIMIT:g}, the largest epsilon per report that {client} accepts"
                          f" by default (--max-epsilon): contributors who keep that default will refuse to randomize"
                          f" or send anything; they must pass --max-epsilon {eps:.4g} or more to take part.",
                          UserWarning, stacklevel=2)


def warn_unreachable_vocabulary(vocabulary) -> None:
    """Warn (as ``dptopic randomize`` does) about vocabulary words that the contributors' clients never count: their
    tokeniser (``submit``, ``fed-client``, ``randomize``: no stop words, lower case, at least 3 letters) never produces
    a word with a space, upper case or fewer than 3 letters, so every report carries pure noise for it. A warning, not
    a refusal: the list is public and the server still works."""
    from ..corpus.corpus import warn_unreachable_words
    from ..corpus.preprocess import Preprocessor

    warn_unreachable_words(vocabulary.words, Preprocessor(stop_words=PUBLIC_VOCABULARY_DECIDES))


def _serve_on(sockets, a, cfg, create_app, uvicorn) -> None:
    import logging

    from ..service.app import Service
    from ..service.storage import foreign_tables

    foreign = foreign_tables(cfg.database)
    if foreign and not a.allow_foreign_tables:
        raise DPTopicError(f"--database {a.database!r} already holds tables that are not dptopic's ({', '.join(foreign[:5])}"
                           f"{', ...' if len(foreign) > 5 else ''}): give a new database, or pass --allow-foreign-tables"
                           " to add the service's tables beside them.")
    probe = Service(cfg, start_trainer=False)
    probe.preflight()  # bad URL, newer schema, other vocabulary: one line, before serving
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    console = make_console(stderr=True)
    from ..service.status import fmt_epsilon as eps     # an epsilon shown is rounded up

    reports_line = (f"document-level reports, eps_doc={eps(cfg.epsilon_doc, 6)}, LocalDocumentLDA K={cfg.n_topics}"
                    if cfg.report_kind == "document" else
                    f"eps_word={eps(cfg.epsilon_word)} (f={cfg.f:.6g}), OLP-LDA K={cfg.n_topics}")
    fed_eps = cfg.fed_epsilon_per_entry
    console.print(f"dptopic serve: V={cfg.vocab_size}, {reports_line}"
                  f" batch={cfg.batch_size}, prior={'none' if cfg.prior is None else f'{cfg.prior.n_docs} documents'},"
                  f" FedLDA {'off' if fed_eps is None else f'eps={eps(fed_eps, 6)} over {len(cfg.fed_vocabulary)} words'},"
                  f" admin {'on' if cfg.admin_token else 'off'}; http://{a.host}:{a.port}/")
    kept = probe.settings_kept_by_model()
    if kept:    # a restart with other trainer flags: the model already trained keeps its own, said in one line
        held = ", ".join(("a prior corpus" if v else "no prior corpus") if k == "prior" else f"{k}={v:g}"
                         if isinstance(v, float) else f"{k}={v}" for k, v, _ in kept)
        flags = ", ".join(("--prior" if k == "prior" else SERVE_FLAGS.get(k, k)) for k, _, _ in kept)
        console.print(f"[bold yellow]warning[/]: the database's active model keeps {held}: {flags} of this start"
                      " apply to a new model only (POST /v1/admin/rotate starts one), not to the one trained so far.")
    from ..service.http import server_options

    config = uvicorn.Config(create_app(cfg), host=a.host, port=a.port, log_level="warning" if a.quiet else "info",
                            access_log=not a.quiet, timeout_graceful_shutdown=10,
                            **server_options(header_timeout=a.header_timeout))
    server = uvicorn.Server(config)
    try:
        server.run(sockets=sockets)
    except KeyboardInterrupt:       # Ctrl-C: uvicorn shut down gracefully, then re-raised it (uvicorn.run catches it)
        pass
    if not getattr(server, "started", False):
        raise DPTopicError("the server did not start (uvicorn's message above says why): nothing was served.")


def _client_corpus(a):
    # every document stays, even one that tokenisation empties: one report per document, whatever the text
    return load_corpus(a.corpus, a.format, None, a.text_field, None, max_vocab=None, min_df=1, drop_empty=False,
                       stop_words=PUBLIC_VOCABULARY_DECIDES, vocab_flag=None)


def cmd_submit(a):
    from ..service.client import ServiceClient, default_state_folder, submit
    from .secure_sum import maybe_submit_secure_sum

    if maybe_submit_secure_sum(a):      # the server runs a secure sum (docs/secure_sum.md)
        return

    corpus = _client_corpus(a)
    state = default_state_folder() if a.state is None else None if a.state.strip().lower() == "none" else a.state
    client = ServiceClient(a.server, timeout=a.timeout, retries=a.retries)
    s = submit(a.server, corpus, contributor=a.contributor, client=client, state=state, **_limit(a))
    from .local import plural, print_empty_note, print_no_pair_note

    n = s["n_documents"]
    if s["report_kind"] == "document":  # the note 'dptopic randomize --unit document' prints
        print_no_pair_note(s["documents_with_fewer_than_two_vocabulary_words"], n)
    else:
        print_empty_note(s["documents_without_vocabulary_words"], n)
    console = make_console()
    kept = ("randomized reports kept in " + s["state"] + " (readable by you only): a run stopped part-way is finished by"
            " running it again, without randomizing again" if s["state"] else
            "reports not kept (--state none): a later run on these documents randomizes them again, at a new cost")
    held = " (the one the server holds for these reports)" if s.get("contributor_from_server") else ""
    console.print(f"contributor pseudonym {s['contributor']}{held} (pass --contributor {s['contributor']} to be"
                  f" tallied as one contributor on another machine); {kept}.")
    if s["already_acknowledged"]:
        console.print(f"{plural(s['already_acknowledged'], 'report')} of these documents had been acknowledged by an"
                      " earlier run: not randomized or sent again" + ("." if s["reports"] else
                                                                       "; nothing was sent, nothing more spent."))
    if s.get("replayed_reports"):
        console.print(f"{plural(s['replayed_reports'], 'report')} had already been stored by {a.server} (an earlier"
                      " run, perhaps under another address of this server): replayed, nothing new stored, nothing"
                      " more spent.")
    stored = s.get("stored_reports", s["reports"])
    if stored or not (s["already_acknowledged"] or s.get("replayed_reports")):
        console.print(f"{plural(stored, 'randomized report')} uploaded to {a.server} in"
                      f" {plural(s['uploads'] - s['replayed_acks'], 'upload')}.")
    from ..service.status import fmt_epsilon as eps     # rounded up: never below what was spent

    these = "this document" if n == 1 else f"these {plural(n, 'document')}"
    console.print(f"Privacy of {these} (V={s['vocab_size']}; "
                  + ("" if s["epsilon_word"] is None else f"eps_word={eps(s['epsilon_word'])}, ")
                  + f"eps_doc={eps(s['epsilon_doc'])} per document; together"
                  + ("" if s["epsilon_word"] is None else
                     f" eps_word={eps(n * s['epsilon_word'])} for one word's presence in each and")
                  + f" eps={eps(n * s['epsilon_doc'])} for the documents, by basic composition, "
                  + ("spent once however often the kept reports are sent" if s["state"] else
                     "spent again by every run on these documents, since the reports were not kept (--state none)")
                  + "). Raw text never left this machine.")


def _limit(a) -> dict:
    """``max_epsilon`` for the library call: the contributor's --max-epsilon, else the library's default."""
    return {} if a.max_epsilon is None else {"max_epsilon": a.max_epsilon}


def cmd_fed_client(a):
    from ..service.client import ServiceClient, default_state_folder, fed_participate

    console = make_console()
    corpus = _client_corpus(a)
    if a.state is None:
        state = default_state_folder()
    else:
        state = None if a.state.strip().lower() == "none" else a.state
    client = ServiceClient(a.server, timeout=a.timeout, retries=a.retries)
    s = fed_participate(a.server, corpus, rounds=a.rounds, poll=a.poll, timeout=a.round_timeout,
                        client_id=a.client_id, client=client, state=state, max_user_epsilon=a.max_user_epsilon,
                        **_limit(a),
                        on_round=lambda r: console.print(f"round {r['round']}: update of {r['bytes_sent']} bytes sent"))
    if s["state"] is None:
        kept = "reports drawn anew for this run (--state none): a later run that draws again spends its epsilon again"
    elif s["reused_reports"]:
        kept = (f"reused the reports drawn before and kept in {s['state']}: this run spent nothing more, and it did not"
                " read the documents given to it (the kept reports stand for the documents of the run that drew them;"
                " new documents need new reports: --state none, or another --state, at a new cost)")
    else:
        kept = (f"reports drawn once and kept in {s['state']} (readable by you only): later runs reuse them and spend"
                " nothing more")
    from ..service.status import fmt_epsilon as eps     # rounded up: never below what was spent

    console.print(f"took part in {len(s['rounds'])} round(s) as {s['client']}; epsilon of your reports (this user):"
                  f" {eps(s['epsilon_basic'])} basic, {eps(s['epsilon_pld'])} PLD at delta={s['delta']:g}; {kept}.")
    console.print(f"[yellow]{s['note']}[/]")


def _client_args(p):
    p.add_argument("--server", required=True, help="base URL of the server, e.g. http://127.0.0.1:8000")
    p.add_argument("--corpus", required=True, help="your documents (one per line for .txt, or any loader format)")
    p.add_argument("--format", default="auto", choices=FORMATS)
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    p.add_argument("--timeout", type=_timeout_arg, default=30.0,
                   help=f"seconds per HTTP attempt, in (0, {MAX_TIMEOUT:g}] (default 30)")
    p.add_argument("--retries", type=_retries_arg, default=8,
                   help=f"retries per request (exponential backoff), 0 to {MAX_RETRIES} (default 8)")
    p.add_argument("--max-epsilon", type=positive_float, default=None, metavar="EPS",
                   help="the largest epsilon per report you accept (per word for word-level reports, per document for"
                        " document-level ones, per entry for FedLDA; default 16): a server asking for more is refused"
                        " before anything is randomized")


def _seconds_arg(text: str) -> float:
    """``serve --header-timeout`` and ``--database-timeout``: seconds in (0, 3600]."""
    import argparse

    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (0 < v <= 3600):
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: give seconds in (0, 3600], e.g. 30")
    return v


def register(sub) -> None:
    s = sub.add_parser("serve", help="run the collection server (local-DP reports, OLP-LDA, FedLDA rounds)",
                       description="Collect randomized reports over HTTP, store them durably (SQLite or PostgreSQL),"
                                   " train OLP-LDA on them exactly once, and run FedLDA rounds. See docs/service.md.")
    s.add_argument("--database", default="sqlite:///dptopic-service.db",
                   help="SQLAlchemy URL: sqlite:///PATH (default) or postgresql+psycopg://USER@HOST/DB")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this machine only; another needs --allow-remote)")
    s.add_argument("--port", type=_port, default=8000, help="TCP port, 1-65535 (default 8000)")
    s.add_argument("--allow-foreign-tables", action="store_true",
                   help="let --database be a database that already holds other tables (the service adds its own)")
    s.add_argument("--allow-remote", action="store_true", help="allow a --host other than loopback")
    s.add_argument("--vocabulary", required=True, help="the public vocabulary: one word per line, or wordfreq:LANG[:SIZE] (a general word list of that"
                        " language; pip install 'dptopic[wordlist]')")
    s.add_argument("--report-kind", choices=("word", "document", "secure-sum"), default="word",
                   help="the reports the server takes: word (default; per-word LP-LDA reports, OLP-LDA topics) or"
                        " document (one word pair per document, eps_doc per document; docs/local_dp.md)")
    s.add_argument("--epsilon-doc", type=positive_float, default=None,
                   help="--report-kind document: the per-document epsilon the contributors use (default 8)")
    s.add_argument("--epsilon-word", type=positive_float, default=None,
                   help="per-word local epsilon the contributors randomize with (Zhao et al. 2020, Thm 4)")
    s.add_argument("--prior", default=None, help="public prior corpus D_0 for OLP-LDA, disjoint from the contributors")
    s.add_argument("--format", default="auto", choices=FORMATS, help="format of --prior")
    s.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    s.add_argument("--token-file", default=None, help="file holding the admin bearer token (admin endpoints off without)")
    s.add_argument("--topics", type=positive_int, default=20,
                   help="topics K of the model the server trains (OLP-LDA, or LocalDocumentLDA for --report-kind"
                        " document; default 20)")
    s.add_argument("--batch-size", type=positive_int, default=160, help="reports per OLP-LDA mini-batch (default 160)")
    s.add_argument("--iterations", type=positive_int, default=50, help="Gibbs sweeps per mini-batch (default 50)")
    s.add_argument("--prior-iterations", type=positive_int, default=200, help="Gibbs sweeps on the prior corpus (default 200)")
    s.add_argument("--lam", type=float, default=0.5, help="OLP-LDA correlation factor lambda in [0, 1] (default 0.5)")
    s.add_argument("--omega", type=float, default=0.4, help="OLP-LDA prior weight omega in [0, 1] (default 0.4)")
    s.add_argument("--delta", type=unit_interval, default=1e-5, help="delta of the tight epsilon(delta) reports (default 1e-5)")
    s.add_argument("--train-interval", type=float, default=2.0, help="seconds between trainer passes (0: admin only; default 2)")
    s.add_argument("--max-body-bytes", type=positive_int, default=4 * 1024 * 1024,
                   help="largest request body accepted, in bytes; a larger upload is refused with 413 (default"
                        " 4194304, 4 MiB)")
    s.add_argument("--body-timeout", type=positive_float, default=30.0, metavar="SECONDS",
                   help="a request body that goes this long without a byte arriving is refused with 408 (default 30;"
                        " at most 3600)")
    s.add_argument("--header-timeout", type=_seconds_arg, default=30.0, metavar="SECONDS",
                   help="a request's line and headers must arrive within this many seconds of the connection (or of"
                        " the request's first byte): slower ones get 408 and a connection that sends nothing is"
                        " closed (default 30; at most 3600)")
    s.add_argument("--database-timeout", type=_seconds_arg, default=15.0, metavar="SECONDS",
                   help="PostgreSQL: an upload (or any request) whose database work takes longer is refused with 503,"
                        " so a database that stopped answering is not waited on for ever; the trainer's commit gets"
                        " ten times as long, at least 300 s (default 15; at most 3600)")
    s.add_argument("--max-reports-per-request", type=positive_int, default=10_000,
                   help="most reports in one upload; more are refused with 413 (default 10000)")
    s.add_argument("--fed-epsilon-per-entry", dest="fed_epsilon", type=positive_float, default=None,
                   metavar="EPS_ENTRY",
                   help="enable FedLDA rounds with this epsilon per reported entry (one word; Wang et al. 2020, Thm 1),"
                        " a component, not the per-user total: a user spends it once for each of its entries"
                        " (--fed-pad-length x --fed-sample-ratio), as FedLDA(epsilon_per_entry=...); for a per-user"
                        " total give --fed-user-budget instead")
    s.add_argument("--fed-user-budget", type=positive_float, default=None, metavar="EPS_USER",
                   help="enable FedLDA rounds with this per-user total (entries x epsilon per entry) instead of"
                        " --fed-epsilon-per-entry and --fed-pad-length: the split that estimates words best for the"
                        " vocabulary (FedLDA.from_user_budget, docs/fedlda.md)")
    s.add_argument("--fed-epsilon", dest="retired_fed_epsilon", default=None, metavar="EPS",
                   help="refused: the epsilon per entry is now --fed-epsilon-per-entry (a per-user total:"
                        " --fed-user-budget)")
    s.add_argument("--fed-topics", type=positive_int, default=None, help="FedLDA topics (default 20)")
    s.add_argument("--fed-failure-rate", type=unit_interval, default=None,
                   help="refused: the floor/tail rules' excluded rare-word mass (train --algorithm fed"
                        " --exclusion); the server's rounds use the 'none' rule, which excludes nothing")
    s.add_argument("--fed-pad-length", type=positive_int, default=None, help="FedLDA entries per update (default 512)")
    s.add_argument("--fed-sample-ratio", type=float, default=None, help="FedLDA share of entries sent (default 1)")
    s.add_argument("--fed-min-updates", type=int, default=None,
                   help="close a FedLDA round after this many updates (0: only by the admin; default 2)")
    s.add_argument("--fed-report-words", type=_int_arg(2), default=None, metavar="N",
                   help="FedLDA reports range over the vocabulary's first N words (listed most common first; default:"
                        " every word); 'dptopic privacy fed-report-words' gives N for the users you expect")
    s.add_argument("--quiet", action="store_true", help="no access log")
    from .secure_sum import add_serve_flags

    add_serve_flags(s)
    s.set_defaults(func=cmd_serve)

    u = sub.add_parser("submit", help="contributor side: randomize your documents locally and upload the reports",
                       description="Fetch the server's public vocabulary and f, randomize your documents on this"
                                   " machine (coins from the OS CSPRNG) and upload only the randomized reports, with"
                                   " retries that never count twice. Raw text never leaves the process.")
    _client_args(u)
    u.add_argument("--contributor", default=None,
                   help="pseudonym under which the server tallies your epsilon (default: the one kept for this server"
                        " in the --state folder, else a fresh random one, printed)")
    u.add_argument("--state", default=None, metavar="FILE",
                   help="where your randomized reports are kept, with which uploads each server acknowledged, so that"
                        " a run stopped part-way is finished by running it again without randomizing again (a file,"
                        " or a folder; default: $XDG_STATE_HOME/dptopic or ~/.local/state/dptopic); the folder also"
                        " keeps one pseudonym per server, so your runs are tallied as one contributor, and the files"
                        " hold a salted digest of your documents (readable by you only); 'none' keeps nothing and"
                        " takes a fresh pseudonym every run")
    u.set_defaults(func=cmd_submit)

    f = sub.add_parser("fed-client", help="take part in FedLDA rounds with your documents (kept local)",
                       description="Take part in a 'dptopic serve --fed-epsilon-per-entry' server's FedLDA rounds: your"
                                   " documents, topic assignments and proportions stay on this machine; each round"
                                   " sends one update of randomized reports (docs/fedlda.md), and the epsilon spent is"
                                   " printed, also when the server refuses an update.")
    _client_args(f)
    f.add_argument("--rounds", type=positive_int, default=1, help="rounds to take part in")
    f.add_argument("--max-user-epsilon", type=positive_float, default=None, metavar="EPS",
                   help="refuse, before anything is randomized, a server whose rounds would spend more than EPS for"
                        " you in all (epsilon per entry x entries, basic composition): --max-epsilon limits one entry"
                        " only, and the server chooses how many entries an update holds (default: no such limit)")
    f.add_argument("--client-id", default=None,
                   help="pseudonym (default: the one kept with your reports, else a fresh random one; a run naming"
                        " another id than the kept one is refused)")
    f.add_argument("--state", default=None, metavar="FILE",
                   help="where your randomized reports are kept between runs, so that taking part again spends"
                        " nothing more (a file, or a folder; default: $XDG_STATE_HOME/dptopic or"
                        " ~/.local/state/dptopic); 'none' draws new reports every run, which spends the per-user"
                        " epsilon again")
    f.add_argument("--poll", type=_timeout_arg, default=1.0,
                   help=f"seconds between looks for the next round, in (0, {MAX_TIMEOUT:g}]")
    f.add_argument("--round-timeout", type=_timeout_arg, default=600.0,
                   help=f"give up waiting for a round after this many seconds, in (0, {MAX_TIMEOUT:g}]")
    f.set_defaults(func=cmd_fed_client)


__all__ = ["register", "build_config"]
