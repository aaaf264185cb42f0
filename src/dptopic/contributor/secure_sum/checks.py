"""Every check a contributor makes of what the server tells it after joining, and the refusals they raise.

:class:`ServerChecks` is the part of :class:`~dptopic.contributor.secure_sum.default.SecureContributor` (and so of
every mode's contributor) that reads the server's views: the roster, each step's members, the set of uploads and the
consistency signatures over it, the kept words; each check a method of its own (``tests/privacy/
test_secure_sum_checks_adversary.py`` removes each in turn). A check reads the contributor's attributes (its
directory, graph, threshold, state) and sends nothing; one that fails raises :class:`ServerLied` (or :class:`LeftOut`
when the server leaves this contributor out) in one line naming what the server claimed.

The pool: a process that plays many contributors of one round (a simulation) is shown the same lists of N ids by each
of them; the sets they make of those lists, and the rosters that passed, are kept once per process here
(:data:`_ID_SETS`, :data:`_ROSTERS`, :data:`_OUTSIDE`, :data:`_SORTED`).
"""
from __future__ import annotations

from ...errors import DPTopicError
from ...protocol.secure_sum.crypto import valid_x25519, verify
from ...protocol.secure_sum.default import consistency_message, keys_message
from ...protocol.secure_sum.messages import PHASES, set_digest

_ID_SETS: dict = {}
"""Lists of ids a server named that passed :meth:`SecureContributor._id_set`, by directory and content, as sets."""
_ROSTERS: list = []
"""``(directory, copy)`` of the rosters whose shape passed (:meth:`SecureContributor._check_roster_shape`)."""
_OUTSIDE: dict = {}
"""By (a set of ids the server named, the roster's ``id``): the roster and an id of the set outside it, or None
(:meth:`SecureContributor._outside_roster`)."""
_SORTED: dict = {}
"""One sorted list per set of ids that a process's contributors record (the directory's members, the members each
masked with, the uploads each signed), by the set (:func:`_sorted_ids`); and by each list's ``id``, the list and its
set (:func:`_set_of`). A process that plays many contributors of one round keeps one copy of a list of N ids, not one
per contributor (8 bytes an id each, and a set of N ids 32 bytes an id: docs/research/secure_sum_cohorts.md)."""


def _sorted_ids(ids: frozenset) -> list:
    """``sorted(ids)``, one list per set in a process (:data:`_SORTED`). The list is shared: never changed in place."""
    found = _SORTED.get(ids)
    if found is None:
        if len(_SORTED) >= 1024:      # 512 sets: a worker of a simulation holds 4 a cohort
            _SORTED.clear()
        found = sorted(ids)
        _SORTED[ids] = found
        _SORTED[id(found)] = (found, ids)
    return found


def _set_of(ids: list) -> frozenset:
    """``frozenset(ids)``: the set a list of :func:`_sorted_ids` came from, else a new one."""
    found = _SORTED.get(id(ids))
    return found[1] if found is not None and found[0] is ids else frozenset(ids)



class ServerLied(DPTopicError):
    """The server said something the protocol does not allow (a roster, a set, a plan or a signature): nothing more is
    sent for this step."""


class WrongMode(ServerLied):
    """The server runs the round in another mode (with a committee or without one) than the invitation names:
    nothing sent."""


class LeftOut(DPTopicError):
    """The server left this contributor out of a step (it is not among the step's members or uploads)."""


