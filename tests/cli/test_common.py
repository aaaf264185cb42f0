"""The command line's console: off a terminal, prose is left in whole lines (rich broke it at 80 columns while the
tables beside it were laid out wider, leaving a stray '; ' at the end of the corpus line)."""
from dptopic.cli._common import corpus_line, make_console


def test_prose_is_not_broken_at_80_columns_off_a_terminal(tiny, capsys):
    console = make_console()            # stdout is captured: not a terminal
    train, test = tiny.corpus.train_test_split(0.2, seed=0)
    console.print(corpus_line(tiny.corpus, train, test, private=True))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and len(lines[0]) > 80 and lines[0].startswith("corpus: ") and lines[0].rstrip() == lines[0]
    assert "dropped); train " in lines[0]
