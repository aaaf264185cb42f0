"""FedLDA, exclusion="none": the routes measured for a rule that learns (docs/fedlda.md, "Routes measured").

Each route replays the protocol of ``FedLDA.fit`` on the tasks of ``dptopic experiment fedlda`` (same
splits, users of 10 documents, L = 256 entries, K = 20, 20 rounds, eps per entry, the same seeds and
random streams) with the clients of ``dptopic.contributor.fedlda`` and one choice of client labelling and
server estimator, and prints the downstream AUC per seed (logistic regression on fold-in proportions,
as the experiment does). Every route is post-processing of the same once-randomized reports: same
per-user guarantee (entries x eps).

Labels (client side):
  gibbs   a Gibbs chain over the labels, continued across rounds (local_inference="gibbs")
  em      the user's topic proportions fitted to its reports by EM from the uniform start each round
          (--em-iter iterations), labels drawn from the posterior (local_inference="em", the default)
  lda     diagnostic, not a protocol (it reads the true words): each user's sampled tokens get a label
          drawn from centralized LDA's posterior (Phi of LDA on the true words, theta of their document),
          the tokens (among the --report-words words, as the protocol draws them) are randomized once by the
          same subset selection over those words, and Phi is estimated in one pass
          with --server debias (what the reports allow with LDA's own labels) or clean (the true words
          under those labels: no randomization)
Server estimators:
  picks     counts the word each client picks from its report (the earlier message)
  expected  expected revealed words, mechanisms.rrp.subset_signal_counts (the default)
  debias    whole reports counted under their label, minus the uniform share of subset selection
            (subset_frequencies per topic), clipped at 0
  shrink    expected counts plus --shrink x (entries of the topic) x the de-biased word frequencies of all
            reports (a pull toward the background)
  clean     (--labels lda only) the true words counted under their labels
  soft      (--labels em only) the server does the E-step itself from the whole reports: each user's
            proportions by EM as the clients fit them, and the expected counts weighted by every topic's
            posterior instead of one drawn label (deterministic EM; post-processing like the rest)
Starts (--init):
  random    the protocol's first Phi (a random perturbation of the uniform one)
  cooc      a server-side start from the reports alone: each user's de-biased word counts give an unbiased
            within-user co-occurrence of the --init-words most frequent words (pairs of distinct entries),
            factorised by moments.topics_from_cooccurrence; the other words by their de-biased frequency
  lda       diagnostic, not a protocol (it reads the true words): centralized LDA's topics as the start,
            to see whether the reports keep good topics once they are found
--average R releases the topics from the counts averaged over the last R rounds (post-processing).
--trace R [R ...] prints the AUC after those rounds as well (the last one is --rounds).
--temper B (exploratory, --labels em): tempered EM (Hofmann 1999) on the client: the report likelihoods are raised
to the power B in the E-step, both in the fit of the user's proportions (the same EM as subset_theta_em: alpha prior,
uniform start, EM_MAX_ITER iterations, EM_TOL, here in NumPy with the kernel's order of sums) and in the label draw
(theta_c lik[i, c]**B by the compiled sample_labels, from the client's own kernel state). Without the option the
clients run unchanged; --temper 1.0 runs the NumPy path and reproduces the default exactly.
--cap-repeats C (exploratory): each user's entries are drawn from its tokens with a word's repeats within a document
cut to C (1: word presence).
--report-words auto|all|N: the vocabulary's first words the reports range over (FedLDA's report_words; auto
reproduces the experiment's default). --task autos-electronics and graphics-crypt are the two other 20 Newsgroups
pairs report_words' rule was set on; --lda adds centralized LDA's AUC and the loss in points.

Run:  python benchmarks/bench_fedlda_routes.py --labels em --server expected --task 20ng --eps 5 --seeds 0 1 2
      (em/expected reproduces the "none" rows of `dptopic experiment fedlda --no-figures --seed S`)
      add --lda (and --npmi) for the peer measured in the same run: centralized non-private LDA (K = 20, 100 sweeps)
      on the same split: loss_points (AUC) and npmi_ratio in the JSON line
Smoke run (seconds):  bench_fedlda_routes.py --task sotu --seeds 0 --rounds 2 --lda --npmi
"""
from __future__ import annotations

