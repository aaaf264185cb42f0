"""A person's side of a round in cohorts over HTTP (``dptopic submit`` with an invitation to a round in cohorts).

The server's root names the cohort plan (``GET /v1/config``); the contributor checks it against its invitation
(the layout it was invited under: the round's size, the cohort size, the dropouts and collusion that seat the round),
finds its cohort by the plan's rule (:func:`~dptopic.protocol.cohort_enrollment.seating`: a hash of the round's id
and every id, never the server's say), refuses a server that seats anyone elsewhere, and plays its cohort's round at
the address the server gives for it (:func:`~dptopic.contributor.secure_client.take_part`, with every check of a
single round and those of :class:`~dptopic.contributor.cohorts.CohortContributor`). A delegate plays the bridge's
round too, at the same time (its pads are subtracted in its cohort and added in the bridge), as a
:class:`~dptopic.contributor.cohorts.BridgeContributor`, with its own state file beside the cohort's.
"""
from __future__ import annotations

import re
import threading
from pathlib import Path

from ..errors import DPTopicError
from ..protocol.cohort_enrollment import plan_layout, read_cohort_invitation, seating
from ..protocol.cohorts import CohortPlan
from .client import ServiceClient
from .cohorts import BridgeContributor, CohortContributor, Pads
from .secure_client import STOP_HOLD_S, Stopped, take_part
from .secure_sum import ServerLied, state_file_name

PATH = re.compile(r"/[A-Za-z0-9_/-]{0,200}")


def check_cohort_config(config, invitation: dict) -> tuple[CohortPlan, int]:
    """``(plan, cohort)``: the server's cohort plan (its root's ``/v1/config``) checked against ``invitation``
    (:func:`~dptopic.protocol.cohort_enrollment.read_cohort_invitation`'s) and this person's cohort by the plan's
    rule; one line naming what the server claimed otherwise, before anything is computed or sent."""
    accepted = invitation.get("cohorts")
    if accepted is None:
        raise DPTopicError("the server runs a round in cohorts, but your invitation is to a single round: ask the"
                           " round's operator for your invitation to this round.")
    doc = config.get("cohorts") if isinstance(config, dict) else None
    if not isinstance(doc, dict) or config.get("report_kind") != "secure-sum":
        raise DPTopicError("this server runs no secure sum in cohorts (its /v1/config names no cohort plan): your"
                           " invitation is to a round in cohorts.")
    rid = accepted["round_id"]
    if config.get("round_id") != rid:
        raise ServerLied(f"the server runs round {str(config.get('round_id'))[:64]!r}, but your invitation is for"
                         f" round {rid!r}: nothing sent.")
    try:
        plan = CohortPlan.from_dict(doc.get("plan"))
    except DPTopicError as e:
        raise ServerLied(f"{' '.join(str(e).split()).rstrip('.')}: nothing sent.") from None
    served, want = plan_layout(plan), accepted["layout"]
    if served != want:
        diff = ", ".join(f"{k} {served[k]} (accepted: {want[k]})" for k in want if served[k] != want[k])
        raise ServerLied(f"the server's cohort plan differs from the one your invitation accepted ({diff}): nothing"
                         " sent.")
    if config.get("epsilon") != plan.epsilon or config.get("delta") != plan.delta:
        raise ServerLied("the server's epsilon or delta differs from its cohort plan's: nothing sent.")
    groups, _ = seating(rid, want)
    me = invitation["contributor"]
    mine = next((c for c, g in enumerate(groups) if me in g), None)
    if mine is None or mine != accepted["cohort"]:
        raise DPTopicError(f"your invitation seats {me!r} in cohort {accepted['cohort']}, but the round's rule seats"
                           f" it in {'none' if mine is None else f'cohort {mine}'}: ask the round's operator for a new"
                           " invitation; nothing sent.")
    members = doc.get("members")
    if members != groups:
        where = ("holds a different number of cohorts" if not isinstance(members, list) or len(members) != len(groups)
                 else f"seats cohort {next(c for c, (a, b) in enumerate(zip(members, groups)) if a != b)} otherwise")
        raise ServerLied(f"the server's cohort plan {where} than the plan's rule (a hash of the round's id and every"
                         " id): refusing to take part; nothing sent.")
    paths, bridge = doc.get("paths"), doc.get("bridge")
    if not (isinstance(paths, list) and len(paths) == len(groups) and all(isinstance(p, str) and PATH.fullmatch(p)
                                                                         for p in [*paths, bridge])):
        raise ServerLied("the server's cohort plan names no address for each cohort and the bridge: nothing sent.")
    return plan, mine


