"""``privacy``'s parser: the calculators' flags (run by cli/privacy.py) and verify's (cli/verify.py)."""
from __future__ import annotations

from ...accounting.bounds import EPSILON_MAX, MAX_COUNT
from ...accounting.units import HDP_DEFAULT_BETA
from .._common import _float_arg, _int_arg, epsilon_budget, positive_float, positive_int, unit_interval

MAX_TOKEN_COUNT = 10**15    # the accountants' bound on a word's count


MAX_ITERATIONS = 10**9      # the inherent-privacy accountant's bound on the iterations (eps_total_static)




MAX_HDP_ITERATIONS = MAX_COUNT  # the PLD accountant's bound on an event's count


COMPOSE_UNITS = ("word", "document", "user")   # what `privacy compose` states its figures per


_token_count = _int_arg(1, MAX_TOKEN_COUNT)     # privacy inherent --n-t/--max-n-tprime


MAX_VOCAB_SIZE = 10**8      # fed-report-words --vocab-size: beyond any vocabulary; the rule walks its words in order


# fed-report-words --epsilon-per-entry: the range train --algorithm fed accepts
_fed_epsilon = _float_arg(lambda v: 0 < v <= EPSILON_MAX, f"an epsilon per entry must lie in (0, {EPSILON_MAX:g}]")


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
    pi.set_defaults(run="privacy:cmd_privacy_inherent")
    ph = psub.add_parser("hdp", help="HDP-LDA: clip <-> eps_I, and budget splitting",
                         description="HDP-LDA's per-iteration inherent loss eps_I = 2 log(C/beta + 1) for a clip C"
                                     " (Zhao et al. 2020, Thm 3), and the tight composition of T iterations of"
                                     " Laplace noise eps_L plus eps_I (the card's figure). The figures assume"
                                     " discrete Laplace noise, train's default (--noise discrete); docs/privacy.md.")
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
    ph.set_defaults(run="privacy:cmd_privacy_hdp")
    pc = psub.add_parser("compose", help="compose Laplace and pure-eps events: basic vs tight")
    pc.add_argument("--laplace", nargs=2, action="append", metavar=("EPS", "COUNT"),
                    help="COUNT Laplace mechanisms at EPS each (sensitivity 1)")
    pc.add_argument("--pure", nargs=2, action="append", metavar=("EPS", "COUNT"), help="COUNT pure EPS-DP steps")
    pc.add_argument("--delta", type=unit_interval, default=1e-5,
                    help="delta of the PLD and RDP figures, in (0, 1) (default 1e-5)")
    pc.add_argument("--unit", default="word", choices=COMPOSE_UNITS,
                    help="what the events protect, printed with the figures (default word)")
    pc.set_defaults(run="privacy:cmd_privacy_compose")
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
    pf.set_defaults(run="privacy:cmd_privacy_fed_report_words")
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
    pv.set_defaults(run="verify:cmd_privacy_verify")
