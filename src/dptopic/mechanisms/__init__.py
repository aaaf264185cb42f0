"""Noise mechanisms. Each returns its output together with the privacy event it spent."""
from .clipping import clamp, normalize_rows
from .rrp import replacement_table, rrp_perturb
from .laplace import discrete_laplace_pmf, laplace_mechanism, laplace_noise, laplace_with_scale
from .randomized_response import randomized_response

__all__ = ["laplace_mechanism", "laplace_with_scale", "laplace_noise", "discrete_laplace_pmf", "clamp",
           "normalize_rows",
           "rrp_perturb", "replacement_table",
           "randomized_response"]
