"""The privacy card: one schema for every trainer's guarantee.

The fields follow the OpenDP deployments registry (privacy unit, epsilon and delta, DP flavour, central
or local model, accounting method, implementation and version), with what a reviewer also needs: the
neighbouring relation, the theorem, what is covered and what is not, every composition figure side by
side, and what a word-level epsilon means for a whole document. The card is built from a model's privacy
report (``model.privacy_``) and nothing else: it reads no data.
"""
from __future__ import annotations

import math
import re

from .. import __version__
from .group import GROUP_SIZES, group_privacy, replacement_epsilon
from .ledger import NO_GUARANTEE, claims_no_guarantee
from .verify import _mechanism, _same_mechanism, rounded_up, verify_report

CARD_SCHEMA = "dptopic-privacy-card/1"
STRONG_EPSILON_LIMIT = 16.0
"""Above this epsilon the card says the guarantee is weak (deployed systems state 0.1 to 16 per document or user)."""
LARGE_DELTA = 1e-3
"""Above this delta the card says the guarantee is weak too, as the document-level trainers' ``fit`` warns
(``models/_document_base.py``): the card reads no data, so it cannot compare delta with 1/(number of documents)."""

# trainers whose randomizer runs on the contributor's side (the server is not trusted)
_LOCAL = {"LPLDA": "local: each contributor randomizes on their own device; the server sees only reports",
          "LocalDocumentLDA": "local: each contributor randomizes on their own device; the server sees only reports",
          "OLPLDA": "local: each contributor randomizes on their own device; the server sees only reports"}
_CENTRAL = "central: a trusted curator holds the raw documents and releases only the trained model"

# (report key, what the figure is, the delta it holds at: "report" (the report's delta), "basic" (delta_basic, else
# 0), "pure" (0), or None (no delta of its own: the "what" says what the figure means))
_FIGURES = (("epsilon_pld", "tight: privacy loss distributions (PLD)", "report"),
            ("epsilon_pld_tight", "tight: PLD over every event, vocabulary included", "report"),
            ("epsilon_rdp", "cross-check: Renyi DP", "report"),
            ("epsilon_basic", "basic sequential composition", "basic"),
            ("epsilon_paper", "the paper's own accounting", "pure"),
            ("epsilon_moments_accountant_paper", "the paper's figure: moments accountant (Abadi et al. 2016) over the"
                                                 " orders Park et al.'s code used; a cross-check, not the guarantee",
             "report"),
            ("epsilon_moments_accountant", "moments accountant (Abadi et al. 2016), integer orders 1..64; a"
                                           " cross-check, not the guarantee", "report"),
            ("epsilon_strong_composition", "the paper's baseline: strong composition (Dwork & Roth Thm 3.20) of the"
                                           " subsampled Gaussian steps at delta_step = 1e-6; a cross-check, not the"
                                           " guarantee", "report"),
            ("epsilon_nominal", "the paper's nominal claim (not proven)", None))


_COMPOSED_FIGURES = ("epsilon_pld", "epsilon_pld_tight", "epsilon_rdp", "epsilon_basic")
"""The figures a private vocabulary's composition states anew, epsilon_V included; the others are the trainer's."""
_ADDED_FIGURES = {
    "epsilon_pld": "epsilon_V added to the topic model's PLD figure (Manzonelli et al. 2024, Thm 4.1: epsilons add);"
                   " looser than the PLD over every event",
    "epsilon_rdp": "epsilon_V added to the topic model's Renyi DP figure (Thm 4.1); a cross-check",
    "epsilon_pld_tight": "tight: PLD over every event, the vocabulary selection's (epsilon_V, delta_V) included as an"
                         " approximate-DP privacy loss distribution"}
"""What a private vocabulary's report means by the figures it states anew (``accounting.set_union.fdptm_report``)."""


def _fed_trust_model(report: dict) -> str:
    """FedLDA's trust model, from its report: ``FedLDA.fit`` runs every client in one process (a simulation); a
    model a deployment released (``FedLDA.from_broadcast``, ``GET /v1/fed/model``) says so in ``deployment``."""
    noise = str(report.get("noise") or "the report's randomizer")
    if report.get("deployment"):
        return f"federated with local DP, deployed: {' '.join(str(report['deployment']).split())}"
    coins = str(report.get("randomness") or "")
    return ("federated with local DP, simulated: FedLDA.fit held every client's documents in one process and"
            f" randomized each client's updates there ({noise}) before aggregating them, so whoever ran it saw the raw"
            " documents" + ("; the coins came from a simulation generator, not a cryptographic one"
                            if coins.startswith("SIMULATION") else "")
            + ". In a deployment (dptopic serve with dptopic fed-client) each client randomizes on its own device"
              " and the server sees only the randomized updates")


