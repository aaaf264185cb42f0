"""``dptopic.service.client``."""
import pytest
from dptopic.errors import DPTopicError


def test_a_server_url_with_credentials_is_refused_without_echoing_them():
    from dptopic.service.client import ServiceClient

    with pytest.raises(DPTopicError) as e:
        ServiceClient("http://alice:s3cret@127.0.0.1:9")
    assert "s3cret" not in str(e.value) and "USER:PASSWORD@HOST" in str(e.value)
    assert ServiceClient("http://bücher.example:80").server == "http://bücher.example:80"
