"""What the ledger knows documents and people by (dataset_ledger.identity): person ids are strings, as every person
field holds them, and one id is one keyed person whatever its Unicode form."""
import numpy as np
import pytest

from dptopic.dataset_ledger.identity import Documents, check_person, document_rows, person_text
from dptopic.errors import ParameterError

KEY = bytes(range(32))


@pytest.mark.parametrize("person", [5, 5.0, np.int64(5), None, b"5", ("5",)])
def test_a_person_id_that_is_not_a_string_is_refused(person):
    with pytest.raises(ParameterError, match="not a string") as e:
        check_person(person)
    assert e.value.parameter == "person" and "7 and '7'" in str(e.value)


def test_documents_with_persons_that_are_not_strings_are_refused():
    with pytest.raises(ParameterError, match="person=5 is int, not a string"):
        Documents(np.arange(1, 4, dtype=np.uint64), ["a", 5, "b"])
    assert Documents(np.arange(1, 4, dtype=np.uint64), ["a", np.str_("5"), "b"]).persons[1] == "5"


def test_one_person_in_any_unicode_form_is_one_keyed_owner():
    nfc, nfd = "Jos\u00e9", "Jose\u0301"
    assert person_text(nfc) == person_text(nfd)
    _, _, rows = document_rows(KEY, Documents(None, [nfc, nfd], counts=[1, 2]))
    assert len(rows) == 1 and rows[0][3] == 3
