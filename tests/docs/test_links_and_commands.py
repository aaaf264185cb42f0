"""The documentation as a reader copies it (README.md and docs/*.md): every relative link and heading anchor
resolves, and every ``dptopic`` command of a fenced block names a command, sub-command and flags that the CLI's
parser has (read from ``dptopic.cli.main.build_parser``, nothing is run)."""
import argparse
import importlib
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from dptopic.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELL = ("", "bash", "sh", "shell", "console")

_FENCE = re.compile(r"^[ \t]*```(\w*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", flags=re.S | re.M)


# ---------------------------------------------------------------- links and anchors

def _prose(text: str) -> str:
    """The text outside fenced blocks and inline code, where a link is a link."""
    text = _FENCE.sub("", text)
    return re.sub(r"`[^`\n]*`", "", text)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text, lower-cased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link in a heading: its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()        # inline HTML
    text = re.sub(r"[^\w\- ]", "", text)                       # \w is Unicode-aware, as GitHub keeps letters of any script
    return text.replace(" ", "-")


def anchors(text: str) -> set:
    seen: dict = {}
    out = set()
    for m in re.finditer(r"^#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$", _FENCE.sub("", text), flags=re.M):
        slug = _slug(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    out.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
    return out


def links(text: str):
    body = _prose(text)
    found = [m.group(1) for m in re.finditer(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", body)]
    # reference-style definitions: "[label]: target" with nothing after the target but an optional quoted title
    found += re.findall(r"^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)>?(?:[ \t]+[\"'(].*)?[ \t]*$", body, flags=re.M)
    return [t for t in found if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t)]   # http:, https:, mailto:


def page_text(path: Path) -> str:
    """A page as the site shows it: the command-line reference with the sections its build hook writes."""
    text = path.read_text("utf-8")
    hook = ROOT / "docs" / "hooks" / "cli_reference.py"
    if path == ROOT / "docs" / "reference" / "cli.md":
        spec = importlib.util.spec_from_file_location("cli_reference", hook)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        text = text.replace(module.MARKER, module.cli_markdown())
    return text


def broken_links(path: Path, text: str | None = None) -> list:
    text = path.read_text("utf-8") if text is None else text
    bad = []
    for target in links(text):
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        elif anchor and dest.suffix == ".md":
            dest_text = text if dest == path else page_text(dest)
            if anchor not in anchors(dest_text):
                bad.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    return bad


def test_anchor_slugs_follow_github():
    text = ("# Fewer words in each report (`report_words`, the default)\n## FedLDA (Wang, Tong & Shi 2020 poster)\n"
            "## Words that repeat (`word_choice=\"repetition\"`): an option\n## Notes\n## Notes\n"
            "```\n# not a heading\n```\n")
    assert anchors(text) == {"fewer-words-in-each-report-report_words-the-default", "fedlda-wang-tong--shi-2020-poster",
                             "words-that-repeat-word_choicerepetition-an-option", "notes", "notes-1"}


def test_a_broken_link_or_anchor_is_caught():
    page = ROOT / "docs" / "fedlda.md"
    text = ("## The sound default: `exclusion=\"none\"` (full guarantee)\n"
            "[ok](privacy.md) [ok](#the-sound-default-exclusionnone-full-guarantee) [ok](https://example.org/x.md)\n"
            "[bad](no_such_page.md) [bad](privacy.md#no-such-heading) [bad](#no-such-heading)\n"
            "`[not a link](nowhere.md)`\n```\n[not a link](nowhere.md)\n```\n"
            "[ref]: missing_too.md\n[0.25, 1000]: prose after a bracket, not a link definition\n")
    bad = broken_links(page, text)         # relative to docs/, the page's own anchors from ``text``
    assert len(bad) == 4, bad
    assert any("missing_too.md" in b for b in bad)
    assert any("no_such_page.md" in b for b in bad)
    assert sum("#no-such-heading" in b for b in bad) == 2


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path):
    assert broken_links(path) == [], f"{path.relative_to(ROOT)}: broken links"


# ---------------------------------------------------------------- dptopic commands in fenced blocks

def command_lines(text: str):
    """The ``dptopic ...`` command lines of the shell blocks (a ``$ `` prompt dropped, backslash continuations
    joined)."""
    out = []
    for lang, body in _FENCE.findall(text):
        if lang not in SHELL:
            continue
        cur = ""
        for line in body.splitlines():
            line = line.strip()
            if not cur and line.startswith("$ "):
                line = line[2:]
            cur = f"{cur} {line}" if cur else line
            if cur.endswith("\\"):
                cur = cur[:-1].rstrip()
                continue
            if cur.startswith("dptopic "):
                out.append(cur)
            cur = ""
    return out


def _subcommands(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


_PARSER = build_parser()


def check_command(line: str, *, parse: bool = True) -> str | None:
    """What is wrong with ``line`` for the CLI parser, or None."""
    try:
        argv = shlex.split(line, comments=True)[1:]
    except ValueError as e:
        return f"cannot be split as a shell line ({e})"
    parser, words, rest = _PARSER, ["dptopic"], list(argv)
    while rest and rest[0] in _subcommands(parser):
        words.append(rest[0])
        parser = _subcommands(parser)[rest.pop(0)]
    if _subcommands(parser) and not (rest and rest[0] in ("-h", "--help", "--version")):
        what = f"'{rest[0]}' is not" if rest else "no sub-command given; expected"
        return f"{' '.join(words)}: {what} one of {sorted(_subcommands(parser))}"
    options = {o: action for action in parser._actions for o in action.option_strings}
    unknown = [t for t in rest if t.startswith("--") and t.split("=", 1)[0] not in options]
    if unknown:
        return f"{' '.join(words)} has no option {', '.join(unknown)}"
    # a retired spelling (--fed-epsilon, train --budget) parses, and the command refuses it: its help says so
    retired = [t for t in rest if t.startswith("--") and (options[t.split("=", 1)[0]].help or "").startswith("refused")]
    if retired:
        return f"{' '.join(words)} refuses {', '.join(retired)} (see its --help)"
    if parse and "..." not in rest:
        try:
            _PARSER.parse_args(argv)
        except SystemExit:
            return f"{' '.join(words)}: the parser refuses these arguments"
    return None


def test_a_bogus_command_or_flag_is_caught(capsys):
    text = ("```bash\ndptopic train --corpus demo --topics 3 --out runs/x   # fine\n"
            "dptopic train --corpus demo --bogus-flag 3\n"
            "dptopic experiment no-such-experiment --seed 0\n"
            "dptopic corpus info posts.jsonl --json \\\n    --no-such-option\n"
            "dptopic train --algorithm no-such-trainer\n"
            "dptopic serve --vocabulary v.txt --epsilon-word 2 --fed-epsilon 5\n"
            "echo dptopic train --not-a-command-line\n```\n"
            "```console\n$ dptopic privacy compose --laplace 0.1 100 --delta 1e-5 --wrong\n"
            "some output --with-dashes\n```\n"
            "```python\ndptopic train --python-blocks-are-not-shell\n```\n")
    lines = command_lines(text)
    assert len(lines) == 7, lines
    problems = [check_command(line) for line in lines]
    capsys.readouterr()                     # argparse's own message for the refused --algorithm value
    assert problems[0] is None
    assert "--bogus-flag" in problems[1]
    assert "no-such-experiment" in problems[2]
    assert "--no-such-option" in problems[3]
    assert "refuses" in problems[4]
    assert "refuses --fed-epsilon" in problems[5]       # a retired spelling: parsed, then refused by the command
    assert "--wrong" in problems[6]


def test_every_doc_has_its_commands_read():
    counts = {str(p.relative_to(ROOT)): len(command_lines(p.read_text("utf-8"))) for p in DOCS}
    assert counts["README.md"] >= 3, counts              # the command-line example
    assert counts["docs/getting_started.md"] >= 4, counts
    assert sum(counts.values()) >= 60, counts


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_dptopic_command_in_a_block_is_one_the_cli_has(path, capsys):
    problems = [f"{line}\n    -> {why}" for line in command_lines(path.read_text("utf-8"))
                if (why := check_command(line))]
    capsys.readouterr()
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_inline_dptopic_command_names_real_flags(path):
    """`dptopic ...` in running text: the command and its flags exist (values there are often placeholders, so
    the line is not parsed)."""
    problems = []
    for m in re.finditer(r"`(dptopic [^`\n]+)`", _FENCE.sub("", path.read_text("utf-8"))):
        why = check_command(m.group(1).replace("|", " "), parse=False)
        if why and "no sub-command given" not in why:        # `dptopic privacy` names a group, which is fine
            problems.append(f"{m.group(1)} -> {why}")
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


ROOT_2 = Path(__file__).resolve().parents[2]


def test_readme_does_not_seed_a_private_model():
    text = (ROOT_2 / "README.md").read_text()
    for call in re.findall(r"(?:HDPLDA|CDPLDA\w*)(?:\.from_budget)?\([^)]*\)", text):
        assert "seed=" not in call, call


# ------------------------------------------------------ no pointers to the spec
def test_no_user_facing_pointer_to_the_internal_spec():
    pat = re.compile(r"spec (§|Sec\.|A-\d)|shared/spec|ALGORITHMS\.md|\(A-\d\d|\bA-\d\d\)")
    files = [ROOT_2 / "README.md", *(ROOT_2 / "docs").rglob("*.md"), *(ROOT_2 / "src").rglob("*.py")]
    hits = [f"{f.relative_to(ROOT_2)}:{i}" for f in files
            for i, line in enumerate(f.read_text().splitlines(), 1) if pat.search(line)]
    assert not hits, hits


# ---------------------------------------------------------------- names the library's text gives

_DOTTED = re.compile(r"(?<![\w./-])dptopic(?:\.[A-Za-z_]\w*)+")


def _resolves(dotted: str) -> bool:
    """``dptopic.a.b.c`` names a module or an attribute reached from the longest importable module prefix."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for name in parts[i:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


def test_every_name_the_library_writes_in_its_text_exists():
    """An error said "give a Corpus (dptopic.read_corpus reads a file)", a function dptopic does not have: every
    ``dptopic.x.y`` a string of the library writes (a message, a docstring) names a module or object that exists.
    A string that is the name alone (a key, a logger's name) names nothing."""
    import io
    import tokenize

    missing = []
    for path in sorted((ROOT / "src" / "dptopic").rglob("*.py")):
        for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            if token.type != tokenize.STRING:
                continue
            for m in _DOTTED.finditer(token.string):
                name = m.group(0)
                if token.string.strip("\"'") == name or name.endswith((".py", ".json", ".md")):
                    continue
                if not _resolves(name):
                    missing.append(f"{path.relative_to(ROOT)}:{token.start[0]}: {name}")
    assert not missing, "names that exist nowhere: " + "; ".join(missing)
