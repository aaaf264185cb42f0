"""Recompute a saved privacy report from its own events.

A privacy report lists every event its run spent, each with the parameters of its mechanism (the Laplace scale
and the cells a neighbour changes, the Gaussian noise multiplier and sampling rate, the flip probability, the
epsilon a theorem gives) and how many times it was spent. :func:`verify_report` rebuilds each event from that
description, composes them again with the same accountants (basic composition, PLD, RDP) at the report's delta,
names the guarantee again, and compares: a report whose claimed epsilon is below what its own events support
fails. It reads the report and nothing else, so a reviewer can run it on a model folder they were handed.
:func:`check_run` then compares the events with what the trainer's parameters plan (:class:`RunPlan`).

What it does not check: that the noise was really drawn at the
scale the events describe is the code's job, tested in ``tests/``), and figures that are not compositions of the
events (a paper's own accounting, the moments accountant's, FedLDA's nominal claim): those stay cross-checks.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal

from ..errors import DPTopicError

RTOL = 1e-4
"""Relative tolerance of the comparison on the safe side: a stated figure (an epsilon or a delta, both upper bounds)
at most this much *above* what its events give agrees with them; above by more, the report is ``looser``. Below is
another matter: see :data:`BELOW_RTOL`."""

BELOW_RTOL = 1e-9
"""How far (relatively) a stated figure may lie *below* what its events give and still agree: floating-point noise
only. The figures are recomputed with the same code and grid, so an honest report agrees far closer than this; a
claim below its events by more is stronger than they support and fails, however small the gap (a tolerance of
:data:`RTOL` both ways let a report state an epsilon 1e-4 below its own events and pass as verified)."""

COMPARED = ("epsilon_basic", "delta_basic", "epsilon_pld", "epsilon_rdp", "epsilon_pld_tight", "epsilon")
TOPIC_MODEL_FIGURES = ("epsilon_basic", "epsilon_pld", "epsilon_rdp", "delta")
"""The topic model's own figures that a report with a private vocabulary keeps (``topic_model``)."""


ROUNDING_RTOL = 1e-12
"""A figure within this relative distance below (``down``: above) a value at ``digits`` significant digits is shown
as that value: floating-point noise (0.1 * 3 = 0.30000000000000004) is no excess over it. The accountants compute to
far coarser precision (their PLD grids), so the figure shown stays an upper (lower) bound at their precision."""


def rounded_up(x: float, digits: int, down: bool = False) -> float:
    """``x`` rounded up at ``digits`` significant digits: an epsilon or delta shown is never below the one computed
    (``down``: rounded down instead, for a lower bound such as an audit's). An excess within a relative
    :data:`ROUNDING_RTOL` is floating-point noise, not rounded up (0.30000000000000004 is shown as 0.3, not
    0.300001)."""
    d = Decimal(repr(float(x)))
    if not d.is_finite():
        return float(x)
    slack = abs(d) * Decimal(repr(ROUNDING_RTOL))
    return float(Context(prec=digits, rounding=ROUND_FLOOR if down else ROUND_CEILING).plus(
        d + slack if down else d - slack))


class NotRecomputable(DPTopicError):
    """A report in an earlier format that does not carry what a figure would be recomputed from."""


class Damaged(DPTopicError):
    """The report's events or delta are missing or malformed: every report the library writes lists them whole."""




def fmt_epsilon(x, digits: int = 4) -> str:
    """An epsilon as the service and its participants show it: rounded *up* at ``digits`` significant digits, so that
    the figure a contributor reads is never below the guarantee computed (round-to-nearest showed eps_word = 1.23444
    as 1.234); floating-point noise above a round value is not rounded up (:func:`rounded_up`)."""
    if x is None:
        return "-"
    return f"{rounded_up(float(x), digits):.{digits}g}"


def _num(d: dict, key: str, what: str) -> float:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise Damaged(f"{what}: its {key!r} is missing or not a finite number")
    return float(v)


