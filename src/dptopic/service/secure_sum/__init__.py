"""The secure sum's server side, one module per mode (as :mod:`dptopic.protocol.secure_sum`): the default round
(:mod:`.default`), the committee mode (:mod:`.committee`), a round in cohorts (:mod:`.cohorts`, served by
:mod:`.cohort_app`) and cohorts in the committee mode (:mod:`.committee_cohorts`)."""
__all__: list = []
