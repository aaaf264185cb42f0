"""``privacy``: the privacy calculators."""
from __future__ import annotations

import json
import math

from ..accounting.verify import rounded_up
from ..errors import DPTopicError
from ..reporting.terminal import print_verification
from ._common import (ExitStatus, _float_arg, _int_arg, epsilon_budget, make_console, positive_float, positive_int,
                      unit_interval, warn)
from ._flags import FROM_CLIP, flag_errors, with_flag_names
from .local import plural


MAX_TOKEN_COUNT = 10**15    # the accountants' bound on a word's count
MAX_ITERATIONS = 10**9      # the inherent-privacy accountant's bound on the iterations (eps_total_static)
HDP_DEFAULT_BETA = 1.0      # HDPLDA's default beta (dptopic.models.hdp_lda.HDPLDA), the calculator's default too
MAX_HDP_ITERATIONS = 10**7  # the PLD accountant's bound on an event's count (accounting.ledger.MAX_COUNT)
COMPOSE_UNITS = ("word", "document", "user")   # what `privacy compose` states its figures per


def _up(x: float) -> str:
    """An epsilon (an upper bound) shown at 6 significant digits, rounded up: never below the one computed."""

    return f"{rounded_up(x, 6):.6g}"


def _down(x: float) -> str:
    """A largest allowed value (an epsilon_L within a budget, a clip for an eps_I) at 6 significant digits, rounded
    down: using the figure shown never spends more than asked."""

    return f"{rounded_up(x, 6, down=True):.6g}"


_token_count = _int_arg(1, MAX_TOKEN_COUNT)     # privacy inherent --n-t/--max-n-tprime


@with_flag_names({"beta": "--beta", "cmax": "--cmax", "n_iter": "--iterations"})
def cmd_privacy_inherent(a):
    import numpy as np  # deferred: loads numpy

    from ..accounting import eps_iter_static, eps_related  # loaded when the command runs, off the start-up path

    most = max(a.n_t, a.max_n_tprime)
    if a.cmax is not None and a.cmax > most:
        # the bound's first term is 2 max_k |log((n_k^t' + beta) / (n_k^t + beta))|, so --cmax must bound the count of
        # t and of another word t' in any one topic: neither exceeds its word's total, hence the larger of the two
        raise DPTopicError(f"--cmax {a.cmax:g} is larger than both --n-t {a.n_t} and --max-n-tprime {a.max_n_tprime}:"
                           " it bounds the count of t or of another word in one topic, which never exceeds that word's"
                           f" total; give --cmax at most {most} or leave it out.")
    console = make_console()
    n_tok = np.array([a.n_t, a.max_n_tprime], float)
    per = eps_iter_static(n_tok, a.beta, 0, cmax=a.cmax)
    console.print(f"Prop. 2, per related token and iteration: eps = 2 log(1 + 1/beta) = {_up(eps_related(a.beta))}")
    console.print(f"Thm 1 (static), per iteration: eps_i <= {_up(per)}")
    console.print(f"Thm 2 (static), over {plural(a.iterations, 'iteration')}: eps <= {_up(a.iterations * per)}")
    console.print("[dim]These bounds use the private counts (see docs/privacy.md): monitoring numbers, not DP guarantees.[/]")


HDP_FLAGS = {"beta": "--beta", "clip": "--clip", "epsilon_inherent": "--epsilon-inherent", "epsilon": "--epsilon",
             "epsilon_laplace": "--epsilon-laplace", "delta": "--delta", "n_iter": "--iterations",
             "iterations": "--iterations"}


def cmd_privacy_hdp(a):
    with flag_errors({**HDP_FLAGS, **(FROM_CLIP if a.clip is not None else {})}):
        _privacy_hdp(a)


