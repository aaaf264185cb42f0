"""The ledger's side of identity (formats 3 and 4, :mod:`dptopic.dataset_ledger.linking`): a document stored as the
recorded document it is (by its bags or its sketch), ids linked by their documents, their folded spelling or an alias,
every total and cap read through the links, a damaged link table or key block refused; on SQLite and on PostgreSQL."""
from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest

from dptopic.accounting.events import PureDPEvent
from dptopic.corpus import Corpus
from dptopic.corpus.ledger_documents import documents_of
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.datasets import sotu_texts
from dptopic.errors import BudgetExceededError, DPTopicError
from service_helpers import new_database, throwaway_postgres

ONE = [(PureDPEvent(1.0), 1)]


@pytest.fixture(scope="module")
def texts():
    return [t for t in sotu_texts()[0] if 40 <= len(t.split()) <= 120][:400]


@pytest.fixture(scope="module")
def pg():
    yield from throwaway_postgres()


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request, tmp_path):
    if request.param == "sqlite":
        return tmp_path / "l.sqlite"
    return new_database(request.getfixturevalue("pg").url, "linking")


def _sha(p):
    return hashlib.sha256(p.encode()).hexdigest()[:16]


def _docs(texts, persons=None):
    return documents_of(Corpus.from_texts(texts, max_vocab=None, user_ids=persons))


def _people(texts, n=10, k=4):
    return texts[:n * k], [f"p{i}@example.org" for i in range(n) for _ in range(k)]


def test_an_upper_cased_copy_at_the_document_unit_is_charged_as_the_same_documents(texts, where):
    led = DatasetLedger(where)
    led.debit("a", "T", "document", ONE, 1e-5, documents=_docs(texts[:50]))
    led.debit("b", "T", "document", ONE, 1e-5, documents=_docs([t.upper() + " !" for t in texts[:50]]))
    assert led.total("b")["epsilon_total"] == pytest.approx(2.0, abs=1e-3)
    assert led.total("a")["n_releases"] == 2


def test_rekeyed_ids_are_one_person_for_every_total_and_the_person_cap(texts, where):
    docs, persons = _people(texts)
    led = DatasetLedger(where)
    led.set_person_cap(1.5, 1e-5)
    led.debit("a", "T", "user", ONE, 1e-5, documents=_docs(docs, persons))
    with pytest.raises(BudgetExceededError, match="every person is capped"):
        led.debit("b", "T", "user", ONE, 1e-5, documents=_docs(docs, [_sha(p) for p in persons]))
    assert len(led.show()["datasets"]) == 1          # refused: nothing of it written, links included
    led.set_person_cap(None, None, clear=True)
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs(docs, [_sha(p) for p in persons]))
    assert led.person_total(_sha(persons[0]))["epsilon"] == pytest.approx(2.0, abs=1e-3)
    assert led.person_total(persons[0])["epsilon"] == pytest.approx(2.0, abs=1e-3)
    summary = led.person_summary()
    assert summary["persons"] == 10 and summary["linked"] == {"ids": 10, "why": {"documents": 10, "case": 0,
                                                                                   "alias": 0}}
    (d,) = [x for x in led.show()["datasets"] if x["name"] == "a"]
    assert d["overlaps"] == [{"dataset": "b", "shared_owners": 10}]


def test_an_id_in_another_case_is_the_same_person_without_a_shared_document(texts, where):
    led = DatasetLedger(where)
    led.debit("a", "T", "user", ONE, 1e-5, documents=_docs(texts[:4], ["Ana@Example.org"] * 4))
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs(texts[4:8], ["ana@example.org"] * 4))
    assert led.person_total("ana@example.org")["epsilon"] == pytest.approx(2.0, abs=1e-3)
    assert led.person_summary()["linked"]["why"]["case"] == 1


def test_aliases_link_ids_whose_documents_differ(texts, where):
    led = DatasetLedger(where)
    led.debit("a", "T", "user", ONE, 1e-5, documents=_docs(texts[:4], ["old@example.org"] * 4))
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs(texts[4:8], ["new@example.org"] * 4))
    assert led.person_total("new@example.org")["epsilon"] == pytest.approx(1.0, abs=1e-3)
    assert led.add_aliases([("old@example.org", "new@example.org")]) == 1
    assert led.person_total("new@example.org")["epsilon"] == pytest.approx(2.0, abs=1e-3)
    assert led.person_summary()["persons"] == 1


