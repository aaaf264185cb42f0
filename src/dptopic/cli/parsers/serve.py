"""``serve``'s parser (run by cli/serve.py)."""
from __future__ import annotations

import argparse

from .._common import (
    MAX_TIMEOUT,
    _float_arg,
    _int_arg,
    _timeout_arg,
    add_request_args,
    positive_float,
    positive_int,
    unit_interval,
)
from .._flags import add_reading_args
from .secure_sum import add_serve_flags, add_submit_flags


def _port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"a TCP port lies in 1-65535, got {text}")
    return v


# serve --header-timeout and --database-timeout
_seconds_arg = _float_arg(lambda v: 0 < v <= 3600, "must be seconds in (0, 3600], e.g. 30")


def _client_args(p):
    p.add_argument("--server", required=True, help="base URL of the server, e.g. http://127.0.0.1:8000")
    p.add_argument("--corpus", required=True, help="your documents (one per line for .txt, or any loader format)")
    add_reading_args(p, vocab=False)
    add_request_args(p, "HTTP attempt", 8, "per request (exponential backoff)")
    p.add_argument("--max-epsilon", type=positive_float, default=None, metavar="EPS",
                   help="the largest epsilon per report you accept (per word for word-level reports, per document for"
                        " document-level ones, per entry for FedLDA; default 16): a server asking for more is refused"
                        " before anything is randomized")