def _trust_model(trainer: str, report: dict) -> str:
    if trainer == "FedLDA":
        return _fed_trust_model(report)
    if trainer == "SecureSumTopics":        # the round's own statement (models/secure_sum.py, docs/secure_sum.md)
        return str(report.get("trust_model") or "secure aggregation (no trust model recorded)")
    return _LOCAL.get(trainer, _CENTRAL)


def ceil_epsilon(x, digits: int = 4):
    """``x`` rounded up at ``digits`` significant digits, so that an epsilon shown is never below the one computed
    (0.99994 reads 1, not 0.9999); None for anything but a finite number."""
    x = finite_or_none(x)
    return None if x is None else rounded_up(x, digits)


def epsilon_text(x, digits: int = 4) -> str:
    """An epsilon for display: rounded up at ``digits`` significant digits (:func:`ceil_epsilon`); infinity as
    "inf"; "—" for anything else."""
    f = finite_or_none(x)
    if f is None:
        try:
            return "inf" if float(x) == math.inf else "—"
        except (TypeError, ValueError, OverflowError):
            return "—"
    return f"{ceil_epsilon(f, digits):.{digits}g}"


def finite_or_none(x):
    """``x`` as a finite float, else None (how the card reads every figure of a report)."""
    try:
        x = float(x)
    except (TypeError, ValueError, OverflowError):
        return None
    return x if math.isfinite(x) else None


def claimed(report: dict) -> tuple[float | None, float | None, str]:
    """``(epsilon, delta, which)``: the guarantee the report claims. The top-level ``epsilon`` when the
    report names one; else the tightest of the valid figures it carries (PLD, then RDP, then basic)."""
    if not report.get("private"):
        return None, None, "none"
    delta = report.get("delta")
    if claims_no_guarantee(report):
        return None, None, str(report["epsilon_method"])    # the report says why no guarantee follows
    if finite_or_none(report.get("epsilon")) is not None:
        return float(report["epsilon"]), delta, str(report.get("epsilon_method", "as reported"))
    for key, name in (("epsilon_pld", "PLD"), ("epsilon_rdp", "RDP"), ("epsilon_basic", "basic composition")):
        if finite_or_none(report.get(key)) is not None:
            d = report.get("delta_basic", delta) if key == "epsilon_basic" else delta
            return float(report[key]), d, name
    return None, delta, "none"


def _search(report: dict):
    """``(epsilon, delta, which)`` of the private search that chose this model (``RandomStoppingSearch`` sets the
    best model's ``privacy_["search"]``), or None: the search's guarantee, which covers the model, not one run's."""
    s = report.get("search")
    eps = finite_or_none(s.get("epsilon")) if isinstance(s, dict) else None
    if eps is None:
        return None
    return eps, s.get("delta"), (f"{s.get('method') or 'RDP'}: the private hyper-parameter search that chose this"
                                 " model (the number of runs kept secret)")


def _split_scope(scope: str) -> tuple[str, str]:
    """The report's ``scope`` sentence split into what is covered and what is not."""
    scope = str(scope or "")
    low = scope.lower()
    i = low.find("not covered")
    if i < 0:
        return scope.strip(), ""
    return scope[:i].strip().rstrip(".;") + ".", scope[i:].strip()


PURE_NOTE_TOLERANCE = 0.01   # basic composition's pure epsilon this close to the headline is worth naming


def _flavour(delta) -> str:
    d = finite_or_none(delta)
    return "pure epsilon-DP" if d in (None, 0.0) else "approximate (epsilon, delta)-DP"


PURE_METHOD = "pure epsilon-DP: delta = 0"
"""How the card names a pure headline's delta (the report's ``epsilon_method`` says "holds with delta = 0 too")."""


def _epsilon_is(which: str) -> str:
    """The report's ``epsilon_method`` as the card states it: a pure headline reads "basic composition; pure
    epsilon-DP: delta = 0", without the report's nested parenthesis."""
    which = str(which)
    if "pure" not in which:
        return which
    base = re.sub(r"\s*\(pure epsilon-DP[^()]*\)", "", which).strip()
    return f"{base}; {PURE_METHOD}" if base and "pure" not in base else (base or PURE_METHOD)


def _local_reports(report: dict) -> int | None:
    """How many reports of one contributor a local-DP report composes, when more than one (its headline is then per
    contributor, not per report); None otherwise."""
    m = report.get("reports_per_contributor")
    if report.get("model") != "local" or isinstance(m, bool) or not isinstance(m, int) or m < 2:
        return None
    return m


