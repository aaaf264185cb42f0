"""``train --algorithm fed``'s flags, as :class:`~dptopic.models.FedLDA`'s parameters; ``experiment fedlda``."""
from __future__ import annotations

from .. import experiments
from ..errors import DPTopicError
from ..experiments.fedlda import fedlda_lines
from ..reporting.terminal import make_console
from ._common import experiment_seed
from ._flags import flag_errors


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


