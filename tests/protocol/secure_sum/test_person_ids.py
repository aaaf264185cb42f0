"""``dptopic.protocol.secure_sum.person_ids``: an operator's ids file, a round's invitations bound to the people it
names (each
invitation its person, the directory each number's pseudonym under the enrollment key), and each refusal one line
with nothing written."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("cryptography")

from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.secure_sum import enrollment as en
from dptopic.protocol.secure_sum.cohort_enrollment import (
    make_cohort_invitations,
    read_cohort_directory,
    read_cohort_invitation,
)
from dptopic.protocol.secure_sum.person_ids import check_person_ids, read_person_ids, seat_by_person
from dptopic.service.ledger import people_of

PEOPLE = [f"dev{i:02d}@example.org" for i in range(12)]


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def test_an_ids_file_is_one_id_a_line_or_a_csv_column(tmp_path):
    lines = _write(tmp_path / "ids.txt", "\ufeff" + "\r\n".join(["Doe, Jane <jane@x.org>", "bob@x.org"]) + "\r\n")
    assert read_person_ids(lines) == ["Doe, Jane <jane@x.org>", "bob@x.org"]
    table = _write(tmp_path / "ids.csv", 'name,author\n"Doe, Jane",jane@x.org\nBob,bob@x.org\n')
    assert read_person_ids(table, "author") == ["jane@x.org", "bob@x.org"]


@pytest.mark.parametrize("text, field, match", [
    ("a@x\nb@x\na@x\n", None, r"lines 1 and 3 name one person"),
    ("A@X.org\nb@x\na@x.org\n", None, r"lines 1 and 3 name one person"),
    ("jos\u00e9@x\njose\u0301@x\n", None, r"lines 1 and 2 name one person"),
    ("a@x\n\nb@x\n", None, r"line 2 is empty"),
    ("a@x\n   \n", None, r"line 2 is empty"),
    ("a@x \n", None, r"line 1 has white space"),
    ("a\u200b@x\n", None, r"line 1 holds an invisible"),
    ("", None, r"holds no id"),
    (b"a@x\n\xff\xfe\n", None, r"not UTF-8"),
    ("name,who\nJane,a@x\n", "author", r"no column 'author'"),
    ("name,author\nJane,a@x\nBob\n", "author", r"line 3 is empty"),
    ("name,author\nJane,a@x\nBob,a@x\n", "author", r"lines 2 and 3 name one person"),
])
def test_a_bad_ids_file_is_one_line_naming_it(tmp_path, text, field, match):
    f = _write(tmp_path / "ids.txt", text)
    with pytest.raises(DPTopicError, match=match) as e:
        read_person_ids(f, field)
    assert "\n" not in str(e.value) and str(f) in str(e.value)


def test_an_ids_file_that_cannot_be_read_is_one_line(tmp_path):
    for path, match in ((tmp_path / "none.txt", "No such file"), (tmp_path, "a folder")):
        with pytest.raises(DPTopicError, match=match):
            read_person_ids(path)


def test_ids_in_python_are_checked_as_a_files_are():
    assert check_person_ids(("a", "b")) == ["a", "b"]
    for bad, match in ((["a", "A"], r"ids\[0\] and ids\[1\]"), (["a", ""], r"ids\[1\] is empty"), ([], "empty"),
                       ([1], "not a string"), ("ab", "a list")):
        with pytest.raises(ParameterError, match=match):
            check_person_ids(bad)


def test_invitations_name_their_people_in_a_random_order_and_the_directory_their_pseudonyms(tmp_path):
    ledger = DatasetLedger(tmp_path / "l.sqlite")
    s = en.make_invitations(tmp_path / "k", None, tmp_path / "inv", round_id="r1", collusion=1, ids=PEOPLE,
                            ledger=ledger)
    assert s["count"] == len(PEOPLE) and s["people"] == len(PEOPLE)
    invitations = en.read_invitations(tmp_path / "inv")
    named = [inv["person"] for inv in invitations]
    assert sorted(named) == sorted(PEOPLE) and named != PEOPLE      # 12! orders: the file's by chance 2e-9
    d = en.read_directory(tmp_path / "inv" / "directory.json")
    context, pseudonyms = people_of(d)
    assert context == "r1" and set(pseudonyms) == set(d["members"])
    for inv in invitations:     # each number's pseudonym is its person's, as the ledger makes it
        assert pseudonyms[inv["contributor"]] == ledger.pseudonyms([inv["person"]], "r1")[0]
    text = (tmp_path / "inv" / "directory.json").read_text()
    assert not any(p in text for p in PEOPLE)                      # the server's file names no one


def test_a_directory_whose_people_were_altered_is_refused(tmp_path):
    en.make_invitations(tmp_path / "k", None, tmp_path / "inv", round_id="r1", collusion=1, ids=PEOPLE[:4],
                        ledger=tmp_path / "l.sqlite")
    path = tmp_path / "inv" / "directory.json"
    d = json.loads(path.read_text())
    swapped = dict(d["people"]["pseudonyms"])
    swapped["0001"], swapped["0002"] = swapped["0002"], swapped["0001"]
    for people, match in (({**d["people"], "pseudonyms": swapped}, "altered after the operator signed"),
                          ({**d["people"], "pseudonyms": {k: v for k, v in swapped.items() if k != "0001"}},
                           "name 3 invitations, its members 4"),
                          ({"pseudonyms": "x"}, "malformed")):
        path.write_text(json.dumps({**d, "people": people}))
        with pytest.raises(DPTopicError, match=match):
            en.read_directory(path)


@pytest.mark.parametrize("count, ids, ledger, match", [
    (None, PEOPLE[:5] + [PEOPLE[0].upper()], "l", r"ids\[0\] and ids\[5\] name one person"),
    (7, PEOPLE[:6], "l", r"ids names 6 people and count=7"),
    (5, PEOPLE[:6], "l", r"ids names 6 people and count=5"),
    (None, PEOPLE[:6], None, "give ledger too"),
    (None, PEOPLE[:2], "l", "count=2"),
])
def test_invitations_for_bad_ids_are_refused_in_one_line_with_nothing_written(tmp_path, count, ids, ledger, match):
    with pytest.raises(ParameterError, match=match):
        en.make_invitations(tmp_path / "k", count, tmp_path / "inv", collusion=1, ids=ids,
                            ledger=None if ledger is None else tmp_path / ledger)
    assert sorted(p.name for p in tmp_path.iterdir()) == []        # no key, no folder, no ledger


def test_a_round_in_cohorts_names_its_people_for_the_whole_round(tmp_path):
    ledger = DatasetLedger(tmp_path / "l.sqlite")
    people = [f"p{i:02d}@x.org" for i in range(24)]
    make_cohort_invitations(tmp_path / "k", None, tmp_path / "inv", 12, 0, 1, "big", ids=people, ledger=ledger)
    d = read_cohort_directory(tmp_path / "inv" / "directory.json")
    context, pseudonyms = people_of(d)
    invitations = [read_cohort_invitation(f) for f in sorted((tmp_path / "inv").glob("invitation-*.json"))]
    assert context == "big" and sorted(inv["person"] for inv in invitations) == people
    assert all(pseudonyms[inv["contributor"]] == ledger.pseudonyms([inv["person"]], "big")[0] for inv in invitations)


def test_a_simulation_seats_each_invitation_with_its_person():
    invitations = [{"contributor": "0001", "person": "b"}, {"contributor": "0002", "person": "a"}]
    assert [i["contributor"] for i in seat_by_person(invitations, ["a", "b"])] == ["0002", "0001"]
    numbered = [{"contributor": "0001", "person": None}, {"contributor": "0002", "person": None}]
    assert seat_by_person(numbered, ["a", "b"]) == numbered
    with pytest.raises(DPTopicError, match="none for 'c'"):
        seat_by_person(invitations, ["a", "c"])
