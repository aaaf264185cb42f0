"""``dptopic.protocol.secure_sum.cohort_enrollment``: the invitations and directories of a round in cohorts, seated by
the rule, each directory signed by the one enrollment key; and the cohort plan as a server states it."""
import json

import pytest

from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.secure_sum import cohort_enrollment as ce
from dptopic.protocol.secure_sum.cohorts import CohortPlan
from dptopic.protocol.secure_sum.enrollment import contributor_ids, make_invitations, read_directory


@pytest.fixture
def invited(tmp_path):
    ce.make_cohort_invitations(tmp_path / "enroll.key", 24, tmp_path / "inv", 12, 0, 1, "round1")
    return tmp_path / "inv"


def test_each_invitation_is_to_the_cohort_the_rule_seats_and_each_delegate_also_to_the_bridge(invited):
    plan = CohortPlan(8.0, 1e-5, 24, 0, 30, 12, collusion=1)
    groups = plan.cohorts(contributor_ids(24), "round1")
    d = ce.read_cohort_directory(invited / "directory.json")
    assert [sorted(c["members"]) for c in d["cohorts"]] == groups and ce.plan_layout(plan) == d["layout"]
    for f in sorted(invited.glob("invitation-*.json")):
        inv = ce.read_cohort_invitation(f)
        c = inv["cohorts"]["cohort"]
        assert inv["contributor"] in groups[c] and inv["round_id"] == f"round1-c{c}" and inv["count"] == 12
        delegate = inv["contributor"] in plan.delegates(groups[c], "round1", c)
        assert (inv["bridge"] is not None) == delegate
        if delegate:
            assert inv["bridge"]["contributor"] in d["bridge"]["members"]


def test_a_directory_with_a_part_signed_by_another_key_or_reseated_is_refused(invited, tmp_path):
    d = json.loads((invited / "directory.json").read_text())
    make_invitations(tmp_path / "other.key", 12, tmp_path / "other", round_id="round1-c0", collusion=1)
    alien = read_directory(tmp_path / "other" / "directory.json")
    with pytest.raises(DPTopicError, match="not the one the round's rule seats|different enrollment keys"):
        ce.check_cohort_directory(dict(d, cohorts=[alien, d["cohorts"][1]]))
    with pytest.raises(DPTopicError, match="cohort layout is refused"):
        ce.check_cohort_directory(dict(d, layout=dict(d["layout"], cohort_size=24)))
    with pytest.raises(DPTopicError, match="not a secure-sum cohort directory"):
        ce.check_cohort_directory(alien)


def test_an_invitation_whose_bridge_part_was_altered_is_refused_in_one_line(invited):
    f = next(f for f in sorted(invited.glob("invitation-*.json")) if "bridge" in json.loads(f.read_text()))
    doc = json.loads(f.read_text())
    doc["bridge"]["contributor"] = "c1-9999"
    f.write_text(json.dumps(doc))
    with pytest.raises(DPTopicError, match="not a secure-sum invitation to a round in cohorts"):
        ce.read_cohort_invitation(f)


def test_a_layout_that_holds_no_round_in_cohorts_is_refused_naming_its_parameter(tmp_path):
    with pytest.raises(ParameterError) as e:
        ce.make_cohort_invitations(tmp_path / "k", 24, tmp_path / "inv", 24)
    assert e.value.parameter == "cohort_size" and not (tmp_path / "inv").exists()
    with pytest.raises(ParameterError) as e:
        ce.cohort_layout(24, 12, dropouts=24)
    assert e.value.parameter == "dropouts"


def test_the_cohort_plan_round_trips_through_its_dict_and_refuses_a_malformed_one():
    plan = CohortPlan(8.0, 1e-5, 24, 0, 30, 12, collusion=1)
    again = CohortPlan.from_dict(json.loads(json.dumps(plan.to_dict())))
    assert [p.to_dict() for p in again.cohort_plans] == [p.to_dict() for p in plan.cohort_plans]
    assert again.bridge_plan.to_dict() == plan.bridge_plan.to_dict() and again.n_delegates == plan.n_delegates
    for bad in (None, dict(plan.to_dict(), n="24"), dict(plan.to_dict(), extra=1), dict(plan.to_dict(), n=True)):
        with pytest.raises(DPTopicError, match="cohort plan is malformed"):
            CohortPlan.from_dict(bad)
    with pytest.raises(DPTopicError, match="cohort plan is refused"):
        CohortPlan.from_dict(dict(plan.to_dict(), cohort_size=24))
