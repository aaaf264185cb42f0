"""``train --algorithm svi|online-vb``'s flags (stochastic variational inference, private: Park et al. 2016, or not)
and ``experiment svi``; the run itself is :func:`dptopic.train`'s."""
from __future__ import annotations

from pathlib import Path

from .. import experiments
from ..experiments.park_svi import svi_lines
from ..reporting.terminal import esc, make_console, print_verdict
from . import _run_common


# ---------------------------------------------------------------- experiment svi
def cmd_experiment_svi(a) -> None:
    console = make_console()
    train, test = _run_common.experiment_corpora(a.corpus, max_docs=a.max_docs)
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


