"""``experiment``: reproduce the papers' figures (CSV + PNG + a JSON verdict).

Each experiment is a sub-command registered by one function below; an experiment
module of its own adds ``register_experiment(esub)`` and one line in :data:`EXPERIMENTS`.
"""
from __future__ import annotations

from pathlib import Path

from .. import experiments
from .._io import check_output_folder, marked_run, refuse_other_writer
from ..experiments.measuring import MEASUREMENT_NOTE, measuring
from ..experiments.park_svi import check_svi_grid
from ..reporting.terminal import esc, make_console, print_verdict
from . import _common
from ._common import add_common_experiment_args, epsilon_value, positive_int
from ._flags import flag_errors


def cmd_hdp_utility(a):
    console = make_console()
    train, test = _common.experiment_corpora(a.corpus, max_docs=a.max_docs)
    out = Path(a.out)
    s = experiments.hdp_utility(train, test, out, eps_grid=tuple(a.eps_grid), n_topics=a.topics,
                                n_iter=a.iterations, seeds=list(range(a.seeds)),
                                progress=lambda n, e, sd: console.print(f"  {n} eps_L={e} seed={sd} done"))
    console.print(f"non-private {s['non_private']:.1f}, limited inherent {s['limited_inherent']:.1f}")
    for e, h, c in zip(s["eps_grid"], s["hdp"], s["cdp_plus"]):
        console.print(f"eps_L={e:g}: HDP-LDA {h:.1f}  CDP-LDA+ {c:.1f}")
    print_verdict(console, s, out, ["hdp_utility.csv", "hdp_utility.png", "hdp_utility_summary.json"])
    if s.get("short_run_note"):
        console.print(f"[yellow]note[/]: {esc(s['short_run_note'])}", markup=True)


def cmd_topic_attack(a):
    console = make_console()
    train, _ = _common.experiment_corpora(a.corpus, max_docs=a.max_docs)
    out = Path(a.out)
    s = experiments.topic_attack_experiment(train, out, n_topics=a.topics, n_iter=a.iterations,
                                            seeds=list(range(a.seeds)), n_targets=a.targets,
                                            progress=lambda n: console.print(f"  {n} done"))
    guess = s["uniform_guess_p_true"]
    for n, v in s["final_p_true"].items():
        console.print(f"{n}: P(true word) after {a.iterations} iterations = {v:.4f} (uniform guess 1/V = {guess:.4f})")
    print_verdict(console, s, out, ["topic_attack.csv", "topic_attack.png", "topic_attack_summary.json"])
    if s.get("short_run_note"):
        console.print(f"[yellow]note[/]: {esc(s['short_run_note'])}", markup=True)


