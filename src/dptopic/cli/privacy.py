"""``privacy``: the privacy calculators."""
from __future__ import annotations

from ..accounting.calculators import compose, fed_report_words, hdp_calculator, inherent_bounds
from ..errors import DPTopicError
from ..reporting.calculators import compose_lines, fed_report_words_lines, hdp_lines, inherent_lines
from ..reporting.terminal import make_console, warn
from ._flags import FROM_CLIP, flag_errors, with_flag_names


def _print(lines) -> None:
    console = make_console()
    for line in lines:      # the calculators' lines, in rich markup (numbers and fixed words only)
        console.print(line, markup=True)


@with_flag_names({"beta": "--beta", "cmax": "--cmax", "n_iter": "--iterations", "n_t": "--n-t",
                  "max_n_tprime": "--max-n-tprime"})
def cmd_privacy_inherent(a):
    _print(inherent_lines(inherent_bounds(a.n_t, a.max_n_tprime, a.beta, a.cmax, a.iterations)))


HDP_FLAGS = {"beta": "--beta", "clip": "--clip", "epsilon_inherent": "--epsilon-inherent", "epsilon": "--epsilon",
             "epsilon_laplace": "--epsilon-laplace", "delta": "--delta", "n_iter": "--iterations",
             "iterations": "--iterations"}


def cmd_privacy_hdp(a):

    # with --clip, eps_I follows from it (a refusal of eps_I names --clip), unless both were given
    from_clip = FROM_CLIP if a.clip is not None and a.epsilon_inherent is None else {}
    with flag_errors({**HDP_FLAGS, **from_clip}):
        # every figure is computed (and every input checked) before anything is printed: a bad input gives one line
        lines, warnings = hdp_lines(hdp_calculator(a.beta, a.clip, a.epsilon_inherent, a.epsilon, a.epsilon_laplace,
                                                   a.delta, a.iterations), "--epsilon", "--epsilon-laplace")
    _print(lines)
    for line in warnings:       # on stderr, as every warning
        warn(line)


@with_flag_names({"laplace": "--laplace", "pure": "--pure"})
def cmd_privacy_compose(a):

    # the unit the figures are stated per: argparse allows COMPOSE_UNITS
    _print(compose_lines(compose(a.laplace, a.pure, a.delta, a.unit), a.unit, a.delta))


@with_flag_names({"epsilon": "--epsilon-per-entry", "vocab_size": "--vocab-size", "z": "--z"})
def cmd_privacy_fed_report_words(a):
    if a.old_epsilon is not None:
        raise DPTopicError("--epsilon is now --epsilon-per-entry here: the reports' word count follows from the epsilon"
                           " per entry, not FedLDA's per-user total (train --algorithm fed --epsilon).")
    if a.epsilon is None:
        raise DPTopicError("fed-report-words needs --epsilon-per-entry, the epsilon of each reported entry.")
    f = fed_report_words(a.epsilon, a.vocab_size, a.users, a.entries, a.z)
    n = f["report_words"]
    _print(fed_report_words_lines(f) + [f"  dptopic train --algorithm fed --report-words {n}; dptopic serve"
                                        f" --fed-epsilon-per-entry {f['epsilon']:g} --fed-report-words {n}"])
