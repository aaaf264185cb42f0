"""dp-accounting's "Negative Renyi divergence" warning is dropped when the value is rounding (tiny epsilons), and
kept when it is not."""
import logging

import dptopic
from dptopic.accounting._lazy import ROUNDING_RDP, _RoundingRdpFilter
from dptopic.corpus.synthetic import lda_corpus


def _record(msg: str) -> logging.LogRecord:
    return logging.LogRecord("absl", logging.WARNING, __file__, 1, msg, None, None)


def test_filter_drops_rounding_and_keeps_real_negative_divergences():
    f = _RoundingRdpFilter()
    tmpl = "Negative Renyi divergence of %s, probably caused by numerical instability from extreme DpEvents."
    assert not f.filter(_record(tmpl % "-5.797509266972097e-19"))
    assert not f.filter(_record(tmpl % f"-{ROUNDING_RDP:g}"))
    assert f.filter(_record(tmpl % "-0.003"))                 # a real numerical problem is still logged
    assert f.filter(_record("something else entirely"))


def test_a_tiny_epsilon_fit_logs_no_rounding_warnings(caplog):
    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=2, seed=0).corpus
    with caplog.at_level(logging.WARNING):
        m = dptopic.CDPLDA(2, paper_epsilon=1e-12, n_iter=3, verbose=0, seed=0).fit(c)
    assert m.privacy_["count_release_epsilon"]["epsilon_rdp"] == 0.0     # the RDP accountant did run
    assert not [r for r in caplog.records if "Negative Renyi" in r.getMessage()]
