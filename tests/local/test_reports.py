"""Damaged or odd local reports and models: each is refused in one line (never a traceback, a hang or two readings)."""
from __future__ import annotations

import hashlib
import json
import struct

import pytest

from dptopic.errors import DPTopicError

pytestmark = pytest.mark.filterwarnings("ignore")

WORDS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "orange", "peach", "pear", "plum", "kiwi", "melon"]
DOCS = [d.split() for d in ("apple banana cherry grape lemon mango", "orange peach pear plum kiwi melon",
                            "apple cherry lemon orange pear kiwi", "banana grape mango peach plum melon")]


def _reports():
    from dptopic.local import Randomizer

    return Randomizer(WORDS, epsilon_word=1.0, secure=True).randomize(DOCS)


def _with_header(raw: bytes, edit) -> bytes:
    """The file with its JSON header text passed through ``edit`` and the checksum made right again."""
    (H,) = struct.unpack("<I", raw[8:12])
    head = edit(raw[12:12 + H].decode())
    body = raw[:8] + struct.pack("<I", len(head.encode())) + head.encode() + raw[12 + H:-32]
    return body + hashlib.sha256(body).digest()


def test_a_huge_vocab_size_is_refused_in_one_line():
    from dptopic.local import ReportSet

    def huge(text):
        h = json.loads(text)
        V = 2 ** 70
        h.update(vocab_size=V, n_reports=0, bytes_per_report=(V + 7) // 8)
        h.pop("vocabulary", None)
        return json.dumps(h)

    raw = _reports().to_bytes()
    (H,) = struct.unpack("<I", raw[8:12])
    bad = _with_header(raw[:12 + H] + raw[-32:], huge)        # no payload: 0 reports
    with pytest.raises(DPTopicError, match="vocab_size .* is out of range"):
        ReportSet.from_bytes(bad)


@pytest.mark.parametrize("which", ["word", "document"])
def test_a_header_that_gives_a_field_twice_is_refused(which):
    from dptopic.local import ReportSet
    from dptopic.local.document import DocumentRandomizer, DocumentReportSet

    if which == "word":
        raw, cls = _reports().to_bytes(), ReportSet
    else:
        raw, cls = DocumentRandomizer(WORDS, 8.0).randomize(DOCS).to_bytes(), DocumentReportSet
    twice = _with_header(raw, lambda t: t[:-1] + ',"n_reports":' + str(json.loads(t)["n_reports"]) + "}")
    with pytest.raises(DPTopicError, match="'n_reports' more than once"):
        cls.from_bytes(twice)
    cls.from_bytes(raw)         # the file as written reads


def test_report_bytes_of_other_types_are_refused_and_a_memoryview_is_read():
    from dptopic.local import ReportSet
    from dptopic.local.document import DocumentRandomizer, DocumentReportSet

    raw = _reports().to_bytes()
    for bad in (None, "str", 123):
        with pytest.raises(DPTopicError, match="expected the bytes of a report file"):
            ReportSet.from_bytes(bad)
    assert ReportSet.from_bytes(memoryview(raw)).n_reports == 4
    doc = DocumentRandomizer(WORDS, 8.0).randomize(DOCS).to_bytes()
    assert DocumentReportSet.from_bytes(memoryview(doc)).n_reports == 4
