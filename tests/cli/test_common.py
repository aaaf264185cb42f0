"""The command line's console: off a terminal, prose is left in whole lines (rich broke it at 80 columns while the
tables beside it were laid out wider, leaving a stray '; ' at the end of the corpus line); load_corpus's errors name
the command line's flags."""
import pytest

from dptopic.cli._common import corpus_line, load_corpus, make_console
from dptopic.errors import DPTopicError


def test_prose_is_not_broken_at_80_columns_off_a_terminal(tiny, capsys):
    console = make_console()            # stdout is captured: not a terminal
    train, test = tiny.corpus.train_test_split(0.2, seed=0)
    console.print(corpus_line(tiny.corpus, train, test, private=True))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and len(lines[0]) > 80 and lines[0].startswith("corpus: ") and lines[0].rstrip() == lines[0]
    assert "dropped); train " in lines[0]


@pytest.mark.parametrize("name,content,flag", [
    ("d.json", '["a b"]\n', "pass --format text"),                          # the reader says format='text'
    ("d.csv", '{"text": "a b"}\n{"text": "c d"}\n', "(--format jsonl,"),     # ... format='jsonl'
    ("notes.xyz", "a b\n", "--format auto reads a file by its extension"),   # ... format='auto'
])
def test_load_corpus_names_the_format_flag_where_the_reader_names_format(tmp_path, name, content, flag):
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(DPTopicError) as e:
        load_corpus(str(p))
    assert flag in str(e.value) and "format=" not in str(e.value), str(e.value)


def test_load_corpus_without_vocab_flag_names_the_vocabulary_flag_for_a_uci_file(tmp_path):
    p = tmp_path / "counts.txt"
    p.write_text("1\n2\n2\n1 1 1\n1 2 1\n")
    with pytest.raises(DPTopicError) as e:
        load_corpus(str(p), "uci", vocab_flag=None)
    assert "(this command reads the UCI vocabulary from there; --vocabulary is the public word list" in str(e.value)
