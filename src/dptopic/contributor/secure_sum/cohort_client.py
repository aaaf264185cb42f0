"""A person's side of a round in cohorts over HTTP (``dptopic submit`` with an invitation to a round in cohorts).

The server's root names the cohort plan (``GET /v1/config``); the contributor checks it against its invitation
(the layout it was invited under: the round's size, the cohort size, the dropouts and collusion that seat the round),
finds its cohort by the plan's rule (:func:`~dptopic.protocol.secure_sum.cohort_enrollment.seating`: a hash of the
round's id
and every id, never the server's say), refuses a server that seats anyone elsewhere, and plays its cohort's round at
the address the server gives for it (:func:`~dptopic.contributor.secure_sum.client.take_part`, with every check of a
single round and those of :class:`~dptopic.contributor.secure_sum.cohorts.CohortContributor`). A delegate plays the
bridge's round too, at the same time (its pads are subtracted in its cohort and added in the bridge), as a
:class:`~dptopic.contributor.secure_sum.cohorts.BridgeContributor`, with its own state file beside the cohort's.
"""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from ...errors import DPTopicError
from ...protocol.secure_sum.cohort_enrollment import plan_layout, read_cohort_invitation, seating
from ...protocol.secure_sum.cohorts import COHORT_PATH, CohortPlan
from ...protocol.secure_sum.enrollment import layout_difference
from ..client import ServiceClient
from .checks import ServerLied
from .client import STOP_HOLD_S, Stopped, take_part, take_part_committee
from .cohorts import BridgeContributor, CohortCommitteeContributor, CohortContributor, Pads
from .state import state_file_name

PATH = re.compile(r"/[A-Za-z0-9_/-]{0,200}")


_SEATED: dict = {}
"""Each round's cohorts by the rule, by round id and layout: the people a process plays in one round (``dptopic
experiment secure-sum``'s pool) seat the round once, not once each (a hash of every id: 17 ms at 10,000 people)."""


def _groups(round_id: str, layout: dict) -> list:
    """``seating(round_id, layout)``'s cohorts, made once for the same round and layout in this process."""
    key = (round_id, json.dumps(layout, sort_keys=True))
    found = _SEATED.get(key)
    if found is None:
        if len(_SEATED) >= 16:
            _SEATED.clear()
        found = _SEATED[key] = seating(round_id, layout)[0]
    return found


def check_cohort_config(config, invitation: dict) -> tuple[CohortPlan, int]:
    """``(plan, cohort)``: the server's cohort plan (its root's ``/v1/config``) checked against ``invitation``
    (:func:`~dptopic.protocol.secure_sum.cohort_enrollment.read_cohort_invitation`'s) and this person's cohort by the
    plan's rule; one line naming what the server claimed otherwise, before anything is computed or sent."""
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
        diff = layout_difference(served, want)
        raise ServerLied(f"the server's cohort plan differs from the one your invitation accepted ({diff}): nothing"
                         " sent.")
    if config.get("epsilon") != plan.epsilon or config.get("delta") != plan.delta:
        raise ServerLied("the server's epsilon or delta differs from its cohort plan's: nothing sent.")
    groups = _groups(rid, want)
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
                         retries: int = 8, leave_after_masking: bool = False,
                         stop: threading.Event | None = None) -> dict:
    """Play one person's part of a round in cohorts at ``server`` (module note), holding ``invitation`` (a file path
    or :func:`~dptopic.protocol.secure_sum.cohort_enrollment.read_cohort_invitation`'s dict). ``state``: the cohort
    round's
    state file (a delegate's bridge state lies beside it, :func:`bridge_state_path`), or None. Returns the cohort
    round's summary (:func:`~dptopic.contributor.secure_sum.client.take_part`'s) with ``cohort``, ``cohorts`` and, for a
    delegate, ``bridge`` (the bridge round's). ``leave_after_masking``: the person masks its uploads of step 0 (a
    delegate's in its cohort and in the bridge) and leaves without sending them (a dropout, as ``dptopic experiment
    secure-sum`` plays one: :func:`~dptopic.contributor.secure_sum.client.take_part`'s). ``stop``: an event another
    thread sets to end this person's part in every round it plays
    (:class:`~dptopic.contributor.secure_sum.client.Stopped`, raised within about
    :data:`~dptopic.contributor.secure_sum.client.STOP_HOLD_S` seconds: the server then holds each request that long at
    most)."""
    inv = read_cohort_invitation(invitation) if not isinstance(invitation, dict) else invitation
    base = server.rstrip("/")

    def client(path: str = "") -> ServiceClient:
        return ServiceClient(base + path, timeout=client_timeout, retries=retries)

    if inv.get("committee"):
        return _take_part_committee_cohort(base, client, bow, inv, state, max_epsilon, timeout, poll,
                                           client_timeout, leave_after_masking, stop)

    config = client().get_json("/v1/config")
    cohorts = config.get("cohorts") if isinstance(config, dict) else None
    if isinstance(cohorts, dict) and isinstance(cohorts.get("plan"), dict) and cohorts["plan"].get("committee"):
        # committee cohorts, and an invitation that did not say so: one request more than 3
        return _take_part_committee_cohort(base, client, bow, inv, state, max_epsilon, timeout, poll,
                                           client_timeout, leave_after_masking, stop)
    clients: dict = {}

    def round_config(path: str) -> dict:
        clients[path] = client(path)
        return clients[path].get_json("/v1/config")

    parts = [(name, clients[path], who, st)
             for name, path, who, st in seat_person(config, bow, inv, round_config, state, max_epsilon)]
    out = _play_together(parts, poll, timeout, client_timeout, leave_after_masking, stop)
    return {**out["cohort"], "cohort": parts[0][2].cohort, "cohorts": len(parts[0][2].cohort_plan.sizes),
            "bridge": out.get("bridge")}


