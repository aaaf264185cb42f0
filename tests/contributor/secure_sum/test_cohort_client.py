"""``dptopic.contributor.secure_sum.cohort_client``: a person's part of a round in cohorts, against a live server in
cohorts."""
import json
import threading
import time

import pytest

from cohort_helpers import LiveCohortRound, tiny_bows

pytestmark = pytest.mark.service


def test_a_delegates_part_in_both_rounds_ends_within_a_held_request_of_the_callers_stop(tmp_path, monkeypatch):
    """A delegate waiting in its cohort's round and in the bridge (no one else came) is stopped in both by the
    caller's ``stop``: :class:`Stopped` within a held request, not left to wait out its timeout; what it sent stays
    sent."""
    from dptopic.contributor.secure_sum.client import STOP_HOLD_S, Stopped
    from dptopic.contributor.secure_sum.cohort_client import take_part_in_cohorts
    from dptopic.contributor.secure_sum.default import SecureContributor

    stop = threading.Event()
    made, lock, stopped_at = [], threading.Lock(), []
    registration = SecureContributor.registration

    def registered(self):
        out = registration(self)
        with lock:
            made.append(self.round_id)
            if len(made) == 2:      # its keys in both rounds are on their way: the caller stops it
                stopped_at.append(time.monotonic())
                stop.set()
        return out

    monkeypatch.setattr(SecureContributor, "registration", registered)
    timeout = 60.0
    with LiveCohortRound(tmp_path, 24, 12) as live:
        delegate = next(f for f in live.files if "bridge" in json.loads(f.read_text()))
        with pytest.raises(Stopped, match="stopped"):
            take_part_in_cohorts(live.url, tiny_bows(1)[0], delegate, state=tmp_path / "s.json", poll=0.05,
                                 timeout=timeout, stop=stop)
        ended = time.monotonic()
        assert len(made) == 2 and live.server.bridge.round_id in made, made
        assert sorted(r.view()["keys_received"] for r in live.server.parts()) == [0, 1, 1]
    assert ended - stopped_at[0] < STOP_HOLD_S + 3 < timeout