def test_a_text_many_people_write_links_no_one(texts, where):
    """Forty people each wrote "Fix typo in the docs" and documents of their own: no two of them are one person."""
    led = DatasetLedger(where)
    persons, docs = [], []
    for i in range(40):
        for t in ("Fix typo in the docs", texts[2 * i], texts[2 * i + 1]):
            docs.append(t)
            persons.append(f"dev{i}@example.org")
    led.debit("a", "T", "user", ONE, 1e-5, documents=_docs(docs, persons))
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs(docs[::3], [_sha(p) for p in persons[::3]]))
    summary = led.person_summary()
    assert summary["linked"]["ids"] == 0 and summary["persons"] == 80


def test_a_near_copy_is_found_by_its_sketch_and_an_unrelated_document_is_not(texts, where):
    led = DatasetLedger(where)
    led.debit("a", "T", "document", ONE, 1e-5, documents=_docs(texts[:30]))
    edited = [t.replace(t.split()[5], "qxzzyword", 1) for t in texts[:30]]
    led.debit("b", "T", "document", ONE, 1e-5, documents=_docs(edited))
    led.debit("c", "T", "document", ONE, 1e-5, documents=_docs(texts[100:130]))
    assert led.total("b")["epsilon_total"] == pytest.approx(2.0, abs=1e-3)
    assert led.total("c")["epsilon_total"] == pytest.approx(1.0, abs=1e-3)


def test_a_damaged_link_table_is_refused_before_anything_is_spent(texts, tmp_path):
    L = tmp_path / "l.sqlite"
    docs, persons = _people(texts, n=3)
    led = DatasetLedger(L)
    led.debit("a", "T", "user", ONE, 1e-5, documents=_docs(docs, persons))
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs(docs, [_sha(p) for p in persons]))
    con = sqlite3.connect(L)
    with con:
        con.execute("UPDATE links SET root = 12345 WHERE why = 'documents' AND owner IN (SELECT owner FROM links"
                    " WHERE why = 'documents' LIMIT 1)")
    con.close()
    before = L.read_bytes()
    with pytest.raises(DPTopicError, match="not a root"):
        DatasetLedger(L).check()
    with pytest.raises(DPTopicError, match="not a root"):
        DatasetLedger(L).debit("c", "T", "user", ONE, 1e-5, documents=_docs(docs, persons))
    assert L.read_bytes() == before


def test_a_format_2_ledger_is_read_as_it_was_and_upgraded_on_its_first_write(texts, tmp_path):
    L = tmp_path / "l.sqlite"
    docs, persons = _people(texts, n=3)
    DatasetLedger(L).debit("a", "T", "user", ONE, 1e-5, documents=_docs(docs, persons))
    con = sqlite3.connect(L)
    with con:
        for t in ("doc_keys", "doc_info", "links", "id_keys", "key_blocks"):
            con.execute(f"DROP TABLE {t}")
        con.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
    con.close()
    ro = DatasetLedger(L, read_only=True)
    assert ro.version == 2 and ro.person_total(persons[0])["epsilon"] == pytest.approx(1.0, abs=1e-3)
    led = DatasetLedger(L)
    assert led.version == 4
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs([t.upper() for t in docs], persons))
    assert led.person_total(persons[0])["epsilon"] == pytest.approx(2.0, abs=1e-3)


def test_the_link_rule_needs_several_shared_documents_and_half_of_the_fewer(texts, where):
    """One shared long document is no link, but the release that held it under another id touches its holder; three
    of four shared documents link the ids."""
    led = DatasetLedger(where)
    led.debit("a", "T", "user", ONE, 1e-5, documents=_docs(texts[:8], ["x@a.org"] * 4 + ["y@a.org"] * 4))
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs([texts[0], *texts[200:203]], ["u@b.org"] * 4))
    assert led.person_summary()["linked"]["ids"] == 0 and led.person_summary()["persons"] == 3
    led.debit("c", "T", "user", ONE, 1e-5, documents=_docs([*texts[4:7], texts[300]], ["v@c.org"] * 4))
    assert led.person_summary()["linked"]["ids"] == 1
    assert led.person_total("v@c.org")["epsilon"] == pytest.approx(2.0, abs=1e-3)
    assert np.isclose(led.person_total("x@a.org")["epsilon"], 2.0, atol=1e-3)     # texts[0], under u@b.org too
    assert np.isclose(led.person_total("u@b.org")["epsilon"], 2.0, atol=1e-3)