def _play_together(parts: list, poll: float, timeout: float, client_timeout: float, leave_after_masking: bool,
                   stop) -> dict:
    """:func:`take_part_in_cohorts`'s rounds of one person played at once, a thread each (a delegate's cohort round
    and bridge: each step of one needs the other's): ``{name: summary}`` of ``parts`` (``(name, client, contributor,
    state)``). The first refusal or failure is raised at once, once the other round ended (within a held request);
    :class:`~dptopic.contributor.secure_sum.client.Stopped` when the caller's ``stop`` ended a round not finished."""
    out: dict = {}
    moved = threading.Event()
    # a delegate's refusal in one round ends the other; the caller's stop ends every round of this person
    halt = threading.Event() if len(parts) > 1 or stop is not None else None

    def play(name, cl, who, st):
        try:
            out[name] = take_part(cl.server, who.bow, None, state=st, client=cl, poll=poll, timeout=timeout,
                                  contributor=who, stop=halt, leave_after_masking=leave_after_masking)
        except BaseException as e:      # noqa: BLE001 (raised in the caller's thread below)
            out[name] = e
        moved.set()

    threads = [threading.Thread(target=play, args=part, name=f"secure-sum-{part[0]}", daemon=True) for part in parts]
    for thread in threads:      # a delegate's two rounds at once: each step of the round needs both
        thread.start()
    while True:
        moved.wait(1.0 if stop is None else 0.1)
        moved.clear()
        if stop is not None and stop.is_set():
            halt.set()
        failed = next((e for e in out.values() if isinstance(e, BaseException) and not isinstance(e, Stopped)), None)
        if failed is not None:      # the first refusal or failure, at once (the other round cannot finish)
            if halt is not None:
                halt.set()
            for thread in threads:      # the other round ends within a held request (STOP_HOLD_S), not its timeout
                thread.join(STOP_HOLD_S + client_timeout)
            raise failed
        if len(out) == len(parts):
            break
    stopped = next((e for e in out.values() if isinstance(e, Stopped)), None)
    if stopped is not None:     # the caller's stop ended a round this person had not finished
        raise stopped
    return out


def _take_part_committee_cohort(base: str, client, bow, inv: dict, state, max_epsilon, timeout: float, poll: float,
                                client_timeout: float, leave_after_masking: bool, stop) -> dict:
    """:func:`take_part_in_cohorts` with an invitation to a round in committee cohorts. An ordinary member's first
    request is its keys, posted to its cohort's round at the invitation's cohort
    (:data:`~dptopic.protocol.secure_sum.cohorts.COHORT_PATH`), answered with the cohort's configuration and the round
    in cohorts' own (``cohort_root``), every check of :func:`seat_person` made on it before anything of the data is
    computed; then the cohort's committee-mode round (:func:`~dptopic.contributor.secure_sum.client
    .take_part_committee`): 3 requests. A delegate (with a state file) reads the configurations first and starts the
    bridge's default round at once, from a thread of its own, before it posts its keys to its cohort: the bridge then
    runs while the cohorts' rosters fill, and no cohort waits on it."""
    path = COHORT_PATH.format(c=int(inv["cohorts"]["cohort"]))
    cohort = client(path)
    bridge: dict = {}
    seated: list = []

    def round_config(p: str, doc=None) -> dict:
        return doc if p == path and doc is not None else client(p).get_json("/v1/config")

    def seat(root, doc, secrets) -> None:
        seated.extend(seat_person(root, bow, inv, lambda p: round_config(p, doc), state, max_epsilon, secrets=secrets))
        if len(seated) > 1:
            _, bpath, who, bstate = seated[1]
            bc = client(bpath)

            def play_bridge():
                try:
                    bridge["out"] = take_part(bc.server, who.bow, None, state=bstate, client=bc, poll=poll,
                                              timeout=timeout, contributor=who, stop=stop,
                                              leave_after_masking=leave_after_masking)
                except BaseException as e:      # noqa: BLE001 (raised in the caller's thread below)
                    bridge["out"] = e
            bridge["thread"] = threading.Thread(target=play_bridge, name="secure-sum-bridge", daemon=True)
            bridge["thread"].start()

    def make(doc, secrets):
        if seated:          # a delegate, seated before its keys went out
            return seated[0][2]
        seat(_cohort_root(doc, inv, path), doc, secrets)
        return seated[0][2]

    if inv["bridge"] is not None and state is not None:
        seat(client().get_json("/v1/config"), None, None)
        member = seated[0][2]
        cohort.request("POST", "/v1/secure/prekeys", json.dumps({"contributor": member.me,
                                                                 "bundles": [member.prekey()]}).encode(),
                       {"Content-Type": "application/json"})
        member.st["sent"]["prekey"] = True
        member._write()
    out = take_part_committee(cohort.server, bow, inv, state, client=cohort, timeout=timeout,
                              max_epsilon=max_epsilon, leave_after_masking=leave_after_masking, make=make)
    if "thread" in bridge:
        bridge["thread"].join(timeout + client_timeout)
        if isinstance(bridge.get("out"), BaseException):
            raise bridge["out"]
    member = seated[0][2] if seated else None
    return {**out, "cohort": int(inv["cohorts"]["cohort"]),
            "cohorts": len(member.cohort_plan.sizes) if member is not None else None, "bridge": bridge.get("out")}


