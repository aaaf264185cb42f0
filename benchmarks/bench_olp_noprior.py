"""OLP-LDA without prior data (``OLPLDA(prior_corpus="none")``): topic quality beside a non-private peer.

The stream of ``dptopic experiment olp`` (Zhao et al. Fig. 10): the same 2,400 training documents after the
1,000-document prior pool, randomized once at eps_word = 3 (word-presence bits, local DP per document: eps_doc =
V x eps_word), batches of 160, K = 50, 50 sweeps per batch. Prints the mean NPMI of the topics' 10 top words over
the held-out split for each seed, their median, and its ratio to non-private collapsed Gibbs sampling on the same
2,400 documents (K = 50, 100 sweeps, seed 0), trained in the same run.

    PYTHONPATH=src python benchmarks/bench_olp_noprior.py [--corpus demo|20newsgroups] [--seeds 0 1 2]
    PYTHONPATH=src python benchmarks/bench_olp_noprior.py --seeds 0          # smoke run (seconds)
"""
import argparse
import time
import warnings

import numpy as np

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default="demo", choices=("demo", "20newsgroups"))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    from dptopic.cli._run_common import experiment_corpora
    from dptopic.evaluation.topic_quality import npmi_coherence
    from dptopic.experiments import zhao_local as z
    from dptopic.models import LDA, OLPLDA

    train, test = experiment_corpora(a.corpus)
    perm = np.random.default_rng(0).permutation(train.n_docs)       # as olp_experiment: prior pool, then stream
    stream = train.subset(np.sort(perm[1000:1000 + 15 * 160]))
    common = dict(n_topics=50, n_iter=50, prior_iter=100, alpha=0.1, beta=0.01, lam=0.5, verbose=0)
    reports = z._randomize(stream, 3.0, 3000)
    print(f"corpus {a.corpus}: stream of {stream.n_docs} documents, V = {stream.vocab_size}, K = 50, eps_word = 3,"
          f" batches of 160, 50 sweeps per batch; NPMI over {test.n_docs} held-out documents")
    scores = []
    for seed in a.seeds:
        t = time.perf_counter()
        m = OLPLDA("none", omega=0.4, batch_size=160, seed=seed, **common)
        for batch in reports.batches(160):
            m.partial_fit(batch)
        scores.append(float(np.mean(npmi_coherence(m.components_, test))))
        print(f"  OLP-LDA without prior data, seed {seed}: NPMI {scores[-1]:.4f} ({time.perf_counter() - t:.1f} s)")
    t = time.perf_counter()
    peer = LDA(n_topics=50, n_iter=100, alpha=0.1, beta=0.01, seed=0, verbose=0).fit(stream)
    ref = float(np.mean(npmi_coherence(peer.components_, test)))
    print(f"  non-private CGS (peer, same stream): NPMI {ref:.4f} ({time.perf_counter() - t:.1f} s)")
    med = float(np.median(scores))
    print(f"median NPMI {med:.4f}, ratio to the non-private peer {med / ref:.2f}")


if __name__ == "__main__":
    main()
