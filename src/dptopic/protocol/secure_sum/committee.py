"""The secure sum's committee mode: each contributor sends one message per sum, and a committee of C contributors does
the consistency and unmasking steps for everyone (``SecureSumPlan(committee=...)``).

Read :mod:`dptopic.protocol.secure_sum.default`'s note first: the keys, the ring graph, the masks, the checks and the
argument are the same; what changes is *who* holds the shares and when they are sent.

**Steps** (every message signed with the sender's invitation key):

1. ``keys``: each contributor's ``keys`` message (``c``, ``s_p``, ``b_p`` commitments, signed; today's
   :func:`~dptopic.protocol.secure_sum.default.keys_message`) is posted before the round opens (a *prekey bundle*, bound
   to the round's id by its signature). The roster is the bundles of this round; the committee is the first ``C`` of the
   roster by SHA-256 of the round id and the id (:func:`committee_of`): public, recomputed and checked by everyone.
2. ``upload{p}``: the masked vector (masked with the ring neighbours among the step's members, exactly as today, on
   pairwise seeds :func:`pair_seed_c`), plus, for each committee member ``m``, an AES-GCM blob under a key agreed on
   the ``c`` keys holding ``m``'s Shamir share (threshold ``T_c`` of ``C``) of ``b_p`` and of each *pairwise seed*
   ``s_uv`` with a neighbour ``v`` among the members; the upload's header (the blobs' digests and a commitment to each
   pairwise seed) and the body are covered by one signature (:func:`upload_message`: over the body's SHA-256, the
   Merkle root of the blobs' digests and the commitments' digest, so that a member checks it from its own blob and
   path, :func:`blob_path`, without the other members' digests). There is no shares step.
3. ``consistency{p}`` (committee only): each member checks the set ``U`` of uploads as a survivor does today (a subset
   of the members, at least N - F, every ``u`` in ``U`` with at least ``T`` of its neighbours in ``U``) and signs it,
   one set per step.
4. ``unmask{p}`` (committee only): a member answers only after ``T_c`` valid committee signatures over its own ``U``:
   for each ``u`` in ``U`` its share of ``b_u`` and of ``s_uv`` for each neighbour ``v`` of ``u`` among the members
   but not in ``U``; never a pairwise seed of two uploaders. The server reconstructs each seed (checked against its
   commitment) and removes the masks (the server's
   :func:`~dptopic.service.secure_sum.committee_state.unmask_committee_sum`).

**A fix to the design of docs/research/secure_sum_round_trips.md**: a contributor shares its *pairwise seeds*, not its
``s_p`` private key. A neighbour ``v`` that drops before uploading never sends anything, so its ``s_v`` could not be
reconstructed; and the uploader's own ``s_u`` cannot be revealed beside its ``b_u`` (both would unmask it). Sharing
``s_uv`` for each neighbour ``v`` lets the server remove exactly the masks with the dropped, and nothing else.

**Why a lying server learns no one's statistic** (with ``t`` colluding contributors at most, as today; no new trust
assumption): ``T_c = floor((C + t) / 2) + 1`` (:func:`~dptopic.protocol.secure_sum.graph.committee_threshold`).

- Two different sets ``U != U'`` cannot both gather ``T_c`` committee signatures: the two signer sets overlap in at
  least ``2 T_c - C >= t + 1`` members, so an honest member would have signed both, and an honest member signs one
  set per step. So every honest member that reveals anything in a step reveals for the same ``U``.
- The server holds ``T_c`` shares of a secret only when at least ``T_c - t >= 1`` honest members revealed it, so only
  for that one ``U``: ``b_u`` for ``u`` in ``U``, ``s_uv`` for ``u`` in ``U`` and ``v`` not in ``U``. An uploader
  ``u`` in ``U`` has at least ``T`` of its neighbours in ``U`` (checked by every honest member before it signs and
  before it reveals), of which at least ``T - t > d/2`` honest: its masks with them stay secret, and, as in today's
  argument, the honest uploaders whose masks the server can remove are all of them together: it learns their sum, no
  smaller one. (A server that shows contributors different members gains nothing: ``u`` masked with at least ``T``
  neighbours, its own check, and has ``T`` in ``U``, so at least ``2T - d = 2t + 2`` of them are both, ``t + 2``
  honest; a pairwise seed of two uploaders is never revealed. A mask left uncancelled only spoils the sum.)
- Fewer than ``T_c`` shares of a secret reveal nothing of it (Shamir), whatever ``t`` colluders add: ``T_c > t``.
- The committee cannot be chosen by the server (a public hash of the roster's ids), and the roster is the signed
  bundles of the directory's members (the server can leave people out, as today, not add or forge them).

A committee member's RevealLog is its one signed set per step: it answers once per step, for the set it signed.
"""
from __future__ import annotations

import base64
import hashlib
import os

from ...errors import DPTopicError
from . import shamir
from .crypto import agree, crypto, hkdf, pair_seed
from .messages import HEX32, PROTOCOL, canonical, digest, message, set_digest

