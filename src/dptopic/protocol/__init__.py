"""What a contributor and the server agree on, and nothing that sees a contributor's documents.

- file formats and messages: word-level reports (:mod:`~dptopic.protocol.reports`), document-level reports
  (:mod:`~dptopic.protocol.document_reports`), FedLDA's messages (:mod:`~dptopic.protocol.fedlda_messages`), which
  module reads each report kind (:mod:`~dptopic.protocol.formats`), the small codecs and limits of the HTTP API
  (:mod:`~dptopic.protocol.codec`);
- the public settings each side checks: FedLDA's (:mod:`~dptopic.protocol.fedlda`), a secure-sum round's plan
  (:mod:`~dptopic.protocol.secure_sum.plan`) and its enrollment: the operator's invitations and signed directory
  (:mod:`~dptopic.protocol.secure_sum.enrollment`);
- the pure maths of each step: the estimators a collector runs on randomized reports
  (:mod:`~dptopic.protocol.estimation`), FedLDA's aggregation (:mod:`~dptopic.protocol.fedlda_server`), the secure
  sum's neighbour graph (:mod:`~dptopic.protocol.secure_sum.graph`), key agreement, signatures and masks
  (:mod:`~dptopic.protocol.secure_sum.crypto`), its ring (:mod:`~dptopic.protocol.secure_sum.ring`), its step
  messages and unmasking (:mod:`~dptopic.protocol.secure_sum.default`), Shamir sharing
  (:mod:`~dptopic.protocol.secure_sum.shamir`).

Both :mod:`dptopic.contributor` and :mod:`dptopic.service` import from here; the models simulate both sides in one
process with the same code.
"""
__all__: list = []
