"""Enrollment in a round in cohorts (:mod:`dptopic.protocol.secure_sum.cohorts`): the operator's invitations and
directories.

A round in cohorts is ``C`` secure-sum rounds (one per cohort) and the bridge, each with its own signed directory
(:mod:`dptopic.protocol.secure_sum.enrollment`'s format, signed by the one enrollment key). Who sits in which cohort and
who is
a delegate follow from the round's id, its contributors' ids and the cohorts' layout alone (:func:`~dptopic.protocol
.cohorts.assign`, :meth:`~dptopic.protocol.secure_sum.cohorts.CohortPlan.delegates`), so the operator writes every
invitation before the server starts, and each contributor checks that the server seats it where the rule does.

Files (JSON; the invitations readable by their owner only):

- the *cohort directory* ``directory.json`` (the server's): ``{"format": "dptopic-secure-sum-cohort-directory",
  "version": 1, "round_id", "layout": {"count", "cohort_size", "dropouts", "collusion"}, "cohorts": [directory of
  cohort 0, ...], "bridge": directory of the bridge}``; the layout is what the invitations were written for (the
  server's plan must give the same cohorts and delegates), each directory is signed;
- an invitation ``invitation-NNNN.json``: the invitation to the person's cohort round (round id ``R-c{c}``, count
  its cohort's size), with ``"cohorts": {"round_id": R, "cohort": c, "layout": {...}}`` and, for a delegate,
  ``"bridge": {"round_id", "contributor": "c{c}-NNNN", "count", "signing_key"}`` (its second key, for the bridge).
"""
from __future__ import annotations

import json
import os

from ..._io import atomic_write_bytes
from ...errors import DPTopicError, ParameterError
from . import cohorts as co
from .crypto import new_signing_key, sign, signing_public
from .enrollment import (
    DIRECTORY_FORMAT,
    INVITATION_FORMAT,
    VERSION,
    _read,
    check_directory,
    checked_counts,
    contributor_ids,
    directory_message,
    load_enrollment_key,
    read_invitation,
    writable_out,
    writing_folder,
)
from .graph import ring_order
from .messages import HEX32, ROUND_ID, canonical
from .person_ids import PEOPLE_KEY, bind, check_people, checked_binding, people_entry

COHORT_DIRECTORY_FORMAT = "dptopic-secure-sum-cohort-directory"
LAYOUT_KEYS = ("count", "cohort_size", "dropouts", "collusion")


def cohort_layout(count: int, cohort_size: int, dropouts: int | None = None, collusion: int | None = None) -> dict:
    """The layout of a round of ``count`` contributors in cohorts of at most ``cohort_size``: what decides who sits
    together and who is a delegate (``dropouts``: how many may drop out, default a tenth; ``collusion``: default
    :func:`~dptopic.protocol.secure_sum.graph.default_collusion`). Refused in one line where no round in cohorts
    fits."""
    if isinstance(cohort_size, bool) or not isinstance(cohort_size, int):
        raise ParameterError("invalid {cohort_size=}: an integer.", "cohort_size", cohort_size)
    count, dropouts, collusion = checked_counts(count, dropouts, collusion)     # as a single round's
    if cohort_size < 3:
        raise ParameterError("invalid {cohort_size=}: a cohort is a secure sum of at least 3 contributors.",
                             "cohort_size", cohort_size)
    sizes = co.cohort_sizes(count, cohort_size)
    if len(sizes) < 2:
        raise ParameterError("{cohort_size=} holds the whole round of {n}: a round in one cohort is a plain secure"
                             " sum; give a smaller cohort size, or leave it out.", "cohort_size", cohort_size, n=count)
    k = co.delegates_per_cohort(sizes, dropouts / count, collusion, cohort_size)
    return {"count": count, "cohort_size": cohort_size, "dropouts": dropouts, "collusion": collusion,
            "sizes": sizes, "delegates": k}


def plan_layout(plan: co.CohortPlan) -> dict:
    """The layout (:func:`cohort_layout`'s keys) a :class:`~dptopic.protocol.secure_sum.cohorts.CohortPlan` seats its
    round in."""
    return {"count": int(plan.n), "cohort_size": int(plan.cohort_size), "dropouts": int(plan.dropouts),
            "collusion": int(plan.collusion)}


def seating(round_id: str, layout: dict) -> tuple[list, list]:
    """``(cohorts, delegates)``: each cohort's members and delegates by the rule, for the ids ``0001`` ... of the
    layout's count."""
    sizes = co.cohort_sizes(layout["count"], layout["cohort_size"])
    k = co.delegates_per_cohort(sizes, layout["dropouts"] / layout["count"], layout["collusion"])
    groups = co.assign(contributor_ids(layout["count"]), round_id, sizes)
    delegates = [sorted(ring_order(g, f"{round_id}/delegates/{c}")[:k]) for c, g in enumerate(groups)]
    return groups, delegates


def bridge_id(cohort: int, contributor: str) -> str:
    """A delegate's id in the bridge round."""
    return f"c{cohort}-{contributor}"


