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


@pytest.mark.parametrize("kind", ["documents", "documents and persons", "persons"])
def test_the_table_of_a_sets_rows_is_its_rows(kind):
    """document_table gives the rows document_rows gives (fingerprint, content name, and each row: doc, owner, person,
    copies), as one int64 array; a set of people without documents has no doc (NULL)."""
    from dptopic.dataset_ledger.identity import document_table

    rng = np.random.default_rng(2)
    digests = rng.integers(1, 2**63, 500, dtype=np.uint64)
    digests[::7] = digests[0]                                            # copies: one row, its copies counted
    persons = [f"p{i % 31}" for i in range(500)]
    docs = {"documents": Documents(digests, None, 10), "documents and persons": Documents(digests, persons, 10),
            "persons": Documents(None, persons[:40], counts=list(range(1, 41)))}[kind]
    fingerprint, content, rows = document_rows(KEY, docs)
    f2, c2, table, has_doc = document_table(KEY, docs)
    assert (f2, c2) == (fingerprint, content) and table.dtype == np.int64 and table.shape == (len(rows), 4)
    assert has_doc == (kind != "persons")
    assert [(d if has_doc else None, o, p, n) for d, o, p, n in table.tolist()] == rows
    assert any(r[3] > 1 for r in rows)


def test_a_large_sets_rows_are_written_a_batch_at_a_time(tmp_path):
    """Debiting 100,000 new documents writes their docs rows a batch at a time from one array: the rows document_rows
    gives, in its order, and the traced peak stays under 250 bytes a document with the batches at 1,000 rows (153
    measured; the rows as one list of tuples, and a second list to write them, took 367)."""
    import sqlite3
    import tracemalloc

    from dptopic.accounting.events import PureDPEvent
    from dptopic.dataset_ledger import ledger, linking

    rng = np.random.default_rng(0)
    led = ledger.DatasetLedger(tmp_path / "l.sqlite")
    one = [(PureDPEvent(1.0), 1)]
    led.debit("w", "T", "document", one, 1e-5, documents=Documents(rng.integers(1, 2**63, 10, dtype=np.uint64),
                                                                     None, 10))
    docs = Documents(rng.integers(1, 2**63, 100_000, dtype=np.uint64), None, 10)
    mp = pytest.MonkeyPatch()
    mp.setattr(linking, "ROWS_PER_INSERT", 1000)
    mp.setattr(ledger, "ROWS_PER_WRITE", 1000)
    tracemalloc.start()
    try:
        led.debit("a", "T", "document", one, 1e-5, documents=docs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        mp.undo()
    assert peak / 100_000 < 250, f"{peak / 100_000:.0f} bytes a document"
    con = sqlite3.connect(tmp_path / "l.sqlite")
    try:
        key = bytes.fromhex(con.execute("SELECT value FROM meta WHERE key = 'key'").fetchone()[0])
        written = con.execute("SELECT doc, owner, person, copies FROM docs WHERE docset = 2 ORDER BY rowid").fetchall()
    finally:
        con.close()
    assert written == document_rows(key, docs)[2] and len(written) == 100_000
