"""The check of ``NUMBA_NUM_THREADS`` made before numba is imported (numba's own is a traceback)."""
import pytest

from dptopic.errors import DPTopicError
from dptopic.kernels import check_numba_threads, numba_threads_error


@pytest.mark.parametrize("value", ["0", "-1", "-8", "abc", "1.5", "2 threads"])
def test_a_number_of_threads_below_one_or_not_a_number_is_refused_naming_the_variable(value):
    with pytest.raises(DPTopicError, match="NUMBA_NUM_THREADS") as e:
        check_numba_threads({"NUMBA_NUM_THREADS": value})
    assert repr(value) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("env", [{}, {"NUMBA_NUM_THREADS": ""}, {"NUMBA_NUM_THREADS": "1"},
                                 {"NUMBA_NUM_THREADS": " 4 "}])
def test_an_unset_empty_or_positive_number_of_threads_is_accepted(env):
    assert numba_threads_error(env) is None
