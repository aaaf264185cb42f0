"""The default round's steps (:class:`RoundState`): its roster and registration deadline, the opening and
closing of each step (with the failures that end the round: fewer than ``n - F`` survivors, a contributor short of
its threshold of neighbours), the counting of the unmasking's answers, the unmasking itself (off
the request's thread, once, with the dataset ledger charged first) and the release.

An upload whose maker is left with fewer than the threshold of its neighbours among the uploads cannot be unmasked,
nor taken out of the sum, so the step fails; taking it out would rarely save the round (on the ring its neighbours
are then short in turn), and the plan's degree makes it rare under random dropouts (at most 1e-3 contributors
expected short). Fewer than ``n - F`` survivors at any step fail the round: the noise was calibrated for at least
that many shares.
"""
from __future__ import annotations

import base64
import json
import logging
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from ..._io import load_bundle
from ...accounting.skellam import rounded_norms
from ...errors import DPTopicError, ParameterText
from ...protocol.secure_sum import default as ss
from ...protocol.secure_sum.graph import neighbour_graph
from ..ledger import charge_secure_round
from .config import ApiError, SecureSumConfig
from .database import _Q, t_consistency, t_counts, t_keys, t_need, t_state, t_unmask, t_uploads
from .store import RoundStore

log = logging.getLogger("dptopic.service.secure_sum")


