"""Dataset names: the one rule every door of the ledger checks a name by (an estimator's ``dataset=``,
``dptopic.train``, ``DatasetLedger.set_cap``, and the command line, which calls the same functions).

A name is a non-empty line of printable text of at most :data:`MAX_NAME` characters. The ledger names some datasets
itself, and a name a user gives may not look like one of those (in any case): ``content:`` and ``people:`` name a
set of documents or people by a keyed digest of them, ``NAME-shadow:`` an audit's shadow models. A name of that form
is taken only where it names a dataset the ledger already holds (``budget cap`` of a ``content:`` dataset that
``budget show`` lists). A name also needs a ledger to record it under: ``dataset=`` with the ledger off is refused.
"""
from __future__ import annotations

import re

from ..errors import ParameterError

MAX_NAME = 200
RESERVED_PREFIXES = ("content:", "people:")
"""The prefixes of the names the ledger gives a set of documents (``content:``) or of people (``people:``)."""
SHADOW = re.compile(r"[^:]*-shadow:", re.IGNORECASE)
"""The form of the name an audit's shadow models are charged under (``audit-shadow:NAME``)."""


def valid_name(name, what: str = "dataset") -> str:
    """A name as the ledger stores it, its own forms included: a non-empty line of printable text, at most
    :data:`MAX_NAME` characters; returned without the white space around it."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        raise ParameterError("invalid %s name {%s=}: give a non-empty name of printable characters, at most {most}"
                             " long." % (what, what), what, name, most=MAX_NAME)
    return name.strip()


def is_reserved(name: str) -> bool:
    """Whether ``name`` has the form of a name the ledger gives itself (module note), in any case."""
    low = name.strip().lower()
    return low.startswith(RESERVED_PREFIXES) or SHADOW.match(low) is not None


OWN_NAME = re.compile(r"(content|people):[0-9a-f]{16}")
"""A name the ledger gives a set of documents or people, exactly: the prefix and 16 hex digits of a keyed digest."""


def check_name(name, what: str = "dataset", recorded=None) -> str:
    """A dataset name a user gives (module note), refused in one line naming ``what`` when it is not a valid name, or
    when it has the form of a name the ledger gives itself. ``recorded``: the datasets the ledger holds, for a door
    that names a dataset rather than records a release under a name (a cap): a name of the ledger's form is taken
    there when the ledger holds it, or when it is exactly a content name (a cap set before that dataset's first
    release, its name from :meth:`~dptopic.dataset_ledger.ledger.DatasetLedger.content_name`)."""
    name = valid_name(name, what)
    if is_reserved(name) and (recorded is None or (name not in recorded and not OWN_NAME.fullmatch(name))):
        raise ParameterError("invalid %s name {%s=}: the ledger names datasets itself with 'content:' and 'people:'"
                             " (a set of documents or of people, by a digest of them) and 'NAME-shadow:' (an audit's"
                             " shadow models), and a name of that form names no dataset it holds: give another"
                             " name." % (what, what), what, name)
    return name


def no_ledger_error(dataset) -> ParameterError:
    """The refusal of a dataset name given where no ledger records anything (``ledger=False``; the command line's
    own flag for it is ``no_ledger``)."""
    return ParameterError("{dataset=} names the release a ledger records, and ledger=False records none: drop"
                          " {dataset} (or give a ledger).", "dataset", dataset, others=("no_ledger",),
                          key="dataset_ledger.names.no_ledger_error")