def _relation(report: dict) -> str | None:
    """The neighbouring relation of the card's headline. A local-DP report that composes a contributor's reports
    names the relation of one report; its headline epsilon is per contributor, so the card states the contributor's
    relation and gives the report's after it."""
    relation = report.get("neighbouring_relation")
    m = _local_reports(report)
    if relation is None or m is None:
        return relation
    return (f"any two sets of up to {m} documents of one contributor (local DP: each of the contributor's {m} reports"
            f" may come from any other input; docs/local_dp.md). One report alone: {relation}")


def privacy_card(report: dict, trainer: str = "", version: str | None = None, check: bool = True) -> dict:
    """The card for a model's privacy report (``model.privacy_``); ``trainer`` is the estimator's class name.

    ``check``: recompute the report's figures from the events it lists (``ledger_check``,
    :func:`~dptopic.accounting.verify.verify_report`)."""
    report = dict(report or {})
    eps, delta, which = claimed(report)
    private = bool(report.get("private")) and eps is not None
    search = _search(report) if private else None
    if search is not None:      # the model a private search chose: the search's guarantee is the model's
        eps, delta, which = search
    if private and "pure" in str(which):  # the claim is pure epsilon-DP: it holds with delta = 0
        delta = 0.0
    guarantee = "none" if not private else ("partial" if report.get("guarantee") == "partial" else "full")
    events_only = bool(report.get("private")) and claims_no_guarantee(report) and report.get("unit") is not None
    covered, not_covered = _split_scope(report.get("scope", ""))
    if search is not None:
        s_covered, s_not = _split_scope(report["search"].get("scope", ""))
        covered, not_covered = s_covered or covered, " ".join(x for x in (s_not, not_covered) if x)
    vocab = report.get("vocabulary")
    # where the released words came from: "data" (read from the training documents: outside epsilon), "supplied"
    # (public) or "private" (DP set union); reports saved before the field existed say it in their "vocabulary" text
    source = report.get("vocabulary_source")
    vocab_exposed = source == "data" if source is not None else (isinstance(vocab, str)
                                                                 and "not protected" in vocab.lower())
    if vocab_exposed:
        low = not_covered.lower()
        # the scope may already say it (HDP: "Vocabulary treated as public (chosen from the training corpus, not
        # protected)"): state it once
        if isinstance(vocab, str) and vocab.lower() not in low and not ("vocabulary" in low and "not protected" in low):
            not_covered = (not_covered + " " if not_covered else "") + "Vocabulary: " + vocab
        if guarantee == "full":  # the released model names its words: a vocabulary read from the data is a release
            guarantee = "partial"  # that no epsilon covers (docs/privacy.md)
    card = {
        "schema": CARD_SCHEMA,
        "trainer": trainer,
        "guarantee": guarantee,
        # no guarantee: no unit it protects; but where noise was added and its events add up to no guarantee, the
        # events' unit and relation are shown (privacy_unit_note says that they carry no guarantee), as the terminal
        # card shows them
        "privacy_unit": report.get("unit") if private or events_only else None,
        "neighbouring_relation": _relation(report) if private or events_only else None,
        "epsilon": eps,
        "delta": finite_or_none(delta) if private else None,
        "epsilon_is": _epsilon_is(which) if private else which,
        "dp_flavour": _flavour(delta) if private else "none",
        "trust_model": _trust_model(trainer, report),
        "accounting_method": report.get("accounting") or {},
        "theorem": report.get("theorem"),
        "figures": _figures(report),
        # no guarantee: nothing is covered, and "—" would read as if nothing were left out; where noise was added but
        # its events add up to no guarantee, the scope's "covers ..." names what the events were accounted for, which
        # no (epsilon, delta) covers either
        "covered": (f"nothing: NO (epsilon, delta) guarantee follows from the events; they were accounted for: {covered}"
                    if events_only and covered else covered or ("" if private else
                                                                "nothing: no differential privacy guarantee")),
        "not_covered": not_covered or ("" if private else "everything: no differential privacy guarantee"),
        "implementation": {"library": "dptopic", "version": version or __version__,
                           # null where the trainer draws no noise of its own (a local-DP model: the contributors'
                           # randomizers drew it, their reports say how), never a "false" that reads as insecure
                           "noise": report.get("noise"),
                           "secure_noise": (None if report.get("secure_noise") is None
                                            else bool(report.get("secure_noise"))),
                           "randomness": report.get("randomness")},
    }
    basic = card["figures"].get("epsilon_basic", {})
    if (private and card["delta"] and basic.get("delta") == 0.0 and isinstance(basic.get("epsilon"), float)
            and basic["epsilon"] <= eps * (1 + PURE_NOTE_TOLERANCE)):
        # the headline is the smallest epsilon, here at a delta > 0; the same events are pure DP at almost the same one
        card["pure_note"] = (f"the same events are also pure epsilon-DP (delta = 0) at epsilon ="
                             f" {epsilon_text(basic['epsilon'])} by basic composition, within"
                             f" {PURE_NOTE_TOLERANCE:.0%} of the headline's {epsilon_text(eps)} at delta ="
                             f" {card['delta']:g}: a review may state the pure guarantee instead")
    if events_only:
        card["privacy_unit_note"] = ("the unit and neighbouring relation of the events the noise was accounted for;"
                                     " NO (epsilon, delta) guarantee holds for them")
    reasons = partial_reasons(report) if guarantee == "partial" else []
    if vocab_exposed and private:
        reasons.append("the vocabulary was chosen from the training documents and is released with the model, outside"
                       " the epsilon; give a public vocabulary (vocabulary=)"
                       + (" (DP set union selects words per document, not per person)" if report.get("unit") == "user"
                          else " or select it privately (private_vocabulary=)")
                       + ("" if len(reasons) else " for a full guarantee"))
    if reasons:
        card["partial_reasons"] = reasons
        card["guarantee_note"] = "partial: " + "; ".join(reasons)
    fed = fed_composition(report)
    if fed:
        card["fed_composition"] = fed
    colluders = report.get("epsilon_by_colluders")
    if isinstance(colluders, list) and colluders:      # a secure sum: epsilon by the number of dishonest entries
        card["epsilon_by_colluders"] = ", ".join(f"{c} colluding: {epsilon_text(e)}" for c, e in colluders) \
            + "; beyond that not covered"
    cohorts = cohorts_text(report)
    if cohorts:
        card["cohorts"] = cohorts
    unit = str(report.get("unit") or "unit")
    if isinstance(report.get("topic_model"), dict) or " + " in unit:   # a composed report: name no single unit
        unit = "privacy unit"
    if private and eps > STRONG_EPSILON_LIMIT:
        card["strength_note"] = (f"epsilon = {epsilon_text(eps)} per {unit} is a weak guarantee: it lets what an"
                                 f" observer believes about one {unit} change by up to a factor e^epsilon"
                                 + (f" (about 10^{eps / math.log(10):.0f})" if eps > 30 else f" ({math.exp(eps):.3g})")
                                 + "; deployments mostly state single-digit or low double-digit epsilons per document"
                                 " or per user (Apple's local DP: 2 to 16 per user and day; see the OpenDP deployments"
                                 " registry)"
                                 + ("; per document it is larger still: a document of L words is protected"
                                    " with L x epsilon (group privacy; see the per-document row)"
                                    if unit == "word" else ""))
    if private and (card["delta"] or 0.0) > LARGE_DELTA:   # a delta chance of failing outright: weak at any epsilon
        note = (f"delta = {card['delta']:g} is large: (epsilon, delta)-DP allows a delta chance that one {unit} is"
                f" exposed outright; a meaningful delta lies well below 1/(number of {unit}s), e.g. 1e-5 or 1e-6"
                " (Dwork & Roth 2014, Sec. 2.3)")
        card["strength_note"] = card["strength_note"] + "; " + note if "strength_note" in card else note
    if not private:
        card["reason"] = report.get("reason") or (which[len(NO_GUARANTEE):] if claims_no_guarantee(report) else
                                                  "the trainer claims no differential privacy guarantee")
    if private and report.get("unit") == "word":
        card["per_document"] = report.get("per_document") or {
            "rule": "group privacy: a document of L words is protected with L x epsilon",
            "examples": {str(L): eps * L for L in (10, 100, 1000)}}
    if check and report.get("private") is True:
        outcome = verify_report(report)     # the figures recomputed from the events the report lists
        card["ledger_check"] = {"status": outcome.status, "detail": outcome.detail}
    led = report.get("dataset_ledger")
    if isinstance(led, dict) and led.get("line"):     # the dataset ledger's total over every release (docs/budget.md)
        total = led.get("epsilon_total")
        card["dataset_total"] = {
            "dataset": led.get("dataset"), "epsilon": total, "delta": led.get("delta_total"),
            "releases": led.get("n_releases"), "line": led["line"],
            # more spent on this dataset than the model's own epsilon says: the card's headline is not the whole story
            "exceeds_model": bool(total is None or (private and eps is not None and total > eps * (1 + 1e-9)))}
    for key in ("warnings", "vocabulary_selection", "budget", "mode", "report_words_note", "fits", "user_bound",
                "user_field", "execution"):
        if key in report:
            card[key] = report[key]
    if (isinstance(card.get("budget"), dict) and isinstance(report.get("vocabulary_selection"), dict)
            and isinstance(report.get("topic_model"), dict)):
        # the trainer's budget, kept by the private vocabulary's composition: below the headline, which adds eps_V
        card["budget"] = dict(card["budget"], covers="the topic model alone: the private vocabulary's (epsilon_V,"
                                                     " delta_V) is spent on top of it, and the headline composes both")
    if search is not None:          # the run's own figures stay below, as one run's
        card["search"] = dict(report["search"])
        card["figures_note"] = ("the figures below are the chosen run's alone; the guarantee is the private search's,"
                                " which covers that run as the best of a secret number of runs")
    if "public_input" in report:    # public documents read in the clear (DocDPCooccurrence public_corpus=)
        card["public_input"] = report["public_input"]
    if "public_vectors" in report:  # public word vectors read in the clear (DocDPCooccurrence public_vectors=)
        card["public_vectors"] = report["public_vectors"]
    if "paper_figures_note" in report:
        card["figures_note"] = report["paper_figures_note"]
    if source is not None or vocab_exposed:
        card["vocabulary_source"] = source if source is not None else "data"
    if isinstance(report.get("vocabulary_list"), dict):    # which word list (vocabulary=): name, size, sha256
        card["vocabulary_list"] = report["vocabulary_list"]
    spent = planned_and_spent(report)
    if spent is not None:
        card["planned_and_spent"] = spent
    words = word_selection(report)
    if private and words is not None:
        card["word_selection"] = words
    if (private and report.get("unit") in ("user", "document") and card["delta"]
            and "add/remove" in str(report.get("neighbouring_relation", ""))):
        _group_figures(card, report)
    if private:
        protects = _protects(report.get("unit"), eps, card["delta"], (card.get("group_privacy") or {}).get("epsilon"),
                             card.get("replacement"))
        if protects:
            card["protects"] = protects
    if report.get("noise_reproducible"):    # a seed was given: whoever knows it can regenerate every noise draw
        card["noise_reproducible"] = True
        card["seed_warning"] = str(report.get("warning") or SEED_WARNING)
    return card


