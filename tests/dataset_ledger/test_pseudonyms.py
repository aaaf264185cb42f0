"""A person's pseudonym for a served route (dptopic.dataset_ledger.pseudonyms): made by the ledger from the id, read
back by it alone to the person it stores, bound to one route, and charged as that person."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cryptography")

from dptopic.accounting import PureDPEvent
from dptopic.dataset_ledger.charge import charge_served
from dptopic.dataset_ledger.identity import Documents
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.dataset_ledger.pseudonyms import COLLECTION, PSEUDONYM
from dptopic.errors import DPTopicError

PEOPLE = ["jane@example.org", "bob@example.org", "ana@example.org"]


def _central(led, eps=4.0):
    """A central user-level release of ``eps`` that held two documents of jane and one of bob."""
    led.debit("central", "DocDPCooccurrence", "user", [(PureDPEvent(eps), 1)], 1e-5,
              documents=Documents(np.arange(1, 4, dtype=np.uint64), [PEOPLE[0], PEOPLE[0], PEOPLE[1]]))


def _round(led, names, context, eps=1.0):
    return charge_served(led, "secure-sum round", "user", [(PureDPEvent(eps), 1)], {n: 1 for n in names},
                         context=context)


def test_a_release_charged_by_pseudonyms_is_charged_to_the_people_as_by_their_ids(tmp_path):
    by_pseudonym, by_id = DatasetLedger(tmp_path / "a.sqlite"), DatasetLedger(tmp_path / "b.sqlite")
    for led in (by_pseudonym, by_id):
        _central(led)
    _round(by_pseudonym, by_pseudonym.pseudonyms(PEOPLE, "round-1"), "round-1")
    _round(by_id, PEOPLE, None)
    for p in PEOPLE:
        got, want = by_pseudonym.person_total(p), by_id.person_total(p)
        assert got["epsilon"] == pytest.approx(want["epsilon"], rel=1e-12) and len(got["releases"]) == len(
            want["releases"]), p
    assert by_pseudonym.person_total(PEOPLE[0])["epsilon"] > 4.0
    assert by_pseudonym.person_summary()["persons"] == 3       # no person of its own for any pseudonym


def test_a_pseudonym_names_no_one_and_differs_by_route_and_ledger(tmp_path):
    led, other = DatasetLedger(tmp_path / "a.sqlite"), DatasetLedger(tmp_path / "b.sqlite")
    one, again = led.pseudonyms(PEOPLE, "round-1"), led.pseudonyms(PEOPLE, "round-1")
    assert one == again and all(PSEUDONYM.fullmatch(p) for p in one) and len(set(one)) == 3
    assert not set(one) & set(led.pseudonyms(PEOPLE, "round-2"))
    assert not set(one) & set(led.pseudonyms(PEOPLE, COLLECTION))
    assert not set(one) & set(other.pseudonyms(PEOPLE, "round-1"))
    raw = (tmp_path / "a.sqlite").read_bytes()
    assert not any(p.encode() in raw for p in PEOPLE + one)     # the ledger keeps no id and no pseudonym


def test_a_pseudonym_of_another_route_or_ledger_or_altered_is_not_the_person(tmp_path):
    led, other = DatasetLedger(tmp_path / "a.sqlite"), DatasetLedger(tmp_path / "b.sqlite")
    _central(led)
    mine = led.pseudonyms([PEOPLE[0]], "round-1")[0]
    altered = mine[:-1] + ("0" if mine[-1] != "0" else "1")
    foreign = [led.pseudonyms([PEOPLE[0]], "round-2")[0], other.pseudonyms([PEOPLE[0]], "round-1")[0], altered]
    assert led.foreign_pseudonyms([mine, *foreign], "round-1") == foreign
    _round(led, foreign, "round-1")         # each charged as a name of its own: jane's total is the central one
    assert led.person_total(PEOPLE[0])["epsilon"] == pytest.approx(4.0, rel=1e-4)
    _round(led, [mine], "round-1")
    assert led.person_total(PEOPLE[0])["epsilon"] > 4.5


def test_ids_equal_in_nfc_have_one_pseudonym(tmp_path):
    led = DatasetLedger(tmp_path / "a.sqlite")
    composed, decomposed = "jos\u00e9@example.org", "jose\u0301@example.org"
    assert led.pseudonyms([composed], "r") == led.pseudonyms([decomposed], "r")


def test_a_pseudonym_context_and_person_are_checked_in_one_line(tmp_path):
    led = DatasetLedger(tmp_path / "a.sqlite")
    for bad in ("", "a\nb", None, 7):
        with pytest.raises(DPTopicError, match="context"):
            led.pseudonyms(PEOPLE, bad)
    with pytest.raises(DPTopicError, match="not a string"):
        led.pseudonyms([7], "r")
    with pytest.raises(DPTopicError, match="context"):
        Documents(None, ["a"], context="")
