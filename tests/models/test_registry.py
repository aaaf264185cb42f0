"""``dptopic.models.registry``: every public estimator declared once, its facts consistent with its class, and no
other module of the package holding a table of trainer names."""
import inspect
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

import dptopic
from dptopic.attacks.lira import ALGORITHMS
from dptopic.contributor.randomizer import Randomizer
from dptopic.errors import DPTopicError
from dptopic.models.base import TopicModel
from dptopic.models.registry import TRAINERS, UNITS, _entries, class_named, for_unit_trainer, trainer, trainer_of
from dptopic.training import UNIT_TRAINERS
from helpers import SMALL_SETTINGS as SMALL
from helpers import loaded_in_a_new_process

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
    assert t.epsilon is None or t.epsilon in params
    assert [c for c in t.components if c not in params] == []


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
    assert "user_epsilon" in trainer("fed").parameters()      # FedLDA.from_user_budget


def test_reading_the_registry_imports_no_estimator():
    """The command line builds its parser and help from the registry without numba, scipy or scikit-learn."""
    assert loaded_in_a_new_process("from dptopic.models.registry import TRAINERS; names = list(TRAINERS)",
                                   ("numpy", "numba", "scipy", "sklearn", "dptopic.models.lda")) == []


# the trainer names of `dptopic train --algorithm`, quoted as a Python or JSON string literal
NAME = re.compile(r"""["'](lda|cdp|cdp\+|hdp|lp|olp|fed|online-vb|svi|docdp|docdp-cooc|ldp-doc)["']""")
MAX_FILES_NAMING_DOCDP_COOC = 5
"""Files of src/ that write "docdp-cooc" (7 before the registry; the registry, the command line's words for each
trainer (cli/_trainers.py), and what other parts of the redesign still rewrite: cli/search.py, advice.py, and
utility_table.json, which is data)."""


GENERATED_FROM_THE_REGISTRY = {
    "dptopic/cli/_trainer_facts.py": (
        "what the command line's help reads of each registered class, written from the registry by"
        " `python -m dptopic.cli._trainer_facts` (tests/cli/test_train_flags.py fails when it differs), so that"
        " `dptopic train --help` loads no trainer"),
}
"""Files that hold trainer names because a program wrote them from the registry, not as a table kept by hand."""


def _files_naming(pattern) -> dict:
    out = {}
    for path in sorted((SRC / "dptopic").rglob("*")):
        if str(path.relative_to(SRC)) in GENERATED_FROM_THE_REGISTRY:
            continue
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


ATTRIBUTES_PENDING: set = set()
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


# --------------------------------------------------------------------------------------------------------------
# The contract every trainer of the registry (``dptopic.models.registry.TRAINERS``) keeps: it fits, its ``transform``
# gives one row per document that sums to 1, a save/load round trip gives the same ``transform``, its privacy report
# and privacy card are saved with it, scikit-learn's ``clone`` copies its parameters, and a bad parameter is refused
# in one line. ``SecureSumTopics`` is the registry's one documented exception to fitting: it is built from a secure-
# sum round's two sums (its ``fit`` refuses, in one line), and is built so here.
TRAINER_CLASSES = {name: t.cls for name, t in TRAINERS.items()}

K = 3
FROM_REPORTS = {"lp", "olp"}       # local trainers fit randomized reports, and read documents in transform
FROM_DOCUMENT_REPORTS = {"ldp-doc"}     # document-level local reports ('dptopic randomize --unit document')
FROM_SUMS = {"secure-sum"}          # built from a secure-sum round's two sums, never fitted


def _secure_sum_model(corpus):
    """A SecureSumTopics of a simulated round over ``corpus``'s vocabulary (as tests/models/test_secure_sum.py)."""
    from dptopic.models.secure_sum import released_words, secure_sum_topics
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.protocol.secure_sum.ring import triangle_size

    V = corpus.vocab_size
    plan = SecureSumPlan(1.0, 1e-5, 100, 10, V)
    rng = np.random.default_rng(0)
    s0 = (rng.random(V + 1) * plan.scale * 20).astype(np.int64)
    kept = released_words(plan, s0, 90, K)[0]
    s1 = (rng.random(triangle_size(len(kept))) * plan.scale).astype(np.int64)
    return secure_sum_topics(plan, list(corpus.vocabulary), K, s0, s1, (90, 90), {})