def cohorts_text(report: dict) -> str | None:
    """A secure sum run in cohorts (:mod:`dptopic.protocol.secure_sum.cohorts`): how the round was split, what each
    cohort's
    server learned, the dropouts and threshold per cohort, and the ring of the total; None for any other round."""
    c = (report.get("round") or {}).get("cohorts") if isinstance(report.get("round"), dict) else None
    if not isinstance(c, dict):
        return None
    try:
        return (f"{c['cohorts']} cohorts of {c['cohort_sizes'][0]}-{c['cohort_sizes'][1]} contributors, each a secure"
                f" sum tolerating {c['cohort_dropouts'][1]} dropouts (threshold {c['cohort_threshold'][1]} of"
                f" {c['cohort_degree'][1]} neighbours, {c['collusion']} colluders in the whole round), and a"
                f" second-level sum over {c['delegates_per_cohort']} delegates a cohort; a cohort's server learned"
                f" {c['cohort_server_learns']}; the operator learned {c['operator_learns']}; the noise was paid once,"
                f" for {c['honest_shares']} honest shares ({c['dropouts_total']} dropouts planned over the cohorts,"
                f" noise {c['noise_cost']:.3f} times a single round's), the total summed modulo 2^{c['modulus_bits']}")
    except (KeyError, TypeError, IndexError, ValueError):
        return "in cohorts (the report's cohort description is incomplete)"


