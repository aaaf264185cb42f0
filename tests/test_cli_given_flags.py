"""`dptopic train` refuses a flag that does not apply to the chosen trainer even when it is written at its default
value (it used to compare the value with the default, so `--rounds 50` passed silently with a non-federated
trainer)."""
import pytest

from dptopic.cli.main import build_parser, main


@pytest.mark.parametrize("argv, flag", [
    (["--algorithm", "lda", "--rounds", "50"], "--rounds"),             # FedLDA's default, written out
    (["--algorithm", "lda", "--rounds=50"], "--rounds"),
    (["--algorithm", "lda", "--roun", "50"], "--rounds"),               # an abbreviation argparse accepts
    (["--algorithm", "lda", "--noise", "discrete"], "--noise"),
    (["--algorithm", "lda", "--delta", "1e-5"], "--delta"),
    (["--unit", "document", "--epsilon", "1", "--exclusion", "none"], "--exclusion"),
])
def test_a_foreign_flag_at_its_default_value_is_refused(tmp_path, capsys, argv, flag):
    rc = main(["train", "--corpus", str(tmp_path / "none.npz"), "--out", str(tmp_path / "m")] + argv)
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"error: {flag} has no effect with") and err.count("\n") == 1
    assert not (tmp_path / "m").exists()


def test_the_parser_records_what_was_written_not_what_was_defaulted():
    a = build_parser().parse_args(["train", "--corpus", "c.npz", "--algorithm", "fed", "--rounds", "50"])
    assert a.rounds == 50 and {"corpus", "algorithm", "rounds"} <= a._given
    assert "pad_length" not in a._given and "delta" not in a._given and a.pad_length == 512
