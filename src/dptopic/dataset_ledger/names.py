"""Dataset names: the one rule every door of the ledger checks a name by (a fit's ``dataset=``, ``dptopic.train``,
``dptopic budget``)."""
from __future__ import annotations

from ..errors import ParameterError

MAX_NAME = 200


def check_name(name, what: str = "dataset") -> str:
    """A dataset name: a non-empty line of printable text, at most :data:`MAX_NAME` characters."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        raise ParameterError("invalid %s name {%s=}: give a non-empty name of printable characters, at most {most}"
                             " long." % (what, what), what, name, most=MAX_NAME)
    return name.strip()

