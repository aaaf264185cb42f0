"""``dptopic.accounting.calculators``: the privacy calculators' figures (what ``dptopic privacy`` prints), each input
checked before anything is computed, refusals naming the parameter as data."""
import inspect
import math

import pytest

from dptopic.accounting import hdp_total_epsilon, solve_hdp_epsilon_laplace
from dptopic.accounting.calculators import HDP_DEFAULT_BETA, compose, fed_report_words, hdp_calculator, inherent_bounds
from dptopic.accounting.inherent import eps_iter_static, eps_related, hdp_epsilon_inherent
from dptopic.errors import ParameterError


def test_inherent_bounds_are_the_static_theorems():
    b = inherent_bounds(5, 10, beta=0.01, n_iter=7)
    per = eps_iter_static([5, 10], 0.01, 0)
    assert b == {"related": eps_related(0.01), "per_iteration": per, "total": 7 * per, "n_iter": 7}


def test_inherent_bounds_refuse_a_cmax_above_both_counts_naming_it():
    with pytest.raises(ParameterError) as e:
        inherent_bounds(5, 10, cmax=30)
    assert e.value.parameter == "cmax" and e.value.value == 30
    assert str(e.value).startswith("cmax=30 is larger than both n_t=5 and max_n_tprime=10")
    flags = e.value.message({"cmax": "--cmax", "n_t": "--n-t", "max_n_tprime": "--max-n-tprime"})
    assert flags.startswith("--cmax 30 is larger than both --n-t 5 and --max-n-tprime 10") and "--cmax at most 10" in flags


def test_hdp_calculator_splits_a_budget_and_composes_a_component():
    split = hdp_calculator(clip=147.4, epsilon=1000, n_iter=50)
    eps_i = hdp_epsilon_inherent(147.4, HDP_DEFAULT_BETA)
    assert split["epsilon_inherent"] == eps_i and split["clip_given"] and "small_clip" not in split
    assert split["split"]["epsilon_laplace"] == solve_hdp_epsilon_laplace(1000, 1e-5, 50, eps_i)
    composed = hdp_calculator(epsilon_inherent=10, epsilon_laplace=1, n_iter=20)
    assert not composed["clip_given"] and math.isclose(composed["clip"], math.expm1(5))
    assert composed["composed"]["pld"] == hdp_total_epsilon(1, 10, 20, 1e-5, discretization=1e-4)
    assert composed["composed"]["basic"] == 20 * 11
    assert hdp_calculator(epsilon_inherent=1e-3)["small_clip"] == hdp_epsilon_inherent(1.0, HDP_DEFAULT_BETA)


@pytest.mark.parametrize("kw, parameter", [({}, "clip"), ({"clip": 3, "epsilon_inherent": 3}, "clip"),
                                           ({"clip": 3, "epsilon": 3, "epsilon_laplace": 1}, "epsilon")])
def test_hdp_calculator_answers_one_question_at_a_time(kw, parameter):
    with pytest.raises(ParameterError) as e:
        hdp_calculator(**kw)
    assert e.value.parameter == parameter


def test_the_default_beta_is_hdplda_s_and_the_command_line_s():
    from dptopic.cli.parsers.privacy import HDP_DEFAULT_BETA as cli_copy
    from dptopic.models import HDPLDA

    assert inspect.signature(HDPLDA).parameters["beta"].default == HDP_DEFAULT_BETA == cli_copy


def test_compose_reads_pairs_as_numbers_or_text():
    assert compose([("1", "10")], [(0.5, 2)])["epsilon_basic"] == pytest.approx(11.0)
    assert compose(pure=[(0, 3)], unit="document")["epsilon_basic"] == 0


@pytest.mark.parametrize("laplace, pure, words", [([("1e-400", 3)], (), "must be a number in (0, 500]"),
                                                  ([("abc", 3)], (), "must be a number"),
                                                  ([(1, 0)], (), "count must be a whole number"),
                                                  ([(1, 1.5)], (), "count must be a whole number"),
                                                  ([("1e-320", 1)], (), "overflows"),
                                                  ((), [(-1, 3)], "must be a number in [0, 500]")])
def test_compose_refuses_a_bad_pair_before_composing(laplace, pure, words):
    with pytest.raises(ParameterError) as e:
        compose(laplace, pure)
    assert words in str(e.value) and e.value.parameter == ("laplace" if laplace else "pure")
    flag = e.value.message({"laplace": "--laplace", "pure": "--pure"})
    assert flag.startswith(f"--{e.value.parameter} ") and ("EPS" in flag or "COUNT" in flag)


def test_compose_of_nothing_names_both_parameters():
    with pytest.raises(ParameterError) as e:
        compose()
    assert e.value.parameters == ("laplace", "pure")
    assert e.value.message({"laplace": "--laplace", "pure": "--pure"}) == (
        "nothing to compose: give --laplace EPS COUNT and/or --pure EPS COUNT.")


def test_fed_report_words_gives_the_words_and_their_variance():
    f = fed_report_words(5.0, 1000, 3)
    assert 2 <= f["report_words"] <= 1000 and f["entries"] == 512 and f["subset_size"] >= 1
    assert f["variance"] < f["variance_every_word"]
    with pytest.raises(ParameterError, match="too small for a vocabulary"):
        fed_report_words(1e-9, 1000, 3)
