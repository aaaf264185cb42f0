"""The package's layers (``[tool.importlinter]`` in pyproject.toml): imports run from ``cli`` down to ``kernels`` and
never up, so a module can be read knowing only the layers below it. The check is import-linter's, over every import
in ``src/dptopic``, those inside functions included."""
import ast
import io
import os
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_READ: dict = {}
"""What this module's checks read of a source text (its syntax tree, every node, the imports inside its functions,
the lines of its comments), each made once (every check reads the whole of src/dptopic; the trees are read, never
changed); emptied when the module's tests end."""


@pytest.fixture(autouse=True, scope="module")
def _read_each_text_once():
    yield
    _READ.clear()


def _once(kind: str, text: str, make):
    key = (kind, text)
    if key not in _READ:
        _READ[key] = make()
    return _READ[key]


def _tree(text: str) -> ast.Module:
    """``ast.parse(text)``."""
    return _once("tree", text, lambda: ast.parse(text))


def _nodes(text: str) -> list:
    """Every node of ``text``'s tree (``ast.walk``'s order)."""
    return _once("nodes", text, lambda: list(ast.walk(_tree(text))))


def _imports_inside_functions(text: str) -> list:
    """The import statements of ``text`` that lie inside a function or method (at any depth), in the order of the
    source."""
    def make() -> list:
        found = []

        def visit(node, inside: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                    found.append(child)
                visit(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))
        visit(_tree(text), False)
        return found
    return _once("inside", text, make)


def _commented_lines(text: str) -> set:
    """The numbers of ``text``'s lines that hold a ``#`` comment."""
    return _once("comments", text, lambda: {t.start[0] for t in tokenize.generate_tokens(io.StringIO(text).readline)
                                            if t.type == tokenize.COMMENT})


