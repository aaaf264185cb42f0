"""``dptopic fed-client``: what the command does with its flags and files, and its one-line refusals."""
from dptopic.cli.main import main


# ---------------------------------------------------------------- a contributor's text of one distinct word
def test_fed_client_takes_a_text_of_one_distinct_word(fed_server, tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text(f"{fed_server['words'][5]}\n")
    rc = main(["fed-client", "--server", fed_server["url"], "--corpus", str(one), "--state", "none", "--rounds", "1",
               "--poll", "0.05", "--round-timeout", "60", "--retries", "0"])
    out = capsys.readouterr()
    assert rc in (0, None), out.err
    assert "took part in 1 round(s)" in " ".join(out.out.split()), out.out