def _privacy_hdp(a):
    from ..accounting import hdp_clip_bound, hdp_epsilon_inherent, hdp_total_epsilon, solve_epsilon_laplace  # loads numpy

    if (a.clip is None) == (a.epsilon_inherent is None):
        raise DPTopicError("give exactly one of --clip or --epsilon-inherent.")
    if a.epsilon is not None and a.epsilon_laplace is not None:
        raise DPTopicError("give at most one of --epsilon (a total budget to split) or --epsilon-laplace (a per-iteration"
                           " eps_L to compose); the calculator answers one question at a time.")
    eps_i = a.epsilon_inherent if a.clip is None else hdp_epsilon_inherent(a.clip, a.beta)
    C = a.clip if a.clip is not None else hdp_clip_bound(a.epsilon_inherent, a.beta)
    # every figure is computed (and every input checked) before anything is printed: a bad input gives one line
    lines = []
    if a.epsilon is not None:
        eps_l = solve_epsilon_laplace(a.epsilon, a.delta, a.iterations, eps_i)
        lines.append(f"budget (eps={a.epsilon:g}, delta={a.delta:g}) over T={a.iterations}: largest eps_L = {_down(eps_l)}"
                     f" per iteration (tight PLD); paper's basic total T(eps_L+eps_I) = {_up(a.iterations * (eps_l + eps_i))}")
    elif a.epsilon_laplace is not None:
        tight = hdp_total_epsilon(a.epsilon_laplace, eps_i, a.iterations, a.delta, discretization=1e-4)
        lines.append(f"T={a.iterations}, eps_L={a.epsilon_laplace:g}: basic eps = {_up(a.iterations * (a.epsilon_laplace + eps_i))},"
                     f" tight PLD eps({a.delta:g}) = {_up(tight)} (discrete Laplace noise, train's default)")
    else:
        lines.append("[dim]give --epsilon to split a total budget, or --epsilon-laplace to compose one per iteration.[/]")
    warnings = []
    if C < 1:   # as HDPLDA.fit warns: every topic's count of a word is clamped below one token
        warnings.append(f"a clip C = {C:.3g} under one token clamps every topic's count of a word below 1, so the"
                     f" topics can hardly differ; C >= 1 needs eps_I >= {_up(hdp_epsilon_inherent(1.0, a.beta))} at"
                     f" beta={a.beta:g} (docs/privacy.md).")
    console = make_console()
    # a clip computed from --epsilon-inherent is shown rounded down (a smaller clip gives a smaller eps_I), an eps_I
    # computed from --clip rounded up; one given is shown as given
    shown_c = f"{C:.6g}" if a.clip is not None else _down(C)
    shown_i = f"{eps_i:.6g}" if a.clip is None else _up(eps_i)
    console.print(f"beta={a.beta:g}: clip C = {shown_c}  <->  eps_I = 2 log(C/beta + 1) = {shown_i} per iteration")
    for line in lines:
        console.print(line)
    for line in warnings:       # on stderr, as every warning
        warn(line)


def _pairs(a, flag: str, zero_ok: bool):
    """The ``EPS COUNT`` pairs of ``--laplace``/``--pure``, parsed and checked (one-line errors)."""
    from ..accounting.events import EPSILON_MAX  # deferred: loads numpy
    from ..accounting.ledger import MAX_COUNT  # loaded when the command runs, off the start-up path

    out = []
    for eps, n in getattr(a, flag) or []:
        try:
            e = float(eps)
        except ValueError:
            e = None
        if e is None or not (0 <= e <= EPSILON_MAX) or (e == 0 and not zero_ok):
            rng = f"{'[' if zero_ok else '('}0, {EPSILON_MAX:g}]"
            raise DPTopicError(f"--{flag} {eps} {n}: EPS must be a number in {rng}.")
        if flag == "laplace" and not math.isfinite(1.0 / e):
            # a subnormal EPS: its Laplace scale 1/EPS is not a finite number (the mechanism takes none)
            raise DPTopicError(f"--{flag} {eps} {n}: EPS is so small that the Laplace scale 1/EPS overflows; give EPS of"
                               " at least 1e-308 (an epsilon that small adds next to nothing).")
        try:
            k = int(n)
        except ValueError:
            k = None
        if k is None or not 1 <= k <= MAX_COUNT:
            raise DPTopicError(f"--{flag} {eps} {n}: COUNT must be a whole number in [1, {MAX_COUNT:g}].")
        out.append((e, k))
    return out


def cmd_privacy_compose(a):
    from ..accounting import LaplaceEvent, PrivacyLedger, PureDPEvent  # deferred: loads numpy

    laplace, pure = _pairs(a, "laplace", False), _pairs(a, "pure", True)
    led = PrivacyLedger(unit=a.unit)     # the unit the figures are stated per: argparse allows COMPOSE_UNITS
    for eps, n in laplace:
        led.spend(LaplaceEvent(scale=1.0 / eps), n)
    for eps, n in pure:
        led.spend(PureDPEvent(eps), n)
    if led.n_events == 0:
        raise DPTopicError("nothing to compose: give --laplace EPS COUNT and/or --pure EPS COUNT.")
    rep = led.report(a.delta)
    make_console().print(f"per {a.unit}:\n"
                         f"basic composition: eps = {_up(rep['epsilon_basic'])} (delta = 0)\n"
                         f"tight PLD:         eps = {_up(rep['epsilon_pld'])} (delta = {a.delta:g})\n"
                         f"RDP cross-check:   eps = {_up(rep['epsilon_rdp'])} (delta = {a.delta:g})")


