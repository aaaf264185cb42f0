"""The command line's own sentences for library lines (cli/_flag_templates.py): the library names such a line by a key
and never writes the command line's wording; the command line keeps one sentence a key."""
import ast
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest

from dptopic.cli._flag_templates import FLAG_TEMPLATES
from dptopic.errors import ParameterError

SRC = Path(__file__).resolve().parents[2] / "src" / "dptopic"

STILL_WRITTEN = {"contributor/client.py": 1, "corpus/private_vocabulary.py": 1}
"""The library's calls that still pass ``flag_template=``, by module, neither expressible as a key (a fixed sentence):
the contributor's client adds a note made at run time (what was acknowledged, what was spent) to a line it caught,
whatever that line is, so it carries the caught line's own command-line sentence with the note after it (it writes
no sentence of its own); private_vocabulary's line begins with the cuts it found, one to six parameters known only
at run time (each written as its flag on the command line), which no one sentence with fixed fields can name."""


LINE_MAKERS = ("ParameterLine", "ParameterText", "_refusal", "refuse", "_state_refusal")
"""The calls that make a library line besides the errors' and warnings' classes: ``_io/output.py``'s refusal of an
output path, ``datasets.check_user_corpus``'s ``refuse`` and the contributor's client's refusal of its state
(``_state_refusal``) pass their ``key`` on."""


def _makes_a_line(call: ast.Call) -> bool:
    name = ast.unparse(call.func).rpartition(".")[2]
    return name in LINE_MAKERS or name.endswith(("Error", "Warning"))


def _calls_with(keyword: str, lines_only: bool = True) -> dict:
    """``{module: [the value of each keyword argument]}`` of the calls that make a line (every call unless
    ``lines_only``), over the library (``cli/`` left out)."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("cli/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and (_makes_a_line(node) or not lines_only):
                found.setdefault(rel, []).extend(k.value for k in node.keywords if k.arg == keyword)
    return {rel: values for rel, values in found.items() if values}


def test_the_library_writes_no_sentence_of_the_command_lines():
    counts = {rel: len(values) for rel, values in _calls_with("flag_template", lines_only=False).items()}
    assert counts == STILL_WRITTEN, ("a library line written in the command line's words: give it key='module.what'"
                                     " and its sentence in dptopic/cli/_flag_templates.py")


def test_every_key_the_library_gives_has_a_sentence_and_every_sentence_a_key():
    def given(value) -> set:        # the keys an argument can be: a string, or either branch of a conditional
        if isinstance(value, ast.IfExp):
            return given(value.body) | given(value.orelse)
        return {value.value} if isinstance(value, ast.Constant) and isinstance(value.value, str) else set()

    keys = {key for values in _calls_with("key").values() for value in values for key in given(value)}
    assert keys - set(FLAG_TEMPLATES) == set(), "keys without a sentence in cli/_flag_templates.py"
    assert set(FLAG_TEMPLATES) - keys == set(), "sentences in cli/_flag_templates.py that no library line names"


@pytest.mark.parametrize("key", sorted(FLAG_TEMPLATES))
def test_each_sentence_is_a_template(key):
    list(string.Formatter().parse(FLAG_TEMPLATES[key]))     # a stray brace raises ValueError
    assert "\n" not in FLAG_TEMPLATES[key] and "  " not in FLAG_TEMPLATES[key]


def _ledger_refusal() -> ParameterError:
    from dptopic.dataset_ledger.location import ledger_path

    with pytest.raises(ParameterError) as e:
        ledger_path("", off=True)
    return e.value


def test_a_keyed_line_reads_in_python_words_and_in_the_command_lines_sentence_when_it_renames_a_parameter():
    e = _ledger_refusal()
    assert e.key == "dataset_ledger.location.ledger_path.3"
    assert str(e) == "give ledger or no_ledger, not both."
    flags = {"ledger": "--ledger", "no_ledger": "--no-ledger"}
    assert e.message(flags) == "give --ledger PATH or --no-ledger, not both."
    assert e.message({"other": "--other"}) == str(e)      # no parameter of the line renamed: Python's words


def test_without_the_command_line_the_library_has_no_sentence_of_its_own():
    code = ("from dptopic.dataset_ledger.location import ledger_path\nfrom dptopic.errors import ParameterError\n"
            "try:\n    ledger_path('', off=True)\nexcept ParameterError as e:\n"
            "    print(e.flag_template, e.message({'ledger': '--ledger', 'no_ledger': '--no-ledger'}))\n"
            "import sys\nprint(any(m.startswith('dptopic.cli') for m in sys.modules))\n")
    env = {**os.environ, "PYTHONPATH": str(SRC.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.splitlines() == ["None give --ledger or --no-ledger, not both.", "False"], out
