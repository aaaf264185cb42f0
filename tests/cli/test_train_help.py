"""``dptopic train --help``: for the trainer chosen (``--algorithm X`` or ``--unit U``), the help lists exactly the
options that train reads for it (those it does not, it refuses); plain ``--help`` lists the common options and every
trainer."""
import argparse
import re

import pytest

from dptopic.cli import _train_flags, train
from dptopic.cli._train_help import TRAINERS
from dptopic.cli.main import build_parser, main
from dptopic.errors import DPTopicError

PARSER = build_parser()
TRAIN = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices["train"]
# every option but the help itself, the trainer's choice and the retired --budget (refused whatever the trainer)
OPTIONS = [act for act in TRAIN._actions if act.option_strings and act.dest not in ("help", "algorithm", "unit")
           and act.dest not in _train_flags._RETIRED]
ALGORITHMS = tuple(TRAINERS)
# what each line needs so that the flag checks are the only thing between it and training: FedLDA's floor rule reads
# the RRP parameters that its default rule refuses
BASE = {"fed": ["--exclusion", "floor"]}
UNIT_EPSILON = {"word": "510", "document": "1"}   # 510 per word: what one iteration spends at most


class _Reached(Exception):
    """The command got past every flag check."""


ALIASES: list[str] = []   # the empty alias file --person-aliases names: it must exist (made in pytest's own tmp)


@pytest.fixture(autouse=True, scope="module")
def _empty_aliases(tmp_path_factory):
    path = tmp_path_factory.mktemp("help") / ".mailmap"
    path.touch()
    ALIASES[:] = [str(path)]


def _value(action) -> list:
    """A value the option's own type accepts (not its default, where it has choices)."""
    if action.nargs == 0:
        return []
    if action.dest == "person_aliases":
        return list(ALIASES)
    if action.choices:
        return [next((c for c in action.choices if c != action.default), next(iter(action.choices)))]
    for v in ("1", "10", "0.5", "auto", "all", "1,1e-6"):
        try:
            (action.type or str)(v)
        except Exception:
            continue
        return [v]
    raise AssertionError(f"no value for {action.option_strings}")


@pytest.fixture
def refused(monkeypatch, tmp_path):
    """``refused(argv)``: train's refusal (a one-line error) of a command line, or None when it gets past the flag
    checks (stopped there: nothing is read or trained)."""
    import dptopic.mechanisms.laplace as laplace

    def stop(*a, **k):
        raise _Reached

    monkeypatch.setattr(train, "check_out", stop)
    monkeypatch.setattr(laplace, "require_opendp", lambda: None)

    def run(argv):
        a = PARSER.parse_args(["train", *argv, "--out", str(tmp_path / "m")])
        try:
            train.cmd_train(a)
        except _Reached:
            return None
        except DPTopicError as e:
            return str(e)
        raise AssertionError("train ran to its end")

    return run


def _help(capsys, *argv) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["train", *argv])
    assert e.value.code == 0
    return capsys.readouterr().out


def _listed(text: str, action) -> bool:
    return any(re.search(rf"^  (?:-\S+, )*{re.escape(opt)}[ ,\n]", text, re.M) for opt in action.option_strings)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_help_of_an_algorithm_lists_the_flags_train_reads_for_it_and_no_other(algorithm, capsys, refused):
    text = _help(capsys, "--algorithm", algorithm, "--help")
    assert f"--algorithm {algorithm}" in text.splitlines()[0]
    wrong = []
    for action in OPTIONS:
        why = refused(["--algorithm", algorithm, *BASE.get(algorithm, []), action.option_strings[-1], *_value(action)])
        if _listed(text, action) != (why is None):
            wrong.append(f"{action.option_strings[-1]}: {'listed' if _listed(text, action) else 'not listed'},"
                         f" {'refused: ' + why if why else 'accepted'}")
    assert not wrong, "\n".join(wrong)
    assert not _listed(text, next(a for a in TRAIN._actions if a.dest == "unit"))   # --unit picks the trainer itself


@pytest.mark.parametrize("unit", ("word", "document"))
def test_the_help_of_a_unit_lists_the_flags_its_trainer_takes_under_it(unit, capsys, refused):
    text = _help(capsys, "--unit", unit, "-h")      # -h, and --unit before it, as much as after
    assert text == _help(capsys, "-h", "--unit", unit)
    wrong = []
    for action in OPTIONS:
        if action.dest == "epsilon":
            continue
        why = refused(["--unit", unit, "--epsilon", UNIT_EPSILON[unit], action.option_strings[-1], *_value(action)])
        takes = why is None and action.dest not in _train_flags._UNIT_REFUSES[unit]
        if _listed(text, action) != takes:
            wrong.append(f"{action.option_strings[-1]}: listed={_listed(text, action)}, refused={why}")
    assert not wrong, "\n".join(wrong)
    assert not _listed(text, next(a for a in TRAIN._actions if a.dest == "algorithm"))


