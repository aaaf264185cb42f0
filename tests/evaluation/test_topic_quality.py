"""umass_mimno_sum (``evaluation/topic_quality.py``): Mimno's UMass of a model, None where undefined."""
import math
import warnings

import dptopic
from dptopic.evaluation.coherence import umass_coherence
from dptopic.evaluation.topic_quality import umass_mimno_sum


def test_umass_mimno_sum_is_the_mimno_umass_of_the_models_topics(tiny):
    m = dptopic.LDA(n_topics=3, n_iter=5, seed=0, verbose=0).fit(tiny.corpus)
    got = umass_mimno_sum(m, tiny.corpus, top_n=5)
    assert isinstance(got, float)
    assert math.isclose(got, umass_coherence(m.components_, tiny.corpus, 5, "mimno"), rel_tol=1e-12)


class _Undefined:
    def coherence(self, X, top_n=10):
        warnings.warn("3 of 3 topics have top words that occur in no reference document: ...", UserWarning)
        return float("nan")


def test_umass_mimno_sum_is_none_where_undefined_or_not_offered(tiny):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the absent-words warning is left to the caller
        assert umass_mimno_sum(_Undefined(), tiny.corpus) is None
    assert umass_mimno_sum(object(), tiny.corpus) is None     # a model without coherence
