"""The read-only status page at ``/``: topics, reports received, epsilon per contributor."""
from __future__ import annotations

import time
from html import escape

from ..accounting.verify import fmt_epsilon
from . import kinds

SHOWN = 25    # contributors listed on the page, most reports first


def used_prior(privacy) -> bool | None:
    """Whether a model's report records a prior corpus used in the clear (OLP-LDA's ``prior_data``); None when the
    report does not say (a model without a prior step)."""
    if not isinstance(privacy, dict) or "prior_data" not in privacy:
        return None
    return privacy.get("prior_data") not in (None, "none")


def _fmt(x, digits=4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def _plural(n: int, word: str, words: str | None = None) -> str:
    """``1 entry``, ``2 entries``, ``1,000 uploads`` (as ``dptopic.reporting.terminal.plural``; the service does not import
    the command line)."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


_STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}"
          "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}"
          "td.words{font-family:monospace}.note{color:#555;font-size:90%}")


def render_unavailable(reason: str) -> str:
    """The page at ``/`` while the database cannot be read: a person's browser gets a page, not a JSON error, and
    it reloads itself, so it shows the status again once the database is back."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="10">
<title>dptopic collection service: unavailable</title>
<style>{_STYLE}</style></head>
<body>
<h1>dptopic collection service</h1>
<p><b>The status is unavailable right now:</b> {escape(reason)}</p>
<p class="note">This page reloads itself every 10 seconds. Reports sent meanwhile are refused with HTTP 503 and
nothing of them is stored, so a contributor's client may send them again later; the server's operator finds the
cause in the server log. Generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}.</p>
</body></html>
"""


def render_status(service) -> str:
    cfg, storage = service.cfg, service.storage
    view = service.model_view(10)
    counts = storage.counts()
    contributors = storage.contributors(SHOWN)
    fed = storage.fed_participation(25) if service.rrp is not None else []
    rows_topics = "".join(
        f"<tr><td>{t['topic']}</td><td class='words'>{escape(' '.join(t['words']))}</td></tr>" for t in view["topics"])
    if not rows_topics:
        rows_topics = ("<tr><td colspan='2'>No topics yet: the first mini-batch of "
                       f"{cfg.batch_size} reports has not been trained.</td></tr>")
    document_kind = cfg.report_kind == "document"
    units_note = ("Each report protects one whole document (eps_doc); a contributor's reports compose over all their"
                  " documents." if document_kind else
                  "Word level: each of the contributor's documents differs in the presence of one word. Document"
                  " level: any change of all their documents.")
    word_header = "" if document_kind else "<th>eps, word level</th>"
    rows_contrib = ""
    for rank, c in enumerate(contributors, 1):   # pseudonyms are not shown: this page is public
        p = service.contributor_privacy(c["reports"])
        who = f"{rank}" + (" (one upload without a pseudonym)" if c["contributor"] is None else "")
        word_cell = "" if document_kind else f"<td>{fmt_epsilon(p['epsilon_contributor_word_basic'])}</td>"
        rows_contrib += (f"<tr><td>{who}</td><td>{c['reports']}</td>{word_cell}"
                         f"<td>{fmt_epsilon(p['epsilon_contributor_doc_basic'])}</td></tr>")
    n_all = counts["contributors"] + counts["anonymous_uploads"]
    shown = (f"The {len(contributors)} with the most reports of {n_all}" if n_all > len(contributors)
             else f"All {n_all}")
    rows_fed = "".join(f"<tr><td>{rank}</td><td>{f['rounds']}</td></tr>" for rank, f in enumerate(fed, 1)) \
        or "<tr><td colspan='2'>No update received yet.</td></tr>"
    fed_html = ""
    if service.rrp is not None:
        rnd, _ = storage.fed_round()
        fed_html = (f"<h2>FedLDA</h2><p>Open round: <b id='fed-round'>{rnd}</b>; per-entry epsilon"
                    f" {fmt_epsilon(service.rrp.epsilon_per_entry)}, {_plural(service.rrp.n_entries, 'entry', 'entries')}"
                    " per update: epsilon"
                    f" {fmt_epsilon(service.rrp.epsilon_per_entry * service.rrp.n_entries)} per user (basic composition),"
                    " spent once"
                    " whatever the number of rounds as long as the user keeps the reports it drew (dptopic"
                    " fed-client keeps them in its --state file); a user who draws new reports spends it again, and"
                    " this server cannot tell. The model of the latest closed round, with its privacy report:"
                    " <code>GET /v1/fed/model</code> (<code>dptopic pull --fed</code>).</p>"
                    "<table><tr><th>client (ranked; ids not shown)</th><th>rounds taken part in</th></tr>" + rows_fed + "</table>")
    kind = kinds.get(cfg.report_kind)

    # the active model's own record decides (a restart without --prior keeps the prior it was started from); before
    # any model, this start's --prior
    used = used_prior(view.get("privacy"))
    if used is None:
        used = getattr(cfg, "prior", None) is not None
    prior_html = ("" if not used else
                  " and of the prior corpus, which it uses in the clear and no epsilon covers (it must be public or"
                  " consented data)")
    privacy_html, model_name = kind.privacy_line(cfg, _fmt, fmt_epsilon), kind.model_name
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="30">
<title>dptopic collection service</title>
<style>{_STYLE}</style></head>
<body>
<h1>dptopic collection service</h1>
<p>Reports received: <b id="reports-stored">{counts['reports_stored']}</b> in {_plural(counts['submissions'], 'upload')}
from {_plural(counts['contributors'], 'pseudonymous contributor')} and {_plural(counts['anonymous_uploads'], 'upload')}
without a pseudonym; used for training: <b id="reports-used">{view['reports_used']}</b>
in {_plural(view['batches'], 'mini-batch', 'mini-batches')} (model {view['model_id']}, version {view['model_version']}).</p>
<p>{privacy_html}
Everything this server computes is post-processing of the randomized reports{prior_html}.</p>
<h2>Topics ({model_name})</h2>
<table id="topics"><tr><th>topic</th><th>top words</th></tr>{rows_topics}</table>
<h2>Epsilon per contributor</h2>
<p class="note">{shown} contributors, by reports sent (pseudonyms are not shown; an upload without one counts as a
contributor of its own); a contributor's reports compose (basic composition, pure DP; tight accounting can only
be smaller). {units_note}</p>
<table id="contributors"><tr><th>contributor</th><th>reports</th>{word_header}<th>eps, document level</th></tr>
{rows_contrib}</table>
{fed_html}
<p class="note">Read-only page, generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}.
JSON: <a href="/v1/topics">/v1/topics</a>, <a href="/v1/config">/v1/config</a>, <a href="/metrics">/metrics</a>.</p>
</body></html>
"""


