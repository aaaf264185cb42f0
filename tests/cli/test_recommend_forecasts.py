"""`dptopic recommend` prints the coverage and downstream accuracy shares to expect as the headline (NPMI beside them),
says where they lie below what public knowledge alone gives, reads --doc-length at the document level, and says how
many of the K topics the budget supports and how that is known."""
import json

import pytest

import dptopic.advice
from dptopic.cli.main import main
from package.test_advice import MEASURED_TABLE as TABLE


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
    assert "expected topic coverage, as a share of non-private LDA's: 40% (30% to 50% across short and long)" in out
    assert "expected downstream accuracy, as a share of non-private LDA's: 50%" in out
    assert "beside them: macro-F1 share 45%, NPMI ratio 70%" in out
    assert "expected NPMI" not in out
    assert "topics the budget supports: 3 of 20 topics (2 to 4 across short and long) above the noise of the release" in out
    assert "measured: A's support test" in out
    assert "alternative: B (20%)" in out


def test_recommend_reads_document_length_and_says_below_public_knowledge(table, capsys):
    out = _recommend(capsys, "--epsilon", 1, "--docs", 1000, "--doc-length", 10)
    assert "expected topic coverage, as a share of non-private LDA's: 30% (30% to 50% across short and long)" \
           " (below what public knowledge alone gives: 35%)" in out
    assert "downstream accuracy, as a share of non-private LDA's: 40% (40% to 60% across short and long) (below what public knowledge alone gives:" \
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


def test_train_and_recommend_read_one_forecast_with_its_inputs_named(tmp_path, capsys):
    """train read the utility table by the private corpus's exact mean document length (a private figure printed
    without its label) and recommend by its default: the two disagreed. Now train reads no length, names the inputs as
    recommend does, and labels the exact count outside the guarantee."""
    import re

    import numpy as np

    from dptopic.advice import too_small_message

    rng = np.random.default_rng(0)
    words = "apple banana cherry grape lemon mango melon olive peach pear plum quince".split()
    for name, length in (("short.txt", 6), ("long.txt", 60)):
        (tmp_path / name).write_text("\n".join(" ".join(rng.choice(words, length)) for _ in range(50)) + "\n")
    (tmp_path / "words.txt").write_text("\n".join(words) + "\n")
    said = []
    for name in ("short.txt", "long.txt"):
        assert main(["train", "--unit", "document", "--epsilon", "1", "--topics", "3", "--corpus", str(tmp_path / name),
                     "--vocabulary", str(tmp_path / "words.txt"), "--test-size", "0", "--quiet", "--out",
                     str(tmp_path / name[:-4])]) in (0, None)
        err = " ".join(capsys.readouterr().err.split())
        said.append(next(line for line in err.split("warning: ") if "forecast read at" in line).split(" note: ")[0].strip())
    assert said[0] == said[1]          # the documents' lengths are not read
    n = int(re.search(r"([\d,]+) training documents", said[0]).group(1).replace(",", ""))
    assert "document length not given (the median over the measured corpora)" in said[0]
    assert f"{n} is an exact count of the private data: outside the guarantee" in said[0]
    # the same function, the same figures, as Python and recommend read them
    expected = too_small_message("document", 1.0, n, 3, what="training documents")
    assert said[0].strip() == expected, next((said[0][i - 30:i + 30], expected[i - 30:i + 30]) for i in range(len(expected)) if said[0][i] != expected[i])
    out = " ".join(capsys.readouterr().out.split()) if main(["recommend", "--epsilon", "1", "--docs", str(n),
                                                             "--topics", "3"]) in (0, None) else ""
    assert (f"forecast read at: document level, epsilon 1, delta 1e-05, {n} documents, 3 topics, document length not"
            " given") in out


def test_forecasts_give_ranges_that_held_on_a_new_corpus(capsys):
    """On 63,000 health-news texts at epsilon 1 the forecast said "at least 17 of 20" topics supported (14 to 15 came)
    and accuracy >= 90% (86% to 88% came): a corpus's held end bounds that corpus only. The ranges over the measured
    corpora, named, hold them."""
    from dptopic.advice import recommend

    rec = recommend("document", 1.0, 63_326, 20)
    lo, hi = rec.supported_topics["range"]
    assert lo <= 14 and hi >= 15
    a_lo, a_hi = rec.expected_accuracy_range
    assert a_lo <= 0.86 and a_hi >= 0.88
    assert main(["recommend", "--epsilon", "1", "--docs", "63326"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "at least" not in out.split("- ")[0]
    assert f"({lo} to {hi} across 20newsgroups" in out and "sotu" in out and "election-tweets" in out
    assert f"({a_lo:.0%} to {a_hi:.0%} across" in out


def test_recommend_with_vectors_reads_epsilon_2_and_4_as_measurements(capsys, monkeypatch):
    """With public vectors installed, `dptopic recommend` at epsilon 2 and 4 reads the table's rows with vectors
    (measured at epsilon 0.5 to 8 on each corpus since 2026-11-28; before, at 1 only, so these budgets were bounds at
    the measured ends) as measurements: 20 Newsgroups' figure at its own size is its row's, not a bound; at epsilon 2
    every corpus's range holds the point, so no bound is said at all (at 4 the smaller corpora's end below it)."""
    monkeypatch.setattr(dptopic.advice, "vectors_installed", lambda: True)
    rows = [r for r in dptopic.advice.load_table()["rows"] if r["trainer"] == "docdp-cooc-vectors"
            and r["corpus"] == "20newsgroups"]
    for eps in (2, 4):
        out = _recommend(capsys, "--epsilon", eps, "--docs", rows[0]["n_docs"])
        assert "forecast with public word vectors" in out
        measured = max(r["coverage_share"] for r in rows if r["epsilon"] <= eps)     # the curve made non-decreasing
        assert f"20newsgroups {measured:.0%}" in out and "20newsgroups at least" not in out
        assert eps != 2 or ("measured range" not in out and "bound" not in out)


def test_recommend_for_too_few_people_says_more_than_them_and_how_to_get_useful_topics(tmp_path, monkeypatch,
                                                                                        capsys):
    """The people needed agree with the verdict (not "5,000 or fewer" beside "NOT useful yet" for 2,129 people), and
    the advice says what to do: more people, or the budget whose forecast for these people is useful."""
    from package.test_advice import SMALL_PEOPLE_TABLE

    path = tmp_path / "utility_table.json"
    path.write_text(json.dumps(SMALL_PEOPLE_TABLE))
    monkeypatch.setattr(dptopic.advice, "TABLE", path)
    monkeypatch.setattr(dptopic.advice, "vectors_installed", lambda: False)
    out = _recommend(capsys, "--unit", "user", "--epsilon", 2, "--docs", 2129)
    assert "-> NOT useful yet" in out
    assert "people for useful topics (coverage share >= 70%) at this epsilon: more than 2,129 and at most 5,000" in out
    assert "5,000 or fewer" not in out
    assert "to get useful topics: more people (above), or a larger budget: at epsilon" in out
    eps = float(out.split("to get useful topics: more people (above), or a larger budget: at epsilon ")[1].split()[0])
    assert f"dptopic recommend --unit user --epsilon {eps:g} --docs 2129 --topics 20" in out
    assert "-> useful" in _recommend(capsys, "--unit", "user", "--epsilon", eps, "--docs", 2129)
