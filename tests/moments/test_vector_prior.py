"""The route ``vectors_route="auto"`` takes (``moments.vector_prior.choose_route``): at the document unit by the first
release's signal against ``GROUPS_FROM``; at the user unit always the spread, where the grouped release recovered less
at every number of people and budget measured (docs/research/user_level.md)."""
import pytest

from dptopic.moments.vector_prior import AUTO_ROUTE_PER_PERSON, GROUPS_FROM, ROUTES, choose_route

SIGMA = 3.933       # the co-occurrence release's multiplier at the user unit, epsilon 1, delta 1e-5


def presence_for(signal: float, sigma: float = SIGMA) -> float:
    """The first release's summed word entries that give ``signal`` (``presence / (175 sigma)``)."""
    return signal * 175.0 * sigma


# the signals of the measured user-unit settings (1,000 to 30,000 planted people at epsilon 1 and 4), where the
# groups lost to the spread, and one far beyond them
@pytest.mark.parametrize("signal", [15.0, 43.5, GROUPS_FROM, 145.7, 436.0, 1504.0, 1e6])
def test_auto_takes_the_spread_per_person_whatever_the_signal(signal):
    assert AUTO_ROUTE_PER_PERSON == "spread"
    assert choose_route("auto", presence_for(signal), SIGMA, "user") == "spread"


@pytest.mark.parametrize("signal, route", [(18.0, "spread"), (43.0, "spread"), (GROUPS_FROM * 0.999, "spread"),
                                           (GROUPS_FROM, "groups"), (106.0, "groups"), (145.7, "groups")])
def test_auto_at_the_document_unit_still_reads_the_signal(signal, route):
    assert choose_route("auto", presence_for(signal, 1.7), 1.7, "document") == route
    assert choose_route("auto", presence_for(signal, 1.7), 1.7) == route       # the document unit by default


@pytest.mark.parametrize("route", [r for r in ROUTES if r != "auto"])
@pytest.mark.parametrize("unit", ["document", "user"])
def test_a_route_given_is_taken_as_given_at_either_unit(route, unit):
    for signal in (1.0, 1000.0):
        assert choose_route(route, presence_for(signal), SIGMA, unit) == route
