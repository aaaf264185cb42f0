"""How fast the dataset ledger answers at population scale (issue 93, item 6): ``budget show``, ``budget show
--person-level`` and ``budget plan`` read aggregates, never a join of every document with every other.

Two ledgers, each on SQLite and (with ``--postgres URL``) on PostgreSQL:

- **the walk-through's ledger**: two corpora of ``--docs`` synthetic documents each (40,000 by default, the size of
  the numpy and scipy commit histories), by 2,000 people each of whom ``--shared`` (426) write in both, recorded as
  three releases each (six in all), with their digests and sketches (format 3). Targets: ``show`` and
  ``person_summary`` each at most 3 s.
- **a population**: ``--people`` people (10^5 by default; 10^6 for the issue's figure) in five served releases each
  (one document set of people per release, as a served round records them). Targets: ``show`` and
  ``person_summary`` at most 30 s, ``plan`` of one more release touching every person at most 10 s.

Each figure is printed with its ratio to its target, and beside its peer in the same run: one ``SELECT`` that reads
every document row the answer rests on (grouped by set and owner, the least any reader of the rows does), so a loaded
machine slows both alike.

Run:  python benchmarks/bench_ledger_scale.py [--docs 40000] [--people 100000] [--postgres URL]
Smoke run (seconds, figures meaningless):  bench_ledger_scale.py --docs 2000 --people 5000
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from _common import machine, table
from dptopic.accounting.events import PureDPEvent
from dptopic.corpus.ledger_documents import documents_of
from dptopic.dataset_ledger.identity import Documents
from dptopic.dataset_ledger.ledger import DatasetLedger

ONE = [(PureDPEvent(1.0), 1)]


def words(V: int = 5000, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return sorted({"".join(rng.choice(letters, rng.integers(4, 9))) for _ in range(V * 2)})[:V]


def corpus(n_docs: int, people: list, seed: int, vocab: list) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    w = np.asarray(vocab)
    texts = [" ".join(w[rng.integers(0, len(w), rng.integers(8, 60))]) for _ in range(n_docs)]
    return texts, [people[i] for i in rng.integers(0, len(people), n_docs)]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def peer(led) -> float:
    """One SELECT of every document row, grouped by set and owner: the floor of any answer read from the rows."""
    return timed(lambda: led.store.run(lambda tx: len(tx.all(
        "SELECT docset, owner, SUM(copies), MAX(person) FROM docs GROUP BY docset, owner"))))[0]


def walkthrough(where, n_docs: int, shared: int) -> list:
    vocab = words()
    a_people = [f"a{i}@numpy.example" for i in range(2000)]
    b_people = a_people[:shared] + [f"b{i}@scipy.example" for i in range(2000 - shared)]
    led = DatasetLedger(where)
    t_rec = 0.0
    for name, people, seed in (("numpy", a_people, 1), ("scipy", b_people, 2)):
        texts, persons = corpus(n_docs, people, seed, vocab)
        docs = documents_of(texts, persons)
        for _ in range(3):
            t_rec += timed(lambda: led.debit(name, "DocDPCooccurrence", "user", ONE, 1e-5, documents=docs))[0]
    rows = []
    p = peer(led)
    for what, fn, target in (("budget show", led.show, 3.0), ("budget show --person-level", led.person_summary, 3.0),
                             ("budget plan --dataset numpy", lambda: led.plan("numpy", "T", "user", ONE, 1e-5),
                              3.0)):
        t, _ = timed(fn)
        rows.append((f"walk-through: {what}", f"{t:.2f}", f"{target:g}", f"{t / target:.2f}", f"{p:.2f}",
                     f"{t / p:.1f}" if p else "-"))
    rows.append(("walk-through: six debits (recorded)", f"{t_rec:.1f}", "-", "-", "-", "-"))
    return rows


def population(where, n_people: int) -> list:
    led = DatasetLedger(where)
    people = [f"person{i}@example.org" for i in range(n_people)]
    docs = Documents(persons=people, counts=[1] * n_people)
    t_rec = 0.0
    for r in range(5):
        t_rec += timed(lambda: led.debit(f"round{r}", "SecureSum", "user", ONE, 1e-5, documents=docs))[0]
    p = peer(led)
    rows = []
    for what, fn, target in (("budget show", led.show, 30.0), ("budget show --person-level", led.person_summary, 30.0),
                             ("budget plan (every person)", lambda: led.plan("round0", "T", "user", ONE, 1e-5),
                              10.0)):
        t, _ = timed(fn)
        rows.append((f"{n_people:,} people x 5: {what}", f"{t:.2f}", f"{target:g}", f"{t / target:.2f}", f"{p:.2f}",
                     f"{t / p:.1f}" if p else "-"))
    rows.append((f"{n_people:,} people x 5: five debits (recorded)", f"{t_rec:.1f}", "-", "-", "-", "-"))
    return rows


def postgres_database(url: str, name: str) -> str:
    from sqlalchemy import create_engine, text

    eng = create_engine(url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")
    with eng.connect() as c:
        c.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        c.execute(text(f"CREATE DATABASE {name}"))
    eng.dispose()
    return url.rsplit("/", 1)[0] + "/" + name


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=40_000)
    ap.add_argument("--shared", type=int, default=426)
    ap.add_argument("--people", type=int, default=100_000)
    ap.add_argument("--postgres", default=None, metavar="URL",
                    help="also on PostgreSQL: a server whose user may create databases (postgresql://USER@HOST/DB)")
    a = ap.parse_args(argv)
    print(f"machine: {machine()}; load {os.getloadavg()[0]:.1f}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        stores = [("SQLite", lambda n: os.path.join(tmp, f"{n}.sqlite"))]
        if a.postgres:
            stores.append(("PostgreSQL", lambda n: postgres_database(a.postgres, f"bench_{n}")))
        for kind, at in stores:
            rows += [(f"{kind}: {r[0]}", *r[1:]) for r in walkthrough(at("walk"), a.docs, a.shared)]
            rows += [(f"{kind}: {r[0]}", *r[1:]) for r in population(at("people"), a.people)]
    table(rows, ["answer", "seconds", "target", "ratio to target", "peer (one SELECT)", "ratio to peer"])


if __name__ == "__main__":
    main()