def _signed_directory(private: bytes, round_id: str, keys: dict) -> dict:
    members = {i: signing_public(k).hex() for i, k in keys.items()}
    return {"format": DIRECTORY_FORMAT, "version": VERSION, "round_id": round_id,
            "enrollment_key": signing_public(private).hex(), "members": members,
            "signature": sign(private, directory_message(round_id, members))}


def make_cohort_invitations(key, count: int | None, out, cohort_size: int, dropouts: int | None = None,
                            collusion: int | None = None, round_id: str | None = None, committee: bool = False,
                            ids=None, ledger=None) -> dict:
    """Write the invitations of a round in cohorts and its cohort directory into the new folder ``out`` with the
    enrollment key at ``key`` (created if missing): one invitation per contributor (to its cohort's round; a
    delegate's also to the bridge) and ``directory.json`` (every cohort's signed directory and the bridge's).
    ``committee``: each cohort runs in committee mode (``CohortPlan(committee=...)``); each invitation says so, so
    that a contributor's first request is its keys, posted to its cohort's round (3 requests in all). ``ids`` and
    ``ledger``: the people the invitations are for, as a single round's
    (:func:`~dptopic.protocol.secure_sum.enrollment.make_invitations`; the pseudonyms in the cohort directory, for the
    whole round). Returns ``{"round_id", "count", "cohorts", "delegates", "directory", "invitations", "key_created",
    "people"}``."""
    if not isinstance(committee, bool):
        raise ParameterError("invalid {committee=}: True or False.", "committee", committee)
    count, ids = checked_binding(ids, count, ledger)
    layout = cohort_layout(count, cohort_size, dropouts, collusion)
    round_id = os.urandom(8).hex() if round_id is None else round_id
    if not isinstance(round_id, str) or not ROUND_ID.fullmatch(round_id) or len(round_id) > 56:
        raise ParameterError("invalid {round_id=}: 1-56 of A-Z a-z 0-9 _ - (a cohort's round adds its number).",
                             "round_id", round_id)
    out = writable_out(out, key)
    persons, pseudonyms = bind(ids, contributor_ids(count), ledger, round_id) if ids is not None else ({}, None)
    private, created = load_enrollment_key(key, create=True)
    enrollment = signing_public(private).hex()
    public_layout = {k: layout[k] for k in LAYOUT_KEYS}
    groups, delegates = seating(round_id, public_layout)
    cohort_dirs, invitations = [], {}
    bridge_keys = {}
    for c, (members, ds) in enumerate(zip(groups, delegates)):
        rid = co.cohort_round_id(round_id, c)
        keys = {i: new_signing_key() for i in members}
        cohort_dirs.append(_signed_directory(private, rid, keys))
        for i in members:
            invitations[i] = {"format": INVITATION_FORMAT, "version": VERSION, "round_id": rid, "contributor": i,
                              "count": len(members), "signing_key": keys[i].hex(), "enrollment_key": enrollment,
                              "cohorts": {"round_id": round_id, "cohort": c, "layout": public_layout},
                              **({"committee": True} if committee else {}),
                              **({"person": persons[i]} if persons else {})}
        for d in ds:
            bridge_keys[bridge_id(c, d)] = (d, new_signing_key())
    brid = co.bridge_round_id(round_id)
    bridge_dir = _signed_directory(private, brid, {b: k for b, (_, k) in bridge_keys.items()})
    for b, (d, k) in bridge_keys.items():
        invitations[d]["bridge"] = {"round_id": brid, "contributor": b, "count": len(bridge_keys),
                                    "signing_key": k.hex()}
    directory = {"format": COHORT_DIRECTORY_FORMAT, "version": VERSION, "round_id": round_id,
                 "layout": public_layout, "cohorts": cohort_dirs, "bridge": bridge_dir,
                 **({PEOPLE_KEY: people_entry(private, round_id, pseudonyms)} if pseudonyms else {})}
    with writing_folder(out, "out"):
        atomic_write_bytes(out / "directory.json", canonical(directory) + b"\n")
        for i, doc in sorted(invitations.items()):
            atomic_write_bytes(out / f"invitation-{i}.json", json.dumps(doc, indent=1).encode() + b"\n", private=True)
    return {"round_id": round_id, "count": count, "cohorts": len(groups), "delegates": layout["delegates"],
            "directory": str(out / "directory.json"), "invitations": str(out / f"invitation-{groups[0][0]}.json")
            + " ...", "key_created": created, "people": len(persons)}


def is_cohort_directory(doc) -> bool:
    """Whether ``doc`` is a cohort directory (else, presumably, a single round's)."""
    return isinstance(doc, dict) and doc.get("format") == COHORT_DIRECTORY_FORMAT


def _layout(doc, where: str) -> dict:
    if not (isinstance(doc, dict) and set(doc) == set(LAYOUT_KEYS)
            and all(isinstance(doc[k], int) and not isinstance(doc[k], bool) for k in LAYOUT_KEYS)):
        raise DPTopicError(f"{where}'s cohort layout is malformed (count, cohort_size, dropouts, collusion).")
    try:
        cohort_layout(**doc)
    except DPTopicError as e:
        raise DPTopicError(f"{where}'s cohort layout is refused: {' '.join(str(e).split())}") from None
    return dict(doc)


