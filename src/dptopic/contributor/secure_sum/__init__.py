"""A person's side of the secure sum, one module per mode, beside the transport that runs it.

What a contributor computes and checks, transport-free (each sees the person's documents or secrets):

- :mod:`.default`: :class:`~.default.SecureContributor`, the default round, built of :mod:`.checks` (every check
  of what the server says), :mod:`.masks` (the round's secrets, shares and masks), :mod:`.person_statistics`
  (the person's bounded statistics) and :mod:`.state` (the state file);
- :mod:`.committee`: :class:`~.committee.CommitteeContributor`, the committee mode;
- :mod:`.cohorts`: a cohort's member and a bridge's delegate (rounds in cohorts).

Over HTTP: :mod:`.client` (``dptopic submit`` with an invitation: :func:`~.client.take_part`) and :mod:`.cohort_client`
(a round in cohorts). The protocol both sides agree on is :mod:`dptopic.protocol.secure_sum`, laid out the same way.
"""
__all__: list = []
