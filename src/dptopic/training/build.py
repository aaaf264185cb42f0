"""The estimator a training run fits, built from an algorithm's name (or a privacy unit) and its parameters.

One rule for ``dptopic.train`` and ``dptopic train``: the command line maps its flags to these parameters and calls
the same function, so that both front doors build the same model from the same settings.
"""
from __future__ import annotations

import inspect

from .._validation import plain_number
from ..errors import DPTopicError, ParameterError
from ..models.registry import TRAINERS, trainer, unit_algorithm_error
from .by_unit import UNIT_TRAINERS, for_unit

DOCUMENT_LEVEL = tuple(name for name, t in TRAINERS.items() if {"document", "user"} <= set(t.units))
"""The trainers that bound a whole document, or with ``unit="user"`` a person (both units in the registry)."""


def resolve_algorithm(algorithm: str | None, unit: str | None) -> str:
    """The trainer a run fits: ``algorithm``, or the one ``unit`` picks (:func:`dptopic.for_unit`'s); with neither,
    non-private ``lda`` (names: :data:`dptopic.models.registry.TRAINERS`). Under ``unit="user"`` ``algorithm`` may
    name a trainer that bounds a person (:data:`DOCUMENT_LEVEL`); with another unit it must be left out."""
    if unit is None:
        name = algorithm or "lda"
    elif unit not in UNIT_TRAINERS:
        raise DPTopicError(f"invalid unit {unit!r}: give 'document', 'user' or 'word'.")
    elif algorithm in (None, UNIT_TRAINERS[unit]):
        name = algorithm or UNIT_TRAINERS[unit]
    elif unit_algorithm_error(unit, algorithm) is not None:
        raise unit_algorithm_error(unit, algorithm)
    else:
        name = algorithm
    trainer(name)       # an unknown name: refused in one line naming the choices
    return name


def build_model(algorithm: str | None = None, *, unit: str | None = None, epsilon=None, delta=None,
                n_topics=None, seed=None, **params):
    """An unfitted estimator, its parameters checked (``validate_parameters``) before any data is read.

    ``epsilon``/``delta``: the total guarantee in the model's unit (hdp: the whole run's epsilon per word, eps_L
    solved from it; fed: the per-user total; svi and the document-level trainers: the whole run). ``unit``: the
    trainer :func:`dptopic.for_unit` builds (``unit="user"`` with ``algorithm`` docdp or docdp-cooc). ``params``:
    the trainer's own ``__init__`` parameters (fed: also ``user_epsilon``, resolved by :func:`dptopic.train` once
    the vocabulary's size is known)."""
    name = resolve_algorithm(algorithm, unit)
    epsilon, delta, n_topics = plain_number(epsilon), plain_number(delta), plain_number(n_topics)
    # None is a value here (clip=None: no clipping; epsilon_laplace=None: no noise); NumPy's numbers as Python's
    kw = {k: plain_number(v) for k, v in params.items()}
    if n_topics is not None:
        kw["n_topics"] = n_topics
    if seed is not None:
        kw["seed"] = seed
    cls = trainer(name).cls
    if unit is not None:
        if epsilon is None:
            raise DPTopicError(f"unit={unit!r} needs epsilon, the privacy budget of the whole run (and delta).")
        extra = {} if delta is None else {"delta": delta}
        if unit == "user" and name != UNIT_TRAINERS["user"]:
            model = cls.from_budget(epsilon, delta if delta is not None else 1e-5, unit="user", **kw)
        else:
            model = for_unit(unit, epsilon, **extra, **kw)
    elif name == "hdp" and epsilon is not None:
        n_iter = kw.pop("n_iter", inspect.signature(cls).parameters["n_iter"].default)     # the estimator's own
        model = cls.from_budget(epsilon, 1e-5 if delta is None else delta, n_iter, **kw)
    elif name in DOCUMENT_LEVEL:
        if epsilon is None:
            raise ParameterError("{algorithm} needs {epsilon}, the budget of the whole run (and {delta}).", "epsilon",
                                 others=("delta",), algorithm=name)
        model = cls.from_budget(epsilon, 1e-5 if delta is None else delta, **kw)
    elif name == "svi" and epsilon is not None:
        model = cls.from_budget(epsilon, 1e-5 if delta is None else delta, **kw)
    else:
        if epsilon is not None:
            kw["epsilon"] = epsilon
        if delta is not None:
            kw["report_delta" if name == "fed" else "delta"] = delta
        kw.pop("user_epsilon", None)        # fed: FedLDA.from_user_budget, once the vocabulary is known
        model = cls(**kw)
    model.validate_parameters()
    return model