def _lint(config: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([str(exe), "--config", str(config), "--no-cache"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_imports_keep_to_the_layers():
    run = _lint(ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "4 kept, 0 broken" in run.stdout


def test_the_trust_boundary_contracts_read_the_imports(tmp_path):
    """The contracts that keep the server and the contributor's code apart are checked against the imports: the same
    contract aimed at a package the server does import (the protocol) is broken."""
    text = (ROOT / "pyproject.toml").read_text()
    aimed = text.replace('forbidden_modules = ["dptopic.contributor"]', 'forbidden_modules = ["dptopic.protocol"]')
    assert aimed != text
    config = tmp_path / "pyproject.toml"
    config.write_text(aimed)
    run = _lint(config)
    assert run.returncode != 0 and "the server never imports the contributor's code BROKEN" in run.stdout, \
        run.stdout[-2000:]


def test_the_secure_sum_modes_contract_reads_the_imports(tmp_path):
    """The contract that keeps the contributor's secure-sum modes free of its transport is checked against the
    imports: aimed at a module the committee mode does import (the default mode's), it is broken."""
    text = (ROOT / "pyproject.toml").read_text()
    aimed = text.replace('forbidden_modules = ["dptopic.contributor.client", "dptopic.contributor.secure_sum.client",',
                         'forbidden_modules = ["dptopic.contributor.secure_sum.default", "dptopic.contributor.client",')
    assert aimed != text
    config = tmp_path / "pyproject.toml"
    config.write_text(aimed)
    run = _lint(config)
    assert run.returncode != 0 and "the contributor's secure-sum modes never import its transport BROKEN" in \
        run.stdout, run.stdout[-2000:]


def test_the_contributor_and_the_server_live_in_their_own_folders():
    """What runs on a contributor's machine is found by its folder: the randomizers, the FedLDA client and the
    secure-sum modules in dptopic/contributor/secure_sum, and the old mixed folders are gone."""
    src = ROOT / "src" / "dptopic"
    for name in ("randomizer.py", "document_randomizer.py", "fedlda.py", "client.py", "secure_sum/default.py",
                 "secure_sum/committee.py", "secure_sum/cohorts.py", "secure_sum/client.py",
                 "secure_sum/cohort_client.py"):
        assert (src / "contributor" / name).is_file(), name
    assert not [p.name for p in (src / "contributor").glob("*.py") if p.stem.startswith(("secure", "cohort"))]
    assert not (src / "local").exists() and not (src / "federated").exists()
    assert not (src / "service" / "client.py").exists() and not (src / "service" / "secure_client.py").exists()


def test_the_servers_secure_sum_lives_in_one_folder_and_keeps_its_own_maths():
    """The server's side of the secure sum is one package, ``service/secure_sum/`` (a module per mode, as
    ``protocol/secure_sum/``), with no module left at the old places; what only the server computes (the committee's
    unmasking and header check, the coordinator's combined sum, the people a directory names) is there too, and the
    protocol keeps what both sides agree on."""
    import importlib

    service = ROOT / "src" / "dptopic" / "service"
    for name in ("default", "committee", "cohorts", "cohort_app", "committee_cohorts"):
        assert (service / "secure_sum" / f"{name}.py").is_file(), name
    for old in ("secure_sum.py", "secure_committee.py", "cohorts.py", "cohort_app.py", "committee_cohorts.py"):
        assert not (service / old).exists(), old
    moved = {"service.secure_sum.committee_state": ("protocol.secure_sum.committee", "unmask_committee_sum"),
             "service.secure_sum.committee": ("protocol.secure_sum.committee", "check_header"),
             "service.secure_sum.cohorts": ("protocol.secure_sum.cohorts", "combine"),
             "service.ledger": ("protocol.secure_sum.person_ids", "people_of")}
    for server, (protocol, *names) in moved.items():
        for name in names:
            assert hasattr(importlib.import_module(f"dptopic.{server}"), name), (server, name)
            assert not hasattr(importlib.import_module(f"dptopic.{protocol}"), name), (protocol, name)


def test_the_secure_sums_two_largest_modules_are_split_by_purpose():
    """Each side's ``default.py`` keeps its mode's own part; what every mode shares is a module named by what it does
    (the protocol's plan, graph, crypto, messages and ring; the contributor's checks, masks, statistics and state
    file), and no module of the secure sum's three folders is over 600 lines."""
    src = ROOT / "src" / "dptopic"
    parts = {"protocol": ("default", "plan", "graph", "crypto", "messages", "ring", "shamir"),
             "contributor": ("default", "checks", "masks", "person_statistics", "state")}
    for side, names in parts.items():
        for name in names:
            assert (src / side / "secure_sum" / f"{name}.py").is_file(), (side, name)
    long = [f"{path.relative_to(src)} {n}" for side in ("protocol", "contributor", "service")
            for path in sorted((src / side / "secure_sum").glob("*.py"))
            if (n := path.read_text(encoding="utf-8").count("\n")) > 600]
    assert not long, "secure-sum modules over 600 lines: " + ", ".join(long)


def test_the_check_catches_an_import_running_up(tmp_path):
    """The same contract with two layers swapped is broken: the check reads the imports, not just the file."""
    text = (ROOT / "pyproject.toml").read_text()
    swapped = text.replace('"dptopic.models",', '"@MODELS@",').replace('"dptopic.reporting",', '"dptopic.models",') \
        .replace('"@MODELS@",', '"dptopic.reporting",')
    assert swapped != text
    config = tmp_path / "pyproject.toml"
    config.write_text(swapped)
    run = _lint(config)
    assert run.returncode != 0 and "BROKEN" in run.stdout, run.stdout[-2000:]


# ------------------------------------------------------------------ import cycles and private names across packages
def _module_level_lines(path: Path) -> set:
    """The line numbers of the imports a module runs when it is imported: those of its top-level code (under ``if``,
    ``try`` and ``with`` too), not those inside functions or under ``if TYPE_CHECKING``."""
    lines: set = set()

    def visit(body):
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
            elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for part in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                    visit(part)
            elif isinstance(node, ast.With):
                visit(node.body)

    visit(_tree(path.read_text(encoding="utf-8")).body)
    return lines


def _strong_groups(modules: list, edges: list) -> list:
    """The groups of ``modules`` that ``edges`` (pairs of indices) join in a circle (strongly connected components of
    more than one module), each sorted, in sorted order."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    rows, cols = zip(*edges) if edges else ((), ())
    adjacency = csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(len(modules), len(modules)))
    _, label = connected_components(adjacency, directed=True, connection="strong")
    groups = [sorted(modules[i] for i in np.flatnonzero(label == g)) for g in np.unique(label)]
    return sorted(g for g in groups if len(g) > 1)


def module_level_cycles(package: str) -> list:
    """The groups of modules of ``package`` whose module-level imports run in a circle (each group a strongly
    connected component of the import graph, from grimp, the library import-linter is built on), as sorted lists."""
    import importlib.util

    import grimp

    graph = grimp.build_graph(package, cache_dir=None)
    modules = sorted(graph.modules)
    index = {m: i for i, m in enumerate(modules)}
    edges = []
    for m in modules:
        lines = _module_level_lines(Path(importlib.util.find_spec(m).origin))
        for imported in graph.find_modules_directly_imported_by(m):
            if any(d["line_number"] in lines for d in graph.get_import_details(importer=m, imported=imported)):
                edges.append((index[m], index[imported]))
    return _strong_groups(modules, edges)


def import_cycles_within_packages(package: str) -> list:
    """The groups of modules of one package of ``package`` (``dptopic.corpus``, ``dptopic.models``, ...) whose imports
    run in a circle, counting every import: those inside functions too."""
    import grimp

    graph = grimp.build_graph(package, cache_dir=None)
    modules = sorted(graph.modules)
    index = {m: i for i, m in enumerate(modules)}

    def home(m):
        return m.split(".")[:2]

    edges = [(index[m], index[imported]) for m in modules for imported in graph.find_modules_directly_imported_by(m)
             if home(m) == home(imported)]
    return _strong_groups(modules, edges)


def test_no_module_level_import_cycle():
    """No module of dptopic imports, at module level, one that imports it back (directly or round a longer circle):
    each module can be read knowing only those it imports."""
    pytest.importorskip("grimp")
    assert module_level_cycles("dptopic") == []


def test_no_package_has_an_import_circle_counting_imports_inside_functions():
    """Within a package the modules import one way, whether the import runs at module level or inside a function:
    ``corpus.py`` builds on ``records.py`` (the readers of each file format) and ``readers.py`` and ``shards.py`` build
    on ``corpus.py``, never back."""
    pytest.importorskip("grimp")
    circles = import_cycles_within_packages("dptopic")
    assert not [c for c in circles if c[0].startswith("dptopic.corpus.")], circles
    assert circles == []


def _write_package(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_cycle_check_finds_a_circle_and_ignores_one_inside_a_function(tmp_path, monkeypatch):
    pytest.importorskip("grimp")
    _write_package(tmp_path, {"cyc/__init__.py": "", "cyc/a.py": "from . import b\n", "cyc/b.py": "from . import c\n",
                              "cyc/c.py": "from . import a\n", "cyc/d.py": "from . import e\n",
                              "cyc/e.py": "def f():\n    from . import d\n"})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_level_cycles("cyc") == [["cyc.a", "cyc.b", "cyc.c"]]


def test_the_circle_check_within_packages_counts_imports_inside_functions(tmp_path, monkeypatch):
    pytest.importorskip("grimp")
    _write_package(tmp_path, {"cyc2/__init__.py": "", "cyc2/p/__init__.py": "", "cyc2/q/__init__.py": "",
                              "cyc2/p/a.py": "from . import b\n", "cyc2/p/b.py": "def f():\n    from . import a\n",
                              "cyc2/p/c.py": "from ..q import d\n", "cyc2/q/d.py": "def g():\n    from ..p import c\n"})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles_within_packages("cyc2") == [["cyc2.p.a", "cyc2.p.b"]]      # p.c <-> q.d crosses packages


SHARED_ROOT_MODULES = ("_io", "_validation", "_progress", "_lazy_names", "_shared_filters", "_memory")
"""dptopic's own private modules at its root, shared by every package (they belong to no package)."""


def private_imports_across_packages(src: Path, package: str = "dptopic") -> list:
    """``(importer, line, imported)`` for each import from another package of ``package`` of a private module
    (``models._document_base``) or a private name (``from ..corpus.corpus import _open_text``); the shared root
    modules (:data:`SHARED_ROOT_MODULES`) excepted."""
    found = []
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        parts = parts[:-1] if is_package else parts
        for node in _nodes(path.read_text(encoding="utf-8")):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = parts if is_package else parts[:-1]
                target = base[:len(base) - node.level + 1] + (node.module.split(".") if node.module else [])
            else:
                target = (node.module or "").split(".")
            if target[0] != package or target[:2] == parts[:2]:
                continue            # outside the package, or inside the importer's own package
            names = [a.name for a in node.names]
            inner = target[1:] if len(target) > 1 else names      # ``from .. import _io``: the root module _io
            if inner and inner[0] in SHARED_ROOT_MODULES:
                continue
            private = [p for p in target[1:] + names if p.startswith("_") and not p.startswith("__")]
            if private:
                found.append((".".join(parts), node.lineno, ".".join(target), private))
    return found


def test_no_package_imports_another_package_s_private_names():
    """A name another package uses is public (no leading underscore), so that its owner knows it is used elsewhere."""
    assert private_imports_across_packages(ROOT / "src") == []


def test_the_private_name_check_finds_one(tmp_path):
    _write_package(tmp_path, {"dptopic/__init__.py": "", "dptopic/_io.py": "", "dptopic/a/__init__.py": "",
                              "dptopic/a/m.py": "def _hidden():\n    pass\n", "dptopic/a/_inner.py": "",
                              "dptopic/b/__init__.py": "",
                              "dptopic/b/n.py": "from ..a.m import _hidden\nfrom ..a import _inner\nfrom .. import _io\n"
                                                "from ..a.m import __doc__\n",
                              "dptopic/a/own.py": "from .m import _hidden\n"})
    assert private_imports_across_packages(tmp_path) == [("dptopic.b.n", 1, "dptopic.a.m", ["_hidden"]),
                                                         ("dptopic.b.n", 2, "dptopic.a", ["_inner"])]


# ------------------------------------------------------------------ imports inside functions say why
IMPORTS_SAY_WHY = ("cli", "kernels", "mechanisms", "accounting", "dataset_ledger", "corpus", "evaluation", "moments",
                   "backends", "local", "federated", "_io", "datasets.py", "advice.py", "training", "models",
                   "reporting", "attacks", "service", "experiments")
"""The packages and modules of dptopic whose imports inside a function each carry a ``#`` comment on their line."""
NOT_YET = ()
"""Edited by others this round; checked once they are merged."""


def unexplained_imports(root: Path, places=IMPORTS_SAY_WHY, skip=NOT_YET) -> list:
    """``(path, line, import)`` for each import inside a function (a method's too) with no ``#`` comment on any of
    its lines, in ``places`` (folders and modules under ``root``): an import inside a function says why it is not at
    the top (a heavy or optional dependency, start-up time, a circle it avoids), or moves there."""
    found = []
    for place in places:
        paths = [root / place] if place.endswith(".py") else sorted((root / place).rglob("*.py"))
        for path in paths:
            if path.relative_to(root).as_posix() in skip:
                continue
            text = path.read_text(encoding="utf-8")
            commented = _commented_lines(text)
            for node in _imports_inside_functions(text):
                if not commented & set(range(node.lineno, (node.end_lineno or node.lineno) + 1)):
                    found.append((path.relative_to(root).as_posix(), node.lineno, ast.unparse(node)))
    return sorted(set(found))


def test_every_import_inside_a_function_says_why():
    assert unexplained_imports(ROOT / "src" / "dptopic") == []


def test_the_import_check_finds_an_unexplained_one(tmp_path):
    _write_package(tmp_path, {"kernels/a.py": "import os\n\ndef f():\n    import json\n"
                                              "    from . import b  # a circle\n"
                                              "    class C:\n        def g(self):\n            import re\n",
                              "kernels/b.py": "def h():\n    from .a import (f,  # why\n                    os)\n",
                              "advice.py": "def k():\n    import sys\n", "other/c.py": "def m():\n    import io\n"})
    assert unexplained_imports(tmp_path, ("kernels", "advice.py")) == [
        ("advice.py", 2, "import sys"), ("kernels/a.py", 4, "import json"), ("kernels/a.py", 8, "import re")]


def shadowing_imports(root: Path) -> list:
    """``(path, line, name)`` for each import inside a function of a name the module already imports at its top: the
    import makes the name local to the whole function, so a branch that skips it reads an unbound name."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        top = {(a.asname or a.name).split(".")[0] for node in _tree(text).body
               if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
        for node in _imports_inside_functions(text):
            found += [(str(path.relative_to(root)), node.lineno, a.asname or a.name.split(".")[0])
                      for a in node.names if (a.asname or a.name.split(".")[0]) in top]
    return found


def test_no_function_imports_a_name_its_module_already_imports():
    assert shadowing_imports(ROOT / "src" / "dptopic") == []


def test_the_shadowing_check_finds_a_second_import(tmp_path):
    _write_package(tmp_path, {"m.py": "import warnings\n\n\ndef f(x):\n    if x:\n        import warnings\n"
                                      "        warnings.warn('a')\n    warnings.warn('b')\n"})
    assert shadowing_imports(tmp_path) == [("m.py", 6, "warnings")]


# ------------------------------------------------------------------ no import the layer check cannot see; no old names
DYNAMIC_IMPORTS = {
    "_lazy_names.py": "a package's public names, imported from its own modules on first read (PEP 562)",
    "models/registry.py": "a trainer's class, from the models/ module its registry entry names, on first read",
    "accounting/_lazy.py": "dp-accounting's modules (a third-party package) on first use",
    "cli/main.py": "a command's module under dptopic.cli, from the command table (COMMANDS), when that command runs",
}
"""The modules that import by a name computed at run time (``importlib.import_module``, ``__import__``), which the
layer check cannot follow; each loads a module of its own package or a third-party one, so no arrow between
layers hides there."""


def dynamic_imports(root: Path) -> list:
    """``(module, line)`` for each ``import_module``/``__import__`` under ``root`` (a call, or the name imported)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in _nodes(path.read_text(encoding="utf-8")):
            name = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else
                    node.name if isinstance(node, ast.alias) else None)
            if name in ("import_module", "__import__"):
                found.append((path.relative_to(root).as_posix(), node.lineno))
    return sorted(set(found))


def test_every_import_is_one_the_layer_check_sees():
    found = [f"{m}:{line}" for m, line in dynamic_imports(ROOT / "src" / "dptopic")
             if m not in DYNAMIC_IMPORTS]
    assert not found, ("imports by a computed name, which the layer check cannot follow (import the module by its"
                       " name, inside the function if start-up must stay light, with a comment saying why): "
                       + ", ".join(found))


def test_the_dynamic_import_check_finds_each_spelling(tmp_path):
    _write_package(tmp_path, {"a.py": "import importlib\nm = importlib.import_module('x')\n",
                              "b.py": "from importlib import import_module\n",
                              "c.py": "lock = __import__('threading').Lock()\n", "d.py": "import threading\n"})
    assert dynamic_imports(tmp_path) == [("a.py", 2), ("b.py", 1), ("c.py", 1)]


OLD_NAME_WORDS = ("old name", "old home", "old path", "importable from here", "import from here still",
                  "importable for one release", "old spelling")


def old_name_devices(root: Path) -> list:
    """``(module, line)`` for each line under ``root`` that keeps a name importable where it no longer lives (an alias,
    a re-export, a module ``__getattr__`` for moved names), found by what such a line says it is."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(word in line.lower() for word in OLD_NAME_WORDS):
                found.append((path.relative_to(root).as_posix(), number))
    return found


def test_no_module_keeps_an_old_name():
    """A moved module or renamed name is imported from where it lives, everywhere (CONTRIBUTING.md): nothing outside
    this repository imports dptopic's old paths, so no alias, re-export or finder keeps them."""
    root = ROOT / "src" / "dptopic"
    assert not (root / "_moved.py").exists()
    found = [f"{m}:{line}" for m, line in old_name_devices(root)]
    assert not found, "names kept under an old name or home: " + ", ".join(found)


MODULE_GETATTRS = {
    "errors.py": "NotFittedError, made on first use so that the command line does not import scikit-learn",
    "__init__.py": "a package's public names, each read from the module it lives in on first use (_lazy_names.py)",
    **dict.fromkeys(("accounting/__init__.py", "attacks/__init__.py", "contributor/__init__.py",
                     "kernels/__init__.py", "mechanisms/__init__.py", "models/__init__.py", "experiments/__init__.py",
                     "protocol/secure_sum/__init__.py"),
                    "the same, for that package"),
}
"""The modules with a module ``__getattr__`` (PEP 562), and why: each makes a name that lives in that package on
first read; none serves a name that moved away (the device three old paths kept until the last of them went)."""


def module_getattrs(root: Path) -> list:
    """The modules under ``root`` that define or assign a module-level ``__getattr__``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in _tree(path.read_text(encoding="utf-8")).body:
            names = ([node.name] if isinstance(node, ast.FunctionDef) else
                     [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                     if isinstance(node, ast.Assign) else [])
            if "__getattr__" in names:
                found.append(path.relative_to(root).as_posix())
    return found


def test_only_the_named_modules_make_names_on_first_read():
    assert module_getattrs(ROOT / "src" / "dptopic") == sorted(MODULE_GETATTRS)


def test_the_module_getattr_check_sees_a_function_and_an_assignment(tmp_path):
    (tmp_path / "a.py").write_text("def __getattr__(name):\n    raise AttributeError(name)\n")
    (tmp_path / "b.py").write_text("__getattr__, __dir__ = make()\n")
    (tmp_path / "c.py").write_text("class C:\n    def __getattr__(self, name):\n        return 1\n")
    assert module_getattrs(tmp_path) == ["a.py", "b.py"]


# ------------------------------------------------------------------ models/ holds the estimators
MODELS_BESIDE_ESTIMATORS = {"base": "the estimators' base class", "registry": "the table of the trainers",
                            "blobs": "a saved model as text and bytes (model.save's format)"}


def test_models_holds_the_estimators_and_not_the_run_machinery():
    """Every public module of ``dptopic/models`` defines an estimator (a ``TopicModel``), but for the few named
    above: the run's machinery (the dataset ledger's charge, the search, the unit's trainer) lives in the packages
    named for what it does (``dataset_ledger/charge.py``, ``training/``)."""
    import importlib
    import inspect
    import pkgutil

    import dptopic.models as models
    from dptopic.models.base import TopicModel

    others = []
    for info in pkgutil.iter_modules(models.__path__):
        if info.name.startswith("_") or info.name in MODELS_BESIDE_ESTIMATORS:
            continue
        module = importlib.import_module(f"dptopic.models.{info.name}")
        if not any(inspect.isclass(c) and issubclass(c, TopicModel) and c.__module__ == module.__name__
                   for c in vars(module).values()):
            others.append(info.name)
    assert others == []
    assert (ROOT / "src" / "dptopic" / "dataset_ledger" / "charge.py").is_file()


def names_taken_from(src: Path, module: str, under: tuple) -> dict:
    """``{importer: names}``: what each module in the folders ``under`` of ``src/dptopic`` imports from ``module``
    (``"advice"``: ``dptopic.advice``), at module level or inside a function."""
    found: dict = {}
    for folder in under:
        for path in sorted((src / "dptopic" / folder).rglob("*.py")):
            for node in _nodes(path.read_text(encoding="utf-8")):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == module and (
                        node.level or (node.module or "").startswith("dptopic.")):
                    found.setdefault(path.relative_to(src / "dptopic").as_posix(), set()).update(
                        a.name for a in node.names)
    return found


def test_the_forecast_sits_below_the_estimators_and_no_import_runs_up():
    """A trainer's rules live with it: the refusal of ``dptopic.for_unit`` in the registry (``models/registry.py``),
    the units' bounds and defaults in ``accounting/units.py``, DocDPCooccurrence's epsilon floor and HDP-LDA's
    word-budget rule beside their plans (``accounting/plan.py``, ``accounting/budget.py``); ``advice.py`` reads them
    and holds only the forecast. DocDPCooccurrence's ``fit`` and the training run warn with that one forecast
    (``too_small_message``), so advice sits below the models, reads nothing of theirs, and the layer contract ignores
    no import: none runs up."""
    import tomllib

    taken = names_taken_from(ROOT / "src", "advice", ("models", "training"))
    assert taken == {"models/docdp_cooc.py": {"too_small_message"}, "training/run.py": {"too_small_message"}}
    tree = ast.parse((ROOT / "src" / "dptopic" / "advice.py").read_text("utf-8"))
    modules = {(n.level, n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not [m for _, m in modules if m.split(".")[0] in ("models", "training") or m.startswith("dptopic.models")]
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")
    assert layers["layers"].index("dptopic.models") < layers["layers"].index("dptopic.advice") < \
        layers["layers"].index("dptopic.contributor")
    assert not [c["name"] for c in contracts if c.get("ignore_imports")]


def test_the_names_taken_from_advice_are_found_in_both_spellings(tmp_path):
    _write_package(tmp_path, {"dptopic/models/a.py": "from ..advice import X\n",
                              "dptopic/models/b.py": "def f():\n    from dptopic.advice import Y, Z  # why\n",
                              "dptopic/models/c.py": "from ..advisor import W\nfrom .advice_text import V\n"})
    assert names_taken_from(tmp_path, "advice", ("models",)) == {"models/a.py": {"X"}, "models/b.py": {"Y", "Z"}}
