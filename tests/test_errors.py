"""ParameterError: a refused parameter with the parameters it names as data, written in a front door's names."""
from __future__ import annotations

import json

import pytest

from dptopic._validation import N_JOBS, Int, IsNone, Real, validate_value
from dptopic.errors import MISSING, DPTopicError, ParameterError, UnknownParameterError

FLAGS = {"n_words": "--n-words", "n_topics": "--topics", "exclusion": "--exclusion", "sigma2": "--sigma2",
         "report_words": "--report-words"}


def test_the_attributes_name_the_parameter_its_value_and_every_parameter_of_the_line():
    e = ParameterError("{n_words=} keeps fewer words than {n_topics=}: raise {n_words}.", "n_words", 3,
                       values={"n_topics": 5})
    assert isinstance(e, DPTopicError) and isinstance(e, ValueError)
    assert e.parameter == "n_words" and e.value == 3
    assert e.parameters == ("n_words", "n_topics")
    assert e.template.startswith("{n_words=}")


def test_without_names_the_line_is_pythons_and_str_is_it():
    e = ParameterError("{n_words=} keeps fewer words than {n_topics=}: raise {n_words}.", "n_words", 3,
                       values={"n_topics": 5})
    assert str(e) == e.message() == e.message({}) == "n_words=3 keeps fewer words than n_topics=5: raise n_words."
    assert e.args == (str(e),)


def test_with_names_each_parameter_is_written_as_its_flag():
    e = ParameterError("{n_words=} keeps fewer words than {n_topics=}: raise {n_words}.", "n_words", 3,
                       values={"n_topics": 5})
    assert e.message(FLAGS) == "--n-words 3 keeps fewer words than --topics 5: raise --n-words."
    # a parameter the names leave out keeps its Python name
    assert e.message({"n_topics": "--topics"}) == "n_words=3 keeps fewer words than --topics 5: raise n_words."


def test_the_design_spelling_name_equals_value_is_the_pair():
    e = ParameterError("invalid {n_words}={value}: must be at least 2.", "n_words", 1)
    assert str(e) == "invalid n_words=1: must be at least 2."
    assert e.message(FLAGS) == "invalid --n-words 1: must be at least 2."
    e = ParameterError("invalid {parameter}={value:.3g}: too large.", "n_words", 123456.0)
    assert str(e) == "invalid n_words=1.23e+05: too large." and e.message(FLAGS) == "invalid --n-words 1.23e+05: too large."


def test_a_string_loses_its_quotes_as_a_flag_and_none_is_a_flag_not_given():
    e = ParameterError("{report_words=} applies to {exclusion=none} only.", "report_words", None, none="none")
    assert str(e) == "report_words=None applies to exclusion='none' only."
    assert e.message(FLAGS) == "no --report-words applies to --exclusion none only."


def test_a_bare_parameter_without_a_value_and_fields_written_as_given():
    e = ParameterError("give exactly one of {omega} and {sigma2} ({count} of {total:,}).", "omega", count=2,
                       total=10000)
    assert e.value is MISSING and e.parameters == ("omega", "sigma2")
    assert str(e) == "give exactly one of omega and sigma2 (2 of 10,000)."
    assert e.message({"omega": "--omega", "sigma2": "--sigma2"}) == "give exactly one of --omega and --sigma2 (2 of 10,000)."


def test_a_parameter_set_through_another_flag_is_written_by_its_pair():
    e = ParameterError("at {epsilon_inherent=:g}; give a smaller {epsilon_inherent}.", "epsilon_inherent", 12.5)
    names = {"epsilon_inherent": ("--clip", "eps_I={value} (from --clip)")}
    assert e.message(names) == "at eps_I=12.5 (from --clip); give a smaller --clip."


def test_the_flag_template_says_the_sentence_of_a_caller_of_flags():
    e = ParameterError("{n_topics=} leaves no topic: raise {n_topics} or lower {n_background}.", "n_topics", 2,
                       flag_template="{n_topics=} leaves no topic: raise {n_topics} or give {background_share} off.")
    assert str(e) == "n_topics=2 leaves no topic: raise n_topics or lower n_background."
    assert e.parameters == ("n_topics", "n_background", "background_share")
    assert e.message({"n_topics": "--topics", "background_share": "--background-share"}) == \
        "--topics 2 leaves no topic: raise --topics or give --background-share off."
    assert e.message({"seed": "--seed"}) == str(e)      # names that rename none of its parameters: Python's line


def test_two_values_of_one_parameter_come_from_fields():
    e = ParameterError("made with {parameter=stored} but started with {parameter=given}.", "epsilon_doc",
                       stored=2.0, given=3.0)
    assert str(e) == "made with epsilon_doc=2.0 but started with epsilon_doc=3.0."
    assert e.message({"epsilon_doc": "--epsilon-doc"}) == "made with --epsilon-doc 2.0 but started with --epsilon-doc 3.0."


def test_others_lists_parameters_the_line_does_not_write():
    e = ParameterError("bad settings.", "a", others=("b", "c"))
    assert e.parameters == ("a", "b", "c")