@pytest.mark.parametrize("flag", ["--epsilon-laplace", "--clip", "--no-noise", "--paper-literal"])
def test_the_flags_unit_word_leaves_out_of_its_help_are_refused(flag, refused, tmp_path, capsys):
    """_UNIT_REFUSES is what train does: --unit word gives the total, from which eps_L is solved for eps_I."""
    action = next(a for a in OPTIONS if flag in a.option_strings)
    assert action.dest in _train_flags._UNIT_REFUSES["word"]
    argv = ["train", "--unit", "word", "--epsilon", "600", flag, *_value(action), "--corpus", tmp_path / "none.txt",
            "--out", tmp_path / "m"]
    capsys.readouterr()
    assert main([str(x) for x in argv]) == 2
    err = capsys.readouterr().err
    assert flag in err and len(err.strip().splitlines()) == 1


def test_plain_help_lists_the_common_flags_and_every_trainer(capsys, refused):
    text = _help(capsys, "--help")
    for name in ALGORITHMS:
        assert re.search(rf"^  {re.escape(name)} +\S", text, re.M), name
    assert "dptopic train --algorithm X --help" in " ".join(text.split())
    for action in OPTIONS:
        value = [action.option_strings[-1], *_value(action)]
        # what plain help lists, the default trainer or both --unit trainers read; the common flags, every trainer
        takes_default = refused(value) is None
        takes_units = action.dest == "epsilon" or all(
            refused(["--unit", u, "--epsilon", UNIT_EPSILON[u], *value]) is None
            and action.dest not in _train_flags._UNIT_REFUSES[u] for u in UNIT_EPSILON)
        if _listed(text, action):
            assert takes_default or takes_units, action.option_strings
        everywhere = all(refused(["--algorithm", x, *BASE.get(x, []), *value]) is None for x in ALGORITHMS)
        if everywhere:
            assert _listed(text, action), action.option_strings


def test_the_retired_budget_flag_is_in_no_help_but_in_the_reference(capsys):
    for argv in (["--help"], ["--algorithm", "hdp", "--help"], ["--unit", "word", "--help"]):
        assert "--budget" not in _help(capsys, *argv)
    from dptopic.cli.main import build_parser as fresh

    ref = [a for a in fresh()._subparsers._group_actions[0].choices["train"]._actions if "--budget" in a.option_strings]
    assert ref and ref[0].help and ref[0].help != argparse.SUPPRESS    # the parser, and so the CLI reference, keeps it


def test_help_leaves_the_parser_as_it_was(capsys):
    before = [(a.dest, a.help) for a in TRAIN._actions], TRAIN.description, TRAIN.usage
    from dptopic.cli._train_help import format_help

    format_help(TRAIN, _train_flags.flag_shown, "lp")
    assert ([(a.dest, a.help) for a in TRAIN._actions], TRAIN.description, TRAIN.usage) == before


def test_every_trainer_has_a_line_in_the_table():
    choices = next(a for a in TRAIN._actions if a.dest == "algorithm").choices
    assert set(choices) == set(TRAINERS)


def test_the_help_of_unit_user_describes_the_guarantee_per_person_and_its_flags(capsys):
    """`train --unit user --help` described document-level training (docdp-cooc's line, --epsilon per document) and
    listed --private-vocabulary, which --unit user refuses."""
    text = _help(capsys, "--unit", "user", "--help")
    head = " ".join(text.split("options:")[0].split())
    assert "user-level DP" in head and "--epsilon per person" in head and "document-level" not in head
    assert "--user-field FIELD" in text.splitlines()[0]
    listed = {a.dest for a in OPTIONS if _listed(text, a)}
    assert {"user_field", "documents_per_user", "epsilon", "delta"} <= listed
    assert not listed & {"private_vocabulary", "vocabulary_policy", "scheduler", "dask_local"}
    for unit in ("word", "document"):
        other = _help(capsys, "--unit", unit, "--help")
        assert not {a.dest for a in OPTIONS if _listed(other, a)} & {"user_field", "documents_per_user"}
    text = _help(capsys, "--unit", "user", "--algorithm", "docdp", "--help")
    assert "which trains docdp:" in " ".join(text.split())


@pytest.mark.parametrize("argv", [["--unit", "user", "--algorithm", "lda"], ["--algorithm", "hdp", "--unit", "word"],
                                  ["--unit", "document", "--algorithm", "docdp"]])
def test_the_help_of_a_refused_unit_and_algorithm_is_the_refusal(capsys, argv):
    """`--unit user --algorithm lda --help` printed help for a combination train refuses."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["train", *argv, "--help"])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert lines[0] == "error: " + train.unit_algorithm_refusal(argv[argv.index("--unit") + 1],
                                                                argv[argv.index("--algorithm") + 1])


def test_the_user_units_help_labels_no_option_as_the_document_units():
    """--unit user's help labelled docdp-cooc's options "(--unit document)", which the user unit trains too."""
    from helpers import run_dptopic

    r = run_dptopic("train", "--unit", "user", "--help")
    assert r.returncode == 0 and "--background-share" in r.stdout
    assert "(--unit document)" not in r.stdout and "(--unit document or user)" in r.stdout
