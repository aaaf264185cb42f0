"""``dptopic.experiments.manzonelli_lira``."""
import numpy as np
from dptopic.corpus import Corpus
from dptopic.corpus.corpus import data_cut_of


def test_the_fdptm_experiment_runs_on_a_pool_cut_once_before_its_shadows(tmp_path):
    """The experiment's pool is cut by its counts once (its --max-vocab); a shadow's candidates are that fixed list
    whichever half of the pool it holds, so the shadows' set union runs (it refused the cut pool before)."""
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.experiments import fdptm_experiment

    c, _, theta, _ = lda_corpus(n_docs=120, vocab_size=400, n_topics=3, doc_length=30, alpha=0.2, seed=5)
    pool = Corpus.from_tokens([c.doc_words(d) for d in range(c.n_docs)], max_vocab=30,
                              labels=[str(int(np.argmax(t) % 2)) for t in theta])
    assert data_cut_of(pool) == "built with max_vocab=30"
    s = fdptm_experiment(pool, tmp_path, eps_v_grid=(5.0,), trainer="cgs", n_topics=3, n_shadows=4,
                         cgs_iterations=3, verbose=0)
    assert [r["config"] for r in s["rows"]] == ["public", "eps_V=5"]
    assert 0 < s["rows"][1]["mean_vocab_size"] <= 30
