"""``dptopic cluster``: what the command does with its flags and files, and its one-line refusals."""
import pytest

from dptopic.errors import DPTopicError


# ----------------------------------------------------------------- 9: --scheduler and --dask-local
@pytest.mark.parametrize("address", ["tcp://[::1:5", "tcp://host:99999", "[::1"])
def test_scheduler_address_malformed(address):
    from dptopic.cli._cluster import check_scheduler_address

    with pytest.raises(DPTopicError, match="invalid --scheduler"):
        check_scheduler_address(address)