MAX_VOCAB_SIZE = 10**8      # fed-report-words --vocab-size: beyond any vocabulary; the rule walks its words in order


# fed-report-words --epsilon-per-entry: the range train --algorithm fed accepts (accounting.events.EPSILON_MAX)
_fed_epsilon = _float_arg(lambda v: 0 < v <= 500, "an epsilon per entry must lie in (0, 500]")


@with_flag_names({"epsilon": "--epsilon-per-entry", "vocab_size": "--vocab-size", "z": "--z"})
def cmd_privacy_fed_report_words(a):
    # deferred: loads numpy (the command line's start-up must not)
    from ..accounting.fedlda import check_informative, report_words_for, subset_report_variance, subset_size  # when the command runs

    if a.old_epsilon is not None:
        raise DPTopicError("--epsilon is now --epsilon-per-entry here: the reports' word count follows from the epsilon"
                           " per entry, not FedLDA's per-user total (train --algorithm fed --epsilon).")
    if a.epsilon is None:
        raise DPTopicError("fed-report-words needs --epsilon-per-entry, the epsilon of each reported entry.")

    check_informative(a.epsilon, a.vocab_size)  # the reports would carry nothing: FedLDA refuses such an epsilon
    n = report_words_for(a.epsilon, a.vocab_size, a.users * a.entries, a.z)
    check_informative(a.epsilon, n)
    s = subset_size(a.epsilon, n)
    console = make_console()
    who = f"{plural(a.users, 'user')} x {plural(a.entries, 'entry', 'entries')}"
    console.print(f"FedLDA (exclusion none), eps={a.epsilon:g} per entry, {who}:"
                  f" reports over the first {n:,} of {a.vocab_size:,} words (those whose share the reports can tell"
                  f" from zero at z={a.z:g}; the vocabulary listed most common first)")
    console.print(f"  {s} word(s) per report; randomization variance summed over the words: {n * subset_report_variance(a.epsilon, n):.3g}"
                  f" (every word: {a.vocab_size * subset_report_variance(a.epsilon, a.vocab_size):.3g}; sampling alone: 1)")
    console.print(f"  FedLDA(report_words={n}) or report_words='auto'; dptopic train --algorithm fed --report-words {n};"
                  f" dptopic serve --fed-epsilon-per-entry {a.epsilon:g} --fed-report-words {n} (docs/fedlda.md)")


def cmd_privacy_verify(a):
    from ..reporting.verification import verify_saved_model  # deferred: loads numpy

    v = verify_saved_model(a.model)
    if a.format == "json":          # for a script or a review board's records; the exit status still says failed
        print(json.dumps(v.to_dict(), indent=2))      # infinity written "inf", as model.json does
    else:
        print_verification(v, a.model, make_console(), NO_GUARANTEE_EXIT)
    v.raise_unless_checked()        # exit status 2 unless the figures were checked and hold (`verify && ship`)
    return ExitStatus(NO_GUARANTEE_EXIT if v.no_guarantee else 0)


NO_GUARANTEE_EXIT = 3
"""``privacy verify``'s exit status for a report whose figures hold but whose events give no guarantee."""


