"""The operator's side of a secure sum: ``dptopic serve --report-kind secure-sum`` and ``dptopic secure-sum invite``
(the invitations); the contributor's, ``dptopic submit --invitation``, is cli/submit.py's (docs/secure_sum.md). The
web stack (the ``service`` extra) is imported once ``need_service_extra`` found it."""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import DPTopicError
from ..protocol.secure_sum.cohort_enrollment import (
    is_cohort_directory,
    make_cohort_invitations,
    read_cohort_directory,
)
from ..protocol.secure_sum.enrollment import make_invitations, read_directory
from ..reporting.terminal import make_console
from ..service import startup
from ..service.config import read_token_file
from ..service.http import server_options
from ._flags import flag_errors
from ._run_common import read_vocabulary
from .budget import read_ids, served_ledger

#: the plan's parameters as the flags that set them
PLAN_FLAGS = {"epsilon": "--epsilon", "delta": "--delta", "n": "--min-contributors", "dropouts": "--dropout-tolerance",
              "collusion": "--collusion", "vocab_size": "--vocabulary", "count": "--count", "out": "--out",
              "round_id": "--round-id", "invitations": "--invitations", "cohort_size": "--cohort-size",
              "max_words": "--max-words", "committee": "--secure-committee", "directory": "--directory",
              "registration_s": "--registration-deadline"}

#: the options of ``dptopic serve`` a secure-sum round reads; any other given is refused in one line
SERVE_READS = frozenset({"report_kind", "unit", "epsilon", "delta", "min_contributors", "dropout_tolerance",
                         "collusion", "directory", "vocabulary", "topics", "database", "host", "port", "allow_remote",
                         "allow_foreign_tables", "token_file", "max_body_bytes", "quiet", "header_timeout",
                         "cohort_size", "max_words", "ledger", "dataset", "secure_committee",
                         "registration_deadline"})


def refuse_secure_flags(a) -> None:
    """Other report kinds: the secure sum's flags are refused in one line."""
    for flag in ("epsilon", "min_contributors", "dropout_tolerance", "unit", "collusion", "directory", "cohort_size",
                 "max_words", "secure_committee", "registration_deadline"):
        if getattr(a, flag, None) is not None:
            raise DPTopicError(f"--{flag.replace('_', '-')} is for --report-kind secure-sum: drop it, or add"
                               " --report-kind secure-sum.")


def _refuse_other_flags(a, reads, what: str) -> None:
    given = getattr(a, "_given", None) or ()
    other = sorted(d for d in given if d not in reads and not d.startswith("_") and d not in ("command", "func"))
    if other:
        flags = getattr(a, "_flag_names", None) or {}
        names = ", ".join(flags.get(d, "--" + d.replace("_", "-")) for d in other[:4]) \
            + (", ..." if len(other) > 4 else "")
        raise DPTopicError(f"{names} {'is' if len(other) == 1 else 'are'} not read by {what}: drop"
                           f" {'it' if len(other) == 1 else 'them'} (see docs/secure_sum.md).")


