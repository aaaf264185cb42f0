"""Privacy accounting: events, the ledger, tight composition, and the paper calculators."""
from .budget import hdp_iteration_events, hdp_total_epsilon, smallest_hdp_budget, solve_epsilon_laplace
from .events import LaplaceEvent, PureDPEvent
from .inherent import (eps_iter_state, eps_iter_static, eps_related, eps_replaced_state, eps_total,
                       eps_total_static, hdp_clip_bound, hdp_epsilon_inherent)
from .fedlda import ApproxDPEvent, delta0, effective_epsilon, eta, rrp_event, theorem2_error_bound
from .local import RandomizedResponseEvent, epsilon_from_f, f_from_epsilon, local_privacy_report
from .ledger import WORD_RELATION, PrivacyLedger, compose_pld, compose_rdp, non_private_report

__all__ = ["LaplaceEvent", "PureDPEvent", "PrivacyLedger", "WORD_RELATION", "non_private_report", "compose_pld", "compose_rdp",
           "eps_replaced_state", "eps_related", "eps_iter_state", "eps_iter_static", "eps_total",
           "eps_total_static", "hdp_epsilon_inherent", "hdp_clip_bound", "hdp_iteration_events",
           "hdp_total_epsilon", "smallest_hdp_budget", "solve_epsilon_laplace",
           "ApproxDPEvent", "delta0", "eta", "effective_epsilon", "rrp_event", "theorem2_error_bound",
           "RandomizedResponseEvent", "epsilon_from_f", "f_from_epsilon", "local_privacy_report"]
