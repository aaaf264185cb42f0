"""Noise mechanisms. Each returns its output together with the privacy event it spent.

The names below are imported on first use (PEP 562), so that a contributor's ``dptopic randomize``, which needs only
the local randomizers, does not load the Gaussian and Laplace samplers and their compiled kernels."""
from .._lazy_names import lazy_names

_WHERE = {"gaussian_mechanism": "gaussian", "clamp": "postprocess", "normalize_rows": "postprocess",
          "replacement_table": "rrp", "rrp_perturb": "rrp", "discrete_laplace_pmf": "laplace",
          "laplace_mechanism": "laplace", "laplace_noise": "laplace", "laplace_with_scale": "laplace",
          "randomized_response": "randomized_response"}

__all__ = ["laplace_mechanism", "laplace_with_scale", "laplace_noise", "discrete_laplace_pmf", "clamp",
           "normalize_rows", "randomized_response", "rrp_perturb", "replacement_table", "gaussian_mechanism"]


__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
