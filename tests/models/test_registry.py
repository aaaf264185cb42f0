"""``dptopic.models.registry``: every public estimator declared once, its facts consistent with its class, and no
other module of the package holding a table of trainer names."""
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dptopic
from dptopic.attacks.lira import ALGORITHMS
from dptopic.errors import DPTopicError
from dptopic.models.base import TopicModel
from dptopic.models.registry import TRAINERS, UNITS, _entries, class_named, for_unit_trainer, trainer, trainer_of
from dptopic.training import UNIT_TRAINERS

SRC = Path(__file__).resolve().parents[2] / "src"


def test_every_public_estimator_of_dptopic_is_in_the_registry():
    public = [getattr(dptopic, n) for n in dptopic.__all__]
    estimators = [c for c in public if isinstance(c, type) and issubclass(c, TopicModel)]
    assert len(estimators) >= 14
    missing = [c.__name__ for c in estimators if trainer_of(c) is None]
    assert missing == []
    assert {t.cls for t in TRAINERS.values()} == set(estimators)


def test_names_and_classes_are_unique():
    entries = _entries()        # TRAINERS is a dict: a repeated name would silently replace the first entry
    assert len({t.name for t in entries}) == len(entries) == len(TRAINERS)
    assert len({t.class_name for t in entries}) == len(entries)
    for t in entries:
        assert t.cls.__name__ == t.class_name, t.name


@pytest.mark.parametrize("name", list(TRAINERS))
def test_every_fact_names_a_real_parameter(name):
    t = TRAINERS[name]
    params = t.parameters()
    assert "n_topics" in params
    assert [p for p in t.flags if p not in params] == []
    assert t.epsilon is None or t.epsilon in params
    assert [c for c in t.components if c not in params] == []
    assert all(f is None or f.startswith("--") for f in t.flags.values())


@pytest.mark.parametrize("name", list(TRAINERS))
def test_the_facts_are_consistent(name):
    t = TRAINERS[name]
    assert set(t.units) <= set(UNITS) and set(t.default_for) <= set(t.units)
    assert t.reads in ("corpus", "reports")
    assert (t.audit is None) == (t.not_audited is not None), "an unaudited trainer says why"
    assert t.audit in (None, "lira", "lira+release")
    if t.secure is not None:
        assert "secure" in t.parameters() and t.secure.startswith("secure mode")
    if t.epsilon is not None:
        assert t.units, "a trainer with a total epsilon states its unit"
    assert t.summary and "\n" not in t.summary


def test_each_unit_has_one_trainer_and_the_old_tables_are_views():
    for unit in UNITS:
        assert [t.name for t in TRAINERS.values() if unit in t.default_for] == [for_unit_trainer(unit).name]
        assert UNIT_TRAINERS[unit] == for_unit_trainer(unit).name
    assert ALGORITHMS == {t.name: t.cls for t in TRAINERS.values() if t.cli and t.audit is not None}
    assert set(ALGORITHMS) | {"ldp-doc"} == {t.name for t in TRAINERS.values() if t.cli}
    with pytest.raises(DPTopicError, match="invalid unit 'page'"):
        for_unit_trainer("page")


def test_look_ups():
    assert trainer("docdp-cooc").cls is dptopic.DocDPCooccurrence
    assert trainer_of(dptopic.CDPLDAPlus(n_topics=2)).name == "cdp+"     # its own class, not its base's
    assert trainer_of(dict) is None
    assert class_named("LocalDocumentLDA") is dptopic.LocalDocumentLDA
    assert class_named("TopicModel") is None and class_named("_PrivateGibbs") is None
    with pytest.raises(DPTopicError) as caught:
        trainer("cdp++")
    assert "choose one of lda, hdp" in str(caught.value) and "\n" not in str(caught.value)


def test_a_budget_constructor_s_parameters_count():
    assert "epsilon" in trainer("svi").parameters()             # DPSVI.from_budget
    assert "epsilon" not in inspect.signature(dptopic.DPSVI.__init__).parameters
    assert trainer("fed").flag("user_epsilon") == "--user-budget"    # FedLDA.from_user_budget
    assert trainer("lda").flag("n_topics") == "--topics" and trainer("svi").flag("eta") == "--beta"
    assert trainer("docdp").flag("n_iter") is None      # docdp reads no --iterations


