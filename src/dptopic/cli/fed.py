"""``train --algorithm fed``'s flags, as :class:`~dptopic.models.FedLDA`'s parameters; ``experiment fedlda``."""
from __future__ import annotations

from .. import experiments
from ..errors import DPTopicError
from ..experiments.fedlda import fedlda_lines
from ..reporting.terminal import make_console
from ._common import add_seed_arg, experiment_seed, jobs_int, positive_float, positive_int, unit_interval, words_or
from ._flags import flag_errors


def add_fed_args(t) -> None:
    g = t.add_argument_group("FedLDA (--algorithm fed; see docs/fedlda.md)")
    g.add_argument("--clients", type=positive_int, default=None,
                   help="fed: split the corpus into N users (default: one user per document)")
    g.add_argument("--rounds", type=positive_int, default=50, help="fed: communication rounds (default 50)")
    g.add_argument("--epsilon-per-entry", type=positive_float, default=None, metavar="EPS_ENTRY",
                   help="fed: epsilon per reported entry (one word), the component, instead of --epsilon (the per-user"
                        " total); default 5 per entry when neither is given")
    g.add_argument("--failure-rate", type=unit_interval, default=0.1,
                   help="fed: Theorem 1's failure rate, the excluded rare-word mass (default 0.1; floor/tail only);"
                        " not the delta of a guarantee")
    g.add_argument("--gamma", type=float, default=1.0, help="fed: Zipf exponent gamma >= 1 (default 1)")
    g.add_argument("--sample-ratio", type=float, default=1.0, help="fed: fraction in (0, 1] of the update sent (default 1)")
    g.add_argument("--pad-length", type=positive_int, default=512, help="fed: update length L before sampling (default 512)")
    g.add_argument("--user-budget", type=positive_float, default=None, metavar="EPS_USER",
                   help="fed, exclusion none: a per-user total (entries x epsilon per entry) instead of --epsilon and"
                        " --pad-length; the split that estimates words best is chosen for the vocabulary"
                        " (FedLDA.from_user_budget, docs/fedlda.md)")
    g.add_argument("--variant", choices=("another", "coincide"), default="another",
                   help="fed: a perturbed word is always another word (default) or may coincide")
    g.add_argument("--exclusion", choices=("none", "floor", "tail"), default="none",
                   help="fed: 'none' (default: full guarantee, reports randomized once), 'floor' (per word, partial)"
                        " or 'tail' (the poster's, assumes Zipf)")
    g.add_argument("--subset-size", type=int, default=0,
                   help="fed, exclusion none: words per randomized report (default 0: chosen from epsilon)")
    g.add_argument("--local-inference", choices=("em", "gibbs"), default="em",
                   help="fed, exclusion none: clients label their reports by EM of their topic proportions (default)"
                        " or by a Gibbs chain")
    g.add_argument("--report-words", type=words_or("auto", "all"), default=None, metavar="N|auto|all",
                   help="fed, exclusion none: reports range over the vocabulary's first N words (its most common);"
                        " auto (default) keeps those the reports can estimate, from epsilon, the vocabulary size and"
                        " the number of reports (docs/fedlda.md); all with --private-vocabulary, whose words have no"
                        " order the guarantee covers")
    g.add_argument("--replacement", choices=("mixture", "topic"), default="mixture",
                   help="fed: replacement words drawn from the user's topic mixture (default) or the entry's topic")


def refuse_fed_flags(a) -> None:
    """``--algorithm fed``: the flags that cannot go together, refused in one line (each flag is FedLDA's parameter,
    ``--delta`` its ``report_delta``, ``--user-budget`` its ``user_epsilon``, split by
    :meth:`FedLDA.from_user_budget` once the vocabulary is known)."""
    if a.user_budget is not None and (a.epsilon is not None or a.epsilon_per_entry is not None or a.pad_length != 512):
        raise DPTopicError("--user-budget chooses the epsilon per entry and the entries itself: drop --epsilon,"
                           " --epsilon-per-entry and --pad-length.")
    if a.user_budget is not None and a.exclusion != "none":
        raise DPTopicError("--user-budget needs --exclusion none (entries randomized once); the floor and tail rules"
                           " randomize again every round.")
    if getattr(a, "private_vocabulary", None) is not None and a.report_words not in (None, "all"):
        raise DPTopicError(f"--report-words {a.report_words} keeps the vocabulary's most common words, but a"
                           " vocabulary chosen by --private-vocabulary has no frequency order its guarantee covers"
                           " (ordering it by the documents' counts would spend data outside it): use --report-words"
                           " all (the default with --private-vocabulary), or a public --vocabulary listed most"
                           " common first.")


def cmd_fedlda_experiment(a):
    console = make_console()
    seed = experiment_seed(a, console)
    with flag_errors({"epsilon_per_entry": "--eps-table"}):     # the table's epsilons are per entry, as the paper's
        s = experiments.fedlda_experiment(a.out, tasks=tuple(a.tasks), eps_table=tuple(a.eps_table), n_topics=a.topics,
                              rounds=a.rounds, max_docs=a.max_docs, seed=seed, n_jobs=a.jobs,
                              figures=not a.no_figures, progress=lambda msg: console.print("  " + msg),
                              rules=tuple(dict.fromkeys(a.rules)), pad_length=a.pad_length,
                              local_inference=a.local_inference, report_words=a.report_words)
    for line in fedlda_lines(s, a.out, a.no_figures):
        console.print(line)


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
    p.set_defaults(func=cmd_fedlda_experiment)
