"""Small helpers that test modules in several folders share (tests/ is on the path: ``from helpers import ...``)."""
import numpy as np

from dptopic.cli.main import main


def one_line_error(capsys, argv) -> str:
    """Run the CLI on ``argv``: exit status 2, one line on stderr, no traceback; returns that line."""
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def topic_ranking(ref, words):
    """A K=1 topic whose ranking is ``words`` (over ``ref``'s vocabulary)."""
    comp = np.full((1, ref.vocab_size), 1e-6)
    for r, w in enumerate(words):
        comp[0, ref.vocabulary.get(w)] = 1.0 - 0.1 * r
    return comp
