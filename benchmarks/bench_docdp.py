"""Document-level DP at epsilon = 1 on 20 Newsgroups: the routes measured for docs/document_dp.md.

    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py cgs            # non-private reference
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py em --epsilon 1 --n-iter 3 --seeds 3
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py oneshot --epsilon 1 --threshold 3 --seeds 2
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py cooc --epsilon 1 --seeds 5
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py compare --epsilon 1 --seeds 3
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py setunion          # private vocabulary sizes
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py candidates --seeds 3   # vocabulary from a list
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py public --seeds 3      # a public corpus as the start
    (add --docs 5000 to train on the first 5,000 training documents)

Train split, vocabulary of 2,000 words (``load_20newsgroups('train', max_vocab=2000)``), K = 20,
delta = 1e-5, add/remove one document. NPMI of each topic's top 10 words over boolean document
co-occurrence in the test split (same vocabulary); pairs never seen together score -1.

``em``: :class:`dptopic.models.docdp.DocDPEM` (full-batch noisy EM, per-document L2-normalised
statistic). ``oneshot``: one Gaussian release of the word co-occurrence matrix, each document's
``c c^T - diag(c)`` scaled to Frobenius norm 1 (L2 sensitivity 1), symmetrised, cells under
``threshold`` noise std zeroed, then non-negative matrix factorisation (scikit-learn's NMF) of the
release; its rows are the topics. ``cooc``: :class:`dptopic.models.docdp_cooc.DocDPCooccurrence` with its
defaults (a noisy word count keeps the 400 most frequent words, then one co-occurrence release over
them and NMF; ``--n-words`` (a number or ``auto``) and ``--threshold`` change it). All are post-processing of their releases.
``compare``: beside NPMI, how close each model's topics are to non-private LDA's (mean cosine between
CGS seed 0's topics and their Hungarian-matched private topics; CGS seed 1 gives the ceiling) and two
null models that learn no co-occurrence at all (random topics over all words, and over the 400 most
frequent words), because NPMI alone rewards topics made of frequent words. ``setunion``: how many words DP set
union (Gopi et al. 2020) selects from the whole training split at small budgets (delta 5e-6). ``candidates``:
the vocabulary chosen privately by DocDPCooccurrence's own first release from a large candidate list (the
words seen twice in the test split, standing in for a public word list), epsilon 1 in total. ``public``: a
random ``--n-public`` training documents stand in for a public corpus of the same domain (their own topics by CGS,
no privacy cost), the rest are the private corpus; ``DocDPEM(init=public topics, n_iter=1)`` refines the public
topics with one release on the private documents, beside ``DocDPCooccurrence`` on the private documents alone.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from dptopic.accounting.gaussian import calibrate_noise_multiplier
from dptopic.datasets import load_20newsgroups


def load():
    tr = load_20newsgroups("train", max_vocab=2000)
    te = load_20newsgroups("test", vocabulary=tr.vocabulary)
    return tr, te


def npmi(beta: np.ndarray, reference: sp.csr_matrix, top: int = 10) -> float:
    B = (sp.csr_matrix(reference) > 0).astype(np.float64).tocsc()
    n = B.shape[0]
    vals = []
    for row in beta:
        idx = np.argsort(-row, kind="stable")[:top]
        sub = B[:, idx]
        co = (sub.T @ sub).toarray() / n
        p = np.diag(co)
        for i in range(top):
            for j in range(i + 1, top):
                pij = co[i, j]
                if pij <= 0:
                    vals.append(-1.0)
                elif pij >= 1:
                    vals.append(1.0)
                else:
                    vals.append(np.log(pij / (p[i] * p[j])) / -np.log(pij))
    return float(np.mean(vals))


def cooccurrence_statistic(X: sp.csr_matrix) -> np.ndarray:
    """sum_d (c c^T - diag c) / ||c c^T - diag c||_F: each document moves it by <= 1 in Frobenius norm."""
    X = sp.csr_matrix(X, dtype=np.float64)
    s2 = np.asarray(X.multiply(X).sum(1)).ravel()
    s4 = np.asarray(X.power(4).sum(1)).ravel()
    dd = np.asarray((X.multiply(X) - X).power(2).sum(1)).ravel()
    fn = np.sqrt(np.maximum(s2 ** 2 - s4 + dd, 0.0))
    w = np.divide(1.0, fn, out=np.zeros_like(fn), where=fn > 0)
    W = sp.diags(w)
    M = (X.T @ W @ X).toarray()
    M -= np.diag(np.asarray((W @ X).sum(0)).ravel())
    return M


def oneshot(X, K, epsilon, delta, threshold, rng):
    from sklearn.decomposition import NMF
    sigma = calibrate_noise_multiplier(epsilon, delta, 1.0, 1)
    Q = cooccurrence_statistic(X)
    Q = Q + rng.normal(0.0, sigma, Q.shape)          # the one release
    Q = (Q + Q.T) / 2                                 # post-processing from here on
    Q[Q < threshold * sigma / np.sqrt(2)] = 0.0
    H = NMF(K, init="nndsvda", max_iter=300, random_state=0).fit(Q).components_ + 1e-9
    return H / H.sum(1, keepdims=True)


def diversity(beta, top=25):
    idx = np.argsort(-beta, axis=1)[:, :top]
    return len(np.unique(idx)) / idx.size


def compare(tr, ref, a):
    from dptopic import LDA
    from dptopic.evaluation.recovery import topic_recovery
    from dptopic.models.docdp import DocDPEM
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    K, V = a.topics, tr.vocab_size
    cgs = LDA(n_topics=K, n_iter=300, seed=0, verbose=0).fit(tr).components_
    rows = [("CGS seed 1 (ceiling)", [LDA(n_topics=K, n_iter=300, seed=1, verbose=0).fit(tr).components_])]
    rng = np.random.default_rng(0)
    freq = np.argsort(-np.asarray(X_sum(tr)).ravel(), kind="stable")[:400]
    def null_top():
        B = np.full((K, V), 1e-12)
        B[:, freq] = rng.dirichlet(np.full(400, 0.1), K)
        return B / B.sum(1, keepdims=True)
    rows.append(("null: random topics, all words", [rng.dirichlet(np.full(V, 0.1), K) for _ in range(a.seeds)]))
    rows.append(("null: random topics, 400 most frequent words", [null_top() for _ in range(a.seeds)]))
    rows.append((f"DocDPEM eps={a.epsilon:g}", [DocDPEM(n_topics=K, epsilon=a.epsilon, delta=a.delta, seed=s).fit(tr).components_
                                               for s in range(a.seeds)]))
    rows.append((f"DocDPCooccurrence eps={a.epsilon:g}", [DocDPCooccurrence(n_topics=K, epsilon=a.epsilon, delta=a.delta,
                                                                            seed=s).fit(tr).components_ for s in range(a.seeds)]))
    share = a.background_share or 0.15
    rows.append((f"  background_share={share:g}", [DocDPCooccurrence(n_topics=K, epsilon=a.epsilon, delta=a.delta,
                                                                     background_share=share, seed=s).fit(tr).components_
                                                   for s in range(a.seeds)]))
    print(f"{'model':46} {'NPMI':>7} {'diversity':>9} {'match to CGS':>12}")
    for name, betas in rows:
        print(f"{name:46} {np.median([npmi(b, ref) for b in betas]):7.4f} {np.median([diversity(b) for b in betas]):9.3f}"
              f" {np.median([topic_recovery(b, cgs) for b in betas]):12.3f}")


def setunion():
    from dptopic.corpus.private_vocabulary import dp_set_union
    full = load_20newsgroups("train", max_vocab=None, min_df=1)
    print(f"20 Newsgroups train: {full.n_docs} documents, {full.vocab_size} distinct words; DP set union, delta 5e-6")
    for eps_v in (0.2, 0.3, 0.5):
        sizes = [len(dp_set_union(full, eps_v, 5e-6, delta0=d0, seed=0)[0]) for d0 in (5, 10, 20, 50)]
        print(f"eps_V={eps_v:g}: words selected with a per-document cap of 5/10/20/50: {sizes}")


def candidates(a):
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    cand = load_20newsgroups("test", max_vocab=None, min_df=2).vocabulary
    tr = load_20newsgroups("train", vocabulary=cand)
    te = load_20newsgroups("test", vocabulary=cand)
    scores = [npmi(DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta,
                                     background_share=a.background_share, seed=s).fit(tr).components_,
                   te.to_bow()) for s in range(a.seeds)]
    print(f"{len(cand)} candidate words, eps={a.epsilon:g}: NPMI per seed {[round(x, 4) for x in scores]},"
          f" median {np.median(scores):.4f}")


def public(a):
    from dptopic import LDA
    from dptopic.evaluation.recovery import topic_recovery
    from dptopic.models.docdp import DocDPEM
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    tr, te = load()
    ref = te.to_bow()
    cgs = LDA(n_topics=a.topics, n_iter=300, seed=0, verbose=0).fit(tr).components_      # all training documents
    perm = np.random.default_rng(123).permutation(tr.n_docs)
    print(f"{'public docs':>11} {'model (eps on the private rest)':44} {'NPMI':>7} {'match to CGS':>12}")
    for n in a.n_public:
        pub, priv = tr.subset(np.sort(perm[:n])), tr.subset(np.sort(perm[n:]))
        start = LDA(n_topics=a.topics, n_iter=300, seed=0, verbose=0).fit(pub).components_
        rows = [("CGS on the public documents alone", [start]),
                (f"+ DocDPEM(init=public, n_iter=1), eps={a.epsilon:g}",
                 [DocDPEM(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, n_iter=1, init=start,
                          seed=s).fit(priv).components_ for s in range(a.seeds)]),
                (f"DocDPCooccurrence alone, eps={a.epsilon:g}",
                 [DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, seed=s).fit(priv).components_
                  for s in range(a.seeds)])]
        for name, betas in rows:
            print(f"{n:11d} {name:44} {np.median([npmi(b, ref) for b in betas]):7.4f}"
                  f" {np.median([topic_recovery(b, cgs) for b in betas]):12.3f}", flush=True)


def X_sum(corpus):
    return corpus.to_bow().sum(axis=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("route", choices=["cgs", "em", "oneshot", "cooc", "compare", "setunion", "candidates", "public"])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--n-iter", type=int, default=3)
    ap.add_argument("--threshold", type=float, default=None, help="default: 2 (em, oneshot), the model's (cooc)")
    ap.add_argument("--n-words", type=lambda v: v if v == "auto" else int(v), default=400,
                    help="cooc: words kept for the co-occurrence release, or auto")
    ap.add_argument("--background-share", type=float, default=None,
                    help="cooc/compare/candidates: words in more than this share of documents become background words")
    ap.add_argument("--n-background", type=int, default=2, help="cooc: background topics (with --background-share)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--docs", type=int, default=None, help="train on the first N training documents only")
    ap.add_argument("--n-public", type=int, nargs="+", default=[500, 1000, 2000],
                    help="public: how many training documents stand in for a public corpus")
    a = ap.parse_args()
    if a.route == "public":
        return public(a)
    if a.route == "setunion":
        return setunion()
    if a.route == "candidates":
        return candidates(a)
    tr, te = load()
    if a.docs:
        tr = tr.subset(np.arange(min(a.docs, tr.n_docs)))
    X, ref = tr.to_bow(), te.to_bow()
    if a.route == "compare":
        return compare(tr, ref, a)
    scores = []
    for seed in range(a.seeds):
        t = time.time()
        if a.route == "cgs":
            from dptopic import LDA
            beta = LDA(n_topics=a.topics, n_iter=300, seed=seed).fit(tr).components_
        elif a.route == "em":
            from dptopic.models.docdp import DocDPEM
            beta = DocDPEM(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, n_iter=a.n_iter,
                           threshold=2.0 if a.threshold is None else a.threshold, seed=seed).fit(tr).components_
        elif a.route == "cooc":
            from dptopic.models.docdp_cooc import DocDPCooccurrence
            kw = {} if a.threshold is None else {"threshold": a.threshold}
            beta = DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, n_words=a.n_words,
                                     background_share=a.background_share, n_background=a.n_background,
                                     seed=seed, **kw).fit(tr).components_
        else:
            beta = oneshot(X, a.topics, a.epsilon, a.delta, 2.0 if a.threshold is None else a.threshold,
                           np.random.default_rng(seed))
        scores.append(npmi(beta, ref))
        print(f"{a.route} eps={a.epsilon} seed={seed} npmi={scores[-1]:.4f} ({time.time() - t:.0f}s)", flush=True)
    se = np.std(scores, ddof=1) / np.sqrt(len(scores)) if len(scores) > 1 else float("nan")
    print(f"{a.route} eps={a.epsilon} median npmi={np.median(scores):.4f} mean={np.mean(scores):.4f} se={se:.4f}")


if __name__ == "__main__":
    main()