class RoundState(RoundStore):
    """The round's steps over its stored state (:class:`~.store.RoundStore`): each closes once its members are
    in (or by the admin, or at the registration deadline) and opens the next, or fails the round in one line."""

    setting_names: dict = {}      # how the round's failure reasons name its settings (create_secure_sum_app's)

    def __init__(self, cfg: SecureSumConfig):
        self._graph = neighbour_graph(sorted(cfg.directory["members"]), cfg.round_id, cfg.plan.degree)
        self.T = cfg.plan.threshold
        self._roster = None
        self._unmasking = None
        super().__init__(cfg)
        if self.st["state"].startswith("unmask"):      # killed between the last answer and the unmasking: resume
            phase = int(self.st["state"][-1])
            with self._txn() as conn:
                complete = self._need_counts(conn, phase)[0] == 0
            if complete:
                self._start_unmask(phase)

    def roster(self) -> dict:
        """``{id: {"c", "s", "b", "signature"}}`` (the registered keys, each signed by its member)."""
        if self._roster is not None:
            return self._roster
        self.fresh()
        with self.lock, self.engine.connect() as conn:     # not while a step closes (its rows uncommitted)
            roster = {r.contributor: {"c": r.c, "s": json.loads(r.s), "b": json.loads(r.b), "signature": r.signature}
                      for r in conn.execute(select(t_keys))}
        if self.st["state"] != "keys":      # closed: it never changes again
            self._roster = roster
        return roster

    def graph(self) -> dict:
        """The round's neighbour graph (from the directory and the plan: fixed before anyone registers)."""
        return self._graph

    def _in(self, key: str) -> set:
        """``set(self.st[key])``, built once for each state the round passes through."""
        memo = self.__dict__.setdefault("_sets", {})
        if memo.get("_st") is not self.st:
            memo.clear()
            memo["_st"] = self.st
        if key not in memo:
            memo[key] = set(self.st.get(key) or ())
        return memo[key]

    def _need(self, *states) -> None:
        if self.st["state"] not in states:
            raise ApiError(409, "round_closed" if self.st["state"] != "keys" else "not_open",
                           f"the round is at step {self.st['state']!r}"
                           + (f" ({self.st.get('reason')})" if self.st.get("reason") else "")
                           + f", not {' or '.join(repr(s) for s in states)}: nothing stored.")

    def _close_roster(self, conn, when: str) -> None:
        """Close the roster with those registered (``when``: why it closes now, for the failure's line): the round
        goes on to the shares with at least ``n - F`` of the ``n`` invited (each one who never registered is one of
        the F dropouts the plan tolerates: the noise is calibrated for ``n - F`` contributors, and every later step
        still needs that many), every one of them with at least the threshold of its neighbours among them; else it
        fails, nothing released."""
        ids = sorted(r[0] for r in conn.execute(select(t_keys.c.contributor)))
        least = self.plan.n - self.plan.dropouts
        short = self._short(ids)
        if len(ids) < least:
            self._fail(ParameterText("the roster closed ({when}) with {count} of the {n} invited contributors"
                                     " registered, fewer than {least} ({min_contributors} minus {dropout_tolerance}:"
                                     " each who never registers is one of the dropouts the plan tolerates): nothing"
                                     " released", "min_contributors", when=when, count=len(ids), n=self.plan.n,
                                     least=least).message(self.setting_names), conn)
        elif short is not None:
            self._fail(f"the roster closed ({when}) with contributor {short!r} holding fewer than {self.T} of its"
                       " neighbours among those registered: its shares could not be completed; nothing released",
                       conn)
        else:
            self.st = {"state": "shares"}
            self._save(conn, roster=len(ids))      # its size, checked against the keys on every start

    def close_roster_if_due(self) -> bool:
        """At or after the registration deadline (:attr:`registration_deadline`), close the roster as it stands
        (:meth:`_close_roster`), once, whichever server process gets there first; whether the round left the keys
        step now."""
        if self.registration_deadline is None or time.time() < self.registration_deadline:
            return False
        self.fresh()
        if self.st["state"] != "keys":
            return False
        with self._txn() as conn:
            if self.st["state"] != "keys":
                return False
            self._close_roster(conn, "at its registration deadline")
        return True

    def watch_deadline(self, stop: threading.Event | None = None) -> None:
        """Until the roster closes: wait for the registration deadline, then close it (:meth:`close_roster_if_due`;
        the server runs this on a thread of its own once started). Looks at the round at least once a second."""
        stop = stop or threading.Event()
        while self.registration_deadline is not None and not stop.is_set():
            try:
                if self.close_roster_if_due() or self.current_state() != "keys":
                    return
            except (DPTopicError, SQLAlchemyError) as e:     # a database that went away a moment: try again
                log.warning("closing the roster at its deadline: %s", e)
            left = self.registration_deadline - time.time()
            stop.wait(min(1.0, left) if left > 0 else 1.0)

    def _fail(self, reason: str, conn=None) -> None:
        if conn is not None:
            self.st = {"state": "failed", "reason": reason}
            self._save(conn)
            return
        with self._txn() as c:
            if self.st["state"] in ("released", "failed"):
                return
            self.st = {"state": "failed", "reason": reason}
            self._save(c)

    def _short(self, ids) -> str | None:
        """A contributor of ``ids`` with fewer than the threshold of its neighbours among them, or None."""
        s = set(ids)
        graph = self.graph()
        return next((u for u in sorted(s) if sum(1 for w in graph[u] if w in s) < self.T), None)

    def _open_upload(self, conn, phase: int, members: list, **extra) -> None:
        least = self.plan.n - self.plan.dropouts
        short = self._short(members)
        if len(members) < least:
            self._fail(ParameterText("only {count} contributors took part in step {phase}, fewer than {least}"
                                     " ({min_contributors} minus {dropout_tolerance}): nothing released",
                                     "min_contributors", count=len(members), phase=phase, least=least
                                     ).message(self.setting_names), conn)
        elif short is not None:
            self._fail(f"contributor {short!r} has fewer than {self.T} of its neighbours among the members of step"
                       f" {phase}: its shares cannot be completed; nothing released", conn)
        else:
            self.st = {"state": f"upload{phase}", "phase": phase, "members": members, **extra}
            self._save(conn)

    def _close_upload(self, conn, phase: int) -> None:
        uploaded = set(r[0] for r in conn.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == phase)))
        # an upload whose maker has fewer than T neighbours among the uploads could not be unmasked (its neighbours
        # refuse, rightly), and it is in the running sum, which keeps no upload to take out: the round fails. Taking
        # it out would rarely help: on the ring its nearest uploading neighbour is then short too, and so on around
        # (docs/research/secure_sum.md). The plan's degree makes it rare under random dropouts (SecureSumPlan.degree:
        # the expected number of contributors left short of T neighbours is at most 1e-3)
        short = self._short(uploaded)
        least = self.plan.n - self.plan.dropouts
        if len(uploaded) < least:
            self._fail(ParameterText("only {count} uploads in step {phase}, fewer than {least} ({min_contributors}"
                                     " minus {dropout_tolerance}): nothing released", "min_contributors",
                                     count=len(uploaded), phase=phase, least=least).message(self.setting_names), conn)
        elif short is not None:
            self._fail(f"contributor {short!r} uploaded in step {phase} with fewer than {self.T} of its neighbours"
                       " among the uploads: its upload cannot be unmasked nor taken out of the running sum; nothing"
                       " released", conn)
        else:
            self.st = dict(self.st, state=f"consistency{phase}", uploaded=sorted(uploaded))
            self._save(conn)

    def _close_consistency(self, conn, phase: int) -> None:
        signers = sorted(r[0] for r in conn.execute(select(t_consistency.c.contributor)
                                                    .where(t_consistency.c.phase == phase)))
        least = self.plan.n - self.plan.dropouts
        graph, s = self.graph(), set(signers)
        members, uploaded = set(self.st["members"]), set(self.st["uploaded"])
        needed = uploaded | {v for v in members - uploaded if any(u in uploaded for u in graph[v])}
        short = next((u for u in sorted(needed) if sum(1 for w in graph[u] if w in s) < self.T), None)
        if len(signers) < least:
            self._fail(f"only {len(signers)} contributors signed the uploads of step {phase}, fewer than {least}:"
                       " nothing released", conn)
        elif short is not None:
            self._fail(f"contributor {short!r} has fewer than {self.T} signers among its neighbours in step {phase}:"
                       " its seeds cannot be unmasked; nothing released", conn)
        else:
            self.st = dict(self.st, state=f"unmask{phase}", signers=signers)
            self._save(conn)
            self._need_counts(conn, phase)

    def _needed(self, phase: int) -> dict:
        """The seeds the unmasking of ``phase`` needs: each uploader's self-mask seed (``"b"``) and the key of each
        member who did not upload but has an uploading neighbour (``"s"``)."""
        members, uploaded = self._in("members"), self._in("uploaded")
        memo = self.__dict__["_sets"]       # made once for each state (every answer of the step reads it)
        if ("needed", phase) not in memo:
            graph = self.graph()
            memo[("needed", phase)] = {u: "b" for u in uploaded} | {
                v: "s" for v in members - uploaded if any(u in uploaded for u in graph[v])}
        return memo[("needed", phase)]

    def _counted(self, phase: int, who: str, answers: dict) -> list:
        """The senders whose needed seed ``who``'s answers bring one share closer (a neighbour's, of the right kind)."""
        needed, graph = self._needed(phase), self.graph()
        return sorted(s for s, a in answers.items() if s in needed and isinstance(a, dict)
                      and a.get("kind") == needed[s] and who in graph[s])

    def _need_counts(self, conn, phase: int) -> tuple[int, int]:
        """``(seeds still short of their threshold, answers stored)`` of ``phase``, from their counters
        (:data:`t_counts`); made from the stored answers when the step has none yet (at its opening, or a round
        stored before they were kept)."""
        keys = [f"short{phase}", f"answered{phase}"]
        found = dict(conn.execute(_Q.counts, {"p_keys": keys}).all())
        if len(found) == 2:
            return found[keys[0]], found[keys[1]]
        rows = conn.execute(select(func.count()).select_from(t_need).where(t_need.c.phase == phase)).scalar()
        if not rows:
            have = dict.fromkeys(self._needed(phase), 0)
            for who, body in conn.execute(select(t_unmask.c.contributor, t_unmask.c.body)
                                          .where(t_unmask.c.phase == phase)):
                for sender in self._counted(phase, who, json.loads(body)):
                    have[sender] += 1
            if have:
                conn.execute(t_need.insert(), [{"phase": phase, "sender": u, "have": h} for u, h in have.items()])
        short = conn.execute(select(func.count()).select_from(t_need)
                             .where((t_need.c.phase == phase) & (t_need.c.have < self.T))).scalar()
        answered = conn.execute(select(func.count()).select_from(t_unmask).where(t_unmask.c.phase == phase)).scalar()
        conn.execute(t_counts.delete().where(t_counts.c.key.in_(keys)))
        conn.execute(t_counts.insert(), [{"key": keys[0], "value": short}, {"key": keys[1], "value": answered}])
        return short, answered

    def _count_answers(self, conn, phase: int, who: str, answers: dict, counts: tuple[int, int]) -> bool:
        """Count ``who``'s new answers in the transaction that stores them (the counters were made before its answer
        was stored: :meth:`post_unmask`); True when every needed seed now has its threshold of shares and no server
        process has started the unmasking yet (this one then starts it, marked in the database). A step whose every
        signer answered with still too few shares fails. It reads and writes the rows of ``who``'s senders and two
        counters, whatever the number of answers. ``counts``: the counters as :meth:`_need_counts` read them in this
        transaction, before ``who``'s answer was stored."""
        senders = self._counted(phase, who, answers)
        reached = 0
        if senders:
            conn.execute(_Q.one_more, {"p_phase": phase, "p_senders": senders})
            reached = conn.execute(_Q.reached, {"p_phase": phase, "p_senders": senders,
                                                "p_threshold": self.T}).scalar()
        short, answered = counts
        short, answered = short - reached, answered + 1
        conn.execute(_Q.set_count, [{"p_key": f"short{phase}", "p_value": short},
                                    {"p_key": f"answered{phase}", "p_value": answered}])
        if short:
            if answered >= len(self.st["signers"]):     # every signer answered and still too few: it cannot finish
                self._fail(f"too few shares to unmask step {phase}: nothing released", conn)
            return False
        mark = f"unmasking{phase}"
        if conn.execute(_Q.state_key, {"p_key": mark}).first() is not None:
            return False
        conn.execute(_Q.insert_state, {"key": mark, "value": json.dumps({"pid": os.getpid(), "at": time.time()})})
        return True

    def _start_unmask(self, phase: int) -> None:
        """Unmask ``phase`` off the request's thread (it may take a while), once in this process."""
        with self.lock:
            if self._unmasking == phase:
                return
            self._unmasking = phase
        threading.Thread(target=self._unmask, args=(phase,), name=f"secure-unmask-{phase}", daemon=True).start()

    def _unmask(self, phase: int) -> None:
        """Sum and unmask (the uploads and the answers it reads are those of a closed step: no lock needed), then
        move the round on under the lock."""
        try:
            self._unmask_step(phase)
        except Exception as e:      # noqa: BLE001 (any failure fails the round, in one line, and is logged)
            log.exception("unmasking step %s failed", phase)
            self._fail(f"unmasking step {phase} failed ({' '.join(str(e).split())[:200]}): nothing released")

    def _unmasked(self, phase: int) -> tuple[np.ndarray, set]:
        """Step ``phase``'s running sum with the masks removed (from the answers), and who uploaded to it; its
        timings recorded."""
        members, uploaded = set(self.st["members"]), set(self.st["uploaded"])
        roster, responses = self.roster(), self._responses(phase)
        t0 = time.perf_counter()
        with self.engine.connect() as conn:
            total, n = self._running(conn, phase)
        if n != len(uploaded):
            raise DPTopicError(f"the running sum of step {phase} holds {n} uploads, not the {len(uploaded)} counted")
        t1 = time.perf_counter()
        total = ss.unmask_sum(total, roster, self.round_id, phase, self.graph(), self.T, members, uploaded, responses)
        self.timings[phase] = {"sum_s": t1 - t0, "unmask_s": time.perf_counter() - t1, "uploads": len(uploaded),
                               "dim": len(total), "pid": os.getpid()}
        return total, uploaded

    def _charge(self) -> bool:
        """The round charged to the dataset ledger (its settings' ``ledger``), once, before its first unmasking: to
        step 0's uploaders at the plan's bound (:func:`~dptopic.service.ledger.charge_secure_round`). False, with the
        round failed and nothing revealed, when the ledger refuses it. (A process killed between the debit and its
        mark charges the round again when it resumes: the ledger then holds it twice, never not at all.)"""
        if not self.cfg.ledger:
            return True
        with self.engine.connect() as conn:
            if conn.execute(select(t_state.c.key).where(t_state.c.key == "ledger_charge")).first() is not None:
                return True
        charged, release = charge_or_fail(self._fail, self.cfg.ledger, self.cfg.ledger_dataset, self.plan,
                                          sorted(self.st["uploaded"]), self.cfg.directory)
        if not charged:
            return False
        with self._txn() as conn:
            conn.execute(t_state.insert().values(key="ledger_charge", value=json.dumps({"release": release})))
        return True

    def _unmask_step(self, phase: int) -> None:
        if phase == 0 and not self._charge():      # spent before anything of the round is unmasked
            return
        dim = self.dim(phase)
        total, uploaded = self._unmasked(phase)
        # a wrap-around shows as an entry outside what the signal and the noise can reach
        limit = len(uploaded) * rounded_norms(self.plan.scale, dim)[0] + 2 ** (self.plan.bits - 2)
        if np.any(np.abs(total) > limit):
            self._fail(f"step {phase}'s sum wrapped around the modulus: nothing released")
            return
        doc = None
        if phase == 1:
            with self.engine.connect() as conn:
                s0 = json.loads(conn.execute(select(t_state.c.value).where(t_state.c.key == "sum0")).scalar())
            presence = np.frombuffer(base64.b64decode(s0["sum"]), dtype="<i8")
            doc = release_document(self.plan, self.cfg.vocabulary, self.cfg.n_topics, presence, total,
                                   (s0["shares"], len(uploaded)), self.round_id)
        with self._txn() as conn:
            if self.st["state"] != f"unmask{phase}":
                return
            conn.execute(t_state.delete().where(t_state.c.key.in_([f"sum{phase}", f"timings{phase}"])))
            conn.execute(t_state.insert().values(key=f"timings{phase}", value=json.dumps(self.timings[phase])))
            conn.execute(t_state.insert().values(key=f"sum{phase}", value=json.dumps(
                {"sum": base64.b64encode(total.astype("<i8").tobytes()).decode(), "shares": len(uploaded)})))
            if phase == 0:
                from ...models.secure_sum import released_words  # start-up: models.secure_sum loads scikit-learn

                kept = released_words(self.plan, total, len(uploaded), self.cfg.n_topics)[0]
                self._open_upload(conn, 1, sorted(uploaded), kept=[int(k) for k in kept])
            else:
                self.st = dict(self.st, state="released")
                self._save(conn, model=doc)
                self._model_doc = doc

    def model_doc(self) -> dict:
        """``GET /v1/model``: the released model."""
        if self._model_doc is None:
            self.fresh()
        if self._model_doc is None:
            raise ApiError(404, "no_model", f"the round has released no model (it is at step {self.st['state']!r}"
                                            + (f": {self.st['reason']}" if self.st.get("reason") else "") + ").")
        return self._model_doc


