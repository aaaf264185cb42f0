"""scikit-learn's own estimator checks on the non-private estimators.

Skipped checks, and why (each is the same design decision seen by a different check):
* the checks feed random non-integral floats (and negative, complex, object, NaN, 1-sample, 1-feature inputs, or
  sparse matrices with float entries) where a topic model takes a document-term matrix of integer counts; dptopic
  refuses such input with its own one-line DPTopicError ("entries must be finite, non-negative integer counts")
  rather than rounding counts silently, so the checks that fit on such data, or match scikit-learn's own error
  wording, cannot pass;
* check_transformer_data_not_an_array: the helper array type of the checks is not a corpus format dptopic reads;
* check_estimators_pickle: dptopic saves models as JSON + .npy (``save``/``dptopic.load``), never pickles.
"""
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import dptopic

INTEGER_COUNTS = ("dptopic takes integer counts and refuses the checks' float/invalid input in its own words;"
                  " see the module docstring")
SKIPPED = {name: INTEGER_COUNTS for name in (
    "check_fit_score_takes_y", "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_complex_data", "check_dtype_object",
    "check_estimators_empty_data_messages", "check_pipeline_consistency", "check_estimators_nan_inf",
    "check_estimator_sparse_tag", "check_estimator_sparse_array", "check_estimator_sparse_matrix",
    "check_f_contiguous_array_estimator", "check_transformer_general", "check_transformer_preserve_dtypes",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance", "check_fit2d_1sample",
    "check_fit2d_1feature", "check_dict_unchanged", "check_fit_idempotent", "check_fit_check_is_fitted",
    "check_n_features_in", "check_fit2d_predict1d", "check_transformer_data_not_an_array")}
SKIPPED["check_estimators_pickle"] = "models are saved as JSON + .npy (save/dptopic.load), never pickled"


@parametrize_with_checks([dptopic.LDA(n_topics=2, n_iter=10, seed=0, verbose=0),
                          dptopic.OnlineVB(n_topics=2, n_epochs=1, seed=0, verbose=0)],
                         expected_failed_checks=lambda est: SKIPPED)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_every_skipped_check_is_a_real_check():
    """The skip list names checks scikit-learn has (a misspelt name would skip nothing and hide a failure)."""
    import sklearn.utils.estimator_checks as checks

    missing = [name for name in SKIPPED if not hasattr(checks, name)]
    assert not missing, missing
