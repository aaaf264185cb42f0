"""``dptopic.protocol.person_ids``: an operator's ids file, a round's invitations bound to the people it names (each
invitation its person, the directory each number's pseudonym under the enrollment key), and each refusal one line
with nothing written."""
from __future__ import annotations

import pytest

pytest.importorskip("cryptography")

from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.person_ids import check_person_ids, read_person_ids, seat_by_person

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


def test_a_simulation_seats_each_invitation_with_its_person():
    invitations = [{"contributor": "0001", "person": "b"}, {"contributor": "0002", "person": "a"}]
    assert [i["contributor"] for i in seat_by_person(invitations, ["a", "b"])] == ["0002", "0001"]
    numbered = [{"contributor": "0001", "person": None}, {"contributor": "0002", "person": None}]
    assert seat_by_person(numbered, ["a", "b"]) == numbered
    with pytest.raises(DPTopicError, match="none for 'c'"):
        seat_by_person(invitations, ["a", "c"])