def vocabulary_text(card: dict) -> str | None:
    """Where the released words came from, in one line (the card's ``vocabulary_source`` and, for a word list given
    to train, which one); None when the card does not say."""
    source = card.get("vocabulary_source")
    listed = card.get("vocabulary_list") if isinstance(card.get("vocabulary_list"), dict) else None
    if source == "supplied":
        text = "supplied: a public word list, outside the data (no epsilon is spent on it)"
        if listed:
            n = listed.get("n_words")
            text += (f"; the list {listed.get('name')}"
                     + (f", {n:,} words" if isinstance(n, int) and not isinstance(n, bool) else "")
                     + f", sha256 {listed.get('sha256')}")
        else:
            text += "; which list is not recorded (a model trained before dptopic recorded it, or from Python)"
        return text
    if source == "private":
        return "private: selected from the training documents by DP set union, inside the guarantee"
    if source == "data":
        return "data: chosen from the training documents, released outside the epsilon"
    return None


SHARED_ID = ("several people sharing one id (shared or anonymous accounts): the id is the unit, so one of them is"
             " not protected as a person added or removed")


def _group_figures(card: dict, report: dict) -> None:
    """The card's ``group_privacy`` (k units together, at the card's delta, computed from the events: never k x
    epsilon) and, per person, ``replacement`` (one person's documents replaced by another's); and, per person, the
    shared ids the guarantee does not cover."""
    unit, delta = report.get("unit"), card["delta"]
    group = group_privacy(report, delta)
    if group is not None:
        what = "people (or one person filed under k user ids)" if unit == "user" else "documents (a person who wrote k)"
        figures = " and ".join(f"epsilon = {epsilon_text(group[str(k)])} for k = {k}" for k in GROUP_SIZES)
        eps = card["epsilon"]
        textbook = "; ".join(f"k = {k}: delta {_grown_delta(k, eps, delta)}" for k in GROUP_SIZES)
        card["group_privacy"] = {
            "delta": delta, "epsilon": group,
            "note": f"group privacy: k {what} together are protected at {figures}, at the same delta = {delta:g},"
                    f" computed from the releases with k times one {unit}'s sensitivity; more than k x epsilon, as"
                    " delta's share grows with k: kept at k x epsilon, delta grows to k e^((k-1) epsilon) delta"
                    f" ({textbook}; Dwork & Roth 2014, Thm 2.2 and its (epsilon, delta) form)"}
    if unit == "user":
        repl = replacement_epsilon(report, delta)
        if repl is not None:
            card["replacement"] = {
                "delta": delta, "epsilon": repl,
                "note": f"one person's documents replaced by another person's (one removed, one added): epsilon ="
                        f" {epsilon_text(repl)} at the same delta = {delta:g} (the released statistics are sums of"
                        " non-negative contributions, so a replacement moves them by at most sqrt(2))"}
        if "sharing one id" not in card["not_covered"]:
            card["not_covered"] = (card["not_covered"].rstrip(".") + "; " if card["not_covered"] else
                                   "NOT covered: ") + SHARED_ID + "."


