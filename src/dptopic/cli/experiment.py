"""``experiment``: reproduce the papers' figures (CSV + PNG + a JSON verdict).

Each experiment is a sub-command registered by one function below; an experiment
module of its own adds ``register_experiment(esub)`` and one line in :data:`EXPERIMENTS`.
"""
from __future__ import annotations

from pathlib import Path

from ._flags import CORPUS_RULES, JOBS_RULES, epsilon_rules, flag_errors
from ._common import (add_common_experiment_args, epsilon_value, experiment_corpora, make_console, positive_int,
                      print_verdict)


def cmd_hdp_utility(a):
    from .. import experiments

    console = make_console()
    train, test = experiment_corpora(a.corpus, max_docs=a.max_docs)
    out = Path(a.out)
    s = experiments.hdp_utility(train, test, out, eps_grid=tuple(a.eps_grid), n_topics=a.topics,
                                n_iter=a.iterations, seeds=list(range(a.seeds)),
                                progress=lambda n, e, sd: console.print(f"  {n} eps_L={e} seed={sd} done"))
    console.print(f"non-private {s['non_private']:.1f}, limited inherent {s['limited_inherent']:.1f}")
    for e, h, c in zip(s["eps_grid"], s["hdp"], s["cdp_plus"]):
        console.print(f"eps_L={e:g}: HDP-LDA {h:.1f}  CDP-LDA+ {c:.1f}")
    print_verdict(console, s, out, ["hdp_utility.csv", "hdp_utility.png", "hdp_utility_summary.json"])


def cmd_topic_attack(a):
    from .. import experiments

    console = make_console()
    train, _ = experiment_corpora(a.corpus, max_docs=a.max_docs)
    out = Path(a.out)
    s = experiments.topic_attack_experiment(train, out, n_topics=a.topics, n_iter=a.iterations,
                                            seeds=list(range(a.seeds)), n_targets=a.targets,
                                            progress=lambda n: console.print(f"  {n} done"))
    for n, v in s["final_p_true"].items():
        console.print(f"{n}: P(true word) after {a.iterations} iterations = {v:.4f}")
    print_verdict(console, s, out, ["topic_attack.csv", "topic_attack.png", "topic_attack_summary.json"])


