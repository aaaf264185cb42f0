"""recommend with huge figures: epsilon x documents printed as inf, a document length overflowed, and the
private-vocabulary example split an epsilon train refuses; a one-document export says '1 document'."""
import pytest

from dptopic.advice import recommend
from dptopic.errors import DPTopicError


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
    assert "--private-vocabulary EPS_V,DELTA_V" in text and "e+08" not in text     # no 0.6 x 1e9 split
    rec = recommend(epsilon=1.0, n_docs=100)      # within the range: the worked split stays
    assert "--epsilon 0.6 --delta 5e-06 --private-vocabulary 0.4,5e-06" in " ".join(rec.notes)


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
