"""`dptopic recommend`: advice from the utility table, before any data is touched."""
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from dptopic.advice import VECTORS_ROWS, load_table, recommend
from dptopic.errors import DPTopicError
from helpers import run_dptopic

TABLE = {"source": "test", "rows": [
    {"unit": "document", "trainer": "A", "n_docs": 1000, "n_topics": 20, "epsilon": 1, "npmi_ratio": 0.2, "settings": {"clip": 3}},
    {"unit": "document", "trainer": "A", "n_docs": 1000, "n_topics": 20, "epsilon": 10, "npmi_ratio": 0.7, "settings": {"clip": 5}},
    {"unit": "document", "trainer": "B", "n_docs": 1000, "n_topics": 20, "epsilon": 1, "npmi_ratio": 0.1},
    {"unit": "document", "trainer": "B", "n_docs": 1000, "n_topics": 20, "epsilon": 10, "npmi_ratio": 0.9},
    {"unit": "word", "trainer": "W", "n_docs": 1000, "n_topics": 20, "epsilon": 100, "npmi_ratio": 0.8}]}


def test_picks_the_best_trainer_by_epsilon_times_documents():
    r = recommend("document", 1.0, 1000, 20, table=TABLE)
    assert (r.trainer, r.expected_npmi_ratio, r.settings) == ("A", 0.2, {"clip": 3})
    # eps * D = 10,000 either way: the same point of the curve
    assert recommend("document", 10.0, 1000, table=TABLE).trainer == recommend("document", 1.0, 10_000, table=TABLE).trainer == "B"
    mid = recommend("document", 1.0, 10 ** 3.5, table=TABLE)            # half-way in log(eps * D)
    assert mid.expected_npmi_ratio == pytest.approx(0.5) and mid.trainer == "B"


def test_documents_needed_and_notes():
    r = recommend("document", 1.0, 1000, 20, table=TABLE)
    # B reaches 0.6 first: log(eps D) = log(1000) + (0.6 - 0.1) / 0.8 * log(10)
    assert r.docs_for_useful == pytest.approx(1000 * 10 ** 0.625, rel=1e-3)
    assert any("become useful" in n for n in r.notes) and any("word-level" in n for n in r.notes)
    far = recommend("document", 1.0, 10, 20, table=TABLE)
    assert far.extrapolated and far.expected_npmi_ratio == 0.2
    assert any("below every measured setting" in n and "upper bound" in n for n in far.notes)
    assert far.extrapolated_side == "below" and recommend("document", 1.0, 1000, table=TABLE).extrapolated_side is None
    assert any("lower bound" in n for n in recommend("document", 100.0, 10 ** 6, 20, table=TABLE).notes)
    assert any("K = 20" in n for n in recommend("document", 1.0, 1000, 50, table=TABLE).notes)
    w = recommend("word", 300.0, 1000, doc_length=50, table=TABLE)
    assert w.trainer == "W" and any("epsilon 15000" in n for n in w.notes)
    # below the smallest word-level budget measured no trainer runs: no figure is extrapolated to
    low = recommend("word", 3.0, 1000, doc_length=50, table=TABLE)
    assert low.trainer is None and low.expected_npmi_ratio is None
    assert any("no word-level trainer runs at epsilon 3" in n for n in low.notes)
    # even the smallest measured setting was useful: the documents needed are an upper bound, said so
    # (100 x 1000 / 300 = 334 by eps x D, but no corpus under 1,000 documents was measured)
    assert (w.docs_for_useful, w.docs_for_useful_bound) == (1000, "at most")
    assert r.docs_for_useful_bound is None


