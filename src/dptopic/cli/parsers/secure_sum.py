"""``secure_sum``'s parser (run by cli/secure_sum.py)."""
from __future__ import annotations

import argparse

from .._common import (
    _int_arg,
    positive_float,
)
from .budget import add_ids_flags


def add_serve_flags(s) -> None:
    """The secure sum's flags of ``dptopic serve``."""
    s.add_argument("--unit", choices=("user",), default=None,
                   help="--report-kind secure-sum: the privacy unit, user (one person's documents)")
    s.add_argument("--epsilon", type=positive_float, default=None,
                   help="--report-kind secure-sum: epsilon per person for the whole round")
    s.add_argument("--min-contributors", type=int, default=None, metavar="N",
                   help="--report-kind secure-sum: the round's contributors (default: the --directory's count; the"
                        " roster closes when every invited one has registered, or at --registration-deadline)")
    s.add_argument("--registration-deadline", type=positive_float, default=None, metavar="SECONDS",
                   help="--report-kind secure-sum: the roster closes this many seconds after the round first opened"
                        " (kept in --database across restarts) with those registered, if at least N - F: each invited"
                        " contributor who never registers is one of the F dropouts (default: none; the roster closes"
                        " once all have registered, or by the admin)")
    s.add_argument("--dropout-tolerance", type=int, default=None, metavar="F",
                   help="--report-kind secure-sum: how many may drop out with the sum still released (the noise is"
                        " calibrated for the N - F survivors; default N/10)")
    s.add_argument("--collusion", type=_int_arg(0), default=None, metavar="T",
                   help="--report-kind secure-sum: how many invited contributors may collude with the server (default"
                        " ceil(log2 N) + 1; the noise leaves their shares out)")
    s.add_argument("--directory", default=None, metavar="FILE",
                   help="--report-kind secure-sum: the operator's signed list of invited contributors"
                        " (directory.json, from 'dptopic secure-sum invite'); only they can join")
    s.add_argument("--cohort-size", type=_int_arg(3), default=None, metavar="S",
                   help="--report-kind secure-sum: a round in cohorts of at most S contributors each, with a"
                        " second-level sum that pays the noise once (the --directory from 'dptopic secure-sum invite"
                        " --cohort-size S'; docs/secure_sum_cohorts.md)")
    s.add_argument("--max-words", type=_int_arg(2), default=None, metavar="W",
                   help="--report-kind secure-sum: the most words the second sum holds (default 256): the words of"
                        " highest noisy count in the first sum, post-processing; it bounds each contributor's upload"
                        " whatever the round's size (docs/secure_sum.md)")
    s.add_argument("--secure-committee", type=_committee_arg, default=None, metavar="C",
                   help="--report-kind secure-sum: the committee mode, 'auto' or a size: each contributor makes 3"
                        " requests and a committee of C contributors checks and unmasks (kept in --database; several"
                        " server processes on one PostgreSQL --database; docs/secure_sum.md)")
    # each option's name as typed, for the refusal of those a secure sum does not read
    s.set_defaults(_flag_names={a.dest: max(a.option_strings, key=len) for a in s._actions if a.option_strings})


def _committee_arg(value: str):
    """``--secure-committee``: 'auto' or an integer."""
    if value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not 'auto' nor an integer") from None


def add_submit_flags(u) -> None:
    """The secure sum's flags of ``dptopic submit``."""
    u.add_argument("--invitation", default=None, metavar="FILE",
                   help="a secure-sum server: your invitation from the round's operator (invitation-NNNN.json); the"
                        " server cannot let anyone join without one")


# ----------------------------------------------------------------------------- dptopic secure-sum invite
def register(sub) -> None:
    """``dptopic secure-sum``: the operator's commands."""
    g = sub.add_parser("secure-sum", help="the operator's side of a secure-sum round (invitations)",
                       description="Commands for the operator of a secure-sum round (docs/secure_sum.md).")
    gsub = g.add_subparsers(dest="secure_sum_command", required=True, metavar="COMMAND")
    i = gsub.add_parser("invite", help="write one invitation per contributor and the signed directory",
                        description="Draw one signing key per contributor, write each to its own invitation file"
                                    " (hand each to its contributor only) and sign the list of their public keys, the"
                                    " directory that the server is started with (--directory). The enrollment key"
                                    " stays here: a server that does not hold it cannot enroll anyone.")
    i.add_argument("--key", required=True, metavar="FILE",
                   help="the enrollment key (created, readable by you only, when the file does not exist); keep it"
                        " off the server")
    i.add_argument("--count", type=_int_arg(3), default=None, metavar="N", help="contributors to invite (at least 3;"
                   " with --ids, one per id)")
    add_ids_flags(i)        # --ids FILE: each invitation names its person, the round charged to them (--ledger)
    i.add_argument("--out", required=True, metavar="DIR", help="a new folder for directory.json and the invitations")
    i.add_argument("--round-id", default=None, metavar="ID",
                   help="the round's name (1-64 of A-Z a-z 0-9 _ -; 1-56 with --cohort-size; default random)")
    i.add_argument("--cohort-size", type=_int_arg(3), default=None, metavar="S",
                   help="a round in cohorts of at most S contributors each: each invitation is to its cohort's round"
                        " (seated by the round's rule), a delegate's also to the bridge; serve with the same"
                        " --cohort-size (docs/secure_sum_cohorts.md)")
    i.add_argument("--dropout-tolerance", type=_int_arg(0), default=None, metavar="F",
                   help="how many of the round may drop out (default N/10): pinned in every invitation, the server"
                        " serves it (with --cohort-size it sets how many delegates each cohort has)")
    i.add_argument("--collusion", type=_int_arg(0), default=None, metavar="T",
                   help="how many may collude with the server (default ceil(log2 N) + 1): pinned in every invitation,"
                        " the server serves it and each contributor refuses a server that states another")
    i.add_argument("--committee", action="store_true",
                   help="the round runs in committee mode (serve with --secure-committee; with --cohort-size, each"
                        " cohort): each invitation says so, and submit then takes part in 4 requests (the"
                        " configuration, then 3)")
    i.set_defaults(run="secure_sum:cmd_invite")