def test_a_person_with_one_or_two_documents_rekeyed_is_charged_through_the_documents(texts, where):
    """Too few documents to link the ids (fewer than three): the re-keyed release still touches each holder, since
    it held their documents; a short text many ids hold charges no one for another's release."""
    led = DatasetLedger(where)
    persons = [f"p{i}@example.org" for i in range(20)]
    docs = texts[:20] + ["Fix typo"] * 20
    led.debit("a", "T", "user", ONE, 1e-5, documents=_docs(docs, persons + persons))
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs(texts[:20], [_sha(p) for p in persons]))
    led.debit("c", "T", "user", ONE, 1e-5, documents=_docs(["Fix typo"] * 5 + texts[300:305], [f"q{i}" for i in
                                                                                               range(10)]))
    assert led.person_summary()["linked"]["ids"] == 0
    assert [round(led.person_total(p)["epsilon"], 3) for p in (persons[0], _sha(persons[0]))] == [2.0, 2.0]
    assert round(led.person_total("q0")["epsilon"], 3) == 1.0


def test_the_stored_sketches_are_keyed_and_name_no_document_without_the_key(texts, tmp_path):
    """A sketch of a guessed document cannot be compared with what the ledger holds: each position's byte is stored
    through a permutation drawn from the ledger's key, so two ledgers store the same document's sketch differently and
    neither as the raw one; a near copy is still found (test_a_near_copy_is_found_by_its_sketch...)."""
    docs = _docs(texts[:5])
    stored = []
    for name in ("a", "b"):
        L = tmp_path / f"{name}.sqlite"
        DatasetLedger(L).debit("d", "T", "document", ONE, 1e-5, documents=docs)
        con = sqlite3.connect(L)
        stored.append(sorted(bytes(r[0]) for r in con.execute("SELECT sketch FROM doc_info WHERE sketch IS NOT NULL")))
        con.close()
    raw = sorted(np.asarray(docs.signatures[i], dtype=np.uint8).tobytes() for i in range(5))
    assert len(stored[0]) == 5 and not set(stored[0]) & set(raw) and not set(stored[0]) & set(stored[1])


def _pairs(blocks):
    """The ``(key, doc)`` pairs key blocks hold, block after block (rows ``(n, keys, docs)``)."""
    out = []
    for n, k, d in blocks:
        k, d = np.frombuffer(k, "<i8"), np.frombuffer(d, "<i8")
        assert len(k) == len(d) == n
        out += list(zip(k.tolist(), d.tolist()))
    return out


def _rows(path):
    con = sqlite3.connect(path)
    try:
        return (_pairs(con.execute("SELECT n, keys, docs FROM key_blocks ORDER BY id").fetchall()),
                con.execute("SELECT doc, tokens, sketch FROM doc_info ORDER BY rowid").fetchall())
    finally:
        con.close()


def test_a_large_set_is_recorded_a_batch_at_a_time_with_the_rows_written_at_once(texts, tmp_path, monkeypatch):
    """The keys and documents of a new set written in batches of 7 rows, its sketches compared 5 pairs at a time, give
    the ledger the rows (and their order) that one batch gives, under the same ledger key; the second set finds the
    first's documents alike."""
    import shutil

    from dptopic.dataset_ledger import key_blocks, linking, people

    first, second = _docs(texts[:120]), _docs(texts[60:200] + texts[:10])
    DatasetLedger(tmp_path / "whole.sqlite").content_name(first)        # the ledger's key drawn, nothing recorded
    shutil.copy(tmp_path / "whole.sqlite", tmp_path / "batched.sqlite")

    def record(path):
        led = DatasetLedger(path)
        led.debit("a", "T", "document", ONE, 1e-5, documents=first)
        led.debit("b", "T", "document", ONE, 1e-5, documents=second)
        return _rows(path), led.total("b")
    whole = record(tmp_path / "whole.sqlite")
    monkeypatch.setattr(linking, "ROWS_PER_INSERT", 7)
    monkeypatch.setattr(key_blocks, "BLOCK_PAIRS", 7)
    monkeypatch.setattr(people, "PAIRS_PER_CHECK", 5)
    batched = record(tmp_path / "batched.sqlite")
    assert len(whole[0][0]) > 7 and len(whole[0][1]) > 7
    assert batched[0] == whole[0]
    con = sqlite3.connect(tmp_path / "batched.sqlite")
    assert con.execute("SELECT MAX(n), SUM(n) FROM key_blocks").fetchone() == (7, len(whole[0][0]))
    con.close()
    assert batched[1]["epsilon_total"] == whole[1]["epsilon_total"] and batched[1]["n_releases"] == 2


