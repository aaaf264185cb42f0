"""``privacy verify``: recompute a saved model's privacy figures from the events its report lists (it reads the
model, so it lives apart from the calculators of cli/privacy.py, which load none)."""
from __future__ import annotations

import json

from ..reporting.terminal import make_console, print_verification
from ..reporting.verification import verify_saved_model
from ._common import ExitStatus

NO_GUARANTEE_EXIT = 3
"""``privacy verify``'s exit status for a report whose figures hold but whose events give no guarantee."""


def cmd_privacy_verify(a):
    v = verify_saved_model(a.model)
    if a.format == "json":          # for a script or a review board's records; the exit status still says failed
        print(json.dumps(v.to_dict(), indent=2))      # infinity written "inf", as model.json does
    else:
        print_verification(v, a.model, make_console(), NO_GUARANTEE_EXIT)
    v.raise_unless_checked()        # exit status 2 unless the figures were checked and hold (`verify && ship`)
    return ExitStatus(NO_GUARANTEE_EXIT if v.no_guarantee else 0)
