"""`dptopic recommend` prints the coverage and downstream accuracy shares to expect as the headline (NPMI beside them),
says where they lie below what public knowledge alone gives, reads --doc-length at the document level, and says how
many of the K topics the budget supports and how that is known."""
import json

import pytest
from package.test_advice import MEASURED_TABLE as TABLE

import dptopic.advice
from dptopic.cli.main import main


@pytest.fixture
def table(tmp_path, monkeypatch):
    path = tmp_path / "utility_table.json"
    path.write_text(json.dumps(TABLE))
    monkeypatch.setattr(dptopic.advice, "TABLE", path)
    return path


def _recommend(capsys, *argv) -> str:
    assert main(["recommend", *map(str, argv)]) in (0, None)
    return " ".join(capsys.readouterr().out.split())


def test_recommend_headlines_coverage_and_accuracy_with_npmi_beside(table, capsys):
    out = _recommend(capsys, "--epsilon", 1, "--docs", 1000)
    assert "expected topic coverage, as a share of non-private LDA's: 40% (30% to 50% across 2 corpora)" in out
    assert "expected downstream accuracy, as a share of non-private LDA's: 50%" in out
    assert "beside them: macro-F1 share 45%, NPMI ratio 70%" in out
    assert "expected NPMI" not in out
    assert "topics the budget supports: 3 of 20 topics above the noise of the release" in out
    assert "measured: A's support test" in out
    assert "alternative: B (20%)" in out


def test_recommend_reads_document_length_and_says_below_public_knowledge(table, capsys):
    out = _recommend(capsys, "--epsilon", 1, "--docs", 1000, "--doc-length", 10)
    assert "expected topic coverage, as a share of non-private LDA's: 30% (30% to 50% across 2 corpora)" \
           " (below what public knowledge alone gives: 35%)" in out
    assert "downstream accuracy, as a share of non-private LDA's: 40% (below what public knowledge alone gives:" \
           " 45%)" in out
    assert "topics the budget supports: 2 of 20" in out
    data = json.loads(main(["recommend", "--epsilon", "1", "--docs", "1000", "--doc-length", "100", "--json"])
                      or capsys.readouterr().out)
    assert data["doc_length"] == 100 and data["expected_coverage_share"] == pytest.approx(0.5)
    assert data["below_public"] == [] and data["supported_topics"]["count"] == 4


def test_recommend_rejects_a_bad_doc_length_in_one_line(table, capsys):
    with pytest.raises(SystemExit) as e:
        main(["recommend", "--epsilon", "1", "--docs", "1000", "--doc-length", "0"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--doc-length" in err and "Traceback" not in err
