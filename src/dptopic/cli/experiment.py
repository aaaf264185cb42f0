"""``experiment``: reproduce the papers' figures (CSV + PNG + a JSON verdict).

Each experiment is a sub-command of ``experiment``'s parser (cli/parsers/experiment.py: one registration function per
paper, and one line in its ``EXPERIMENTS``), which names the function that runs it; every one runs through
:func:`run_experiment`, which checks its arguments and ``--out`` first.
"""
from __future__ import annotations

from pathlib import Path

from .. import experiments
from .._io import check_output_folder, marked_run, refuse_other_writer
from ..errors import DPTopicError
from ..experiments.measuring import MEASUREMENT_NOTE, measuring
from ..experiments.park_svi import check_svi_grid
from ..reporting.terminal import esc, make_console, print_verdict
from . import _run_common
from ._common import experiment_seed
from ._flags import flag_errors
from .experiment_manzonelli import check_classifier_mia_args, check_lira_args
from .main import command_function


def cmd_hdp_utility(a):
    console = make_console()
    train, test = _run_common.experiment_corpora(a.corpus, max_docs=a.max_docs)
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
    train, _ = _run_common.experiment_corpora(a.corpus, max_docs=a.max_docs)
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


def run_experiment(a):
    """Run the experiment ``a.experiment`` (its parser names its function, ``experiment_run``) under the ``--out`` rule
    of every experiment: a new or empty folder, or one dptopic commands wrote (with ``--overwrite``), checked before
    any work once the arguments are; the folder's marker then lists the files this run wrote. ``--overwrite`` lets the
    run write over files; nothing is deleted: the files this experiment's earlier runs wrote that this one did not
    write again stay, listed as ``earlier``, and a run that fails leaves every file and listing as it was."""
    name, func = a.experiment, command_function(vars(a).pop("experiment_run"))
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


# ------------------------------------------------------------------ experiments
def cmd_ldp_utility(a):
    console = make_console()
    train, test = _run_common.experiment_corpora(a.corpus, max_docs=a.max_docs, max_test_docs=a.max_test_docs)
    s = experiments.ldp_utility(train, test, Path(a.out), eps_grid=tuple(a.eps_grid), n_topics=a.topics,
                                n_iter=a.iterations, seeds=list(range(a.seeds)),
                                progress=lambda n, e, sd: console.print(f"  {n} eps={e} seed={sd} done"))
    console.print(f"non-private {s['non_private']:.1f} (presence only {s['non_private_presence_only']:.1f})")
    for e, lp, c in zip(s["eps_grid"], s["lp_lda"], s["cdp_lda"]):
        console.print(f"eps={e:g}: LP-LDA {lp:.1f}  CDP-LDA {c:.1f}")
    print_verdict(console, s, a.out, ["ldp_utility.csv", "ldp_utility.png", "ldp_utility_summary.json"])



def cmd_olp(a):
    console = make_console()
    train, test = _run_common.experiment_corpora(a.corpus, max_docs=a.max_docs, max_test_docs=a.max_test_docs)
    try:
        s = experiments.olp_experiment(train, test, Path(a.out), eps_grid=tuple(a.eps_grid), n_topics=a.topics,
                                       n_iter=a.iterations, batch_size=a.batch_size, n_batches=a.batches,
                                       prior_size=a.prior_size, prior_sizes=tuple(a.prior_sizes),
                                       batch_sizes=tuple(a.batch_sizes), seed=experiment_seed(a, console),
                                       progress=lambda f, x: console.print(f"  {f} {x} done"))
    except DPTopicError:        # a flag's own range error, already one line naming it
        raise
    except ValueError as e:
        raise DPTopicError(f"{e}: use fewer --batches or smaller --prior-sizes/--batch-sizes.") from None
    for k, (first, last) in s["fig8_first_last"].items():
        console.print(f"Fig. 8 {k}: perplexity {first:.1f} after batch 1 -> {last:.1f} after batch {a.batches}")
    print_verdict(console, s, a.out, ["olp_batches.csv", "olp_prior_size.csv", "olp_batch_size.csv", "olp.png",
                                      "olp_summary.json"])
