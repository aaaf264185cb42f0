"""The dataset ledger (dataset_ledger.ledger, with its totals, dataset_ledger.totals): releases with their documents
and owners, totals and caps, plans, and every stored figure checked when read."""
import json
import math
import sqlite3

import numpy as np
import pytest

from dptopic.accounting import ApproxDPEvent, LaplaceEvent, PureDPEvent
from dptopic.accounting.gaussian import SubsampledGaussianEvent, calibrate_noise_multiplier
from dptopic.accounting.group import gaussian_epsilon
from dptopic.accounting.ledger import compose_pld, compose_rdp
from dptopic.dataset_ledger.identity import Documents
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.dataset_ledger.releases import events_from_json, release_guarantee
from dptopic.dataset_ledger.store import LedgerFileError
from dptopic.dataset_ledger.views import total_line
from dptopic.errors import BudgetExceededError, DPTopicError, ParameterError


def _gaussian_plan(epsilon=1.0, delta=1e-5):
    """One Gaussian release calibrated to (epsilon, delta), as DocDPCooccurrence's one-release fit spends."""
    return [(SubsampledGaussianEvent(calibrate_noise_multiplier(epsilon, delta, 1.0, 1), 1.0), 1)]


def _docs(n, start=1, persons=None):
    return Documents(np.arange(start, start + n, dtype=np.uint64) * np.uint64(7919), persons)


