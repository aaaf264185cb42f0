"""What the ledger knows documents and people by (dataset_ledger.identity): person ids are strings, as every person
field holds them, and one id is one keyed person whatever its Unicode form."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

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


def _rows_by_numpys_unique(key, docs, doc=None):
    """document_table as np.unique of the rows wrote it (the reference): fingerprint, content name and table."""
    import hashlib

    from dptopic.dataset_ledger.identity import document_keys, person_id

    def person_keys(persons):
        return np.array([person_id(key, p, docs.context) for p in persons], dtype=np.int64).reshape(-1)

    if docs.digests is None:
        owner = person_keys(docs.persons)
        doc, person = np.zeros(len(owner), np.int64), np.ones(len(owner), np.int64)
        reps, has_doc = np.asarray(docs.counts or [1] * len(owner), dtype=np.int64), False
    else:
        doc = document_keys(key, docs) if doc is None else np.asarray(doc, dtype=np.int64)
        owner = person_keys(docs.persons) if docs.persons is not None else doc
        person = np.full(len(doc), 1 if docs.persons is not None else 0, np.int64)
        reps, has_doc = np.ones(len(doc), np.int64), True
    uniq, inverse = np.unique(np.stack([doc, owner, person], axis=1), axis=0, return_inverse=True)
    copies = np.bincount(inverse.ravel(), weights=reps, minlength=len(uniq)).astype(np.int64)
    h = hashlib.blake2b(key=key, digest_size=16, person=b"ledger-set")
    h.update(b"docs" if has_doc else b"people")
    h.update(np.ascontiguousarray(uniq[:, 0] if has_doc else uniq[:, 1]).tobytes())
    h.update(np.ascontiguousarray(np.where(uniq[:, 2] > 0, uniq[:, 1], 0)).tobytes())
    h.update(copies.tobytes())
    content = hashlib.blake2b(key=key, digest_size=8, person=b"ledger-name")
    ident = uniq[:, 0] if has_doc else uniq[:, 1]
    order = np.lexsort((ident,))
    merged, first = np.unique(ident[order], return_index=True)
    content.update(merged.tobytes())
    content.update(np.asarray(np.add.reduceat(copies[order], first) if len(order) else copies, np.int64).tobytes())
    prefix = "content:" if has_doc else "people:"
    return h.hexdigest(), prefix + content.hexdigest(), np.concatenate([uniq, copies[:, None]], axis=1)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 300), distinct=st.integers(1, 400), people=st.integers(0, 20), served=st.booleans(),
       resolved=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_a_sets_rows_sorted_in_place_are_those_numpys_unique_gives(n, distinct, people, served, resolved, seed):
    """Property: for any set (copies, persons or none, a set of people with counts, ids already resolved as the
    record gives them), document_table's fingerprint, content name and rows are those of np.unique of the rows."""
    from dptopic.dataset_ledger.identity import document_table

    rng = np.random.default_rng(seed)
    persons = [f"p{int(i)}" for i in rng.integers(0, people, n)] if people else None
    if served:
        assume(n > 0)                   # a set of people without documents names at least one
        docs = Documents(None, persons or [f"q{i}" for i in range(n)], counts=rng.integers(1, 5, n).tolist())
        doc = None
    else:
        docs = Documents(rng.integers(1, distinct + 1, n).astype(np.uint64), persons, 10)
        doc = rng.integers(-2**63, 2**63 - 1, distinct + 1)[rng.integers(0, distinct + 1, n)] if resolved else None
    fingerprint, content, table, _ = document_table(KEY, docs, doc)
    want = _rows_by_numpys_unique(KEY, docs, doc)
    assert (fingerprint, content) == want[:2] and np.array_equal(table, want[2].reshape(-1, 4))


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
