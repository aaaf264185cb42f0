"""Reading tab-separated tables: Orange's three header rows (names, types, flags) are a header, not documents; a
plain .tsv has one header row."""
import pytest

from dptopic.corpus import Corpus
from dptopic.corpus.files import tab_header_rows

ROWS = "apple banana cherry\ten\tx\nbanana grape lemon\ten\tx\ncherry lemon mango plum\tfr\ty\n"


@pytest.mark.parametrize("header,rows", [
    ("content\tlang\tsource\nstring\tdiscrete\tstring\nmeta include=True\tclass\tmeta\n", 3),   # Orange, long names
    ("content\tlang\tsource\ns\td\ts\nm\tc\tm\n", 3),                                          # Orange, short names
    ("content\tlang\tsource\nstring\tdiscrete\tstring\n\n", 3),           # the flags line blank
    ("content\tlang\tsource\n", 1),                                        # a plain header
])
def test_orange_header_rows_are_not_documents(tmp_path, header, rows):
    p = tmp_path / "d.tab"
    p.write_text(header + ROWS)
    c = Corpus.from_csv(p, text_column="content", label_column="lang", delimiter="\t")
    assert c.n_docs == 3 and list(c.labels) == ["en", "en", "fr"]
    assert not {"string", "discrete", "meta", "class"} & set(c.vocabulary.words)
    assert tab_header_rows(p) == (1 if rows == 1 else 3 if "\n\n" not in header else 2)


def test_a_data_row_of_words_is_not_taken_for_a_type_row(tmp_path):
    p = tmp_path / "d.tsv"
    p.write_text("text\tlang\nriver mountain valley\ten\n" + ROWS.replace("\tx", "").replace("\ty", ""))
    assert Corpus.from_csv(p, label_column="lang", delimiter="\t").n_docs == 4
    assert tab_header_rows(p) == 1
