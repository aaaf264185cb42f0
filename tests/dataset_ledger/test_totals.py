"""The owners' signatures (dataset_ledger/totals.py): counted a batch at a time from rows in the order of the owner, as
from one array of them all; and the ledger's totals read so, as read from an array."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dptopic.accounting import PureDPEvent
from dptopic.dataset_ledger import owner_rows
from dptopic.dataset_ledger.identity import Documents
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.dataset_ledger.totals import signatures, sorted_signatures


def _releases(rng, sets: int) -> list:
    """A release or two of each document set, some user-level, and one named-only release of a dataset."""
    out, rid = [], 1
    for ds in range(1, sets + 1):
        for _ in range(int(rng.integers(1, 3))):
            out.append({"id": rid, "docset": ds, "dataset": f"d{ds % 2}",
                        "unit": ["document", "user"][int(rng.integers(0, 2))]})
            rid += 1
    out.append({"id": rid, "docset": None, "dataset": "d1", "unit": "document"})
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), owners=st.integers(1, 40), sets=st.integers(1, 4),
       cuts=st.lists(st.integers(0, 200), max_size=6), extra=st.booleans())
def test_signatures_counted_a_batch_at_a_time_are_those_of_all_the_rows(seed, owners, sets, cuts, extra):
    """For any owners' rows (each owner in a few sets, some persons, some with several documents), releases and
    places the sorted rows are cut into batches (an owner's rows cut across two or more batches, empty batches), the
    signatures counted batch by batch are those of all the rows at once: the same releases and group sizes, sets,
    datasets, owners and persons, in the same order."""
    rng = np.random.default_rng(seed)
    rows = []
    for o in rng.choice(10**6, owners, replace=False):
        person = int(rng.integers(0, 2))
        for ds in rng.choice(np.arange(1, sets + 1), int(rng.integers(1, sets + 1)), replace=False):
            rows.append((int(ds), int(o), int(rng.integers(1, 4)), person))
    rows = np.array(rows, dtype=np.int64)
    releases = _releases(rng, sets)
    more = {"id": 99, "docset": 1, "dataset": "d0", "unit": "document"} if extra else None
    want = signatures(tuple(rows[rng.permutation(len(rows))].T), releases, more)
    ordered = rows[np.lexsort((rows[:, 0], rows[:, 1]))]
    at = sorted({min(c, len(ordered)) for c in cuts})
    batches = [tuple(part.T) for part in np.split(ordered, at)]
    got = sorted_signatures(iter(batches), releases, more)
    assert got == want
    assert sum(s.owners for s in got) == owners


def _docs(n, start=1, persons=None):
    return Documents(np.arange(start, start + n, dtype=np.uint64) * np.uint64(7919), persons)


def test_the_totals_read_a_batch_at_a_time_are_those_read_as_one_array(tmp_path, monkeypatch):
    """A per-document ledger's and a per-person ledger's totals (each dataset's and each release's, the first read of
    a transaction counted a batch at a time, owners cut across batches of 3 rows) are those read through one array of
    every owner's rows; and the batches are what the first read of a per-document set's owners takes."""
    led = DatasetLedger(tmp_path / "l.sqlite")
    persons = [f"p{i % 5}" for i in range(24)]
    led.debit("a", "T", "user", [(PureDPEvent(1.0), 1)], 1e-5, documents=_docs(24, persons=persons))
    led.debit("b", "T", "document", [(PureDPEvent(0.5), 1)], 1e-5, documents=_docs(15, start=10))
    led.debit("c", "T", "document", [(PureDPEvent(0.25), 1)], 1e-5, documents=_docs(9, start=3))

    def totals():
        return [led.total(d) for d in "abc"], [led.release_total(i) for i in (1, 2, 3)]
    monkeypatch.setattr(owner_rows, "ROWS_AT_ONCE", 3)
    read = []
    real = owner_rows.OwnerRows._sorted_batches

    def spy(self, tx, state, docsets):
        out = real(self, tx, state, docsets)
        read.append(out is not None)
        return out
    monkeypatch.setattr(owner_rows.OwnerRows, "_sorted_batches", spy)
    batched = totals()
    assert any(read)
    monkeypatch.setattr(owner_rows.OwnerRows, "_sorted_batches", lambda self, tx, state, docsets: None)
    assert totals() == batched
    assert batched[1][1]["epsilon_total"] > 0.5      # documents 10..24 are also in set a (per person) and set c
