"""``train --algorithm fed``: build a :class:`~dptopic.models.FedLDA` from command-line arguments."""
from __future__ import annotations

from ._common import positive_float, positive_int, unit_interval


def add_fed_args(t) -> None:
    g = t.add_argument_group("FedLDA (--algorithm fed; see docs/fedlda.md)")
    g.add_argument("--clients", type=positive_int, default=None,
                   help="fed: split the corpus into N users (default: one user per document)")
    g.add_argument("--rounds", type=positive_int, default=50, help="fed: communication rounds (default 50)")
    g.add_argument("--failure-rate", type=unit_interval, default=0.1,
                   help="fed: delta of Theorem 1, the excluded rare-word mass (default 0.1)")
    g.add_argument("--gamma", type=float, default=1.0, help="fed: Zipf exponent gamma >= 1 (default 1)")
    g.add_argument("--sample-ratio", type=float, default=1.0, help="fed: fraction in (0, 1] of the update sent")
    g.add_argument("--pad-length", type=positive_int, default=512, help="fed: update length L before sampling")
    g.add_argument("--variant", choices=("another", "coincide"), default="another",
                   help="fed: a perturbed word is always another word (default) or may coincide")
    g.add_argument("--exclusion", choices=("floor", "tail"), default="floor",
                   help="fed: rare-word rule: 'floor' (sound, default) or 'tail' (the poster's, assumes Zipf)")
    g.add_argument("--replacement", choices=("mixture", "topic"), default="mixture",
                   help="fed: replacement words drawn from the user's topic mixture (default) or the entry's topic")


def build_fedlda(a, common: dict):
    """``common`` holds n_topics, seed, n_jobs, verbose (and alpha/beta when given); ``n_iter`` is ignored."""
    from ..models import FedLDA

    kw = {k: v for k, v in common.items() if k not in ("n_iter", "seed")}
    return FedLDA(epsilon=a.epsilon if a.epsilon is not None else 5.0, delta=a.failure_rate, gamma=a.gamma,
                  rounds=a.rounds, sample_ratio=a.sample_ratio, pad_length=a.pad_length, n_clients=a.clients,
                  variant=a.variant, exclusion=a.exclusion, replacement=a.replacement, report_delta=a.delta,
                  seed=a.seed, **kw)
