"""What a database binds of FedLDA's settings on its first start (``service/storage.py``)."""
import pytest

from dptopic.service.storage import StorageError, _check_fed

BOUND = {"fed_epsilon": 2.0, "fed_topics": 5, "fed_failure_rate": 0.2, "fed_pad_length": 10}


def test_a_failure_rate_stored_by_an_earlier_start_binds_nothing():
    """serve refuses --fed-failure-rate (its rounds use the 'none' rule, which has none): a database first started
    with another value must still start with the default, or it could never be started again."""
    _check_fed(dict(BOUND), {**BOUND, "fed_failure_rate": 0.1}, lambda: True)


def test_a_setting_that_binds_the_rounds_is_still_checked():
    with pytest.raises(StorageError, match="fed_topics"):
        _check_fed(dict(BOUND), {**BOUND, "fed_failure_rate": 0.1, "fed_topics": 6}, lambda: True)
