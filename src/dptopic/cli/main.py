"""The ``dptopic`` command line.

One module per command group; each has ``register(subparsers)``. Every user error
ends in one line on stderr (``error: ...``) and exit status 2.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import DPTopicError
from . import corpus, experiment, local, privacy, serve, train

# Command groups, in the order ``--help`` lists them.
COMMAND_GROUPS = [train, corpus, privacy, experiment, local, serve]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="dptopic", description="Differentially private topic models (LDA) and auditing.")
    from .. import __version__

    ap.add_argument("--version", action="version", version=f"dptopic {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(sub)
    return ap


def main(argv=None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    try:
        a.func(a)
    except DPTopicError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (OSError, MemoryError) as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
