"""OLP-LDA's prior-overlap check: how often it misses a batch made of prior documents, and how often it flags a
disjoint batch, with its threshold calibrated on one randomized copy of the prior against copies pooled until at
least 1,000 null distances (what ``OLPLDA`` does).

A planted LDA corpus (V = 120 words, K = 4, 30 tokens a document, seed 5): the first 80 documents are the public
prior, the next 160 the contributors'. Each run calibrates the threshold afresh, randomizes two batches of 40 prior
documents (members) and two of 40 contributors' documents (non-members) at ``--epsilon-word``, and counts a miss
when a member batch is not flagged, a false alarm when a non-member batch is. Prints both rates per calibration,
the spread of the margin (reports below the threshold minus the flagging limit) and the ratio of the misses of
one copy against pooled copies, from the same runs.

    PYTHONPATH=src python benchmarks/bench_prior_overlap.py [--runs 1000] [--epsilon-word 3]
    PYTHONPATH=src python benchmarks/bench_prior_overlap.py --runs 20       # smoke run (seconds)
"""
import argparse
import itertools
import warnings

import numpy as np

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--epsilon-word", type=float, default=3.0)
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")           # the simulation's seeded randomizer warns that it is seeded
    from scipy import stats

    from dptopic.accounting.local import f_from_epsilon
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.corpus import Corpus, lda_corpus
    from dptopic.mechanisms.randomized_response import randomized_response
    from dptopic.models.olp_lda import _OVERLAP_NULL_DRAWS
    from dptopic.protocol.estimation import overlap_count, overlap_threshold, presence_bits

    V, eps = 120, a.epsilon_word
    words = ["".join(t) + "ix" for t in itertools.product("bcdfghjklm", "aeiou", "pqrst")][:V]   # letters only
    c = lda_corpus(n_docs=240, vocab_size=V, n_topics=4, doc_length=30, alpha=0.2, beta=0.05, seed=5).corpus
    texts = [[words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]] for d in range(c.n_docs)]
    prior = Corpus.from_texts([" ".join(t) for t in texts[:80]], vocabulary=words, max_vocab=None)
    P = np.packbits(presence_bits(prior), axis=1, bitorder="little")
    bits = np.unpackbits(P, axis=1, count=V, bitorder="little").astype(bool)
    rows, ids = np.nonzero(bits)
    ptr = np.zeros(len(P) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=len(P)), out=ptr[1:])
    f = f_from_epsilon(eps)
    pooled = -(-_OVERLAP_NULL_DRAWS // len(P))
    print(f"planted corpus: prior of {len(P)} documents, V = {V}, eps_word = {eps:g} (f = {f:.4f}); batches of 40;"
          f" {a.runs} runs; one copy ({len(P)} null distances) against {pooled} copies ({pooled * len(P)})")
    misses = {}
    for copies in (1, pooled):
        miss = alarm = 0
        margins = []
        for r in range(a.runs):
            rng = np.random.default_rng([r, copies])
            null = [randomized_response(ids, ptr, V, f, rng)[0] for _ in range(copies)]
            thr, rate = overlap_threshold(P, null, 0.05)
            for first, member in ((0, True), (40, True), (80, False), (120, False)):
                batch = texts[first:first + 40]       # 0-79: the prior's documents; 80-159: contributors'
                rep = Randomizer(words, epsilon_word=eps, simulation=True,
                                 seed=int(rng.integers(2**31))).randomize(batch)
                limit = stats.binom.ppf(1 - 1e-4, rep.n_reports, rate)
                hits = overlap_count(rep.packed, P, thr)
                if member:
                    margins.append(hits - limit)
                    miss += hits <= limit
                else:
                    alarm += hits > limit
        misses[copies] = miss
        q = np.quantile(margins, [0.0, 0.01, 0.5])
        print(f"{copies:3d} cop{'y' if copies == 1 else 'ies'}: member batches missed {miss} of {2 * a.runs},"
              f" disjoint batches flagged {alarm} of {2 * a.runs}; member margin min {q[0]:g}, 1% {q[1]:g},"
              f" median {q[2]:g}")
    ratio = misses[1] / misses[pooled] if misses[pooled] else float("inf") if misses[1] else 1.0
    print(f"ratio of misses, one copy / pooled copies: {ratio:g}")


if __name__ == "__main__":
    main()
