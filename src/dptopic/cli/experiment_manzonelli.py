"""``experiment lira`` and ``experiment classifier-mia``: Manzonelli et al. (2024) Table 1 and Figs. 2-6,
and Zhao et al. (2021) Fig. 7."""
from __future__ import annotations

import time
from pathlib import Path

from ..attacks.audit import MAX_SHADOWS
from ..experiments import manzonelli_lira as ml
from ..experiments.manzonelli_lira import check_classifier_trainers, check_lira_settings
from ..reporting.terminal import esc, make_console, print_checks
from ._common import (
    _int_arg,
    add_seed_arg,
    epsilon_budget,
    epsilon_value,
    experiment_seed,
    jobs_int,
    load_corpus,
    parse_settings,
    positive_float,
    positive_int,
    unit_interval,
)
from ._flags import flag_errors


def parse_set(items, flag):
    """``--dp-set NAME=VALUE`` (:func:`dptopic.cli._common.parse_settings`)."""
    return parse_settings(items, flag)


# the FDPTM sweep's settings (experiments.manzonelli_lira.check_lira_settings) as experiment lira's flags
SWEEP_FLAGS = {"dp_algorithm": "--dp-algorithm", "eps_t_grid": "--eps-t-grid", "dp_params": "--dp-set",
               "private_vocabulary": "--private-vocabulary"}


def check_lira_args(a) -> None:
    """``experiment lira``'s arguments, checked before the corpus is read or any folder written."""
    with flag_errors(SWEEP_FLAGS):
        check_lira_settings(shadows=a.shadows, targets=a.targets, private_vocabulary=a.private_vocabulary,
                            dp_algorithm=a.dp_algorithm, eps_t_grid=a.eps_t_grid,
                            dp_params=parse_set(a.dp_set, "--dp-set"), n_topics=a.topics,
                            names={"shadows": "--shadows", "targets": "--targets"})


def check_classifier_mia_args(a) -> None:
    """``experiment classifier-mia``'s trainers, checked before the corpus is read or any folder written."""
    with flag_errors({"algorithms": "--algorithms"}):
        check_classifier_trainers(a.algorithms)


def cmd_lira(a):
    started = time.perf_counter()
    console = make_console()
    check_lira_args(a)
    corpus = ml.subsample(load_corpus(a.corpus, max_vocab=a.max_vocab), a.subsample, experiment_seed(a, console))
    console.print(f"[bold]corpus[/]: {corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size};"
                  f" trainer {a.trainer}, k={a.topics}, {a.shadows} shadow models", markup=True)
    if not a.private_vocabulary:    # a --k-grid value would otherwise fail after the whole --topics run
        ml.check_topics_fit(corpus.vocab_size, a.trainer, {"--topics": [a.topics], "--k-grid": a.k_grid or []},
                            "--trainer sklearn")
    out = Path(a.out)
    if a.private_vocabulary:
        s = ml.fdptm_experiment(corpus, out, a.private_vocabulary, a.delta_v, a.trainer, a.topics, a.shadows, a.seed,
                                a.jobs, a.cgs_iterations, a.dp_algorithm, tuple(a.eps_t_grid or ()),
                                dp_params=parse_set(a.dp_set, "--dp-set"), verbose=0 if a.quiet else 1)
        for line in ml.fdptm_lines(s):
            console.print(line, markup=False)
        console.print(f"written: {out / 'fdptm_results.json'}, fdptm.csv, fig4_5_coherence.png, fig6_roc.png"
                      + (", fig5_coherence_vs_eps_t.png" if a.eps_t_grid else ""))
        return
    s = ml.lira_experiment(corpus, out, a.trainer, a.topics, a.shadows, a.seed, a.jobs, tuple(a.k_grid or ()),
                           a.cgs_iterations, a.targets, verbose=0 if a.quiet else 1, started=started)
    for line in ml.lira_lines(s, a.shadows):
        console.print(line, markup=False)
    print_checks(console, s["checks"], s["untested"])
    fig3 = ", fig3_tpr_vs_k.csv, fig3_tpr_vs_k.png" if a.k_grid else ""
    console.print(f"written: {out / 'results.json'}, table1.csv, fig2_roc.png{fig3}")


def cmd_classifier_mia(a):
    console = make_console()
    check_classifier_mia_args(a)
    corpus = load_corpus(a.corpus, text_field=a.text_field, label_field=a.label_field, max_vocab=a.max_vocab)
    with flag_errors({"classes": "--classes", "label_field": "--label-field"}):
        labelled = ml.labelled_documents(corpus, a.classes)
    corpus = ml.subsample(labelled, a.subsample, experiment_seed(a, console))
    console.print(f"[bold]corpus[/]: {corpus.n_docs} documents of classes {esc(', '.join(sorted(set(corpus.labels))))}",
                  markup=True)
    s = ml.classifier_mia_experiment(corpus, Path(a.out), tuple(a.algorithms), tuple(a.eps_grid), a.topics,
                                     a.iterations, a.shadows, a.seed, verbose=0 if a.quiet else 1,
                                     n_replicates=a.replicates)
    for line in ml.classifier_mia_lines(s):
        console.print(line, markup=False)
    print_checks(console, s["paper_shape_checks"], s["untested"])
    console.print(f"written: {Path(a.out) / 'fig7_results.json'}, fig7.csv, fig7.png")


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
    p.set_defaults(func=cmd_lira)

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
    c.set_defaults(func=cmd_classifier_mia)