import argparse
import json
import math
import time
import warnings

import numpy as np

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)
import dptopic.contributor.fedlda as fed_client
from dptopic.accounting.fedlda import subset_inclusion
from dptopic.contributor.fedlda import FedClient
from dptopic.evaluation import npmi_coherence
from dptopic.experiments.fedlda import classify, task_corpora
from dptopic.kernels import kernel_state, sample_labels
from dptopic.mechanisms.rrp import subset_frequencies, subset_signal_counts
from dptopic.models import FedLDA
from dptopic.moments.factorize import topics_from_cooccurrence
from dptopic.protocol.fedlda_server import full_vocabulary_topics


def report_likelihoods(sets, phi, e1, V):
    """``n x (K+1)``: the probability of each report under each topic and padding, up to a common factor."""
    K, s = phi.shape[0], sets.shape[1]
    lik = np.empty((len(sets), K + 1))
    lik[:, :K] = 1.0 + e1 * phi[:, sets].sum(axis=2).T
    lik[:, K] = 1.0 + e1 * s / V
    return lik


def soft_counts(sets, user, phi, eps, alpha, n_iter):
    """Route ``--server soft``: per-user EM proportions from the uniform start, then expected counts under
    every topic's posterior (the NumPy form of the clients' E-step with no label drawn)."""
    K, V = phi.shape
    e1 = math.expm1(eps)
    lik = report_likelihoods(sets, phi, e1, V)
    n_users = int(user.max()) + 1
    theta = np.full((n_users, K + 1), 1.0 / (K + 1))
    for _ in range(n_iter):
        r = theta[user] * lik
        r /= r.sum(axis=1, keepdims=True)
        theta = np.zeros_like(theta)
        np.add.at(theta, user, r)
        theta += alpha
        theta /= theta.sum(axis=1, keepdims=True)
    r = theta[user] * lik
    r /= r.sum(axis=1, keepdims=True)
    counts = np.zeros((K, V))
    for k in range(K):
        weight = e1 * phi[k, sets] * (r[:, k] / lik[:, k])[:, None]
        np.add.at(counts[k], sets.ravel(), weight.ravel())
    return counts


def tempered_theta_em(lik, alpha, max_iter, tol):
    """``subset_theta_em``'s EM on a given ``lik`` (``n x (K+1)``), in NumPy with the kernel's order of sums
    (sequential over components and over entries), so that it returns the kernel's proportions bit for bit."""
    n, C = lik.shape
    theta = np.full(C, 1.0 / C)
    for _ in range(max_iter):
        w = theta * lik
        tot = w[:, 0].copy()
        for c in range(1, C):
            tot += w[:, c]
        acc = np.add.accumulate(np.vstack([np.full((1, C), alpha), w / tot[:, None]]), axis=0)[-1]
        norm = acc[0]
        for c in range(1, C):
            norm += acc[c]
        new = acc / norm
        moved = float(np.abs(new - theta).max())
        theta = new
        if moved <= tol:
            break
    return theta


def tempered_local_sampling(power):
    """Route ``--temper B``: a ``FedClient.local_sampling`` for ``local_inference="em"`` whose E-step (proportions
    and label draw) uses ``lik ** B``; the same random stream as the client's (one kernel state per round)."""
    original = FedClient.local_sampling

    def local_sampling(self, phi):
        if self.config.exclusion != "none" or self.config.local_inference != "em":
            return original(self, phi)
        state = kernel_state(self._rng)
        K, V, s = self.config.n_topics, phi.shape[1], self.sets.shape[1]
        e1 = math.expm1(min(self.config.epsilon, 700.0))
        phi_wk = np.ascontiguousarray(phi.T)
        f = phi_wk[self.sets[:, 0]].copy()  # the kernel's sum over the set, word by word
        for j in range(1, s):
            f += phi_wk[self.sets[:, j]]
        lik = np.empty((self.sets.shape[0], K + 1))
        lik[:, :K] = 1.0 + e1 * f
        lik[:, K] = 1.0 + e1 * s / V
        lik = np.ascontiguousarray(lik ** power)
        self.theta_reports = tempered_theta_em(lik, float(self.config.alpha), fed_client.EM_MAX_ITER,
                                               fed_client.EM_TOL)
        sample_labels(lik, self.theta_reports, state, self.rz)
        self.rnk = np.bincount(self.rz, minlength=K + 1).astype(np.int64)

    return local_sampling


