"""The service's checks of what a client sends (``dptopic.service.codec``): pseudonyms and FedLDA client ids."""
from __future__ import annotations

import numpy as np
import pytest


def test_a_fedlda_client_id_outside_the_pseudonym_rule_is_refused_before_storage():
    from dptopic.contributor.client import fed_participate
    from dptopic.errors import DPTopicError
    from dptopic.protocol.fedlda_messages import ClientUpdate
    from dptopic.service import codec

    t, w = np.zeros(3, np.int32), np.zeros(3, np.int32)
    for bad in ("x" * 200, "a\x00b", "name with spaces"):
        msg = ClientUpdate(0, bad, "v", t, w).encode()
        with pytest.raises(codec.IncompatibleReports, match="client id must be 1-128 characters"):
            codec.fed_check_update(msg, None, None, 0)
        with pytest.raises(DPTopicError, match="invalid client id"):     # the CLI's --client-id, before any request
            fed_participate("http://127.0.0.1:9", None, client_id=bad)


def test_a_pseudonym_with_a_final_newline_is_refused():
    from dptopic.protocol import codec as protocol_codec
    from dptopic.service import codec

    assert protocol_codec.PSEUDONYM.fullmatch("alice") and not protocol_codec.PSEUDONYM.fullmatch("alice\n")
    with pytest.raises(codec.IncompatibleReports):
        codec.fed_check_update(__import__("dptopic.protocol.fedlda_messages", fromlist=["ClientUpdate"]).ClientUpdate(
            0, "alice\n", "v", np.zeros(3, np.int32), np.zeros(3, np.int32)).encode(), None, None, 0)
