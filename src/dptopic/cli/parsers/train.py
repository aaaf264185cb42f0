"""``train``'s parser (run by cli/train.py): every trainer's options (cli/_train_parser.py), and its ``--help``, which
shows the options of the trainer chosen (cli/_train_help.py)."""
from __future__ import annotations

from ...models.registry import unit_algorithm_error
from .._train_flags import flag_shown
from .._train_help import PLAIN, add_help
from .._train_parser import add_train_arguments


def unit_algorithm_refusal(unit: str | None, algorithm: str | None) -> str | None:
    """Why ``train --unit UNIT --algorithm ALGORITHM`` is refused (None when it is not), in its flags: one rule for the
    command, its ``--help`` and ``dptopic.train`` (``dptopic.models.registry.unit_algorithm_error``)."""
    error = unit_algorithm_error(unit, algorithm)
    return None if error is None else error.message({"unit": "--unit", "algorithm": "--algorithm"})


def register(sub) -> None:
    t = sub.add_parser("train", help="train a topic model, evaluate it and save it", description=PLAIN,
                       add_help=False)
    add_help(t, flag_shown, unit_algorithm_refusal)    # the options of the trainer chosen: 'train --algorithm X --help'
    add_train_arguments(t)
    t.set_defaults(run="train:cmd_train")
