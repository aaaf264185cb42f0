"""How many reports one contributor sent, as a local-DP model states it: the figure a collection server gives
(``for_contributors``) and the one a saved report already states, of which the larger always wins, so that a loaded,
retrained or re-saved model never states fewer reports (hence a smaller epsilon) than it once did."""
from __future__ import annotations

import math
import numbers

from ..errors import DPTopicError


def checked_reports(reports) -> int:
    """``reports`` as a count of at least one report, or a one-line error."""
    whole = isinstance(reports, numbers.Integral) or isinstance(reports, float) and reports.is_integer()
    if isinstance(reports, bool) or not whole:
        raise DPTopicError(f"invalid reports={reports!r}: give a whole number of reports, at least 1.")
    if int(reports) < 1:
        raise DPTopicError(f"invalid reports={reports!r}: a contributor sends at least 1 report.")
    return int(reports)


def stated_reports(privacy: dict | None) -> int:
    """The ``reports_per_contributor`` a saved privacy report states (1 where it states none, or nothing usable)."""
    stated = (privacy or {}).get("reports_per_contributor", 1)
    if isinstance(stated, bool) or not isinstance(stated, (int, float)) or not stated >= 1:
        return 1
    if not math.isfinite(stated):       # an edited report: no count of reports is infinite
        raise DPTopicError(f"the saved report states reports_per_contributor={stated!r}, not a count: the model folder"
                           " was edited; re-create it.")
    # a figure of 2.5 reports is read as 3: a count is never rounded down into a smaller epsilon
    return int(-(-stated // 1))
