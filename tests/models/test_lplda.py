"""``dptopic.models.lplda``."""
import json
import numpy as np
import pytest
from dptopic.errors import CorruptModelError


WORDS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "orange", "peach", "pear", "plum", "kiwi", "melon"]


DOCS = [d.split() for d in ("apple banana cherry grape lemon mango", "orange peach pear plum kiwi melon",
                            "apple cherry lemon orange pear kiwi", "banana grape mango peach plum melon")]


def _reports():
    from dptopic.local import Randomizer

    return Randomizer(WORDS, epsilon_word=1.0, secure=True).randomize(DOCS)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """An LP-LDA, an OLP-LDA and a document-level local model, saved."""
    from dptopic import LPLDA, OLPLDA
    from dptopic.local.document import DocumentRandomizer
    from dptopic.models.ldp_document import LocalDocumentLDA

    root = tmp_path_factory.mktemp("models")
    rs = _reports()
    LPLDA(n_topics=2, n_iter=2, verbose=0).fit(rs).save(root / "lp")
    OLPLDA(prior_corpus="none", n_topics=2, n_iter=2, verbose=0).partial_fit(rs).save(root / "olp")
    LocalDocumentLDA(n_topics=2, verbose=0).fit(DocumentRandomizer(WORDS, 8.0).randomize(DOCS)).save(root / "doc")
    return root


def _edited(src, dst, edit_meta=None, arrays=None, drop=None):
    import shutil

    shutil.copytree(src, dst)
    meta = json.loads((dst / "model.json").read_text())
    meta.pop("array_sha256", None)          # the arrays' digests are optional
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


@pytest.mark.filterwarnings('ignore')
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