def _grown_delta(k: int, eps: float, delta: float) -> str:
    """``k e^((k-1) eps) delta``, the delta of group privacy at ``k x eps``, in words ("no guarantee" from 1 up)."""
    log = math.log(k) + (k - 1) * eps + math.log(delta)
    return "1 or more: no guarantee" if log >= 0 else f"{math.exp(log):.3g}"


def _protects(unit, eps, delta, group=None, replacement=None) -> str | None:
    """What the headline protects, in plain words, for a card whose unit is one document, word or user; None for
    another unit (a composed report names none). ``group``/``replacement``: the card's figures of those names."""
    factor = f"about 10^{eps / math.log(10):.0f}" if eps > 30 else f"{math.exp(eps):.3g}"
    chance = f", except with probability delta = {delta:g}" if delta else ""
    change = (f"changes the chance of anything the model releases by at most a factor e^epsilon = {factor}{chance}:"
              " that bounds what an observer of the model can learn about")
    groups = ("" if not group else " (" + ", ".join(f"epsilon = {epsilon_text(e)} for k = {k}" for k, e in
                                                   group.items()) + " at the same delta: see group_privacy)")
    if unit == "document":
        return (f"one whole document: any single training document, there or not (or replaced: see the neighbouring"
                f" relation), {change} whether it was there or what it says; a person who wrote k of the documents is"
                f" protected only as a group of k documents{groups or ' (group privacy)'}: train with unit='user' to"
                " protect people")
    if unit == "word":
        return (f"one word: any single word of a training document, changed, {change} that word; a whole document of"
                " L words only at L x epsilon (group privacy; see the per-document row)")
    if unit == "user":
        repl = ("" if not replacement else f"; replaced by another person's documents: epsilon ="
                f" {epsilon_text(replacement['epsilon'])} at the same delta")
        return (f"one user: all of any single user's contributions, added or removed, {change} that user's"
                f" documents{repl}; k people (or one person under k user ids) only as a group of k{groups}; several"
                " people sharing one id are not covered")
    return None


