"""The command line's parsers, one module per command group, apart from the code that runs the commands.

Each module has ``register(subparsers)``, found through the command table (``cli/main.py``'s ``COMMANDS``), and
imports argparse, the command line's light helpers (``cli/_common.py``'s argument types, ``cli/_flags.py``) and
constants from light modules only: so a command's ``--help``, ``--version`` and every flag error (an unknown flag, a
bad choice, a missing value) load no numpy, numba, scipy, scikit-learn and no trainer (tests/cli/test_main.py). Each
command's parser names the function that runs it, ``set_defaults(run="module:function")`` under ``dptopic.cli``,
which ``cli/main.py`` imports once the arguments parsed.
"""
