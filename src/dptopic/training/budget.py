"""Ask before you spend: what a training run, or a private search, would add to the ledger's totals.

:func:`plan_budget` builds the trainer from public settings alone (its name or privacy unit, epsilon, delta and its
own parameters), reads its release plan (the events its fit reserves before its first noise), and asks the ledger
what that release would do to every total it touches if it read every document of a recorded dataset
(:meth:`~dptopic.dataset_ledger.ledger.DatasetLedger.plan`): no document is read and nothing is written.
``dptopic budget plan`` prints it.
"""
from __future__ import annotations

import os
import tempfile

from ..accounting.events import ApproxDPEvent, PureDPEvent
from ..dataset_ledger.ledger import DatasetLedger
from ..dataset_ledger.location import ledger_path
from ..dataset_ledger.store import is_url
from ..errors import DPTopicError, ParameterError
from .build import build_model, resolve_algorithm


def release_groups(model, n_words: int | None = None) -> tuple[list, str, str]:
    """``(groups, unit, how)``: the events a fit of ``model`` reserves, from its release plan (public settings), or
    its claimed ``(epsilon, delta)`` as one step for a trainer that plans only once it has read its words."""
    planner = getattr(model, "release_plan", None)
    if planner is not None:
        try:
            plan = planner(n_words)
        except DPTopicError:
            plan = None
        if plan is not None and plan.guarantee:
            return plan.groups(), plan.unit, "the trainer's release plan (public settings)"
    eps = getattr(model, "epsilon", None)
    delta = getattr(model, "delta", None) or 0.0
    unit = getattr(model, "unit", None) or "document"
    if eps is None:
        raise DPTopicError(f"{type(model).__name__} claims no guarantee before its fit: nothing to plan.")
    ev = PureDPEvent(float(eps), label="the trainer's claimed epsilon") if not delta else \
        ApproxDPEvent(float(eps), float(delta), label="the trainer's claimed (epsilon, delta)", unit=unit)
    return [(ev, 1)], unit, "the trainer's claimed (epsilon, delta) as one step (it plans once it has its words)"


def plan_budget(dataset: str | None = None, *, algorithm: str | None = None, unit: str | None = None, epsilon=None,
                delta=None, model=None, ledger=None, search_runs: float | None = None, n_words: int | None = None,
                corpus=None, **params) -> dict:
    """What a run would add to the ledger, reading no document and spending nothing.

    Parameters
    ----------
    dataset : str, a dataset the ledger recorded (``dptopic budget show`` lists them): the run is planned on every
        one of its documents. With ``corpus``: the name the run would be recorded under (default: its content).
    corpus : a Corpus (read with ``user_field=`` for people) the ledger may not have seen: its documents are known as
        a training run would record them (their digests and sketches, their people linked by the ledger's rules),
        inside a transaction rolled back afterwards: nothing is written, nothing spent.
    algorithm, unit, epsilon, delta, **params : the trainer, as :func:`dptopic.train` takes them; or ``model``, an
        unfitted estimator.
    ledger : the ledger (a path or ``postgresql://`` URL); None: ``DPTOPIC_LEDGER``, else the default file.
    search_runs : a private search instead of one run: ``RandomStoppingSearch`` with a geometric number of runs of
        this mean (Papernot & Steinke 2022), each a fit of this trainer; a mean in
        :data:`~dptopic.accounting.tuning.EXPECTED_RUNS_RANGE`, (1, 10^6], as the search takes it.
    n_words : the words the trainer would keep, where its plan depends on them (a public figure).

    Returns
    -------
    dict : ``epsilon``/``delta`` of the release itself; ``caps``: per total it touches (its dataset's, the datasets
        sharing its documents, the person cap) the total now and after, the cap and what would remain; ``refused``.
    """
    if search_runs is not None:     # a mean no search can have: refused before the trainer is built
        from ..accounting.tuning import check_expected_runs  # the search's rule: only a planned search needs it

        check_expected_runs(search_runs, "search_runs")
    if model is None:
        name = resolve_algorithm(algorithm, unit)
        model = build_model(name, unit=unit, epsilon=epsilon, delta=delta, **params)
    elif algorithm is not None or unit is not None:
        raise ParameterError("give {model} or {algorithm}/{unit}, not both.", "model", others=("algorithm", "unit"))
    groups, run_unit, how = release_groups(model, n_words)
    d = float(getattr(model, "delta", None) or delta or 1e-5)
    trainer = type(model).__name__
    if search_runs is not None:
        groups, trainer, how = _as_search(groups, trainer, how, search_runs)
    if corpus is not None:
        return _plan_corpus(corpus, dataset, ledger, trainer, run_unit, groups, d, how)
    elif dataset is None:
        raise ParameterError("give {dataset} (a recorded dataset) or {corpus} (documents to plan on).", "dataset",
                             others=("corpus",))
    else:
        led = DatasetLedger(ledger_path(ledger, must_exist=True), read_only=True)
        out = led.plan(dataset, trainer, run_unit, groups, d)
    out.update(how=how, ledger=led.where)
    return out


def _as_search(groups, trainer: str, how: str, search_runs: float):
    """A planned release's events as a private search's: ``RandomStoppingSearch`` with a geometric number of runs of
    mean ``search_runs``, each the release ``groups``; ``(groups, trainer, how)`` of the search."""
    from ..accounting.tuning import (  # the search's accountant: only a planned search needs it
        RandomStoppingEvent,
        geometric_gamma,
    )

    # the geometric number of runs dptopic search draws for --expected-runs, the mean checked by the same rule
    event = RandomStoppingEvent((tuple(groups),), "truncated_negative_binomial", 1.0,
                                geometric_gamma(search_runs, "search_runs"), 0.0)
    groups, trainer = [(event, 1)], f"RandomStoppingSearch({trainer})"
    how += f"; a search of {float(search_runs):g} runs on average (RDP, Papernot & Steinke 2022)"
    return groups, trainer, how


def _plan_corpus(corpus, dataset, ledger, trainer: str, run_unit: str, groups, d: float, how: str) -> dict:
    """:func:`plan_budget` of a corpus the ledger may not have seen (its documents resolved and linked in a rolled-back
    transaction), on an empty ledger when none exists yet (none is created)."""
    from ..corpus.ledger_documents import documents_of  # the corpus's keys: only a plan of a corpus reads them

    docs = documents_of(corpus)
    if docs is None:
        raise ParameterError("{corpus} has no document the ledger could know: give a Corpus.", "corpus")
    where = ledger_path(ledger)
    if is_url(where) or os.path.lexists(where):
        out = DatasetLedger(where).plan_documents(docs, dataset, trainer, run_unit, groups, d)
        out.update(how=how, ledger=str(where))
        return out
    with tempfile.TemporaryDirectory() as tmp:     # no ledger yet: planned on an empty one, none created
        out = DatasetLedger(os.path.join(tmp, "empty.sqlite")).plan_documents(docs, dataset, trainer, run_unit,
                                                                            groups, d)
    out.update(how=how, ledger=f"{where} (not created yet: the plan reads an empty ledger)")
    return out
