"""Enrollment in a secure-sum round that the server cannot forge: the operator's invitations and directory.

The operator (not the server) runs ``dptopic secure-sum invite``: it draws one Ed25519 signing key per contributor,
writes each to an *invitation* file for that contributor alone, and signs the list of the public keys, the
*directory*, with an enrollment key that stays with the operator. The server is started with the directory (public)
and admits a registration only when it is signed by a listed key not yet used; every contributor checks the
directory the server forwards against the enrollment key in its own invitation, so a roster entry the operator did
not issue, or a key the server put in a member's place, is refused by everyone.

Files (JSON, no pickle; the invitation and the enrollment key are written readable by their owner only):

- enrollment key: ``{"format": "dptopic-secure-sum-enrollment-key", "version": 1, "private_key": hex}``;
- directory: ``{"format": "dptopic-secure-sum-directory", "version": 1, "round_id", "enrollment_key": hex,
  "members": {id: Ed25519 public key hex}, "signature": hex, "layout": {...}, "committee": bool}`` (the signature
  covers the round and the members; ``layout`` and ``committee``, what the server must serve, are checked by the
  server as it starts);
- invitation: ``{"format": "dptopic-secure-sum-invitation", "version": 1, "round_id", "contributor": id,
  "count": N, "signing_key": hex, "enrollment_key": hex, "layout": {"count", "dropouts", "collusion"},
  "committee": bool}``.

**The operator's plan is pinned.** The degree of the neighbour graph and the threshold follow from the round's size
N, the dropout tolerance F and the collusion bound t (:func:`~dptopic.protocol.secure_sum.graph.plan_degree`). A
server that states fewer colluders than the operator planned for would lower the threshold, and with it what the masks
withstand, so the operator fixes them when it invites (:func:`round_layout`, :data:`LAYOUT_KEYS`): every invitation
and the directory name them, with the mode (a committee or none). A contributor refuses a server whose plan or mode
differs from its invitation's (:mod:`dptopic.contributor.secure_sum.default`'s ``check_invitation``), and the server
refuses to start a plan or mode other than its directory's. A round in cohorts pins its layout the same way, with its
cohort size (:mod:`dptopic.protocol.secure_sum.cohort_enrollment`).
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import warnings
from contextlib import contextmanager
from pathlib import Path

from ..._io import atomic_write_bytes, load_json, warn_if_shared
from ...errors import DPTopicError, ParameterError
from .crypto import new_signing_key, sign, signing_public, verify
from .graph import default_collusion, plan_degree
from .messages import HEX32, HEX_SIG, ROUND_ID, canonical, message
from .person_ids import PEOPLE_KEY, bind, check_people, checked_binding, people_entry

KEY_FORMAT = "dptopic-secure-sum-enrollment-key"
DIRECTORY_FORMAT = "dptopic-secure-sum-directory"
INVITATION_FORMAT = "dptopic-secure-sum-invitation"
VERSION = 1
MAX_COUNT = 1_000_000
LAYOUT_KEYS = ("count", "dropouts", "collusion")
"""What an invitation to a single round pins of the operator's plan, and its directory names (module note): the
round's size N, how many may drop out (F) and how many may collude with the server (t)."""


def checked_counts(count, dropouts=None, collusion=None) -> tuple[int, int, int]:
    """``(count, dropouts, collusion)`` of a round the operator invites to, checked (one line naming the parameter):
    ``count`` in [3, :data:`MAX_COUNT`], ``dropouts`` in [0, count) (default a tenth), ``collusion`` 0 or more
    (default :func:`~dptopic.protocol.secure_sum.graph.default_collusion`). Shared by a single round's layout and a
    round in cohorts' (:func:`~dptopic.protocol.secure_sum.cohort_enrollment.cohort_layout`)."""
    if isinstance(count, bool) or not isinstance(count, int):
        raise ParameterError("invalid {count=}: an integer.", "count", count)
    if not 3 <= count <= MAX_COUNT:
        raise ParameterError("invalid {count=}: an integer in [3, {most}] (one invitation per contributor).", "count",
                             count, most=MAX_COUNT)
    dropouts = count // 10 if dropouts is None else dropouts
    if isinstance(dropouts, bool) or not isinstance(dropouts, int) or not 0 <= dropouts < count:
        raise ParameterError("{dropouts=} must lie in [0, {n}).", "dropouts", dropouts, n=count)
    collusion = default_collusion(count) if collusion is None else collusion
    if isinstance(collusion, bool) or not isinstance(collusion, int) or collusion < 0:
        raise ParameterError("invalid {collusion=}: an integer, 0 or more.", "collusion", collusion)
    return count, dropouts, collusion


