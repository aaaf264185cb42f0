"""The epsilon a model's card states is the one its ledger's events compose to, recomputed here with dp_accounting
independently of dptopic's ledger (tests/privacy/conftest.py: recomputed_epsilon), for every private trainer and unit."""
import warnings

import pytest

from dptopic.accounting.card import claimed


def _check(model, harness):
    rep = model.privacy_
    eps, delta, which = claimed(rep)
    name = type(model).__name__
    if eps is None:         # a report that claims nothing (FedLDA's tail rule) has nothing to recompute
        assert rep.get("private") is False or "none" in str(which), name
        return None
    again, exact = harness.recomputed_epsilon(rep)
    # the card never states less than its events compose to, and (where the composition is exact) not much more
    assert again <= eps * (1 + 1e-3) + 1e-3, f"{name}: the card states {eps:.6g}, its events compose to {again:.6g}"
    if exact:
        assert eps <= again * 1.02 + 0.01, f"{name}: the card states {eps:.6g}, its events compose to {again:.6g}"
    return again


@pytest.mark.slow
def test_every_private_trainer_states_the_epsilon_its_events_compose_to(private_models, harness):
    checked = [_check(m, harness) for m in private_models]
    assert sum(c is not None for c in checked) >= 7


@pytest.mark.parametrize("trainer, unit", [("docdp-cooc", "document"), ("docdp-cooc", "user"), ("docdp", "document"),
                                           ("docdp", "user"), ("hdp", "word"), ("svi", "document")])
def test_each_trainer_and_unit_states_the_epsilon_its_events_compose_to(trainer, unit, harness):
    from dptopic.attacks.lira import ALGORITHMS
    from dptopic.corpus import Vocabulary
    from dptopic.models import DPSVI, HDPLDA

    data = harness.background(21)
    if trainer == "hdp":
        model = HDPLDA.from_budget(200.0, 1e-5, 3, n_topics=2, seed=1)
    elif trainer == "svi":
        model = DPSVI.from_budget(2.0, 1e-5, n_topics=2, n_epochs=1, sampling_rate=0.5, seed=1)
    else:
        model = ALGORITHMS[trainer](n_topics=2, epsilon=2.0, unit=unit, seed=1,
                                    **({"n_iter": 3} if trainer == "docdp" else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(data.corpus(Vocabulary(harness.WORDS)))
    assert model.privacy_["unit"] == unit
    again = _check(model, harness)
    assert again <= (200.0 if trainer == "hdp" else 2.0) * 1.001


def test_local_and_baseline_trainers_state_what_they_claim(tiny, harness):
    """Local DP (OLP-LDA) and the baselines: a claim is recomputed where there is one; the non-private trainers claim
    nothing."""
    tiny = tiny.corpus
    import dptopic
    from dptopic.contributor.randomizer import Randomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = [dptopic.OLPLDA(n_topics=2, n_iter=2, epsilon_word=3, verbose=0, prior_corpus='none').fit(
                      Randomizer.for_simulation(tiny.vocabulary, epsilon_word=3).randomize(tiny)),
                  dptopic.LDA(n_topics=2, n_iter=3).fit(tiny), dptopic.OnlineVB(n_topics=2).fit(tiny),
                  dptopic.CDPLDA(n_topics=2, n_iter=2).fit(tiny)]
    for m in models:
        _check(m, harness)
    assert models[1].privacy_.get("private") is False and models[2].privacy_.get("private") is False