class ServerChecks:
    """The checks of what the server says (module note), as methods of the contributor that makes them: they read
    its ``members`` (the directory), ``me``, ``graph``, ``T``, ``least``, ``roster``, ``plan``, ``V``, ``st`` (the
    state), ``round_id`` and ``secrets``, which :class:`~dptopic.contributor.secure_sum.default.SecureContributor`
    sets."""

    def _ids(self, value, what: str) -> list:
        self._id_set(value, what)
        return value

    def _id_set(self, value, what: str) -> frozenset:
        """The set of a list of ids the server names, checked: a list of distinct ids of the round's directory. The
        same list (by content) is checked once per directory in a process (:data:`_ID_SETS`): a view names N ids,
        and a process may play many contributors of one round."""
        try:
            key = (self._directory_key, tuple(value)) if isinstance(value, list) else None
            found = None if key is None else _ID_SETS.get(key)
        except TypeError:       # an unhashable entry: not an id, refused below
            key, found = None, None
        if found is not None:
            return found
        if not isinstance(value, list) or not all(isinstance(i, str) for i in value):
            raise ServerLied(f"the server's {what} is not a list of contributor ids: nothing sent.")
        ids = frozenset(value)
        if len(ids) != len(value):
            raise ServerLied(f"the server's {what} names a contributor twice: nothing sent.")
        stray = next((i for i in value if i not in self.members), None)
        if stray is not None:
            raise ServerLied(f"the server's {what} names {stray[:40]!r}, who is not in the round's directory: nothing"
                             " sent.")
        if len(_ID_SETS) >= 16:
            _ID_SETS.clear()
        _ID_SETS[key] = ids
        return ids

    def _enough(self, ids, what: str, phase: int) -> None:
        """A set the server names for ``phase`` (``what``: its members or uploads): every one in the closed roster
        (:meth:`_check_in_roster`), at least N - F contributors (:meth:`_enough_count`), at least T of this one's
        neighbours (:meth:`_enough_neighbours`)."""
        self._check_in_roster(ids, what, phase)
        self._enough_count(ids, what, phase)
        self._enough_neighbours(ids, what, phase)

    def _check_in_roster(self, ids, what: str, phase: int) -> None:
        """Every contributor of a set the server names is in the closed roster (once it is known): one who never
        registered has no keys to mask with or be unmasked by."""
        if self.roster is not None and len(self.roster) < len(self.members):    # a roster without its no-shows
            stray = self._outside_roster(ids)
            if stray is not None:
                raise ServerLied(f"the server names {stray[:40]!r} among the {what} of step {phase}, who is not in the"
                                 " round's roster: nothing sent.")

    def _enough_count(self, ids, what: str, phase: int) -> None:
        """At least N - F contributors in a set the server names (F the dropouts the invitation pins,
        :attr:`least`): the noise is planned for that many shares."""
        least = self.least
        if len(ids) < least:
            raise ServerLied(f"the server names {len(ids)} {what} for step {phase}, fewer than the {least} the noise"
                             " was planned for (N - F): nothing sent.")

    def _enough_neighbours(self, ids, what: str, phase: int) -> None:
        """At least T of this contributor's neighbours in a set the server names."""
        have = ids if isinstance(ids, frozenset) else set(ids)
        mine = sum(1 for v in self.graph[self.me] if v in have)
        if mine < self.T:
            raise ServerLied(f"the server names only {mine} of your {len(self.graph[self.me])} neighbours as {what} for"
                             f" step {phase}, fewer than the threshold {self.T}: nothing sent (too few would let it"
                             " unmask your upload alone).")

    def _outside_roster(self, ids) -> str | None:
        """An id of ``ids`` that is not in the closed roster, or None; looked up once per set and roster in a
        process (:data:`_OUTSIDE`: its contributors are shown the same sets, N ids each)."""
        key = (ids if isinstance(ids, frozenset) else frozenset(ids), id(self.roster))
        found = _OUTSIDE.get(key)
        if found is None or found[0] is not self.roster:
            if len(_OUTSIDE) >= 16:
                _OUTSIDE.clear()
            found = _OUTSIDE[key] = (self.roster, next((i for i in ids if i not in self.roster), None))
        return found[1]

    def check_roster(self, roster) -> dict:
        """The closed roster ``{id: {"c", "s", "b", "signature"}}`` checked: the directory's members who registered
        (those who never did are dropouts: at least N - F registered, and the threshold of this contributor's
        neighbours among them), every key different, this contributor's own entry as registered, and every registered
        neighbour's entry signed by that neighbour's key with keys of full order."""
        if self.roster is not None and roster == self.roster:
            return self.roster
        if not any(k == self._directory_key and roster == shape for k, shape in _ROSTERS):
            self._check_roster_shape(roster)
        self._live()
        self._check_roster_count(roster)
        self._check_own_entry(roster)
        self._check_roster_neighbours(roster)
        for v in self.graph[self.me]:
            if v not in roster:     # never registered: a dropout, sent nothing
                continue
            self._check_entry_signed(v, roster[v])
            self._check_entry_keys(v, roster[v])
        self.roster = roster
        return roster

    def _check_roster_count(self, roster) -> None:
        """At least N - F of the directory's members registered (F the dropouts the invitation pins,
        :attr:`least`): each who never did is one of the F dropouts, and the noise is planned for N - F shares."""
        if len(roster) < self.least:
            raise ServerLied(f"the server's roster has {len(roster)} entries, fewer than the {self.least} the noise was"
                             " planned for (N - F of the directory's members): nothing sent.")

    def _check_own_entry(self, roster) -> None:
        """This contributor's own roster entry holds the keys it registered."""
        mine = {k: roster[self.me].get(k) for k in ("c", "s", "b")} if self.me in roster else None
        if mine != self.secrets.public(self.round_id, self.me):
            raise ServerLied("the server's roster does not hold this contributor's keys: nothing sent.")

    def _check_roster_neighbours(self, roster) -> None:
        """At least T of this contributor's neighbours registered (are in the roster): its shares could not be
        completed with fewer, and the set it masks with could not hold the threshold of them."""
        have = sum(1 for v in self.graph[self.me] if v in roster)
        if have < self.T:
            raise ServerLied(f"the server's roster holds only {have} of your {len(self.graph[self.me])} neighbours,"
                             f" fewer than the threshold {self.T}: nothing sent (your shares could not be completed).")

    def _check_entry_signed(self, v: str, e: dict) -> None:
        """Member ``v``'s roster entry ``e`` is signed by ``v``'s invitation key (the server cannot put keys of its
        own in a member's place)."""
        entry = {"c": e["c"], "s": e["s"], "b": e["b"]}
        if not verify(bytes.fromhex(self.members[v]), e.get("signature"), keys_message(self.round_id, v, entry)):
            raise ServerLied(f"the server's roster entry for {v[:40]!r} is not signed by that member's invitation key:"
                             " nothing sent.")

    def _check_entry_keys(self, v: str, e: dict) -> None:
        """Member ``v``'s roster entry ``e`` holds X25519 keys of full order (a low-order key makes every agreement
        with it public)."""
        if not all(valid_x25519(k) for k in [e["c"], *e["s"]]):
            raise ServerLied(f"the server's roster entry for {v[:40]!r} holds a key that is not a valid X25519 key of"
                             " full order: nothing sent.")

    def _check_roster_shape(self, roster) -> None:
        """What a roster must be whoever reads it (N entries to look at): members of the directory, every entry
        well-formed, every public key different. A roster that passed is remembered (a copy, by its content and the
        directory, :data:`_ROSTERS`): the other contributors a process plays compare theirs with it, in C."""
        if not isinstance(roster, dict):
            raise ServerLied("the server's roster is not an object of the registered members' entries: nothing sent.")
        stray = next((i for i in roster if i not in self.members), None)
        if stray is not None:
            raise ServerLied(f"the server's roster names {str(stray)[:40]!r}, who is not in the round's directory:"
                             " nothing sent.")
        keys = []
        for i, e in roster.items():
            if not (isinstance(e, dict) and isinstance(e.get("c"), str) and isinstance(e.get("s"), list)
                    and len(e["s"]) == PHASES and isinstance(e.get("b"), list) and len(e["b"]) == PHASES
                    and all(isinstance(k, str) for k in [e["c"], *e["s"], *e["b"]])):
                raise ServerLied(f"the server's roster entry for {i[:40]!r} is malformed: nothing sent.")
            keys += [e["c"], *e["s"]]
        if len(set(keys)) != len(keys):
            raise ServerLied("the server's roster gives one public key to two uses: nothing sent.")
        if len(_ROSTERS) >= 2:
            _ROSTERS.pop(0)
        # the copy holds the same strings (immutable) in new lists and dicts: a roster changed in place later is
        # unequal to it, and is checked afresh
        _ROSTERS.append((self._directory_key, {i: dict(e, s=list(e["s"]), b=list(e["b"])) for i, e in roster.items()}))

    def _check_kept(self, kept) -> list:
        ok = (isinstance(kept, list) and all(isinstance(k, int) and not isinstance(k, bool) for k in kept)
              and 2 <= len(kept) <= self.plan.max_kept_words and all(0 <= k < self.V for k in kept)
              and all(a < b for a, b in zip(kept, kept[1:])))
        if not ok:
            raise ServerLied(f"the server's kept words are not 2 to {self.plan.max_kept_words} distinct word ids in"
                             f" [0, {self.V}), in increasing order: nothing sent.")
        return kept


    def _check_members_of_step1(self, member_set: frozenset) -> None:
        """Step 1's members all uploaded in step 0, as this contributor signed that step's set."""
        signed0 = self.st["signed"].get("0")
        if signed0 is None or not member_set <= set(signed0["uploaded"]):
            raise ServerLied("the server names members for step 1 who did not upload in step 0 (as you signed it):"
                             " nothing sent.")

    def _check_same_members(self, phase: int, members: list) -> None:
        """A step's members are the ones this contributor masked with, if it did (a resumed run)."""
        before = self.st["masked_with"].get(str(phase))
        if before is not None and before != sorted(members):
            raise ServerLied(f"the server names other members for step {phase} than when this contributor masked:"
                             " nothing sent.")


    def _check_uploads_masked(self, phase: int, up: frozenset, uploaded: list, masked_set: frozenset) -> None:
        """Every upload the server names is of a member this contributor masked with."""
        if not up <= masked_set:
            stray = next(i for i in uploaded if i not in masked_set)
            raise ServerLied(f"the server names {stray[:40]!r} among the uploads of step {phase}, who was not a member"
                             " this contributor masked with: nothing sent.")


    def _confirmed(self, phase: int, uploaded: frozenset, signatures) -> None:
        """Require ``T`` valid signatures of this contributor's own neighbours over its own set of uploads (verified
        until ``T`` are found), before anything is revealed. Honest contributors sign one set per step, so no two
        sets gather ``T`` signatures among one contributor's ``d`` neighbours (``2 T - t > d``): this contributor
        acts on the one set its own neighbourhood signed, and contributors close on the ring act on the same set
        (:mod:`dptopic.protocol.secure_sum.default`'s note). Signatures from anyone else count for nothing: a server can
        gather those for any set it likes."""
        if not isinstance(signatures, dict):
            raise ServerLied(f"the server's consistency signatures of step {phase} are not an object: nothing"
                             " revealed.")
        msg = consistency_message(self.round_id, phase, uploaded)
        valid = 0
        for w in self.graph[self.me]:
            if w in signatures and verify(bytes.fromhex(self.members[w]), signatures[w], msg):
                valid += 1
                if valid >= self.T:
                    return
        raise ServerLied(f"the server holds {valid} valid signatures of your neighbours over your set of uploads of"
                         f" step {phase}, fewer than the threshold {self.T}: it may have shown them another set;"
                         " nothing revealed.")


    def _check_signed_set(self, phase: int, up: frozenset) -> None:
        """The set of uploads an unmasking is asked over is the one this contributor signed for the step."""
        signed = self.st["signed"].get(str(phase))
        if signed is None or signed["digest"] != set_digest(up):
            raise ServerLied(f"the server asks for the unmasking of step {phase} over another set of uploads than the"
                             " one you signed: nothing revealed.")

    def _check_uploaders(self, up: frozenset) -> None:
        """Each neighbour the set counts as uploaded has ``T`` of its own neighbours in it: its self-mask seed is
        revealed only while more than ``d/2`` honest neighbours' masks stay on its upload."""
        for u in self.graph[self.me]:
            if u in up and len(up.intersection(self.graph[u])) < self.T:
                raise ServerLied(f"the server counts {u[:40]!r} as uploaded with fewer than {self.T} of its"
                                 " neighbours: its self-mask seed would unmask its upload alone; nothing revealed.")
