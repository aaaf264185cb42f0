"""``submit`` and ``fed-client``: the contributor's side of a collection server (docs/service_contributors.md), and of
a secure-sum round (``submit --invitation``, docs/secure_sum.md). Nothing of the server's side is imported here."""
from __future__ import annotations

from ..accounting.verify import fmt_epsilon
from ..contributor.client import ServiceClient, default_state_folder, fed_participate, submit
from ..contributor.secure_sum.client import person_bow, state_path, take_part, take_part_committee
from ..contributor.secure_sum.cohort_client import take_part_in_cohorts
from ..contributor.secure_sum.default import check_config
from ..corpus import Vocabulary
from ..datasets import PUBLIC_VOCABULARY_DECIDES
from ..errors import DPTopicError
from ..protocol.codec import DEFAULT_MAX_EPSILON
from ..protocol.secure_sum.cohort_enrollment import read_cohort_invitation
from ..protocol.secure_sum.enrollment import read_invitation
from ..reporting.terminal import make_console, plural, print_empty_note, print_no_pair_note
from ._flags import with_flag_names
from ._run_common import load_corpus


def _client_corpus(a):
    # every document stays, even one that tokenisation empties: one report per document, whatever the text
    return load_corpus(a.corpus, a.format, None, a.text_field, None, max_vocab=None, min_df=1, drop_empty=False,
                       stop_words=PUBLIC_VOCABULARY_DECIDES, vocab_settable=False)


# the contributors' parameters (contributor.client's submit and fed_participate) as submit's and fed-client's flags
CLIENT_FLAGS = {"state": "--state", "contributor": "--contributor", "client_id": "--client-id",
                "max_epsilon": "--max-epsilon", "max_user_epsilon": "--max-user-epsilon"}


@with_flag_names(CLIENT_FLAGS)
def cmd_submit(a):

    if maybe_submit_secure_sum(a):      # the server runs a secure sum (docs/secure_sum.md)
        return

    corpus = _client_corpus(a)
    state = _state(a, default_state_folder)
    client = ServiceClient(a.server, timeout=a.timeout, retries=a.retries)
    s = submit(a.server, corpus, contributor=a.contributor, client=client, state=state, **_limit(a))

    n = s["n_documents"]
    if s["report_kind"] == "document":  # the note 'dptopic randomize --unit document' prints
        print_no_pair_note(s["documents_with_fewer_than_two_vocabulary_words"], n)
    else:
        print_empty_note(s["documents_without_vocabulary_words"], n)
    console = make_console()
    for line in submit_lines(s, a.server):
        console.print(line, markup=False)


def _state(a, default_state_folder):
    """``--state``: the folder given, none (``none``), or the default one."""
    return default_state_folder() if a.state is None else None if a.state.strip().lower() == "none" else a.state


def _limit(a) -> dict:
    """``max_epsilon`` for the library call: the contributor's --max-epsilon, else the library's default."""
    return {} if a.max_epsilon is None else {"max_epsilon": a.max_epsilon}


@with_flag_names(CLIENT_FLAGS)
def cmd_fed_client(a):

    console = make_console()
    corpus = _client_corpus(a)
    state = _state(a, default_state_folder)
    client = ServiceClient(a.server, timeout=a.timeout, retries=a.retries)
    s = fed_participate(a.server, corpus, rounds=a.rounds, poll=a.poll, timeout=a.round_timeout,
                        client_id=a.client_id, client=client, state=state, max_user_epsilon=a.max_user_epsilon,
                        **_limit(a),
                        on_round=lambda r: console.print(f"round {r['round']}: update of {r['bytes_sent']} bytes sent"))
    took_part, note = fed_client_lines(s)
    console.print(took_part, markup=False)
    console.print(note, style="yellow", markup=False)