def planned_and_spent(report: dict) -> dict | None:
    """The card's "planned and spent": each release of the trainer's plan (``report["plan"]``, the fit's
    :meth:`~dptopic.accounting.plan.ReleasePlan.as_dict`, reserved before its first noise draw) with its mechanism,
    sensitivity and noise, how many times it was planned and how many times the run spent its event (the report's
    ``events``; a baseline's, those of its partial ``count_release_epsilon``), and whether the two agree (``matches``: every planned release spent as often as planned and nothing
    spent that was not planned). None where the report states no plan."""
    plan = report.get("plan")
    if not isinstance(plan, dict) or not isinstance(plan.get("releases"), list):
        return None
    listed = report.get("events")
    if listed is None and isinstance(report.get("count_release_epsilon"), dict):   # a baseline: its releases' figure
        listed = report["count_release_epsilon"].get("events")
    events = [d for d in (listed or []) if isinstance(d, dict)]
    used = [False] * len(events)
    rows, matches = [], True
    planned_by: list = []           # equal mechanisms planned twice (HDP-LDA's fresh last release) are spent as one
    for r in plan["releases"]:
        if not isinstance(r, dict):
            continue
        mech = _mechanism(r.get("event") or {})
        for m in planned_by:
            if _same_mechanism(m[0], mech):
                m[1] += int(r.get("count", 1))
                break
        else:
            planned_by.append([mech, int(r.get("count", 1))])
    spent_by = []
    for mech, _ in planned_by:
        n = 0
        for i, d in enumerate(events):
            if not used[i] and _same_mechanism(_mechanism(d), mech):
                used[i], n = True, n + int(d.get("count", 1))
        spent_by.append(n)
    for r in plan["releases"]:
        if not isinstance(r, dict):
            continue
        mech = _mechanism(r.get("event") or {})
        k = next(i for i, m in enumerate(planned_by) if _same_mechanism(m[0], mech))
        rows.append({"release": r.get("name"), "mechanism": r.get("mechanism"), "sensitivity": r.get("sensitivity"),
                     "noise_scale": r.get("scale"), "noise_multiplier": r.get("noise_multiplier"),
                     "planned": int(r.get("count", 1)), "spent_with_its_mechanism": spent_by[k],
                     "planned_with_its_mechanism": planned_by[k][1]})
        matches = matches and spent_by[k] == planned_by[k][1]
    matches = matches and all(used)
    return {"releases": rows, "planned": sum(m[1] for m in planned_by), "spent": sum(int(d.get("count", 1))
                                                                                    for d in events),
            "matches": bool(matches), "budget": plan.get("budget"), "guarantee": plan.get("guarantee"),
            **({"note": plan["note"]} if plan.get("note") else {})}


def word_selection(report: dict) -> dict | None:
    """How a document-level model chose its words by noisy counts from a longer list: the threshold a noisy count
    had to clear and the bound on the expected number of kept words that occur in no document
    (``DocDPCooccurrence(max_false_words=...)``); None for a report that chose no words this way."""
    params = report.get("parameters") if isinstance(report.get("parameters"), dict) else {}
    threshold = finite_or_none(params.get("word_threshold"))
    if threshold is None:
        return None
    bound = finite_or_none(params.get("expected_false_words"))
    below = params.get("words_below_threshold")
    below = below if isinstance(below, int) and not isinstance(below, bool) and below > 0 else 0
    out = {"threshold": threshold, "expected_false_words_at_most": bound, "kept_below_threshold": below}
    if not below:
        out["note"] = (f"a word was kept only if its noisy count cleared {threshold:.4g}, so that the expected number"
                       f" of kept words that occur in no document is at most {bound:.3g} (post-processing of the noisy"
                       " word counts)")
    else:
        out["note"] = (f"too few words' noisy counts cleared {threshold:.4g}, so {below} kept word(s) stand below it"
                       f" (the most frequent of the rest, by noisy count): the bound of {bound:.3g} on the expected"
                       " number of kept words that occur in no document holds only for the words that cleared it,"
                       f" not for those {below}, which may not occur in the data at all (post-processing of the noisy"
                       " word counts)")
    return out


def partial_reasons(report: dict) -> list:
    """The trainer's own reasons for a partial guarantee, most serious first (the vocabulary's source is added by
    :func:`privacy_card`): for FedLDA's floor and tail rules, the Zipf assumption of the tail rule and the topic
    labels sent in the clear (``docs/fedlda.md``)."""
    params = report.get("parameters") if isinstance(report.get("parameters"), dict) else {}
    rule = params.get("exclusion")
    if "epsilon_per_entry" not in report or rule not in ("floor", "tail"):
        return []
    out = []
    if rule == "tail":
        out.append("the tail rule's bound holds only if the model's word probabilities follow Zipf's law (exponent"
                   " gamma), which is not verified")
    out.append("each entry's topic label is sent in the clear (it depends on the user's text)")
    if params.get("replacement") == "mixture":
        out.append("replacement='mixture' draws replacement words from the user's own topic mixture")
    return out


def fed_composition(report: dict) -> str | None:
    """FedLDA's arithmetic from per-entry to per-user epsilon, in one line: epsilon per entry x entries per user
    (once for the 'none' rule, whose reports are reused in every round; again every round for floor and tail), the
    words in each report and the words the reports range over; None for another trainer's report."""
    params = report.get("parameters") if isinstance(report.get("parameters"), dict) else {}
    e = finite_or_none(report.get("epsilon_per_entry"))
    m, rounds = params.get("entries_per_round"), params.get("rounds")
    if e is None or not isinstance(m, int) or not isinstance(rounds, int):
        return None

    rule = params.get("exclusion")
    if rule == "none":
        line = (f"epsilon {epsilon_text(e)} per entry x {m} entries per user = {epsilon_text(e * m)} per user (basic"
                f" composition, an upper bound: the headline's tighter figure is what the model claims), paid once"
                f" whatever the {rounds} rounds: the reports are randomized once and reused")
    else:
        line = (f"epsilon {epsilon_text(e)} per entry x {m} entries per round x {rounds} rounds ="
                f" {epsilon_text(e * m * rounds)} per user (basic composition"
                + (f", with each entry's own delta adding up over the {m * rounds} entries" if rule == "tail" else "")
                + f"): the {rule} rule randomizes again every round")
    if claims_no_guarantee(report):     # the arithmetic of the events, not a guarantee: say so first
        line = "NO (epsilon, delta) guarantee holds; the events' arithmetic only: " + line
    size, n, vocab = params.get("words_per_report"), params.get("report_words"), params.get("vocab_size")
    if isinstance(size, int):
        line += f"; {size} word{'s' if size != 1 else ''} per report"
    if isinstance(n, int):
        line += f"; reports range over the vocabulary's first {n}" + (f" of {vocab}" if isinstance(vocab, int) else "") \
                + " words (report_words)"
    return line