def event_from_description(d: dict):
    """The event a report's ``events`` entry describes (``count`` aside); its own ``epsilon`` must agree."""
    from .events import (  # loads numpy: rounded_up, which printing uses everywhere, needs none  # loads numpy (as above)
        ApproxDPEvent,
        LaplaceEvent,
        PureDPEvent,
        RandomizedResponseEvent,
        SubsampledGaussianEvent,
    )

    if not isinstance(d, dict):
        raise Damaged(f"an event must be an object, got {type(d).__name__}")
    kind = d.get("type")
    what = f"event {d.get('label', kind)!r}"
    common = {k: d[k] for k in ("label", "relation") if isinstance(d.get(k), str)}
    if kind in ("laplace", "discrete_laplace"):
        changes = d.get("changes")
        if not isinstance(changes, list) or not changes:
            raise NotRecomputable(f"{what}: saved before the changed cells of a Laplace release were recorded (only"
                                  " their sum is), so its PLD cannot be rebuilt exactly")
        ev = LaplaceEvent(scale=_num(d, "scale", what), changes=tuple(changes), discrete=kind == "discrete_laplace",
                          **common)
    elif kind == "pure_dp":
        ev = PureDPEvent(_num(d, "epsilon", what), theorem=str(d.get("theorem", "")), **common)
    elif kind == "approximate_dp":
        ev = ApproxDPEvent(_num(d, "epsilon", what), _num(d, "delta", what), theorem=str(d.get("theorem", "")),
                           unit=str(d.get("unit", "word")), **common)
    elif kind == "poisson_subsampled_gaussian":
        ev = SubsampledGaussianEvent(_num(d, "noise_multiplier", what), _num(d, "sampling_rate", what), **common)
    elif kind == "random_stopping":         # a private hyper-parameter search (accounting.tuning)
        from .tuning import event_from  # loads numpy: rounded_up, which printing uses everywhere, needs none

        return event_from(d, event_from_description)
    elif kind == "randomized_response":
        n_bits = d.get("n_bits")
        if isinstance(n_bits, bool) or not isinstance(n_bits, int) or n_bits < 1:
            raise Damaged(f"{what}: its 'n_bits' must be a whole number >= 1")
        ev = RandomizedResponseEvent(_num(d, "f", what), n_bits, **common)
    elif kind == "skellam":
        from .skellam import SkellamRelease  # loads numpy: rounded_up, which printing uses everywhere, needs none

        dim = d.get("dim")
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise Damaged(f"{what}: its 'dim' must be a whole number >= 1")
        ev = SkellamRelease(_num(d, "mu", what), _num(d, "scale", what), dim, **common)
    else:
        raise Damaged(f"{what}: unknown event type {kind!r}")
    stated = d.get("epsilon")
    if isinstance(stated, (int, float)) and not isinstance(stated, bool) and math.isfinite(stated) \
            and math.isfinite(ev.epsilon) and not math.isclose(stated, ev.epsilon, rel_tol=RTOL, abs_tol=1e-12):
        raise Damaged(f"{what} states epsilon {stated:.6g}, but its own parameters give {ev.epsilon:.6g}")
    return ev


def _count(d: dict, what: str) -> int:
    n = d.get("count")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise Damaged(f"{what}: its 'count' must be a whole number >= 1")
    return n


def _discretization(rep: dict) -> float | None:
    """The PLD grid the report was computed on: its own field, or (reports saved before it) the step its
    accounting text names; None to let the ledger choose, as it did."""
    step = rep.get("pld_discretization")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and 0 < step <= 1:
        return float(step)
    acc = rep.get("accounting")
    m = re.search(r"discretisation ([0-9.eE+-]+)", str(acc.get("pld", "")) if isinstance(acc, dict) else "")
    try:
        return float(m.group(1)) if m else None
    except ValueError:
        return None


def _ledger_report(rep: dict, events: list, delta: float) -> dict:
    from .ledger import PrivacyLedger  # loads numpy: rounded_up, which printing uses everywhere, needs none

    groups = []
    for i, d in enumerate(events):
        what = f"event {i + 1}"
        groups.append((event_from_description(d), _count(d, what)))
    step = _discretization(rep)
    if step is not None:    # a very long composition was put on a grid coarser than 1; the ledger coarsens it again
        step = min(step, 1.0)
    ledger = PrivacyLedger(unit=str(rep.get("unit", "")), relation=str(rep.get("neighbouring_relation", "")),
                           theorem=str(rep.get("theorem", "")), **({"discretization": step} if step else {}))
    for ev, n in groups:
        ledger.spend(ev, n)
    return ledger, ledger.report(delta)


