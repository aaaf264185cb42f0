"""What a server decides before it serves (``service/startup.py``): its configuration from the public settings, the
host it may listen on, refused in its Python parameters."""
import pytest

from dptopic.corpus import Vocabulary
from dptopic.errors import DPTopicError, ParameterError
from dptopic.service import startup

WORDS = Vocabulary([f"word{i:03d}" for i in range(60)])


def test_a_word_level_server_takes_its_epsilon_and_runs_no_fedlda_unless_asked():
    cfg = startup.serve_config(WORDS, epsilon_word=2.0, n_topics=3)
    assert cfg.report_kind == "word" and cfg.fed_epsilon_per_entry is None and 0 < cfg.f < 1
    with pytest.raises(ParameterError, match=r"^fed_topics has no effect without FedLDA: give fed_epsilon_per_entry"
                                             r" \(or fed_user_budget\)") as e:
        startup.serve_config(WORDS, epsilon_word=2.0, fed_topics=3)
    assert e.value.parameter == "fed_topics" and e.value.value == 3
    assert e.value.message({"fed_topics": "--fed-topics", "fed_epsilon_per_entry": "--fed-epsilon-per-entry",
                            "fed_user_budget": "--fed-user-budget"}).startswith(
        "--fed-topics has no effect without FedLDA: add --fed-epsilon-per-entry EPS_ENTRY (or --fed-user-budget"
        " EPS_USER)")
    with pytest.raises(ParameterError, match=r"^epsilon_word is required for word-level reports \(or"
                                             r" report_kind='document' with epsilon_doc\)"):
        startup.serve_config(WORDS)
    with pytest.raises(ParameterError, match=r"^report_kind='document' takes epsilon_doc \(per document\), not"
                                             r" epsilon_word"):
        startup.serve_config(WORDS, report_kind="document", epsilon_word=2.0)
    assert startup.serve_config(WORDS, report_kind="document").epsilon_doc == 8.0


def test_a_per_user_fedlda_budget_chooses_the_epsilon_per_entry_and_the_entries():
    cfg = startup.serve_config(WORDS, epsilon_word=2.0, fed_user_budget=40.0, fed_topics=3)
    entries = cfg.fed_pad_length * cfg.fed_sample_ratio
    assert cfg.fed_epsilon_per_entry > 0 and cfg.fed_epsilon_per_entry * entries <= 40.0 * (1 + 1e-9)
    from dptopic import FedLDA  # the split FedLDA states publicly: the one its own fit would randomize with

    split = FedLDA.from_user_budget(40.0, len(WORDS))
    assert cfg.fed_epsilon_per_entry == split.epsilon_per_entry_ and cfg.fed_pad_length == split.pad_length
    with pytest.raises(ParameterError,
                       match="^fed_user_budget chooses .* drop fed_epsilon_per_entry and fed_pad_length"):
        startup.serve_config(WORDS, epsilon_word=2.0, fed_user_budget=40.0, fed_pad_length=8)


def test_the_host_is_this_machine_unless_remote_is_allowed():
    startup.check_host("127.0.0.1")
    with pytest.raises(ParameterError, match=r"^host='example.org' would expose .* pass allow_remote=True to confirm")\
            as e:
        startup.check_host("example.org")
    assert e.value.message({"host": "--host", "allow_remote": "--allow-remote"}) .endswith(
        "proxy and pass --allow-remote to confirm.")
    startup.check_host("example.org", allow_remote=True)
    with pytest.raises(DPTopicError, match=r"^invalid host='not a host'"):
        startup.check_host("not a host", allow_remote=True)


def test_a_restart_with_other_settings_is_said_in_the_callers_names():
    assert startup.kept_settings_warning([]) is None
    line = startup.kept_settings_warning([("n_topics", 3, 5), ("delta", 1e-5, 1e-6), ("prior", True, False)],
                                         {"n_topics": "--topics", "prior": "--prior"})
    assert "keeps n_topics=3, delta=1e-05, a prior corpus: --topics, delta, --prior of this start" in line


def test_a_secure_sum_round_is_refused_in_python_names_and_written_in_serves_flags():
    from dptopic.cli.secure_sum import PLAN_FLAGS
    from dptopic.cli.serve import SERVE_FLAGS

    flags = {**SERVE_FLAGS, **PLAN_FLAGS}
    with pytest.raises(ParameterError, match=r"^a secure sum needs unit='user' \(the guarantee is per person\), not"
                                             r" unit='document'") as e:
        startup.secure_sum_settings(WORDS, unit="document", epsilon=1.0, min_contributors=10)
    assert e.value.message(flags) == "--report-kind secure-sum needs --unit user (the guarantee is per person)."
    with pytest.raises(ParameterError, match=r"^a secure sum needs epsilon \(per person\) and min_contributors") as e:
        startup.secure_sum_settings(WORDS, unit="user", min_contributors=10)
    assert e.value.message(flags) == "--report-kind secure-sum needs --epsilon E (per person) and --min-contributors N."
    with pytest.raises(ParameterError, match=r"^prior is not for a secure sum") as e:
        startup.secure_sum_settings(WORDS, unit="user", epsilon=1.0, min_contributors=10, prior="p")
    assert e.value.message(flags) == "--prior is not for --report-kind secure-sum: drop it."
    with pytest.raises(ParameterError, match=r"^max_body_bytes=100 cannot hold the round's largest upload") as e:
        startup.secure_sum_settings(WORDS, unit="user", epsilon=1.0, min_contributors=50, collusion=2,
                                    max_body_bytes=100)
    assert e.value.message(flags).startswith("--max-body-bytes 100 cannot hold")
