"""The releases a collection server makes, on the dataset ledger (``ServiceConfig``'s ledger; docs/budget.md, "Served
releases"): each is charged to the persons it covers, with its unit, so that a person's total spans the central
releases that held their documents and the served ones.

- **Local reports** (word- or document-level): each report protects one document at the kind's ``epsilon_doc``; a
  batch is charged, before the trainer reads it, to each contributor (their pseudonym; an upload without one is a
  contributor of its own) for their reports in it, a document-level release a person with ``k`` reports meets as a
  group of ``k``. A batch a cap refuses is skipped: the model never reads it.
- **FedLDA rounds**: a closed round is charged to each client that sent an update in it, for the entries its update
  spent (user-level: all of one user's entries together); the clients drew the noise before the server saw
  anything, so the round is charged once it closed.
- **Secure-sum rounds**: a round is charged to its contributors (step 0's uploaders) before the server unmasks
  anything of it, at the plan's bound; a round the ledger refuses fails with nothing revealed.

**The same people as the central releases.** A person is charged under the name the route gives them. The
operator's invitations to a round can name each person (:mod:`dptopic.protocol.secure_sum.person_ids`): the directory
then gives each invitation's pseudonym for the round, made by the ledger from the person's id, and the round is charged
to those people, whom the server never learns. A contributor of local reports or FedLDA rounds can send the
pseudonym the ledger made for them for a collection (:data:`~dptopic.dataset_ledger.pseudonyms.COLLECTION`), and is
then charged as that person; any other name is a person of its own.

The contributors drew every noise of these releases on their own devices: a cap cannot take back what they sent (a
secure-sum round's masks can: it is charged before they are removed), and a charge that fails is logged, never retried
in a loop.
"""
from __future__ import annotations

import logging

from ..dataset_ledger.pseudonyms import COLLECTION
from ..errors import BudgetExceededError, DPTopicError, ParameterError

log = logging.getLogger("dptopic.service")


def _ledger(location):
    from ..dataset_ledger.ledger import DatasetLedger  # read when a ledger is named: the server starts light

    return DatasetLedger(location)


def charge_reports(cfg, persons: dict, first: int, last: int) -> int | None:
    """Charge one batch of local reports (ids ``first``..``last``) to the contributors ``persons`` names (pseudonym
    -> reports in the batch), before the trainer reads it. Returns the release's id, or None without a ledger.
    Raises :class:`~dptopic.errors.BudgetExceededError` when a cap refuses it (the batch is then skipped)."""
    if not getattr(cfg, "ledger", None):
        return None
    from ..accounting.events import PureDPEvent  # as above
    from ..dataset_ledger.charge import charge_served  # as above
    from . import kinds  # as above

    eps = float(kinds.get(cfg.report_kind).epsilon_doc(cfg))
    event = PureDPEvent(eps, label=f"one {cfg.report_kind}-level local report (per document)",
                        theorem="local differential privacy of the contributor's randomizer (docs/local_dp.md)")
    return charge_served(_ledger(cfg.ledger), f"local reports ({cfg.report_kind})", "document", [(event, 1)],
                         persons, dataset=getattr(cfg, "ledger_dataset", None), context=COLLECTION,
                         note=f"reports {first}-{last}, randomized on the contributors' devices")


def charge_fed_round(cfg, rrp, round_: int, participation: dict) -> int | None:
    """Charge a closed FedLDA round to its clients: ``participation`` maps each client of the round to the number of
    rounds it has taken part in, this one included (entries randomized once are spent once: a client's later rounds
    cost nothing more, and are not charged). Failures are logged: the round is released already."""
    if not getattr(cfg, "ledger", None):
        return None
    from ..accounting.fedlda import rrp_event, user_spend  # read when a ledger is named: the server starts light
    from ..dataset_ledger.charge import charge_served  # as above

    event = rrp_event(rrp.epsilon_per_entry, rrp.failure_rate, rrp.gamma, rrp.variant, rrp.exclusion,
                      vocab_size=len(cfg.fed_vocabulary))
    by_spend: dict = {}
    for client, k in participation.items():
        spent = user_spend(rrp.exclusion, rrp.n_entries, k) - user_spend(rrp.exclusion, rrp.n_entries, k - 1)
        if spent:
            by_spend.setdefault(spent, {})[client] = 1
    ids = []
    for spent, persons in sorted(by_spend.items()):
        try:
            ids.append(charge_served(_ledger(cfg.ledger), f"FedLDA round {round_}", "user", [(event, spent)],
                                     persons, dataset=getattr(cfg, "ledger_dataset", None), context=COLLECTION,
                                     note=f"FedLDA round {round_}: {spent} entries per client, randomized on the"
                                          " clients' devices"))
        except (BudgetExceededError, DPTopicError) as e:
            log.error("ledger: FedLDA round %d is released but could not be recorded: %s", round_,
                      " ".join(str(e).split())[:300])
    return ids[-1] if ids else None