def register(sub) -> None:
    s = sub.add_parser("serve", help="run the collection server (local-DP reports, OLP-LDA, FedLDA rounds)",
                       description="Collect randomized reports over HTTP, store them durably (SQLite or PostgreSQL),"
                                   " train OLP-LDA on them exactly once, and run FedLDA rounds. See docs/service.md.")
    s.add_argument("--database", default="sqlite:///dptopic-service.db",
                   help="SQLAlchemy URL: sqlite:///PATH (default) or postgresql+psycopg://USER@HOST/DB")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this machine only; another needs --allow-remote)")
    s.add_argument("--port", type=_port, default=8000, help="TCP port, 1-65535 (default 8000)")
    s.add_argument("--allow-foreign-tables", action="store_true",
                   help="let --database be a database that already holds other tables (the service adds its own)")
    s.add_argument("--allow-remote", action="store_true", help="allow a --host other than loopback")
    s.add_argument("--vocabulary", required=True, help="the public vocabulary: one word per line, or wordfreq:LANG[:SIZE] (a general word list of that"
                        " language; pip install 'dptopic[wordlist]')")
    s.add_argument("--report-kind", choices=("word", "document", "secure-sum"), default="word",
                   help="the reports the server takes: word (default; per-word LP-LDA reports, OLP-LDA topics) or"
                        " document (one word pair per document, eps_doc per document; docs/local_dp.md)")
    s.add_argument("--epsilon-doc", type=positive_float, default=None,
                   help="--report-kind document: the per-document epsilon the contributors use (default 8)")
    s.add_argument("--epsilon-word", type=positive_float, default=None,
                   help="per-word local epsilon the contributors randomize with (Zhao et al. 2020, Thm 4)")
    s.add_argument("--prior", default=None, help="public prior corpus D_0 for OLP-LDA, disjoint from the contributors")
    add_reading_args(s, "--prior", vocab=False)
    s.add_argument("--token-file", default=None, help="file holding the admin bearer token (admin endpoints off without)")
    s.add_argument("--topics", type=positive_int, default=20,
                   help="topics K of the model the server trains (OLP-LDA, or LocalDocumentLDA for --report-kind"
                        " document; default 20)")
    s.add_argument("--batch-size", type=positive_int, default=160, help="reports per OLP-LDA mini-batch (default 160)")
    s.add_argument("--iterations", type=positive_int, default=50, help="Gibbs sweeps per mini-batch (default 50)")
    s.add_argument("--prior-iterations", type=positive_int, default=200, help="Gibbs sweeps on the prior corpus (default 200)")
    s.add_argument("--lam", type=float, default=0.5, help="OLP-LDA correlation factor lambda in [0, 1] (default 0.5)")
    s.add_argument("--omega", type=float, default=0.4, help="OLP-LDA prior weight omega in [0, 1] (default 0.4)")
    s.add_argument("--delta", type=unit_interval, default=1e-5, help="delta of the tight epsilon(delta) reports (default 1e-5)")
    s.add_argument("--train-interval", type=float, default=2.0, help="seconds between trainer passes (0: admin only; default 2)")
    s.add_argument("--max-body-bytes", type=positive_int, default=4 * 1024 * 1024,
                   help="largest request body accepted, in bytes; a larger upload is refused with 413 (default"
                        " 4194304, 4 MiB)")
    s.add_argument("--body-timeout", type=positive_float, default=30.0, metavar="SECONDS",
                   help="a request body that goes this long without a byte arriving is refused with 408 (default 30;"
                        " at most 3600)")
    s.add_argument("--header-timeout", type=_seconds_arg, default=30.0, metavar="SECONDS",
                   help="a request's line and headers must arrive within this many seconds of the connection (or of"
                        " the request's first byte): slower ones get 408 and a connection that sends nothing is"
                        " closed (default 30; at most 3600)")
    s.add_argument("--database-timeout", type=_seconds_arg, default=15.0, metavar="SECONDS",
                   help="PostgreSQL: an upload (or any request) whose database work takes longer is refused with 503,"
                        " so a database that stopped answering is not waited on for ever; the trainer's commit gets"
                        " ten times as long, at least 300 s (default 15; at most 3600)")
    s.add_argument("--max-reports-per-request", type=positive_int, default=10_000,
                   help="most reports in one upload; more are refused with 413 (default 10000)")
    s.add_argument("--fed-epsilon-per-entry", dest="fed_epsilon", type=positive_float, default=None,
                   metavar="EPS_ENTRY",
                   help="enable FedLDA rounds with this epsilon per reported entry (one word; Wang et al. 2020, Thm 1),"
                        " a component, not the per-user total: a user spends it once for each of its entries"
                        " (--fed-pad-length x --fed-sample-ratio), as FedLDA(epsilon_per_entry=...); for a per-user"
                        " total give --fed-user-budget instead")
    s.add_argument("--fed-user-budget", type=positive_float, default=None, metavar="EPS_USER",
                   help="enable FedLDA rounds with this per-user total (entries x epsilon per entry) instead of"
                        " --fed-epsilon-per-entry and --fed-pad-length: the split that estimates words best for the"
                        " vocabulary (FedLDA.from_user_budget, docs/fedlda.md)")
    s.add_argument("--fed-epsilon", dest="retired_fed_epsilon", default=None, metavar="EPS",
                   help="refused: the epsilon per entry is now --fed-epsilon-per-entry (a per-user total:"
                        " --fed-user-budget)")
    s.add_argument("--fed-topics", type=positive_int, default=None, help="FedLDA topics (default 20)")
    s.add_argument("--fed-failure-rate", type=unit_interval, default=None,
                   help="refused: the floor/tail rules' excluded rare-word mass (train --algorithm fed"
                        " --exclusion); the server's rounds use the 'none' rule, which excludes nothing")
    s.add_argument("--fed-pad-length", type=positive_int, default=None, help="FedLDA entries per update (default 512)")
    s.add_argument("--fed-sample-ratio", type=float, default=None, help="FedLDA share of entries sent (default 1)")
    s.add_argument("--fed-min-updates", type=int, default=None,
                   help="close a FedLDA round after this many updates (0: only by the admin; default 2)")
    s.add_argument("--fed-report-words", type=_int_arg(2), default=None, metavar="N",
                   help="FedLDA reports range over the vocabulary's first N words (listed most common first; default:"
                        " every word); 'dptopic privacy fed-report-words' gives N for the users you expect")
    s.add_argument("--ledger", default=None, metavar="PATH",
                   help="a dataset ledger (a file, or postgresql://USER@HOST/DB) that records each served release"
                        " (a batch of reports, a FedLDA or secure-sum round), charged to the contributors it covers by"
                        " their pseudonym, so that a person's total spans central and served releases (default: none;"
                        " docs/budget.md)")
    s.add_argument("--dataset", default=None, metavar="NAME",
                   help="with --ledger: the name the served releases are recorded under (default: by the persons"
                        " they cover)")
    s.add_argument("--quiet", action="store_true", help="no access log")

    add_serve_flags(s)
    s.set_defaults(run="serve:cmd_serve")

    u = sub.add_parser("submit", help="contributor side: randomize your documents locally and upload the reports",
                       description="Fetch the server's public vocabulary and f, randomize your documents on this"
                                   " machine (coins from the OS CSPRNG) and upload only the randomized reports, with"
                                   " retries that never count twice. Raw text never leaves the process.")
    _client_args(u)
    u.add_argument("--contributor", default=None,
                   help="pseudonym under which the server tallies your epsilon (default: the one kept for this server"
                        " in the --state folder, else a fresh random one, printed)")
    u.add_argument("--state", default=None, metavar="FILE",
                   help="where your randomized reports are kept, with which uploads each server acknowledged, so that"
                        " a run stopped part-way is finished by running it again without randomizing again (a file,"
                        " or a folder; default: $XDG_STATE_HOME/dptopic or ~/.local/state/dptopic); the folder also"
                        " keeps one pseudonym per server, so your runs are tallied as one contributor, and the files"
                        " hold a salted digest of your documents (readable by you only); 'none' keeps nothing and"
                        " takes a fresh pseudonym every run")
    add_submit_flags(u)
    u.set_defaults(run="submit:cmd_submit")

    f = sub.add_parser("fed-client", help="take part in FedLDA rounds with your documents (kept local)",
                       description="Take part in a 'dptopic serve --fed-epsilon-per-entry' server's FedLDA rounds: your"
                                   " documents, topic assignments and proportions stay on this machine; each round"
                                   " sends one update of randomized reports (docs/fedlda.md), and the epsilon spent is"
                                   " printed, also when the server refuses an update.")
    _client_args(f)
    f.add_argument("--rounds", type=positive_int, default=1, help="rounds to take part in")
    f.add_argument("--max-user-epsilon", type=positive_float, default=None, metavar="EPS",
                   help="refuse, before anything is randomized, a server whose rounds would spend more than EPS for"
                        " you in all (epsilon per entry x entries, basic composition): --max-epsilon limits one entry"
                        " only, and the server chooses how many entries an update holds (default: no such limit)")
    f.add_argument("--client-id", default=None,
                   help="pseudonym (default: the one kept with your reports, else a fresh random one; a run naming"
                        " another id than the kept one is refused)")
    f.add_argument("--state", default=None, metavar="FILE",
                   help="where your randomized reports are kept between runs, so that taking part again spends"
                        " nothing more (a file, or a folder; default: $XDG_STATE_HOME/dptopic or"
                        " ~/.local/state/dptopic); 'none' draws new reports every run, which spends the per-user"
                        " epsilon again")
    f.add_argument("--poll", type=_timeout_arg, default=1.0,
                   help=f"seconds between looks for the next round, in (0, {MAX_TIMEOUT:g}]")
    f.add_argument("--round-timeout", type=_timeout_arg, default=600.0,
                   help=f"give up waiting for a round after this many seconds, in (0, {MAX_TIMEOUT:g}]")
    f.set_defaults(run="submit:cmd_fed_client")