def recompute_report(rep: dict) -> dict:
    """The report's composition figures (``epsilon_basic``, ``delta_basic``, ``epsilon_pld``, ``epsilon_rdp``,
    ``epsilon_pld_tight`` and the guarantee ``epsilon``/``delta``) recomputed from its events alone.

    Raises :class:`NotRecomputable` when the report lacks what they would be rebuilt from."""
    if not isinstance(rep, dict) or rep.get("private") is not True:
        raise DPTopicError("the report claims no privacy guarantee, so there is nothing to recompute")
    events = rep.get("events")
    if not isinstance(events, list) or not events:
        raise Damaged("the report lists no events")
    vocab = rep.get("vocabulary_selection")
    topic = rep.get("topic_model")
    if isinstance(vocab, dict) and isinstance(topic, dict):   # FDPTM: DP set union composed with a trainer
        from .set_union import fdptm_report  # loads numpy: rounded_up, which printing uses everywhere, needs none

        d_t = _num(topic, "delta", "the topic model's report")
        trainer_rep = dict(rep)
        for k in ("vocabulary_selection", "topic_model", "epsilon_pld_tight", "delta_requested"):
            trainer_rep.pop(k, None)
        ledger, trainer = _ledger_report(trainer_rep, events, d_t)   # the topic model's own figures, at its delta
        from .ledger import claims_no_guarantee  # loads numpy: rounded_up, which printing uses everywhere, needs none

        none = claims_no_guarantee(trainer)     # the trainer's events give no (epsilon, delta): neither does the whole
        trainer = dict({k: v for k, v in trainer_rep.items() if k not in COMPARED},
                       **{k: v for k, v in trainer.items() if k in COMPARED and v is not None},
                       **({"epsilon": None, "epsilon_method": trainer["epsilon_method"]} if none else {}))
        trainer["delta"] = d_t
        out = fdptm_report(event_from_description(vocab), trainer, ledger)
        out = dict(out, **{f"topic_model.{k}": trainer.get(k) for k in TOPIC_MODEL_FIGURES})
    else:
        delta = rep.get("delta_requested", rep.get("delta"))
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
            raise Damaged("the report's delta is missing or not in (0, 1)")
        _, out = _ledger_report(rep, events, float(delta))
    return {k: v for k, v in out.items() if k in COMPARED + ("delta", "epsilon_method") or k.startswith("topic_model.")}


@dataclass
class Verification:
    """The outcome of :func:`verify_report`.

    ``status``: ``"verified"`` (every figure the report states agrees with its events), ``"looser"`` (the claim is
    above what its events support: valid, not tight), ``"failed"`` (the claim, or a figure, is below what its events
    support, or an event's own epsilon disagrees with its parameters), ``"not_recomputable"`` (the report lacks what
    the figures would be rebuilt from) or ``"no_claim"`` (the report claims no guarantee)."""

    status: str
    detail: str
    figures: dict = field(default_factory=dict)   # key -> {"stated": x, "recomputed": y, "verdict": ...}

    @property
    def ok(self) -> bool:
        return self.status in ("verified", "looser", "no_claim")

    def to_dict(self) -> dict:
        return {"status": self.status, "detail": self.detail, "figures": self.figures}


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-12)


def _below(stated, again) -> bool:
    """Whether a stated upper bound lies below what the events give by more than floating-point noise
    (:data:`BELOW_RTOL`): a claim stronger than the events support."""
    if stated is None or again is None or math.isinf(stated) or math.isinf(again):
        return stated is not None and again is not None and stated < again
    return stated < again and not math.isclose(stated, again, rel_tol=BELOW_RTOL, abs_tol=1e-300)


def _agrees(stated, again) -> bool:
    """Within :data:`RTOL` above, or within :data:`BELOW_RTOL` below, what the events give."""
    return _close(stated, again) and not _below(stated, again)


def _as_float(x):
    """A figure as a number: saved reports write infinity as the string ``"inf"``; anything else that is not a
    number (an edited or damaged field) is None, i.e. not stated."""
    if isinstance(x, str) and x.strip().lower() in ("inf", "infinity"):
        return math.inf
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != x:
        return None
    return float(x)


