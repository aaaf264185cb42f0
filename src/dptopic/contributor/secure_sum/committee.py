"""A person's side of a committee-mode secure-sum round (:mod:`dptopic.protocol.secure_sum.committee`, read its note
first): one upload per sum for everyone, the consistency and unmasking steps for the committee's members only.

:class:`CommitteeContributor` is a :class:`~dptopic.contributor.secure_sum.default.SecureContributor` (the same
configuration, directory, roster and state-file checks, the same keys message as its prekey bundle) whose uploads
carry the committee's blobs, and which, when it sits on the committee, checks and signs the set of uploads and answers
for it. Every refusal is one line (:class:`~dptopic.contributor.secure_sum.default.ServerLied`).
"""
from __future__ import annotations

import base64
import json
import time
from pathlib import Path

from ..._io import atomic_write_bytes
from ...errors import DPTopicError
from ...protocol.secure_sum import committee as sc
from ...protocol.secure_sum.default import digest, keys_message, prg, set_digest, sign, to_ring, verify
from ...protocol.secure_sum.enrollment import read_invitation
from ..client import ServerError, ServiceClient
from .default import STATE_FORMAT, STATE_VERSION, ContributorSecrets, LeftOut, SecureContributor, ServerLied


class CommitteeContributor(SecureContributor):
    """One person in a committee-mode round (the plan's ``committee`` is not 0); the arguments are
    :class:`~dptopic.contributor.secure_sum.default.SecureContributor`'s."""

    COMMITTEE = True

    def __init__(self, *args, secrets: dict | None = None, **kwargs):
        self._drawn = secrets       # keys drawn before the configuration was known (take_part_committee)
        super().__init__(*args, **kwargs)
        self.Tc = self.plan.committee_threshold
        self.committee: list | None = None
        if secrets is not None and self.st["secrets"] != secrets:
            if self.st["sent"]:
                raise DPTopicError("this contributor's state file holds other keys than the ones just posted: give"
                                   " a fresh state file for a new round.")
            self.st["secrets"] = secrets
            self.secrets = ContributorSecrets.from_dict(secrets)
            self._write()

    def _load(self):
        """The state file; one written by :func:`take_part_committee` before the configuration was known (its keys,
        and no plan yet) takes this plan now: the plan was checked (``max_epsilon``, the directory) just before."""
        try:
            st = json.loads(self.path.read_text()) if self.path.exists() else None
        except (OSError, ValueError):
            st = None
        if isinstance(st, dict) and st.get("plan") is None and st.get("format") == STATE_FORMAT \
                and st.get("round_id") == self.round_id and st.get("contributor") == self.me:
            st["plan"] = self.plan.to_dict()
            self.st = st
            self._write()
        return super()._load()

    # ------------------------------------------------------------ the round's roster and committee
    def prekey(self) -> dict:
        """The prekey bundle for this round (posted before the round opens): this round's keys message, signed with
        the invitation key (:meth:`~dptopic.contributor.secure_sum.default.SecureContributor.registration`)."""
        return {"round_id": self.round_id, **self.registration()}

    def check_round(self, roster, committee) -> list:
        """The closed roster (checked as today, and every committee member's entry signed by its member) and the
        committee the server names, refused unless it is the public one (:func:`~dptopic.protocol.secure_sum.committee.
        committee_of` of the roster's ids)."""
        roster = self.check_roster(roster)
        mine = sc.committee_of(list(roster), self.round_id, self.plan.committee)
        self._check_committee(committee, mine)
        for m in mine:      # its blobs go to them: each entry signed by its member, as a neighbour's
            self._check_entry_signed(m, roster[m])
            self._check_entry_keys(m, roster[m])
        self.committee = mine
        return mine

    def _check_committee(self, committee, mine: list) -> None:
        """The committee the server names is the public one the roster gives (``mine``)."""
        if committee != mine:
            raise ServerLied("the server names another committee than the one the roster gives (the first"
                             f" {self.plan.committee} by the round's public hash): nothing sent.")

    # ------------------------------------------------------------ everyone: one upload per sum
    def committee_upload(self, phase: int, view: dict) -> tuple[bytes, dict, dict, str]:
        """``(body, header, blobs, signature)`` of ``POST /v1/secure/upload/{phase}`` in committee mode: the masked
        vector and the committee's blobs (made once), after checking the step's members (and at step 1 the kept
        words)."""
        self._live()
        if self.committee is None:
            raise DPTopicError("the roster and committee are needed before an upload (check_round).")
        members = self._ids(view.get("members"), f"members of step {phase}")
        member_set = self._id_set(members, f"members of step {phase}")
        if self.me not in member_set:
            raise LeftOut(f"the server left this contributor out of step {phase}.")
        kept = self._check_kept(view.get("kept")) if phase == 1 else None
        if phase == 1 and self._masked_set(0) is None:
            raise LeftOut("this contributor did not upload in step 0.")
        if phase == 1:
            self._check_members_of_step1(member_set)
        self._enough(member_set, "members", phase)
        self._check_same_members(phase, members)

        def make():
            self.st["masked_with"][str(phase)] = sorted(member_set)
            noisy = self._share(phase, self.statistic(phase, kept))
            dim = len(noisy)
            y = to_ring(noisy, self.plan.bits)
            y += prg(self.secrets.b[phase], dim, self.plan.bits)
            seeds = {}
            for v in self.graph[self.me]:
                if v not in member_set:
                    continue
                seed = sc.pair_seed_c(self.secrets.s[phase], bytes.fromhex(self.roster[v]["s"][phase]),
                                      self.round_id, phase, self.me, v)
                seeds[v] = seed
                m = prg(seed, dim, self.plan.bits)
                if self.me < v:
                    y += m
                else:
                    y -= m
            blobs = sc.make_blobs(self.me, self.secrets.c, self.roster, self.round_id, phase, self.committee,
                                  self.secrets.b[phase], seeds, self.Tc)
            header = {"blobs": {m: sc.blob_digest(b) for m, b in blobs.items()},
                      "pairs": {v: sc.pair_commitment(self.round_id, phase, self.me, v, s) for v, s in seeds.items()}}
            body = y.tobytes()
            return {"body": base64.b64encode(body).decode(), "header": header, "blobs": blobs,
                    "signature": sign(self.key, sc.upload_message(self.round_id, phase, self.me, digest(body),
                                                                  header))}
        sent = self._once(f"upload{phase}", make)
        return base64.b64decode(sent["body"]), sent["header"], sent["blobs"], sent["signature"]

    def _check_members_of_step1(self, member_set: frozenset) -> None:
        """Step 1's members were all members of step 0 (in committee mode only the committee signs a set of
        uploads)."""
        if not member_set <= self._masked_set(0):
            raise ServerLied("the server names members for step 1 who were not members of step 0: nothing sent.")

    # ------------------------------------------------------------ committee members only
    def _member(self) -> None:
        if self.committee is None or self.me not in self.committee:
            raise DPTopicError("this contributor is not on the round's committee.")

    def _checked_set(self, phase: int, view: dict) -> frozenset:
        """The set of uploads of ``phase`` the server names, checked as a survivor checks it today
        (:func:`~dptopic.protocol.secure_sum.committee.set_problem`) against the members this member masked with."""
        uploaded = self._ids(view.get("uploaded"), f"uploads of step {phase}")
        up = self._id_set(uploaded, f"uploads of step {phase}")
        masked = self._masked_set(phase)
        if masked is None:
            raise LeftOut(f"this committee member did not upload in step {phase}.")
        why = sc.set_problem(up, masked, self.graph, self.least, self.T)
        if why is not None:
            raise ServerLied(f"the server's set of uploads of step {phase} {why}: nothing signed or revealed.")
        return up

    def committee_consistency(self, phase: int, view: dict) -> dict:
        """``POST /v1/secure/consistency/{phase}`` (a committee member): its signature over the set of uploads, after
        checking it; one set per step (a second, different set is refused)."""
        self._live()
        self._member()
        up = self._checked_set(phase, view)
        return self._sign_once(phase, up, sc.consistency_message(self.round_id, phase, up))

    def _quorum(self, phase: int, up: frozenset, signatures) -> None:
        """Require ``T_c`` valid committee signatures over this member's own set of uploads."""
        if not isinstance(signatures, dict):
            raise ServerLied(f"the server's committee signatures of step {phase} are not an object: nothing"
                             " revealed.")
        msg = sc.consistency_message(self.round_id, phase, up)
        valid = sum(1 for m in self.committee
                    if m in signatures and verify(bytes.fromhex(self.members[m]), signatures[m], msg))
        if valid < self.Tc:
            raise ServerLied(f"the server holds {valid} valid committee signatures over your set of uploads of step"
                             f" {phase}, fewer than the committee's threshold {self.Tc}: it may have shown them"
                             " another set; nothing revealed.")

    def committee_unmask(self, phase: int, view: dict, signatures, uploads) -> dict:
        """``POST /v1/secure/unmask/{phase}`` (a committee member): for each uploader of its signed set whose upload is
        signed and whose blob decrypts, its share of ``b`` and of the pairwise seeds with its neighbours among the
        members who did not upload; after ``T_c`` committee signatures over that set. Made once per step.

        ``uploads``: ``{uploader: {"sha": hex SHA-256 of its body, "pairs": its pair commitments' digest, "path":
        the Merkle path of this member's blob digest, "signature", "blob"}}`` (the blob addressed to this member;
        :func:`~dptopic.protocol.secure_sum.committee.signed_upload`)."""
        self._live()
        self._member()
        up = self._checked_set(phase, view)
        signed = self.st["signed"].get(str(phase))
        if signed is None or signed["digest"] != set_digest(up):
            raise ServerLied(f"the server asks for the unmasking of step {phase} over another set of uploads than the"
                             " one you signed: nothing revealed.")
        if not isinstance(uploads, dict):
            raise ServerLied(f"the server's uploads of step {phase} are not an object: nothing revealed.")
        masked = self._masked_set(phase)

        def make():
            self._quorum(phase, up, signatures)
            answers, skipped = {}, []
            for u in sorted(up):
                got = uploads.get(u)
                neighbours = sorted(v for v in self.graph[u] if v in masked)
                try:
                    blob = got["blob"]
                    b, pairs = sc.open_blob(self.me, self.secrets.c, self.roster, self.round_id, phase, u, blob,
                                            neighbours) if self._upload_signed(phase, u, got) else (None, None)
                except (DPTopicError, KeyError, TypeError, AttributeError):
                    b = None
                if b is None:
                    skipped.append(u)       # a replaced or missing blob: nothing revealed for it
                    continue
                answers[u] = {"b": b.hex(), "pairs": {v: pairs[v].hex() for v in self._pairs_revealed(neighbours,
                                                                                                      up)}}
            return {"answers": answers, "skipped": skipped,
                    "signature": sign(self.key, sc.answers_message(self.round_id, phase, self.me, answers))}
        sent = self._once(f"unmask{phase}", make)
        return {"contributor": self.me, "answers": sent["answers"], "signature": sent["signature"]}

    def _upload_signed(self, phase: int, u: str, got: dict) -> bool:
        """Whether the blob ``got`` carries is one ``u`` signed with its upload (its digest, by the Merkle path, under
        the root ``u``'s signature covers)."""
        root = sc.root_from_path(self.me, sc.blob_digest(got["blob"]), got["path"])
        return root is not None and verify(bytes.fromhex(self.members[u]), got["signature"],
                                           sc.signed_upload(self.round_id, phase, u, got["sha"], root, got["pairs"]))

    def _pairs_revealed(self, neighbours: list, up: frozenset) -> list:
        """The neighbours of an uploader whose pairwise seeds' shares a member reveals: those not in the set of
        uploads (their masks stay on the sum otherwise; with the uploaded ones' they would come off the upload)."""
        return [v for v in neighbours if v not in up]

    def summary(self) -> dict:
        """What the contributor's run reports (with the committee)."""
        return {**super().summary(), "committee": self.plan.committee, "committee_threshold": self.Tc,
                "on_committee": bool(self.committee and self.me in self.committee)}