def round_layout(count: int, dropouts: int | None = None, collusion: int | None = None) -> dict:
    """The layout a single round's invitations pin (:data:`LAYOUT_KEYS`; defaults as :func:`checked_counts`), refused
    in one line when no round of that size can carry it: no honest noise share besides the protected person's own
    (``count - dropouts - collusion - 1 < 1``), or no neighbour graph that survives the dropouts
    (:func:`~dptopic.protocol.secure_sum.graph.plan_degree`): the server would refuse the same plan."""
    count, dropouts, collusion = checked_counts(count, dropouts, collusion)
    if count - dropouts - collusion - 1 < 1:
        raise ParameterError("{dropouts=} and {collusion=} with {n} contributors leave no honest noise share besides"
                             " the protected person's own: lower them (their sum at most {most}).", "dropouts",
                             dropouts, values={"collusion": collusion}, n=count, most=count - 2)
    plan_degree(count, dropouts, collusion)
    return {"count": count, "dropouts": dropouts, "collusion": collusion}


def layout_of(plan) -> dict:
    """The layout (:data:`LAYOUT_KEYS`) of a :class:`~dptopic.protocol.secure_sum.plan.SecureSumPlan`: what a
    server's plan is compared with."""
    return {"count": int(plan.n), "dropouts": int(plan.dropouts), "collusion": int(plan.collusion)}


def layout_difference(stated: dict, pinned: dict, template: str = "{key} {stated} (accepted: {pinned})") -> str:
    """The keys of ``pinned`` (a layout: a single round's, or a round in cohorts') on which ``stated`` differs, each
    written by ``template`` (``{key}``, ``{stated}``, ``{pinned}``) and joined by commas; ``""`` when they agree. What
    a contributor (of a single round or a round in cohorts) and a server say when a plan is not the one the
    invitations pin."""
    return ", ".join(template.format(key=k, stated=stated.get(k), pinned=pinned[k]) for k in pinned
                     if stated.get(k) != pinned[k])


def _checked_layout(doc, where: str) -> dict:
    """A single round's layout as a file states it, checked: exactly :data:`LAYOUT_KEYS`, integers, one a round can
    carry (:func:`round_layout`)."""
    if not (isinstance(doc, dict) and set(doc) == set(LAYOUT_KEYS)
            and all(isinstance(doc[k], int) and not isinstance(doc[k], bool) for k in LAYOUT_KEYS)):
        raise DPTopicError(f"{where}'s plan (layout) is malformed: count, dropouts and collusion, integers.")
    try:
        return round_layout(**doc)
    except DPTopicError as e:
        raise DPTopicError(f"{where}'s plan (layout) is refused: {' '.join(str(e).split())}") from None


def directory_message(round_id: str, members: dict) -> bytes:
    """What the enrollment key signs: the round and every member's public signing key."""
    return message("directory", round_id, members)


SECRETS = {"invitation": "your signing key for the round", "enrollment key": "the key that enrolls the round's"
           " contributors"}
"""The files of a round that hold a secret, and what: each is written readable by its owner only, and a reader
warns when others can read it (:func:`~dptopic._io.warn_if_shared`)."""


_GIVE = {"invitation": "give the invitation your round's operator sent you",
         "directory": "give the directory.json that 'dptopic secure-sum invite' wrote",
         "enrollment key": "give the enrollment key 'dptopic secure-sum invite' created"}


def _read(path, what: str) -> dict:
    """The JSON object in the secure-sum file ``path`` (``what``: "invitation", "directory", "enrollment key"); one
    line naming the file when it cannot be read, is not UTF-8, is not JSON or not an object. A file of
    :data:`SECRETS` that others can read is read with a warning naming it."""
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = "not UTF-8 text" if isinstance(e, UnicodeDecodeError) else "it is a folder, not a file" \
            if p.is_dir() else e.strerror or type(e).__name__
        raise DPTopicError(f"cannot read the {what} {p}: {why}; {_GIVE.get(what, 'give another file')}.") from None
    try:
        doc = load_json(text, f"the {what} {p}")
    except DPTopicError:
        raise
    except ValueError as e:      # json.JSONDecodeError: where the file stops being JSON
        raise DPTopicError(f"the {what} {p} is not JSON (line {getattr(e, 'lineno', '?')}, column"
                           f" {getattr(e, 'colno', '?')}): {_GIVE.get(what, 'give another file')}.") from None
    if not isinstance(doc, dict):
        raise DPTopicError(f"{p} is not a secure-sum {what} (not a JSON object).")
    if what in SECRETS and doc.get("format") in (KEY_FORMAT, INVITATION_FORMAT):     # a file that holds one
        warn_if_shared(p, f"the {what}", SECRETS[what])
    return doc