def pull_line(info: dict, fed: bool = False) -> str:
    """What ``dptopic pull`` says of the model it fetched (``info``: :func:`dptopic.reporting.pull.pull`'s answer):
    the server's active model, or with ``fed`` the FedLDA model of its latest closed round."""
    if fed:
        return (f"FedLDA model of round {info['round']} written to {info['out']}: read it with 'dptopic topics',"
                " 'transform' or 'report'")
    return (f"model {info['model_id']} (version {info['model_version']}, {info['class']}) written to {info['out']}:"
            " read it with 'dptopic topics', 'evaluate' or 'report'")


def submit_lines(s: dict, server: str) -> list[str]:
    """What :func:`~dptopic.contributor.client.submit`'s summary ``s`` tells its contributor (the lines ``dptopic submit``
    prints): the pseudonym, where the reports are kept, what was sent, and the privacy of the documents."""
    eps, n = fmt_epsilon, s["n_documents"]     # an epsilon shown is rounded up: never below what was spent
    kept = ("randomized reports kept in " + s["state"] + " (readable by you only): a run stopped part-way is finished by"
            " running it again, without randomizing again" if s["state"] else
            "reports not kept (--state none): a later run on these documents randomizes them again, at a new cost")
    held = " (the one the server holds for these reports)" if s.get("contributor_from_server") else ""
    lines = [f"contributor pseudonym {s['contributor']}{held} (pass --contributor {s['contributor']} to be tallied as"
             f" one contributor on another machine); {kept}."]
    if s["already_acknowledged"]:
        lines.append(f"{_plural(s['already_acknowledged'], 'report')} of these documents had been acknowledged by an"
                     " earlier run: not randomized or sent again" + ("." if s["reports"] else
                                                                      "; nothing was sent, nothing more spent."))
    if s.get("replayed_reports"):
        lines.append(f"{_plural(s['replayed_reports'], 'report')} had already been stored by {server} (an earlier run,"
                     " perhaps under another address of this server): replayed, nothing new stored, nothing more"
                     " spent.")
    stored = s.get("stored_reports", s["reports"])
    if stored or not (s["already_acknowledged"] or s.get("replayed_reports")):
        lines.append(f"{_plural(stored, 'randomized report')} uploaded to {server} in"
                     f" {_plural(s['uploads'] - s['replayed_acks'], 'upload')}.")
    these = "this document" if n == 1 else f"these {_plural(n, 'document')}"
    lines.append(f"Privacy of {these} (V={s['vocab_size']}; "
                 + ("" if s["epsilon_word"] is None else f"eps_word={eps(s['epsilon_word'])}, ")
                 + f"eps_doc={eps(s['epsilon_doc'])} per document; together"
                 + ("" if s["epsilon_word"] is None else
                    f" eps_word={eps(n * s['epsilon_word'])} for one word's presence in each and")
                 + f" eps={eps(n * s['epsilon_doc'])} for the documents, by basic composition, "
                 + ("spent once however often the kept reports are sent" if s["state"] else
                    "spent again by every run on these documents, since the reports were not kept (--state none)")
                 + "). Raw text never left this machine.")
    return lines


