"""Privacy accounting: events, the ledger, tight composition, and the paper calculators."""
from .budget import hdp_iteration_events, hdp_total_epsilon, smallest_hdp_budget, solve_epsilon_laplace
from .events import LaplaceEvent, PureDPEvent
from .inherent import (eps_iter_state, eps_iter_static, eps_related, eps_replaced_state, eps_total,
                       eps_total_static, hdp_clip_bound, hdp_epsilon_inherent)
from .events import ApproxDPEvent
from .fedlda import delta0, effective_epsilon, eta, rrp_event, theorem2_error_bound
from .local import RandomizedResponseEvent, epsilon_from_f, f_from_epsilon, local_privacy_report
from .set_union import fdptm_report
from .ledger import WORD_RELATION, PrivacyLedger, compose_pld, compose_rdp, non_private_report

__all__ = ["ApproxDPEvent", "fdptm_report", "LaplaceEvent", "PureDPEvent", "PrivacyLedger", "WORD_RELATION", "non_private_report", "compose_pld", "compose_rdp",
           "eps_replaced_state", "eps_related", "eps_iter_state", "eps_iter_static", "eps_total",
           "eps_total_static", "hdp_epsilon_inherent", "hdp_clip_bound", "hdp_iteration_events",
           "hdp_total_epsilon", "smallest_hdp_budget", "solve_epsilon_laplace",
           "RandomizedResponseEvent", "epsilon_from_f", "f_from_epsilon", "local_privacy_report",
           "ApproxDPEvent", "delta0", "eta", "effective_epsilon", "rrp_event", "theorem2_error_bound"]
from .gaussian import (DOCUMENT_RELATION, SubsampledGaussianEvent, calibrate_noise_multiplier,  # noqa: E402
                       moments_accountant_epsilon, strong_composition_epsilon, strong_composition_for_sigma,
                       strong_composition_noise)

__all__ += ["SubsampledGaussianEvent", "DOCUMENT_RELATION", "calibrate_noise_multiplier", "moments_accountant_epsilon",
            "strong_composition_epsilon", "strong_composition_noise", "strong_composition_for_sigma"]
