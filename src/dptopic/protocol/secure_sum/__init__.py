"""The secure sum's protocol side: what a contributor and the server agree on, a module by what it does.

- :mod:`.plan`: :class:`~.plan.SecureSumPlan`, a round's public settings and the noise they imply;
- :mod:`.graph`: the neighbour graph, the thresholds and the committee size that survive the plan's dropouts;
- :mod:`.crypto`: key agreement, the pairwise and self-mask seeds, the masks' generator, signatures;
- :mod:`.messages`: the protocol's name and identifiers, and the bytes every signature and digest covers;
- :mod:`.ring`: the ring the sums are taken in (modulo 2^32 or 2^64) and the co-occurrence triangle;
- :mod:`.default`: the default mode's step messages, their checks, and the server's unmasking (read its note first:
  the protocol and why a lying server learns no one's statistic);
- :mod:`.committee`, :mod:`.cohorts`: the committee mode and rounds in cohorts; :mod:`.enrollment` and
  :mod:`.cohort_enrollment`: the operator's invitations and signed directory; :mod:`.shamir`: Shamir sharing;
  :mod:`.person_ids`: the people a directory names.

The names of the first six are also the package's own (``from dptopic.protocol import secure_sum as ss``:
``ss.SecureSumPlan``, ``ss.sign``), each imported from its module on first use.
"""
from ..._lazy_names import lazy_names as _lazy_names

_EXPORTS = {
    **dict.fromkeys(("RANKING_RATIO", "MAX_WORDS", "DEFAULT_MAX_WORDS", "WRAP_SHARE", "MAX_INFLATION", "MAX_SCALE_LOG2",
                     "IDEAL_SCALE", "ring_scale", "SecureSumPlan"), "plan"),
    **dict.fromkeys(("default_collusion", "LIVENESS_TARGET", "neighbours_short", "threshold_of", "committee_threshold",
                     "committee_fails", "committee_size", "ring_order", "NeighbourGraph", "neighbour_graph",
                     "holder_index", "consistent_signers", "plan_degree"), "graph"),
    **dict.fromkeys(("SEED_BYTES", "prg", "hkdf", "agree", "public_key", "new_private_key", "P25519", "LOW_ORDER_U",
                     "valid_x25519", "pair_seed", "share_key", "seed_commitment", "new_signing_key", "signing_public",
                     "sign", "MAX_VERIFIED", "verify"), "crypto"),
    **dict.fromkeys(("PHASES", "PROTOCOL", "ROUND_ID", "HEX32", "HEX_SIG", "canonical", "message", "digest",
                     "set_digest"), "messages"),
    **dict.fromkeys(("MODULUS_BITS", "RING_BITS", "DTYPE", "DTYPES", "ring_dtype", "to_ring", "from_ring", "ring_sum",
                     "triangle_size", "matrix_to_triangle", "triangle_to_matrix"), "ring"),
    **dict.fromkeys(("SHARE_HEX", "keys_message", "upload_message", "consistency_message", "answers_message",
                     "check_keys", "check_share", "reconstruct_checked", "unmask_sum"), "default"),
}
__all__ = list(_EXPORTS)

__getattr__, __dir__ = _lazy_names(__name__, _EXPORTS, globals())