def people_of(directory) -> tuple[str, dict] | None:
    """``(context, {number: pseudonym})`` of a single round's or a round in cohorts' directory (the context: its
    round's id), checked (:func:`~dptopic.protocol.secure_sum.person_ids.check_people`); None when its invitations
    name no people. The server's reading of the people an operator's invitations name (the protocol's
    :mod:`~dptopic.protocol.secure_sum.person_ids` writes and checks them)."""
    from ..protocol.secure_sum.messages import HEX32  # read when a ledger is named: the server starts light
    from ..protocol.secure_sum.person_ids import PEOPLE_KEY, check_people  # as above

    if not isinstance(directory, dict) or directory.get(PEOPLE_KEY) is None:
        return None
    if isinstance(directory.get("cohorts"), list):      # a round in cohorts: one enrollment key signs every part
        parts = [d for d in directory["cohorts"] if isinstance(d, dict)]
        key = parts[0].get("enrollment_key") if parts else None
        members = [i for d in parts for i in (d.get("members") or {})]
    else:
        key, members = directory.get("enrollment_key"), list(directory.get("members") or {})
    if not isinstance(key, str) or not HEX32.fullmatch(key) or not isinstance(directory.get("round_id"), str):
        raise DPTopicError("the directory's people cannot be checked: it names no enrollment key or round.")
    return directory["round_id"], check_people(directory, key, members)


def charge_secure_round(ledger, dataset, plan, contributors, directory=None) -> int | None:
    """Charge a secure-sum round to its contributors before anything of it is unmasked: the two releases at the
    plan's bound (the noise the guarantee rests on, and the largest co-occurrence release the plan allows: the kept
    words are chosen from the first release, after this debit), each contributor of ``contributors`` (step 0's
    uploaders, a superset of step 1's) charged once. ``directory``: the round's (a single round's or a round in
    cohorts'): where its invitations name people, each contributor is charged as the person their invitation names,
    by its pseudonym (:func:`round_people`). Returns the release's id, or None without a ledger; raises
    :class:`~dptopic.errors.DPTopicError` (one line) when the ledger refuses or cannot record it: the round must then
    reveal nothing."""
    if not ledger:
        return None
    from ..dataset_ledger.charge import charge_served  # read when a ledger is named: the server starts light

    groups = [(ev, 1) for ev in plan.releases()]
    try:
        led = _ledger(ledger)
        context, persons = round_people(directory, led, contributors)
        return charge_served(led, "secure-sum round", "user", groups, persons, context=context,
                             dataset=dataset, delta=float(plan.delta) - plan.calibrated()[1],
                             note="a secure-sum round, charged before its first unmasking at the plan's bound")
    except (BudgetExceededError, DPTopicError, ValueError, TypeError) as e:
        raise DPTopicError(f"the dataset ledger refuses the round ({' '.join(str(e).split())[:200]})") from None


def round_people(directory, ledger, contributors=None) -> tuple[str | None, dict]:
    """``(context, {name: 1})``: whom a round charges, each of ``contributors`` (None: every invitation) under the
    name the ledger charges: the pseudonym their invitation's person has in the directory, for the round's id (the
    context), or, where the invitations name no people, their number (context None). A directory whose pseudonyms
    ``ledger`` (a :class:`~dptopic.dataset_ledger.ledger.DatasetLedger`) did not make is refused in one line: the
    round would be charged to no one."""

    found = people_of(directory)
    if found is None:
        return None, {c: 1 for c in (contributors or ())}
    context, pseudonyms = found
    names = list(pseudonyms) if contributors is None else list(contributors)
    missing = [c for c in names if c not in pseudonyms]
    if missing:
        raise DPTopicError(f"contributor {missing[0]!r} has no person in the round's directory.")
    persons = {pseudonyms[c]: 1 for c in names}
    foreign = ledger.foreign_pseudonyms(list(persons), context)
    if foreign:
        raise DPTopicError(f"the round's invitations name {len(foreign)} people by pseudonyms that the ledger"
                           f" {ledger.where} did not make for this round: serve it with the ledger its invitations"
                           " were written with, so that it is charged to them.")
    return context, persons


def check_round_people(directory, ledger) -> int:
    """Before a round starts: the number of people its ``directory``'s invitations name (0 for none), each a
    pseudonym of ``ledger`` (a path or URL, or None) for the round; refused in one line where they name people and
    no ledger, or another ledger, is given (the round could not be charged to them)."""

    found = people_of(directory)
    if found is None:
        return 0
    if not ledger:
        raise ParameterError("{directory}'s invitations name their people by pseudonyms of a dataset ledger"
                             " (invitations written with ids): give {ledger}, the ledger they were written with, so"
                             " that the round is charged to them.", "directory", others=("ledger",))
    try:
        round_people(directory, _ledger(ledger))
    except DPTopicError as e:
        raise ParameterError("{directory}: {why}", "directory", why=" ".join(str(e).split())) from None
    return len(found[1])
