"""The command line stays a thin front door (CONTRIBUTING.md, "cli/"): it parses flags, calls the library and prints.
Two measures keep it so: its size, and that it reads no private attribute of what the library hands it (a model, a
corpus, a ledger): what a command needs from one is a public name, which a Python user has too."""
import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "src" / "dptopic" / "cli"

MAX_TOTAL_LINES = 4000
"""Issue #68's bound: 7,682 lines before the training run, its checks, calculations and printing moved into the
library; 3,868 after. The command line may not grow back past it."""
MAX_MODULE_LINES = 600

NAMESPACE = frozenset({"a", "ns"})
"""The parsed flags (an ``argparse.Namespace``): the command line's own bookkeeping on them (``a._given``, the flags
the user wrote) is no library object's private state."""

ARGPARSE = frozenset({"_actions", "_defaults", "_negative_number_matcher", "_print_message"})
"""argparse's internals, which it offers no public name for: a parser's actions and defaults (``--help`` by
trainer, the flags given), its pattern of negative numbers, its printer; and on ``argparse.`` itself
(``argparse.HelpFormatter(...)._width``) any name."""

MODULES = frozenset({"os._exit"})
"""Functions of the standard library whose documented name starts with an underscore."""


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_command_line_stays_small():
    sizes = {p.name: _lines(p) for p in sorted(CLI.glob("*.py"))}
    total = sum(sizes.values())
    big = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    assert total <= MAX_TOTAL_LINES and not big, (
        f"cli/ has {total} lines (at most {MAX_TOTAL_LINES}); modules over {MAX_MODULE_LINES}: {big or 'none'};"
        f" the largest: {largest}. Move a rule or a computation a Python user needs too into the library.")


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
