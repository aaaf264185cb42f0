"""``dptopic.experiments.park_svi``."""
import pytest

from dptopic.accounting.gaussian import pld_epsilon
from dptopic.corpus import lda_corpus


# ----------------------------------------------------------------------------- estimators
@pytest.fixture(scope="module")
def synth():
    s = lda_corpus(n_docs=1200, vocab_size=300, n_topics=8, doc_length=80, alpha=0.1, beta=0.01, seed=7)
    return s.corpus.train_test_split(0.2, seed=0)


def test_svi_experiment_writes_outputs(synth, tmp_path):
    from dptopic.experiments import svi_tradeoff

    train, test = synth
    s = svi_tradeoff(train.subset(range(500)), test, tmp_path, name="t", sigmas=(1.0, 2.0), sampling_rates=(0.1, 0.2),
                     n_topics=4, clip=5.0, table_sigma=1.0, table_q=0.1)
    for f in ("svi_fig1_t.csv", "svi_fig1_t.png", "svi_table1_t.csv", "svi_summary_t.json"):
        assert (tmp_path / f).stat().st_size > 0
    assert len(s["checks"]) == 7 and isinstance(s["has_paper_shape"], bool)
    # the baseline's place is checked, and a run in which it is not below every private run says it is too small
    lowest = [v for k, v in s["checks"].items() if k.startswith("non-private online VB has a lower perplexity")]
    assert len(lowest) == 1 and (lowest[0] or "too small to test the paper's shape" in s["short_run_note"])
    assert s["table_budget_epsilon"] == pytest.approx(pld_epsilon(1.0, 0.1, 10, 1e-5), rel=1e-6)
    assert all(isinstance(v, bool) for v in s["checks"].values())
    # one sampling rate: the claims about larger batches are not tested, not vacuously held
    one = svi_tradeoff(train.subset(range(300)), test, tmp_path / "one", name="t", sigmas=(1.0,), sampling_rates=(0.2,),
                       n_topics=4, clip=5.0, table_sigma=1.0, table_q=0.2)
    assert [v for k, v in one["checks"].items() if "larger batches" in k] == [None, None]
