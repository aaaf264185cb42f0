"""``dptopic serve --report-kind secure-sum``, ``dptopic submit --invitation`` against it, ``dptopic secure-sum
invite`` (the operator's invitations) and ``dptopic experiment secure-sum`` (docs/secure_sum.md)."""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import DPTopicError
from ..reporting.terminal import make_console
from ._common import (
    PUBLIC_VOCABULARY_DECIDES,
    load_corpus,
    read_vocabulary,
)
from ._flags import flag_errors
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
    from ..service import startup  # deferred: loads numpy
    from ..service.config import read_token_file  # loaded when the command runs, off the start-up path

    _refuse_other_flags(a, SERVE_READS, "--report-kind secure-sum")
    startup.need_service_extra()
    startup.check_host(a.host, a.allow_remote)
    if a.directory is None:
        raise DPTopicError("--report-kind secure-sum needs --directory FILE: the operator's signed list of invited"
                           " contributors ('dptopic secure-sum invite' writes it); without one anyone could join.")
    from ..protocol.secure_sum.cohort_enrollment import (
        is_cohort_directory,  # loaded when the command runs, off start-up
    )
    from ..protocol.secure_sum.enrollment import read_directory  # (as above)

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
    from ..service.http import server_options  # loaded when the command runs, off the start-up path
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
    from ..service import startup  # deferred: loads numpy
    from ..service.http import server_options  # loaded when the command runs, off the start-up path
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
    from ..protocol.secure_sum.cohort_enrollment import (  # when the command runs
        is_cohort_directory,
        read_cohort_directory,
    )
    from ..service import startup  # deferred: loads numpy
    from ..service.config import read_token_file  # loaded when the command runs, off the start-up path

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
    from ..service.http import server_options  # loaded when the command runs, off the start-up path
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


SUBMIT_READS = frozenset({"server", "corpus", "format", "text_field", "timeout", "retries", "max_epsilon", "state",
                          "invitation", "lowercase", "stop_words"})


def submit_secure_sum(a, cfg: dict) -> None:
    """``dptopic submit`` against a secure-sum server: every document of ``--corpus`` is this person's. ``cfg``: the
    server's ``/v1/config``, whose plan and mode are checked against the invitation's, its epsilon against
    ``--max-epsilon``, and whose vocabulary reads the documents before anything is sent (then, in the mode the
    invitation names, the committee mode's 3 requests or a single round's 8 at most)."""
    from ..contributor.client import ServiceClient  # loaded when the command runs, off the start-up path
    from ..contributor.secure_sum.client import person_bow, state_path, take_part  # (as above)
    from ..contributor.secure_sum.default import check_config  # (as above)
    from ..corpus import Vocabulary  # deferred: loads numpy
    from ..protocol.codec import DEFAULT_MAX_EPSILON  # (as above)
    from ..protocol.secure_sum.enrollment import read_invitation  # (as above)

    if a.invitation is None:
        raise DPTopicError(f"the server at {a.server} runs a secure sum, which takes invited contributors only: give"
                           " --invitation FILE (from the round's operator).")
    if getattr(a, "contributor", None) is not None:
        raise DPTopicError("--contributor is not read by a secure sum: your id is your invitation's; drop it.")
    invitation = read_invitation(a.invitation)
    limit = DEFAULT_MAX_EPSILON if a.max_epsilon is None else a.max_epsilon     # as for every other kind

    def bow(config):
        eps = check_config(config, invitation)["plan"].epsilon      # before the corpus: its plan, mode, epsilon
        if eps > limit * (1 + 1e-12):
            raise DPTopicError(f"the server asks for epsilon {eps:g} per person, above your --max-epsilon {limit:g}"
                               f"{' (the default)' if a.max_epsilon is None else ''}: nothing computed or sent.")
        corpus = load_corpus(a.corpus, a.format, None, a.text_field, None,
                             vocabulary=Vocabulary(config["vocabulary"]), stop_words=PUBLIC_VOCABULARY_DECIDES,
                             vocab_settable=False, drop_empty=False)
        return person_bow(corpus)

    mine = bow(cfg)     # the plan and mode its invitation pins, --max-epsilon, the documents: before anything is sent
    state = state_path(a.state, invitation)
    client = ServiceClient(a.server, timeout=a.timeout, retries=a.retries)
    if invitation["committee"]:     # the mode the invitation names, the server's checked to be it (docs/secure_sum.md)
        from ..contributor.secure_sum.client import take_part_committee  # loaded when it runs

        def bow_of(config):     # the configuration the keys were answered with: the one looked at, or checked anew
            return mine if config == cfg else bow(config)
        s = take_part_committee(a.server, bow_of, invitation, state, client=client)
    else:
        s = take_part(a.server, mine, invitation, state=state, max_epsilon=limit, client=client)
    for line in secure_sum_lines(s):
        make_console().print(line, markup=False)