def _private_json(path: Path, doc: dict) -> None:
    atomic_write_bytes(path, json.dumps(doc, indent=1).encode() + b"\n", private=True)


def _unwritable(folder: Path, parameter: str, path: str, why: str) -> ParameterError:
    return ParameterError("cannot write {" + parameter + "} {path}: the folder {folder} {why}; give a folder you may"
                          " write, or make it writable (chmod u+w {folder}).", parameter, path=path,
                          folder=str(folder), why=why)


def check_writable_folder(path: Path, parameter: str, shown: str) -> None:
    """Refuse, in one line naming ``parameter`` (``out``, ``key``) and the folder, a ``path`` that could not be
    written: the nearest folder that exists above it (or itself) is not a folder this user may write. Checked before
    anything is written (root may write anywhere; a disk mounted read-only is found when the files are written,
    :func:`writing_folder`)."""
    folder = Path(path).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if folder.exists() and not folder.is_dir():
        raise _unwritable(folder, parameter, shown, "is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _unwritable(folder, parameter, shown, "is read-only for you")


@contextmanager
def writing_folder(out: Path, parameter: str):
    """``with writing_folder(out, "out"):`` writes into the folder ``out`` (made, with its parents, on entry): an
    ``OSError`` while it writes (a read-only folder or disk, a full disk) is one line naming ``parameter`` and the
    folder, and a folder it made is removed again with what was written into it."""
    out = Path(out)
    made = None
    if not out.exists():
        made = out
        while not made.parent.exists() and made.parent != made:
            made = made.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
        yield out
    except OSError as e:
        folder = out if out.is_dir() else (made or out).parent
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise _unwritable(folder, parameter, str(out), f"cannot be written ({e.strerror or e})") from None


def load_enrollment_key(path, create: bool = False) -> tuple[bytes, bool]:
    """``(private key, created)``: the operator's enrollment key in ``path``, made (readable by its owner only) when
    ``create`` and the file does not exist."""
    p = Path(path)
    if not p.exists():
        if not create:
            raise DPTopicError(f"no enrollment key at {p}.")
        key = new_signing_key()
        try:
            _private_json(p, {"format": KEY_FORMAT, "version": VERSION, "private_key": key.hex()})
        except OSError as e:
            raise _unwritable(p.parent, "key", str(p), f"cannot be written ({e.strerror or e})") from None
        return key, True
    doc = _read(p, "enrollment key")
    hex_key = doc.get("private_key")
    if doc.get("format") != KEY_FORMAT or doc.get("version") != VERSION or not (
            isinstance(hex_key, str) and HEX32.fullmatch(hex_key)):
        raise DPTopicError(f"{p} is not a secure-sum enrollment key (dptopic secure-sum invite writes one).")
    return bytes.fromhex(hex_key), False


def contributor_ids(count: int) -> list[str]:
    """The ids of a round of ``count``: ``0001``, ``0002``, ... (at least four digits)."""
    width = max(4, len(str(count)))
    return [f"{i:0{width}d}" for i in range(1, count + 1)]


def writable_out(out, key) -> Path:
    """The folder ``out`` that invitations are written into, checked before anything is written (both kinds of
    invitations, a single round's and a round in cohorts'): new or empty, and writable, as the folder of the
    enrollment key at ``key`` when the key is still to be made (nothing written, or all); one line naming the
    parameter otherwise."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ParameterError("{out} {path} exists and is not an empty folder: invitations are written into a new"
                             " folder (they are never overwritten).", "out", str(out), path=str(out))
    if not Path(key).exists():      # both folders checked before the key is made: nothing written, or all
        check_writable_folder(Path(key).parent, "key", str(key))
    check_writable_folder(out, "out", str(out))
    return out


def make_invitations(key, count: int | None, out, round_id: str | None = None, committee: bool = False,
                     dropouts: int | None = None, collusion: int | None = None, ids=None, ledger=None) -> dict:
    """Write ``count`` invitations and the signed directory into the new folder ``out`` with the enrollment key at
    ``key`` (created if missing); returns ``{"round_id", "count", "layout", "directory", "invitations",
    "key_created"}``. ``round_id``: the round's name (default: random). ``committee``: the round runs in committee
    mode (:mod:`dptopic.protocol.secure_sum.committee`); each invitation says so, and a contributor takes part in that
    mode only (the configuration, then the committee mode's 3 requests). ``dropouts`` (F, default a tenth) and
    ``collusion`` (t, default :func:`~dptopic.protocol.secure_sum.graph.default_collusion`): the operator's plan,
    pinned in
    every invitation and the directory (module note, :func:`round_layout`): the server must serve that plan and
    mode, and each contributor refuses one that states others. ``ids``: the person ids the invitations are for (as
    the central releases' person field holds them; ``count`` then None or their number) and ``ledger`` (the dataset
    ledger those releases are recorded on): each invitation names its person, and the directory each number's
    pseudonym, so that the round is charged to the same people (:mod:`dptopic.protocol.secure_sum.person_ids`)."""
    if not isinstance(committee, bool):
        raise ParameterError("invalid {committee=}: True or False.", "committee", committee)
    count, ids = checked_binding(ids, count, ledger)
    layout = round_layout(count, dropouts, collusion)
    round_id = os.urandom(8).hex() if round_id is None else round_id
    if not isinstance(round_id, str) or not ROUND_ID.fullmatch(round_id):
        raise ParameterError("invalid {round_id=}: 1-64 of A-Z a-z 0-9 _ -.", "round_id", round_id)
    out = writable_out(out, key)
    numbers = contributor_ids(count)
    persons, pseudonyms = bind(ids, numbers, ledger, round_id) if ids is not None else ({}, None)
    private, created = load_enrollment_key(key, create=True)
    ids = numbers
    keys = {i: new_signing_key() for i in ids}
    members = {i: signing_public(k).hex() for i, k in keys.items()}
    enrollment = signing_public(private).hex()
    directory = {"format": DIRECTORY_FORMAT, "version": VERSION, "round_id": round_id, "enrollment_key": enrollment,
                 "members": members, "signature": sign(private, directory_message(round_id, members)),
                 "layout": layout, "committee": committee,
                 **({PEOPLE_KEY: people_entry(private, round_id, pseudonyms)} if pseudonyms else {})}
    with writing_folder(out, "out"):
        atomic_write_bytes(out / "directory.json", canonical(directory) + b"\n")
        for i, k in keys.items():
            _private_json(out / f"invitation-{i}.json", {"format": INVITATION_FORMAT, "version": VERSION,
                                                        "round_id": round_id, "contributor": i, "count": count,
                                                        "signing_key": k.hex(), "enrollment_key": enrollment,
                                                        "layout": layout, "committee": committee,
                                                        **({"person": persons[i]} if persons else {})})
    return {"round_id": round_id, "count": count, "layout": layout, "directory": str(out / "directory.json"),
            "invitations": str(out / f"invitation-{ids[0]}.json") + " ...", "key_created": created,
            "people": len(persons)}


_CHECKED: dict = {}
"""Directories that passed :func:`check_directory`, by their whole content (round, key, signature, every member): a
process that plays many contributors of one round checks its directory's N entries and signature once."""


def check_directory(doc, enrollment_key: str | None = None, where: str = "the directory") -> dict:
    """The directory ``doc`` checked: its shape, its signature under its own enrollment key, and (``enrollment_key``,
    the key a contributor holds from its invitation) that this is the key that signed it. Returns the directory."""
    if not isinstance(doc, dict) or doc.get("format") != DIRECTORY_FORMAT or doc.get("version") != VERSION:
        raise DPTopicError(f"{where} is not a secure-sum directory (dptopic secure-sum invite writes one).")
    round_id, members, key, sig = doc.get("round_id"), doc.get("members"), doc.get("enrollment_key"), \
        doc.get("signature")
    try:        # the content, exactly: a directory that differs in any byte is checked afresh
        seen = (round_id, key, sig, tuple(members.items())) if isinstance(members, dict) else None
        checked = seen is not None and seen in _CHECKED
    except TypeError:       # something unhashable where a string belongs: malformed, found below
        seen, checked = None, False
    if not checked:
        if not (isinstance(round_id, str) and ROUND_ID.fullmatch(round_id) and isinstance(members, dict)
                and 3 <= len(members) <= MAX_COUNT and isinstance(key, str) and HEX32.fullmatch(key)
                and isinstance(sig, str) and HEX_SIG.fullmatch(sig)
                and all(isinstance(i, str) and ROUND_ID.fullmatch(i) and isinstance(k, str) and HEX32.fullmatch(k)
                        for i, k in members.items())):
            raise DPTopicError(f"{where} is malformed (its round id, members, enrollment key or signature).")
        if len(set(members.values())) != len(members):
            raise DPTopicError(f"{where} lists one signing key for two members: refused.")
    if enrollment_key is not None and key != enrollment_key:
        raise DPTopicError(f"{where} is signed by another enrollment key than the one in your invitation: it was not"
                           " issued by your round's operator; nothing sent.")
    if not checked:
        if not verify(bytes.fromhex(key), sig, directory_message(round_id, members)):
            raise DPTopicError(f"{where}'s signature does not verify: it was altered after the operator signed it.")
        if len(_CHECKED) >= 4:
            _CHECKED.clear()
        _CHECKED[seen] = True
    if "layout" in doc and _checked_layout(doc["layout"], where)["count"] != len(members):
        raise DPTopicError(f"{where}'s plan (layout) is for {doc['layout']['count']} contributors, but it lists"
                           f" {len(members)}.")
    if not isinstance(doc.get("committee", False), bool):
        raise DPTopicError(f"{where}'s committee is not true or false.")
    return doc


def read_directory(path) -> dict:
    """The directory file at ``path`` (the server's ``directory``), checked (:func:`check_directory`; the people its
    invitations name too, :func:`~dptopic.protocol.secure_sum.person_ids.check_people`)."""
    doc = check_directory(_read(path, "directory"), where=f"the directory {path}")
    check_people(doc, doc["enrollment_key"], doc["members"], where=f"the directory {path}")
    return doc


def read_invitation(path) -> dict:
    """The invitation file at ``path``, checked: ``{"round_id", "contributor", "count", "signing_key": bytes,
    "enrollment_key": hex, "committee": bool, "layout", "path"}`` (``committee``: the operator invited to a
    committee-mode round; absent in the file means False. ``layout``: the operator's plan it pins, :data:`LAYOUT_KEYS`;
    None in an invitation to a round in cohorts, whose layout is its cohort part's, or of an older dptopic.
    ``person``: the person id it was written for, or None)."""
    doc = _read(path, "invitation")
    rid, who, count, key, enroll = (doc.get(k) for k in ("round_id", "contributor", "count", "signing_key",
                                                          "enrollment_key"))
    if doc.get("format") != INVITATION_FORMAT or doc.get("version") != VERSION or not (
            isinstance(rid, str) and ROUND_ID.fullmatch(rid) and isinstance(who, str) and ROUND_ID.fullmatch(who)
            and isinstance(count, int) and not isinstance(count, bool) and 3 <= count <= MAX_COUNT
            and isinstance(key, str) and HEX32.fullmatch(key) and isinstance(enroll, str) and HEX32.fullmatch(enroll)
            and isinstance(doc.get("committee", False), bool) and isinstance(doc.get("person", ""), str)):
        raise DPTopicError(f"{path} is not a secure-sum invitation (the round's operator writes them with dptopic"
                           " secure-sum invite).")
    layout = doc.get("layout")
    if layout is not None and _checked_layout(layout, str(path))["count"] != count:
        raise DPTopicError(f"{path}'s plan (layout) is for {layout['count']} contributors, its count {count}: ask the"
                           " round's operator for a new invitation.")
    return {"round_id": rid, "contributor": who, "count": count, "signing_key": bytes.fromhex(key),
            "enrollment_key": enroll, "committee": doc.get("committee", False), "layout": layout,
            "person": doc.get("person"), "path": str(path)}


def read_invitations(folder) -> list[dict]:
    """Every invitation in ``folder`` (``invitation-*.json``, in the order of their ids): a simulation's people."""
    p = Path(folder)
    files = sorted(p.glob("invitation-*.json")) if p.is_dir() else []
    if not files:
        raise ParameterError("{invitations} {folder} holds no invitation-*.json: give the folder 'dptopic secure-sum"
                             " invite' wrote.", "invitations", str(folder), folder=str(folder))
    with warnings.catch_warnings(record=True) as seen:     # one line for the folder, not one per invitation
        warnings.simplefilter("always")
        invitations = [read_invitation(f) for f in files]
    shared = [w for w in seen if str(w.message).startswith("the invitation ")]
    for w in seen:
        if w not in shared:
            warnings.warn(w.message, w.category, stacklevel=2)
    if shared:
        warnings.warn(f"{len(shared)} of the {len(files)} invitations in {p} are readable by other users and each"
                      " holds a contributor's signing key: make them yours only with chmod 600"
                      f" {shlex.quote(str(p))}/invitation-*.json.", UserWarning, stacklevel=2)
    return invitations
