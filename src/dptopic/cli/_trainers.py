"""Each trainer as ``dptopic train`` writes it: the flag of each of its parameters, the options of its own, and its line
in ``train --help``, keyed by the trainer's registry name (:data:`dptopic.models.registry.TRAINERS`).

The registry holds what a trainer is (its class, its units, what it reads); this table holds only the command line's
words for it. Every trainer ``dptopic train`` trains (``Trainer.cli``) has an entry here, and no other name has one
(tests/cli/test_trainers.py): a new trainer is refused by that test until the command line knows its flags.
"""
from __future__ import annotations

from types import MappingProxyType

from ..models.registry import TRAINERS

COMMON_FLAGS = MappingProxyType({"n_topics": "--topics", "n_iter": "--iterations", "n_jobs": "--jobs",
                                 "eta": "--beta", "n_epochs": "--epochs", "n_clients": "--clients"})
"""The ``dptopic train`` flag of a parameter whose flag is not ``'--' + parameter.replace('_', '-')``, for every
trainer that has it (a trainer's own entry of :data:`FLAGS` overrides it)."""

FLAGS = MappingProxyType({
    "lda": {},
    "hdp": {},
    "cdp": {},
    "cdp+": {},
    "docdp-cooc": {"unit": None},               # --unit picks the trainer; --unit user sets unit='user'
    "docdp": {"unit": None, "n_iter": None},    # its EM iterations are no Gibbs sweeps: no --iterations
    "svi": {},
    "online-vb": {},
    # the delta of its tight report; the per-user total solved over the vocabulary (from_user_budget)
    "fed": {"report_delta": "--delta", "user_epsilon": "--user-budget"},
    "lp": {"epsilon_word": None, "f": None},     # set by the randomizer that wrote the reports
    "olp": {"epsilon_word": None, "f": None, "prior_corpus": "--prior"},
    "ldp-doc": {"alpha": None},                  # transform's smoothing; the topics are a fixed function of the reports
})
"""``{trainer: {parameter: flag}}``: the ``dptopic train`` flag of a parameter where it is neither
``'--' + parameter.replace('_', '-')`` nor in :data:`COMMON_FLAGS`; None: no flag of ``train`` sets it."""

OWN_OPTIONS = MappingProxyType({
    "hdp": ("no_noise",),       # --no-noise: epsilon_laplace=None, clipping alone
    "svi": ("no_clip",),        # --no-clip: clip=None
})
"""``{trainer: dests}``: the ``train`` options a trainer reads that set no parameter of its own (the options every
trainer of a corpus reads follow from registry facts, ``cli._train_flags._READS``)."""

HELP_NOTES = MappingProxyType({
    "hdp": "--epsilon per word in total (--unit word trains it)",
    "cdp": "--paper-epsilon",
    "cdp+": "--paper-epsilon",
    "docdp-cooc": "--epsilon per document (--unit document trains it)",
    "docdp": "--epsilon per document",
    "svi": "--epsilon per document",
    "fed": "--epsilon per user",
    "lp": "--reports from 'dptopic randomize'",
    "olp": "--reports from 'dptopic randomize' and --prior",
    "ldp-doc": "--reports from 'dptopic randomize --unit document'",
})
"""What ``train --help``'s table of trainers adds to a trainer's summary (``Trainer.summary``): the flags of its
budget or its input."""


def trainer_flag(name: str, parameter: str) -> str | None:
    """The ``dptopic train`` flag that sets ``parameter`` of the trainer ``name`` (None where no flag sets it)."""
    own = FLAGS[name]
    if parameter in own:
        return own[parameter]
    return COMMON_FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def own_options(name: str) -> tuple:
    """The ``train`` options (argparse dests) the trainer ``name`` reads that set no parameter of its own."""
    return OWN_OPTIONS.get(name, ())


def help_line(name: str) -> str:
    """The trainer's line in ``dptopic train --help``: its summary, and what the command line adds to it."""
    note = HELP_NOTES.get(name)
    summary = TRAINERS[name].summary
    return f"{summary}; {note}" if note else summary
