"""What a server decides before it serves (``service/startup.py``): its configuration from the public settings, the
settings that would have no effect, the host it may listen on."""
import pytest

from dptopic.corpus import Vocabulary
from dptopic.errors import DPTopicError
from dptopic.service import startup

WORDS = Vocabulary([f"word{i:03d}" for i in range(60)])


def test_a_word_level_server_takes_its_epsilon_and_runs_no_fedlda_unless_asked():
    cfg = startup.serve_config(WORDS, epsilon_word=2.0, n_topics=3)
    assert cfg.report_kind == "word" and cfg.fed_epsilon_per_entry is None and 0 < cfg.f < 1
    with pytest.raises(DPTopicError, match=r"^--fed-topics has no effect without FedLDA"):
        startup.serve_config(WORDS, epsilon_word=2.0, fed_topics=3)
    with pytest.raises(DPTopicError, match="--epsilon-word is required"):
        startup.serve_config(WORDS)
    assert startup.serve_config(WORDS, report_kind="document").epsilon_doc == 8.0


def test_a_per_user_fedlda_budget_chooses_the_epsilon_per_entry_and_the_entries():
    cfg = startup.serve_config(WORDS, epsilon_word=2.0, fed_user_budget=40.0, fed_topics=3)
    entries = cfg.fed_pad_length * cfg.fed_sample_ratio
    assert cfg.fed_epsilon_per_entry > 0 and cfg.fed_epsilon_per_entry * entries <= 40.0 * (1 + 1e-9)
    from dptopic import FedLDA  # the split FedLDA states publicly: the one its own fit would randomize with

    split = FedLDA.from_user_budget(40.0, len(WORDS))
    assert cfg.fed_epsilon_per_entry == split.epsilon_per_entry_ and cfg.fed_pad_length == split.pad_length
    with pytest.raises(DPTopicError, match="drop --fed-epsilon-per-entry and --fed-pad-length"):
        startup.serve_config(WORDS, epsilon_word=2.0, fed_user_budget=40.0, fed_pad_length=8)


def test_a_setting_without_effect_is_refused_only_when_given():
    settings = {"prior": None, "report_kind": "word", "format": "csv", "host": "127.0.0.1"}
    with pytest.raises(DPTopicError, match=r"^--format has no effect here: it is the format of --prior"):
        startup.refuse_idle_settings(settings, given={"format"})
    startup.refuse_idle_settings(settings, given=set())
    with pytest.raises(DPTopicError, match="--format has no effect"):   # not at its default: taken as given
        startup.refuse_idle_settings(settings)


def test_the_host_is_this_machine_unless_remote_is_allowed():
    startup.check_host("127.0.0.1")
    with pytest.raises(DPTopicError, match="--allow-remote"):
        startup.check_host("example.org")
    startup.check_host("example.org", allow_remote=True)
    with pytest.raises(DPTopicError, match=r"^invalid --host 'not a host'"):
        startup.check_host("not a host", allow_remote=True)


def test_a_restart_with_other_settings_is_said_in_the_callers_names():
    assert startup.kept_settings_warning([]) is None
    line = startup.kept_settings_warning([("n_topics", 3, 5), ("delta", 1e-5, 1e-6), ("prior", True, False)],
                                         {"n_topics": "--topics", "prior": "--prior"})
    assert "keeps n_topics=3, delta=1e-05, a prior corpus: --topics, delta, --prior of this start" in line
