"""``dptopic.progress``."""
from dptopic.corpus import Corpus


# ---------------------------------------------------------------- 4. progress while corpus prepare tokenises
def test_tokenising_progress_shows_a_bar_only_inside_the_block(monkeypatch, capsys):
    import contextlib

    import dptopic._progress as P
    import dptopic.corpus.corpus as C

    bars = []
    real = P.progress_bar

    @contextlib.contextmanager
    def recording(total, description, verbose=1, transient=False):
        bars.append((total, description, transient))
        with real(total, description, verbose, transient) as bar:
            yield bar

    monkeypatch.setattr(P, "progress_bar", recording)
    monkeypatch.setattr(C, "PROGRESS_MIN_DOCS", 10)
    texts = ["apple banana cherry"] * 50
    Corpus.from_texts(texts)
    assert bars == []
    with C.tokenising_progress():
        c = Corpus.from_texts(texts)
    # transient: shown on a terminal while it runs, no line left behind (a later one-line error stays one line)
    assert bars == [(50, "tokenising", True)] and c.n_docs == 50
    assert "tokenising" not in capsys.readouterr().err