def test_reading_the_registry_imports_no_estimator():
    """The command line builds its parser and help from the registry without numba, scipy or scikit-learn."""
    code = ("import sys; from dptopic.models.registry import TRAINERS; names = list(TRAINERS);"
            " print(any(m in sys.modules for m in ('numpy', 'numba', 'scipy', 'sklearn', 'dptopic.models.lda')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=120)
    assert r.stdout.strip() == "False", r.stderr


# the trainer names of `dptopic train --algorithm`, quoted as a Python or JSON string literal
NAME = re.compile(r"""["'](lda|cdp|cdp\+|hdp|lp|olp|fed|online-vb|svi|docdp|docdp-cooc|ldp-doc)["']""")
MAX_FILES_NAMING_DOCDP_COOC = 5
"""Files of src/ that write "docdp-cooc" (7 before the registry; the registry, and what other parts of the redesign
still rewrite: cli/train.py, cli/_demo_figures.py, advice.py, and utility_table.json, which is data)."""


def _files_naming(pattern) -> dict:
    out = {}
    for path in sorted((SRC / "dptopic").rglob("*")):
        if path.suffix in (".py", ".json") and path.is_file():
            n = len(pattern.findall(path.read_text(encoding="utf-8")))
            if n:
                out[str(path.relative_to(SRC))] = n
    return out


def test_no_module_outside_the_registry_holds_a_table_of_trainer_names():
    cooc = _files_naming(re.compile(r"""["']docdp-cooc["']"""))
    every = _files_naming(NAME)
    print(f"files of src/ writing 'docdp-cooc': {len(cooc)}; any trainer name: {len(every)} files,"
          f" {sum(every.values())} occurrences")
    assert "dptopic/models/registry.py" in cooc
    assert len(cooc) <= MAX_FILES_NAMING_DOCDP_COOC, cooc
    # the modules whose tables became look-ups name no trainer as data any more
    for moved in ("dptopic/training/by_unit.py", "dptopic/models/base.py",
                  "dptopic/models/_document_base.py", "dptopic/cli/_train_help.py", "dptopic/cli/_train_flags.py"):
        assert moved not in every, (moved, every.get(moved))


def test_unit_algorithm_rule_is_one_for_python_and_the_command_line():
    """Under the user unit only a trainer with both the document and the user unit may be named; any other unit picks
    its trainer itself. dptopic.train and dptopic train (and its --help) write the one rule in their own names."""
    from dptopic.models.registry import unit_algorithm_error
    from dptopic.training import resolve_algorithm

    both = [t.name for t in TRAINERS.values() if {"document", "user"} <= set(t.units)]
    assert [n for n in TRAINERS if unit_algorithm_error("user", n) is None] == both
    assert unit_algorithm_error(None, "lda") is None and unit_algorithm_error("word", None) is None
    err = unit_algorithm_error("user", "lda")
    assert err.parameter == "algorithm" and err.value == "lda" and set(err.parameters) == {"algorithm", "unit"}
    assert str(err).startswith("unit='user' needs a trainer") and "algorithm='lda' cannot give it." in str(err)
    flags = err.message({"unit": "--unit", "algorithm": "--algorithm"})
    assert flags.startswith("--unit user needs") and flags.endswith("--algorithm lda cannot give it: drop --algorithm,"
                                                                    " or choose one of those.")
    with pytest.raises(DPTopicError, match="^unit='user' needs a trainer"):
        resolve_algorithm("lda", "user")
    word = unit_algorithm_error("word", "hdp")          # the command line refuses even the unit's own trainer
    assert word.message({"unit": "--unit", "algorithm": "--algorithm"}).startswith("--unit picks the trainer itself")
    assert resolve_algorithm("hdp", "word") == "hdp"    # which dptopic.train takes
    with pytest.raises(DPTopicError, match=r"^unit='word' picks the trainer itself: leave algorithm out"):
        resolve_algorithm("lda", "word")


ATTRIBUTES_PENDING = {"OLPLDA", "LocalDocumentLDA", "SecureSumTopics"}
"""Estimators whose docstring has no Attributes section yet (issue #77, item 3): a list that only shrinks."""


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_every_estimator_documents_its_parameters_and_its_fitted_attributes_with_their_shapes(name):
    """As scikit-learn's estimators do: a Parameters section, and an Attributes section that gives
    ``components_``'s shape (9 of 14 estimators had none)."""
    import inspect

    cls = TRAINERS[name].cls
    doc = inspect.getdoc(cls) or ""
    if cls.__name__ in ATTRIBUTES_PENDING:
        assert "\nAttributes\n---" not in doc, f"{cls.__name__} has its Attributes now: drop it from the pending list"
        return
    assert "\nParameters\n---" in doc and "\nAttributes\n---" in doc, cls.__name__
    attributes = doc.split("\nAttributes\n", 1)[1]
    assert "components_" in attributes and re.search(r"shape \(|\(K, ?V\)|K×V", attributes), cls.__name__
