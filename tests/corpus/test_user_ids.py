"""A corpus carries each document's person (user_ids): read from a JSONL field, a CSV column or a folder of folders,
kept through every subset, split, restriction and save; refused in one line when missing or not a string."""
import json
import re

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


RECORDS = [{"text": "apple banana apple cherry", "user": "ann"}, {"text": "cherry banana grape", "user": "bob"},
           {"text": "", "user": "cy"}, {"text": "apple grape melon", "user": "ann"}]


def test_jsonl_user_field_is_kept_with_its_documents(tmp_path):
    c = Corpus.from_jsonl(_jsonl(tmp_path / "c.jsonl", RECORDS), user_field="user")
    assert c.n_docs == 3 and c.user_ids == ["ann", "bob", "ann"]      # the empty text went with its id
    assert c.subset([2, 0]).user_ids == ["ann", "ann"]
    assert c.restrict(["apple", "grape"]).user_ids == ["ann", "bob", "ann"]
    assert c.restrict(["apple"]).user_ids == ["ann", "ann"]           # bob's document is empty there
    train, test = c.stable_split(0.5) if c.n_docs > 1 else (c, c)
    assert sorted(train.user_ids + test.user_ids) == sorted(c.user_ids)
    assert Corpus.load(c.save(tmp_path / "c.npz")).user_ids == c.user_ids
    assert Corpus.from_jsonl(tmp_path / "c.jsonl").user_ids is None


def test_csv_user_column_and_folder_of_folders(tmp_path):
    (tmp_path / "c.csv").write_text("text,user\napple banana cherry,ann\ngrape melon apple,bob\n")
    assert Corpus.from_csv(tmp_path / "c.csv", user_column="user").user_ids == ["ann", "bob"]
    for person, texts in (("ann", ["apple banana cherry", "apple cherry"]), ("bob", ["grape melon apple"])):
        (tmp_path / "people" / person / "sub").mkdir(parents=True)
        for i, t in enumerate(texts):
            (tmp_path / "people" / person / ("sub" if i else "") / f"{i}.txt").write_text(t)
    c = Corpus.from_directory(tmp_path / "people", users_by_folder=True)
    assert sorted(c.user_ids) == ["ann", "ann", "bob"]
    (tmp_path / "people" / "loose.txt").write_text("banana melon")
    with pytest.raises(DPTopicError, match="'loose.txt' lies in the folder itself, not in a person's sub-folder"):
        Corpus.from_directory(tmp_path / "people", users_by_folder=True)


@pytest.mark.parametrize("records, fragment", [
    ([{"text": "apple banana", "user": "ann"}, {"text": "banana cherry"}],
     "line 2 has no field 'user', so no user id"),
    ([{"text": "apple banana", "user": 7}], "line 1: user id field 'user' is a number, not a string"),
    ([{"text": "apple banana", "user": None}], "line 1: user id field 'user' is null, not a string"),
    ([{"text": "apple banana", "user": "  "}], "line 1 has an empty user id (field 'user')"),
])
def test_jsonl_bad_user_ids_are_refused_in_one_line(tmp_path, records, fragment):
    path = _jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(DPTopicError) as e:
        Corpus.from_jsonl(path, user_field="user")
    assert fragment in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)


def test_csv_row_without_a_user_id_is_refused_naming_its_line(tmp_path):
    (tmp_path / "c.csv").write_text("text,user\napple banana cherry,ann\ngrape melon apple,\n")
    with pytest.raises(DPTopicError, match=r"the row on line 3 has an empty user id \(column 'user'\)"):
        Corpus.from_csv(tmp_path / "c.csv", user_column="user")
    with pytest.raises(DPTopicError, match="no column 'person'"):
        Corpus.from_csv(tmp_path / "c.csv", user_column="person")


@pytest.mark.parametrize("ids, fragment", [([1, 2], "is int '1', not a string"), (["a"], "has 1 entries but there"),
                                           (["a", None], "document 1 has no user id"), ("ab", "must be a list")])
def test_user_ids_given_in_python_are_checked(ids, fragment):
    with pytest.raises(DPTopicError, match=fragment):
        Corpus(np.array([0, 2, 4]), np.array([0, 1, 1, 0]), ["x", "y"], user_ids=ids)


@pytest.mark.parametrize("bad,shown", [("v\u0000", "U+0000 at character 2"), ("\u200bann", "U+200B at character 1"),
                                       ("an\tn", "U+0009 at character 3"), ("bob\ufeff", "U+FEFF at character 4")])
def test_user_ids_holding_control_or_format_characters_are_refused_naming_the_field_and_row(tmp_path, bad, shown):
    """ "v" and "v\\u0000" look like one id but would be two people (a NumPy string array even merges them)."""
    with pytest.raises(DPTopicError, match=rf"^user_ids\[1\] holds an invisible control or format character"
                                           rf" \({re.escape(shown)}\): two ids that look alike"):
        Corpus.from_texts(["apple banana", "cherry grape"], user_ids=["ann", bad])
    path = _jsonl(tmp_path / "c.jsonl", [{"text": "apple banana", "who": "ann"}, {"text": "cherry", "who": bad}])
    with pytest.raises(DPTopicError, match=rf"^bad JSONL file .*: line 2: user id field 'who' holds an invisible"
                                           rf" control or format character \({re.escape(shown)}\)") as e:
        Corpus.from_jsonl(path, user_field="who")
    assert "\n" not in str(e.value)
    kept = Corpus.from_texts(["apple", "grape"], user_ids=["ann\u00e9", "\u4e2d\u6587 x"])     # visible characters
    assert kept.user_ids[1] == "\u4e2d\u6587 x"
