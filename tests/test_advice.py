"""`dptopic recommend`: advice from the utility table, before any data is touched."""
import json
import subprocess
import sys

import pytest

from dptopic.advice import load_table, recommend
from dptopic.errors import DPTopicError

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
    assert any("K = 20" in n for n in recommend("document", 1.0, 1000, 50, table=TABLE).notes)
    w = recommend("word", 3.0, 1000, doc_length=50, table=TABLE)
    assert w.trainer == "W" and any("epsilon 150" in n for n in w.notes)


def test_bad_input():
    with pytest.raises(DPTopicError, match="unit"):
        recommend("user", 1.0, 10, table=TABLE)
    with pytest.raises(DPTopicError, match="epsilon"):
        recommend("document", float("nan"), 10, table=TABLE)
    with pytest.raises(DPTopicError, match="n_docs"):
        recommend("document", 1.0, 0, table=TABLE)


def test_shipped_table_is_readable_and_cli_answers():
    assert isinstance(load_table()["rows"], list)
    r = subprocess.run([sys.executable, "-m", "dptopic", "recommend", "--epsilon", "1", "--docs", "10000", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["unit"] == "document" and rec["trainer"] == "docdp-cooc"
    # the shipped table's document-level default comes with the measured option for stop-word-like vocabularies
    assert any("--background-share 0.15" in n for n in rec["notes"])
    assert not any("background" in n for n in recommend("word", 600, 10_000).notes)
    r = subprocess.run([sys.executable, "-m", "dptopic", "recommend", "--epsilon", "-1", "--docs", "10"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