def _stated(rep: dict) -> dict:
    """The figures a report states, by the keys :func:`recompute_report` returns. A report saved before the
    guarantee was named in one field (``epsilon``) gets it as ``dptopic.load`` names it."""
    out = {k: rep[k] for k in COMPARED if k in rep}
    if "epsilon" not in rep:
        from .ledger import name_guarantee  # loads numpy: rounded_up, which printing uses everywhere, needs none

        named = name_guarantee(dict(rep))
        if "epsilon" in named:
            out["epsilon"] = named["epsilon"]
    topic = rep.get("topic_model")
    if isinstance(topic, dict) and isinstance(rep.get("vocabulary_selection"), dict):
        out.update({f"topic_model.{k}": topic[k] for k in TOPIC_MODEL_FIGURES if k in topic})
    return out


def _sentence(e: Exception) -> str:
    return str(e).rstrip(". ")


def verify_report(rep: dict) -> Verification:
    """Recompute a privacy report's figures from its events and compare them with what it states."""
    from .ledger import claims_no_guarantee  # loads numpy: rounded_up, which printing uses everywhere, needs none

    if not isinstance(rep, dict) or rep.get("private") is False or "private" not in rep:
        return Verification("no_claim", "the report claims no differential privacy guarantee: nothing to verify")
    if rep.get("private") is not True:
        return Verification("failed", f"its 'private' is {rep.get('private')!r}, not true or false")
    try:
        new = recompute_report(rep)
    except NotRecomputable as e:
        return Verification("not_recomputable", _sentence(e))
    except Damaged as e:
        return Verification("failed", _sentence(e))
    except DPTopicError as e:   # an event whose parameters no mechanism or accountant accepts
        return Verification("failed", f"its events cannot be composed as described: {_sentence(e)}")
    stated_figures = _stated(rep)
    figures, below, above = {}, [], []
    for key, raw in stated_figures.items():
        stated, again = _as_float(raw), _as_float(new.get(key))
        figures[key] = {"stated": stated, "recomputed": again, "verdict": "agrees"}
        if _agrees(stated, again):
            continue
        if stated is None:          # not stated (or unreadable): the report claims less, never more
            above.append(f"{key} not stated as a number (events: {again if again is None else f'{again:.6g}'})")
        elif again is None:         # a figure the events do not give at all
            below.append(f"{key} is stated as {stated:.6g} but its events give none")
        elif stated < again:
            below.append(f"{key} is stated as {stated:.6g} but its events give {again:.6g}")
        else:
            above.append(f"{key} {stated:.6g} (events: {again:.6g})")
        figures[key]["verdict"] = "looser" if stated is None or (again is not None and stated > again) else "BELOW"
    claim = _as_float(stated_figures.get("epsilon"))
    if claim is None and not claims_no_guarantee(rep):
        below.append("it says private but states no epsilon (and does not say that none follows from its events)")
    d_stated, d_again = _as_float(rep.get("delta")), _as_float(new.get("delta"))
    figures["delta"] = {"stated": d_stated, "recomputed": d_again, "verdict": "agrees"}
    if claim is not None and not _agrees(d_stated, d_again) and (d_stated is None or d_again is None
                                                                or d_stated < d_again):
        # an epsilon at a smaller delta than its events give is a stronger claim than they support
        below.append(f"the guarantee's delta is stated as {rep.get('delta')!r} but its events give {d_again!r}")
        figures["delta"]["verdict"] = "BELOW"
    elif not _agrees(d_stated, d_again):
        above.append(f"delta {rep.get('delta')!r} (events: {d_again!r})")
        figures["delta"]["verdict"] = "looser"
    if below:
        return Verification("failed", "; ".join(below), figures)
    n = sum(1 for k in figures if k != "delta")
    if above:
        return Verification("looser", "valid but looser than its events support: " + "; ".join(above), figures)
    eps = figures.get("epsilon", {}).get("recomputed")
    return Verification("verified", f"{n} figures recomputed from the report's {len(rep['events'])} event"
                                    f"{'s' if len(rep['events']) != 1 else ''}"
                                    + (f" agree (epsilon = {rounded_up(eps, 6):.6g})" if eps is not None else
                                       " agree (no (epsilon, delta) guarantee follows from them)"), figures)


