"""``dptopic.cli._trainers``: the command line's words for each trainer (its flags, its help line), one entry for
every trainer ``dptopic train`` trains, so that a new trainer of the registry cannot be left without them."""
import pytest

from dptopic.cli import _trainers
from dptopic.cli._train_help import TRAINERS as HELP
from dptopic.cli._trainers import FLAGS, HELP_NOTES, OWN_OPTIONS, help_line, trainer_flag
from dptopic.models.registry import TRAINERS

CLI_TRAINERS = {t.name for t in TRAINERS.values() if t.cli}


def test_every_trainer_the_command_line_trains_has_its_flag_table_and_no_other_name_has_one():
    assert set(FLAGS) == CLI_TRAINERS
    assert set(OWN_OPTIONS) <= CLI_TRAINERS and set(HELP_NOTES) <= CLI_TRAINERS


def test_a_new_trainer_without_a_flag_table_is_refused(monkeypatch):
    """What the test above guards: a registered trainer missing here has no flag to look up."""
    monkeypatch.setattr(_trainers, "FLAGS", {n: f for n, f in FLAGS.items() if n != "svi"})
    with pytest.raises(KeyError):
        _trainers.trainer_flag("svi", "eta")


@pytest.mark.parametrize("name", sorted(CLI_TRAINERS))
def test_each_flag_names_a_parameter_of_its_trainer(name):
    params = TRAINERS[name].parameters()
    assert [p for p in FLAGS[name] if p not in params] == []
    assert all(f is None or f.startswith("--") for f in FLAGS[name].values())


def test_look_ups():
    assert trainer_flag("fed", "user_epsilon") == "--user-budget"     # FedLDA.from_user_budget
    assert trainer_flag("lda", "n_topics") == "--topics" and trainer_flag("svi", "eta") == "--beta"
    assert trainer_flag("docdp", "n_iter") is None      # docdp reads no --iterations
    assert trainer_flag("hdp", "epsilon_inherent") == "--epsilon-inherent"     # by name


def test_the_help_writes_the_registry_summary_and_the_flags_of_the_budget():
    assert help_line("hdp") == ("word-level DP: HDP-LDA (Zhao et al. 2021); --epsilon per word in total (--unit word"
                                " trains it)")
    assert help_line("lda") == TRAINERS["lda"].summary          # no note: the summary alone
    assert set(HELP) == CLI_TRAINERS and all("\n" not in line for line in HELP.values())