def submit_lines(s: dict, server: str) -> list[str]:
    """What :func:`~dptopic.contributor.client.submit`'s summary ``s`` tells its contributor (the lines ``dptopic submit``
    prints): the pseudonym, where the reports are kept, what was sent, and the privacy of the documents."""
    eps, n = fmt_epsilon, s["n_documents"]     # an epsilon shown is rounded up: never below what was spent
    kept = ("randomized reports kept in " + s["state"] + " (readable by you only): a run stopped part-way is finished by"
            " running it again, without randomizing again" if s["state"] else
            "reports not kept (--state none): a later run on these documents randomizes them again, at a new cost")
    held = " (the one the server holds for these reports)" if s.get("contributor_from_server") else ""
    lines = [f"contributor pseudonym {s['contributor']}{held} (pass --contributor {s['contributor']} to be tallied as"
             f" one contributor on another machine); {kept}."]
    if s["already_acknowledged"]:
        lines.append(f"{plural(s['already_acknowledged'], 'report')} of these documents had been acknowledged by an"
                     " earlier run: not randomized or sent again" + ("." if s["reports"] else
                                                                      "; nothing was sent, nothing more spent."))
    if s.get("replayed_reports"):
        lines.append(f"{plural(s['replayed_reports'], 'report')} had already been stored by {server} (an earlier run,"
                     " perhaps under another address of this server): replayed, nothing new stored, nothing more"
                     " spent.")
    stored = s.get("stored_reports", s["reports"])
    if stored or not (s["already_acknowledged"] or s.get("replayed_reports")):
        lines.append(f"{plural(stored, 'randomized report')} uploaded to {server} in"
                     f" {plural(s['uploads'] - s['replayed_acks'], 'upload')}.")
    these = "this document" if n == 1 else f"these {plural(n, 'document')}"
    lines.append(f"Privacy of {these} (V={s['vocab_size']}; "
                 + ("" if s["epsilon_word"] is None else f"eps_word={eps(s['epsilon_word'])}, ")
                 + f"eps_doc={eps(s['epsilon_doc'])} per document; together"
                 + ("" if s["epsilon_word"] is None else
                    f" eps_word={eps(n * s['epsilon_word'])} for one word's presence in each and")
                 + f" eps={eps(n * s['epsilon_doc'])} for the documents, by basic composition, "
                 + ("spent once however often the kept reports are sent" if s["state"] else
                    "spent again by every run on these documents, since the reports were not kept (--state none)")
                 + "). Raw text never left this machine.")
    return lines


def fed_client_lines(s: dict) -> list[str]:
    """What :func:`~dptopic.contributor.client.fed_participate`'s summary ``s`` tells its participant (the lines ``dptopic
    fed-client`` prints): the rounds, the epsilon of its reports and whether they were kept."""
    eps = fmt_epsilon     # rounded up: never below what was spent
    if s["state"] is None:
        kept = "reports drawn anew for this run (--state none): a later run that draws again spends its epsilon again"
    elif s["reused_reports"]:
        kept = (f"reused the reports drawn before and kept in {s['state']}: this run spent nothing more, and it did not"
                " read the documents given to it (the kept reports stand for the documents of the run that drew them;"
                " new documents need new reports: --state none, or another --state, at a new cost)")
    else:
        kept = (f"reports drawn once and kept in {s['state']} (readable by you only): later runs reuse them and spend"
                " nothing more")
    return [f"took part in {len(s['rounds'])} round(s) as {s['client']}; epsilon of your reports (this user):"
            f" {eps(s['epsilon_basic'])} basic, {eps(s['epsilon_pld'])} PLD at delta={s['delta']:g}; {kept}.",
            s["note"]]


SUBMIT_READS = frozenset({"server", "corpus", "format", "text_field", "timeout", "retries", "max_epsilon", "state",
                          "invitation", "lowercase", "stop_words"})


def submit_secure_sum(a, cfg: dict) -> None:
    """``dptopic submit`` against a secure-sum server: every document of ``--corpus`` is this person's. ``cfg``: the
    server's ``/v1/config``, whose plan and mode are checked against the invitation's, its epsilon against
    ``--max-epsilon``, and whose vocabulary reads the documents before anything is sent (then, in the mode the
    invitation names, the committee mode's 3 requests or a single round's 8 at most)."""

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
