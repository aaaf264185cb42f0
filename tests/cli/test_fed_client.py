"""``dptopic fed-client``: what the command does with its flags and files, and its one-line refusals."""
import pytest
from dptopic.cli.main import main
from service_helpers import Server, make_data


# ---------------------------------------------------------------- 2. a contributor's text of one distinct word
@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("one53")
    words, _ = make_data(tmp, vocab_size=30, n_docs=20, n_prior=10)
    srv = Server(tmp, f"sqlite:///{tmp / 'service.db'}", "--train-interval", "0", "--fed-epsilon-per-entry", "3",
                 "--fed-topics", "2", "--fed-pad-length", "8", "--fed-min-updates", "1").start()
    try:
        yield {"tmp": tmp, "url": srv.url, "words": words}
    finally:
        srv.stop()


def test_fed_client_takes_a_text_of_one_distinct_word(served, tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text(f"{served['words'][5]}\n")
    rc = main(["fed-client", "--server", served["url"], "--corpus", str(one), "--state", "none", "--rounds", "1",
               "--poll", "0.05", "--round-timeout", "60", "--retries", "0"])
    out = capsys.readouterr()
    assert rc in (0, None), out.err
    assert "took part in 1 round(s)" in " ".join(out.out.split()), out.out
