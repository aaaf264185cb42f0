"""``train --algorithm svi|online-vb``'s flags (stochastic variational inference, private: Park et al. 2016, or not)
and ``experiment svi``; the run itself is :func:`dptopic.train`'s."""
from __future__ import annotations

import argparse
from pathlib import Path

from .. import experiments
from ..experiments.park_svi import svi_lines
from ..reporting.terminal import esc, make_console, print_verdict
from . import _common
from ._common import positive_float, positive_int, seeds_int


def _passes(text: str):
    """``--epochs``: a number of passes, an integer where it is one (online-vb makes whole passes; svi takes a
    fraction), range-checked by the trainer."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    return int(v) if v.is_integer() else v


def add_svi_args(t) -> None:
    g = t.add_argument_group("svi / online-vb (stochastic variational inference)")
    g.add_argument("--sampling-rate", type=float, default=0.05,
                   help="svi: probability q that each document joins a step's mini-batch (default 0.05)")
    g.add_argument("--noise-multiplier", type=float, default=None,
                   help="svi: noise std / clip; the run's epsilon is reported (instead of --epsilon)")
    g.add_argument("--max-doc-len", type=int, default=500, help="svi: tokens kept per document (default 500)")
    g.add_argument("--epochs", type=_passes, default=None,
                   help="svi: expected passes, steps = round(epochs/q) (default 1); online-vb: passes (default 10)")
    g.add_argument("--no-clip", action="store_true", help="svi: no clipping (sensitivity = --max-doc-len)")


# ---------------------------------------------------------------- experiment svi
def cmd_experiment_svi(a) -> None:
    console = make_console()
    train, test = _common.experiment_corpora(a.corpus, max_docs=a.max_docs)
    s = experiments.svi_tradeoff(train, test, a.out, name=a.corpus, sigmas=tuple(a.sigmas),
                                 sampling_rates=tuple(a.sampling_rates), n_topics=a.topics, n_epochs=a.epochs,
                                 clip=a.clip, delta=a.delta, tau0=a.tau0, seeds=tuple(range(a.seeds)),
                                 table_sigma=a.sigmas[min(1, len(a.sigmas) - 1)],
                                 table_q=a.sampling_rates[min(1, len(a.sampling_rates) - 1)],
                                 progress=lambda msg: console.print(f"  {msg}"))
    for line in svi_lines(s):
        console.print(line)
    n = a.corpus
    print_verdict(console, s, Path(a.out), [f"svi_fig1_{n}.csv", f"svi_fig1_{n}.png", f"svi_table1_{n}.csv",
                                            f"svi_summary_{n}.json"])
    if s.get("short_run_note"):
        console.print(f"[yellow]note[/]: {esc(s['short_run_note'])}", markup=True)


def register_svi_experiment(esub) -> None:
    e = esub.add_parser("svi", help="Park et al. Fig. 1 / Table 1: DP-SVI perplexity against eps, tight vs strong"
                                    " composition")
    e.add_argument("--corpus", default="demo", choices=("demo", "20newsgroups"))
    e.add_argument("--topics", type=positive_int, default=20)
    e.add_argument("--seeds", type=seeds_int, default=1)
    e.add_argument("--max-docs", type=positive_int, default=None, help="use only the first N training documents")
    e.add_argument("--out", default="runs/svi-experiment", help="results folder (default runs/svi-experiment)")
    e.add_argument("--sigmas", type=positive_float, nargs="+", default=[1.0, 1.24, 1.5, 2.0])
    e.add_argument("--sampling-rates", type=positive_float, nargs="+", default=[0.02, 0.05, 0.1])
    e.add_argument("--epochs", type=positive_float, default=1.0)
    e.add_argument("--clip", type=positive_float, default=10.0)
    e.add_argument("--delta", type=positive_float, default=1e-5)
    e.add_argument("--tau0", type=positive_float, default=64.0)
    e.set_defaults(func=cmd_experiment_svi)
