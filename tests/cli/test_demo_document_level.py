"""`dptopic demo`'s second part: the same paragraphs under document-level DP at epsilon = 1 in all (the words chosen by
DP set union inside it), its NPMI read beside non-private LDA's on the same words, and a model saved with its card."""
import json

from dptopic.cli.main import main


def _flat(s: str) -> str:
    return " ".join(s.split())


def test_demo_trains_a_document_level_model_at_epsilon_one(demo):
    d, out, _ = demo                            # the shared demo run (tests/cli/conftest.py)
    tmp_path = d.parent
    assert "document-level DP: epsilon = 1 per paragraph in all" in out
    assert "ratio" in out and "to non-private LDA on the same words and split" in out
    doc = json.loads((tmp_path / "d-document" / "model.json").read_text())
    rep = doc["privacy"]
    assert rep["unit"] == "document" and rep["private"] is True
    assert 0 < rep["epsilon"] <= 1.0 and rep["delta"] <= 1e-5     # the vocabulary's choice composed in
    assert "vocabulary_selection" in rep and rep["guarantee"] == "full"
    assert doc["params"]["seed"] is None                       # unseeded: fresh OS entropy
    assert not doc["metrics"]                                  # read from private documents: not saved by default
    # the word-level model is still there, with its reference
    assert (tmp_path / "d" / "model.json").exists() and (tmp_path / "d-nonprivate" / "model.json").exists()
    assert f"dptopic topics --model {tmp_path / 'd-document'}" in out


def test_demo_word_level_only_skips_the_second_part_and_its_folder(tmp_path, capsys):
    (tmp_path / "d-document").mkdir()
    (tmp_path / "d-document" / "notes.txt").write_text("x")
    # the document-level folder is checked before training, like the reference's
    assert main(["demo", "--out", str(tmp_path / "d"), "--quiet", "--topics", "3", "--iterations", "2"]) == 2
    assert "d-document" in capsys.readouterr().err and not (tmp_path / "d").exists()
    assert main(["demo", "--out", str(tmp_path / "d"), "--quiet", "--topics", "3", "--iterations", "2",
                 "--word-level-only"]) in (0, None)
    assert "document-level DP" not in _flat(capsys.readouterr().out)
    assert (tmp_path / "d-document" / "notes.txt").exists() and not (tmp_path / "d-document" / "model.json").exists()
