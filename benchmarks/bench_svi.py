"""Online variational Bayes for LDA: dptopic.OnlineVB against scikit-learn's online
LatentDirichletAllocation and gensim's LdaModel, same corpus, split, document order and hyper-parameters.

Corpora: (1) synthetic LDA, D=5000 documents x 200 tokens (1M tokens), V=5000, true K=50,
alpha=0.1, beta=0.01, seed 2024, 20% held out (as benchmarks/bench_cgs.py); (2) 20 Newsgroups,
its own train/test split, vocabulary = the 2000 most frequent training words.
Every system: K=50, alpha = eta = 1/K, step (tau0 + t)^-0.7 with tau0 = 10 and t = 1, 2, ... (scikit-learn's
counter; OnlineVB's (tau0 + t + 1), t = 0, 1, ...), batch 256, EPOCHS passes, E-step <= 100 iterations /
mean |change of gamma| < 1e-3, one thread.

Document order: online VB settles into a local optimum during its first pass, so the order of the documents
moves the held-out bound as much as the random initialisation does. Run s (s = 0..SEEDS-1) therefore gives
EVERY system the training documents in the same random order (permutation seed s) and seed s for its own
initialisation; all of them stream that order every epoch (OnlineVB with shuffle=False; scikit-learn and
gensim do not shuffle). The runs are paired, and the table also gives the mean paired difference.

Throughput = training tokens x epochs / fit wall time (numba compilation excluded by a warm-up
fit); the systems alternate within every run, so load from other jobs hits them alike. Quality = the per-word
perplexity bound on the held-out documents (Hoffman et al. 2010, eq. 16), computed by ONE evaluator
(dptopic's E-step + bound, seed 0) from each system's variational topic parameters lambda; scikit-learn's own
perplexity() (which adds the topic-level KL term, so it is larger) is printed beside it.

The table gives the median fit time and the mean +- sd of the held-out bound over the SEEDS runs.

--replay adds one run of OnlineVB's kernel and update fed scikit-learn's own random draws (order of run 0).

Run:  python benchmarks/bench_svi.py [--epochs 3] [--seeds 3] [--corpora synthetic 20newsgroups] [--no-gensim]
      [--replay] [--max-docs N]
Smoke run (seconds, figures meaningless):  bench_svi.py --corpora 20newsgroups --max-docs 600 --epochs 1 --seeds 1
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from _common import machine, table
from dptopic import OnlineVB
from dptopic.corpus import lda_corpus
from dptopic.kernels.vb import dirichlet_expectation, gather_rows, vb_estep
from dptopic.models._variational import ESTEP_MAX_ITER, ESTEP_TOL

K, TAU0, KAPPA, BATCH = 50, 10.0, 0.7, 256


def corpora(names, max_docs=None):
    for name in names:
        if name == "synthetic":
            s = lda_corpus(n_docs=5000, vocab_size=5000, n_topics=50, doc_length=200, alpha=0.1, beta=0.01, seed=2024)
            train, test = s.corpus.train_test_split(0.2, seed=0)
        else:
            from dptopic.datasets import load_20newsgroups

            train = load_20newsgroups("train", max_vocab=2000)
            test = load_20newsgroups("test", vocabulary=train.vocabulary).drop_empty()
        if max_docs:
            # a random subset (the 20 Newsgroups files are sorted by newsgroup), the same for every system
            keep = lambda c: c.subset(np.sort(np.random.default_rng(0).permutation(c.n_docs)[:max_docs]))  # noqa: E731
            train, test = keep(train), keep(test)
        yield name, train, test


def evaluator(train, lam, test):
    """The held-out bound of any lambda, by dptopic's E-step (the same for every system)."""
    m = OnlineVB(K, verbose=0)
    m.vocabulary_ = train.vocabulary
    m.lambda_ = np.asarray(lam, dtype=np.float64)
    m.n_updates_ = 0
    m._finish_fit()
    return m.perplexity(test, seed=0)


def run_dptopic(train, test, epochs, seed):
    kw = dict(tau0=TAU0, kappa=KAPPA, batch_size=BATCH, shuffle=False, verbose=0)
    OnlineVB(K, n_epochs=1, seed=0, **kw).fit(train.subset(range(300)))
    m = OnlineVB(K, n_epochs=epochs, seed=seed, **kw)
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


