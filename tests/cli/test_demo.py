"""`dptopic demo`: it leads with the document-level model (epsilon = 1 per paragraph), keeps the word-level model as its
second part with its per-paragraph figure, and writes its figures as PNG files."""
import pytest

from dptopic.cli.main import main


def _flat(s: str) -> str:
    return " ".join(s.split())


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "d"
    capture = pytest.MonkeyPatch()
    import io
    import sys

    buf, err = io.StringIO(), io.StringIO()
    capture.setattr(sys, "stdout", buf)
    capture.setattr(sys, "stderr", err)
    try:
        rc = main(["demo", "--out", str(out), "--quiet", "--topics", "4", "--iterations", "3"])
    finally:
        capture.undo()
    assert rc in (0, None), err.getvalue()
    return out, _flat(buf.getvalue()), err.getvalue()


def test_the_demo_leads_with_the_document_level_guarantee(demo):
    out, text, _ = demo
    first, second = text.index("part 1: document-level DP: epsilon = 1 per paragraph"), text.index("part 2: HDP-LDA")
    assert first < second
    assert text.index("GUARANTEE: epsilon = 0.9") < second      # the document-level one first
    word = text[text.index("GUARANTEE (word level)"):]
    assert "per paragraph, by group privacy, L times" in word and "for a paragraph of 10 words" in word
    assert "far weaker than the document-level model above" in word
    assert f"dptopic report --model {out}-document" in text


def test_the_demo_writes_its_figures_and_says_where(demo):
    out, text, err = demo
    figures = out.parent / "d-figures"
    for name in ("topics.png", "quality_vs_epsilon.png"):
        path = figures / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert str(path) in text
    # the reuse of the same paragraphs by the second model is said once, as the two guarantees' composition
    assert "already used by an earlier private fit" not in err and "published together" in text


def test_the_figures_folder_is_checked_before_any_training(tmp_path, capsys):
    (tmp_path / "d-figures").mkdir()
    (tmp_path / "d-figures" / "mine.png").write_bytes(b"x")
    assert main(["demo", "--out", str(tmp_path / "d"), "--quiet", "--topics", "3", "--iterations", "2",
                 "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "d-figures" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "d").exists() and not (tmp_path / "d-document").exists()