def check_saved_card(card: dict | None, check: Verification) -> Verification:
    """``check`` with the privacy card saved beside the report (``model.json``'s ``privacy_card``) compared too: the
    card must not state a smaller epsilon than the events give. (The command line and ``dptopic report`` build their
    card afresh from the report; a reader of the file sees the saved one.)"""
    if not isinstance(card, dict) or check.status not in ("verified", "looser"):
        return check
    stated, again = _as_float(card.get("epsilon")), check.figures.get("epsilon", {}).get("recomputed")
    below = _below(stated, again)
    check.figures["privacy_card.epsilon"] = {"stated": stated, "recomputed": again,
                                             "verdict": "BELOW" if below else "agrees"}
    if below:
        return Verification("failed", f"the privacy card saved in model.json states epsilon {stated:.6g} but the"
                                      f" events give {again:.6g}", check.figures)
    return check


@dataclass
class RunPlan:
    """What a trainer's parameters make one fit spend, to check a saved report's events against
    (:func:`check_run`): ``events``, the ``(event, count)`` pairs its ledger reserves before the fit, and
    ``budget``, the ``(epsilon, delta)`` its noise was calibrated to. Either may be None where the parameters alone
    do not fix it (a noisy word count that chose how many words to release, reports randomized by contributors).
    ``unit`` and ``relation``: what its ledger protects (one word, document or user, and the neighbouring
    relation), which the report must name as they are: a figure is only as good as the unit it is stated for."""

    events: list | None = None
    budget: tuple | None = None
    unit: str | None = None
    relation: str | None = None


_NOT_MECHANISM = ("label", "relation", "theorem", "count", "dp_accounting_event", "pld_discretization", "unit")
"""Fields of an event's description that name or explain it; the rest are its mechanism's parameters."""


def _mechanism(desc: dict) -> dict:
    return {k: v for k, v in desc.items() if k not in _NOT_MECHANISM}


