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


def _topic_rows(view, cfg) -> str:
    rows = "".join(
        f"<tr><td>{t['topic']}</td><td class='words'>{escape(' '.join(t['words']))}</td></tr>" for t in view["topics"])
    return rows or ("<tr><td colspan='2'>No topics yet: the first mini-batch of "
                    f"{cfg.batch_size} reports has not been trained.</td></tr>")


def _contributor_rows(service, contributors, document_kind: bool) -> str:
    rows = ""
    for rank, c in enumerate(contributors, 1):   # pseudonyms are not shown: this page is public
        p = service.contributor_privacy(c["reports"])
        who = f"{rank}" + (" (one upload without a pseudonym)" if c["contributor"] is None else "")
        word_cell = "" if document_kind else f"<td>{fmt_epsilon(p['epsilon_contributor_word_basic'])}</td>"
        rows += (f"<tr><td>{who}</td><td>{c['reports']}</td>{word_cell}"
                 f"<td>{fmt_epsilon(p['epsilon_contributor_doc_basic'])}</td></tr>")
    return rows


def _fed_section(service, storage) -> str:
    """The FedLDA section (empty without FedLDA rounds): the open round, its guarantee, the clients ranked."""
    if service.rrp is None:
        return ""
    fed = storage.fed_participation(25)
    rows_fed = "".join(f"<tr><td>{rank}</td><td>{f['rounds']}</td></tr>" for rank, f in enumerate(fed, 1)) \
        or "<tr><td colspan='2'>No update received yet.</td></tr>"
    rnd, _ = storage.fed_round()
    return (f"<h2>FedLDA</h2><p>Open round: <b id='fed-round'>{rnd}</b>; per-entry epsilon"
            f" {fmt_epsilon(service.rrp.epsilon_per_entry)}, {_plural(service.rrp.n_entries, 'entry', 'entries')}"
            " per update: epsilon"
            f" {fmt_epsilon(service.rrp.epsilon_per_entry * service.rrp.n_entries)} per user (basic composition),"
            " spent once"
            " whatever the number of rounds as long as the user keeps the reports it drew (dptopic"
            " fed-client keeps them in its state file); a user who draws new reports spends it again, and"
            " this server cannot tell. The model of the latest closed round, with its privacy report:"
            " <code>GET /v1/fed/model</code> (<code>dptopic pull</code>, for the FedLDA model).</p>"
            "<table><tr><th>client (ranked; ids not shown)</th><th>rounds taken part in</th></tr>" + rows_fed + "</table>")


def _prior_note(view, cfg) -> str:
    # the active model's own record decides (a restart without prior keeps the prior it was started from); before
    # any model, this start's prior
    used = used_prior(view.get("privacy"))
    if used is None:
        used = getattr(cfg, "prior", None) is not None
    return ("" if not used else
            " and of the prior corpus, which it uses in the clear and no epsilon covers (it must be public or"
            " consented data)")


def render_status(service) -> str:
    """The service's public page: what it holds and trained, the topics, each contributor's epsilon, FedLDA."""
    cfg, storage = service.cfg, service.storage
    view = service.model_view(10)
    counts = storage.counts()
    contributors = storage.contributors(SHOWN)
    rows_topics = _topic_rows(view, cfg)
    document_kind = cfg.report_kind == "document"
    units_note = ("Each report protects one whole document (eps_doc); a contributor's reports compose over all their"
                  " documents." if document_kind else
                  "Word level: each of the contributor's documents differs in the presence of one word. Document"
                  " level: any change of all their documents.")
    word_header = "" if document_kind else "<th>eps, word level</th>"
    rows_contrib = _contributor_rows(service, contributors, document_kind)
    n_all = counts["contributors"] + counts["anonymous_uploads"]
    shown = (f"The {len(contributors)} with the most reports of {n_all}" if n_all > len(contributors)
             else f"All {n_all}")
    fed_html = _fed_section(service, storage)
    kind = kinds.get(cfg.report_kind)
    prior_html = _prior_note(view, cfg)
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
