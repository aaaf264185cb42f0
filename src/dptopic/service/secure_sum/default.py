"""The server of a secure-sum round (``dptopic serve``'s secure-sum kind): one round of secure aggregation of
per-person statistics.

The server admits, stores, forwards and unmasks; the protocol is :mod:`dptopic.protocol.secure_sum.default` (read its
note first) and enrollment :mod:`dptopic.protocol.secure_sum.enrollment`. Steps, each a state of the round (``GET
/v1/secure/round``):

``keys``          each invited contributor registers its keys, signed with its invitation's key
                  (``POST /v1/secure/keys``); the roster closes when every member of the directory has, or at the
                  registration deadline (``registration_s``) or by the admin with those registered: at least
                  ``n - F`` of them (a contributor who never registers is one of the F dropouts), each with the
                  threshold of its neighbours among them; else the round fails, in one line.
``shares``        each posts its neighbours' encrypted shares (``POST /v1/secure/shares``); closes when every roster
                  member has, or by the admin.
``upload{p}``     the signed, masked vector of step p (``POST /v1/secure/upload/{p}``, raw little-endian uint32 or
                  uint64, the plan's ring;
                  step 0 answers with the shares addressed to the uploader); closes when every member has uploaded,
                  or by the admin (``POST /v1/admin/secure/close``).
``consistency{p}``  the survivors sign the set of uploads (``POST /v1/secure/consistency/{p}``); closes when every
                  uploader has signed, or by the admin; the signatures are then public (``GET
                  /v1/secure/signatures/{p}``).
``unmask{p}``     the signers answer with shares (``POST /v1/secure/unmask/{p}``); once every needed seed has its
                  threshold of shares the server unmasks the sum (off the request's thread; resumed after a restart),
                  after step 0 chooses the kept words and opens step 1 (the co-occurrence over them), after step 1
``released``      the model (``GET /v1/model``, for ``dptopic pull``). Or ``failed``, with the reason: nothing released.

Every request is refused in one line when it does not fit the state, is not signed by the member it names, or is
malformed (one contributor's bad key, share or answer is refused, not the round); every message is stored durably
once per contributor and step (a retry of the same bytes is acknowledged as a replay, different bytes are refused).

The modules of this round: its settings and shared refusals (:mod:`.config`), its tables and how uploads are
stored (:mod:`.database`), its state as stored (:mod:`.store`), its steps and their failures (:mod:`.state`),
its messages (here: :class:`SecureRound`) and its HTTP app (:mod:`.default_app`).
"""
from __future__ import annotations

import hashlib
import json
import re
import time

import numpy as np
from sqlalchemy import func, select

from ...protocol.secure_sum import default as ss
from .config import STATES, ApiError, check_keys_message, check_signed, late_registration
from .database import _Q, t_consistency, t_keys, t_shares, t_sums
from .state import RoundState
from .web import _encode, _Encoded, _plain