def test_validate_value_raises_a_parameter_error_whose_python_line_is_unchanged():
    with pytest.raises(ParameterError) as e:
        validate_value("alpha", -1.0, [IsNone(), Real(0, None, "neither")])
    assert str(e.value) == "invalid alpha=-1.0: must be None or a finite number in (0, inf)."
    assert e.value.parameter == "alpha" and e.value.value == -1.0 and e.value.parameters == ("alpha",)
    # a flag is never None: the command line's line offers only what a flag can give
    assert e.value.message({"alpha": "--alpha"}) == "invalid --alpha -1.0: must be a finite number in (0, inf)."
    with pytest.raises(ParameterError) as e:
        validate_value("n_jobs", 1000, N_JOBS)
    assert "[-256, -1]" in str(e.value)
    assert e.value.message({"n_jobs": "--jobs"}) == "invalid --jobs 1000: must be an integer in [1, 256]."
    with pytest.raises(ParameterError) as e:
        validate_value("name", "x" * 100, [Int(1, 5)])
    assert str(e.value).startswith("invalid name='xxx") and "...: must be an integer in [1, 5]." in str(e.value)


def test_a_models_constraint_is_a_parameter_error_naming_its_parameter():
    from dptopic import LDA

    with pytest.raises(ParameterError) as e:
        LDA(n_topics=0).validate_parameters()
    assert e.value.parameter == "n_topics" and e.value.value == 0
    assert e.value.message({"n_topics": "--topics"}).startswith("invalid --topics 0: ")


def test_an_unknown_keyword_is_a_type_error_whose_names_stay_as_typed():
    from dptopic import LDA

    with pytest.raises(UnknownParameterError) as e:
        LDA(n_topic=5)
    assert isinstance(e.value, TypeError) and isinstance(e.value, ParameterError)
    assert e.value.parameter == "n_topic"
    assert e.value.message({"n_topics": "--topics", "n_topic": "--x"}) == str(e.value)
    assert "did you mean n_topics=?" in str(e.value)


def test_library_refusals_the_command_line_once_reworded_carry_their_structure():
    from dptopic.accounting.events import LaplaceEvent
    from dptopic.accounting.local import f_from_epsilon
    from dptopic.mechanisms.laplace import check_scale

    with pytest.raises(ParameterError) as e:
        f_from_epsilon(1e-17)
    assert e.value.message({"epsilon_word": "--epsilon-word"}).startswith("--epsilon-word 1e-17 is too small: its flip")
    with pytest.raises(ParameterError) as e:
        check_scale(1e13, "scale")
    assert str(e.value).startswith("invalid scale=1e+13: the Laplace samplers support scales in (0, 1e+12]")
    assert e.value.message({"epsilon": "--paper-epsilon"}).startswith("--paper-epsilon is too small: its noise scale"
                                                                      " 1e+13 is beyond")
    with pytest.raises(ParameterError) as e:
        LaplaceEvent(scale=1e-5, changes=(1, 1))
    assert str(e.value).startswith("invalid epsilon (sensitivity/scale)=")
    assert e.value.message({"epsilon": "--eps-grid"}).startswith("--eps-grid is too large: the epsilon of each")


def test_it_survives_a_copy_and_the_pickle_a_worker_process_sends_it_back_in():
    """A Dask worker or a process pool returns an error by pickling it: the structure comes back with it."""
    import copy
    import pickle

    e = ParameterError("invalid {n_words=}: at most {most}.", "n_words", 9, most=5)
    for back in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert type(back) is ParameterError and str(back) == str(e) and back.parameters == e.parameters
        assert back.message(FLAGS) == "invalid --n-words 9: at most 5."


def test_a_parameter_warning_says_pythons_names_and_writes_a_callers_flags():
    """A warning's advice names parameters as data, as a refusal does: ``str`` is the line a Python caller reads,
    ``message(names)`` the one the command line prints; it is still a UserWarning (filters and pytest.warns)."""
    from dptopic.errors import DataVocabularyWarning, ParameterWarning

    w = ParameterWarning("{found}: pass {stop_words=} to count them", "stop_words", "none", found="2 words {x}")
    assert str(w) == "2 words {x}: pass stop_words='none' to count them"
    assert w.message({"stop_words": "--stop-words"}) == "2 words {x}: pass --stop-words none to count them"
    assert isinstance(w, UserWarning) and issubclass(DataVocabularyWarning, ParameterWarning)
    with pytest.warns(UserWarning, match="pass stop_words='none'"):
        import warnings

        warnings.warn(w)


def test_a_parameter_warning_class_given_plain_text_says_it_as_given():
    """``warnings.warn(text, SomeParameterWarning)`` (a warning said again, by its text and class) builds the class
    from the text alone: the line is the text, braces and all, and names no parameter."""
    import warnings

    from dptopic.errors import DataVocabularyWarning

    with pytest.warns(DataVocabularyWarning) as caught:
        warnings.warn("chosen from the {training} documents", DataVocabularyWarning)
    w = caught[0].message
    assert str(w) == w.message({"vocabulary": "--vocabulary"}) == "chosen from the {training} documents"
    assert w.parameters == ()


def test_parameter_text_is_text_in_python_names_that_a_front_door_writes_in_its_own():
    from dptopic.errors import ParameterText
    note = ParameterText("{recovery=} is the earlier route; {vocabulary=public} keeps the words out", "recovery", "nmf",
                         flag_template="{recovery=} is the earlier route; {vocabulary} {public} keeps the words out",
                         public="PUBLIC_WORDS.txt")
    assert isinstance(note, str)
    assert note == "recovery='nmf' is the earlier route; vocabulary='PUBLIC_WORDS.txt' keeps the words out"
    assert note.parameters == ("recovery", "vocabulary") and "earlier route" in note
    assert note.message({"recovery": "--recovery", "vocabulary": "--vocabulary"}) == \
        "--recovery nmf is the earlier route; --vocabulary PUBLIC_WORDS.txt keeps the words out"
    assert json.loads(json.dumps([note])) == [str(note)]