def test_every_algorithm_has_small_settings():
    assert set(SMALL) == set(TRAINER_CLASSES)


@pytest.fixture(scope="module")
def fitted(tiny, tmp_path_factory):
    """Each trainer fitted once on ``tiny``, saved and loaded back: {name: (model, loaded)}."""
    out = {}
    from dptopic.contributor.document_randomizer import DocumentRandomizer

    reports = Randomizer.for_simulation(tiny.corpus.vocabulary, epsilon_word=3).randomize(tiny.corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # small corpora and budgets warn; the contract is what is checked here
        document_reports = DocumentRandomizer(tiny.corpus.vocabulary, epsilon=3.0, simulation=True).randomize(
            tiny.corpus)
        for name, cls in TRAINER_CLASSES.items():
            if name in FROM_SUMS:
                model = _secure_sum_model(tiny.corpus)
            else:
                model = cls(n_topics=K, verbose=0, **SMALL[name])
                model.fit(reports if name in FROM_REPORTS else document_reports if name in FROM_DOCUMENT_REPORTS
                          else tiny.corpus)
            folder = tmp_path_factory.mktemp(name.replace("+", "plus"))
            model.save(folder)
            out[name] = (model, type(model).load(folder), folder)
    return out


@pytest.mark.parametrize("name", sorted(TRAINER_CLASSES))
def test_transform_gives_one_distribution_per_document(name, fitted, tiny):
    theta = fitted[name][0].transform(tiny.corpus)
    assert theta.shape == (tiny.corpus.n_docs, K)
    assert np.all(theta >= 0) and np.allclose(theta.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", sorted(TRAINER_CLASSES))
def test_a_save_load_round_trip_gives_the_same_transform(name, fitted, tiny):
    model, loaded, _ = fitted[name]
    # by name: another test of the run may reload dptopic's modules, making a second class object of the same class
    assert (type(loaded).__module__, type(loaded).__qualname__) == (type(model).__module__, type(model).__qualname__)
    np.testing.assert_allclose(loaded.transform(tiny.corpus), model.transform(tiny.corpus), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(TRAINER_CLASSES))
def test_the_privacy_report_and_card_are_saved_with_the_model(name, fitted):
    model, _, folder = fitted[name]
    report = model.privacy_report()
    assert isinstance(report["private"], bool) and report["unit"]
    if report["private"]:
        assert {"neighbouring_relation", "delta"} <= set(report)
    meta = json.loads((folder / "model.json").read_text())
    assert meta["privacy"]["private"] is report["private"]
    assert meta["privacy_card"], "every saved model carries a privacy card"


@pytest.mark.parametrize("name", sorted(TRAINER_CLASSES))
def test_clone_copies_the_parameters_and_not_the_fit(name, fitted):
    model = fitted[name][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # a private trainer warns that a clone's fit spends its budget again
        twin = clone(model)
    assert type(twin) is type(model) and twin.get_params() == model.get_params()
    assert not hasattr(twin, "components_")


@pytest.mark.parametrize("name", sorted(TRAINER_CLASSES))
def test_a_bad_parameter_is_refused_in_one_line(name, tiny):
    model = TRAINER_CLASSES[name](n_topics=0, verbose=0, **SMALL[name])
    with pytest.raises(DPTopicError) as caught:
        model.validate_parameters() if name in FROM_SUMS else model.fit(tiny.corpus)
    message = str(caught.value)
    assert "n_topics" in message and "\n" not in message, message


@pytest.mark.parametrize("name", sorted(FROM_SUMS))
def test_a_model_built_from_sums_refuses_fit_in_one_line(name, tiny):
    with pytest.raises(DPTopicError) as caught:
        TRAINER_CLASSES[name](n_topics=K).fit(tiny.corpus)
    assert "secure-sum round" in str(caught.value) and "\n" not in str(caught.value)