def test_recording_a_sets_keys_holds_arrays_not_a_python_object_per_key(tmp_path):
    """The memory of recording a new set's keys (35 a document) is arrays, a few bytes a key, not a Python tuple per
    key, one part of the keys (the text and bags, or one band) at a time: the traced peak of recording 3,000 documents
    stays under 40 bytes a key (13.5 measured; the whole set's arrays sorted at once took 93, the list of every row as
    a tuple 220)."""
    import tracemalloc

    from dptopic.dataset_ledger import linking

    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghij"), 6)) for _ in range(3000)]
    docs = documents_of(Corpus.from_texts([" ".join(rng.choice(words, 40)) for _ in range(3000)], max_vocab=None))
    key = bytes(32)
    index, keys = linking.document_keys(key, docs)
    doc = np.arange(len(docs.digests), dtype=np.int64)

    class Tx:
        def many(self, sql, rows):
            for _ in rows:
                pass

        def run(self, sql, params=()):
            pass

        def all(self, sql, params=()):
            return []
    linking._record_keys(Tx(), key, docs, doc, np.zeros(0, np.int64))      # the kernels compiled before tracing
    tracemalloc.start()
    try:
        linking._record_keys(Tx(), key, docs, doc, np.zeros(0, np.int64))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / len(keys) < 40, f"{peak / len(keys):.0f} bytes a key"


class _RowsTx:
    """A transaction over an empty ledger that keeps the rows written (the record's statements, as ``tx.many``), or
    with ``keep=False`` reads them and lets them go."""

    def __init__(self, keep=True):
        self.rows, self.keep = {}, keep

    def many(self, sql, rows):
        kept = self.rows.setdefault(sql.split()[2], [])
        for r in rows:
            if self.keep:
                kept.append(r)

    def run(self, sql, params=()):
        assert sql.startswith("INSERT INTO key_blocks")
        if self.keep:
            self.rows.setdefault("key_blocks", []).extend(_pairs([params]))

    def all(self, sql, params=()):
        return []

    def one(self, sql, params=()):
        return (0,)

    def batches(self, sql, size, params=()):
        return iter(())


def test_a_first_sets_keys_hashed_a_part_at_a_time_are_the_whole_sets_keys_recorded_part_by_part(texts):
    """The record hashes its keys a part at a time (the text, the bags, then each band): its rows are the rule
    written out over the whole set's keys (document_keys): each part's new (key, document) pairs, once, sorted."""
    from dptopic.dataset_ledger import linking
    from dptopic.dataset_ledger.identity import document_keys as text_keys

    docs = _docs(texts[:150] + texts[:20] + [t.upper() for t in texts[30:40]])    # copies: one document each
    key = bytes(range(32))
    tx = _RowsTx()
    doc = linking.resolve_documents(tx, key, docs, text_keys(key, docs))
    assert len(np.unique(doc)) < len(doc)
    index, keys = linking.document_keys(key, docs)
    n_bands = np.count_nonzero(np.asarray(docs.bands, dtype=np.uint64), axis=0)
    bounds = np.concatenate([[0, len(doc)], len(keys) - n_bands.sum() + np.concatenate([[0], np.cumsum(n_bands)])])
    want = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        want += sorted(set(zip(keys[a:b].tolist(), doc[index[a:b]].tolist())))
    assert tx.rows["key_blocks"] == want and len(want) > 30 * 150


