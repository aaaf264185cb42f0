"""``dptopic submit``: what the command does with its flags and files, and its one-line refusals."""

from dptopic.cli.main import main
from helpers import cli_error_line


# ---------------------------------------------------------------- a contributor's text of one distinct word
def test_submit_takes_a_text_of_one_distinct_word(fed_server, tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text(f"{fed_server['words'][3]} {fed_server['words'][3]} {fed_server['words'][3]}\n")
    rc = main(["submit", "--server", fed_server["url"], "--corpus", str(one), "--state", "none", "--retries", "0"])
    out = capsys.readouterr()
    assert rc in (0, None), out.err
    assert "1 randomized report uploaded" in " ".join(out.out.split()), out.out
    # nothing kept: the closing line says a rerun spends again (it used to say "spent once")
    assert "spent again by every run on these documents" in " ".join(out.out.split())
    assert "spent once however often" not in " ".join(out.out.split())


def test_submit_bad_url(sotu_model_with_vocabulary, capsys):
    assert "URL" in cli_error_line(capsys, ["submit", "--server", "http://[::zz]:1", "--corpus", str(sotu_model_with_vocabulary[0])])