def bridge_state_path(state, invitation: dict):
    """Where a delegate keeps its bridge round's state: beside its cohort round's (``state``), or nowhere."""
    if state is None:
        return None
    b = invitation["bridge"]
    return Path(state).with_name(state_file_name(b["round_id"], b["contributor"]))


def take_part_in_cohorts(server: str, bow, invitation, state=None, max_epsilon: float | None = None,
                         timeout: float = 3600.0, poll: float = 0.5, client_timeout: float = 30.0,
                         retries: int = 8, leave_after_masking: bool = False) -> dict:
    """Play one person's part of a round in cohorts at ``server`` (module note), holding ``invitation`` (a file path
    or :func:`~dptopic.protocol.cohort_enrollment.read_cohort_invitation`'s dict). ``state``: the cohort round's
    state file (a delegate's bridge state lies beside it, :func:`bridge_state_path`), or None. Returns the cohort
    round's summary (:func:`~dptopic.contributor.secure_client.take_part`'s) with ``cohort``, ``cohorts`` and, for a
    delegate, ``bridge`` (the bridge round's). ``leave_after_masking``: the person masks its uploads of step 0 (a
    delegate's in its cohort and in the bridge) and leaves without sending them (a dropout, as ``dptopic experiment
    secure-sum`` plays one: :func:`~dptopic.contributor.secure_client.take_part`'s)."""
    inv = read_cohort_invitation(invitation) if not isinstance(invitation, dict) else invitation
    base = server.rstrip("/")

    def client(path: str = "") -> ServiceClient:
        return ServiceClient(base + path, timeout=client_timeout, retries=retries)

    config = client().get_json("/v1/config")
    plan, c = check_cohort_config(config, inv)
    if max_epsilon is not None and plan.epsilon > max_epsilon * (1 + 1e-12):
        raise DPTopicError(f"the server asks for epsilon {plan.epsilon:g} per person, above your max_epsilon"
                           f" {max_epsilon:g}: nothing computed or sent.")
    rid, doc = inv["cohorts"]["round_id"], config["cohorts"]
    pads = Pads() if inv["bridge"] is not None else None
    cohort_client = client(doc["paths"][c])
    member = CohortContributor(cohort_client.get_json("/v1/config"), bow, inv, plan, rid, c, pads, state=state,
                               max_epsilon=max_epsilon)
    if member.ids != doc["members"][c]:
        raise ServerLied(f"the server's cohort {c} lists other members than the plan's rule seats there: nothing"
                         " sent.")
    parts = [("cohort", cohort_client, member, state)]
    if pads is not None:
        bridge_client, bstate = client(doc["bridge"]), bridge_state_path(state, inv)
        delegate = BridgeContributor(bridge_client.get_json("/v1/config"), inv["bridge"], plan, rid, pads,
                                     state=bstate, max_epsilon=max_epsilon)
        parts.append(("bridge", bridge_client, delegate, bstate))
    out: dict = {}
    moved = threading.Event()
    stop = threading.Event() if len(parts) > 1 else None      # a delegate's refusal in one round ends the other

    def play(name, cl, who, st):
        try:
            out[name] = take_part(cl.server, who.bow, None, state=st, client=cl, poll=poll, timeout=timeout,
                                  contributor=who, stop=stop, leave_after_masking=leave_after_masking)
        except BaseException as e:      # noqa: BLE001 (raised in the caller's thread below)
            out[name] = e
        moved.set()

    threads = [threading.Thread(target=play, args=part, name=f"secure-sum-{part[0]}", daemon=True) for part in parts]
    for thread in threads:      # a delegate's two rounds at once: each step of the round needs both
        thread.start()
    while True:
        moved.wait(1.0)
        moved.clear()
        failed = next((e for e in out.values() if isinstance(e, BaseException) and not isinstance(e, Stopped)), None)
        if failed is not None:      # the first refusal or failure, at once (the other round cannot finish)
            if stop is not None:
                stop.set()
            for thread in threads:      # the other round ends within a held request (STOP_HOLD_S), not its timeout
                thread.join(STOP_HOLD_S + client_timeout)
            raise failed
        if len(out) == len(parts):
            break
    return {**out["cohort"], "cohort": c, "cohorts": len(plan.sizes), "bridge": out.get("bridge")}


__all__ = ["check_cohort_config", "take_part_in_cohorts", "bridge_state_path"]