def test_recording_a_first_set_hashes_its_keys_a_part_at_a_time():
    """Resolving and recording 3,000 new documents (35 keys each) on an empty ledger: the traced peak stays under 20
    bytes a key (14 measured; the whole set's keys hashed at once and held through the record took 26)."""
    import tracemalloc

    from dptopic.dataset_ledger import linking
    from dptopic.dataset_ledger.identity import document_keys as text_keys

    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghij"), 6)) for _ in range(3000)]
    docs = documents_of(Corpus.from_texts([" ".join(rng.choice(words, 40)) for _ in range(3000)], max_vocab=None))
    key = bytes(32)
    doc = text_keys(key, docs)
    linking.resolve_documents(_RowsTx(False), key, docs, doc)        # the kernels compiled before tracing
    n_keys = len(linking.document_keys(key, docs)[1])
    tracemalloc.start()
    try:
        linking.resolve_documents(_RowsTx(False), key, docs, doc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / n_keys < 20, f"{peak / n_keys:.0f} bytes a key"


def test_a_sets_keys_are_written_as_sorted_blocks_and_a_failed_record_leaves_none(texts, tmp_path, monkeypatch):
    """Format 4: a first set's keys are written as key blocks, each ``n`` pairs sorted by key then document (a row a
    block, not a row a key: the format 3 table stays empty), and the second set finds the first's documents through
    them; a record that fails midway rolls back to no block and no release."""
    from dptopic.dataset_ledger import linking

    path = tmp_path / "l.sqlite"
    led = DatasetLedger(path)
    led.debit("a", "T", "document", ONE, 1e-5, documents=_docs(texts[:100]))
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT COUNT(*) FROM doc_keys").fetchone()[0] == 0
        blocks = con.execute("SELECT n, keys, docs FROM key_blocks ORDER BY id").fetchall()
    finally:
        con.close()
    assert sum(n for n, _, _ in blocks) > 30 * 100
    for n, k, d in blocks:
        pairs = list(zip(np.frombuffer(k, "<i8").tolist(), np.frombuffer(d, "<i8").tolist()))
        assert len(pairs) == n and pairs == sorted(set(pairs))
    led.debit("b", "T", "document", ONE, 1e-5, documents=_docs([t.upper() for t in texts[:100]]))
    assert led.total("b")["epsilon_total"] == pytest.approx(2.0, abs=1e-3) and led.total("a")["n_releases"] == 2

    broken = tmp_path / "broken.sqlite"
    DatasetLedger(broken).content_name(_docs(texts[:10]))
    calls = []

    def fail_second(*a):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return record(*a)
    record = linking.write_pairs
    monkeypatch.setattr(linking, "write_pairs", fail_second)
    with pytest.raises(RuntimeError, match="disk full"):
        DatasetLedger(broken).debit("a", "T", "document", ONE, 1e-5, documents=_docs(texts[:100]))
    assert len(calls) == 2
    con = sqlite3.connect(broken)
    try:
        assert con.execute("SELECT COUNT(*) FROM key_blocks").fetchone()[0] == 0
        assert con.execute("SELECT COUNT(*) FROM releases").fetchone()[0] == 0
    finally:
        con.close()


def _to_format_3(path):
    """Rewrite a format 4 ledger as format 3 wrote it: each block's pairs as ``doc_keys`` rows, no key blocks."""
    con = sqlite3.connect(path)
    with con:
        pairs = _pairs(con.execute("SELECT n, keys, docs FROM key_blocks ORDER BY id").fetchall())
        con.executemany("INSERT INTO doc_keys (key, doc) VALUES (?, ?)", pairs)
        con.execute("DROP TABLE key_blocks")
        con.execute("UPDATE meta SET value = '3' WHERE key = 'version'")
    con.close()
    return len(pairs)


def test_a_format_3_ledgers_rows_are_read_as_they_were_and_kept_beside_blocks_once_upgraded(texts, tmp_path):
    """A format 3 ledger (its keys a row each) read only is read as it is: a re-spelled copy of its set has the same
    content name and the file is unchanged. Its first write upgrades it to format 4: the old rows stay and still find
    their documents (a re-keyed release of them links each id to its hashed spelling), and the new keys go to blocks."""
    path = tmp_path / "l.sqlite"
    persons = [f"p{i}@example.org" for i in range(10)]
    first = _docs(texts[:60], persons * 6)
    led = DatasetLedger(path)
    led.debit("a", "T", "user", ONE, 1e-5, documents=first)
    name = led.content_name(_docs(texts[:60]))
    n_pairs = _to_format_3(path)
    before = path.read_bytes()
    ro = DatasetLedger(path, read_only=True)
    assert ro.version == 3 and ro.content_name(_docs([t.upper() for t in texts[:60]])) == name
    assert path.read_bytes() == before
    led = DatasetLedger(path)
    assert led.version == 4
    led.debit("b", "T", "user", ONE, 1e-5, documents=_docs([t.upper() for t in texts[:60]] + texts[100:110],
                                                             [_sha(p) for p in persons] * 7))
    assert led.person_summary()["linked"]["ids"] == 10
    assert led.person_total(persons[0])["epsilon"] == pytest.approx(2.0, abs=1e-3)
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT COUNT(*) FROM doc_keys").fetchone()[0] == n_pairs
        assert con.execute("SELECT SUM(n) FROM key_blocks").fetchone()[0] > 0
    finally:
        con.close()


def test_a_damaged_key_block_is_refused_in_one_line_with_nothing_spent(texts, tmp_path):
    path = tmp_path / "l.sqlite"
    DatasetLedger(path).debit("a", "T", "document", ONE, 1e-5, documents=_docs(texts[:20]))
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE key_blocks SET keys = substr(keys, 1, 16) WHERE id = (SELECT MIN(id) FROM key_blocks)")
    con.close()
    before = path.read_bytes()
    for call in (lambda led: led.check(),
                 lambda led: led.debit("b", "T", "document", ONE, 1e-5, documents=_docs(texts[20:40]))):
        with pytest.raises(DPTopicError, match=r"is damaged: key block \d+ does not hold") as e:
            call(DatasetLedger(path))
        assert "\n" not in str(e.value)
    assert path.read_bytes() == before


def test_keys_looked_up_in_sorted_order_find_numpys_runs():
    """Each value's run of equal recorded keys, found by searching the values in sorted order, is NumPy's
    ``searchsorted`` of each side for the values as given (repeated values, values before, between and after the
    recorded ones); and a sorted value's membership is whether its run is not empty."""
    from dptopic.dataset_ledger import linking
    from dptopic.kernels.sketch_pairs import among_sorted

    rng = np.random.default_rng(8)
    recorded = np.sort(np.concatenate([rng.integers(-50, 50, 300), [-2**63, 2**63 - 1]])).astype(np.int64)
    values = np.concatenate([rng.integers(-60, 60, 500), [-2**63, 2**63 - 1, 7, 7]]).astype(np.int64)
    lo, hi = linking._runs(recorded, values)
    assert np.array_equal(lo, np.searchsorted(recorded, values, "left"))
    assert np.array_equal(hi, np.searchsorted(recorded, values, "right"))
    v = np.sort(values)
    assert np.array_equal(among_sorted(v, recorded), np.isin(v, recorded))


def test_documents_whose_sketches_stay_on_disk_are_recorded_as_those_in_memory_a_band_at_a_time(texts, tmp_path,
                                                                                                  monkeypatch):
    """A corpus whose keys the reader kept on disk gives the ledger its sketch bands a band at a time
    (dptopic.corpus.key_file.BandsOnDisk) and its signatures in the order the record writes them
    (dptopic.corpus.key_file.SignaturesOnDisk): the same rows, in the same order, under the same ledger key, as the
    sketches in memory, and neither the whole table of bands nor that of signatures is ever read."""
    import shutil

    from dptopic.corpus import key_file
    from dptopic.corpus.key_file import BandsOnDisk, KeysOnDisk, SignaturesOnDisk
    from dptopic.dataset_ledger import linking, people

    def on_disk(c):
        return Corpus(c.doc_ptr, c.word_ids, c.vocabulary, content_keys=c.content_keys,
                      token_keys=KeysOnDisk(c.token_keys))
    edited = [t + " quixotically" for t in texts[:12]]      # near copies, found by their sketches
    corpora = [Corpus.from_texts(t, max_vocab=None) for t in (texts[:120] + edited[:6], texts[60:200] + edited)]
    DatasetLedger(tmp_path / "memory.sqlite").content_name(documents_of(corpora[0]))    # the key drawn, no record
    shutil.copy(tmp_path / "memory.sqlite", tmp_path / "disk.sqlite")

    def record(path, sets):
        led = DatasetLedger(path)
        for name, docs in zip("ab", sets):
            led.debit(name, "T", "document", ONE, 1e-5, documents=docs)
        return _rows(path), led.total("b")
    memory = record(tmp_path / "memory.sqlite", [documents_of(c) for c in corpora])
    kept = [documents_of(on_disk(c)) for c in corpora]
    assert all(isinstance(d.bands, BandsOnDisk) and isinstance(d.signatures, SignaturesOnDisk) for d in kept)
    # the new documents' sketches in the order of their ids, several batches through several buckets
    monkeypatch.setattr(linking, "ROWS_PER_INSERT", 16)
    monkeypatch.setattr(key_file, "BUCKET_BYTES", 3 * 16 * (kept[0].signatures.shape[1] + 8))
    monkeypatch.setattr(key_file, "CHUNK_ROWS", 40)
    buckets = []
    made = key_file.tempfile.TemporaryFile
    monkeypatch.setattr(key_file.tempfile, "TemporaryFile", lambda *a, **k: buckets.append(1) or made(*a, **k))
    monkeypatch.setattr(SignaturesOnDisk, "__array__", lambda self, *a, **k: pytest.fail("every sketch read at once"))
    monkeypatch.setattr(people, "VERIFIED_ROWS", 6)       # the candidates verified a few rows at a time
    taken = []
    monkeypatch.setattr(SignaturesOnDisk, "take", lambda self, rows, take=SignaturesOnDisk.take: taken.append(len(rows))
                        or take(self, rows))
    assert np.array_equal(np.asarray(kept[0].bands), documents_of(corpora[0]).bands)
    read = []
    monkeypatch.setattr(BandsOnDisk, "__array__", lambda self, *a, **k: pytest.fail("every band read at once"))
    monkeypatch.setattr(KeysOnDisk, "band", lambda self, j, band=KeysOnDisk.band: read.append(j) or band(self, j))
    disk = record(tmp_path / "disk.sqlite", kept)
    assert disk[0] == memory[0] and len(memory[0][0]) > 100
    assert disk[1]["epsilon_total"] == memory[1]["epsilon_total"] == pytest.approx(2.0, abs=1e-3)
    assert read and set(read) == set(range(kept[0].bands.shape[1]))
    # never read whole: the candidates bounded on two bits a position, those the bound lets through (and the second
    # set's candidates among the first's) verified on a few rows at a time, the new sketches in order through buckets
    assert sum(t <= 6 for t in taken) >= 3 and buckets.count(1) >= 4      # at least two buckets a set


def test_a_temporary_folder_that_fills_during_the_record_records_and_spends_nothing(texts, tmp_path, monkeypatch):
    """The record's buckets of signatures (dptopic.corpus.key_file.SignaturesOnDisk.batches) fail to be written: the
    debit stops in an OSError and the ledger holds no release, no document set and no key."""
    from dptopic.corpus import key_file
    from dptopic.corpus.key_file import KeysOnDisk
    from dptopic.dataset_ledger import linking

    c = Corpus.from_texts(texts[:120], max_vocab=None)
    docs = documents_of(Corpus(c.doc_ptr, c.word_ids, c.vocabulary, content_keys=c.content_keys,
                               token_keys=KeysOnDisk(c.token_keys)))
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.content_name(docs)       # the ledger and its key made first
    before = _rows(tmp_path / "l.sqlite")
    monkeypatch.setattr(linking, "ROWS_PER_INSERT", 16)
    monkeypatch.setattr(key_file, "BUCKET_BYTES", 3 * 16 * (docs.signatures.shape[1] + 8))

    class Full:
        def __init__(self, *a, **k):
            pass

        def write(self, data):
            raise OSError(28, "No space left on device")

        def close(self):
            pass
    monkeypatch.setattr(key_file.tempfile, "TemporaryFile", Full)
    with pytest.raises(OSError, match="No space"):
        led.debit("a", "T", "document", ONE, 1e-5, documents=docs)
    assert _rows(tmp_path / "l.sqlite") == before and led.releases("a") == []
