"""The command line stays a thin front door (CONTRIBUTING.md, "cli/"): it parses flags, calls the library and prints.
Three measures keep it so: the library speaks Python (no ``--flag`` text outside ``cli/``: a refusal names parameters,
and the command line alone writes them as flags, through ``cli/_flags.py``), no command module grows past a size a
reader takes in at once, and the command line reads no private attribute of what the library hands it (a model, a
corpus, a ledger): what a command needs from one is a public name, which a Python user has too."""
import ast
import io
import re
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "dptopic"
CLI = SRC / "cli"

MAX_MODULE_LINES = 600

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")
"""A command-line flag written in text (``--topics``, ``--no-noise``); a dash rule (``a -- b``) is none."""

NAMESPACE = frozenset({"a", "ns"})
"""The parsed flags (an ``argparse.Namespace``): the command line's own bookkeeping on them (``a._given``, the flags
the user wrote) is no library object's private state."""

ARGPARSE = frozenset({"_actions", "_defaults", "_negative_number_matcher", "_print_message"})
"""argparse's internals, which it offers no public name for: a parser's actions and defaults (``--help`` by
trainer, the flags given), its pattern of negative numbers, its printer; and on ``argparse.`` itself
(``argparse.HelpFormatter(...)._width``) any name."""

MODULES = frozenset({"os._exit"})
"""Functions of the standard library whose documented name starts with an underscore."""


def private_reads(source: str) -> list:
    """``(line, receiver, attribute)`` for each read of a single-underscore attribute in ``source``: ``x._name`` and
    ``getattr``/``hasattr``/``setattr(x, "_name", ...)``; dunders are not private."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            receiver, name = node.value, node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr", "setattr", "delattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            receiver, name = node.args[0], node.args[1].value
        else:
            continue
        if name.startswith("_") and not name.startswith("__"):
            found.append((node.lineno, ast.unparse(receiver), name))
    return found


def _allowed(module: str, receiver: str, name: str) -> bool:
    if receiver in NAMESPACE or receiver == "self":     # the parsed flags; a CLI class's own state (ArgumentParser)
        return True
    if f"{receiver}.{name}" in MODULES:
        return True
    if name in ARGPARSE or receiver.startswith("argparse."):
        return True
    return False


def test_the_command_line_reads_no_private_attribute():
    offenders = [f"cli/{p.name}:{line}: {receiver}.{name}"
                 for p in sorted(CLI.glob("*.py"))
                 for line, receiver, name in private_reads(p.read_text(encoding="utf-8"))
                 if not _allowed(p.name, receiver, name)]
    assert not offenders, ("the command line reads private attributes (give the library a public name for what it"
                           " needs):\n" + "\n".join(offenders))


def test_the_private_read_check_finds_each_spelling():
    source = ("model._private\ngetattr(model, '_train_stats', None)\nhasattr(type(model), '_training_theta')\n"
              "model.__class__\nmodel.privacy_\na._given\n")
    reads = private_reads(source)
    assert [(r, n) for _, r, n in reads] == [("model", "_private"), ("model", "_train_stats"),
                                             ("type(model)", "_training_theta"), ("a", "_given")]
    assert [_allowed("train.py", r, n) for _, r, n in reads] == [False, False, False, True]
    assert not _allowed("train.py", "split", "_entry_epsilon")      # a pending entry holds in its own module only
    assert _allowed("_train_help.py", "sub.choices['train']", "_actions")       # argparse's
    assert not _allowed("_common.py", "console", "_width")                      # rich's is no argparse internal


def flag_lines(source: str) -> list:
    """The lines of ``source`` on which a string (a message, a docstring, an f-string) writes a ``--flag``."""
    rows = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING:
            for i, line in enumerate(token.string.splitlines()):
                if FLAG.search(line):
                    rows.add(token.start[0] + i)
    return sorted(rows)


def library_flag_text() -> dict:
    """``{module: lines}`` for each module outside ``cli/`` whose strings write a flag."""
    counts = {}
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if not module.startswith("cli/"):
            rows = flag_lines(path.read_text(encoding="utf-8"))
            if rows:
                counts[module] = len(rows)
    return counts


def test_the_library_writes_no_flag():
    """A library message names parameters (``ParameterError``: ``{overwrite}``, ``out=``; a note of advice or a
    server's answer: ``ParameterText``), the command line writes them as flags (cli/_flags.py); a docstring says what a
    parameter does, not which flag sets it. Issue #77 counted 531 string lines with a flag (by grep) outside ``cli/``;
    none is left, and none may come back."""
    found = library_flag_text()
    assert not found, ("library modules write command-line flags in their strings; name the parameter (raise"
                       " ParameterError, or give a ParameterText) and let cli/ write its flag: "
                       + "; ".join(f"{m}: lines {flag_lines((SRC / m).read_text(encoding='utf-8'))}" for m in found))


def test_no_command_module_grows_past_a_reading():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(CLI.glob("*.py"))}
    big = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not big, (f"cli/ modules over {MAX_MODULE_LINES} lines: {big}; a command parses, calls the library and"
                     " prints: move a rule or a computation a Python user needs too into the library")


def test_the_flag_count_finds_each_spelling():
    source = ('x = "pass --overwrite"\ny = f"use --topics {k}"\n"""a docstring\n  naming --no-noise\n"""\n'
              'z = "a -- b"  # --comment\nw = "n_topics"\n')
    assert flag_lines(source) == [1, 2, 4]