SHARE = shamir.SHARE_BYTES


def committee_of(ids, round_id: str, size: int) -> list:
    """The round's committee: the first ``size`` of ``ids`` by SHA-256 of the round id, "committee" and the id, in
    sorted order. Anyone who holds the roster recomputes it."""
    def rank(i):
        return hashlib.sha256(f"{PROTOCOL}/committee/{round_id}/{i}".encode()).digest()
    return sorted(sorted(ids, key=rank)[:int(size)])


def committee_index(committee) -> dict:
    """Each committee member's Shamir evaluation point: 1 + its place in the sorted committee."""
    return {m: k + 1 for k, m in enumerate(sorted(committee))}


def pair_seed_c(private: bytes, peer_public: bytes, round_id: str, phase: int, u: str, v: str) -> bytes:
    """The pairwise mask seed of ``u`` and ``v`` in committee mode:
    :func:`~dptopic.protocol.secure_sum.crypto.pair_seed`
    with its top bit cleared, so that it lies below the Shamir field's prime and can be shared as it is."""
    seed = bytearray(pair_seed(private, peer_public, round_id, phase, u, v))
    seed[0] &= 0x7F
    if int.from_bytes(seed, "big") >= shamir.PRIME:       # probability 2^-250: the 19 values in [p, 2^255)
        raise DPTopicError("a pairwise seed fell above the Shamir field's prime: start the round again.")
    return bytes(seed)


def pair_commitment(round_id: str, phase: int, u: str, v: str, seed: bytes) -> str:
    """The public commitment (hex SHA-256) to the pairwise seed of ``u`` and ``v``: the server checks the seed it
    reconstructs against it."""
    a, b = sorted((u, v))
    return hashlib.sha256(f"{PROTOCOL}/committee-pair/{round_id}/{phase}/{a}/{b}/".encode() + seed).hexdigest()


def blob_key(my_c: bytes, their_c_public: bytes, round_id: str, sender: str, member: str) -> bytes:
    """The AES-GCM key of the blob ``sender`` addresses to committee ``member`` (agreed on their ``c`` keys)."""
    return hkdf(agree(my_c, their_c_public), f"{PROTOCOL}/committee/{round_id}/{sender}/{member}".encode())


def _aad(round_id: str, phase: int, sender: str, member: str) -> bytes:
    return f"{round_id}/{int(phase)}/{sender}/{member}".encode()


def make_blobs(me: str, c_private: bytes, roster: dict, round_id: str, phase: int, committee, b_seed: bytes,
               pair_seeds: dict, threshold: int) -> dict:
    """``{member: base64}``: each committee member's shares of ``b_seed`` and of each pairwise seed (``pair_seeds``:
    ``{neighbour: seed}``, in the neighbours' sorted order), encrypted to that member."""
    c = crypto()
    index = committee_index(committee)
    holders = [index[m] for m in sorted(committee)]
    per = {m: [] for m in committee}
    for secret in [b_seed] + [pair_seeds[v] for v in sorted(pair_seeds)]:
        shares = shamir.share(secret, holders, threshold)
        for m in committee:
            per[m].append(shares[index[m]])
    out = {}
    for m in sorted(committee):
        key = blob_key(c_private, bytes.fromhex(roster[m]["c"]), round_id, me, m)
        nonce = os.urandom(12)
        out[m] = base64.b64encode(nonce + c["AESGCM"](key).encrypt(nonce, b"".join(per[m]),
                                                                        _aad(round_id, phase, me, m))).decode()
    return out


def open_blob(me: str, c_private: bytes, roster: dict, round_id: str, phase: int, sender: str, blob,
              neighbours: list) -> tuple[bytes, dict]:
    """``(share of b, {neighbour: share of the pairwise seed})`` of the blob ``sender`` addressed to ``me``;
    ``neighbours``: the sender's neighbours among the step's members (sorted), as its header names them. One line when
    it does not decrypt or does not hold one share each."""
    c = crypto()
    try:
        raw = base64.b64decode(blob, validate=True)
        key = blob_key(c_private, bytes.fromhex(roster[sender]["c"]), round_id, sender, me)
        plain = c["AESGCM"](key).decrypt(raw[:12], raw[12:], _aad(round_id, phase, sender, me))
        ok = len(plain) == SHARE * (1 + len(neighbours))
    except Exception:       # a tampered or misaddressed blob: nothing learned, nothing revealed for it
        ok = False
    if not ok:
        raise DPTopicError(f"the committee blob of {sender[:40]!r} does not decrypt for this member and step.")
    pairs = {v: plain[SHARE * (k + 1):SHARE * (k + 2)] for k, v in enumerate(neighbours)}
    return plain[:SHARE], pairs


def _leaf(member: str, digest: str) -> bytes:
    return hashlib.sha256(f"{PROTOCOL}/committee-leaf/{member}/{digest}".encode()).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(f"{PROTOCOL}/committee-node/".encode() + left + right).digest()


