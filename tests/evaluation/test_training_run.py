"""dptopic.evaluation.training_run_metrics: the metrics a training run records on its held-out documents."""
import math

import numpy as np
import pytest

from dptopic.errors import DPTopicError
from dptopic.evaluation import npmi_and_diversity, npmi_coherence, topic_diversity, training_run_metrics
from dptopic.models import LDA, OnlineVB


@pytest.fixture(scope="module")
def fitted(planted):
    train, test = planted.corpus.stable_split(0.2)
    return LDA(n_topics=5, n_iter=20, seed=0, verbose=0).fit(train), train, test


def test_gibbs_metrics_are_the_model_s_own_figures(fitted):
    model, train, test = fitted
    m = training_run_metrics(model, train, test)
    assert m["perplexity_completion"] == model.perplexity(test, mode="completion")
    assert m["perplexity_paper"] == model.perplexity(test, mode="paper")
    per = np.asarray(model.coherence(test, top_n=10, per_topic=True), dtype=float)
    assert m["umass_coherence_top10"] == pytest.approx(float(np.nanmean(per)))
    assert ("umass_topics_scored" in m) == (not np.isfinite(per).all())
    assert (m["n_train_docs"], m["n_test_docs"]) == (train.n_docs, test.n_docs)
    assert m["npmi_top10"] == npmi_coherence(model.components_, test, 10)
    assert m["topic_diversity_top25"] == topic_diversity(model.components_, 25)
    assert math.isfinite(m["perplexity_completion"]) and m["perplexity_completion"] > 1


def test_variational_metrics_record_the_model_s_perplexity(planted):
    train, test = planted.corpus.stable_split(0.2)
    model = OnlineVB(n_topics=5, n_epochs=2, seed=0).fit(train)
    m = training_run_metrics(model, train, test, style="variational")
    assert list(m) == ["perplexity_bound", "n_train_docs", "n_test_docs", "npmi_top10", "topic_diversity_top25"]
    assert m["perplexity_bound"] == model.perplexity(test)
    assert {k: m[k] for k in ("npmi_top10", "topic_diversity_top25")} == npmi_and_diversity(model, test)


def test_nothing_held_out_records_nothing(fitted):
    model, train, _ = fitted
    assert training_run_metrics(model, train, None) == {}


def test_an_unknown_style_is_refused(fitted):
    model, train, test = fitted
    with pytest.raises(DPTopicError, match="invalid style='svi'"):
        training_run_metrics(model, train, test, style="svi")
