"""dptopic.advice.recommend and too_small_message on a utility table with coverage and downstream shares: the
headline is the coverage share (accuracy beside it, NPMI a column), read by document length when one is given,
compared with the public-knowledge floor, and the topics the budget supports are read off the measured counts."""
import math

import pytest

from dptopic.advice import BELOW_PUBLIC, expected_text, recommend, too_small_message, verdict


def rows(trainer, corpus, length, points, n_docs=1000):
    """Rows of one trainer on one corpus: points are (epsilon, coverage, accuracy, npmi, supported)."""
    return [{"unit": "document", "trainer": trainer, "corpus": corpus, "n_docs": n_docs, "doc_length": length,
             "n_topics": 20, "epsilon": e, "coverage_share": c, "accuracy_share": a, "macro_f1_share": a - 0.05,
             "npmi_ratio": n, "supported": s} for e, c, a, n, s in points]


SHORT = rows("A", "short", 10.0, [(1, 0.3, 0.4, 0.9, 2), (10, 0.7, 0.8, 0.95, 10)])
LONG = rows("A", "long", 100.0, [(1, 0.5, 0.6, 0.5, 4), (10, 0.9, 1.0, 0.9, 30)])
# B has the better NPMI everywhere but the worse coverage: the headline, coverage, picks A
B = rows("B", "short", 10.0, [(1, 0.2, 0.3, 1.5, 1), (10, 0.4, 0.5, 1.5, 3)])
FLOORS = [{"floor": "public-dictionaries", "corpus": "short", "doc_length": 10.0, "coverage_share": 0.35,
           "accuracy_share": 0.45},
          {"floor": "public-dictionaries", "corpus": "long", "doc_length": 100.0, "coverage_share": 0.45,
           "accuracy_share": 0.55},
          {"floor": "random-topics", "corpus": "short", "doc_length": 10.0, "coverage_share": 0.9}]
TABLE = {"source": "test", "rows": SHORT + LONG + B, "floors": FLOORS}


def test_coverage_is_the_headline_and_npmi_a_column():
    r = recommend("document", 1.0, 1000, table=TABLE)
    assert r.headline == "coverage_share" and r.trainer == "A"
    # the median of the two corpora at their first point: coverage (0.3 + 0.5) / 2, accuracy (0.4 + 0.6) / 2
    assert r.expected_share == r.expected_coverage_share == pytest.approx(0.4)
    assert r.expected_accuracy_share == pytest.approx(0.5) and r.expected_npmi_ratio == pytest.approx(0.7)
    assert r.expected_macro_f1_share == pytest.approx(0.45)
    assert r.alternatives == [{"trainer": "B", "expected_share": 0.2, "extrapolated_side": None}]
    assert "of non-private LDA's topic coverage and 50% of its downstream accuracy" in expected_text(r)
    assert verdict(r) == "NOT useful yet"
    # useful from coverage 0.7 (not 0.6, the NPMI ratio's): half-way between the first two points in log(eps x D) on
    # "long" (0.5 -> 0.9), at the second point on "short" (0.3 -> 0.7): the median of the two
    assert r.docs_for_useful == pytest.approx(math.ceil((1000 * 10 ** 0.5 + 10_000) / 2), abs=1)
    assert any("coverage share >= 0.7" in n for n in r.notes)


def test_a_table_without_coverage_is_read_by_its_npmi_ratio():
    old = [{k: v for k, v in r.items() if k not in ("coverage_share", "accuracy_share", "macro_f1_share")}
           for r in SHORT]
    r = recommend("document", 1.0, 1000, table={"rows": old})
    assert r.headline == "npmi_ratio" and r.expected_share == r.expected_npmi_ratio == pytest.approx(0.9)
    assert r.expected_coverage_share is None and expected_text(r) == "90% of non-private LDA's NPMI"
    # trainers measured by NPMI alone are left out beside one with coverage: their figures do not compare
    mixed = recommend("document", 1.0, 1000, table={"rows": SHORT + [dict(r, trainer="C") for r in old]})
    assert mixed.trainer == "A" and mixed.alternatives == []
    # and a trainer's own older rows: its coverage is read off the rows that hold it
    mixed = recommend("document", 1.0, 1000, table={"rows": SHORT + [dict(r, corpus="old") for r in old]})
    assert mixed.per_corpus == {"short": 0.3}


def test_document_length_reads_the_corpora_by_length():
    at = {L: recommend("document", 1.0, 1000, doc_length=L, table=TABLE) for L in (3, 10, 10 ** 1.5, 100, 500)}
    assert at[10].expected_share == pytest.approx(0.3) and at[100].expected_share == pytest.approx(0.5)
    assert at[10 ** 1.5].expected_share == pytest.approx(0.4)           # half-way in log(length)
    assert at[3].expected_share == pytest.approx(0.3) and at[500].expected_share == pytest.approx(0.5)   # held
    assert at[10].expected_accuracy_share == pytest.approx(0.4)
    assert any("read at the length given" in n for n in at[10].notes)
    # the public floor is read at the same length
    assert at[10].public_floor["coverage_share"] == pytest.approx(0.35)
    assert at[100].public_floor["coverage_share"] == pytest.approx(0.45)


def test_below_what_public_knowledge_alone_gives_is_said():
    short = recommend("document", 1.0, 1000, doc_length=10, table=TABLE)
    # coverage 0.3 < the dictionaries' 0.35, accuracy 0.4 < 0.45 (the random floor is not public knowledge)
    assert short.below_public == ["coverage_share", "accuracy_share"]
    assert any(BELOW_PUBLIC in n and "35%, 45%" in n for n in short.notes)
    assert BELOW_PUBLIC in expected_text(short)
    msg = too_small_message("document", 1.0, 1000, 20, table=TABLE, doc_length=10)
    assert BELOW_PUBLIC in msg and "30% of non-private LDA's topic coverage" in msg
    # above the floor and useful: no warning; useful but below the floor: a warning that a public model may serve
    assert too_small_message("document", 10.0, 1000, 20, table=TABLE, doc_length=100) is None
    high_floor = dict(TABLE, floors=[dict(f, accuracy_share=1.5) for f in FLOORS[:2]])
    msg = too_small_message("document", 10.0, 1000, 20, table=high_floor, doc_length=100)
    assert msg is not None and "a public model may serve as well" in msg and BELOW_PUBLIC in msg
    assert recommend("document", 10.0, 1000, doc_length=100, table=TABLE).below_public == []


def test_supported_topics_are_read_off_the_measured_counts_and_capped_at_k():
    r = recommend("document", 10 ** 0.5, 1000, doc_length=100, table=TABLE)
    # long: 4 at eps x D = 1e3, 30 at 1e4: half-way in log is 17
    assert r.supported_topics["count"] == 17 and r.supported_topics["of"] == 20
    assert "measured" in r.supported_topics["how"] and "support test" in r.supported_topics["how"]
    assert "K = 20" not in r.supported_topics["how"]
    assert "at K = 20" in recommend("document", 1.0, 1000, 10, table=TABLE).supported_topics["how"]
    assert recommend("document", 10.0, 1000, 10, doc_length=100, table=TABLE).supported_topics["count"] == 10
    assert recommend("document", 1.0, 1000, table={"rows": [
        {k: v for k, v in x.items() if k != "supported"} for x in SHORT]}).supported_topics is None
