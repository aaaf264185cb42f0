"""``dptopic.reporting.calculators``: the calculators' figures as text, epsilons rounded up and largest allowed values
rounded down."""
from dptopic.accounting.calculators import compose, fed_report_words, hdp_calculator, inherent_bounds
from dptopic.accounting.verify import rounded_up
from dptopic.reporting.calculators import compose_lines, down, fed_report_words_lines, hdp_lines, inherent_lines, up


def test_up_and_down_round_away_from_the_unsafe_side():
    assert up(21.99993) == "22" and down(0.2999999) == "0.299999" and up(0.1 * 3) == "0.3"


def test_hdp_lines_show_each_figure_on_its_safe_side():
    h = hdp_calculator(epsilon_inherent=10, epsilon=1000, n_iter=50)
    lines, warnings = hdp_lines(h)
    assert lines[0] == f"beta=1: clip C = {down(h['clip'])}  <->  eps_I = 2 log(C/beta + 1) = 10 per iteration"
    assert f"largest eps_L = {rounded_up(h['split']['epsilon_laplace'], 6, down=True):.6g} per iteration" in lines[1]
    assert warnings == []
    lines, warnings = hdp_lines(hdp_calculator(clip=0.5))
    assert "give epsilon to split" in lines[1] and warnings[0].startswith("a clip C = 0.5 under one token")
    assert "give --epsilon to split" in hdp_lines(hdp_calculator(clip=0.5), "--epsilon", "--epsilon-laplace")[0][1]


def test_inherent_compose_and_fed_lines():
    assert "over 1 iteration:" in inherent_lines(inherent_bounds(5, 10))[2]
    assert compose_lines(compose([(1, 10)]), "document", 1e-5)[0] == "per document:"
    assert "1 user x 1 entry:" in fed_report_words_lines(fed_report_words(5.0, 1000, 1, entries=1))[0]
