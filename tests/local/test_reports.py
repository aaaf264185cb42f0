"""Stop 48's fuzz run: inputs that gave a traceback, hung or were read two ways now get one line."""
from __future__ import annotations

import hashlib
import json
import os
import struct

import numpy as np
import pytest

from dptopic.errors import CorruptModelError, DPTopicError

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


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """An LP-LDA, an OLP-LDA and a document-level local model, saved."""
    from dptopic import LPLDA, OLPLDA
    from dptopic.local.document import DocumentRandomizer
    from dptopic.models.ldp_document import LocalDocumentLDA

    root = tmp_path_factory.mktemp("fuzz49")
    rs = _reports()
    LPLDA(n_topics=2, n_iter=2, verbose=0).fit(rs).save(root / "lp")
    OLPLDA(prior_corpus="none", n_topics=2, n_iter=2, verbose=0).partial_fit(rs).save(root / "olp")
    LocalDocumentLDA(n_topics=2, verbose=0).fit(DocumentRandomizer(WORDS, 8.0).randomize(DOCS)).save(root / "doc")
    return root


def _edited(src, dst, edit_meta=None, arrays=None, drop=None):
    import shutil

    shutil.copytree(src, dst)
    meta = json.loads((dst / "model.json").read_text())
    meta.pop("array_sha256", None)          # as the fuzz run did: the arrays' digests are optional
    if drop:
        meta["arrays"].remove(drop)
        (dst / f"{drop}.npy").unlink()
    for name, value in (arrays or {}).items():
        np.save(dst / f"{name}.npy", value)
    if edit_meta:
        edit_meta(meta)
    (dst / "model.json").write_text(json.dumps(meta))
    return dst


def _one_line_corrupt(folder):
    import dptopic

    with pytest.raises(CorruptModelError) as e:
        dptopic.load(folder)
    assert "\n" not in str(e.value) and str(e.value).count("re-save the model") == 1
    assert str(e.value).count("corrupt model") == 1
    return str(e.value)


def test_damaged_local_models_are_refused_in_one_line(models, tmp_path):
    def set_training(key, value):
        return lambda m: m["training"].__setitem__(key, value)

    cases = [
        _edited(models / "doc", tmp_path / "d1", set_training("n_reports", "x")),
        _edited(models / "doc", tmp_path / "d2", lambda m: m["privacy"].pop("epsilon_doc")),
        _edited(models / "olp", tmp_path / "o1", set_training("n_batches", None)),
        _edited(models / "olp", tmp_path / "o2", set_training("n_docs_seen", 1.5)),
        _edited(models / "olp", tmp_path / "o3", arrays={"stream_state": np.array([np.nan, 0.5, np.nan, np.nan])}),
        _edited(models / "olp", tmp_path / "o4", arrays={"stream_state": np.float64(1.0)}),
        _edited(models / "olp", tmp_path / "o5", drop="stream_state"),
        _edited(models / "lp", tmp_path / "l1", arrays={"report_stats": np.float64(0.5)}),
        _edited(models / "lp", tmp_path / "l2", drop="noisy_counts"),
        _edited(models / "lp", tmp_path / "l3", arrays={"estimates": np.zeros((2, 2, 2))}),
        _edited(models / "lp", tmp_path / "l4", arrays={"targets": np.array([True] * 12)}),
        _edited(models / "lp", tmp_path / "l5", arrays={"variance_paper": np.full(12, np.nan)}),
        _edited(models / "lp", tmp_path / "l6", arrays={"report_stats": np.array([2.0, 4.0, 1.0])}),
    ]
    for folder in cases:
        _one_line_corrupt(folder)


def test_a_fifo_in_a_model_folder_is_refused_not_waited_on(models, tmp_path):
    import shutil

    for name in ("model.json", "components.npy"):
        folder = tmp_path / name.replace(".", "_")
        shutil.copytree(models / "lp", folder)
        (folder / name).unlink()
        os.mkfifo(folder / name)
        msg = _one_line_corrupt(folder) if name != "model.json" else None
        if msg is None:
            with pytest.raises(CorruptModelError, match="not a regular file"):
                import dptopic

                dptopic.load(folder)
        else:
            assert "not a regular file" in msg


def test_deeply_nested_json_inputs_get_one_line(tmp_path, capsys):
    from dptopic.cli.main import main

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000 + "\n")
    assert main(["train", "--corpus", str(deep), "--topics", "2", "--iterations", "2", "--out",
                 str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_report_audit_deeply_nested_or_with_a_number_for_a_fingerprint(models, tmp_path, capsys):
    from dptopic.attacks.provenance import mismatch
    from dptopic.cli.main import main
    import dptopic

    (tmp_path / "au").mkdir()
    (tmp_path / "au" / "audit.json").write_text('{"attacks": {}, "x": ' + "[" * 100000 + "]" * 100000 + "}")
    assert main(["report", str(models / "lp"), "--audit", str(tmp_path / "au"), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "audit.json" in err
    text = mismatch({"fingerprint": 7, "model": "m", "class": "LPLDA"}, dptopic.load(models / "lp"))
    assert text and "7…" in text
