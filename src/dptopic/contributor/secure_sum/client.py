"""The contributor's side of a secure-sum round over HTTP (``dptopic submit`` with an invitation, against a secure-sum
server).

:class:`~dptopic.contributor.secure_sum.default.SecureContributor` builds and checks every step's message;
:func:`take_part` runs the steps against a server, waiting between them (``GET /v1/secure/round``). With a state
file, everything a step sends is written there (atomically) before it is sent: a resumed run sends the same keys,
shares, uploads, signature and answers, never a second noise share, key set or signed set for one round; a step the
server lost (it does not list this contributor) is sent again from there. The many people of ``dptopic experiment
secure-sum`` are played by :mod:`dptopic.experiments.secure_sum_players`, not here.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from ...errors import DPTopicError
from ...protocol.secure_sum.enrollment import read_invitation
from ..client import ServerError, ServiceClient, default_state_folder
from .default import LeftOut, SecureContributor, state_file_name

ORDER = ("keys", "shares", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released")


def _post_json(client: ServiceClient, path: str, doc: dict) -> tuple[dict, int]:
    body = json.dumps(doc).encode()
    _, _, data = client.request("POST", path, body, {"Content-Type": "application/json"})
    return json.loads(data), len(body)


def _post_upload(client: ServiceClient, phase: int, me: str, body: bytes, signature: str, query: str = "") -> dict:
    _, _, data = client.request("POST", f"/v1/secure/upload/{phase}{query}", body,
                                {"Content-Type": "application/octet-stream", "Dptopic-Contributor": me,
                                 "Dptopic-Signature": signature})
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

    def reached(view, step) -> bool:
        """Whether ``view`` (the server's) is at ``step`` or beyond; one line if the round failed."""
        st = view.get("state") if isinstance(view, dict) else None
        if st == "failed":
            c.finish(f"failed: {str(view.get('reason'))[:300]}")
            raise DPTopicError(f"the round failed: {view.get('reason')}.")
        if st not in ORDER:
            raise DPTopicError(f"the server's round is at an unknown step {str(st)[:40]!r}.")
        return ORDER.index(st) >= ORDER.index(step)

    since = [time.monotonic()]      # when the wait for the next step began: the last message sent or step reached

    def wait_for(step, include="", view=None):
        """The round's view at ``step`` or beyond: ``view`` (a post-and-wait's) when it got there, else long polls,
        until ``timeout`` seconds after the wait began (a post-and-wait's hold counts)."""
        if view is None or not reached(view, step):
            view = poll_for(step, include)
        since[0] = time.monotonic()
        return view

    def poll_for(step, include):
        t0 = since[0]
        while True:     # long polling: the server answers once the step is reached (or after at most a long poll)
            stopped()
            asked = time.monotonic()
            hold = max(0.0, min(LONG_POLL_S if stop is None else STOP_HOLD_S, timeout - (asked - t0)))
            view = client.get_json(f"/v1/secure/round?wait={step}&timeout={hold:g}&contributor={c.me}"
                                   + (f"&include={include}" if include else ""))
            if reached(view, step):
                return view
            if time.monotonic() - t0 > timeout:
                raise DPTopicError(f"the round did not reach step {step!r} within {timeout:g} s: run again later"
                                   " (the state file keeps what was sent).")
            if time.monotonic() - asked < poll:        # a server that does not hold the request: poll
                if stop is None:
                    time.sleep(poll)
                else:
                    stop.wait(poll)

    def stopped() -> None:
        if stop is not None and stop.is_set():
            raise Stopped("stopped: another part of this contributor's round ended it (the state file keeps what was"
                          " sent).")

    def then(step, include=""):
        """The query of a post-and-wait whose answer brings the view at ``step`` (held at most ``timeout``)."""
        stopped()
        since[0] = time.monotonic()
        hold = min(LONG_POLL_S if stop is None else STOP_HOLD_S, timeout)
        held = "" if hold == LONG_POLL_S else f"&timeout={hold:g}"      # the server's own longest hold is 20 s
        return f"?wait={step}" + (f"&include={include}" if include else "") + held

    sent = []
    answer, _ = _post_json(client, "/v1/secure/keys" + then("shares", "roster"), c.registration())
    view = wait_for("shares", "roster", answer.get("view"))
    roster = view.get("roster")
    c.check_roster(roster if roster is not None else client.get_json("/v1/secure/roster"))
    if view["state"] == "shares":
        answer, _ = _post_json(client, "/v1/secure/shares" + then("upload0"), c.shares_request(c.roster))
        view = answer.get("view") or view
        sent.append("shares")
    for phase in (0, 1):        # view: the latest the server gave (a step may have passed while this one waited)
        view = wait_for(f"upload{phase}", view=view)
        if view["state"] == f"upload{phase}":
            try:
                body, sig = c.upload(phase, view)
            except LeftOut:
                return {**c.summary(), "steps": sent, "left_out": f"step {phase}"}
            if phase == 0 and leave_after_masking:
                return {**c.summary(), "steps": sent, "left": "step 0"}        # masked, then gone
            answer = _post_upload(client, phase, c.me, body, sig, then(f"consistency{phase}"))
            if phase == 0 and isinstance(answer.get("shares"), dict):
                c.take_shares(answer["shares"])
            view = answer.get("view") or view
            sent.append(f"upload{phase}")
        view = wait_for(f"consistency{phase}", view=view)
        if view["state"] == f"consistency{phase}":
            try:
                path = f"/v1/secure/consistency/{phase}" + then(f"unmask{phase}", "signatures")
                answer, _ = _post_json(client, path, c.consistency(phase, view))
                view = answer.get("view") or view
                if not answer.get("late"):
                    sent.append(f"consistency{phase}")
            except LeftOut:
                return {**c.summary(), "steps": sent, "left_out": f"step {phase}"}
            except ServerError as e:
                if not _closed(e):
                    raise
        view = wait_for(f"unmask{phase}", "signatures", view)
        if view["state"] == f"unmask{phase}" and str(phase) in c.st["signed"] and c.me in view.get("signers", ()):
            if c.held is None:
                c.take_shares(client.get_json(f"/v1/secure/shares?contributor={c.me}"))
            signatures = view.get("signatures")
            if signatures is None:
                signatures = client.get_json(f"/v1/secure/signatures/{phase}")
            try:
                path = f"/v1/secure/unmask/{phase}" + then("upload1" if phase == 0 else "released")
                answer, _ = _post_json(client, path, c.unmask(phase, view, signatures))
                view = answer.get("view") or view
                if not answer.get("late"):
                    sent.append(f"unmask{phase}")
            except ServerError as e:     # the others' shares sufficed: the step closed before this answer
                if not _closed(e):
                    raise
    wait_for("released", view=view)
    c.finish("released")
    return {**c.summary(), "steps": sent, "state": None if state is None else str(state)}


def person_bow(corpus) -> tuple:
    """One person's documents (all of ``corpus``) as the ``(indptr, indices, data)`` int64 arrays a contributor sums."""
    m = corpus.to_bow()
    return m.indptr.astype("int64"), m.indices.astype("int64"), m.data.astype("int64")


def state_path(given, invitation: dict):
    """Where a contributor keeps a round's secrets and what it sent: ``given`` (a file, or a folder that gets
    :func:`~dptopic.contributor.secure_sum.default.state_file_name`), by default the state folder ``submit`` uses (None
    given); None for ``"none"`` (a rerun then cannot resume). The name comes from the contributor's own invitation,
    never from what a server sends."""
    if given is not None and str(given).strip().lower() == "none":
        return None
    name = state_file_name(invitation["round_id"], invitation["contributor"])
    if given is None:
        return Path(default_state_folder()) / name
    p = Path(given)
    return p / name if p.is_dir() else p