class SecureRound(RoundState):
    """A secure-sum round's server: one method for each message of the protocol (each HTTP step: checked, stored
    once per contributor and step, acknowledged), and the views the contributors read, over the round's steps
    (:class:`~.state.RoundState`) and its stored state (:class:`~.store.RoundStore`)."""

    def roster_json(self) -> bytes:
        """The closed roster as JSON, encoded once: every contributor's view carries it (N entries, N times)."""
        cached = self.__dict__.get("_roster_json")
        if cached is not None:
            return cached
        data = _encode(self.roster_view())
        if self._roster is not None:        # closed: it never changes again
            self._roster_json = data
        return data

    def view(self) -> dict:
        """``GET /v1/secure/round``: the step, and the sets and words the contributors check."""
        self.fresh()
        with self.lock:
            st = dict(self.st)
            doc = {"round_id": self.round_id, "state": st["state"], "reason": st.get("reason")}
            if st["state"] == "keys":
                with self.engine.connect() as conn:
                    doc["keys_received"] = conn.execute(select(func.count()).select_from(t_keys)).scalar()
                if self.registration_deadline is not None:      # a Unix time: the roster then closes as it stands
                    doc["registration_closes_at"] = self.registration_deadline
            elif st["state"].startswith("upload"):     # an admin closes the step once its survivors are in
                with self.engine.connect() as conn:
                    doc["uploads_received"] = conn.execute(select(t_sums.c.count).where(
                        t_sums.c.phase == int(st["state"][-1]))).scalar() or 0
            for k in ("members", "uploaded", "signers", "kept", "phase"):
                if k in st:
                    doc[k] = st[k]
            return doc

    def encoded_view(self) -> dict:
        """:meth:`view` as the HTTP answers carry it: its lists (members, uploads, signers: N ids each; the kept
        words) encoded as JSON once for each state the round passes through, not once for each of the N
        contributors' requests of a step."""
        with self.lock:
            view = self.view()
            memo = self.__dict__.setdefault("_encoded", {})
            if memo.get("_st") is not self.st:
                memo.clear()
                memo["_st"] = self.st
            for k in ("members", "uploaded", "signers", "kept"):
                if k in view:
                    if k not in memo:
                        memo[k] = _Encoded(_plain(view[k]))
                    view[k] = memo[k]
            return view

    def roster_view(self) -> dict:
        """``GET /v1/secure/roster``: the closed roster."""
        self.fresh()
        if self.st["state"] == "keys":
            raise ApiError(409, "not_open", "the roster is handed out once it has closed (every invited contributor"
                                            " registered, or the registration deadline passed).")
        return self.roster()

    def _uploads_message(self, phase: int) -> bytes:
        """The consistency message of ``phase`` over the server's set of uploads (made once per state)."""
        self._in("uploaded")
        memo = self.__dict__["_sets"]
        if ("msg", phase) not in memo:
            memo[("msg", phase)] = ss.consistency_message(self.round_id, phase, self.st["uploaded"])
        return memo[("msg", phase)]

    def _signed(self, contributor: str, signature, msg: bytes) -> None:
        check_signed(self.members, contributor, signature, msg)

    _ONCE = {"shares": (_Q.shares_sha, None, "sent other shares: one set per round", None),
             "upload": (_Q.upload_sha, "members", "uploaded other bytes for step {phase}: one upload per contributor"
                        " and step", "is not a member of step {phase}"),
             "consistency": (_Q.signature_of, "uploaded", "signed step {phase}", "is not among the uploads of step"
                             " {phase}"),
             "unmask": (_Q.unmask_sha, "signers", "answered step {phase}", "did not sign the uploads of step {phase}")}
    """For each message stored once per contributor and step: the statement that finds the stored one, who may send
    it (the step's members, uploaders or signers), and what a second one and an outsider are told."""

    def _admit(self, conn, step: str, contributor: str, same, phase: int | None = None) -> bool:
        """Whether ``contributor``'s message of ``step`` (and ``phase``) is to be stored: False for a replay of the
        stored one (``same(row)``, acknowledged as such); refused with a 409 ``second_upload`` when another one is
        stored, a 409 out of its step, or a 403 ``not_in_round`` from a contributor who may not send it
        (:data:`_ONCE`). The same steps for every message of the round."""
        query, among, twice, outsider = self._ONCE[step]
        old = conn.execute(query, {"p_who": contributor} if phase is None else {"p_phase": phase, "p_who": contributor}
                           ).first()
        if old is not None:
            if same(old):
                return False
            raise ApiError(409, "second_upload", f"contributor {contributor!r} already {twice.format(phase=phase)}.")
        self._need(step if phase is None else f"{step}{phase}")
        if among is not None and contributor not in self._in(among):
            raise ApiError(403, "not_in_round", f"contributor {contributor!r} {outsider.format(phase=phase)}.")
        return True

    def post_keys(self, contributor: str, keys, signature) -> tuple[int, dict]:
        """A member registers its keys (signed); after the registration deadline the roster is closed first (a
        late registration is refused)."""
        check_keys_message(self.members, self.round_id, contributor, keys, signature)
        self.close_roster_if_due()
        with self._txn() as conn:
            old = conn.execute(_Q.keys_of, {"p_who": contributor}).first()
            if old is not None:
                if old.c == keys["c"] and json.loads(old.s) == keys["s"] and json.loads(old.b) == keys["b"]:
                    return 200, {"replayed": True, **self.view()}
                raise ApiError(409, "keys_changed", f"contributor {contributor!r} already registered other keys for"
                                                    " this round: one key set per invitation.")
            if self.st["state"] != "keys":
                raise late_registration(contributor, self.st["state"], self.st.get("reason"))
            mine = sorted({keys["c"], *keys["s"]})
            if len(mine) < 1 + len(keys["s"]) or conn.execute(_Q.used, {"p_keys": mine}).first() is not None:
                raise ApiError(409, "keys_reused", "a public key of this set was already registered by another"
                                                   " contributor: re-used keys are refused; draw fresh ones.")
            conn.execute(_Q.insert_keys, {"contributor": contributor, "c": keys["c"], "s": json.dumps(keys["s"]),
                                          "b": json.dumps(keys["b"]), "signature": signature, "at": time.time()})
            conn.execute(_Q.insert_used, [{"key": k} for k in mine])
            if conn.execute(_Q.n_keys).scalar() >= self.plan.n:
                self._close_roster(conn, "every invited contributor registered")
        return 201, {"replayed": False, "state": self.st["state"]}

    def post_shares(self, contributor: str, shares) -> tuple[int, dict]:
        """A registered member's encrypted shares, one for each of its neighbours."""
        self.fresh()
        if self.st["state"] == "keys":
            raise ApiError(409, "not_open", "the shares are sent once the roster has closed.")
        roster = self.roster()
        if contributor not in roster:
            raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not in this round's roster (it did"
                                                " not register before the roster closed).")
        mine = {v for v in self.graph()[contributor] if v in roster}
        if not isinstance(shares, dict) or set(shares) != mine or not all(
                isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9+/]{16,4000}={0,2}", v) for v in shares.values()):
            raise ApiError(400, "wrong_shape", "shares must be one base64 ciphertext for each of your neighbours in"
                                               " this round's graph that is in the roster, and none for anyone else.")
        body = json.dumps(shares, sort_keys=True)
        sha = hashlib.sha256(body.encode()).hexdigest()
        with self._txn() as conn:
            if not self._admit(conn, "shares", contributor, lambda old: old.sha == sha):
                return 200, {"replayed": True}
            conn.execute(_Q.insert_shares, {"sender": contributor, "body": "", "sha": sha})
            conn.execute(_Q.insert_share_to, [{"receiver": v, "sender": contributor, "ct": ct}
                                              for v, ct in shares.items()])
            n = conn.execute(_Q.n_shares).scalar()
            if n >= len(roster):
                self._open_upload(conn, 0, sorted(r[0] for r in conn.execute(select(t_shares.c.sender))))
        return 201, {"replayed": False}

    def post_upload(self, phase: int, contributor: str, body: bytes, signature) -> tuple[int, dict]:
        """A member's masked upload of ``phase`` (signed); step 0 answers with the shares addressed to it."""
        self._signed(contributor, signature, ss.upload_message(self.round_id, phase, contributor, body))
        sha = hashlib.sha256(body).hexdigest()
        with self.lock:     # held until the running sum in memory follows the commit
            with self._txn() as conn:
                extra = {}
                if not self._admit(conn, "upload", contributor, lambda old: old.sha == sha, phase):
                    if phase == 0:
                        extra["shares"] = self.shares_for(contributor, conn)
                    return 200, {"replayed": True, **extra}
                want = self.plan.upload_bytes(self.dim(phase))
                if len(body) != want:
                    raise ApiError(400, "wrong_shape", f"an upload of step {phase} is {self.dim(phase)} little-endian"
                                                       f" uint{self.plan.bits} ({want} bytes), not {len(body)} bytes.")
                conn.execute(_Q.insert_upload, {"phase": phase, "contributor": contributor, "sha": sha,
                                                "signature": signature, "at": time.time()})
                total, n = self._running(conn, phase)
                total = total + np.frombuffer(body, dtype=self.plan.dtype)      # modulo 2^bits: the ring wraps
                n += 1
                conn.execute(_Q.delete_sum, {"p_phase": phase})
                conn.execute(_Q.insert_sum, {"phase": phase, "data": total.tobytes(), "count": n})
                if phase == 0:
                    extra["shares"] = self.shares_for(contributor, conn)
                if n >= len(self.st["members"]):
                    self._close_upload(conn, phase)
                self._sums.pop(phase, None)     # until committed
            self._sums[phase] = (total, n)      # committed: the running sum in memory follows the database
        return 201, {"replayed": False, **extra}

    def post_consistency(self, phase: int, contributor: str, signature) -> tuple[int, dict]:
        """An uploader's signature over the set of uploads of ``phase``."""
        with self._txn() as conn:
            if not self._admit(conn, "consistency", contributor, lambda old: old.signature == signature, phase):
                return 200, {"replayed": True}
            self._signed(contributor, signature, self._uploads_message(phase))
            conn.execute(_Q.insert_signature, {"phase": phase, "contributor": contributor, "signature": signature})
            n = conn.execute(_Q.n_signatures, {"p_phase": phase}).scalar()
            if n >= len(self.st["uploaded"]):
                self._close_consistency(conn, phase)
        return 201, {"replayed": False}

    def signatures(self, phase: int) -> dict:
        """``GET /v1/secure/signatures/{phase}``: every stored consistency signature of ``phase`` (public once the step
        has closed)."""
        self.fresh()
        if STATES.index(self.st["state"]) <= STATES.index(f"consistency{phase}") and self.st["state"] != "failed":
            raise ApiError(409, "not_open", f"the signatures of step {phase} are handed out once its consistency step"
                                            " has closed.")
        with self.engine.connect() as conn:
            return {r.contributor: r.signature for r in conn.execute(
                select(t_consistency.c.contributor, t_consistency.c.signature).where(t_consistency.c.phase == phase))}

    def _check_answers(self, phase: int, contributor: str, answers) -> None:
        """One contributor's answers checked on arrival: each a well-formed share of a neighbour, of the secret its
        status calls for (refused alone, the round goes on)."""
        if not isinstance(answers, dict):
            raise ApiError(400, "wrong_shape", "answers must map each sender to {'kind': 'b'|'s', 'share': hex}.")
        graph = self.graph()
        members, uploaded = self._in("members"), self._in("uploaded")
        for sender, a in answers.items():
            if sender not in members or contributor not in graph.get(sender, ()):
                raise ApiError(400, "wrong_shape", f"an answer names {str(sender)[:40]!r}, who is not a neighbour of"
                                                   f" {contributor!r} among the members of step {phase}.")
            kind = "b" if sender in uploaded else "s"
            if not isinstance(a, dict) or a.get("kind") != kind or not ss.check_share(a.get("share")):
                raise ApiError(400, "wrong_shape", f"the answer for {str(sender)[:40]!r} must be {{'kind': {kind!r},"
                                                   f" 'share': {ss.SHARE_HEX} hex digits}} (a Shamir share).")

    def post_unmask(self, phase: int, contributor: str, answers, signature) -> tuple[int, dict]:
        """A signer's answers for the unmasking of ``phase`` (signed, checked on arrival)."""
        body = json.dumps(answers, sort_keys=True)
        sha = hashlib.sha256(body.encode()).hexdigest()
        start = False
        with self._txn() as conn:
            if not self._admit(conn, "unmask", contributor, lambda old: old.sha == sha, phase):
                return 200, {"replayed": True}
            self._signed(contributor, signature, ss.answers_message(self.round_id, phase, contributor, answers)
                         if isinstance(answers, dict) else b"")
            self._check_answers(phase, contributor, answers)
            counts = self._need_counts(conn, phase)     # the counters, made (if need be) before this answer is stored
            conn.execute(_Q.insert_unmask, {"phase": phase, "contributor": contributor, "body": body, "sha": sha})
            start = self._count_answers(conn, phase, contributor, answers, counts)
        if start:
            self._start_unmask(phase)
        return 201, {"replayed": False}

    def close(self) -> dict:
        """The admin's close of the step under way (the shares, an upload or a consistency step)."""
        with self._txn() as conn:
            state = self.st["state"]
            if state == "shares":
                self._open_upload(conn, 0, sorted(r[0] for r in conn.execute(select(t_shares.c.sender))))
            elif state.startswith("upload"):
                self._close_upload(conn, int(state[-1]))
            elif state.startswith("consistency"):
                self._close_consistency(conn, int(state[-1]))
            elif state == "keys":
                self._close_roster(conn, "by the admin")
            else:
                raise ApiError(409, "round_closed", f"the round is at step {state!r}: nothing to close.")
        return self.view()