def check_cohort_directory(doc, where: str = "the cohort directory") -> dict:
    """The cohort directory ``doc`` checked: its shape, every directory's signature (one enrollment key), each
    cohort's members and the bridge's delegates as the rule seats them. Returns it."""
    if not is_cohort_directory(doc) or doc.get("version") != VERSION:
        raise DPTopicError(f"{where} is not a secure-sum cohort directory (the operator's invitations to a round in"
                           " cohorts come with one).")
    rid = doc.get("round_id")
    if not (isinstance(rid, str) and ROUND_ID.fullmatch(rid)) or not isinstance(doc.get("cohorts"), list):
        raise DPTopicError(f"{where} is malformed (its round id or cohorts).")
    layout = _layout(doc.get("layout"), where)
    groups, delegates = seating(rid, layout)
    if len(doc["cohorts"]) != len(groups):
        raise DPTopicError(f"{where} holds {len(doc['cohorts'])} cohorts, not the {len(groups)} its layout gives.")
    keys = set()
    for c, (d, members) in enumerate(zip(doc["cohorts"], groups)):
        d = check_directory(d, where=f"{where}'s cohort {c}")
        keys.add(d["enrollment_key"])
        if d["round_id"] != co.cohort_round_id(rid, c) or sorted(d["members"]) != members:
            raise DPTopicError(f"{where}'s cohort {c} is not the one the round's rule seats (its round id or"
                               " members): invite again.")
    b = check_directory(doc.get("bridge"), where=f"{where}'s bridge")
    keys.add(b["enrollment_key"])
    want = sorted(bridge_id(c, i) for c, ds in enumerate(delegates) for i in ds)
    if b["round_id"] != co.bridge_round_id(rid) or sorted(b["members"]) != want:
        raise DPTopicError(f"{where}'s bridge does not hold every cohort's delegates as the rule names them: invite"
                           " again.")
    if len(keys) != 1:
        raise DPTopicError(f"{where}'s directories are signed by different enrollment keys: invite again.")
    check_people(doc, next(iter(keys)), [i for g in groups for i in g], where)
    return doc


def read_cohort_directory(path) -> dict:
    """The cohort directory file at ``path``, checked (:func:`check_cohort_directory`)."""
    return check_cohort_directory(_read(path, "directory"), where=f"the directory {path}")


def read_cohort_invitation(path) -> dict:
    """An invitation file, checked (:func:`~dptopic.protocol.secure_sum.enrollment.read_invitation`), with its round in
    cohorts: ``"cohorts": {"round_id", "cohort", "layout"}`` (None for a single round's invitation) and ``"bridge"``: a
    delegate's invitation to the bridge (``read_invitation``'s keys), or None."""
    inv = read_invitation(path)
    doc = _read(path, "invitation")     # read and checked as read_invitation did (a repeated warning is one line)
    cohorts, bridge = doc.get("cohorts"), doc.get("bridge")
    inv["cohorts"], inv["bridge"] = None, None
    if cohorts is None:
        return inv
    bad = DPTopicError(f"{path} is not a secure-sum invitation to a round in cohorts (its cohort or bridge part is"
                       " malformed).")
    if not (isinstance(cohorts, dict) and isinstance(cohorts.get("round_id"), str)
            and ROUND_ID.fullmatch(cohorts["round_id"]) and isinstance(cohorts.get("cohort"), int)
            and not isinstance(cohorts["cohort"], bool) and cohorts["cohort"] >= 0):
        raise bad
    layout = _layout(cohorts.get("layout"), str(path))
    if inv["round_id"] != co.cohort_round_id(cohorts["round_id"], cohorts["cohort"]):
        raise bad
    inv["cohorts"] = {"round_id": cohorts["round_id"], "cohort": cohorts["cohort"], "layout": layout}
    if bridge is not None:
        if not (isinstance(bridge, dict) and bridge.get("round_id") == co.bridge_round_id(cohorts["round_id"])
                and bridge.get("contributor") == bridge_id(cohorts["cohort"], inv["contributor"])
                and isinstance(bridge.get("count"), int) and not isinstance(bridge["count"], bool)
                and isinstance(bridge.get("signing_key"), str) and HEX32.fullmatch(bridge["signing_key"])):
            raise bad
        inv["bridge"] = {"round_id": bridge["round_id"], "contributor": bridge["contributor"],
                         "count": bridge["count"], "signing_key": bytes.fromhex(bridge["signing_key"]),
                         "enrollment_key": inv["enrollment_key"], "path": str(path)}
    return inv


__all__ = ["COHORT_DIRECTORY_FORMAT", "cohort_layout", "plan_layout", "seating", "bridge_id",
           "make_cohort_invitations", "is_cohort_directory", "check_cohort_directory", "read_cohort_directory",
           "read_cohort_invitation"]
