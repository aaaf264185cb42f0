"""The non-private reference printed beside a private model's held-out figures (``training/reference.py``)."""
import dptopic
from dptopic.training.reference import REFERENCE_ITERATIONS, nonprivate_reference, reference_too_large


def _private_run(planted):
    return dptopic.train(planted, algorithm="docdp-cooc", epsilon=4.0, n_topics=5, test_size=0.2, seed=1,
                         ledger=False)


def test_the_reference_scores_lda_on_the_runs_own_split_by_the_models_function(planted):
    result = _private_run(planted)
    ref = nonprivate_reference(result, seed=0)
    assert ref is not None and ref["n_iter"] == REFERENCE_ITERATIONS
    assert set(result.metrics) <= set(ref) | {"n_iter"}


def test_a_reference_that_would_cost_more_than_the_fit_is_not_computed_and_says_why(planted):
    result = _private_run(planted)
    tokens = result.train.n_tokens
    assert reference_too_large(result) is None
    why = reference_too_large(result, max_work=tokens * REFERENCE_ITERATIONS - 1)
    assert why is not None and f"{tokens:,} training tokens" in why and str(REFERENCE_ITERATIONS) in why
    assert nonprivate_reference(result, max_work=tokens * REFERENCE_ITERATIONS - 1) is None
    assert reference_too_large(result, max_work=None) is None
