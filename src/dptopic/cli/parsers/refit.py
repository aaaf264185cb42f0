"""``refit``'s parser (run by cli/refit.py)."""
from __future__ import annotations

from .._common import add_model_arg, add_out_args, positive_int


def register(sub) -> None:
    p = sub.add_parser("refit", help="read a saved docdp-cooc model's topics at another K from its releases (free)",
                       description="Read the topics of a saved model at another number of topics from the noisy"
                                   " releases it saved: post-processing, nothing spent (docs/budget.md).")
    add_model_arg(p, "a saved docdp-cooc model folder")
    p.add_argument("--topics", type=positive_int, default=None, metavar="K", help="the number of topics to read")
    p.add_argument("--suggest", action="store_true",
                   help="choose K from the releases alone (the support test) and print each candidate's supported"
                        " topics; with --topics, only print")
    add_out_args(p, "runs/refit")
    p.set_defaults(run="refit:cmd_refit")
