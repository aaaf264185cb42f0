"""MkDocs hook: writes the command-line reference (docs/reference/cli.md) from dptopic's own argparse parser.

The page holds a marker, ``<!-- dptopic-cli -->``; at build time it is replaced by one section per command and
sub-command: its description, its usage line and a table of its options, read from ``dptopic.cli.main.build_parser``.
Nothing is run. The same function is used by the doc tests, so the page and the parser cannot drift apart."""
from __future__ import annotations

import argparse
import html
import os
import re

MARKER = "<!-- dptopic-cli -->"
PAGE = "reference/cli.md"


def _subcommands(parser: argparse.ArgumentParser) -> dict:
    """``{name: (parser, one-line help)}`` of a parser's sub-commands, in the order it lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            seen, out = set(), {}
            for name, sub in action.choices.items():       # aliases map to the same parser: list it once
                if id(sub) not in seen:
                    seen.add(id(sub))
                    out[name] = (sub, helps.get(name))
            return out
    return {}


def _text(s: str | None) -> str:
    """Help text as Markdown: one line, HTML and Markdown's own characters escaped."""
    s = " ".join((s or "").split())
    s = html.escape(s, quote=False)
    return re.sub(r"([\\`*_\[\]|])", r"\\\1", s)


def _option(action: argparse.Action) -> str:
    names = ", ".join(action.option_strings) or action.dest
    if action.nargs != 0 and action.option_strings:
        metavar = action.metavar
        if metavar is None:
            metavar = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()
        if isinstance(metavar, tuple):
            metavar = " ".join(metavar)
        names += f" {metavar}"
    return f"`{names}`"


def _usage(parser: argparse.ArgumentParser) -> str:
    lines = parser.format_usage().strip().removeprefix("usage: ").splitlines()
    return "\n".join([lines[0], *(re.sub(r"^ {7}", "", line) for line in lines[1:])])


def _section(parser: argparse.ArgumentParser, summary: str | None, words: list[str], level: int) -> list[str]:
    out = [f"{'#' * level} {' '.join(words)}", ""]
    for text in dict.fromkeys(t for t in (summary, parser.description) if t and t != argparse.SUPPRESS):
        out += [_text(text), ""]
    out += ["```text", _usage(parser), "```", ""]
    formatter = parser._get_formatter()
    for group in parser._action_groups:
        rows = []
        for action in group._group_actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            rows.append(f"| {_option(action)} | {_text(formatter._expand_help(action) if action.help else '')} |")
        if rows:
            out += [f"**{_text(group.title)}**", "", "| option | what it does |", "|---|---|", *rows, ""]
    subs = _subcommands(parser)
    if subs:
        out += ["Sub-commands: " + ", ".join(f"`{name}`" for name in subs) + ".", ""]
        for name, (sub, summary) in subs.items():
            out += _section(sub, summary, [*words, name], min(level + 1, 4))
    return out


def cli_markdown() -> str:
    """The reference for every command, in the order ``dptopic --help`` lists them."""
    from dptopic.cli.main import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"                        # usage lines wrap the same on every machine
    try:
        parser = build_parser()
        out = []
        for name, (sub, summary) in _subcommands(parser).items():
            out += _section(sub, summary, ["dptopic", name], 2)
        return "\n".join(out)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri == PAGE and MARKER in markdown:
        return markdown.replace(MARKER, cli_markdown())
    return markdown