def cooccurrence_start(sets, user, V, eps, K, n_words=300):
    """Route ``--init cooc``: a first Phi computed from the reports alone (post-processing)."""
    import scipy.sparse as sp

    n, s = sets.shape
    A, B = subset_inclusion(eps, V, s)
    n_users = int(user.max()) + 1
    M = sp.csr_matrix((np.ones(n * s), (np.repeat(np.arange(n), s), sets.ravel())), shape=(n, V))
    H = (sp.csr_matrix((np.ones(n), (user, np.arange(n))), shape=(n_users, n)) @ M).toarray()
    m_u = np.bincount(user, minlength=n_users)[:, None]
    G = (H - m_u * B) / (A - B)                      # unbiased word counts per user
    freq = G.sum(axis=0)
    kept = np.sort(np.argsort(-freq, kind="stable")[:n_words])
    Mk = M[:, kept]
    hk = H[:, kept].sum(axis=0)
    # the same entry's pairs: sum_i g_i g_i^T with g_i = (1_S - B) / (A - B); removed so that only pairs of
    # distinct (independently randomized) entries remain
    own = ((Mk.T @ Mk).toarray() - B * (hk[:, None] + hk[None, :]) + n * B * B) / (A - B) ** 2
    Q = G[:, kept].T @ G[:, kept] - own
    noise = math.sqrt(float((m_u.ravel() ** 2).sum())) * B * (1 - B) / (A - B) ** 2
    Hk = topics_from_cooccurrence(Q, K, "nmf", noise_std=noise, threshold=2.0)
    w = np.maximum(freq, 0.0) + 1e-3
    rest = np.setdiff1d(np.arange(V), kept)
    share = w[rest].sum() / w.sum()
    phi = np.zeros((K, V))
    phi[:, kept] = Hk * (1.0 - share)
    phi[:, rest] = share * w[rest] / w[rest].sum()
    phi += 1e-6
    return phi / phi.sum(axis=1, keepdims=True)


def post_process(phi, post, counts, background, beta):
    """Route ``--post KIND:X`` on the released topics (post-processing of the published counts):
    ``sharpen:g`` Phi ** g renormalised; ``floor:c`` the counts minus c x (the topic's mass) x the de-biased
    background frequencies, clipped at 0; ``lift:g`` Phi x (Phi / mean topic) ** g."""
    kind, x = post.split(":")
    x = float(x)
    if kind == "sharpen":
        out = phi ** x
    elif kind == "floor":
        out = np.maximum(counts - x * counts.sum(axis=1, keepdims=True) * background[None, :], 0.0) + beta
    elif kind == "lift":
        out = phi * (phi / phi.mean(axis=0, keepdims=True)) ** x
    else:
        raise SystemExit(f"--post: unknown kind {kind!r}")
    return out / out.sum(axis=1, keepdims=True)


def capped_repeats(corpus, cap):
    """The corpus with each word's tokens in each document cut to at most ``cap`` (order kept)."""
    from dptopic.corpus import Corpus

    docs = []
    for d in range(corpus.n_docs):
        w = corpus.doc(d)
        seen = {}
        keep = []
        for x in w.tolist():
            seen[x] = seen.get(x, 0) + 1
            if seen[x] <= cap:
                keep.append(x)
        docs.append(keep)
    return Corpus.from_token_ids(docs, corpus.vocabulary)