def refuse_no_state(a) -> None:
    """``submit --state none`` with an invitation is refused before anything is sent: the state file is what lets a
    run stopped after registering its keys finish (one key set per invitation), so without it such a run would spend
    the invitation for good."""
    if a.state is not None and a.state.strip().lower() == "none":
        raise DPTopicError("--state none keeps no record of the keys a secure-sum run registers: a run stopped after"
                           " registering (Ctrl-C, a lost connection) could never finish, and your invitation (one key"
                           " set each) would be spent; drop --state none (the state file is readable by you only, and"
                           " the round's secrets are wiped from it when the round ends) or give --state FILE.")


def maybe_submit_secure_sum(a) -> bool:
    """``dptopic submit``: True when the server runs a secure sum (and this took part in it). Its first request is
    the configuration, whatever the round: the server's epsilon is checked against ``--max-epsilon`` and the
    documents read before anything is sent (a committee round then takes 4 requests, a single round 9 at most)."""
    from ..contributor.client import ServiceClient  # deferred: loads numpy
    from ..protocol.secure_sum.enrollment import read_invitation  # (as above)

    invited = getattr(a, "invitation", None) is not None
    if invited:
        read_invitation(a.invitation)       # a file that is no invitation: one line naming it, before any request
        refuse_no_state(a)
    # one look at the configuration, also with an invitation to a committee round (whose keys would otherwise be the
    # first request): the epsilon is checked against --max-epsilon and the documents read before any key is sent.
    # With an invitation it is retried as every request of the round is; without one, a server that does not answer
    # is the usual path's to report (its own first request, with its retries)
    try:
        cfg = ServiceClient(a.server, timeout=a.timeout, retries=a.retries if invited else 0).get_json("/v1/config")
    except DPTopicError:
        if invited:
            raise
        return False
    if not isinstance(cfg, dict) or cfg.get("report_kind") != "secure-sum":
        if getattr(a, "invitation", None) is not None:
            raise DPTopicError(f"--invitation is for a secure-sum server, and the server at {a.server} runs none:"
                               " drop it.")
        return False
    if "cohorts" in cfg:
        submit_cohorts(a, cfg)
    else:
        submit_secure_sum(a, cfg)
    return True


def submit_cohorts(a, cfg: dict) -> None:
    """``dptopic submit`` against a round in cohorts: every document of ``--corpus`` is this person's; a delegate
    also plays the bridge (docs/secure_sum_cohorts.md). ``cfg``: the server's ``/v1/config``, whose
    epsilon is checked against ``--max-epsilon`` and whose vocabulary reads the documents before anything is sent
    (committee cohorts too)."""
    from ..contributor.secure_sum.client import person_bow, state_path  # (as above)
    from ..contributor.secure_sum.cohort_client import (
        take_part_in_cohorts,  # loaded when the command runs, off start-up
    )
    from ..corpus import Vocabulary  # deferred: loads numpy
    from ..protocol.codec import DEFAULT_MAX_EPSILON  # (as above)
    from ..protocol.secure_sum.cohort_enrollment import read_cohort_invitation  # (as above)

    if a.invitation is None:
        raise DPTopicError(f"the server at {a.server} runs a secure sum in cohorts, which takes invited contributors"
                           " only: give --invitation FILE (from the round's operator).")
    if getattr(a, "contributor", None) is not None:
        raise DPTopicError("--contributor is not read by a secure sum: your id is your invitation's; drop it.")
    invitation = read_cohort_invitation(a.invitation)
    if invitation["cohorts"] is None:
        raise DPTopicError(f"the server at {a.server} runs a round in cohorts, and --invitation {a.invitation} is to a"
                           " single round: give your invitation to this round (from its operator).")
    limit = DEFAULT_MAX_EPSILON if a.max_epsilon is None else a.max_epsilon     # as for every other kind
    state = state_path(a.state, invitation)
    cfg = _checked_cohort_config(a, cfg, limit)
    corpus = load_corpus(a.corpus, a.format, None, a.text_field, None, vocabulary=Vocabulary(cfg["vocabulary"]),
                         stop_words=PUBLIC_VOCABULARY_DECIDES, vocab_settable=False, drop_empty=False)
    _print_cohorts(take_part_in_cohorts(a.server, person_bow(corpus), invitation, state=state, max_epsilon=limit,
                                        client_timeout=a.timeout, retries=a.retries))