__all__ = ["CommitteeContributor", "NotCommittee"]


# ----------------------------------------------------------------------------- over HTTP
REQUESTS_COMMITTEE = ("POST /v1/secure/prekeys", "POST /v1/secure/upload/0", "POST /v1/secure/upload/1")
"""An ordinary contributor's requests in a committee-mode round whose steps each close within a long poll: its keys
(public keys only) held until the roster closes and answered with the configuration, the roster and the committee
(checked before anything of its data is computed: one that refuses leaves as a dropout), step 0's upload answered
once step 0's sum is released (with the kept words), step 1's upload."""
REQUESTS_COMMITTEE_MEMBER = ("POST /v1/secure/prekeys", "POST /v1/secure/upload/0",
                             "POST /v1/secure/consistency/0", "POST /v1/secure/unmask/0", "POST /v1/secure/upload/1",
                             "POST /v1/secure/consistency/1", "POST /v1/secure/unmask/1")
"""A committee member's: the same three, and its consistency signature and answers of each step."""
PREKEY_REQUESTS = ("GET /v1/config", "POST /v1/secure/prekeys")
"""Posting the keys ahead of the round (an option, :func:`post_prekey`: at enrolment); the round is then
``GET /v1/config?wait=upload0`` and the two uploads, 3 requests as well."""
ORDER = ("keys", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released")
LONG_POLL_S = 20.0


def _json_post(client, path: str, doc: dict) -> dict:
    _, _, data = client.request("POST", path, json.dumps(doc).encode(), {"Content-Type": "application/json"})
    return json.loads(data)


def post_prekey(server: str, bow, invitation, state, client=None, max_epsilon: float | None = None):
    """Post this person's prekey bundle for the server's round ahead of it (:data:`PREKEY_REQUESTS`); ``state``:
    the state file that keeps the bundle's private halves until the round (required: the round is a later run).
    Returns the :class:`CommitteeContributor`."""
    client = client or ServiceClient(server)
    client.keep_alive = True
    invitation = read_invitation(invitation) if not isinstance(invitation, dict) else invitation
    c = CommitteeContributor(client.get_json("/v1/config"), bow, invitation, state=state, max_epsilon=max_epsilon)
    _json_post(client, "/v1/secure/prekeys", {"contributor": c.me, "bundles": [c.prekey()]})
    c.st["sent"].setdefault("prekey", True)
    c._write()
    return c


def _kept_state(state):
    """The state file at ``state`` as a dict, or None (none, or not readable: the contributor's checks say why)."""
    try:
        st = json.loads(Path(state).read_text()) if state is not None else None
    except (OSError, ValueError):
        return None
    return st if isinstance(st, dict) else None


class NotCommittee(DPTopicError):
    """The server answered the keys with 404 or 405: it runs no committee-mode round (nothing was sent but public
    keys, and the state file this call began was removed)."""


def _drawn_keys(invitation: dict, state) -> tuple[dict, dict, bool]:
    """``(secrets, bundle, new)``: this person's keys for its invitation's round, drawn before the configuration is
    known (public keys only go out: nothing of the data) and kept first in the state file (without a plan: the plan
    is taken once checked); a rerun reuses the kept ones (the server answers a resent bundle as replayed)."""
    rid, me = invitation["round_id"], invitation["contributor"]
    st = None
    if state is not None and Path(state).exists():
        try:
            st = json.loads(Path(state).read_text())
        except (OSError, ValueError):
            raise DPTopicError(f"{state} is not a secure-sum state file: give another state file.") from None
        if not (isinstance(st, dict) and st.get("round_id") == rid and st.get("contributor") == me):
            raise DPTopicError(f"{state} belongs to another round or contributor than your invitation: give a fresh"
                               " state file for a new round.")
    new = not (st is not None and isinstance(st.get("secrets"), dict))
    if not new:
        secrets = ContributorSecrets.from_dict(st["secrets"])
    else:
        secrets = ContributorSecrets.new()
        if state is not None:
            atomic_write_bytes(Path(state), json.dumps(
                {"format": STATE_FORMAT, "version": STATE_VERSION, "round_id": rid, "contributor": me, "plan": None,
                 "secrets": secrets.to_dict(), "sent": {}, "revealed": {}, "masked_with": {}, "signed": {},
                 "finished": None}).encode(), private=True)
    keys = secrets.public(rid, me)
    return secrets.to_dict(), {"round_id": rid, "keys": keys,
                               "signature": sign(invitation["signing_key"], keys_message(rid, me, keys))}, new


def take_part_committee(server: str, bow, invitation, state, client=None, timeout: float = 3600.0,
                        max_epsilon: float | None = None, leave_after_masking: bool = False, make=None) -> dict:
    """Run a committee-mode round for one person; returns a summary. Its first request is its keys (public keys
    only), held until the roster closes and answered with the configuration, the roster and the committee, which it
    checks (``max_epsilon``, the directory, the committee) before anything of its data is computed; then each message
    is a post-and-wait whose answer brings the next step's view: :data:`REQUESTS_COMMITTEE` for an ordinary
    contributor, :data:`REQUESTS_COMMITTEE_MEMBER` for a committee member, a ``GET /v1/secure/round?wait=STEP`` per
    long poll where a step takes longer. When the state file records keys posted ahead (:func:`post_prekey`), the
    first request is ``GET /v1/config?wait=upload0`` instead. ``bow``: the person's bag of words, or a callable that
    makes it from the configuration (read once the plan is accepted). ``leave_after_masking``: the person masks step 0
    and leaves without sending it (a dropout). ``make``: ``make(config, secrets)`` returns the person's contributor
    for the round's configuration (``secrets``: the keys just posted, or None on a resumed run); default a
    :class:`CommitteeContributor` (a cohort's member is another,
    :mod:`dptopic.contributor.secure_sum.cohort_client`)."""
    client = client or ServiceClient(server)
    client.keep_alive = True
    invitation = read_invitation(invitation) if not isinstance(invitation, dict) else invitation
    wait = f"wait=upload0&timeout={min(LONG_POLL_S, timeout):g}"
    st = _kept_state(state)
    if st is not None and isinstance(st.get("plan"), dict) and not st["plan"].get("committee"):
        raise NotCommittee(f"{state} is the state of a round without a committee.")
    if st is not None and (st.get("plan") is not None or st.get("sent", {}).get("prekey")):     # joined: resume
        doc = client.get_json(f"/v1/config?{wait}")
        c = make(doc, None) if make is not None else CommitteeContributor(doc, None, invitation, state=state,
                                                                          max_epsilon=max_epsilon)
        view = doc.get("round")
    else:
        secrets, bundle, new = _drawn_keys(invitation, state)
        try:
            out = _json_post(client, f"/v1/secure/prekeys?{wait}&include=roster",
                             {"contributor": invitation["contributor"], "bundles": [bundle]})
        except ServerError as e:
            if e.status not in (404, 405):
                raise
            if new and state is not None:
                Path(state).unlink(missing_ok=True)
            raise NotCommittee(f"the server at {server} runs no committee-mode round.") from None
        doc = out.get("config")
        c = make(doc, secrets) if make is not None else CommitteeContributor(
            doc, None, invitation, state=state, max_epsilon=max_epsilon, secrets=secrets)
        c.st["sent"]["prekey"] = True
        c._write()
        view = out.get("view")
    c.bow = bow(doc) if callable(bow) else bow
    kept = None if state is None else str(state)
    if c.finished:
        return {**c.summary(), "steps": [], "finished": c.finished, "state": kept}
    t0 = [time.monotonic()]

    def reached(v, step) -> bool:
        st = v.get("state") if isinstance(v, dict) else None
        if st == "failed":
            c.finish(f"failed: {str(v.get('reason'))[:300]}")
            raise DPTopicError(f"the round failed: {v.get('reason')}.")
        if st not in ORDER:
            raise DPTopicError(f"the server's round is at an unknown step {str(st)[:40]!r}.")
        return ORDER.index(st) >= ORDER.index(step)

    def wait_for(step, v, include=""):
        while v is None or not reached(v, step):
            if time.monotonic() - t0[0] > timeout:
                raise DPTopicError(f"the round did not reach step {step!r} within {timeout:g} s: run again later"
                                   " (the state file keeps what was sent).")
            v = client.get_json(f"/v1/secure/round?wait={step}&contributor={c.me}"
                                + (f"&include={include}" if include else ""))
        t0[0] = time.monotonic()
        return v

    view = wait_for("upload0", view, "roster")
    if "roster" not in view:
        view = client.get_json(f"/v1/secure/round?contributor={c.me}&include=roster")
    c.check_round(view["roster"], view.get("committee"))
    member = c.me in c.committee
    sent = []
    for phase in (0, 1):
        view = wait_for(f"upload{phase}", view)
        if view["state"] == f"upload{phase}":
            try:
                body, header, blobs, sig = c.committee_upload(phase, view)
            except LeftOut:
                return {**c.summary(), "steps": sent, "left_out": f"step {phase}", "state": kept}
            if phase == 0 and leave_after_masking:
                return {**c.summary(), "steps": sent, "left": "step 0", "state": kept}
            meta = json.dumps({"header": header, "blobs": blobs}).encode()
            nxt = f"consistency{phase}" if member else ("upload1" if phase == 0 else "released")
            _, _, data = client.request("POST", f"/v1/secure/upload/{phase}?wait={nxt}", meta + body,
                                        {"Content-Type": "application/octet-stream", "Dptopic-Contributor": c.me,
                                         "Dptopic-Signature": sig, "Dptopic-Meta-Length": str(len(meta))})
            view = json.loads(data).get("view") or view
            sent.append(f"upload{phase}")
        if not member:
            continue
        view = wait_for(f"consistency{phase}", view)
        if view["state"] == f"consistency{phase}":      # the set of uploads is all a signature needs
            q = c.committee_consistency(phase, view)
            view = _json_post(client, f"/v1/secure/consistency/{phase}?wait=unmask{phase}&include=committee,"
                                      "signatures", q).get("view") or view
            sent.append(f"consistency{phase}")
        view = wait_for(f"unmask{phase}", view, "committee,signatures")
        if view["state"] == f"unmask{phase}" and c.me in view.get("signers", ()):
            if "uploads" not in view or "signatures" not in view:
                view = client.get_json(f"/v1/secure/round?contributor={c.me}&include=committee,signatures")
            q = c.committee_unmask(phase, view, view["signatures"], view["uploads"])
            nxt = "upload1" if phase == 0 else "released"
            view = _json_post(client, f"/v1/secure/unmask/{phase}?wait={nxt}", q).get("view") or view
            sent.append(f"unmask{phase}")
    wait_for("released", view)
    c.finish("released")
    return {**c.summary(), "steps": sent, "state": kept}
