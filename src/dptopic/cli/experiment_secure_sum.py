"""``dptopic experiment secure-sum``: a secure-sum round played by every person of a corpus, over HTTP, against
one or several server processes, and the line it prints (docs/secure_sum.md, "A large round")."""
from __future__ import annotations

from pathlib import Path

from ..contributor.client import ServiceClient
from ..corpus import Vocabulary
from ..datasets import PUBLIC_VOCABULARY_DECIDES
from ..errors import DPTopicError
from ..experiments.secure_sum import secure_sum_experiment
from ..protocol.secure_sum.cohort_enrollment import read_cohort_invitation
from ..protocol.secure_sum.enrollment import read_invitations
from ..reporting.terminal import make_console
from ..service.config import read_token_file
from ._flags import flag_errors
from ._run_common import load_corpus
from .secure_sum import PLAN_FLAGS


def cmd_experiment(a) -> None:
    servers = list(a.server)
    cfgs = []
    for server in servers:
        client = ServiceClient(server, retries=3)
        cfg = client.get_json("/v1/config")
        if not isinstance(cfg, dict) or cfg.get("report_kind") != "secure-sum":
            raise DPTopicError(f"--server {server} runs no secure sum: start it with --report-kind secure-sum.")
        cfgs.append(cfg)
    if any(c.get("round_id") != cfgs[0].get("round_id") for c in cfgs):
        raise DPTopicError("--server: the addresses serve different rounds; give the server processes of one round.")
    client, cfg = ServiceClient(servers[0], retries=3), cfgs[0]
    with flag_errors(PLAN_FLAGS):
        if isinstance(cfg.get("cohorts"), dict):        # a round in cohorts: its invitations, one per person

            files = sorted(Path(a.invitations).glob("invitation-*.json")) if Path(a.invitations).is_dir() else []
            if not files:
                raise DPTopicError(f"--invitations {a.invitations} holds no invitation-*.json: give the folder"
                                   " 'dptopic secure-sum invite --cohort-size' wrote.")
            invitations = [read_cohort_invitation(f) for f in files]
        else:
            invitations = read_invitations(a.invitations)
    corpus = load_corpus(a.corpus, a.format, None, a.text_field, None, vocabulary=Vocabulary(cfg["vocabulary"]),
                         stop_words=PUBLIC_VOCABULARY_DECIDES, vocab_settable=False, drop_empty=False,
                         user_field=a.user_field)
    token = read_token_file(a.token_file) if a.token_file else None
    s = secure_sum_experiment(servers, corpus, a.out, invitations, dropout=a.dropout, token=token, seed=a.seed,
                              client=client, workers=a.workers, verbose=0 if a.quiet else 1)
    make_console().print(secure_sum_experiment_line(s), markup=False)


def _usage_text(s: dict) -> str:
    """The servers' own CPU and peak memory in :func:`secure_sum_experiment_line` (nothing when none reported)."""
    proc = s.get("server_process") or {}
    if not proc.get("processes"):
        return ""
    return (f"; server processes: {proc['processes']}, {proc['cpu_s']:.1f} CPU s, peak memory"
            f" {proc['peak_rss_bytes'] / 2**20:,.0f} MiB" + (" (the largest)" if proc["processes"] > 1 else ""))


def _per_contributor_text(s: dict) -> str:
    """A pool's costs per contributor in :func:`secure_sum_experiment_line`."""
    return (f"{s['bytes_per_contributor'] / 1e3:.1f} kB sent, {s.get('bytes_down_per_contributor', 0) / 1e3:.1f} kB"
            f" received and {s['cpu_per_contributor_s'] * 1e3:.1f} ms of CPU per contributor (largest upload"
            f" {s['upload_bytes_max'] / 1e3:.1f} kB)")


def secure_sum_experiment_line(s: dict) -> str:
    """The line ``dptopic experiment secure-sum`` prints of
    :func:`~dptopic.experiments.secure_sum.secure_sum_experiment`'s summary ``s``."""
    recovery = (f"; the released topics cover the central --unit user model's at {s['recovery_of_central_topics']:.3f}"
                " (outside the guarantee: computed from the private documents).")
    if "cohorts" in s:
        by, tol = s.get("dropped_by_cohort") or [0], s.get("tolerance_by_cohort") or [0]
        each = ", ".join(f"{d:,}" for d in by) if len(by) <= 10 else f"{min(by):,}-{max(by):,} a cohort"
        limit = f"{min(tol):,}" if min(tol) == max(tol) else f"{min(tol):,}-{max(tol):,}"
        left = (f"; {s['left_out']:,} left out (the step closed before they sent)" if s.get("left_out") else "")
        return (f"secure sum of {s['people']:,} people in {s['cohorts']} cohorts ({s['delegates']} delegates, each"
                f" also in the bridge) from {s.get('workers', 1)} contributor process(es); {s['dropped']:,} dropped"
                f" after masking ({each} by cohort, each cohort's tolerance {limit};"
                f" {s.get('dropped_delegates', 0)} delegates among them){left}: {s['state']} in {s['seconds']:.1f} s"
                f" ({s['seconds_per_contributor'] * 1e3:.0f} ms a contributor,"
                f" {s['requests_per_contributor']:.1f} requests); {_per_contributor_text(s)}{_usage_text(s)}"
                + recovery)
    return (f"secure sum of {s['people']:,} people ({s['dropped']:,} dropped after masking) from"
            f" {s.get('workers', 1)} contributor process(es): {s['state']} in"
            f" {s['seconds']:.1f} s ({s['seconds_per_contributor'] * 1e3:.0f} ms a contributor, {s['neighbours']}"
            f" neighbours each, {s['requests_per_contributor']:.1f} requests); {_per_contributor_text(s)}; server: "
            + ", ".join(f"step {k}: sum {v['sum_s']:.2f} s + unmask {v['unmask_s']:.2f} s"
                        for k, v in s["server"].items() if k != "process")
            + _usage_text(s) + recovery)
