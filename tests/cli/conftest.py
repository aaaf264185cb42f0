"""Fixtures shared by the command tests."""
import pytest

from service_helpers import Server, make_data


@pytest.fixture(scope="module")
def fed_server(tmp_path_factory):
    """A live server with FedLDA on (3 per entry, 2 topics, 8 entries a user, one update a round) over 30 words:
    ``{"tmp", "url", "words"}``."""
    tmp = tmp_path_factory.mktemp("fed")
    words, _ = make_data(tmp, vocab_size=30, n_docs=20, n_prior=10)
    srv = Server(tmp, f"sqlite:///{tmp / 'service.db'}", "--train-interval", "0", "--fed-epsilon-per-entry", "3",
                 "--fed-topics", "2", "--fed-pad-length", "8", "--fed-min-updates", "1").start()
    try:
        yield {"tmp": tmp, "url": srv.url, "words": words}
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """One `dptopic demo` run (4 topics, one sweep, unseeded) that the demo tests read: ``(out, flat stdout, stderr)``;
    a run of the demo trains on the whole State of the Union corpus, so it is made once."""
    import io
    import sys

    from dptopic.cli.main import main

    out = tmp_path_factory.mktemp("demo") / "d"
    capture = pytest.MonkeyPatch()

    buf, err = io.StringIO(), io.StringIO()
    capture.setattr(sys, "stdout", buf)
    capture.setattr(sys, "stderr", err)
    try:
        rc = main(["demo", "--out", str(out), "--quiet", "--topics", "4", "--iterations", "1"])
    finally:
        capture.undo()
    assert rc in (0, None), err.getvalue()
    return out, " ".join(buf.getvalue().split()), err.getvalue()
