"""The contract every trainer of the registry (``dptopic.models.registry.TRAINERS``) keeps: it fits, its ``transform``
gives one row per document that sums to 1, a save/load round trip gives the same ``transform``, its privacy report and
privacy card are saved with it, scikit-learn's ``clone`` copies its parameters, and a bad parameter is refused in one
line. ``SecureSumTopics`` is the registry's one documented exception to fitting: it is built from a secure-sum round's
two sums (its ``fit`` refuses, in one line), and is built so here."""
import json
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from dptopic.contributor.randomizer import Randomizer
from dptopic.errors import DPTopicError
from dptopic.models.registry import TRAINERS
from helpers import SMALL_SETTINGS as SMALL

ALGORITHMS = {name: t.cls for name, t in TRAINERS.items()}

K = 3
FROM_REPORTS = {"lp", "olp"}       # local trainers fit randomized reports, and read documents in transform
FROM_DOCUMENT_REPORTS = {"ldp-doc"}     # document-level local reports ('dptopic randomize --unit document')
FROM_SUMS = {"secure-sum"}          # built from a secure-sum round's two sums, never fitted


def _secure_sum_model(corpus):
    """A SecureSumTopics of a simulated round over ``corpus``'s vocabulary (as tests/models/test_secure_sum.py)."""
    from dptopic.models.secure_sum import released_words, secure_sum_topics
    from dptopic.protocol.secure_sum import SecureSumPlan, triangle_size

    V = corpus.vocab_size
    plan = SecureSumPlan(1.0, 1e-5, 100, 10, V)
    rng = np.random.default_rng(0)
    s0 = (rng.random(V + 1) * plan.scale * 20).astype(np.int64)
    kept = released_words(plan, s0, 90, K)[0]
    s1 = (rng.random(triangle_size(len(kept))) * plan.scale).astype(np.int64)
    return secure_sum_topics(plan, list(corpus.vocabulary), K, s0, s1, (90, 90), {})


def test_every_algorithm_has_small_settings():
    assert set(SMALL) == set(ALGORITHMS)


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
        for name, cls in ALGORITHMS.items():
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


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_transform_gives_one_distribution_per_document(name, fitted, tiny):
    theta = fitted[name][0].transform(tiny.corpus)
    assert theta.shape == (tiny.corpus.n_docs, K)
    assert np.all(theta >= 0) and np.allclose(theta.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_a_save_load_round_trip_gives_the_same_transform(name, fitted, tiny):
    model, loaded, _ = fitted[name]
    # by name: another test of the run may reload dptopic's modules, making a second class object of the same class
    assert (type(loaded).__module__, type(loaded).__qualname__) == (type(model).__module__, type(model).__qualname__)
    np.testing.assert_allclose(loaded.transform(tiny.corpus), model.transform(tiny.corpus), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_the_privacy_report_and_card_are_saved_with_the_model(name, fitted):
    model, _, folder = fitted[name]
    report = model.privacy_report()
    assert isinstance(report["private"], bool) and report["unit"]
    if report["private"]:
        assert {"neighbouring_relation", "delta"} <= set(report)
    meta = json.loads((folder / "model.json").read_text())
    assert meta["privacy"]["private"] is report["private"]
    assert meta["privacy_card"], "every saved model carries a privacy card"


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_clone_copies_the_parameters_and_not_the_fit(name, fitted):
    model = fitted[name][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # a private trainer warns that a clone's fit spends its budget again
        twin = clone(model)
    assert type(twin) is type(model) and twin.get_params() == model.get_params()
    assert not hasattr(twin, "components_")


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_a_bad_parameter_is_refused_in_one_line(name, tiny):
    model = ALGORITHMS[name](n_topics=0, verbose=0, **SMALL[name])
    with pytest.raises(DPTopicError) as caught:
        model.validate_parameters() if name in FROM_SUMS else model.fit(tiny.corpus)
    message = str(caught.value)
    assert "n_topics" in message and "\n" not in message, message


@pytest.mark.parametrize("name", sorted(FROM_SUMS))
def test_a_model_built_from_sums_refuses_fit_in_one_line(name, tiny):
    with pytest.raises(DPTopicError) as caught:
        ALGORITHMS[name](n_topics=K).fit(tiny.corpus)
    assert "secure-sum round" in str(caught.value) and "\n" not in str(caught.value)
