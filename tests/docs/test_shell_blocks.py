"""What a documentation walk-through found (2026-11-23): shell blocks a user pastes must run as written, and the
commands the README lists one after another must not collide on their default output folders."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _shell_blocks(text: str):
    """The bodies of fenced blocks with no language or a shell one, fences matched line by line (a ```python block
    must not pair its closing fence with the next block's opening one)."""
    blocks = re.findall(r"^```(\w*)[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    return [body for lang, body in blocks if lang in ("", "bash", "sh", "shell", "console")]


def test_every_shell_block_is_found():
    text = "```python\nx = 1\n```\nprose\n```bash\ndptopic a \\   # bad\n```\n```\nplain\n```\n"
    assert _shell_blocks(text) == ["dptopic a \\   # bad\n", "plain\n"]
    page = (ROOT / "docs" / "fedlda.md").read_text("utf-8")
    assert sum("dptopic privacy fed-report-words" in b for b in _shell_blocks(page)) == 1
    assert len(_shell_blocks((ROOT / "README.md").read_text("utf-8"))) >= 2   # every bash block of the README is read


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_shell_line_continues_after_a_comment(path):
    # "cmd \   # comment": the backslash escapes a space, not the newline, and the command stops there
    for block in _shell_blocks(path.read_text("utf-8")):
        for line in block.splitlines():
            assert not re.search(r"\\\s+#", line), f"{path.name}: {line.strip()}"


def test_experiments_have_their_own_default_folders():
    from dptopic.cli.main import build_parser

    parser = build_parser()
    outs = {}
    for name in ("hdp-utility", "topic-attack", "ldp-utility", "olp", "fedlda", "svi"):
        a = parser.parse_args(["experiment", name])
        outs[name] = a.out
    assert len(set(outs.values())) == len(outs), outs
    assert not any(str(o).startswith("docs") for o in outs.values()), outs   # never into the checkout's docs
    assert outs["olp"] != "runs/olp"       # the README trains --out runs/olp just before suggesting the experiment


def test_no_user_facing_text_cites_the_spec():
    for path in [*DOCS, *sorted((ROOT / "src" / "dptopic").rglob("*.py"))]:
        text = path.read_text("utf-8")
        for pat in (r"\.\./shared", r"ALGORITHMS\.md", r"\bspec eq", r"\(spec [§0-9]", r"\bthe spec\b"):
            assert not re.search(pat, text), f"{path.relative_to(ROOT)}: {pat}"