def serve_secure_sum(a, setting_names=None) -> None:
    """``dptopic serve --report-kind secure-sum``; ``setting_names``: the flags of ``serve`` by setting, in which the
    server's answers and failure reasons name its settings."""
    _refuse_other_flags(a, SERVE_READS, "--report-kind secure-sum")
    startup.need_service_extra()
    startup.check_host(a.host, a.allow_remote)
    if a.directory is None:
        raise DPTopicError("--report-kind secure-sum needs --directory FILE: the operator's signed list of invited"
                           " contributors ('dptopic secure-sum invite' writes it); without one anyone could join.")

    if a.cohort_size is not None or _is_cohort_directory_file(a.directory, is_cohort_directory):
        return _serve_cohorts(a, setting_names)
    directory = read_directory(a.directory)
    vocab = read_vocabulary(a.vocabulary)
    given = getattr(a, "_given", None) or ()
    with flag_errors(PLAN_FLAGS):
        settings = startup.secure_sum_settings(
            vocab, unit=a.unit, epsilon=a.epsilon, delta=a.delta, collusion=a.collusion,
            min_contributors=a.min_contributors if a.min_contributors is not None else len(directory["members"]),
            dropout_tolerance=a.dropout_tolerance, max_words=a.max_words, committee=a.secure_committee,
            max_body_bytes=a.max_body_bytes if "max_body_bytes" in given else None, directory=directory)
    from ..service.secure_sum.config import SecureSumConfig, roster_line  # the service extra
    from ..service.secure_sum.default_app import create_secure_sum_app  # (as above)

    token = read_token_file(a.token_file) if a.token_file else None
    if settings["plan"].committee:
        return _serve_committee(a, settings["plan"], directory, vocab, token, given)
    with flag_errors({**PLAN_FLAGS, **(setting_names or {})}):
        cfg = SecureSumConfig(**settings, directory=directory, n_topics=a.topics, database=a.database,
                              admin_token=token, allow_foreign_tables=a.allow_foreign_tables,
                              registration_s=a.registration_deadline,
                              **served_ledger(a))     # --ledger: the released round on the dataset ledger
    sockets = startup.check_port_free(a.host, a.port, keep=True)
    try:
        app = create_secure_sum_app(cfg, setting_names=setting_names)
        console = make_console(stderr=True)
        console.print(startup.banner(cfg, f"http://{a.host}:{a.port}/"), markup=False)
        console.print(roster_line(cfg.plan, app.state.round.registration_deadline, token is not None), markup=False)
        startup.run_server(app, sockets, a.host, a.port, quiet=a.quiet,
                           **server_options(header_timeout=a.header_timeout))
    finally:
        startup.close_all(sockets)


def _serve_committee(a, plan, directory, vocab, token, given) -> None:
    """``dptopic serve --report-kind secure-sum --secure-committee C``: a committee-mode round, kept in
    ``--database`` (SQLite by default) and resumed after a restart."""
    from ..service.secure_sum.committee_app import create_committee_app  # the service extra, checked by the caller
    from ..service.secure_sum.config import roster_line  # (as above)
    from ..service.storage import safe_url  # (as above)

    if "allow_foreign_tables" in given:
        raise DPTopicError("--allow-foreign-tables is not read with --secure-committee yet; drop it.")
    database = a.database
    ledger = served_ledger(a)       # --ledger: the round charged once, before its first unmasking
    sockets = startup.check_port_free(a.host, a.port, keep=True)
    try:
        with flag_errors({"database": "--database", "registration_s": "--registration-deadline"}):
            app = create_committee_app(plan, directory, vocab, a.topics, admin_token=token, database=database,
                                       registration_s=a.registration_deadline, **ledger)
        console = make_console(stderr=True)
        console.print(
            f"dptopic serve: secure sum with a committee of {plan.committee} (threshold {plan.committee_threshold}),"
            f" V={plan.vocab_size}, K={a.topics}, epsilon={plan.epsilon:g} per person, {plan.n} contributors, up to"
            f" {plan.dropouts} dropping out, in {safe_url(database)}, at http://{a.host}:{a.port}/", markup=False)
        console.print(roster_line(plan, app.state.served.rnd.registration_deadline, token is not None), markup=False)
        startup.run_server(app, sockets, a.host, a.port, quiet=a.quiet,
                           **server_options(header_timeout=a.header_timeout))
    finally:
        startup.close_all(sockets)


