"""``experiment``'s parser: one sub-command per paper's figures (run by cli/experiment.py, which checks ``--out`` and
then runs the experiment's own function: cli/local.py, svi.py, fed.py, experiment_manzonelli.py,
experiment_secure_sum.py)."""
from __future__ import annotations

from ...attacks.settings import MAX_SHADOWS
from .._common import (
    _float_arg,
    _int_arg,
    add_common_experiment_args,
    add_seed_arg,
    epsilon_budget,
    epsilon_value,
    jobs_int,
    positive_float,
    positive_int,
    seeds_int,
    unit_interval,
    words_or,
)


def register_zhao_central(esub) -> None:
    u = esub.add_parser("hdp-utility", help="Zhao et al. Fig. 5: perplexity against eps_L (HDP-LDA, CDP-LDA+)")
    add_common_experiment_args(u, out="runs/hdp-utility")
    u.add_argument("--eps-grid", type=epsilon_value, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    u.set_defaults(run="experiment:cmd_hdp_utility")
    t = esub.add_parser("topic-attack", help="Zhao et al. Fig. 4: topic-based attack against iterations")
    add_common_experiment_args(t, out="runs/topic-attack")
    t.add_argument("--targets", type=positive_int, default=20, help="target tokens per run (default 20)")
    t.set_defaults(run="experiment:cmd_topic_attack")


def register_zhao_local(esub) -> None:
    u = esub.add_parser("ldp-utility", help="Zhao et al. Fig. 6: perplexity against eps (LP-LDA, CDP-LDA)")
    add_common_experiment_args(u, seeds=2, out="runs/ldp-utility")
    u.add_argument("--eps-grid", type=epsilon_value, nargs="+", default=[0.5, 1.0, 2.0, 3.0, 5.0, 8.0])
    u.add_argument("--max-test-docs", type=positive_int, default=None)
    u.set_defaults(run="experiment:cmd_ldp_utility")
    o = esub.add_parser("olp", help="Zhao et al. Figs. 8-10: OLP-LDA against batches, prior size, batch size")
    o.add_argument("--corpus", default="demo", choices=("demo", "20newsgroups"))
    o.add_argument("--topics", type=positive_int, default=50)
    o.add_argument("--iterations", type=positive_int, default=50, help="Gibbs sweeps per mini-batch (default 50)")
    o.add_argument("--max-docs", type=positive_int, default=None, help="use only the first N training documents")
    o.add_argument("--out", default="runs/olp-experiment", help="results folder (default runs/olp-experiment)")
    o.add_argument("--eps-grid", type=epsilon_value, nargs="+", default=[1.0, 3.0, 5.0, 8.0])
    o.add_argument("--batch-size", type=positive_int, default=160)
    o.add_argument("--batches", type=positive_int, default=15)
    o.add_argument("--prior-size", type=positive_int, default=500)
    o.add_argument("--prior-sizes", type=positive_int, nargs="+", default=[100, 250, 500, 1000])
    o.add_argument("--batch-sizes", type=positive_int, nargs="+", default=[40, 80, 160, 320, 640])
    add_seed_arg(o)
    o.add_argument("--max-test-docs", type=positive_int, default=None)
    o.set_defaults(run="experiment:cmd_olp")


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
    e.set_defaults(run="svi:cmd_experiment_svi")


def register_fedlda_experiment(esub) -> None:
    p = esub.add_parser("fedlda", help="Wang et al. FedLDA poster: budget/topics/sampling-ratio figures and the"
                                       " downstream-classification table")
    p.add_argument("--tasks", nargs="+", choices=("20ng", "sotu"), default=["20ng", "sotu"],
                   help="classification tasks: 20ng (sci.space vs sci.med) and/or sotu (party); default both")
    p.add_argument("--eps-table", type=positive_float, nargs="+", default=[7.5, 5.0], metavar="EPS",
                   help="epsilons per entry to run (default 7.5 5: the poster's and the harder one)")
    p.add_argument("--topics", type=positive_int, default=20, help="topics K (default 20)")
    p.add_argument("--rounds", type=positive_int, default=20, help="FedLDA rounds (default 20)")
    p.add_argument("--max-docs", type=positive_int, default=3000, help="training documents per task (test: a quarter; default 3000)")
    p.add_argument("--rules", nargs="+", choices=("none", "tail", "floor"), default=["none", "tail", "floor"],
                   help="exclusion rules of the table (default all three; the figures always run all three)")
    p.add_argument("--pad-length", type=positive_int, default=256, help="entries per user (L; default 256)")
    p.add_argument("--local-inference", choices=("em", "gibbs"), default="em",
                   help="how clients of the none rule label their reports (default em; docs/fedlda.md)")
    p.add_argument("--report-words", type=words_or("auto", "all"), default="auto", metavar="N|auto|all",
                   help="words the none rule's reports range over (default auto; docs/fedlda.md)")
    add_seed_arg(p)
    p.add_argument("--jobs", type=jobs_int, default=1, help="worker threads (default 1)")
    p.add_argument("--no-figures", action="store_true", help="only the table")
    p.add_argument("--out", default="runs/fedlda", help="results folder (default runs/fedlda; the docs' figures were written with --out docs/figures)")
    p.set_defaults(run="fed:cmd_fedlda_experiment")


def register_manzonelli(esub) -> None:
    p = esub.add_parser("lira", help="Manzonelli et al. Table 1, Figs. 2-3 (LiRA vs Huang et al.), Figs. 4-6 (FDPTM)")
    p.add_argument("--corpus", default="20newsgroups", help="'20newsgroups', 'demo' or a path (default: 20newsgroups)")
    p.add_argument("--subsample", type=positive_int, default=4000, help="random documents kept (default 4000)")
    p.add_argument("--topics", type=_int_arg(1, 100_000), default=20, help="number of topics k (default 20)")
    p.add_argument("--max-vocab", type=_int_arg(2), default=1000, help="most frequent words kept (default 1000)")
    p.add_argument("--shadows", type=int, default=64, help=f"shadow models, even, in [4, {MAX_SHADOWS:,}] (default 64)")
    p.add_argument("--trainer", choices=("sklearn", "cgs"), default="sklearn",
                   help="sklearn LatentDirichletAllocation (the paper's) or dptopic's collapsed Gibbs LDA (default sklearn)")
    p.add_argument("--cgs-iterations", type=positive_int, default=100,
                   help="Gibbs sweeps of the cgs trainer (default 100)")
    p.add_argument("--targets", type=positive_int, default=None, help="shadows attacked in turn (default all)")
    p.add_argument("--k-grid", type=_int_arg(1, 100_000), nargs="+", default=None,
                   help="Fig. 3: numbers of topics (each at most 100,000)")
    p.add_argument("--private-vocabulary", type=epsilon_budget, nargs="+", default=None, metavar="EPS_V",
                   help="Figs. 4-6: FDPTM with DP set union at each EPS_V")
    p.add_argument("--delta-v", type=unit_interval, default=1e-4,
                   help="delta of the private vocabulary selection (default 1e-4)")
    p.add_argument("--dp-algorithm", default=None,
                   help="Fig. 5: a private trainer for the topic model part (svi: document-level DP-SVI, calibrated"
                        " to each eps_T)")
    p.add_argument("--eps-t-grid", type=positive_float, nargs="+", default=None,
                   help="Fig. 5: the topic model's epsilon values (with --dp-algorithm)")
    p.add_argument("--dp-set", action="append", metavar="NAME=VALUE",
                   help="another parameter of the --dp-algorithm trainer, e.g. sampling_rate=0.2 (repeatable)")
    add_seed_arg(p)
    p.add_argument("--jobs", type=jobs_int, default=2, help="worker threads training shadows (default 2)")
    p.add_argument("--out", default="runs/lira", help="a new or empty folder for the results (default runs/lira)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run="experiment_manzonelli:cmd_lira")

    c = esub.add_parser("classifier-mia", help="Zhao et al. Fig. 7: membership inference on a topic-model classifier")
    c.add_argument("--corpus", default="20newsgroups",
                   help="'20newsgroups', 'demo' (party labels) or a labelled path (default: 20newsgroups)")
    c.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    c.add_argument("--label-field", default=None,
                   help="JSONL field / CSV column holding each document's label (default: none; 'demo' and"
                        " '20newsgroups' carry their own)")
    c.add_argument("--classes", nargs="+", default=None, help="the two (or more) labels kept (default: every label)")
    c.add_argument("--subsample", type=positive_int, default=1800, help="random documents kept (default 1800)")
    c.add_argument("--max-vocab", type=_int_arg(2), default=1000, help="most frequent words kept (default 1000)")
    c.add_argument("--algorithms", nargs="+", default=["lda", "cdp"],
                   help="trainers attacked (default: lda cdp); private ones at every --eps-grid value")
    c.add_argument("--eps-grid", type=epsilon_value, nargs="+", default=[0.5, 1.0, 2.0, 5.0],
                   help="epsilon values of the private trainers (default 0.5 1 2 5)")
    c.add_argument("--topics", type=_int_arg(1, 100_000), default=50, help="number of topics (default 50)")
    c.add_argument("--iterations", type=positive_int, default=100, help="training iterations (default 100)")
    c.add_argument("--shadows", type=_int_arg(1, MAX_SHADOWS), default=5,
                   help=f"shadow classifiers (default 5; at most {MAX_SHADOWS:,})")
    c.add_argument("--replicates", type=_int_arg(1, 1000), default=1,
                   help="independent replicates of the whole attack (default 1: standard errors of the records scored"
                        " only; 2 or more: of the replicates' spread, which counts training and noise too)")
    add_seed_arg(c)
    c.add_argument("--out", default="runs/classifier-mia",
                   help="a new or empty folder for the results (default runs/classifier-mia)")
    c.add_argument("--quiet", action="store_true", help="no progress bars")
    c.set_defaults(run="experiment_manzonelli:cmd_classifier_mia")


_share = _float_arg(lambda v: 0 <= v < 1, "a share must lie in [0, 1), e.g. 0.1")


def register_experiment(esub) -> None:
    p = esub.add_parser("secure-sum", help="a secure-sum round played by every person of a corpus, over HTTP")
    p.add_argument("--server", required=True, nargs="+", metavar="URL",
                   help="a dptopic serve --report-kind secure-sum server; several addresses: server processes sharing"
                        " the round's PostgreSQL database, the contributor processes spread across them")
    p.add_argument("--corpus", required=True, help="documents with a person field (JSONL or CSV)")
    p.add_argument("--user-field", required=True, help="the field or column naming each document's person")
    p.add_argument("--invitations", required=True, metavar="DIR",
                   help="the round's invitations ('dptopic secure-sum invite --out DIR'), one per person in the order"
                        " of the people's sorted ids")
    p.add_argument("--format", default="auto", help="format of --corpus (auto: by its name; text = one document per"
                   " line)")
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    p.add_argument("--dropout", type=_share, default=None,
                   help="share of people who drop out after masking, chosen with --seed (default 0.1; in a round in"
                        " cohorts the dropouts its invitations expect, and at most what each cohort tolerates)")
    p.add_argument("--token-file", default=None, help="the server's admin token (to close a step)")
    p.add_argument("--seed", type=int, default=None,
                   help="who drops out, and the central model's noise (the contributors' own rounding and noise"
                        " always come from the OS CSPRNG)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="contributor processes, each playing a share of the people, in a single round or a round in"
                        " cohorts alike (default: one per core, at most 8)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", required=True, help="folder for summary.json and the model")
    p.set_defaults(run="experiment_secure_sum:cmd_experiment")


EXPERIMENTS = [register_zhao_central, register_zhao_local, register_svi_experiment, register_fedlda_experiment,
               register_manzonelli, register_experiment]


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
        # every experiment runs through cli/experiment.py, which checks --out first
        p.set_defaults(run="experiment:run_experiment", experiment_run=p.get_default("run"))
