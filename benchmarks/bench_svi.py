"""Online variational Bayes for LDA: dptopic.OnlineVB against scikit-learn's online
LatentDirichletAllocation and gensim's LdaModel, same corpus, split and hyper-parameters.

Corpora: (1) synthetic LDA, D=5000 documents x 200 tokens (1M tokens), V=5000, true K=50,
alpha=0.1, beta=0.01, seed 2024, 20% held out (as benchmarks/bench_cgs.py); (2) 20 Newsgroups,
its own train/test split, vocabulary = the 2000 most frequent training words; the training documents
are put in one fixed random order for every system (the files are sorted by newsgroup).
Every system: K=50, alpha = eta = 1/K, step (tau0 + t + 1)^-0.7 with tau0 = 10, batch 256,
EPOCHS passes, E-step <= 100 iterations / tolerance 1e-3, one thread.
Throughput = training tokens x epochs / fit wall time (numba compilation excluded by a warm-up
fit). Quality = the per-word perplexity bound on the held-out documents (Hoffman et al. 2010,
eq. 16), computed by ONE evaluator (dptopic's E-step + bound, seed 0) from each system's
variational topic parameters lambda; scikit-learn's own perplexity() is printed beside it.

Online VB has local optima: every system runs SEEDS times (seeds 0..SEEDS-1); the table gives the median
fit time and the mean +- sd of the held-out bound.

Run:  python benchmarks/bench_svi.py [--epochs 3] [--seeds 3] [--corpora synthetic 20newsgroups] [--no-gensim]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from _common import machine, table

from dptopic import OnlineVB
from dptopic.corpus import lda_corpus

K, TAU0, KAPPA, BATCH = 50, 10.0, 0.7, 256


def corpora(names):
    for name in names:
        if name == "synthetic":
            s = lda_corpus(n_docs=5000, vocab_size=5000, n_topics=50, doc_length=200, alpha=0.1, beta=0.01, seed=2024)
            train, test = s.corpus.train_test_split(0.2, seed=0)
        else:
            from dptopic.datasets import load_20newsgroups

            train = load_20newsgroups("train", max_vocab=2000)
            test = load_20newsgroups("test", vocabulary=train.vocabulary).drop_empty()
        # one fixed random order for every system: the 20 Newsgroups files are sorted by newsgroup, and
        # scikit-learn and gensim stream documents in the given order
        yield name, train.subset(np.random.default_rng(0).permutation(train.n_docs)), test


def evaluator(train, lam, test):
    """The held-out bound of any lambda, by dptopic's E-step (the same for every system)."""
    m = OnlineVB(K, verbose=0)
    m.vocabulary_ = train.vocabulary
    m.lambda_ = np.asarray(lam, dtype=np.float64)
    m.n_updates_ = 0
    m._finish_fit()
    return m.perplexity(test, seed=0)


def run_dptopic(train, test, epochs, seed):
    OnlineVB(K, tau0=TAU0, kappa=KAPPA, batch_size=BATCH, n_epochs=1, seed=0, verbose=0).fit(train.subset(range(300)))
    m = OnlineVB(K, tau0=TAU0, kappa=KAPPA, batch_size=BATCH, n_epochs=epochs, seed=seed, verbose=0)
    t = time.perf_counter()
    m.fit(train)
    return time.perf_counter() - t, m.lambda_, None


def run_sklearn(train, test, epochs, seed):
    from sklearn.decomposition import LatentDirichletAllocation

    X = train.to_bow()
    m = LatentDirichletAllocation(n_components=K, learning_method="online", learning_offset=TAU0,
                                  learning_decay=KAPPA, batch_size=BATCH, max_iter=epochs, doc_topic_prior=1 / K,
                                  topic_word_prior=1 / K, total_samples=X.shape[0], evaluate_every=-1,
                                  max_doc_update_iter=100, mean_change_tol=1e-3, random_state=seed, n_jobs=1)
    t = time.perf_counter()
    m.fit(X)
    dt = time.perf_counter() - t
    return dt, m.components_, m.perplexity(test.to_bow())


def run_gensim(train, test, epochs, seed):
    from gensim.models import LdaModel

    X = train.to_bow()
    docs = [list(zip(X.indices[X.indptr[d]:X.indptr[d + 1]].tolist(), X.data[X.indptr[d]:X.indptr[d + 1]].tolist()))
            for d in range(X.shape[0])]
    id2word = dict(enumerate(train.vocabulary.words))
    t = time.perf_counter()
    m = LdaModel(docs, num_topics=K, id2word=id2word, chunksize=BATCH, passes=epochs, update_every=1,
                 alpha=np.full(K, 1 / K), eta=1 / K, decay=KAPPA, offset=TAU0, iterations=100,
                 gamma_threshold=1e-3, eval_every=None, random_state=seed)
    dt = time.perf_counter() - t
    return dt, m.state.get_lambda(), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--corpora", nargs="+", default=["synthetic", "20newsgroups"])
    ap.add_argument("--seeds", type=int, default=3, help="runs per system (seeds 0..n-1)")
    ap.add_argument("--no-gensim", action="store_true")
    a = ap.parse_args()
    print(f"machine: {machine()}; K={K}, epochs={a.epochs}, batch={BATCH}, tau0={TAU0}, kappa={KAPPA}")
    print("NOTE: the machine may be shared with other jobs: wall times are noisy; ratios come from this one run.")
    for name, train, test in corpora(a.corpora):
        tokens = train.n_tokens * a.epochs
        print(f"\n== {name}: train {train.n_docs} docs / {train.n_tokens} tokens, test {test.n_docs} docs,"
              f" V={train.vocab_size}")
        systems = {"dptopic OnlineVB": run_dptopic, "sklearn online LDA": run_sklearn}
        if not a.no_gensim:
            try:
                import gensim  # noqa: F401
                systems["gensim LdaModel"] = run_gensim
            except ImportError:
                print("gensim not installed: skipped (pip install 'dptopic[bench]')")
        res = {}
        for sys_name, run in systems.items():
            out = [run(train, test, a.epochs, seed) for seed in range(a.seeds)]
            res[sys_name] = (float(np.median([o[0] for o in out])),
                             [evaluator(train, o[1], test) for o in out], [o[2] for o in out])
        ref_tp = tokens / res["sklearn online LDA"][0]
        ref_ppl = float(np.mean(res["sklearn online LDA"][1]))
        rows = []
        for sys_name, (dt, ppls, own) in res.items():
            m, sd = float(np.mean(ppls)), float(np.std(ppls, ddof=1)) if len(ppls) > 1 else 0.0
            rows.append([sys_name, f"{dt:.1f}", f"{tokens / dt / 1e3:.0f}", f"{tokens / dt / ref_tp:.2f}x",
                         f"{m:.1f} +- {sd:.1f}", f"{m / ref_ppl:.3f}",
                         "" if own[0] is None else f"{np.mean(own):.1f}"])
        table(rows, ["system", "median fit s", "k tokens/s", "throughput vs sklearn",
                     f"held-out ppl bound (mean +- sd, {a.seeds} seeds)", "ppl vs sklearn", "sklearn's own ppl"])

if __name__ == "__main__":
    main()
