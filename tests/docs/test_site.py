"""The documentation site (mkdocs.yml, docs/) as a newcomer reads it: every page is in the navigation, the README
is short and points into the docs, the command-line reference is written from the parser, the API reference
names every public name, and the research logs sit apart from the user pages."""
import importlib.util
import re
from pathlib import Path

import pytest

import dptopic
from dptopic.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _hook():
    spec = importlib.util.spec_from_file_location("cli_reference", DOCS / "hooks" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _nav_pages() -> list:
    """The pages mkdocs.yml's nav lists (read as text: the file holds a Python tag that yaml.safe_load refuses)."""
    text = (ROOT / "mkdocs.yml").read_text("utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r"^\s+- (?:[^\n]*?: )?(\S+\.md)\s*$", nav, flags=re.M)


def _table_cells(text: str) -> list:
    return [cell.strip() for line in text.splitlines() if line.startswith("|")
            for cell in line.strip().strip("|").split("|")]


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page():
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "hooks" not in p.parts}
    nav = _nav_pages()
    assert len(nav) == len(set(nav)), nav
    assert set(nav) == pages, (sorted(pages - set(nav)), sorted(set(nav) - pages))


def test_the_site_is_built_strictly_with_links_and_anchors_checked():
    text = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert re.search(r"^strict: true$", text, flags=re.M)
    assert re.search(r"^\s+anchors: warn$", text, flags=re.M)     # strict turns the warning into a failure
    assert "make docs" in (ROOT / ".ci" / "run").read_text("utf-8").replace("make test docs", "make docs")


def test_the_readme_keeps_its_table_cells_short():
    # research figures live in the docs, not in README cells
    cells = _table_cells((ROOT / "README.md").read_text("utf-8"))
    assert cells, "the README has a table of trainers"
    long = [c[:60] for c in cells if len(c) > 120]
    assert not long, long


def test_the_readme_has_one_table_of_trainers_by_privacy_unit():
    text = (ROOT / "README.md").read_text("utf-8")
    headers = [line for line in text.splitlines() if line.startswith("| trainer")]
    assert headers == ["| trainer | unit | what ε covers | use it when |"], headers
    for name in ("DocDPCooccurrence", "DocDPEM", "DPSVI", "HDPLDA", "LPLDA", "OLPLDA", "LocalDocumentLDA",
                 "FedLDA", "LDA"):
        assert f"`{name}`" in text, name
    assert "make demo" in text and "make test" in text


@pytest.mark.parametrize("page, log", [("document_dp.md", "research/document_dp.md"),
                                       ("fedlda.md", "research/fedlda.md"),
                                       ("experiments.md", "research/experiments.md")])
def test_a_user_page_is_short_and_links_to_its_research_log(page, log):
    text = (DOCS / page).read_text("utf-8")
    assert len(text) < 8000, f"{page}: {len(text)} characters; how we got there belongs in {log}"
    assert f"]({log}" in text
    assert (DOCS / log).exists()


def test_research_logs_are_not_where_a_user_starts():
    for page in ("index.md", "getting_started.md"):
        text = (DOCS / page).read_text("utf-8")
        assert "research/document_dp.md" not in text and "research/fedlda.md" not in text, page


def test_the_cli_reference_names_every_command_and_option():
    text = _hook().cli_markdown()
    headings = set(re.findall(r"^#+ (dptopic [^\n]+)$", text, flags=re.M))

    def walk(parser, words):
        for action in parser._actions:
            if action.choices and hasattr(action, "_choices_actions"):
                for name, sub in action.choices.items():
                    assert " ".join([*words, name]) in headings, [*words, name]
                    yield from walk(sub, [*words, name])
            else:
                yield from action.option_strings

    options = set(walk(build_parser(), ["dptopic"]))
    assert "--private-vocabulary" in options
    missing = [o for o in options if f"`{o}" not in text and f", {o}" not in text and o != "--version"]
    assert not missing, missing


def test_the_cli_reference_escapes_help_text_for_a_table():
    hook = _hook()
    assert hook._text("a | b <c> *d*  \n e_f") == r"a \| b &lt;c&gt; \*d\* e\_f"
    page = (DOCS / "reference" / "cli.md").read_text("utf-8")
    assert hook.MARKER in page
    assert hook.on_page_markdown(page, type("P", (), {"file": type("F", (), {"src_uri": hook.PAGE})})(), None, None) \
        != page


def test_the_api_reference_names_every_public_name():
    page = (DOCS / "reference" / "api.md").read_text("utf-8")
    documented = re.findall(r"^::: ([\w.]+)$", page, flags=re.M)
    for name in dptopic.__all__:
        if name == "__version__":
            continue
        obj = getattr(dptopic, name)
        where = f"{obj.__module__}.{name}"
        assert where in documented or obj.__module__ in documented, f"{name} ({where}) is not in docs/reference/api.md"
