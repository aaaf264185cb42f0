"""The reference pages say something on GitHub too, where the site's hooks have not run: the API page says how to read
its docstrings, and the CLI page lists every command with the parser's own one-line help."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _commands():
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        from cli_reference import _subcommands, _text
    finally:
        sys.path.pop(0)
    from dptopic.cli.main import build_parser

    out = {}
    for name, (sub, help_) in _subcommands(build_parser()).items():
        subs = _subcommands(sub)
        for n2, (_, h2) in subs.items():
            out[f"dptopic {name} {n2}"] = _text(h2)
        if not subs:
            out[f"dptopic {name}"] = _text(help_)
    return out


def test_the_cli_page_lists_every_command_with_its_help_before_the_site_is_built():
    page = (DOCS / "reference" / "cli.md").read_text("utf-8")
    head = page.split("<!-- dptopic-cli -->")[0]
    rows = dict(re.findall(r"^\| `(dptopic [^`]+)` \| (.*) \|$", head, re.M))
    want = _commands()
    table = "\n".join(f"| `{name}` | {text} |" for name, text in want.items())
    assert rows == want, f"the table of docs/reference/cli.md is out of step with the parser; its rows should be:\n{table}"


def test_the_api_page_says_how_to_read_it_before_the_site_is_built():
    page = (DOCS / "reference" / "api.md").read_text("utf-8")
    assert "make docs" in page and "help(dptopic." in page
    assert page.index("Reading this file on GitHub") < page.index(":::")


def test_the_getting_started_page_lists_the_demo_parts_in_the_order_the_demo_runs_them():
    from dptopic.cli.main import build_parser

    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        from cli_reference import _subcommands
    finally:
        sys.path.pop(0)
    demo = _subcommands(build_parser())["demo"][0]
    assert "first under document-level DP" in demo.description     # what the demo runs first
    page = (DOCS / "getting_started.md").read_text("utf-8")
    first, second = page.index("\n1. "), page.index("\n2. ")
    assert "document-level" in page[first:second] and "HDP-LDA" in page[second:second + 300]