def charge_or_fail(fail, ledger, dataset, plan, people, directory) -> tuple[bool, int | None]:
    """A round charged to the dataset ``ledger`` before its first unmasking (every mode's server: the default round,
    the committee mode, the coordinator of a round in cohorts): ``(True, the release's id)``
    (:func:`~dptopic.service.ledger.charge_secure_round`), or ``(False, None)`` when the ledger refuses it, the round
    then failed through ``fail`` (its reason in one line) with nothing revealed."""
    try:
        return True, charge_secure_round(ledger, dataset, plan, people, directory)
    except DPTopicError as e:
        log.error("%s", e)
        fail(f"{' '.join(str(e).split())[:300]}: nothing revealed, nothing released")
        return False, None


def release_document(plan, vocabulary, n_topics: int, presence, cooc, shares: tuple[int, int], round_id: str) -> dict:
    """The model a round releases, as ``GET /v1/model`` serves it: built from the two unmasked sums, the public
    settings and the round's id alone (post-processing: the same sums give the same bytes, whatever the corpus)."""
    from ...models.secure_sum import secure_sum_topics  # start-up: models.secure_sum loads scikit-learn

    model = secure_sum_topics(plan, vocabulary, n_topics, presence, cooc, shares, {"round_id": round_id})
    with tempfile.TemporaryDirectory() as d:
        model.save(f"{d}/m")
        load_bundle(f"{d}/m")       # it loads back
        arrays = {p.stem: base64.b64encode(p.read_bytes()).decode() for p in sorted(Path(f"{d}/m").glob("*.npy"))}
        meta_json = Path(f"{d}/m/model.json").read_text()
    return {"api_version": "v1", "model_id": 1, "model_version": 1, "model_json": meta_json, "arrays": arrays}
