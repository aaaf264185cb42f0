"""A release as the ledger stores it (dataset_ledger.releases): its events as JSON, its own figure, and releases
composed as one owner's."""
import math

from dptopic.accounting import ApproxDPEvent, LaplaceEvent, PureDPEvent
from dptopic.accounting.gaussian import SubsampledGaussianEvent
from dptopic.accounting.ledger import compose_pld
from dptopic.dataset_ledger.releases import compose_releases, events_from_json, events_to_json, release_guarantee


def test_events_round_trip_through_json():
    groups = [(LaplaceEvent(scale=2.0, changes=(1, 1), discrete=True, label="counts"), 7),
              (PureDPEvent(0.5, label="sampling"), 7), (ApproxDPEvent(0.3, 1e-7, label="set union"), 1),
              (SubsampledGaussianEvent(2.0, 0.01), 100)]
    back = events_from_json(events_to_json(groups))
    assert [n for _, n in back] == [7, 7, 1, 100]
    assert [e for e, _ in back] == [e for e, _ in groups]      # the same events (frozen dataclasses compare fields)
    assert compose_pld(back, 1e-5) == compose_pld(groups, 1e-5)


def test_a_releases_own_figure_is_its_smallest_valid_one():
    eps, d = release_guarantee([(PureDPEvent(0.5), 2)], 1e-5)
    assert eps <= 1.0 and d in (0.0, 1e-5)
    eps, d = release_guarantee([(ApproxDPEvent(0.5, 1e-4), 2)], 1e-5)      # own deltas past delta: basic at theirs
    assert (eps, d) == (1.0, 2e-4)


def test_compose_releases_of_nothing_is_zero():
    assert compose_releases([])["epsilon_total"] == 0.0
    assert math.isfinite(compose_releases([])["delta_total"])
