"""FedLDA's rounds: the open round and its broadcast, the clients' updates stored (and the round closed once enough
arrived), what the closed rounds released, and who took part, for the dataset ledger."""
from __future__ import annotations

import time

from sqlalchemy import func, select

from .database import Database
from .errors import StorageError, refuse_nul
from .schema import fed_rounds, fed_updates


class FedRoundStore(Database):
    """FedLDA's rounds and the clients' updates (tables ``fed_rounds``, ``fed_updates``)."""

    def fed_round(self, initial_message=None) -> tuple[int, bytes]:
        """The open round and its broadcast; round 0 is created from ``initial_message()`` on first use."""
        with self.read() as conn:
            row = conn.execute(select(fed_rounds.c.round, fed_rounds.c.message)
                               .where(fed_rounds.c.status == "open")).first()
        if row is not None or initial_message is None:
            return (int(row[0]), bytes(row[1])) if row is not None else (None, None)
        with self.write(limit="long") as conn:
            self._lock(conn)
            row = conn.execute(select(fed_rounds.c.round, fed_rounds.c.message)
                               .where(fed_rounds.c.status == "open")).first()
            if row is None:
                msg = initial_message()
                conn.execute(fed_rounds.insert().values(round=0, status="open", message=msg, n_updates=0,
                                                        opened_at=time.time()))
                return 0, msg
        return int(row[0]), bytes(row[1])

    def fed_store_update(self, round_: int, client: str, key: str, sha: str, body: bytes, min_updates: int,
                         aggregate) -> tuple[str, dict]:
        """Store one validated update (and close the round once ``min_updates`` arrived), atomically.

        Outcomes: ``stored``, ``replayed`` (same key, same body), ``conflict`` (same key, other body),
        ``stale`` (the round is no longer open), ``duplicate`` (this client already sent this round).
        """
        refuse_nul(client_id=client, idempotency_key=key)
        now = time.time()
        with self.write(limit="long" if min_updates else None) as conn:   # it may close the round (aggregate)
            self._lock(conn)
            prev = conn.execute(select(fed_updates.c.round, fed_updates.c.body_sha256)
                                .where(fed_updates.c.idempotency_key == key)).first()
            if prev is not None:
                info = {"round": int(prev.round), "client": client, "idempotency_key": key}
                return ("replayed" if prev.body_sha256 == sha else "conflict"), info
            open_round = conn.execute(select(fed_rounds.c.round).where(fed_rounds.c.status == "open")).scalar()
            if open_round != round_:
                return "stale", {"round": open_round}
            dup = conn.execute(select(func.count()).select_from(fed_updates).where(
                (fed_updates.c.round == round_) & (fed_updates.c.client == client))).scalar()
            if dup:
                return "duplicate", {"round": round_, "client": client}
            conn.execute(fed_updates.insert().values(round=round_, client=client, idempotency_key=key,
                                                     body_sha256=sha, message=body, received_at=now))
            n = conn.execute(select(func.count()).select_from(fed_updates)
                             .where(fed_updates.c.round == round_)).scalar()
            conn.execute(fed_rounds.update().where(fed_rounds.c.round == round_).values(n_updates=n))
            info = {"round": round_, "client": client, "idempotency_key": key, "updates_in_round": int(n),
                    "round_closed": False}
            if min_updates and n >= min_updates:
                self._fed_close(conn, round_, aggregate)
                info["round_closed"] = True
        return "stored", info

    def fed_replay(self, key: str, sha: str) -> tuple[str, dict] | None:
        """The outcome of an update already stored under ``key`` (``replayed`` for the same body, ``conflict``
        for another), or None: a retry is answered from what was stored, whatever round is open now."""
        with self.read() as conn:
            prev = conn.execute(select(fed_updates.c.round, fed_updates.c.client, fed_updates.c.body_sha256)
                                .where(fed_updates.c.idempotency_key == key)).first()
        if prev is None:
            return None
        info = {"round": int(prev.round), "client": prev.client, "idempotency_key": key}
        return ("replayed" if prev.body_sha256 == sha else "conflict"), info

    def fed_close_round(self, aggregate) -> dict:
        with self.write(limit="long") as conn:
            self._lock(conn)
            r = conn.execute(select(fed_rounds.c.round, fed_rounds.c.n_updates)
                             .where(fed_rounds.c.status == "open")).first()
            if r is None:
                raise StorageError("no FedLDA round is open: FedLDA rounds run only on a service started with"
                                   " fed_epsilon_per_entry.")
            if r.n_updates == 0:
                raise StorageError(f"round {r.round} has no updates yet: wait for clients before closing it.")
            self._fed_close(conn, r.round, aggregate)
        return {"closed_round": int(r.round), "updates": int(r.n_updates), "open_round": int(r.round) + 1}

    def _fed_close(self, conn, round_: int, aggregate) -> None:
        bodies = [bytes(b) for (b,) in conn.execute(select(fed_updates.c.message)
                                                    .where(fed_updates.c.round == round_).order_by(fed_updates.c.id))]
        opened = conn.execute(select(fed_rounds.c.message).where(fed_rounds.c.round == round_)).scalar()
        msg = aggregate(round_, bodies, None if opened is None else bytes(opened))
        now = time.time()
        conn.execute(fed_rounds.update().where(fed_rounds.c.round == round_).values(status="closed", closed_at=now))
        conn.execute(fed_rounds.insert().values(round=round_ + 1, status="open", message=msg, n_updates=0,
                                                opened_at=now))

    def fed_released(self) -> dict | None:
        """What the latest closed FedLDA round released, or None when no round has closed: ``round`` (the latest
        closed round's number), ``rounds`` (how many have closed), ``message`` (the broadcast that round's close
        produced, which opened the next), ``n_clients`` (distinct client ids with an update in a closed round) and
        ``updates`` (``(round, updates)`` of each closed round). Every row read is final once its round closed, so
        the reads agree even where each statement sees its own snapshot (PostgreSQL)."""
        with self.read() as conn:
            closed = conn.execute(select(fed_rounds.c.round, fed_rounds.c.n_updates)
                                  .where(fed_rounds.c.status == "closed").order_by(fed_rounds.c.round)).all()
            if not closed:
                return None
            last = int(closed[-1][0])
            msg = conn.execute(select(fed_rounds.c.message).where(fed_rounds.c.round == last + 1)).scalar()
            n_clients = conn.execute(select(func.count(func.distinct(fed_updates.c.client)))
                                     .where(fed_updates.c.round <= last)).scalar()
        if msg is None:
            raise StorageError(f"FedLDA round {last} is closed but the round it opened is missing: the database is"
                               " damaged.")
        return {"round": last, "rounds": len(closed), "message": bytes(msg), "n_clients": int(n_clients or 0),
                "updates": [(int(r), int(n)) for r, n in closed]}

    def fed_participation(self, limit: int = 50) -> list[dict]:
        with self.read() as conn:
            rows = conn.execute(select(fed_updates.c.client, func.count().label("n")).group_by(fed_updates.c.client)
                                .order_by(func.count().desc()).limit(limit)).all()
        return [{"client": c, "rounds": int(n)} for c, n in rows]

    def fed_round_participation(self, round_: int) -> dict:
        """Each client of FedLDA round ``round_`` and the rounds it has taken part in up to it, this one included (the
        dataset ledger charges what its update spent)."""
        with self.read() as conn:
            clients = [c for (c,) in conn.execute(select(fed_updates.c.client).where(fed_updates.c.round == round_))]
            rows = conn.execute(select(fed_updates.c.client, func.count(func.distinct(fed_updates.c.round)))
                                .where((fed_updates.c.round <= round_) & fed_updates.c.client.in_(clients))
                                .group_by(fed_updates.c.client)).all() if clients else []
        return {c: int(n) for c, n in rows}