def register_zhao_central(esub) -> None:
    u = esub.add_parser("hdp-utility", help="Zhao et al. Fig. 5: perplexity against eps_L (HDP-LDA, CDP-LDA+)")
    add_common_experiment_args(u, out="runs/hdp-utility")
    u.add_argument("--eps-grid", type=epsilon_value, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    u.set_defaults(func=cmd_hdp_utility)
    t = esub.add_parser("topic-attack", help="Zhao et al. Fig. 4: topic-based attack against iterations")
    add_common_experiment_args(t, out="runs/topic-attack")
    t.add_argument("--targets", type=positive_int, default=20, help="target tokens per run (default 20)")
    t.set_defaults(func=cmd_topic_attack)


# One registration function per paper's experiments, in the order --help lists them.
from .experiment_manzonelli import check_classifier_mia_args, check_lira_args, register_manzonelli  # noqa: E402
from .experiment_secure_sum import register_experiment  # noqa: E402
from .fed import register_fedlda_experiment  # noqa: E402
from .local import register_zhao_local  # noqa: E402
from .svi import register_svi_experiment  # noqa: E402

EXPERIMENTS = [register_zhao_central, register_zhao_local, register_svi_experiment, register_fedlda_experiment,
               register_manzonelli, register_experiment]


# The library parameters each experiment sets from its flags, for its errors (cli._flags).
_TOPICS = {"n_topics": "--topics", "n_iter": "--iterations"}
EXPERIMENT_FLAGS = {
    # "epsilon": the Laplace noise's refusals (mechanisms) name the epsilon that sets its scale
    "hdp-utility": {**_TOPICS, "epsilon_laplace": "--eps-grid", "epsilon": "--eps-grid"},
    "topic-attack": {**_TOPICS, "n_targets": "--targets"},
    "ldp-utility": {**_TOPICS, "epsilon_word": "--eps-grid", "epsilon": "--eps-grid"},
    "olp": {**_TOPICS, "batch_size": "--batch-size", "n_batches": "--batches", "prior_size": "--prior-size"},
    "svi": {"n_topics": "--topics", "noise_multiplier": "--sigmas", "sampling_rate": "--sampling-rates",
            "n_epochs": "--epochs", "clip": "--clip", "delta": "--delta", "tau0": "--tau0"},
    "fedlda": {"n_topics": "--topics", "epsilon": "--eps-table", "rounds": "--rounds", "pad_length": "--pad-length",
               "report_words": "--report-words", "local_inference": "--local-inference", "n_jobs": "--jobs"},
    "lira": {"n_topics": "--topics", "n_iter": "--cgs-iterations", "max_vocab": "--max-vocab", "n_jobs": "--jobs",
             "n_targets": "--targets", "delta_vocab": "--delta-v"},
    "classifier-mia": {**_TOPICS, "max_vocab": "--max-vocab", "epsilon": "--eps-grid"},
    "secure-sum": {"servers": "--server", "workers": "--workers", "token": "--token-file", "dropout": "--dropout",
                   "invitations": "--invitations"},
}


def experiment_flag_names(name: str, a) -> dict:
    """The parameters :data:`EXPERIMENT_FLAGS` maps for experiment ``name``, less those the user named himself in a
    ``NAME=VALUE`` option (``lira --dp-set``): an error about one of those keeps the name he typed."""
    typed = {item.split("=", 1)[0].strip() for item in getattr(a, "dp_set", None) or []}
    return {k: v for k, v in EXPERIMENT_FLAGS.get(name, {}).items() if k not in typed}


def _check_svi(a) -> None:
    """``experiment svi``: every (sigma, q) of the grid builds a valid DP-SVI before the corpus is read."""
    check_svi_grid(a.sigmas, a.sampling_rates, n_topics=a.topics, n_epochs=a.epochs, clip=a.clip, delta=a.delta,
                   tau0=a.tau0)


# The argument checks each experiment makes before any work (before its folder is written or its corpus read).
EXPERIMENT_CHECKS = {"svi": _check_svi, "lira": check_lira_args, "classifier-mia": check_classifier_mia_args}


def _guard_out(name, func):
    """The ``--out`` rule of every experiment: a new or empty folder, or one dptopic commands wrote (with
    ``--overwrite``), checked before any work once the arguments are; the folder's marker then lists the files
    this run wrote. ``--overwrite`` lets the run write over files; nothing is deleted: the files this experiment's
    earlier runs wrote that this one did not write again stay, listed as ``earlier``, and a run that fails leaves
    every file and listing as it was."""
    def run(a):
        command = f"experiment {name}"
        check = EXPERIMENT_CHECKS.get(name)
        if check is not None:
            with flag_errors(experiment_flag_names(name, a)):
                check(a)
        check_output_folder(a.out, overwrite=a.overwrite, what=f"{name} result set", command=command)
        # experiments share a folder (docs/figures holds all their figures); an audit's or a shard set's is refused
        refuse_other_writer(a.out, command, share_with="experiment ")
        # on standard output: an error the run stops on later is then the one line on standard error
        print(MEASUREMENT_NOTE)
        # the files a failed run wrote are listed as its own (unfinished); a run that wrote nothing leaves no marked
        # folder behind to block the next one; measuring: the per-fit reuse warnings, said once above, for this
        # experiment only
        with marked_run(a.out, command), measuring(), flag_errors(experiment_flag_names(name, a)):
            return func(a)

    return run


# Help for the experiment flags registered without one (several experiments share their names and meaning).
_FLAG_HELP = {
    "corpus": "'demo' (State of the Union paragraphs) or '20newsgroups' (needs 'make data') (default: %(default)s)",
    "topics": "number of topics K (default %(default)s)",
    "iterations": "Gibbs sweeps of every model (default %(default)s)",
    "seeds": "how many seeds: the run repeats with seeds 0, 1, ..., N-1 and reports the means (default %(default)s;"
             " at most 1,000)",
    "out": "results folder: new or empty, or one dptopic experiments wrote (then --overwrite) (default %(default)s)",
    "max_test_docs": "use only the first N held-out documents (default: all)",
    # svi
    "sigmas": "DP-SVI noise multipliers sigma of the grid (default %(default)s)",
    "sampling_rates": "Poisson sampling rates q of the grid, each in (0, 1] (default %(default)s)",
    "epochs": "expected passes over the training documents (default %(default)s)",
    "clip": "per-document Frobenius-norm bound on the expected sufficient statistics; the noise std is sigma x clip"
            " (default %(default)s)",
    "delta": "the delta at which every run's epsilon is reported, in (0, 1) (default %(default)s)",
    "tau0": "learning-rate delay tau0 of the SVI step size (default %(default)s)",
    # olp
    "batch_size": "Figs. 8-9: documents per mini-batch (default %(default)s)",
    "batches": "Figs. 8-10: mini-batches in the stream (default %(default)s)",
    "prior_size": "Figs. 8 and 10: public prior documents D_0 (default %(default)s)",
    "prior_sizes": "Fig. 9: the prior sizes compared (default %(default)s)",
    "batch_sizes": "Fig. 10: the mini-batch sizes compared (default %(default)s)",
}
_EPS_GRID_HELP = {
    "hdp-utility": "eps_L values (the Laplace part, per iteration) of the x axis (default %(default)s)",
    "ldp-utility": "eps values of the x axis: LP-LDA's per-word eps_word and CDP-LDA's nominal eps (default"
                   " %(default)s)",
    "olp": "Fig. 8: the per-word eps_word values of OLP-LDA (default %(default)s)",
}


def register(sub) -> None:
    ex = sub.add_parser("experiment", help="reproduce the papers' figures (CSV + PNG + a verdict)")
    esub = ex.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    for reg in EXPERIMENTS:
        reg(esub)
    for name, p in esub.choices.items():
        p.add_argument("--overwrite", action="store_true",
                       help="write into an --out that dptopic commands wrote, over the files this run writes again;"
                            " nothing is deleted (the other files stay, listed in the folder's .dptopic-output)")
        for act in p._actions:
            if act.help is None and act.dest in _FLAG_HELP:
                act.help = _FLAG_HELP[act.dest]
            elif act.help is None and act.dest == "eps_grid" and name in _EPS_GRID_HELP:
                act.help = _EPS_GRID_HELP[name]
        p.set_defaults(func=_guard_out(name, p.get_default("func")))