def _checked_cohort_config(a, cfg: dict, limit: float) -> dict:
    """The server's configuration, its epsilon within ``limit`` and its vocabulary stated (one line otherwise)."""
    eps = cfg.get("epsilon")
    if not isinstance(eps, (int, float)) or isinstance(eps, bool):
        raise DPTopicError(f"the server at {a.server} states no epsilon: is it a dptopic server of this version?")
    if eps > limit * (1 + 1e-12):
        raise DPTopicError(f"the server asks for epsilon {eps:g} per person, above your --max-epsilon {limit:g}"
                           f"{' (the default)' if a.max_epsilon is None else ''}: nothing computed or sent.")
    words = cfg.get("vocabulary")
    if not (isinstance(words, list) and all(isinstance(w, str) for w in words)):
        raise DPTopicError(f"the server at {a.server} states no vocabulary: is it a dptopic server of this version?")
    return cfg


def _print_cohorts(s: dict) -> None:
    """What submit prints of a round in cohorts (its summary, then its cohort and a delegate's bridge)."""
    console = make_console()
    for line in secure_sum_lines(s):
        console.print(line, markup=False)
    bridge = s.get("bridge")
    console.print(f"cohort {s['cohort']} of {s['cohorts']}"
                  + ("; a delegate of its cohort: also took part in the bridge (its pads"
                     + (f", sent this run: {', '.join(bridge['steps'])})" if bridge and bridge.get("steps") else ")")
                     if bridge is not None else "") + ".", markup=False)


def cmd_invite(a) -> None:
    """``dptopic secure-sum invite``."""
    from ..protocol.secure_sum.cohort_enrollment import (
        make_cohort_invitations,  # loaded when the command runs, off start-up
    )
    from ..protocol.secure_sum.enrollment import make_invitations  # (as above)

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


def secure_sum_lines(s: dict) -> list[str]:
    """What :func:`~dptopic.contributor.secure_sum.client.take_part`'s summary ``s`` tells its contributor (the line
    ``dptopic submit`` prints against a secure-sum server)."""
    notes = []
    if s.get("no_vocabulary_word"):
        notes.append("note: your documents hold none of the round's words, so your statistic is all zeros; you took"
                     " part with your share of the noise only.")
    if s.get("undecryptable_shares"):
        notes.append(f"note: the shares of {s['undecryptable_shares']} neighbour(s) did not decrypt for you and were"
                     " left out (each such neighbour's seeds then lack your share).")
    if "left_out" in s:
        return [f"contributor {s['contributor']}: left out of the round at {s['left_out']} (the step closed before this"
                " run took part); nothing of yours is in the sum.", *notes]
    if s.get("finished"):
        return [f"contributor {s['contributor']}: nothing new sent, the round is over for you ({s['finished']}); its"
                f" secrets were wiped from {s['state']}.", *notes]
    steps = f"sent this run: {', '.join(s['steps'])}" if s["steps"] else "nothing new sent: an earlier run sent it all"
    return [f"contributor {s['contributor']}: took part in the secure sum ({steps}); epsilon {s['epsilon']:g} per person"
            f" (delta {s['delta']:g}) for the whole round, with at most {s['collusion']} contributors colluding with"
            f" the server; {s['neighbours']} neighbours, threshold {s['threshold']}."
            + (f" What was sent is kept in {s['state']}, the round's secrets wiped from it." if s.get("state") else ""),
            *notes]
