"""Privacy accounting: events, the ledger, tight composition, and the paper calculators.

The names below are imported on first use (PEP 562): the Gaussian accountant pulls in much of SciPy, and a
contributor's ``dptopic randomize`` needs only the local events (``dptopic.accounting.local``)."""
from .._lazy_names import lazy_names

_WHERE = {
    **dict.fromkeys(("hdp_iteration_events", "hdp_total_epsilon", "smallest_hdp_budget", "solve_hdp_epsilon_laplace"),
                    "budget"),
    **dict.fromkeys(("LaplaceEvent", "PureDPEvent", "ApproxDPEvent", "RandomizedResponseEvent", "SubsampledGaussianEvent",
                     "epsilon_from_f"), "events"),
    **dict.fromkeys(("eps_iter_state", "eps_iter_static", "eps_related", "eps_replaced_state", "eps_total",
                     "eps_total_static", "hdp_clip_bound", "hdp_epsilon_inherent"), "inherent"),
    **dict.fromkeys(("delta0", "effective_epsilon", "eta", "rrp_event", "theorem2_error_bound"), "fedlda"),
    **dict.fromkeys(("f_from_epsilon", "local_privacy_report"), "local"),
    "fdptm_report": "set_union",
    **dict.fromkeys(("WORD_RELATION", "PrivacyLedger", "compose_pld", "compose_rdp", "non_private_report"), "ledger"),
    **dict.fromkeys(("calibrate_noise_multiplier",
                     "moments_accountant_epsilon", "strong_composition_epsilon", "strong_composition_for_sigma",
                     "strong_composition_noise"), "gaussian"),
}

__all__ = list(_WHERE)


__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