def _is_cohort_directory_file(path, is_cohort_directory) -> bool:
    """Whether the directory file at ``path`` is a round in cohorts' (read as JSON; what it is otherwise, the reader
    of a single round's directory says)."""
    try:
        return is_cohort_directory(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return False


def _serve_cohorts(a, setting_names) -> None:
    """``dptopic serve --report-kind secure-sum --cohort-size S``: a round in cohorts (docs/secure_sum.md)."""
    if a.cohort_size is None:
        raise DPTopicError(f"--directory {a.directory} is a round in cohorts' (from 'dptopic secure-sum invite"
                           " --cohort-size S'): give --cohort-size S, the invitations' cohort size.")
    if a.registration_deadline is not None:
        raise DPTopicError("--registration-deadline is not read by a round in cohorts yet (each cohort's roster closes"
                           " once its members have registered, or by the admin in committee cohorts): drop it.")
    if not _is_cohort_directory_file(a.directory, is_cohort_directory):
        raise DPTopicError(f"--cohort-size needs the directory of a round in cohorts, and --directory {a.directory}"
                           " is not one: write the invitations with 'dptopic secure-sum invite --cohort-size S'.")
    directory = read_cohort_directory(a.directory)
    layout = directory["layout"]
    if a.cohort_size != layout["cohort_size"]:
        raise DPTopicError(f"--cohort-size {a.cohort_size} differs from the invitations' cohort size"
                           f" {layout['cohort_size']} (--directory {a.directory}): give --cohort-size"
                           f" {layout['cohort_size']}, or invite again.")
    vocab = read_vocabulary(a.vocabulary)
    given = getattr(a, "_given", None) or ()
    pick = {k: getattr(a, f) if getattr(a, f) is not None else layout[k]
            for k, f in (("count", "min_contributors"), ("dropouts", "dropout_tolerance"), ("collusion", "collusion"))}
    with flag_errors(PLAN_FLAGS):
        settings = startup.secure_sum_settings(
            vocab, unit=a.unit, epsilon=a.epsilon, delta=a.delta, collusion=pick["collusion"],
            min_contributors=pick["count"], dropout_tolerance=pick["dropouts"], cohort_size=a.cohort_size,
            max_words=a.max_words, max_body_bytes=a.max_body_bytes if "max_body_bytes" in given else None,
            committee=a.secure_committee)
    from ..service.secure_sum.cohort_app import CohortSumConfig, cohort_banner, create_cohort_app  # the service extra

    token = read_token_file(a.token_file) if a.token_file else None
    with flag_errors({**PLAN_FLAGS, **(setting_names or {})}):
        cfg = CohortSumConfig(**settings, directory=directory, n_topics=a.topics, database=a.database,
                              admin_token=token, allow_foreign_tables=a.allow_foreign_tables,
                              **served_ledger(a))     # --ledger: the whole round, charged once
    sockets = startup.check_port_free(a.host, a.port, keep=True)
    try:
        app = create_cohort_app(cfg, setting_names=setting_names)
        make_console(stderr=True).print(cohort_banner(cfg, f"http://{a.host}:{a.port}/"), markup=False)
        startup.run_server(app, sockets, a.host, a.port, quiet=a.quiet,
                           **server_options(header_timeout=a.header_timeout))
    finally:
        startup.close_all(sockets)


def cmd_invite(a) -> None:
    """``dptopic secure-sum invite``."""
    if a.count is None and a.ids is None:
        raise DPTopicError("secure-sum invite needs --count N (contributors to invite) or --ids FILE (one per id).")
    ids, ledger = read_ids(a)
    with flag_errors({**PLAN_FLAGS, "dropouts": "--dropout-tolerance", "ids": "--ids", "ledger": "--ledger"}):
        if a.cohort_size is None:
            s = make_invitations(a.key, a.count, a.out, a.round_id, committee=a.committee,
                                 dropouts=a.dropout_tolerance, collusion=a.collusion, ids=ids, ledger=ledger)
        else:
            s = make_cohort_invitations(a.key, a.count, a.out, a.cohort_size, a.dropout_tolerance, a.collusion,
                                        a.round_id, committee=a.committee, ids=ids, ledger=ledger)
    console = make_console()
    if s["key_created"]:
        console.print(f"created the enrollment key {a.key} (readable by you only): keep it off the server.",
                      markup=False)
    console.print(f"round {s['round_id']}: {s['count']} invitations in {a.out} (invitation-*.json: hand each to its"
                  f" contributor only) and the directory {s['directory']} (start the server with --directory"
                  + (f" and --cohort-size {a.cohort_size}{' --secure-committee auto' if a.committee else ''});"
                     f" {s['cohorts']} cohorts, {s['delegates']} delegates each"
                     " (their invitations also to the bridge)." if a.cohort_size is not None
                     else " and --secure-committee auto)." if a.committee else ").") + ("" if a.cohort_size else
                  f" They pin up to {s['layout']['dropouts']} dropping out and {s['layout']['collusion']} colluding.")
                  + (f" Each names its person: serve with --ledger {ledger}." if ids else ""), markup=False)