def _same_mechanism(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for k, x in a.items():
        y = b[k]
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            if len(x) != len(y) or not all(_close(_as_float(p), _as_float(q)) for p, q in zip(x, y)):
                return False
        elif _as_float(x) is not None or _as_float(y) is not None:
            if not _close(_as_float(x), _as_float(y)):
                return False
        elif x != y:
            return False
    return True


def _event_name(desc: dict) -> str:
    return str(desc.get("label") or desc.get("type"))


def _unit_problems(plan: RunPlan, rep: dict, who: str) -> list:
    """The report's unit and neighbouring relation against those ``who``'s ledger names; with a private vocabulary
    (:func:`~dptopic.accounting.set_union.fdptm_report`) the topic model's part must be the trainer's."""
    problems = []
    vocab, topic = rep.get("vocabulary_selection"), rep.get("topic_model")
    composed = isinstance(vocab, dict) and isinstance(topic, dict)
    if plan.unit is not None:
        unit = rep.get("unit")
        if composed:
            v_unit = vocab.get("unit")
            want = plan.unit if v_unit == plan.unit else f"{v_unit} (vocabulary) + {plan.unit} (topic model)"
            ok = topic.get("unit") == plan.unit and unit == want
        else:
            want, ok = plan.unit, unit == plan.unit
        if not ok:
            problems.append(f"its report names the unit {str(unit)[:60]!r}, but {who} protects one {want}")
    if plan.relation is not None:
        relation = rep.get("neighbouring_relation")
        want = (f"vocabulary: {vocab.get('relation')}; topic model: {plan.relation}" if composed else plan.relation)
        if relation != want:
            problems.append(f"its report names the neighbouring relation {str(relation)[:60]!r}, but {who}'s is"
                            f" {want!r}")
    return problems


BUDGET_RTOL = BELOW_RTOL
"""How far (relatively) a trainer's recomputed epsilon or delta may lie *above* the budget its noise was calibrated to
and still be within it (:func:`check_run`): floating-point noise only. Every calibrator returns the noise whose
figure is at most the budget, so an honest run is within it to the last digits; a report above by more (an edit
that lowered its noise by less than :data:`RTOL`, say) spends more than it was asked to, and fails."""


def _above_budget(x, budget: float) -> bool:
    return x is not None and x > budget and not math.isclose(x, budget, rel_tol=BUDGET_RTOL, abs_tol=0.0)


def _apart(x: float, ref: float, digits: int = 6) -> str:
    """``x`` with enough significant digits (up to 17) to show that it is not ``ref``."""
    while digits < 17 and f"{x:.{digits}g}" == f"{ref:.{digits}g}":
        digits += 1
    return f"{x:.{digits}g}"


def check_run(check: Verification, plan: RunPlan | None, rep: dict, who: str = "the trainer") -> Verification:
    """``check`` with the report's events compared with what ``who``'s parameters make a fit spend (``plan``).

    The recomputation of :func:`verify_report` shows that the claim follows from the events the report lists; this
    shows that those events are the ones its trainer's parameters plan: every planned event listed with its planned
    count (a report that lists fewer releases, or less noise, than its iterations and noise parameters imply
    fails), nothing listed that was not planned, and a guarantee within the budget the noise was calibrated to.
    A report whose trainer's parameters do not fix its events (``plan`` None) is left as it is."""
    if plan is None or check.status not in ("verified", "looser"):
        return check
    problems = _unit_problems(plan, rep, who)
    events = rep.get("events") or []
    if plan.events is not None:
        merged: list[list] = []                         # equal events planned twice (a last release) add up
        for ev, n in plan.events:
            desc = ev.describe()
            for m in merged:
                if _same_mechanism(m[0], _mechanism(desc)):
                    m[1] += int(n)
                    break
            else:
                merged.append([_mechanism(desc), int(n), _event_name(desc)])
        listed = [[_mechanism(d), int(d.get("count", 1)), _event_name(d), False] for d in events]
        for mech, n, name in merged:
            got = 0
            for row in listed:
                if not row[3] and _same_mechanism(row[0], mech):
                    got, row[3] = got + row[1], True
            if got != n:
                problems.append(f"{who}'s parameters plan {n} × {name!r}, its events list {got}"
                                + ("" if got else " with these parameters"))
        problems += [f"its events list {row[1]} × {row[2]!r}, which {who}'s parameters do not plan"
                     for row in listed if not row[3]]
        check.figures["events (as planned)"] = {
            "stated": float(sum(r[1] for r in listed)), "recomputed": float(sum(m[1] for m in merged)),
            "verdict": "agrees" if not problems else "differs"}
    if plan.budget is not None:
        eps_b, delta_b = (float(x) for x in plan.budget)
        fig = {k: f.get("recomputed") for k, f in check.figures.items()}
        if isinstance(rep.get("vocabulary_selection"), dict) and isinstance(rep.get("topic_model"), dict):
            # a private vocabulary was paid for beside the budget: the trainer's own figures stay within it
            tight = [fig.get(f"topic_model.{k}") for k in ("epsilon_pld", "epsilon_rdp")]
            tight = [x for x in tight if x is not None]
            eps, delta = (min(tight) if tight else None), fig.get("topic_model.delta")
        else:
            eps, delta = fig.get("epsilon"), fig.get("delta")
        # a trainer asked for (epsilon, delta) never spends more: its calibrators return the noise on the safe side
        # of their search, so above the budget only floating-point noise (BUDGET_RTOL) is let pass
        over, over_d = _above_budget(eps, eps_b), _above_budget(delta, delta_b)
        check.figures["budget epsilon (requested)"] = {"stated": eps_b, "recomputed": eps,
                                                       "verdict": "exceeds" if over else "agrees"}
        if over:
            problems.append(f"{who} was asked for epsilon {eps_b:.6g} but its events give {_apart(eps, eps_b)}")
        if over_d:
            problems.append(f"{who} was asked for delta {delta_b:.3g} but its events give {_apart(delta, delta_b, 3)}")
    if problems:
        return Verification("failed", "its events do not match the run its parameters describe: "
                            + "; ".join(problems), check.figures)
    return Verification(check.status, check.detail + (f", and match what {who}'s parameters plan"
                                                      if check.status == "verified" else ""), check.figures)
