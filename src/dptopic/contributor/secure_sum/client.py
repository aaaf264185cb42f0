"""The contributor's side of a secure-sum round over HTTP (``dptopic submit`` with an invitation, against a secure-sum
server), in either mode: :func:`take_part` (the default round) and :func:`take_part_committee` (the committee mode),
their posting, uploading and waiting for a step written once (:class:`_Steps`, :func:`post_json`,
:func:`post_upload`).

:class:`~dptopic.contributor.secure_sum.default.SecureContributor` (and
:class:`~dptopic.contributor.secure_sum.committee.CommitteeContributor`) builds and checks every step's message; the
functions here run the steps against a server, waiting between them (``GET /v1/secure/round``). With a state file,
everything a step sends is written there (atomically) before it is sent: a resumed run sends the same keys, shares,
uploads, signature and answers, never a second noise share, key set or signed set for one round; a step the server
lost (it does not list this contributor) is sent again from there. The many people of ``dptopic experiment
secure-sum`` are played by :mod:`dptopic.experiments.secure_sum_players`, not here.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from ..._io import atomic_write_bytes
from ...errors import DPTopicError
from ...protocol.secure_sum.crypto import sign
from ...protocol.secure_sum.default import keys_message
from ...protocol.secure_sum.enrollment import read_invitation
from ..client import ServerError, ServiceClient, default_state_folder
from .checks import LeftOut
from .committee import CommitteeContributor
from .default import SecureContributor
from .masks import ContributorSecrets
from .state import new_state, read_state, state_file_name

ORDER = ("keys", "shares", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released")


def post_json(client: ServiceClient, path: str, doc: dict) -> tuple[dict, int]:
    """``POST`` of ``doc`` as JSON: the answer, and the bytes sent."""
    body = json.dumps(doc).encode()
    _, _, data = client.request("POST", path, body, {"Content-Type": "application/json"})
    return json.loads(data), len(body)


def post_upload(client: ServiceClient, phase: int, me: str, body: bytes, signature: str, query: str = "",
                 meta: dict | None = None) -> dict:
    """``POST /v1/secure/upload/{phase}``: the masked vector ``body``, signed; in committee mode its ``meta`` (the
    header and the committee's blobs) goes first, its length in ``Dptopic-Meta-Length``."""
    headers = {"Content-Type": "application/octet-stream", "Dptopic-Contributor": me, "Dptopic-Signature": signature}
    if meta is not None:
        head = json.dumps(meta).encode()
        body = head + body
        headers["Dptopic-Meta-Length"] = str(len(head))
    _, _, data = client.request("POST", f"/v1/secure/upload/{phase}{query}", body, headers)
    return json.loads(data)


def _closed(e: ServerError) -> bool:
    """The step closed before this request (the others sufficed): nothing to send any more."""
    return e.code == "round_closed"


REQUESTS = ("GET /v1/config", "POST /v1/secure/keys", "POST /v1/secure/shares", "POST /v1/secure/upload/0",
            "POST /v1/secure/consistency/0", "POST /v1/secure/unmask/0", "POST /v1/secure/upload/1",
            "POST /v1/secure/consistency/1", "POST /v1/secure/unmask/1")
"""A contributor's requests in a round where no step outlasts a long poll (:func:`take_part`): the configuration, then
one post-and-wait per message (docs/research/secure_sum_round_trips.md says why no fewer)."""


LONG_POLL_S = 20.0
"""The longest a contributor asks the server to hold a request (a post-and-wait or a long poll): below its client's
30 s read timeout."""


STOP_HOLD_S = 2.0
"""The longest the server holds a request of a part that another thread may stop (:func:`take_part`'s ``stop``)."""


class Stopped(DPTopicError):
    """A part of a round ended by another thread (:func:`take_part`'s ``stop``): the state file keeps what was sent."""


class _Steps:
    """Waiting for the steps of one person's round (``order``: the mode's steps, :data:`ORDER` or
    :data:`COMMITTEE_ORDER`) from ``client``: a view at a step or beyond, one line if the round failed (its
    contributor ``c`` then finished) or names an unknown step; long polls until ``timeout`` seconds after the wait
    began (the last message sent or step reached; a post-and-wait's hold counts), each held at most
    :data:`LONG_POLL_S` (:data:`STOP_HOLD_S` where ``stop`` may end the part); a server that does not hold a request
    is polled every ``poll`` seconds."""

    def __init__(self, client, c, order: tuple, timeout: float, poll: float = 0.5,
                 stop: threading.Event | None = None):
        self.client, self.c, self.order, self.timeout, self.poll, self.stop = client, c, order, timeout, poll, stop
        self.since = time.monotonic()

    def reached(self, view, step) -> bool:
        """Whether ``view`` (the server's) is at ``step`` or beyond; one line if the round failed."""
        st = view.get("state") if isinstance(view, dict) else None
        if st == "failed":
            self.c.finish(f"failed: {str(view.get('reason'))[:300]}")
            raise DPTopicError(f"the round failed: {view.get('reason')}.")
        if st not in self.order:
            raise DPTopicError(f"the server's round is at an unknown step {str(st)[:40]!r}.")
        return self.order.index(st) >= self.order.index(step)

    def wait_for(self, step, include="", view=None):
        """The round's view at ``step`` or beyond: ``view`` (a post-and-wait's) when it got there, else long polls."""
        if view is None or not self.reached(view, step):
            view = self._poll_for(step, include)
        self.since = time.monotonic()
        return view

    def _hold(self) -> float:
        return LONG_POLL_S if self.stop is None else STOP_HOLD_S

    def _poll_for(self, step, include):
        t0 = self.since
        while True:     # long polling: the server answers once the step is reached (or after at most a long poll)
            self.stopped()
            asked = time.monotonic()
            hold = max(0.0, min(self._hold(), self.timeout - (asked - t0)))
            view = self.client.get_json(f"/v1/secure/round?wait={step}&timeout={hold:g}&contributor={self.c.me}"
                                        + (f"&include={include}" if include else ""))
            if self.reached(view, step):
                return view
            if time.monotonic() - t0 > self.timeout:
                raise DPTopicError(f"the round did not reach step {step!r} within {self.timeout:g} s: run again later"
                                   " (the state file keeps what was sent).")
            if time.monotonic() - asked < self.poll:        # a server that does not hold the request: poll
                if self.stop is None:
                    time.sleep(self.poll)
                else:
                    self.stop.wait(self.poll)

    def stopped(self) -> None:
        """:class:`Stopped` once another thread set ``stop``."""
        if self.stop is not None and self.stop.is_set():
            raise Stopped("stopped: another part of this contributor's round ended it (the state file keeps what was"
                          " sent).")

    def then(self, step, include=""):
        """The query of a post-and-wait whose answer brings the view at ``step`` (held at most ``timeout``)."""
        self.stopped()
        self.since = time.monotonic()
        hold = min(self._hold(), self.timeout)
        held = "" if hold == LONG_POLL_S else f"&timeout={hold:g}"      # the server's own longest hold is 20 s
        return f"?wait={step}" + (f"&include={include}" if include else "") + held


def take_part(server: str, bow, invitation, state=None, max_epsilon: float | None = None, client=None,
              poll: float = 0.5, timeout: float = 3600.0, contributor: SecureContributor | None = None,
              stop: threading.Event | None = None, leave_after_masking: bool = False) -> dict:
    """Run every step of the server's round for one person holding ``invitation`` (a file path or
    :func:`~dptopic.protocol.secure_sum.enrollment.read_invitation`'s dict); returns a summary. Each message is posted
    with
    ``?wait=NEXT`` (post-and-wait): its answer, once the round reaches the next step, carries that step's view (with
    the roster, or the neighbours' consistency signatures, where they are needed next), so a round whose steps each
    close within a long poll (:data:`LONG_POLL_S`) takes :data:`REQUESTS`, 9 requests per contributor: the
    configuration and one per message. A step that takes longer is waited for with ``GET
    /v1/secure/round?wait=STEP`` (one request per long poll); ``timeout``: the most seconds each step is waited for,
    counted from the message that waits for it (a post-and-wait is held no longer than that either). The connection
    is kept open between the requests. ``contributor``: the person's side already made from this server's
    configuration (a cohort's member or a bridge's delegate, :mod:`dptopic.contributor.secure_sum.cohort_client`);
    ``bow``, ``invitation``, ``state`` and ``max_epsilon`` are then its. ``stop``: an event another thread sets to end
    this one's part (:class:`Stopped`, raised before the next request; the server then holds each request at most
    :data:`STOP_HOLD_S` seconds, so the part ends that soon).
    ``leave_after_masking``: the person masks its upload of step 0 and leaves without sending it (a dropout, as
    ``dptopic experiment secure-sum`` plays one); the summary then says ``"left": "step 0"``."""
    client = client or ServiceClient(server)
    client.keep_alive = True        # a round is a dozen requests to one server: one connection for them all
    if contributor is None:
        invitation = read_invitation(invitation) if not isinstance(invitation, dict) else invitation
        contributor = SecureContributor(client.get_json("/v1/config"), bow, invitation, state=state,
                                        max_epsilon=max_epsilon)
    c = contributor
    if c.finished:
        return {**c.summary(), "steps": [], "finished": c.finished, "state": None if state is None else str(state)}

    steps = _Steps(client, c, ORDER, timeout, poll, stop)
    wait_for, then = steps.wait_for, steps.then
    sent = []
    answer, _ = post_json(client, "/v1/secure/keys" + then("shares", "roster"), c.registration())
    view = wait_for("shares", "roster", answer.get("view"))
    roster = view.get("roster")
    c.check_roster(roster if roster is not None else client.get_json("/v1/secure/roster"))
    if view["state"] == "shares":
        answer, _ = post_json(client, "/v1/secure/shares" + then("upload0"), c.shares_request(c.roster))
        view = answer.get("view") or view
        sent.append("shares")
    for phase in (0, 1):        # view: the latest the server gave (a step may have passed while this one waited)
        view = wait_for(f"upload{phase}", view=view)
        if view["state"] == f"upload{phase}":
            view, left = _upload(client, c, then, phase, view, sent, leave_after_masking)
            if left is not None:
                return {**c.summary(), "steps": sent, **left}
        view = wait_for(f"consistency{phase}", view=view)
        if view["state"] == f"consistency{phase}":
            try:
                view = _consistency(client, c, then, phase, view, sent)
            except LeftOut:
                return {**c.summary(), "steps": sent, "left_out": f"step {phase}"}
        view = wait_for(f"unmask{phase}", "signatures", view)
        if view["state"] == f"unmask{phase}" and str(phase) in c.st["signed"] and c.me in view.get("signers", ()):
            view = _unmask(client, c, then, phase, view, sent)
    wait_for("released", view=view)
    c.finish("released")
    return {**c.summary(), "steps": sent, "state": None if state is None else str(state)}


def _upload(client, c, then, phase: int, view: dict, sent: list, leave_after_masking: bool) -> tuple:
    """Step ``upload{phase}`` of :func:`take_part`: the masked upload, posted and waited on (at step 0 its answer
    brings the neighbours' shares). ``(the next view, None)``, or ``(view, what the summary says)`` when the server
    leaves this person out or the person leaves after masking."""
    try:
        body, sig = c.upload(phase, view)
    except LeftOut:
        return view, {"left_out": f"step {phase}"}
    if phase == 0 and leave_after_masking:
        return view, {"left": "step 0"}        # masked, then gone
    answer = post_upload(client, phase, c.me, body, sig, then(f"consistency{phase}"))
    if phase == 0 and isinstance(answer.get("shares"), dict):
        c.take_shares(answer["shares"])
    sent.append(f"upload{phase}")
    return answer.get("view") or view, None


def _consistency(client, c, then, phase: int, view: dict, sent: list) -> dict:
    """Step ``consistency{phase}`` of :func:`take_part`: the signature over the set of uploads, posted and waited on
    (:func:`_post_step`); the next view."""
    path = f"/v1/secure/consistency/{phase}" + then(f"unmask{phase}", "signatures")
    return _post_step(client, path, c.consistency(phase, view), f"consistency{phase}", view, sent)


def _unmask(client, c, then, phase: int, view: dict, sent: list) -> dict:
    """Step ``unmask{phase}`` of :func:`take_part`: the shares the unmasking needs (fetched if the view lacks them),
    posted and waited on (:func:`_post_step`); the next view."""
    if c.held is None:
        c.take_shares(client.get_json(f"/v1/secure/shares?contributor={c.me}"))
    signatures = view.get("signatures")
    if signatures is None:
        signatures = client.get_json(f"/v1/secure/signatures/{phase}")
    path = f"/v1/secure/unmask/{phase}" + then("upload1" if phase == 0 else "released")
    return _post_step(client, path, c.unmask(phase, view, signatures), f"unmask{phase}", view, sent)


def _post_step(client, path: str, message: dict, step: str, view: dict, sent: list) -> dict:
    """``message`` posted to ``path`` (a post-and-wait) for ``step``: the next view. A step that closed before it
    arrived (the others' messages sufficed) is no error, and a message the server took as late is not counted in
    ``sent``."""
    try:
        answer, _ = post_json(client, path, message)
    except ServerError as e:
        if not _closed(e):
            raise
        return view
    if not answer.get("late"):
        sent.append(step)
    return answer.get("view") or view


# ----------------------------------------------------------------------------- the committee mode
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
COMMITTEE_ORDER = ("keys", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released")
"""The steps of a committee-mode round."""


def post_prekey(server: str, bow, invitation, state, client=None, max_epsilon: float | None = None):
    """Post this person's prekey bundle for the server's round ahead of it (:data:`PREKEY_REQUESTS`); ``state``:
    the state file that keeps the bundle's private halves until the round (required: the round is a later run).
    Returns the :class:`CommitteeContributor`."""
    client = client or ServiceClient(server)
    client.keep_alive = True
    invitation = read_invitation(invitation) if not isinstance(invitation, dict) else invitation
    c = CommitteeContributor(client.get_json("/v1/config"), bow, invitation, state=state, max_epsilon=max_epsilon)
    post_json(client, "/v1/secure/prekeys", {"contributor": c.me, "bundles": [c.prekey()]})
    c.st["sent"].setdefault("prekey", True)
    c._write()
    return c


class NotCommittee(DPTopicError):
    """The server answered the keys with 404 or 405: it runs no committee-mode round (nothing was sent but public
    keys, and the state file this call began was removed)."""


def _drawn_keys(invitation: dict, state) -> tuple[dict, dict, bool]:
    """``(secrets, bundle, new)``: this person's keys for its invitation's round, drawn before the configuration is
    known (public keys only go out: nothing of the data) and kept first in the state file (without a plan: the plan
    is taken once checked); a rerun reuses the kept ones (the server answers a resent bundle as replayed)."""
    rid, me = invitation["round_id"], invitation["contributor"]
    st = read_state(state, strict=True)
    if st is not None:
        if not (isinstance(st, dict) and st.get("round_id") == rid and st.get("contributor") == me):
            raise DPTopicError(f"{state} belongs to another round or contributor than your invitation: give a fresh"
                               " state file for a new round.")
    new = not (st is not None and isinstance(st.get("secrets"), dict))
    if not new:
        secrets = ContributorSecrets.from_dict(st["secrets"])
    else:
        secrets = ContributorSecrets.new()
        if state is not None:
            atomic_write_bytes(Path(state), json.dumps(new_state(rid, me, None, secrets.to_dict())).encode(),
                               private=True)
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
    c, doc, view = _join_committee(server, client, invitation, state, timeout, max_epsilon, make)
    c.bow = bow(doc) if callable(bow) else bow
    kept = None if state is None else str(state)
    if c.finished:
        return {**c.summary(), "steps": [], "finished": c.finished, "state": kept}
    wait_for = _Steps(client, c, COMMITTEE_ORDER, timeout).wait_for
    view = wait_for("upload0", "roster", view)
    if "roster" not in view:
        view = client.get_json(f"/v1/secure/round?contributor={c.me}&include=roster")
    c.check_round(view["roster"], view.get("committee"))
    member = c.me in c.committee
    sent = []
    for phase in (0, 1):
        view = wait_for(f"upload{phase}", view=view)
        if view["state"] == f"upload{phase}":
            try:
                body, header, blobs, sig = c.committee_upload(phase, view)
            except LeftOut:
                return {**c.summary(), "steps": sent, "left_out": f"step {phase}", "state": kept}
            if phase == 0 and leave_after_masking:
                return {**c.summary(), "steps": sent, "left": "step 0", "state": kept}
            nxt = f"consistency{phase}" if member else ("upload1" if phase == 0 else "released")
            view = post_upload(client, phase, c.me, body, sig, f"?wait={nxt}",
                                {"header": header, "blobs": blobs}).get("view") or view
            sent.append(f"upload{phase}")
        if member:
            view = _committee_member_steps(client, c, wait_for, phase, view, sent)
    wait_for("released", view=view)
    c.finish("released")
    return {**c.summary(), "steps": sent, "state": kept}


def _join_committee(server: str, client, invitation: dict, state, timeout: float, max_epsilon, make) -> tuple:
    """How :func:`take_part_committee`'s person joins: ``(contributor, configuration, view)``. On a resumed run (the
    state file holds a plan or keys posted ahead) the configuration is long-polled for; else fresh keys are posted
    (:func:`_drawn_keys`), held until the roster closes, and the answer brings the configuration and the view.
    :class:`NotCommittee` for a server or a state file of a round without a committee."""
    wait = f"wait=upload0&timeout={min(LONG_POLL_S, timeout):g}"
    st = read_state(state)
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
            out, _ = post_json(client, f"/v1/secure/prekeys?{wait}&include=roster",
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
    return c, doc, view


def _committee_member_steps(client, c, wait_for, phase: int, view: dict, sent: list) -> dict:
    """A committee member's steps of ``phase`` in :func:`take_part_committee`: its signature over the set of uploads,
    then its answers for the unmasking once the committee's quorum signed (each posted and waited on); the next
    view."""
    view = wait_for(f"consistency{phase}", view=view)
    if view["state"] == f"consistency{phase}":      # the set of uploads is all a signature needs
        q = c.committee_consistency(phase, view)
        view = post_json(client, f"/v1/secure/consistency/{phase}?wait=unmask{phase}&include=committee,"
                                  "signatures", q)[0].get("view") or view
        sent.append(f"consistency{phase}")
    view = wait_for(f"unmask{phase}", "committee,signatures", view)
    if view["state"] == f"unmask{phase}" and c.me in view.get("signers", ()):
        if "uploads" not in view or "signatures" not in view:
            view = client.get_json(f"/v1/secure/round?contributor={c.me}&include=committee,signatures")
        q = c.committee_unmask(phase, view, view["signatures"], view["uploads"])
        nxt = "upload1" if phase == 0 else "released"
        view = post_json(client, f"/v1/secure/unmask/{phase}?wait={nxt}", q)[0].get("view") or view
        sent.append(f"unmask{phase}")
    return view


def person_bow(corpus) -> tuple:
    """One person's documents (all of ``corpus``) as the ``(indptr, indices, data)`` int64 arrays a contributor sums."""
    m = corpus.to_bow()
    return m.indptr.astype("int64"), m.indices.astype("int64"), m.data.astype("int64")


def state_path(given, invitation: dict):
    """Where a contributor keeps a round's secrets and what it sent: ``given`` (a file, or a folder that gets
    :func:`~dptopic.contributor.secure_sum.state.state_file_name`), by default the state folder ``submit`` uses (None
    given); None for ``"none"`` (a rerun then cannot resume). The name comes from the contributor's own invitation,
    never from what a server sends."""
    if given is not None and str(given).strip().lower() == "none":
        return None
    name = state_file_name(invitation["round_id"], invitation["contributor"])
    if given is None:
        return Path(default_state_folder()) / name
    p = Path(given)
    return p / name if p.is_dir() else p