def register_zhao_central(esub) -> None:
    u = esub.add_parser("hdp-utility", help="Zhao et al. Fig. 5: perplexity against eps_L (HDP-LDA, CDP-LDA+)")
    add_common_experiment_args(u, out="runs/hdp-utility")
    u.add_argument("--eps-grid", type=epsilon_value, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    u.set_defaults(func=cmd_hdp_utility)
    t = esub.add_parser("topic-attack", help="Zhao et al. Fig. 4: topic-based attack against iterations")
    add_common_experiment_args(t, out="runs/topic-attack")
    t.add_argument("--targets", type=positive_int, default=20, help="target tokens per run")
    t.set_defaults(func=cmd_topic_attack)


def register_park_svi(esub) -> None:
    from .svi import register_svi_experiment

    register_svi_experiment(esub)


# One registration function per paper's experiments, in the order --help lists them.
from .experiment_manzonelli import register_manzonelli  # noqa: E402
from .fed import register_fedlda_experiment  # noqa: E402
from .local import register_zhao_local  # noqa: E402

EXPERIMENTS = [register_zhao_central, register_zhao_local, register_park_svi, register_fedlda_experiment,
               register_manzonelli]


# The library parameters each experiment sets from its flags, for its errors (cli._flags).
_TOPICS = {"n_topics": "--topics", "n_iter": "--iterations"}
EXPERIMENT_FLAGS = {
    "hdp-utility": {**_TOPICS, "epsilon_laplace": "--eps-grid"},
    "topic-attack": {**_TOPICS, "n_targets": "--targets"},
    "ldp-utility": {**_TOPICS, "epsilon_word": "--eps-grid"},
    "olp": {**_TOPICS, "batch_size": "--batch-size", "n_batches": "--batches", "prior_size": "--prior-size"},
    "svi": {"n_topics": "--topics", "noise_multiplier": "--sigmas", "sampling_rate": "--sampling-rates",
            "n_epochs": "--epochs", "clip": "--clip", "delta": "--delta", "tau0": "--tau0"},
    "fedlda": {"n_topics": "--topics", "epsilon": "--eps-table", "rounds": "--rounds", "pad_length": "--pad-length",
               "report_words": "--report-words", "local_inference": "--local-inference", "n_jobs": "--jobs"},
    "lira": {"n_topics": "--topics", "n_iter": "--cgs-iterations", "max_vocab": "--max-vocab", "n_jobs": "--jobs",
             "n_targets": "--targets", "delta_vocab": "--delta-v"},
    "classifier-mia": {**_TOPICS, "max_vocab": "--max-vocab", "epsilon": "--eps-grid"},
}


EXPERIMENT_RULES = {"classifier-mia": epsilon_rules("--eps-grid"), "ldp-utility": epsilon_rules("--eps-grid"),
                    "hdp-utility": epsilon_rules("--eps-grid")}


def experiment_flag_names(name: str, a) -> dict:
    """The parameters :data:`EXPERIMENT_FLAGS` maps for experiment ``name``, less those the user named himself in a
    ``NAME=VALUE`` option (``lira --dp-set``): an error about one of those keeps the name he typed."""
    typed = {item.split("=", 1)[0].strip() for item in getattr(a, "dp_set", None) or []}
    return {k: v for k, v in EXPERIMENT_FLAGS.get(name, {}).items() if k not in typed}


def _guard_out(name, func):
    """The ``--out`` rule of every experiment: a new or empty folder, or one an experiment wrote (with
    ``--overwrite``); checked before any work, the folder marked as ours once it is created."""
    def run(a):
        import sys
        import warnings
        from pathlib import Path

        from .._io import OUTPUT_MARKER, check_output_folder, mark_output_folder, refuse_other_writer

        check_output_folder(a.out, overwrite=a.overwrite, what=f"{name} result set")
        refuse_other_writer(a.out, f"experiment {name}")
        print("note: an experiment fits several models on the same documents: their budgets add up, and its figures"
              " measure the trainers on this corpus; they are not a private release of it.", file=sys.stderr)
        out = Path(a.out)
        existed = out.exists()
        mark_output_folder(a.out, f"experiment {name}")
        try:
            with warnings.catch_warnings():  # the per-fit reuse warnings, said once above, for this experiment only
                for text in (r".*already used by an earlier private fit", r".*trained a private model in this process"):
                    warnings.filterwarnings("ignore", message=text, category=UserWarning)
                from ..errors import DataVocabularyWarning, SeededNoiseWarning

                for quiet in (SeededNoiseWarning, DataVocabularyWarning):  # measurements with fixed seeds, no release
                    warnings.simplefilter("ignore", quiet)
                with flag_errors(experiment_flag_names(name, a),
                                 EXPERIMENT_RULES.get(name, ()) + CORPUS_RULES + JOBS_RULES):
                    result = func(a)
        except BaseException:
            # a run that stopped before writing anything leaves no marked folder behind to block the next one
            if [e.name for e in out.iterdir()] == [OUTPUT_MARKER]:
                (out / OUTPUT_MARKER).unlink()
                if not existed:
                    out.rmdir()
            raise
        mark_output_folder(a.out, f"experiment {name}", done=True)
        return result

    return run


def register(sub) -> None:
    ex = sub.add_parser("experiment", help="reproduce the papers' figures (CSV + PNG + a verdict)")
    esub = ex.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    for reg in EXPERIMENTS:
        reg(esub)
    for name, p in esub.choices.items():
        p.add_argument("--overwrite", action="store_true", help="replace --out if an earlier experiment wrote it")
        p.set_defaults(func=_guard_out(name, p.get_default("func")))
