"""The secure sum's server side, one module per mode (as :mod:`dptopic.protocol.secure_sum`), each mode's round split
by what it does.

The default round: its settings and the refusals every mode shares (:mod:`.config`), its tables and database
(:mod:`.database`), its state as stored (:mod:`.store`), its steps (:mod:`.state`), its messages (:mod:`.default`,
:class:`~.default.SecureRound`), its HTTP app (:mod:`.default_app`) and what every mode's app shares (:mod:`.web`).
The committee mode: its steps (:mod:`.committee_state`), its messages (:mod:`.committee`), kept in a database
(:mod:`.committee_store`), served (:mod:`.committee_app`). A round in cohorts (:mod:`.cohorts`, served by
:mod:`.cohort_app`), and cohorts in the committee mode (:mod:`.committee_cohorts`)."""
__all__: list = []