SEED_WARNING = ("an explicit seed was given: the noise is reproducible from it, so the guarantee holds only while the"
                " seed stays secret")


def _figures(report: dict) -> dict:
    """Every composition figure the report carries, each with the delta it holds at (None where it has none of its
    own: its ``what`` says what it means) and what it is."""
    figures = {}
    topic = report.get("topic_model")
    composed = isinstance(report.get("vocabulary_selection"), dict) and isinstance(topic, dict)
    for key, what, at in _FIGURES:
        if key not in report:
            continue
        if key == "epsilon_nominal" and "epsilon_per_entry" in report:   # FedLDA: the budget per entry
            params = report.get("parameters") if isinstance(report.get("parameters"), dict) else {}
            if params.get("exclusion") == "none":   # this library's rule: a report holds a subset of words
                what = ("epsilon per reported entry (one randomized report of"
                        f" {params.get('words_per_report', 'one or more')} word(s) by subset selection; this library's"
                        " rule, not the poster's), not per user: the headline composes a user's entries")
            else:
                what = ("the poster's budget per reported entry (one word), not per user: the headline composes a"
                        " user's entries")
        delta = {"report": finite_or_none(report.get("delta")), "basic": finite_or_none(report.get("delta_basic")) or 0.0,
                 "pure": 0.0}.get(at)
        if composed and key in _ADDED_FIGURES:      # Theorem 4.1's addition, not a composition of the events
            what = _ADDED_FIGURES[key]
        if composed and key not in _COMPOSED_FIGURES:
            # a trainer's own figure kept by the composition (accounting.set_union.fdptm_report): the topic model
            # alone, at its own delta, without the vocabulary selection's epsilon_V
            what += "; the topic model ALONE, without the private vocabulary's epsilon_V"
            delta = finite_or_none(topic.get("delta")) if at == "report" else delta
        figures[key] = {"epsilon": finite_or_none(report[key]), "delta": delta, "what": what}
    word, word_m = finite_or_none(report.get("epsilon_word")), finite_or_none(report.get("epsilon_word_contributor"))
    if word_m is not None and word_m != word:    # local DP: the word-level figure of all of a contributor's reports
        figures["epsilon_word_contributor"] = {
            "epsilon": word_m, "delta": 0.0,
            "what": "per contributor, word level: "
                    + str(report.get("epsilon_word_contributor_relation") or "one word in each of the reports")}
    if word is not None:    # local DP: one presence bit of one report, randomized response (pure)
        figures["epsilon_word"] = {"epsilon": word, "delta": 0.0,
                                   "what": "per report and vocabulary word (randomized response on one presence bit"
                                           " of one report): "
                                           + str(report.get("epsilon_word_relation") or "word-level local DP")}
    doc = finite_or_none(report.get("epsilon_doc"))
    if doc is not None and report.get("model") == "local":  # local DP: one report of one document (pure)
        how = report.get("mechanism") or ("randomized response on all its V presence bits: V x epsilon_word"
                                          if word is not None else None)
        figures["epsilon_doc"] = {"epsilon": doc, "delta": 0.0,
                                  "what": "per report, document level: the report of one document"
                                          + (f" ({how})" if how else "") + "; "
                                          + str(report.get("epsilon_doc_relation")
                                                or "any two documents (local DP: every input pair)")}
    part = report.get("count_release_epsilon")
    if isinstance(part, dict):      # CDP-LDA(+): the corrected figure for the count releases alone
        pure = "pure" in str(part.get("epsilon_method", ""))
        figures["count_release_epsilon"] = {
            "epsilon": finite_or_none(part.get("epsilon")), "delta": 0.0 if pure else finite_or_none(part.get("delta")),
            "what": str(part.get("label") or "partial figure: the count releases only, NOT the model")
                    + f" ({part.get('epsilon_method', 'as reported')}, L1 sensitivity corrected)"}
    return figures