def _levels(blobs: dict) -> list:
    level = [_leaf(m, blobs[m]) for m in sorted(blobs)]
    levels = [level]
    while len(level) > 1:
        level = [_node(level[k], level[k + 1]) if k + 1 < len(level) else level[k] for k in range(0, len(level), 2)]
        levels.append(level)
    return levels


def blob_tree(blobs: dict) -> list:
    """The Merkle tree of :func:`blobs_root` (its levels, leaves first), for :func:`blob_path` to reuse."""
    return _levels(blobs)


def blobs_root(blobs: dict) -> str:
    """The Merkle root (hex) of an upload's blob digests (``{member: digest}``, leaves in the members' sorted order):
    what the upload's signature covers of its blobs, so that a member checks it from its own blob and a path."""
    if not blobs:
        return digest(b"")
    return _levels(blobs)[-1][0].hex()


def blob_path(blobs: dict, member: str, levels: list | None = None) -> list:
    """``member``'s Merkle path in :func:`blobs_root`'s tree: ``[[side, hex], ...]`` from its leaf up, ``side`` "L"
    when the sibling is on the left (a node without a sibling goes up as it is, with no entry). ``levels``: the
    tree, when the caller keeps it (:func:`blob_tree`)."""
    k = sorted(blobs).index(member)
    path = []
    for level in (levels or _levels(blobs))[:-1]:
        sib = k ^ 1
        if sib < len(level):
            path.append(["L" if sib < k else "R", level[sib].hex()])
        k //= 2
    return path


def root_from_path(member: str, digest: str, path) -> str | None:
    """The root that ``member``'s blob digest and its ``path`` lead to, or None when the path is malformed."""
    node = _leaf(member, digest)
    if not isinstance(path, list) or len(path) > 64:
        return None
    for step in path:
        if not (isinstance(step, list) and len(step) == 2 and step[0] in ("L", "R") and isinstance(step[1], str)
                and HEX32.fullmatch(step[1])):
            return None
        sib = bytes.fromhex(step[1])
        node = _node(sib, node) if step[0] == "L" else _node(node, sib)
    return node.hex()


def pairs_digest(pairs: dict) -> str:
    """The digest of an upload's pair commitments (``{neighbour: commitment}``)."""
    return digest(canonical(pairs))


def signed_upload(round_id: str, phase: int, contributor: str, body_sha: str, root: str, pairs: str) -> bytes:
    """What an upload's signature covers: the masked vector's SHA-256, its blobs' Merkle root and its pair
    commitments' digest (a committee member checks it from its own blob, its path and the two digests)."""
    return message("committee-upload", round_id, int(phase), contributor, str(body_sha), str(root), str(pairs))


def upload_message(round_id: str, phase: int, contributor: str, body_sha: str, header: dict) -> bytes:
    """What a contributor signs with its committee-mode upload: the masked vector (``body_sha``: its hex SHA-256) and
    the header of its blobs (``{"blobs": {member: digest}, "pairs": {neighbour: commitment}}``), as
    :func:`signed_upload`."""
    blobs, pairs = (header.get(k) if isinstance(header.get(k), dict) else {} for k in ("blobs", "pairs"))
    return signed_upload(round_id, phase, contributor, body_sha, blobs_root(blobs), pairs_digest(pairs))


def blob_digest(blob: str) -> str:
    """The digest an upload's header holds for one blob."""
    return digest(blob.encode())


def consistency_message(round_id: str, phase: int, uploaded) -> bytes:
    """What a committee member signs at the consistency step of ``phase``: the set of uploads it was shown."""
    return message("committee-consistency", round_id, int(phase), set_digest(uploaded))


def answers_message(round_id: str, phase: int, member: str, answers: dict) -> bytes:
    """What a committee member signs with its unmasking answers of ``phase``."""
    return message("committee-unmask", round_id, int(phase), member, digest(canonical(answers)))


def set_problem(uploaded, members, graph, least: int, threshold: int) -> str | None:
    """Why a set of uploads cannot be signed or answered for (a committee member's check), or None: it must be a
    subset of the step's members, hold at least ``least`` (N - F), and give every uploader at least ``threshold`` of
    its neighbours among the uploads."""
    up, members = frozenset(uploaded), frozenset(members)
    stray = next((u for u in sorted(up) if u not in members), None)
    if stray is not None:
        return f"names {stray[:40]!r}, who is not a member of the step"
    if len(up) < least:
        return f"holds {len(up)} uploads, fewer than the {least} the noise was planned for (N - F)"
    for u in sorted(up):
        have = sum(1 for w in graph[u] if w in up)
        if have < threshold:
            return (f"counts {u[:40]!r} as uploaded with {have} of its neighbours, fewer than the threshold"
                    f" {threshold}: its self-mask seed would unmask its upload alone")
    return None


__all__ = ["committee_of", "committee_index", "pair_seed_c", "pair_commitment", "make_blobs", "open_blob",
           "upload_message", "consistency_message", "answers_message", "set_problem",
           "blob_digest", "blobs_root", "blob_tree", "blob_path", "root_from_path",
           "pairs_digest", "signed_upload"]
