"""The one rule for dataset names (dataset_ledger.names): a printable line, never of the forms the ledger gives its
own datasets (content:, people:, NAME-shadow:) where a release is recorded, and taken for a cap only where it names a
dataset the ledger holds or is exactly a content name."""
import pytest

from dptopic.dataset_ledger.names import check_name, is_reserved, no_ledger_error, valid_name
from dptopic.errors import ParameterError


@pytest.mark.parametrize("name", ["content:abc", "people:x", "audit-shadow:x", "Content:ABC", "AUDIT-SHADOW:posts",
                                  "lira-shadow:d", " content:1f0c9a2b7d4e6a35"])
def test_a_name_of_the_ledger_s_own_form_is_refused_where_a_release_is_named(name):
    assert is_reserved(name)
    with pytest.raises(ParameterError, match="the ledger names datasets itself") as e:
        check_name(name)
    assert e.value.parameter == "dataset" and "\n" not in str(e.value)
    assert e.value.message({"dataset": "--dataset"}).startswith("invalid dataset name --dataset")


@pytest.mark.parametrize("name", ["posts", "project:2024", "shadow", "content", "my-shadow", "people", "a:b-shadow:c"])
def test_other_names_are_taken(name):
    assert not is_reserved(name) and check_name(name) == name


@pytest.mark.parametrize("name", ["", " ", "a\nb", "x" * 201, 5, None])
def test_an_empty_or_unprintable_name_is_refused(name):
    for check in (check_name, valid_name):
        with pytest.raises(ParameterError, match="invalid dataset name"):
            check(name)


def test_a_cap_takes_a_recorded_name_or_an_exact_content_name_and_no_mimic():
    assert check_name("content:abc", recorded=["content:abc"]) == "content:abc"
    assert check_name("audit-shadow:posts", recorded=["audit-shadow:posts"]) == "audit-shadow:posts"
    assert check_name("content:1f0c9a2b7d4e6a35", recorded=[]) == "content:1f0c9a2b7d4e6a35"   # capped ahead
    for mimic in ("content:abc", "audit-shadow:x", "content:1F0C9A2B7D4E6A35"):
        with pytest.raises(ParameterError, match="names no dataset it holds"):
            check_name(mimic, recorded=["content:zzz"])
    assert valid_name("audit-shadow:posts") == "audit-shadow:posts"      # the ledger's own names, stored as given


def test_a_name_without_a_ledger_is_refused_in_each_door_s_words():
    e = no_ledger_error("posts")
    assert str(e) == ("dataset='posts' names the release a ledger records, and ledger=False records none: drop dataset"
                      " (or give a ledger).")
    assert e.message({"dataset": "--dataset", "no_ledger": "--no-ledger"}) == (
        "--dataset names the release a ledger records, and --no-ledger records none: drop --dataset (or --no-ledger).")