def _cohort_root(doc, inv: dict, path: str) -> dict:
    """The round in cohorts' configuration (``cohort_root``) a committee cohort's configuration ``doc`` carries,
    checked to serve the invitation's cohort at ``path``; one line otherwise."""
    root = doc.get("cohort_root") if isinstance(doc, dict) else None
    if not isinstance(root, dict):
        raise DPTopicError("this server's cohort round names no round in cohorts (its /v1/config holds no"
                           " cohort_root): is it a dptopic server of this version, run with a committee?")
    paths = (root.get("cohorts") or {}).get("paths") if isinstance(root.get("cohorts"), dict) else None
    if not isinstance(paths, list) or int(inv["cohorts"]["cohort"]) >= len(paths) \
            or paths[int(inv["cohorts"]["cohort"])] != path:
        raise ServerLied(f"the server serves your cohort elsewhere than {path}: nothing sent but public keys.")
    return root


def seat_person(config: dict, bow, invitation: dict, round_config, state=None,
                max_epsilon: float | None = None, secrets: dict | None = None) -> list[tuple]:
    """The rounds one person of a round in cohorts plays, each as ``(name, path, contributor, state)``: its cohort's
    (``"cohort"``, a :class:`~dptopic.contributor.secure_sum.cohorts.CohortContributor`) and, for a delegate, the
    bridge's (``"bridge"``, a :class:`~dptopic.contributor.secure_sum.cohorts.BridgeContributor` sharing its pads; in a
    committee cohort the cohort's is a :class:`~dptopic.contributor.secure_sum.cohorts.CohortCommitteeContributor`,
    ``secrets`` its keys posted before the configuration was known, or None), after every check of
    the root's ``config`` against ``invitation`` (:func:`check_cohort_config`) and of each round's own configuration
    (``round_config(path)``: the round's ``/v1/config`` at that path) against the plan; one line naming what the
    server claimed otherwise, before anything is computed or sent. ``state``: the cohort round's state file or None
    (the bridge's lies beside it, :func:`bridge_state_path`)."""
    plan, c = check_cohort_config(config, invitation)
    if max_epsilon is not None and plan.epsilon > max_epsilon * (1 + 1e-12):
        raise DPTopicError(f"the server asks for epsilon {plan.epsilon:g} per person, above your max_epsilon"
                           f" {max_epsilon:g}: nothing computed or sent.")
    rid, doc = invitation["cohorts"]["round_id"], config["cohorts"]
    pads = Pads() if invitation["bridge"] is not None else None
    if plan.committee:
        member = CohortCommitteeContributor(round_config(doc["paths"][c]), bow, invitation, plan, rid, c, pads,
                                            state=state, max_epsilon=max_epsilon, secrets=secrets)
    else:
        member = CohortContributor(round_config(doc["paths"][c]), bow, invitation, plan, rid, c, pads, state=state,
                                   max_epsilon=max_epsilon)
    if member.ids != doc["members"][c]:
        raise ServerLied(f"the server's cohort {c} lists other members than the plan's rule seats there: nothing"
                         " sent.")
    seats = [("cohort", doc["paths"][c], member, state)]
    if pads is not None:
        bstate = bridge_state_path(state, invitation)
        delegate = BridgeContributor(round_config(doc["bridge"]), invitation["bridge"], plan, rid, pads, state=bstate,
                                     max_epsilon=max_epsilon)
        seats.append(("bridge", doc["bridge"], delegate, bstate))
    return seats


__all__ = ["check_cohort_config", "take_part_in_cohorts", "bridge_state_path", "seat_person"]