def test_corpora_are_read_one_at_a_time_and_the_median_is_reported():
    rows = [{"unit": "document", "trainer": "A", "corpus": c, "n_docs": 1000, "n_topics": 20, "epsilon": e,
             "npmi_ratio": v} for c, pts in (("small", ((1, 0.3), (10, 0.9))), ("mid", ((1, 0.2), (10, 0.6))),
                                              ("large", ((1, 0.1), (10, 0.5))))
            for e, v in pts]
    r = recommend("document", 1.0, 10 ** 3.5, table={"rows": rows})
    # half-way in log(eps * D) on each corpus: 0.6, 0.4, 0.3; pooled and made monotone it would say 0.9 or so
    assert r.expected_npmi_ratio == pytest.approx(0.4) and r.expected_range == pytest.approx([0.3, 0.6])
    assert r.per_corpus == pytest.approx({"small": 0.6, "mid": 0.4, "large": 0.3})
    assert any("median over the measured corpora" in n for n in r.notes)
    # documents for 0.6: small at 10**3.5, mid at 10**4, large never: the median of the three is mid's
    assert r.docs_for_useful == pytest.approx(10 ** 4, rel=1e-3)
    # a corpus whose range does not cover eps * D is kept, held at its measured end: an upper bound there, so the
    # median is one too (leaving it out would let the answer rest on whichever corpora cover the point)
    rows.append({"unit": "document", "trainer": "A", "corpus": "far", "n_docs": 10 ** 6, "n_topics": 20,
                 "epsilon": 1, "npmi_ratio": 0.99})
    r = recommend("document", 1.0, 10 ** 3.5, table={"rows": rows})
    assert r.per_corpus["far"] == 0.99 and r.corpus_sides == {"small": None, "mid": None, "large": None, "far": "below"}
    assert r.expected_npmi_ratio == pytest.approx(0.5) and r.extrapolated_side == "below"
    assert any("lies below the settings measured on far" in n and "upper bound" in n for n in r.notes)


def test_bad_input():
    with pytest.raises(DPTopicError, match="unit"):
        recommend("person", 1.0, 10, table=TABLE)
    with pytest.raises(DPTopicError, match="epsilon"):
        recommend("document", float("nan"), 10, table=TABLE)
    with pytest.raises(DPTopicError, match="n_docs"):
        recommend("document", 1.0, 0, table=TABLE)


def test_shipped_table_is_readable_and_cli_answers():
    assert isinstance(load_table()["rows"], list)
    r = run_dptopic("recommend", "--epsilon", "1", "--docs", "10000", "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["unit"] == "document" and rec["trainer"] == "docdp-cooc"
    # the shipped table's document-level default comes with the measured option for stop-word-like vocabularies
    assert any("--background-share 0.15" in n for n in rec["notes"])
    assert any("--word-choice repetition" in n and "Reuters" in n for n in rec["notes"])
    assert not any("background" in n for n in recommend("word", 600, 10_000).notes)
    r = run_dptopic("recommend", "--epsilon", "-1", "--docs", "10")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_a_closed_output_pipe_ends_quietly():
    import os

    r, w = os.pipe()
    os.close(r)                         # the reader is gone before anything is written (`dptopic ... | head -0`)
    p = subprocess.run([sys.executable, "-m", "dptopic", "recommend", "--epsilon", "1", "--docs", "10000", "--json"],
                       stdout=w, stderr=subprocess.PIPE, text=True)
    os.close(w)
    assert p.returncode == 141 and p.stderr == ""


def test_the_word_unit_trains_what_the_table_measured(tmp_path, capsys):
    """for_unit("word") and `train --unit word` build HDPLDA with the 50 iterations the utility table measured, so a
    budget the table lists runs; a small corpus is warned about even where the table's figure looks useful."""
    import dptopic
    from dptopic.cli.main import main

    m = dptopic.for_unit("word", 800.0, n_topics=3)
    assert isinstance(m, dptopic.HDPLDA) and m.n_iter == 50
    with pytest.raises(DPTopicError, match="epsilon > 500"):
        dptopic.for_unit("word", 100.0, n_topics=3)
    with pytest.raises(DPTopicError):
        dptopic.for_unit("document", 800.0)                 # a document-level budget above 500 protects nothing
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(["budget deficit tax revenue spending", "army navy war defense troops",
                            "school education teachers students"] * 40))
    assert main(["train", "--corpus", str(p), "--unit", "word", "--epsilon", "800", "--topics", "3", "--out",
                 str(tmp_path / "m"), "--quiet"]) == 0
    out = " ".join(capsys.readouterr().err.split())      # a warning: on stderr
    assert "lies below every setting measured on public corpora: expect at most" in out
    assert dptopic.load(tmp_path / "m").privacy_["epsilon"] <= 800