def test_two_releases_at_epsilon_one_total_between_one_and_two(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    for _ in range(2):
        led.debit("posts", "DocDPCooccurrence", "document", _gaussian_plan(), 1e-5, documents=_docs(50))
    tot = led.total("posts")
    assert tot["n_releases"] == 2 and tot["unit"] == "document"
    assert 1.0 < tot["epsilon_total"] <= 2.0 and tot["delta_total"] == 1e-5
    assert tot["epsilon_basic"] == pytest.approx(2.0, rel=1e-3) and tot["delta_basic"] == pytest.approx(2e-5)
    assert tot["epsilon_total"] < tot["epsilon_basic"]          # tight composition below the basic sum
    line = total_line(dict(tot, ledger="L"))
    assert line.startswith("releases recorded for these documents in ledger L: epsilon = ")
    assert "per document" in line and "over 2 releases" in line and "no person field" in line


def test_a_total_never_falls_and_never_reads_below_a_releases_own_epsilon(tmp_path):
    """Every total is stated at one delta (the first release's, without a cap): a release added never lowers it, and
    it is never below the model's own epsilon (issue 75, item 16: 8, then 7.764, then 7.635 at the summed delta)."""
    led = DatasetLedger(tmp_path / "l.sqlite")
    seen = []
    for eps in (8.0, 0.5, 0.5):
        led.debit("p", "T", "document", _gaussian_plan(eps), 1e-5, documents=_docs(30))
        tot = led.total("p")
        assert tot["delta_total"] == 1e-5 and "first release" in tot["delta_source"]
        seen.append(tot["epsilon_total"])
    assert seen[0] >= led.releases("p")[0]["epsilon"] and seen[0] <= seen[1] <= seen[2]


def test_steps_whose_deltas_add_past_one_claim_no_guarantee_and_keep_the_ledger_readable(tmp_path):
    """FedLDA's tail rule spends (eps, 0.2) steps 40 times: their deltas add to 8, which bounds nothing."""
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.debit("d", "FedLDA", "user", [(ApproxDPEvent(5.0, 0.2), 40)], 1e-5, documents=_docs(5))
    (r,) = DatasetLedger(tmp_path / "l.sqlite").releases("d")
    assert r["guarantee"] is False and r["delta"] == 1e-5
    assert led.total("d")["epsilon_total"] is None


def test_adding_to_a_release_keeps_one_release(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    rid = led.debit("d", "HDPLDA", "word", [(PureDPEvent(1.0), 2)], 1e-5, documents=_docs(4))
    assert led.debit("d", "HDPLDA", "word", [(PureDPEvent(1.0), 1)], 1e-5, release_id=rid) == rid
    (r,) = led.releases("d")
    assert r["epsilon"] == pytest.approx(3.0, rel=1e-3) and r["groups"][0][1] == 3


def test_a_cap_refuses_a_release_that_would_exceed_it_and_writes_nothing(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.set_cap("posts", 1.5, 1e-5)
    led.debit("posts", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(40))
    led.debit("posts", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(40))   # 1.47 by PLD: admitted
    before = (tmp_path / "l.sqlite").read_bytes()
    with pytest.raises(BudgetExceededError, match="capped at epsilon = 1.5") as e:
        led.debit("posts", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(40, start=20))
    assert "\n" not in str(e.value)
    assert (tmp_path / "l.sqlite").read_bytes() == before          # not even the new documents were kept
    assert led.total("posts")["n_releases"] == 2
    led.debit("other", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(40, start=5000))   # its own
    # other documents under the same name: a total is per document (or person), and these were never released
    led.debit("posts", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(40, start=9000))
    assert led.total("posts")["epsilon_total"] <= 1.5


@pytest.mark.parametrize("variant", ["same, reordered", "one dropped", "a subset", "a union"])
def test_documents_charged_before_are_charged_wherever_they_appear(tmp_path, variant):
    """The cap of the dataset whose documents a release reads applies to it under any name (issue 78's evasions)."""
    led = DatasetLedger(tmp_path / "l.sqlite")
    first = np.arange(1, 201, dtype=np.uint64) * np.uint64(104729)
    led.debit(None, "T", "document", _gaussian_plan(), 1e-5, documents=Documents(first))
    (name,) = led.datasets()
    assert name.startswith("content:")
    led.set_cap(name, 1.2, 1e-5)
    other = {"same, reordered": first[::-1], "one dropped": first[1:], "a subset": first[50:120],
             "a union": np.r_[first, np.arange(500, 700, dtype=np.uint64)]}[variant]
    with pytest.raises(BudgetExceededError, match=f"dataset '{name}' is capped"):
        led.debit("renamed", "T", "document", _gaussian_plan(), 1e-5, documents=Documents(other))
    assert led.datasets() == [name]
    led.debit("fresh", "T", "document", _gaussian_plan(), 1e-5,       # documents never charged: no cap applies
              documents=Documents(np.arange(10_000, 10_100, dtype=np.uint64)))


def test_the_content_name_ignores_order_and_is_keyed_per_ledger(tmp_path):
    a, b = DatasetLedger(tmp_path / "a.sqlite"), DatasetLedger(tmp_path / "b.sqlite")
    d = _docs(20)
    assert a.content_name(d) == a.content_name(Documents(d.digests[::-1]))
    assert a.content_name(d) != a.content_name(_docs(19))
    assert a.content_name(d) != b.content_name(d)          # another ledger, another key
    a.debit(None, "T", "document", _gaussian_plan(), 1e-5, documents=d)
    con = sqlite3.connect(tmp_path / "a.sqlite")
    stored = {r[0] for r in con.execute("SELECT doc FROM docs")}
    con.close()
    raw = {int(x) - (1 << 64) if int(x) >= 1 << 63 else int(x) for x in d.digests}
    assert len(stored) == 20 and not stored & raw          # the digests are keyed before they are stored


def test_a_document_level_release_reaches_a_person_with_k_documents_as_a_group_of_k(tmp_path):
    """Issue 75, item 3: a document-level and a user-level release of one dataset, per person (5 documents each)."""
    led = DatasetLedger(tmp_path / "l.sqlite")
    persons = [f"a{i % 20}" for i in range(100)]
    led.debit("posts", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(100))
    led.debit("posts", "T", "user", _gaussian_plan(), 1e-5, documents=_docs(100, persons=persons))
    tot = led.total("posts")
    assert tot["unit"] == "person" and tot["persons"] == 20
    sigma = _gaussian_plan()[0][0].noise_multiplier
    expected = gaussian_epsilon(math.sqrt(5 ** 2 + 1) / sigma, 1e-5)      # 5-fold sensitivity, then once more
    assert tot["epsilon_total"] == pytest.approx(expected, rel=1e-6)
    assert sorted(tot["largest"], key=lambda x: x["release"]) == [{"release": 1, "group": 5},
                                                                  {"release": 2, "group": 1}]
    assert led.person_total("a3")["epsilon"] == pytest.approx(expected, rel=1e-6)
    assert led.person_total("nobody")["epsilon"] == 0.0
    assert "per person" in total_line(tot)


def test_two_datasets_sharing_half_their_people(tmp_path):
    """Every shared person's total is the composition of both releases; every other person's their own (a reference
    computation by PLD over the events themselves)."""
    led = DatasetLedger(tmp_path / "l.sqlite")
    ev_a = [(LaplaceEvent(scale=4.0, changes=(1,)), 3)]
    ev_b = _gaussian_plan(2.0)
    a_people = [f"p{i}" for i in range(0, 40)]
    b_people = [f"p{i}" for i in range(20, 60)]
    docs_a = Documents(np.arange(1, 81, dtype=np.uint64), [a_people[i % 40] for i in range(80)])
    docs_b = Documents(np.arange(1001, 1041, dtype=np.uint64), b_people)       # other documents, some same people
    led.debit("A", "T", "user", ev_a, 1e-5, documents=docs_a)
    led.debit("B", "T", "user", ev_b, 1e-5, documents=docs_b)
    # the reference: each release's own figure, and both composed by PLD and RDP (the smaller), never below either
    ref_a, ref_b = release_guarantee(ev_a, 1e-5)[0], release_guarantee(ev_b, 1e-5)[0]
    ref_both = max(min(compose_pld(ev_a + ev_b, 1e-5), compose_rdp(ev_a + ev_b, 1e-5)), ref_a, ref_b)
    assert ref_both > max(ref_a, ref_b) + 0.1
    for p in range(60):
        got = led.person_total(f"p{p}")["epsilon"]
        want = ref_both if 20 <= p < 40 else ref_a if p < 20 else ref_b
        assert got == pytest.approx(want, rel=1e-6), p
    summary = led.person_summary()
    assert summary["persons"] == 60
    assert summary["largest"]["epsilon"] == pytest.approx(ref_both, rel=1e-3)
    assert sorted(s["owners"] for s in summary["distribution"]) == [20, 20, 20]
    assert led.total("A")["epsilon_total"] == pytest.approx(ref_both, rel=1e-3)     # its people share B's release
    assert led.show()["datasets"][0]["overlaps"] == [{"dataset": "B", "shared_owners": 20}]


def test_a_person_cap_refuses_a_release_that_would_take_one_person_past_it(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.set_person_cap(2.0, 1e-5)
    led.debit("A", "T", "user", _gaussian_plan(1.5), 1e-5, documents=_docs(10, persons=[f"x{i}" for i in range(10)]))
    with pytest.raises(BudgetExceededError, match="every person is capped at epsilon = 2"):
        led.debit("B", "T", "user", _gaussian_plan(1.5), 1e-5,
                  documents=_docs(3, start=900, persons=["x1", "new", "other"]))
    led.debit("C", "T", "user", _gaussian_plan(1.5), 1e-5, documents=_docs(2, start=950, persons=["y", "z"]))
    assert led.person_cap() == (2.0, 1e-5) and led.datasets() == ["A", "C"]


def test_documents_recorded_without_a_person_join_the_person_another_release_gives(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.debit("plain", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(10))        # no person field
    led.debit("people", "T", "user", _gaussian_plan(), 1e-5, documents=_docs(10, persons=["ann"] * 10))
    got = led.person_total("ann")
    assert {"release": 1, "group": 10} in got["releases"] and {"release": 2, "group": 1} in got["releases"]
    assert led.total("plain")["unit"] == "person"


def test_a_served_release_charges_persons_with_no_documents(tmp_path):
    from dptopic.dataset_ledger.charge import charge_served

    led = DatasetLedger(tmp_path / "l.sqlite")
    led.debit("corpus", "T", "user", _gaussian_plan(), 1e-5, documents=_docs(4, persons=["a", "b", "c", "d"]))
    rid = charge_served(led, "FedLDA round", "user", _gaussian_plan(), {"a": 1, "b": 1, "zed": 1})
    assert led.releases(led.datasets()[-1])[0]["kind"] == "served" and led.datasets()[-1].startswith("people:")
    assert {"release": rid, "group": 1} in led.person_total("a")["releases"]
    assert led.person_total("c")["releases"] == [{"release": 1, "group": 1}]
    with pytest.raises(DPTopicError, match="covers no person"):
        charge_served(led, "x", "user", _gaussian_plan(), {})


def test_a_plan_reads_the_ledger_alone_and_writes_nothing(tmp_path):
    L = tmp_path / "l.sqlite"
    led = DatasetLedger(L)
    led.debit("posts", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(30))
    led.set_cap("posts", 1.6, 1e-5)
    before = L.read_bytes()
    plan = DatasetLedger(L, read_only=True).plan("posts", "T", "document", _gaussian_plan(), 1e-5)
    (row,) = plan["caps"]
    assert row["epsilon_now"] == pytest.approx(led.total("posts")["epsilon_total"])
    assert 1.4 < row["epsilon_after"] < 1.5 and row["remaining"] == pytest.approx(1.6 - row["epsilon_after"])
    assert not plan["refused"]
    assert DatasetLedger(L, read_only=True).plan("posts", "T", "document", _gaussian_plan(3.0), 1e-5)["refused"]
    assert L.read_bytes() == before
    with pytest.raises(DPTopicError, match="holds no dataset under dataset='nope'"):
        led.plan("nope", "T", "document", _gaussian_plan(), 1e-5)


def test_show_has_the_documented_shape(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    rid = led.debit("posts", "DocDPCooccurrence", "document", _gaussian_plan(), 1e-5, documents=_docs(5))
    led.set_model_path(rid, tmp_path / "m")
    data = json.loads(json.dumps(led.show(), allow_nan=False))
    assert list(data) == ["datasets", "person_cap"]
    (d,) = data["datasets"]
    assert list(d) == ["name", "releases", "epsilon_total", "delta_total", "delta_source", "unit", "epsilon_basic",
                       "delta_basic", "epsilon_method", "n_releases", "largest", "units", "overlaps", "cap"]
    assert list(d["releases"][0]) == ["id", "time", "kind", "trainer", "unit", "epsilon", "delta", "guarantee",
                                      "model_path", "note", "documents", "events"]
    assert d["releases"][0]["model_path"] == str(tmp_path / "m") and d["cap"] is None
    assert events_from_json(json.dumps(d["releases"][0]["events"]))[0][0] == _gaussian_plan()[0][0]
    with pytest.raises(DPTopicError, match="holds no dataset under dataset='nope'"):
        led.show("nope")


def test_dp_accounting_recomputes_the_exported_total(tmp_path):
    """``budget show --json`` lists every event with its parameters: dp_accounting's own PLD accountant, given them,
    finds the total the ledger states."""
    from dp_accounting import dp_event, pld

    led = DatasetLedger(tmp_path / "l.sqlite")
    docs = _docs(25)
    led.debit("posts", "T", "document", _gaussian_plan(1.0), 1e-5, documents=docs)
    led.debit("posts", "T", "document", [(LaplaceEvent(scale=5.0, changes=(1,)), 2)], 1e-5, documents=docs)
    (d,) = json.loads(json.dumps(led.show()))["datasets"]
    acc = pld.PLDAccountant(value_discretization_interval=1e-4)
    for r in d["releases"]:
        for e in r["events"]:
            if e["type"] == "poisson_subsampled_gaussian":
                acc.compose(dp_event.GaussianDpEvent(e["noise_multiplier"]), e["count"])
            elif e["type"] == "laplace":
                acc.compose(dp_event.LaplaceDpEvent(e["scale"] / e["l1_sensitivity"]), e["count"])
    theirs = acc.get_epsilon(d["delta_total"])
    assert d["epsilon_total"] == pytest.approx(theirs, rel=2e-3)
    assert d["largest"] == [{"release": 1, "group": 1}, {"release": 2, "group": 1}]


def _edited(tmp_path, sql):
    p = tmp_path / "l.sqlite"
    led = DatasetLedger(p)
    led.debit("d", "T", "document", _gaussian_plan(8.0), 1e-5, documents=_docs(10))
    led.set_cap("d", 100.0, 1e-5)
    con = sqlite3.connect(p)
    con.executescript(sql)
    con.commit()
    con.close()
    return p


@pytest.mark.parametrize("sql, says", [
    ("UPDATE releases SET epsilon = -5", "release 1 of dataset 'd' states epsilon -5"),
    ("UPDATE releases SET delta = 2", "release 1 of dataset 'd' states delta 2"),
    ("UPDATE releases SET epsilon = 1", "release 1 of dataset 'd' states epsilon 1 at delta 1e-05, but its events"
                                        " give 7.99"),
    ("UPDATE releases SET epsilon = 'inf'", "release 1 of dataset 'd' states epsilon 'inf'"),
    ("UPDATE datasets SET cap_epsilon = 'nan'", "dataset 'd' has cap ('nan'"),
    ("UPDATE releases SET events = '[{\"type\": \"laplace\"}]'", "release 1 of dataset 'd' has damaged events"),
    ("UPDATE releases SET guarantee = 7", "release 1 of dataset 'd' has guarantee 7"),
    ("DELETE FROM docsets", "release 1 names document set 1, which is not recorded"),
    ("UPDATE meta SET value = 'xyz' WHERE key = 'key'", "its hashing key"),
])
def test_an_edited_ledger_is_refused_in_one_line_naming_the_row(tmp_path, sql, says):
    """Issue 75, item 7: every stored figure is checked (finite, in range, the one its events give)."""
    p = _edited(tmp_path, sql)
    for read in (lambda: DatasetLedger(p).show(), lambda: DatasetLedger(p, read_only=True).total("d"),
                 lambda: DatasetLedger(p).debit("d", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(3))):
        with pytest.raises(LedgerFileError, match="is damaged") as e:
            read()
        assert says in str(e.value) and "\n" not in str(e.value) and "nothing was spent" in str(e.value)


def test_bad_names_and_caps_are_refused(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    for bad in ("", "a\nb", "x" * 300):
        with pytest.raises(DPTopicError, match="invalid dataset name"):
            led.debit(bad, "T", "document", _gaussian_plan(), 1e-5, documents=_docs(3))
    with pytest.raises(DPTopicError):
        led.set_cap("d", -1.0, 1e-5)
    with pytest.raises(DPTopicError, match="holds no dataset under dataset='typo': nothing to clear"):
        led.set_cap("typo", None, None, clear=True)
    assert led.datasets() == []


def test_a_cap_takes_a_name_of_the_ledger_s_form_only_for_a_dataset_it_holds(tmp_path):
    """``budget cap`` took names that mimic the ledger's own (``content:abc``, ``audit-shadow:x``), adding a dataset
    under them: refused, while a content dataset the ledger recorded (or will: its exact content name) is capped."""
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.debit(None, "T", "document", _gaussian_plan(), 1e-5, documents=_docs(5))
    (content,) = led.datasets()
    for mimic in ("content:abc", "audit-shadow:x", "People:p"):
        with pytest.raises(ParameterError, match="the ledger names datasets itself") as e:
            led.set_cap(mimic, 5.0, 1e-5)
        assert e.value.parameter == "dataset"
    assert led.datasets() == [content]
    led.set_cap(content, 5.0, 1e-5)
    ahead = led.content_name(_docs(7, start=100))
    led.set_cap(ahead, 2.0, 1e-5)
    assert led.cap(content) == (5.0, 1e-5) and led.cap(ahead) == (2.0, 1e-5)


def test_a_person_s_total_takes_the_id_as_a_string_and_refuses_another_type(tmp_path):
    """``person_total(5)`` answered 0 where ``'5'`` had a total: ids are strings in every door (the corpus readers and
    a fit's ``user_ids`` refuse others), and another type is refused in one line."""
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.debit("d", "T", "user", _gaussian_plan(), 1e-5, documents=_docs(4, persons=["5", "5", "6", "7"]))
    assert led.person_total("5")["epsilon"] == pytest.approx(1.0, rel=1e-3)
    for odd in (5, 5.0, np.int64(5), None):
        with pytest.raises(ParameterError, match="is .*, not a string") as e:
            led.person_total(odd)
        assert e.value.parameter == "person"
    with pytest.raises(ParameterError, match="not a string"):
        led.debit("d", "T", "user", _gaussian_plan(), 1e-5, documents=_docs(2, persons=[5, 6]))
    assert len(led.releases("d")) == 1


@pytest.mark.parametrize("path", ["", " "])
def test_an_empty_path_names_no_ledger(path, tmp_path, monkeypatch):
    """``DatasetLedger('')`` said "ledger . is a folder"."""
    monkeypatch.chdir(tmp_path)
    for read_only in (False, True):
        with pytest.raises(ParameterError) as e:
            DatasetLedger(path, read_only=read_only)
        assert str(e.value) == (f"ledger={path!r} names no ledger: give the path of a ledger file or a"
                                " postgresql:// URL.")
        assert e.value.message({"ledger": "--ledger"}) == "--ledger '' names no ledger: give a file path."
    assert list(tmp_path.iterdir()) == []


def test_check_reads_every_row_before_anything_is_read_or_spent(tmp_path):
    """A damaged hashing key was refused only at the first debit, after the corpus was read: ``check`` reads every
    row (the key, every release, the document rows) and refuses a damaged ledger in one line."""
    p = tmp_path / "l.sqlite"
    DatasetLedger(p).debit("d", "T", "document", _gaussian_plan(), 1e-5, documents=_docs(3))
    DatasetLedger(p, read_only=True).check()
    con = sqlite3.connect(p)
    con.execute("UPDATE meta SET value = 'xyz' WHERE key = 'key'")
    con.commit()
    con.close()
    led = DatasetLedger(p, read_only=True)      # opening reads the format alone
    with pytest.raises(LedgerFileError, match="its hashing key") as e:
        led.check()
    assert "\n" not in str(e.value) and "nothing was spent" in str(e.value)




def test_owner_rows_read_a_few_at_a_time_give_the_same_totals(tmp_path, monkeypatch):
    """The owner rows the totals are computed from, read as arrays 2 rows at a time, give every total (per dataset,
    per release, per person) that one read of them all gives."""
    from dptopic.dataset_ledger import owner_rows

    led = DatasetLedger(tmp_path / "l.sqlite")
    persons = [f"p{i % 7}" for i in range(30)]
    led.debit("a", "T", "user", [(PureDPEvent(1.0), 1)], 1e-5, documents=_docs(30, persons=persons))
    led.debit("b", "T", "user", [(PureDPEvent(0.5), 1)], 1e-5, documents=_docs(20, start=11, persons=persons[10:]))
    led.debit("c", "T", "document", [(PureDPEvent(0.25), 1)], 1e-5, documents=_docs(9, start=3))

    def totals():
        return ([led.total(d) for d in "abc"], [led.release_total(i) for i in (1, 2, 3)],
                [led.person_total(p) for p in sorted(set(persons))])
    whole = totals()
    monkeypatch.setattr(owner_rows, "ROWS_AT_ONCE", 2)
    assert totals() == whole
    assert whole[2][0]["epsilon"] > 1.0         # a person in both user-level sets: both charged


def test_the_shared_documents_query_finds_what_filtering_each_row_before_grouping_found():
    """The held-documents query counts holders first and reads lengths only for what it found; the rule it must keep
    (the query it replaced): a row counts where its document is long enough or has no length, and a document is
    shared when 2 to max_holders distinct owners hold it."""
    import random
    import sqlite3

    from dptopic.dataset_ledger.owner_rows import SHARED_DOCUMENTS
    from dptopic.dataset_ledger.people import ID_LINK_PARAMS

    before = ("SELECT d.docset, d.doc, d.owner, d.copies, d.person FROM docs d WHERE d.doc IN (SELECT s.doc FROM docs s"
              " LEFT JOIN doc_info i ON i.doc = s.doc WHERE s.doc IS NOT NULL AND (i.tokens IS NULL OR i.tokens >= ?)"
              " GROUP BY s.doc HAVING COUNT(DISTINCT s.owner) BETWEEN 2 AND ?)")
    p = ID_LINK_PARAMS
    rnd = random.Random(3)
    found_some = False
    for _ in range(30):
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE docs (docset INTEGER, doc INTEGER, owner INTEGER, person INTEGER, copies INTEGER)")
        db.execute("CREATE TABLE doc_info (doc INTEGER PRIMARY KEY, tokens INTEGER NOT NULL, sketch BLOB)")
        for doc in range(40):
            holders = rnd.choice([1, 2, p["max_holders"], p["max_holders"] + 1])
            for owner in rnd.sample(range(8), holders):
                for _ in range(rnd.choice([1, 1, 2])):        # an owner may hold a document in two sets
                    db.execute("INSERT INTO docs VALUES (?, ?, ?, ?, ?)", (rnd.randint(1, 3), doc, owner,
                                                                        rnd.randint(0, 1), rnd.randint(1, 2)))
            if rnd.random() < 0.8:                             # some documents have no length recorded
                db.execute("INSERT INTO doc_info VALUES (?, ?, NULL)", (doc, rnd.choice([1, p["min_tokens"] - 1,
                                                                                         p["min_tokens"], 50])))
        db.execute("INSERT INTO docs VALUES (1, NULL, 99, 0, 1)")   # a row with no document
        want = sorted(db.execute(before, (p["min_tokens"], p["max_holders"])).fetchall())
        got = sorted(db.execute(SHARED_DOCUMENTS, (p["max_holders"], p["min_tokens"])).fetchall())
        assert got == want
        found_some |= bool(want)
    assert found_some