def pick_words(client, phi, e1, K):
    """The "gibbs" kernel's pick for EM labels: a word of the set with weight e1 phi[k, w], or none (1)."""
    z, S = client.rz, client.sets
    k = np.minimum(z, K - 1)
    w = e1 * phi[k[:, None], S]
    u = client._rng.random(len(z)) * (1.0 + w.sum(axis=1))
    j = (np.cumsum(w, axis=1) <= u[:, None]).sum(axis=1)
    return np.where((j < S.shape[1]) & (z < K), j, -1)


def lda_labels(task, eps, seed, server, pad_length, n_topics, beta, subset_size, data, n_report=None):
    """The diagnostic ``--labels lda`` (reads the true words; see the module docstring). With ``n_report`` (the
    words ``--report-words`` gives), each user's entries are drawn from its tokens among the vocabulary's first
    ``n_report`` words, randomized over them, and the other words get ``full_vocabulary_topics``' weights, as in
    ``FedLDA.fit``."""
    from dptopic.mechanisms.rrp import subset_report
    from dptopic.models import LDA

    tr, te, ytr, yte = data
    lda = LDA(n_topics=n_topics, n_iter=100, seed=seed, verbose=0).fit(tr)
    theta = lda.transform(tr, n_iter=40, burn_in=20, seed=seed)
    rng, K = np.random.default_rng(seed), n_topics
    V = tr.vocab_size if n_report is None else n_report
    doc_of = np.repeat(np.arange(tr.n_docs), tr.doc_lengths)
    z, words = [], []
    for ix in np.array_split(np.arange(tr.n_docs), max(1, tr.n_docs // 10)):  # users of 10 documents
        tok = np.arange(tr.doc_ptr[ix[0]], tr.doc_ptr[ix[-1] + 1])
        tok = tok[tr.word_ids[tok] < V]         # the user's tokens among the report words
        tok = rng.choice(tok, pad_length, replace=False) if len(tok) > pad_length else tok
        w = tr.word_ids[tok]
        p = lda.components_[:, w].T * theta[doc_of[tok]]
        zu = (np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1) > rng.random((len(tok), 1))).argmax(axis=1)
        pad = pad_length - len(tok)  # padding entries: randomized like the rest, labelled K
        z += [zu, np.full(pad, K)]
        words += [w, np.full(pad, -1)]
    z, words = np.concatenate(z), np.concatenate(words).astype(np.int32)
    sets, _ = subset_report(words, V, eps, rng, subset_size or None)
    keep = z < K
    if server == "clean":
        counts = np.bincount(z[keep] * V + words[keep], minlength=K * V).reshape(K, V).astype(float)
    else:
        A, B = subset_inclusion(eps, V, sets.shape[1])
        hits = np.bincount((z[keep, None] * V + sets[keep]).ravel(), minlength=K * V).reshape(K, V)
        counts = np.maximum((hits - np.bincount(z[keep], minlength=K)[:, None] * B) / (A - B), 0.0)
    phi = counts + beta
    return full_vocabulary_topics(phi / phi.sum(axis=1, keepdims=True), tr.vocab_size)


def run(task, eps, seed, labels="em", server="expected", rounds=20, pad_length=256, n_topics=20, beta=0.01,
        subset_size=0, shrink=0.5, data=None, init="random", alpha=0.1, trace=(), init_words=300,
        leave_user_out=False, report_words="auto", npmi_out=None, average=0, post=None, skip_top=0, cap_repeats=0):
    tr, te, ytr, yte = data if data is not None else task_corpora(task, 3000, seed)
    if skip_top:  # the vocabulary's first skip_top words moved to its end: the reports range over the next ones
        words = list(tr.vocabulary.words)
        words = words[skip_top:] + words[:skip_top]
        tr, te = tr.restrict(words, drop_empty=False), te.restrict(words, drop_empty=False)
    model = FedLDA(n_topics=n_topics, epsilon_per_entry=eps, rounds=rounds, pad_length=pad_length, beta=beta, seed=seed,
                   n_clients=max(1, tr.n_docs // 10), subset_size=subset_size, verbose=0, alpha=alpha,
                   local_inference="em" if labels == "lda" else labels, report_words=report_words)
    model._validate()
    if labels == "lda":
        n_report = model._report_corpora(model._client_corpora(tr))[1]
        model.components_ = lda_labels(task, eps, seed, server, pad_length, n_topics, beta, subset_size,
                                       (tr, te, ytr, yte), n_report)
        model.vocabulary_, model.report_words_ = tr.vocabulary, n_report   # as FedLDA.fit sets them
        return classify(model, tr, te, ytr, yte, seed)["auc"]
    corpora, n_report = model._report_corpora(model._client_corpora(tr))  # as FedLDA.fit
    if cap_repeats:  # exploratory: a word repeated within a document gives at most cap_repeats of its tokens
        corpora = [capped_repeats(c, cap_repeats) for c in corpora]
    cfg = model._config()
    rngs = model._rng().spawn(len(corpora) + 1)  # as FedLDA.fit: one stream per client, one for the server
    clients = [FedClient(f"user{i}", c, cfg, r) for i, (c, r) in enumerate(zip(corpora, rngs[1:]))]
    K, V = n_topics, n_report
    model.report_words_ = n_report          # as FedLDA.fit: transform folds in over the report words

    phi = rngs[0].dirichlet(np.ones(V), size=K) * 0.5 + 0.5 / V
    s = clients[0].sets.shape[1]
    user = np.concatenate([np.full(len(c.sets), i) for i, c in enumerate(clients)])
    if init == "cooc":
        phi = cooccurrence_start(np.concatenate([c.sets for c in clients]), user, V, eps, K, init_words)
    elif init == "lda":
        from dptopic.models import LDA

        phi = LDA(n_topics=K, n_iter=100, seed=seed, verbose=0).fit(tr).components_[:, :V]
        phi = phi / phi.sum(axis=1, keepdims=True) * 0.9 + 0.1 / V
    seen = {}
    A, B = subset_inclusion(eps, V, s)
    e1 = math.expm1(eps)
    all_sets = np.concatenate([c.sets for c in clients])
    background = np.maximum(subset_frequencies(all_sets, V, eps), 0)
    background /= background.sum()
    for t in range(rounds):
        if t in trace:
            model.components_, model.vocabulary_ = full_vocabulary_topics(phi, tr.vocab_size), tr.vocabulary
            seen[t] = round(classify(model, tr, te, ytr, yte, seed)["auc"], 3)
        if server == "soft":
            phi = soft_counts(all_sets, user, phi, eps, alpha, fed_client.EM_MAX_ITER) + beta
            phi /= phi.sum(axis=1, keepdims=True)
            continue
        own = None
        if leave_user_out and t > 0 and server == "expected":
            # each user labels against the counts without its own last-round contribution (as collapsed Gibbs
            # sampling leaves out the token it resamples): post-processing of the broadcast and its own reports
            own = [subset_signal_counts(c.rz, c.sets, phi_prev, eps) for c in clients]  # noqa: F821 - the last round's
        for i, c in enumerate(clients):
            if own is not None:
                p_u = np.maximum(counts - own[i], 0.0) + beta  # noqa: F821 - the last round's counts
                c.local_sampling(p_u / p_u.sum(axis=1, keepdims=True))
            else:
                c.local_sampling(phi)
            if server == "picks" and labels == "em":
                c.pick = pick_words(c, phi, e1, K)
        z = np.concatenate([c.rz for c in clients])
        if server == "picks":
            pick = np.concatenate([c.pick for c in clients])
            keep = (pick >= 0) & (z < K)
            counts = np.bincount(z[keep] * V + all_sets[np.nonzero(keep)[0], pick[keep]],
                                 minlength=K * V).reshape(K, V).astype(float)
        elif server == "debias":
            keep = z < K
            hits = np.bincount((z[keep, None] * V + all_sets[keep]).ravel(), minlength=K * V).reshape(K, V)
            n_k = np.bincount(z[keep], minlength=K)[:, None]
            counts = np.maximum((hits - n_k * B) / (A - B), 0.0)
        else:
            counts = subset_signal_counts(z, all_sets, phi, eps)
            phi_prev = phi  # noqa: F841 - read in the next round (pyflakes does not follow the loop)
            if server == "shrink":
                counts = counts + shrink * np.bincount(z[z < K], minlength=K)[:, None] * background
        phi = counts + beta
        phi /= phi.sum(axis=1, keepdims=True)
        if average and t >= rounds - average:
            acc = counts / average if t == rounds - average else acc + counts / average  # noqa: F821
    if average:  # the counts of the last rounds averaged (post-processing of the published counts)
        phi = acc + beta
        phi /= phi.sum(axis=1, keepdims=True)
    if post is not None:  # post-processing of the released topics (exploratory)
        phi = post_process(phi, post, counts, background, beta)
    model.components_, model.vocabulary_ = full_vocabulary_topics(phi, tr.vocab_size), tr.vocabulary
    auc = classify(model, tr, te, ytr, yte, seed)["auc"]
    if npmi_out is not None:  # the topics' own quality: NPMI of the top 10 words on the test split
        npmi_out.append(npmi_coherence(model.components_, te, 10))
    if trace:
        print(json.dumps({"seed": seed, "auc_after_round": {**seen, rounds: round(auc, 3)}}))
    return auc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", choices=("em", "gibbs", "lda"), default="em")
    ap.add_argument("--server", choices=("expected", "picks", "debias", "shrink", "clean", "soft"), default="expected")
    ap.add_argument("--init", choices=("random", "cooc", "lda"), default="random")
    ap.add_argument("--init-words", type=int, default=300, help="words of the --init cooc start")
    ap.add_argument("--alpha", type=float, default=0.1, help="the users' Dirichlet prior on topic proportions")
    ap.add_argument("--trace", type=int, nargs="*", default=[], help="also print the AUC after these rounds")
    ap.add_argument("--task", choices=("20ng", "sotu", "autos-electronics", "graphics-crypt"), default="20ng",
                    help="the experiment's tasks, or the two 20 Newsgroups pairs FedLDA's defaults are set on")
    ap.add_argument("--lda", action="store_true", help="also print centralized LDA's AUC on each seed (the reference)")
    ap.add_argument("--npmi", action="store_true", help="also print the topics' NPMI (top 10, test split; with --lda,"
                                                        " LDA's too)")
    ap.add_argument("--eps", type=float, default=5.0)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--pad-length", type=int, default=256)
    ap.add_argument("--user-budget", type=float, default=None,
                    help="a per-user total instead of --eps and --pad-length: entries and epsilon per entry from"
                         " FedLDA.from_user_budget's rule (docs/fedlda.md)")
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--subset-size", type=int, default=0, help="words per report (0: round(V / (e^eps + 1)))")
    ap.add_argument("--em-iter", type=int, default=fed_client.EM_MAX_ITER, help="EM iterations per round")
    ap.add_argument("--shrink", type=float, default=0.5)
    ap.add_argument("--report-words", default="auto",
                    help="auto (default, as FedLDA), all, or a number: the vocabulary's first words the reports range"
                         " over")
    ap.add_argument("--leave-user-out", action="store_true",
                    help="server expected: each user labels against the counts without its own last-round share")
    ap.add_argument("--temper", type=float, default=None,
                    help="tempered EM on the clients (--labels em): the E-step uses the report likelihoods to the"
                         " power B (exploratory; 1.0 runs the NumPy path and reproduces the default)")
    ap.add_argument("--skip-top", type=int, default=0,
                    help="exploratory: the reports leave out the vocabulary's first W words (most common first; they"
                         " get the same weight in every topic) and range over the words after them")
    ap.add_argument("--cap-repeats", type=int, default=0,
                    help="exploratory: a word repeated within a document gives at most C of its tokens to the user's"
                         " pool the entries are drawn from (0: every token)")
    ap.add_argument("--average", type=int, default=0,
                    help="the released topics from the counts averaged over the last R rounds (0: the last round's)")
    ap.add_argument("--post", default=None,
                    help="exploratory post-processing of the released topics: sharpen:G, floor:C or lift:G")
    a = ap.parse_args(argv)
    if not 0 <= a.average <= a.rounds or (a.average and a.server == "soft"):
        ap.error("--average R needs 0 <= R <= --rounds, and a server other than soft")
    if (a.server == "clean" and a.labels != "lda") or (a.labels == "lda" and a.server not in ("debias", "clean")):
        ap.error("--labels lda goes with --server debias or clean, and clean with --labels lda")
    if a.server == "soft" and a.labels != "em":
        ap.error("--server soft goes with --labels em")
    if a.temper is not None and (a.labels != "em" or a.server == "soft" or not a.temper > 0):
        ap.error("--temper B needs B > 0, --labels em and a server other than soft")
    if a.labels == "lda" and a.init != "random":
        ap.error("--init applies to the protocol's rounds, not to --labels lda")
    if a.user_budget is not None:
        from dptopic.accounting.fedlda import entries_for_user_budget
        from dptopic.experiments.fedlda import task_corpora

        a.eps, a.pad_length = entries_for_user_budget(a.user_budget, task_corpora(a.task)[0].vocab_size)
    fed_client.EM_MAX_ITER = a.em_iter
    if a.temper is not None:
        FedClient.local_sampling = tempered_local_sampling(a.temper)
    t0, aucs, npmis = time.time(), [], ([] if a.npmi else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fixed seeds: reproduction only
        for seed in a.seeds:
            aucs.append(run(a.task, a.eps, seed, a.labels, a.server, a.rounds, a.pad_length, beta=a.beta,
                            subset_size=a.subset_size, shrink=a.shrink, init=a.init, alpha=a.alpha,
                            trace=set(a.trace), init_words=a.init_words, leave_user_out=a.leave_user_out,
                            report_words=a.report_words if a.report_words in ("auto", "all")
                            else int(a.report_words), npmi_out=npmis, average=a.average,
                            post=a.post, skip_top=a.skip_top, cap_repeats=a.cap_repeats))
        ref = [lda_scores(a.task, seed) for seed in a.seeds] if a.lda else None
    out = {**vars(a), "n_topics": 20, "auc": [round(x, 3) for x in aucs], "mean": round(float(np.mean(aucs)), 4)}
    if npmis is not None:
        out.update(npmi=[round(x, 3) for x in npmis], npmi_mean=round(float(np.mean(npmis)), 4))
    if ref is not None:
        lda_auc = [r[0] for r in ref]
        out.update(lda_auc=[round(x, 3) for x in lda_auc], lda_mean=round(float(np.mean(lda_auc)), 4),
                   loss_points=round(100 * float(np.mean(lda_auc) - np.mean(aucs)), 2))
        if npmis is not None:
            lda_npmi = float(np.mean([r[1] for r in ref]))
            out.update(lda_npmi_mean=round(lda_npmi, 4), npmi_ratio=round(float(np.mean(npmis)) / lda_npmi, 2))
    print(json.dumps({**out, "seconds": round(time.time() - t0, 1)}))


def lda_scores(task, seed):
    """Centralized LDA's AUC, as ``dptopic experiment fedlda`` computes its reference row, and its NPMI."""
    from dptopic.models import LDA

    tr, te, ytr, yte = task_corpora(task, 3000, seed)
    lda = LDA(n_topics=20, n_iter=100, seed=seed, verbose=0).fit(tr)
    return classify(lda, tr, te, ytr, yte, seed)["auc"], npmi_coherence(lda.components_, te, 10)


if __name__ == "__main__":
    main()