def test_the_verdict_and_the_documents_needed_never_contradict_the_table():
    """Below every measured setting the figure is only an upper bound: the verdict says "unknown", not "useful";
    the documents needed never go below the smallest corpus measured (eps x D says nothing of 1-document corpora),
    and an upper bound on them is worded as one."""
    from dptopic.advice import docs_needed_text, verdict

    below = recommend("word", 100.0, 10, table=TABLE)       # W measured at epsilon 100 per word on 1,000 documents
    assert below.extrapolated_side == "below" and below.expected_npmi_ratio >= 0.6
    assert verdict(below) == "unknown (below every measured setting)"
    assert verdict(recommend("document", 10.0, 1000, table=TABLE)) == "useful"
    assert verdict(recommend("document", 1.0, 1000, table=TABLE)) == "NOT useful yet"
    huge = recommend("document", 10 ** 6, 10, table=TABLE)          # eps x D far above: 1 document would do
    assert huge.smallest_measured_docs == 1000
    assert (huge.docs_for_useful, huge.docs_for_useful_bound) == (1000, "at most")
    assert docs_needed_text(huge) == "1,000 or fewer"
    assert docs_needed_text(recommend("document", 1.0, 1000, table=TABLE)).startswith("about ")


def test_cli_words_the_bounds(capsys):
    from dptopic.cli.main import main

    assert main(["recommend", "--unit", "word", "--epsilon", "600", "--docs", "100"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "-> unknown (below every measured setting)" in out and "-> useful" not in out
    assert main(["recommend", "--epsilon", "10000", "--docs", "100"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "5,000 or fewer" in out and "no corpus of fewer than 5,000 documents was measured" in out
    assert "at most 1 " not in out


def test_the_prediction_never_grows_as_the_corpus_or_the_budget_shrinks():
    """More documents or a larger epsilon never lower the expected ratio or the verdict, and every measured corpus is
    behind every answer: dropping the corpora whose range did not cover epsilon x documents left only the most
    favourable one near the low end (epsilon 1: 65% at 5,643 documents, 61% at 6,000, 60% "useful" at 4,000)."""
    from dptopic.advice import verdict

    table = load_table()
    rank = {"NOT useful yet": 0, "useful": 2}
    docs = sorted(set(np.geomspace(10, 10 ** 7, 40).astype(int).tolist() + [4000, 5643, 5644, 6000, 9369, 9370]))
    for unit, epsilons in (("document", np.geomspace(0.01, 500, 20)), ("word", np.geomspace(501, 25_000, 12))):
        # the forecast without vectors (none installed for the suite) reads no docdp-cooc-vectors row
        corpora = {r["corpus"] for r in table["rows"]
                   if r["unit"] == unit and r["trainer"] != VECTORS_ROWS}
        grid = [[recommend(unit, float(e), d, table=table) for d in docs] for e in epsilons]
        for r in (r for row in grid for r in row):
            assert set(r.per_corpus) == corpora
        for line in grid + [list(col) for col in zip(*grid)]:       # along D at each epsilon, along epsilon at each D
            ratios = [r.expected_share for r in line]      # the headline (coverage share; NPMI at word level)
            verdicts = [rank.get(verdict(r), 1) for r in line]
            assert ratios == sorted(ratios) and verdicts == sorted(verdicts), (unit, line[0].epsilon, line[0].n_docs)
    # below the settings some corpora measured, the figure leans on their measured ends: an upper bound, said so
    r = recommend("document", 1.0, 4000, table=table)
    assert r.extrapolated_side == "below" and verdict(r) != "useful"
    assert any("upper bound" in n for n in r.notes)


def test_fewer_topics_than_measured_claim_no_direction():
    r = recommend("document", 1.0, 10_000, 3)
    note = [n for n in r.notes if "K = 3" in n]
    assert note and "expect less" not in note[0] and "higher or lower" in note[0]
    assert any("expect less at K = 50" in n for n in recommend("document", 1.0, 10_000, 50).notes)


def test_a_tiny_epsilon_or_a_huge_corpus_is_answered():
    r = recommend("document", 1e-305, 10)
    # the trainer cannot reach this epsilon at all: no number of documents is offered for useful topics
    assert r.docs_for_useful is None and not r.docs_for_useful_beyond
    assert any("cannot reach epsilon = 1e-305" in n for n in r.notes)
    assert not any("documents to become useful" in n or "topics become useful" in n for n in r.notes)
    assert recommend("document", 5e-324, 1).expected_npmi_ratio is not None
    assert recommend("document", 1e308, 10 ** 12).extrapolated_side == "above"
    with pytest.raises(DPTopicError, match="at most 1,000,000,000,000"):
        recommend("document", 1.0, 10 ** 400)


def test_recommend_refuses_a_document_length_that_overflows_in_one_line():
    with pytest.raises(DPTopicError) as e:
        recommend(unit="word", epsilon=1.0, n_docs=100, doc_length=1e308)
    assert "\n" not in str(e.value) and "at most 1,000,000,000" in str(e.value)


def test_recommend_names_a_product_past_the_largest_float_without_inf():
    rec = recommend(epsilon=1e308, n_docs=100)
    text = " ".join(rec.notes)
    assert "epsilon x documents (above 1.8e+308)" in text and "(inf)" not in text


def test_recommend_above_trains_range_gives_no_split_train_would_refuse():
    rec = recommend(epsilon=1e9, n_docs=100)
    text = " ".join(rec.notes)
    assert "inf" not in text.replace("info", "")
    assert "private_vocabulary=(EPS_V, DELTA_V)" in text and "e+08" not in text     # no 0.6 x 1e9 split
    rec = recommend(epsilon=1.0, n_docs=100)      # within the range: the worked split stays
    assert "epsilon=0.6, delta=5e-06, private_vocabulary=(0.4, 5e-06)" in " ".join(rec.notes)


def test_export_of_one_document_says_one_document(tmp_path, capsys):
    from dptopic import LDA
    from dptopic.cli.main import main
    from dptopic.corpus import Corpus
    docs = ["apple banana cherry apple grape", "river mountain valley river ocean"] * 5
    c = Corpus.from_texts(docs)
    LDA(n_topics=2, n_iter=5, seed=0).fit(c).save(tmp_path / "m")
    (tmp_path / "one.txt").write_text("apple banana river\n")
    assert main(["export", str(tmp_path / "m"), "--corpus", str(tmp_path / "one.txt"), "--format", "text", "--to", "pyldavis",
                 "--out", str(tmp_path / "vis.json")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "2 topics and 1 document written" in out


# ---------------------------------------------------------------------------------------------------------------------
# dptopic.advice.recommend and too_small_message on a utility table with coverage and downstream shares: the
# headline is the coverage share (accuracy beside it, NPMI a column), read by document length when one is given,
# compared with the public-knowledge floor, and the topics the budget supports are read off the measured counts.
import math

from dptopic.advice import BELOW_PUBLIC, expected_text, too_small_message, verdict


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
MEASURED_TABLE = {"source": "test", "rows": SHORT + LONG + B, "floors": FLOORS}


def test_coverage_is_the_headline_and_npmi_a_column():
    r = recommend("document", 1.0, 1000, table=MEASURED_TABLE)
    assert r.headline == "coverage_share" and r.trainer == "A"
    # the median of the two corpora at their first point: coverage (0.3 + 0.5) / 2, accuracy (0.4 + 0.6) / 2
    assert r.expected_share == r.expected_coverage_share == pytest.approx(0.4)
    assert r.expected_accuracy_share == pytest.approx(0.5) and r.expected_npmi_ratio == pytest.approx(0.7)
    assert r.expected_macro_f1_share == pytest.approx(0.45)
    assert r.alternatives == [{"trainer": "B", "expected_share": 0.2, "extrapolated_side": None}]
    assert "of non-private LDA's topic coverage and 50% (40% to 60% across short and long) of its downstream accuracy" \
        in expected_text(r)
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
    at = {L: recommend("document", 1.0, 1000, doc_length=L, table=MEASURED_TABLE) for L in (3, 10, 10 ** 1.5, 100, 500)}
    assert at[10].expected_share == pytest.approx(0.3) and at[100].expected_share == pytest.approx(0.5)
    assert at[10 ** 1.5].expected_share == pytest.approx(0.4)           # half-way in log(length)
    assert at[3].expected_share == pytest.approx(0.3) and at[500].expected_share == pytest.approx(0.5)   # held
    assert at[10].expected_accuracy_share == pytest.approx(0.4)
    assert any("read at the length given" in n for n in at[10].notes)
    # the public floor is read at the same length
    assert at[10].public_floor["coverage_share"] == pytest.approx(0.35)
    assert at[100].public_floor["coverage_share"] == pytest.approx(0.45)


def test_below_what_public_knowledge_alone_gives_is_said():
    short = recommend("document", 1.0, 1000, doc_length=10, table=MEASURED_TABLE)
    # coverage 0.3 < the dictionaries' 0.35, accuracy 0.4 < 0.45 (the random floor is not public knowledge)
    assert short.below_public == ["coverage_share", "accuracy_share"]
    assert any(BELOW_PUBLIC in n and "35%, 45%" in n for n in short.notes)
    assert BELOW_PUBLIC in expected_text(short)
    msg = too_small_message("document", 1.0, 1000, 20, table=MEASURED_TABLE, doc_length=10)
    assert BELOW_PUBLIC in msg and "30% (30% to 50% across short and long) of non-private LDA's topic coverage" in msg
    # above the floor and useful: no warning; useful but below the floor: a warning that a public model may serve
    assert too_small_message("document", 10.0, 1000, 20, table=MEASURED_TABLE, doc_length=100) is None
    high_floor = dict(MEASURED_TABLE, floors=[dict(f, accuracy_share=1.5) for f in FLOORS[:2]])
    msg = too_small_message("document", 10.0, 1000, 20, table=high_floor, doc_length=100)
    assert msg is not None and "a public model may serve as well" in msg and BELOW_PUBLIC in msg
    assert recommend("document", 10.0, 1000, doc_length=100, table=MEASURED_TABLE).below_public == []


def test_supported_topics_are_read_off_the_measured_counts_and_capped_at_k():
    r = recommend("document", 10 ** 0.5, 1000, doc_length=100, table=MEASURED_TABLE)
    # long: 4 at eps x D = 1e3, 30 at 1e4: half-way in log is 17
    assert r.supported_topics["count"] == 17 and r.supported_topics["of"] == 20
    assert "measured" in r.supported_topics["how"] and "support test" in r.supported_topics["how"]
    assert "K = 20" not in r.supported_topics["how"]
    assert "at K = 20" in recommend("document", 1.0, 1000, 10, table=MEASURED_TABLE).supported_topics["how"]
    assert recommend("document", 10.0, 1000, 10, doc_length=100, table=MEASURED_TABLE).supported_topics["count"] == 10
    assert recommend("document", 1.0, 1000, table={"rows": [
        {k: v for k, v in x.items() if k != "supported"} for x in SHORT]}).supported_topics is None


def test_a_high_share_beside_one_supported_topic_is_not_called_useful():
    """recommend --doc-length 5 said "88% ... useful" beside "1 of 20 topics supported": on very short documents
    non-private LDA does poorly too, so the share is high while the budget supports one topic."""
    from dptopic.advice import recommend, verdict

    rec = recommend("document", 8.0, 2000, 20, doc_length=5)
    assert rec.supported_topics["count"] <= 2 and rec.expected_share >= 0.7
    assert verdict(rec).startswith("NOT useful yet: only") and "of 20 topics" in verdict(rec)
    assert verdict(recommend("user", 8.0, 2000, 20)) == "useful"      # 13 of 20 supported


def test_the_user_level_advice_counts_people():
    """recommend --unit user said "documents" for people."""
    from dptopic.advice import recommend

    rec = recommend("user", 1.0, 100, 20, delta=0.1, vectors=False)
    text = " ".join(rec.notes)
    # the people from which both the coverage and the supported topics are useful, as the verdict asks
    assert "epsilon x people (100)" in text and "more than 100 and at most 9,370 people" in text
    assert "large for 100 people" in text
    assert "epsilon x documents" not in text and "with fewer documents, a word-level" not in text


def test_with_public_vectors_the_forecast_reads_their_rows_and_the_higher_floor():
    """Where public vectors are installed, docdp-cooc uses them by default, so the forecast reads the table's
    docdp-cooc-vectors rows (named docdp-cooc), and the floor is the higher of the dictionaries' and the vectors'
    alone; without them those rows are never read."""
    row = {"unit": "document", "corpus": "c", "n_docs": 10_000, "doc_length": 50.0, "n_topics": 20, "epsilon": 1.0}
    table = {"rows": [dict(row, trainer="docdp-cooc", coverage_share=0.6, accuracy_share=0.5),
                      dict(row, trainer="docdp-cooc-vectors", coverage_share=0.62, accuracy_share=0.7)],
             "floors": [{"floor": "public-dictionaries", "corpus": "c", "doc_length": 50.0, "coverage_share": 0.4,
                         "accuracy_share": 0.55},
                        {"floor": "public-vectors", "corpus": "c", "doc_length": 50.0, "coverage_share": 0.3,
                         "accuracy_share": 0.75}]}
    plain = recommend("document", 1.0, 10_000, 20, table=table, vectors=False)
    assert plain.trainer == "docdp-cooc" and not plain.vectors
    assert plain.expected_accuracy_share == 0.5 and plain.public_floor["accuracy_share"] == 0.55
    assert [a["trainer"] for a in plain.alternatives] == []
    withv = recommend("document", 1.0, 10_000, 20, table=table, vectors=True)
    assert withv.trainer == "docdp-cooc" and withv.vectors and withv.expected_accuracy_share == 0.7
    assert withv.public_floor == {"coverage_share": 0.4, "accuracy_share": 0.75}
    assert withv.below_public == ["accuracy_share"]              # 0.70 against the vectors' own 0.75
    assert any("forecast with public word vectors" in n for n in withv.notes)
    # the suite sees no vectors installed (tests/conftest.py): the default is the forecast without them
    assert not recommend("document", 1.0, 10_000, 20, table=table).vectors


def test_the_user_level_forecast_with_vectors_reads_the_rows_of_the_route_the_user_unit_takes():
    """At either unit ``vectors_route="auto"`` takes its route by the first release's signal (the groups on 20
    Newsgroups and the State of the Union): so the user-level forecast with vectors reads the document level's rows
    with vectors, each count of documents read as people, and the table keeps no rows of a route no unit takes."""
    table = load_table()
    assert not [r for r in table["rows"] if r["trainer"] == "docdp-cooc-vectors-spread"]
    auto = {r["corpus"]: r for r in table["rows"] if r["trainer"] == VECTORS_ROWS}
    for corpus in ("sotu", "20newsgroups"):          # the two corpora where auto takes the groups
        at = auto[corpus]
        user = recommend("user", at["epsilon"], at["n_docs"], at["n_topics"], table=table, vectors=True)
        document = recommend("document", at["epsilon"], at["n_docs"], at["n_topics"], table=table, vectors=True)
        assert user.vectors and user.per_corpus[corpus] == pytest.approx(at["coverage_share"])
        assert document.per_corpus[corpus] == pytest.approx(at["coverage_share"])


def test_the_forecast_with_vectors_reads_measurements_at_epsilon_2_and_4_on_every_corpus():
    """The table's docdp-cooc-vectors rows span epsilon 0.5 to 8 on the five corpora (2026-11-28; before, epsilon 1
    only, so every other budget was read as a bound at the measured ends): at epsilon 2 and 4, at each corpus's own
    size, the forecast with vectors reads that corpus's row (its curve made non-decreasing) as a measurement."""
    table = load_table()
    rows = [r for r in table["rows"] if r["trainer"] == VECTORS_ROWS]
    corpora = {"20newsgroups", "20newsgroups-5000", "election-tweets", "sotu", "reuters"}
    assert {(r["corpus"], float(r["epsilon"])) for r in rows} == {(c, e) for c in corpora for e in (0.5, 1, 2, 4, 8)}
    for eps in (2.0, 4.0):
        for at in (r for r in rows if r["epsilon"] == eps):
            rec = recommend("document", eps, at["n_docs"], at["n_topics"], table=table, vectors=True)
            curve = [r["coverage_share"] for r in rows if r["corpus"] == at["corpus"] and r["epsilon"] <= eps]
            assert rec.vectors and rec.corpus_sides[at["corpus"]] is None, (eps, at["corpus"])
            assert rec.per_corpus[at["corpus"]] == pytest.approx(max(curve), abs=1e-3)
    # with every corpus measured around it, the forecast at epsilon 2 on 11,287 documents is no bound
    rec = recommend("document", 2.0, 11_287, 20, table=table, vectors=True)
    assert not rec.extrapolated and set(rec.per_corpus) == corpora


def test_the_advice_names_parameters_and_the_command_line_writes_its_flags():
    """The library's advice speaks Python (``vocabulary='PUBLIC_WORDS.txt'``, ``recovery='nmf'``): no note or verdict
    writes a flag; ``dptopic recommend`` writes the same notes in its flags (cli.recommend.in_flags)."""
    from dptopic.advice import USER_NOTE, verdict
    from dptopic.cli.recommend import in_flags
    flag = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")
    cases = [("document", 1.0, 100, 1e-5), ("document", 1e9, 100, 1e-5), ("document", 1e-305, 10, 1e-5),
             ("document", 1.0, 10_000, 1e-7), ("user", 1.0, 10_000, 1e-5), ("word", 3.0, 10_000, 1e-5),
             ("word", 1000.0, 10_000, 1e-5)]
    for unit, eps, docs, delta in cases:
        rec = recommend(unit, eps, docs, delta=delta)
        said = [*rec.notes, verdict(rec)]
        assert not [n for n in said if flag.search(n)], (unit, eps)
        assert all(not flag.search(in_flags(n)) for n in said if not hasattr(n, "message"))
    rec = recommend("document", 1.0, 100)
    vocab = [n for n in rec.notes if "vocabulary=" in n]
    assert len(vocab) == 1 and {"vocabulary", "private_vocabulary"} <= set(vocab[0].parameters)
    assert "--vocabulary PUBLIC_WORDS.txt" in in_flags(vocab[0])
    assert "--private-vocabulary 0.4,5e-06" in in_flags(vocab[0]) and "private_vocabulary=" not in in_flags(vocab[0])
    assert "user_field='FIELD'" in USER_NOTE and "--unit user --user-field FIELD" in in_flags(USER_NOTE)
    far = recommend("document", 1e9, 100)
    assert "unit='document'" in verdict(far) and "dptopic train --unit document" in in_flags(verdict(far))


def _coverage_rows(corpus, points, n_docs=5000, supported=None):
    """A trainer's rows on one corpus: ``points`` as ``(epsilon, coverage share)``, and ``supported`` counts beside."""
    return [{"unit": "document", "trainer": "A", "corpus": corpus, "n_docs": n_docs, "n_topics": 20, "epsilon": e,
             "coverage_share": c, "accuracy_share": 0.9, "npmi_ratio": 0.8,
             **({} if supported is None else {"supported": supported[i]})} for i, (e, c) in enumerate(points)]


# one corpus already useful at its smallest setting, two that need twice the signal: at 2,129 people and epsilon 2
# (4,258 against 5,000 measured) the median is not useful, while the documents needed read "5,000 or fewer"
SMALL_PEOPLE_TABLE = {"rows": _coverage_rows("c1", ((1, 0.75), (2, 0.8), (4, 0.85)))
                      + _coverage_rows("c2", ((1, 0.6), (2, 0.72), (4, 0.8)))
                      + _coverage_rows("c3", ((1, 0.6), (2, 0.72), (4, 0.8)))}


def test_the_people_needed_agree_with_a_verdict_that_is_not_useful_and_a_budget_that_is_is_named():
    """2,129 people at epsilon 2 were called "NOT useful yet" beside "people for useful topics: 5,000 or fewer": the
    count now says more than the count given (the verdict) and at most what was measured, and the advice names the
    smallest budget whose forecast for that many is useful."""
    from dptopic.advice import docs_needed_text, epsilon_for_useful, verdict

    r = recommend("user", 2.0, 2129, 20, table=SMALL_PEOPLE_TABLE, vectors=False)
    assert verdict(r) == "NOT useful yet"
    assert docs_needed_text(r) == "more than 2,129 and at most 5,000"
    E = epsilon_for_useful(r, SMALL_PEOPLE_TABLE)
    assert E is not None and 2.0 < E <= 500 and r.epsilon_for_useful == E
    assert verdict(recommend("user", E, 2129, 20, table=SMALL_PEOPLE_TABLE, vectors=False)) == "useful"
    assert verdict(recommend("user", E / 1.06, 2129, 20, table=SMALL_PEOPLE_TABLE, vectors=False)) != "useful"
    # where the forecast is useful, nothing is said of a larger budget
    useful = recommend("user", E, 2129, 20, table=SMALL_PEOPLE_TABLE, vectors=False)
    assert epsilon_for_useful(useful, SMALL_PEOPLE_TABLE) is None and useful.docs_for_useful_above is None


def test_the_documents_needed_wait_for_the_supported_topics_the_verdict_asks():
    """Coverage useful everywhere but only 1 of 20 topics supported at the smallest setting: the verdict is "NOT
    useful yet", so the documents for useful topics are those from which enough topics stand above the noise, not the
    smallest setting measured."""
    from dptopic.advice import docs_needed_text, useful_supported, verdict

    table = {"rows": _coverage_rows("c", ((1, 0.8), (2, 0.85), (4, 0.9)), supported=(1, 3, 10))}
    r = recommend("document", 1.0, 5000, 20, table=table, vectors=False)
    assert verdict(r).startswith("NOT useful yet: only 1 of 20") and useful_supported(20) == 5
    assert r.docs_for_useful > 5000 and docs_needed_text(r) == f"about {r.docs_for_useful:,}"
    assert verdict(recommend("document", 1.0, r.docs_for_useful, 20, table=table, vectors=False)) == "useful"


def test_fewer_topics_than_the_table_supports_say_why_their_count_is_smaller():
    """The table measured at K = 20 supports 12 topics; at K = 10 the forecast is 10 of 10, fewer than 12, and says
    why: every topic asked, not a weaker release."""
    from dptopic.advice import supported_note

    table = {"rows": _coverage_rows("c", ((1, 0.8), (2, 0.85)), supported=(12, 14))}
    ten, twenty = (recommend("document", 1.0, 5000, k, table=table, vectors=False) for k in (10, 20))
    assert (ten.supported_topics["count"], twenty.supported_topics["count"]) == (10, 12)
    assert "at K = 20 the same budget supported 12" in supported_note(ten)
    assert "cannot have more than 10" in supported_note(ten) and "cannot have more" not in supported_note(twenty)