def register(sub) -> None:
    pr = sub.add_parser("privacy", help="privacy calculators")
    psub = pr.add_subparsers(dest="privacy_command", required=True, metavar="CALCULATOR")
    pi = psub.add_parser("inherent", help="inherent privacy of plain CGS (Zhao et al. Prop. 2, Thm 1-2, static form)")
    pi.add_argument("--beta", type=positive_float, default=0.01,
                    help="topic-word smoothing beta of the plain CGS run (default 0.01, LDA's; any number > 0)")
    pi.add_argument("--n-t", type=_token_count, required=True, help="total count of the replaced word t")
    pi.add_argument("--max-n-tprime", type=_token_count, required=True, help="largest total count of any other word")
    pi.add_argument("--cmax", type=positive_float, default=None, help="upper bound on any one topic's count of t or of another word,"
                    " max over k of n_k^t and n_k^t' (default: the larger of --n-t and --max-n-tprime)")
    pi.add_argument("--iterations", type=_int_arg(1, MAX_ITERATIONS), default=1, help="iterations (default 1, at most 1e9)")
    pi.set_defaults(func=cmd_privacy_inherent)
    ph = psub.add_parser("hdp", help="HDP-LDA: clip <-> eps_I, and budget splitting",
                         description="HDP-LDA's per-iteration inherent loss eps_I = 2 log(C/beta + 1) for a clip C"
                                     " (Zhao et al. 2020, Thm 3), and the tight PLD composition of T iterations of"
                                     " Laplace noise eps_L plus eps_I. The PLD figures assume discrete Laplace noise,"
                                     " train's default (--noise discrete); docs/privacy.md.")
    ph.add_argument("--beta", type=positive_float, default=HDP_DEFAULT_BETA,
                    help=f"topic-word smoothing beta, > 0 (default {HDP_DEFAULT_BETA:g}, HDPLDA's and train's)")
    ph.add_argument("--clip", type=positive_float, default=None,
                    help="clip bound C on a topic's count of a word (> 0; give this or --epsilon-inherent)")
    ph.add_argument("--epsilon-inherent", type=epsilon_budget, default=None,
                    help="per-iteration inherent loss eps_I, in (0, 500] (give this or --clip; HDPLDA's default is 10)")
    ph.add_argument("--epsilon", type=positive_float, default=None,
                    help="the whole run's epsilon per word, in total (> 0; as train --algorithm hdp --epsilon): the"
                         " largest eps_L per iteration it allows")
    ph.add_argument("--epsilon-laplace", type=epsilon_budget, default=None,
                    help="the component instead: Laplace eps_L per iteration to compose, in (0, 500] (as train"
                         " --algorithm hdp --epsilon-laplace)")
    ph.add_argument("--delta", type=unit_interval, default=1e-5,
                    help="delta of the PLD figures, in (0, 1) (default 1e-5)")
    ph.add_argument("--iterations", type=_int_arg(1, MAX_HDP_ITERATIONS), default=100,
                    help="iterations T (default 100, at most 1e7)")
    ph.set_defaults(func=cmd_privacy_hdp)
    pc = psub.add_parser("compose", help="compose Laplace and pure-eps events: basic vs tight")
    pc.add_argument("--laplace", nargs=2, action="append", metavar=("EPS", "COUNT"),
                    help="COUNT Laplace mechanisms at EPS each (sensitivity 1)")
    pc.add_argument("--pure", nargs=2, action="append", metavar=("EPS", "COUNT"), help="COUNT pure EPS-DP steps")
    pc.add_argument("--delta", type=unit_interval, default=1e-5,
                    help="delta of the PLD and RDP figures, in (0, 1) (default 1e-5)")
    pc.add_argument("--unit", default="word", choices=COMPOSE_UNITS,
                    help="what the events protect, printed with the figures (default word)")
    pc.set_defaults(func=cmd_privacy_compose)
    pf = psub.add_parser("fed-report-words", help="FedLDA: how many of the vocabulary's first words the reports should"
                                                  " range over (reads no data)")
    pf.add_argument("--epsilon-per-entry", dest="epsilon", type=_fed_epsilon, default=None,
                    help="epsilon per reported entry (a component: FedLDA's per-user total is it times the entries a"
                         " user sends), in (0, 500]")
    pf.add_argument("--epsilon", dest="old_epsilon", default=None,
                    help="refused: the epsilon per entry is now --epsilon-per-entry")
    pf.add_argument("--vocab-size", type=_int_arg(1, MAX_VOCAB_SIZE), required=True, help="words in the public vocabulary (at most 1e8)")
    pf.add_argument("--users", type=positive_int, required=True, help="users expected to take part")
    pf.add_argument("--entries", type=positive_int, default=512, help="entries per user (pad_length x sample_ratio;"
                                                                      " default 512)")
    pf.add_argument("--z", type=positive_float, default=1.0, help="standard errors a kept word's share must reach"
                                                                   " (default 1, docs/fedlda.md)")
    pf.set_defaults(func=cmd_privacy_fed_report_words)
    pv = psub.add_parser("verify", help="recompute a saved model's privacy figures from the events its report lists,"
                                        " and check that the guarantee it claims is not below them (reads no data)",
                         description="Recompute a saved model's privacy figures from the events its report lists"
                                     " and, for a model folder, compare the events with what its trainer's"
                                     " parameters plan. Exit status 0: verified, looser (valid, not tight) or no claim; 2: failed (a"
                                     " figure below what the events support, events that do not match the parameters, or a damaged report) or not"
                                     " recomputable (a report saved by an earlier version); 3: consistent, but the"
                                     " events add up to NO (epsilon, delta) guarantee (noise was added, e.g. FedLDA's"
                                     " tail rule). docs/auditing.md.")
    pv.add_argument("model", help="a saved model's folder (the --out of dptopic train) or a JSON privacy report")
    pv.add_argument("--format", choices=("table", "json"), default="table",
                    help="table (default) or json: the status, the reason and every figure stated and recomputed")
    pv.set_defaults(func=cmd_privacy_verify)
