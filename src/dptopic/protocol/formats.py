"""Each report kind's file format: the :mod:`dptopic.protocol` module that reads and writes it (``MAGIC``, ``FORMAT``,
``VERSION``) and the fields ``/v1/config`` adds to its ``report_format``. :mod:`dptopic.service.kinds` registers the
kinds on these; :mod:`dptopic.service.codec` reads files by them. Importing this module loads no numerical library."""
from __future__ import annotations

from ..errors import DPTopicError

FORMAT_MODULES = {"word": "dptopic.protocol.reports", "document": "dptopic.protocol.document_reports"}
FORMAT_FIELDS = {"word": {"bit_order": "little"}, "document": {"byte_order": "little"}}


def format_module(kind: str):
    """The module that reads and writes the reports of ``kind`` (:data:`FORMAT_MODULES`); one-line error for an
    unknown kind."""
    if kind == "word":
        from . import reports  # start-up: the format loads numpy, which this module's importers must not

        return reports
    if kind == "document":
        from . import document_reports  # start-up: as above

        return document_reports
    raise DPTopicError(f"invalid report kind {str(kind)[:20]!r}: one of {', '.join(repr(n) for n in FORMAT_MODULES)}.")


def report_format(kind: str = "word") -> dict:
    """Kind, name and version of the report format of ``kind`` (sent in ``/v1/config``)."""
    m = format_module(kind)
    return {"kind": kind, "name": m.FORMAT, "version": m.VERSION, "media_type": "application/octet-stream",
            **FORMAT_FIELDS[kind]}


_BY_MAGIC: dict[bytes, str] = {}


def kind_of_body(body: bytes) -> str | None:
    """The kind whose magic number starts ``body``, or ``None``."""
    if not _BY_MAGIC:
        _BY_MAGIC.update({format_module(kind).MAGIC: kind for kind in FORMAT_MODULES})
    return _BY_MAGIC.get(bytes(body[:8]))
