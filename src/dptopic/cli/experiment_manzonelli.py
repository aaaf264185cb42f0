"""``experiment lira`` and ``experiment classifier-mia``: Manzonelli et al. (2024) Table 1 and Figs. 2-6,
and Zhao et al. (2021) Fig. 7."""
from __future__ import annotations

import time
from pathlib import Path

from ..experiments import manzonelli_lira as ml
from ..experiments.manzonelli_lira import check_classifier_trainers, check_lira_settings
from ..reporting.terminal import esc, make_console, print_checks
from ._common import experiment_seed
from ._flags import flag_errors
from ._run_common import load_corpus, parse_settings


def parse_set(items, flag):
    """``--dp-set NAME=VALUE`` (:func:`dptopic.cli._run_common.parse_settings`)."""
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


