"""``dptopic.attacks.lira``."""
import dptopic
from dptopic.corpus import lda_corpus


# ---- item 9: LiRA's halves are equal on an odd corpus
def test_lira_halves_are_equal_on_an_odd_corpus():
    from dptopic.attacks.lira import run_lira

    c = lda_corpus(n_docs=31, vocab_size=20, n_topics=2, doc_length=10, seed=1).corpus

    def train(corpus, rng):
        return dptopic.LDA(n_topics=2, n_iter=3, seed=rng, verbose=0).fit(corpus).components_

    res = run_lira(c, train, n_shadows=4, seed=0, verbose=0)
    assert res.settings["n_docs_audited"] == 30 and "sat the audit out" in res.settings["halves"]
