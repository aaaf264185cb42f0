"""The contract every trainer in ``dptopic.models.ALGORITHMS`` keeps: it fits, its ``transform`` gives one row per
document that sums to 1, a save/load round trip gives the same ``transform``, its privacy report and privacy card are
saved with it, scikit-learn's ``clone`` copies its parameters, and a bad parameter is refused in one line."""
import json
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from dptopic.errors import DPTopicError
from dptopic.local import Randomizer
from dptopic.models import ALGORITHMS

K = 3
# the smallest settings that fit the ``tiny`` corpus quickly; private trainers are never seeded here (no seed is the
# default, and a seed would warn)
SMALL = {"lda": dict(n_iter=5), "cdp": dict(n_iter=3), "cdp+": dict(n_iter=3),
         "hdp": dict(n_iter=3, epsilon_inherent=10.0), "lp": dict(n_iter=3, epsilon_word=3), "olp": dict(prior_corpus="none", n_iter=2, epsilon_word=3),
         "fed": dict(rounds=1, pad_length=8), "online-vb": dict(n_epochs=1), "svi": dict(),
         "docdp": dict(epsilon=100.0), "docdp-cooc": dict(epsilon=100.0)}
FROM_REPORTS = {"lp", "olp"}       # local trainers fit randomized reports, and read documents in transform


def test_every_algorithm_has_small_settings():
    assert set(SMALL) == set(ALGORITHMS)


@pytest.fixture(scope="module")
def fitted(tiny, tmp_path_factory):
    """Each trainer fitted once on ``tiny``, saved and loaded back: {name: (model, loaded)}."""
    out = {}
    reports = Randomizer.for_simulation(tiny.corpus.vocabulary, epsilon_word=3).randomize(tiny.corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # small corpora and budgets warn; the contract is what is checked here
        for name, cls in ALGORITHMS.items():
            model = cls(n_topics=K, verbose=0, **SMALL[name])
            model.fit(reports if name in FROM_REPORTS else tiny.corpus)
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
    with pytest.raises(DPTopicError) as caught:
        ALGORITHMS[name](n_topics=0, verbose=0, **SMALL[name]).fit(tiny.corpus)
    message = str(caught.value)
    assert "n_topics" in message and "\n" not in message, message