def fed_client_lines(s: dict) -> list[str]:
    """What :func:`~dptopic.contributor.client.fed_participate`'s summary ``s`` tells its participant (the lines ``dptopic
    fed-client`` prints): the rounds, the epsilon of its reports and whether they were kept."""
    eps = fmt_epsilon     # rounded up: never below what was spent
    if s["state"] is None:
        kept = "reports drawn anew for this run (--state none): a later run that draws again spends its epsilon again"
    elif s["reused_reports"]:
        kept = (f"reused the reports drawn before and kept in {s['state']}: this run spent nothing more, and it did not"
                " read the documents given to it (the kept reports stand for the documents of the run that drew them;"
                " new documents need new reports: --state none, or another --state, at a new cost)")
    else:
        kept = (f"reports drawn once and kept in {s['state']} (readable by you only): later runs reuse them and spend"
                " nothing more")
    return [f"took part in {len(s['rounds'])} round(s) as {s['client']}; epsilon of your reports (this user):"
            f" {eps(s['epsilon_basic'])} basic, {eps(s['epsilon_pld'])} PLD at delta={s['delta']:g}; {kept}.",
            s["note"]]


def secure_sum_lines(s: dict) -> list[str]:
    """What :func:`~dptopic.contributor.secure_client.take_part`'s summary ``s`` tells its contributor (the line
    ``dptopic submit`` prints against a secure-sum server)."""
    notes = []
    if s.get("no_vocabulary_word"):
        notes.append("note: your documents hold none of the round's words, so your statistic is all zeros; you took"
                     " part with your share of the noise only.")
    if s.get("undecryptable_shares"):
        notes.append(f"note: the shares of {s['undecryptable_shares']} neighbour(s) did not decrypt for you and were"
                     " left out (each such neighbour's seeds then lack your share).")
    if "left_out" in s:
        return [f"contributor {s['contributor']}: left out of the round at {s['left_out']} (the step closed before this"
                " run took part); nothing of yours is in the sum.", *notes]
    if s.get("finished"):
        return [f"contributor {s['contributor']}: nothing new sent, the round is over for you ({s['finished']}); its"
                f" secrets were wiped from {s['state']}.", *notes]
    steps = f"sent this run: {', '.join(s['steps'])}" if s["steps"] else "nothing new sent: an earlier run sent it all"
    return [f"contributor {s['contributor']}: took part in the secure sum ({steps}); epsilon {s['epsilon']:g} per person"
            f" (delta {s['delta']:g}) for the whole round, with at most {s['collusion']} contributors colluding with"
            f" the server; {s['neighbours']} neighbours, threshold {s['threshold']}."
            + (f" What was sent is kept in {s['state']}, the round's secrets wiped from it." if s.get("state") else ""),
            *notes]


def secure_sum_experiment_line(s: dict) -> str:
    """The line ``dptopic experiment secure-sum`` prints of
    :func:`~dptopic.experiments.secure_sum.secure_sum_experiment`'s summary ``s``."""
    return (f"secure sum of {s['people']:,} people ({s['dropped']:,} dropped after masking): {s['state']} in"
            f" {s['seconds']:.1f} s ({s['seconds_per_contributor'] * 1e3:.0f} ms a contributor, {s['neighbours']}"
            f" neighbours each, {s['requests_per_contributor']:.1f} requests); {s['bytes_per_contributor'] / 1e3:.1f} kB"
            " sent and"
            f" {s['cpu_per_contributor_s'] * 1e3:.1f} ms of CPU per contributor (largest upload"
            f" {s['upload_bytes_max'] / 1e3:.1f} kB); server: "
            + ", ".join(f"step {k}: sum {v['sum_s']:.2f} s + unmask {v['unmask_s']:.2f} s" for k, v in s["server"].items())
            + f"; the released topics cover the central --unit user model's at {s['recovery_of_central_topics']:.3f}"
            " (outside the guarantee: computed from the private documents).")