def replay_sklearn(train, test, epochs, seed):
    """OnlineVB's E-step kernel and update fed scikit-learn's own random draws (RandomState(seed): lambda, then
    gamma for every batch), next to scikit-learn's fit: the two held-out bounds agree up to rounding, so any
    difference in the table comes from the random draws alone."""
    from sklearn.decomposition import LatentDirichletAllocation

    X = train.to_bow()
    ptr, ids, cts = X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64)
    sk = LatentDirichletAllocation(n_components=K, learning_method="online", learning_offset=TAU0,
                                   learning_decay=KAPPA, batch_size=BATCH, max_iter=epochs, doc_topic_prior=1 / K,
                                   topic_word_prior=1 / K, random_state=seed, n_jobs=1).fit(X)
    rs = np.random.RandomState(seed)
    m = OnlineVB(K, tau0=TAU0, kappa=KAPPA)
    lam = rs.gamma(100.0, 0.01, size=(K, X.shape[1]))
    t = 0
    for _ in range(epochs):
        for a in range(0, X.shape[0], BATCH):
            rows = np.arange(a, min(a + BATCH, X.shape[0]))
            eb = np.ascontiguousarray(np.exp(dirichlet_expectation(lam)).T)
            ss = np.zeros_like(eb)
            vb_estep(*gather_rows(ptr, ids, cts, rows), eb, m.alpha_, rs.gamma(100.0, 0.01, size=(len(rows), K)),
                     ESTEP_MAX_ITER, ESTEP_TOL, np.inf, ss, np.zeros(len(rows)))
            lam = m._svi_update(lam, (ss * eb).T, X.shape[0] / len(rows), t)
            t += 1
    ours, theirs = evaluator(train, lam, test), evaluator(train, sk.components_, test)
    print(f"replay with scikit-learn's random draws (seed {seed}): OnlineVB {ours:.4f}, scikit-learn {theirs:.4f},"
          f" relative difference {abs(ours - theirs) / theirs:.1e}; max relative difference of lambda"
          f" {np.max(np.abs(lam - sk.components_) / sk.components_):.1e}")


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


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--corpora", nargs="+", default=["synthetic", "20newsgroups"])
    ap.add_argument("--seeds", type=int, default=3, help="runs per system (seeds 0..n-1)")
    ap.add_argument("--no-gensim", action="store_true")
    ap.add_argument("--replay", action="store_true", help="also replay scikit-learn's random draws through OnlineVB")
    ap.add_argument("--max-docs", type=int, default=None,
                    help="use a random N training and N test documents of each corpus (a smoke run; default: all)")
    a = ap.parse_args(argv)
    print(f"machine: {machine()}; K={K}, epochs={a.epochs}, batch={BATCH}, tau0={TAU0}, kappa={KAPPA}")
    print("NOTE: the machine may be shared with other jobs: wall times are noisy; ratios come from this one run.")
    for name, train, test in corpora(a.corpora, a.max_docs):
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
        runs = {sys_name: [] for sys_name in systems}
        for seed in range(a.seeds):
            # the same random document order for every system in this run (the 20 Newsgroups files are sorted
            # by newsgroup; scikit-learn and gensim stream documents in the order given)
            ordered = train.subset(np.random.default_rng(seed).permutation(train.n_docs))
            for sys_name, run in systems.items():
                dt, lam, own = run(ordered, test, a.epochs, seed)
                runs[sys_name].append((dt, evaluator(train, lam, test), own))
        res = {k: (float(np.median([o[0] for o in v])), [o[1] for o in v], [o[2] for o in v]) for k, v in runs.items()}
        ref_tp = tokens / res["sklearn online LDA"][0]
        ref_ppl = float(np.mean(res["sklearn online LDA"][1]))
        rows = []
        for sys_name, (dt, ppls, own) in res.items():
            m, sd = float(np.mean(ppls)), float(np.std(ppls, ddof=1)) if len(ppls) > 1 else 0.0
            rows.append([sys_name, f"{dt:.1f}", f"{tokens / dt / 1e3:.0f}", f"{tokens / dt / ref_tp:.2f}x",
                         f"{m:.1f} +- {sd:.1f}", f"{m / ref_ppl:.3f}",
                         "" if own[0] is None else f"{np.mean(own):.1f}"])
        table(rows, ["system", "median fit s", "k tokens/s", "throughput vs sklearn",
                     f"held-out ppl bound (mean +- sd, {a.seeds} runs)", "ppl vs sklearn", "sklearn's own ppl"])
        ref = np.array(res["sklearn online LDA"][1])
        for sys_name, (_, ppls, _) in res.items():
            if sys_name != "sklearn online LDA" and a.seeds > 1:
                diff = np.array(ppls) - ref
                print(f"paired difference {sys_name} - sklearn (same order and seed per run): {diff.mean():+.1f}"
                      f" +- {diff.std(ddof=1) / np.sqrt(len(diff)):.1f} (standard error), ratio of means"
                      f" {np.mean(ppls) / ref.mean():.3f}")
        if a.replay:
            replay_sklearn(train.subset(np.random.default_rng(0).permutation(train.n_docs)), test, a.epochs, 0)

if __name__ == "__main__":
    main()
