"""``demo``'s parser (run by cli/demo.py)."""
from __future__ import annotations

import os

from .._common import add_out_args, jobs_int, positive_float, positive_int, seed_int


def register(sub) -> None:
    d = sub.add_parser("demo", help="the main job: topic models of the demo corpus under document-level DP at"
                                    " epsilon = 1, then private HDP-LDA (word-level; hybrid differentially private"
                                    " LDA, Zhao et al.) with a non-private reference; figures as PNG",
                       description="Train on the State of the Union paragraphs, first under document-level DP,"
                                   " epsilon = 1 and delta = 1e-5 in all per paragraph (the words chosen by DP set"
                                   " union inside it, then DocDPCooccurrence), its NPMI beside non-private LDA's on"
                                   " the same words, saved with the suffix -document (--word-level-only skips it);"
                                   " then private HDP-LDA (hybrid differentially private LDA, Zhao et al. 2021: a"
                                   " word-level guarantee, epsilon per word, L times it per paragraph of L words)"
                                   " and non-private LDA on the same split as the reference: both models' held-out"
                                   " figures, the private topics and the privacy card, both models saved. The"
                                   " figures (the leading model's topics as bars, topic quality against epsilon from"
                                   " the shipped utility table) are written as PNG files into the folder named as"
                                   " --out with the suffix -figures.")
    d.add_argument("--topics", type=positive_int, default=20, help="topics K (default 20)")
    # 50 sweeps: half the word-level epsilon of 100 sweeps (531 vs 1053 by PLD) for +2% perplexity
    d.add_argument("--iterations", type=positive_int, default=50, help="Gibbs sweeps of both models (default 50)")
    d.add_argument("--epsilon-laplace", type=positive_float, default=1.0,
                   help="HDP-LDA's Laplace epsilon per sweep, eps_L, a component (default 1; as"
                        " --epsilon-laplace in 'train --algorithm hdp'; the total per word is printed)")
    d.add_argument("--epsilon-inherent", type=positive_float, default=10.0,
                   help="HDP-LDA's bound on the sampler's inherent privacy, eps_I (default 10)")
    d.add_argument("--seed", type=seed_int, default=None,
                   help="seed both models (tests only: whoever knows it can remove the private model's noise);"
                        " default: fresh OS entropy")
    d.add_argument("--save-metrics", action="store_true",
                   help="also save the private model's metrics, labelled 'outside the guarantee'")
    d.add_argument("--jobs", type=jobs_int, default=min(2, os.cpu_count() or 1),
                   help="threads (default: 2, or 1 on one core)")
    d.add_argument("--show-topics", type=positive_int, default=20, help="how many private topics to print (default"
                                                                        " 20)")
    add_out_args(d, "runs/demo")
    d.add_argument("--word-level-only", action="store_true",
                   help="skip the demo's first part (the paragraphs under document-level DP at epsilon = 1 in all, the"
                        " words chosen privately)")
    d.add_argument("--quiet", action="store_true", help="no progress bars")
    d.set_defaults(run="demo:cmd_demo")
