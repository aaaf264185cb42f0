"""How many words DocDPCooccurrence should keep, by corpus size: the table behind ``n_words="auto"``.

The rule ``n_words="auto"`` (``D / (4 sigma)`` words, 200 to 400; ``docs/document_dp.md``) was set on the State of
the Union paragraphs, a public corpus, so that no benchmark corpus of the document-level targets tuned it. This
script prints, for random subsets of the training split of the chosen corpus of several sizes, the median NPMI
(top 10 words, boolean document co-occurrence in the held-out split) over seeds of ``DocDPCooccurrence`` at each
fixed ``n_words`` and with ``"auto"`` (and how many words "auto" kept), with and without background topics.
Peer: non-private LDA (collapsed Gibbs, K=20, ``--peer-iterations`` sweeps, default 300, seed 0) trained in the same
run on the same subset and scored the same way; each cell prints its NPMI's ratio to that peer's. The peer costs one
CGS fit per size (seconds on the State of the Union, about a minute on all of 20 Newsgroups); ``--no-peer`` skips it.

    PYTHONPATH=src python benchmarks/bench_docdp_words.py                         # State of the Union, eps 1
    PYTHONPATH=src python benchmarks/bench_docdp_words.py --epsilon 4 --sizes 18740 --n-words 150 400 auto
    PYTHONPATH=src python benchmarks/bench_docdp_words.py --corpus 20newsgroups --sizes 5000 11287
    PYTHONPATH=src python benchmarks/bench_docdp_words.py --sizes 2000 --n-words 200 --background-share off --seeds 1
                                                                                 # smoke run (seconds)
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)
from dptopic.datasets import load_20newsgroups, load_sotu
from dptopic.evaluation import topic_quality
from dptopic.models import LDA, DocDPCooccurrence


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=("sotu", "20newsgroups"), default="sotu")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000, 18740],
                    help="training documents (a random subset; the whole split when at least its size)")
    ap.add_argument("--n-words", nargs="+", default=["150", "200", "300", "400", "600", "auto"])
    ap.add_argument("--background-share", nargs="+", default=["off", "0.15"],
                    help="settings of background_share to run (off: None; auto; or a share)")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--peer-iterations", type=int, default=300,
                    help="sweeps of the non-private LDA peer (collapsed Gibbs, seed 0) on each subset")
    ap.add_argument("--no-peer", action="store_true", help="skip the non-private peer (no ratios printed)")
    a = ap.parse_args(argv)
    if a.corpus == "sotu":
        train, test = load_sotu(max_vocab=2000).train_test_split(0.2, seed=0)
    else:
        train = load_20newsgroups("train", max_vocab=2000)
        test = load_20newsgroups("test", vocabulary=train.vocabulary).drop_empty()
    perm = np.random.default_rng(0).permutation(train.n_docs)
    print(f"{a.corpus}: {train.n_docs} training documents, V={train.vocab_size}, K=20, eps={a.epsilon:g},"
          f" delta=1e-5, {a.seeds} seeds; median NPMI over {test.n_docs} held-out documents"
          + ("" if a.no_peer else f"; (ratio) to non-private LDA (CGS, K=20, {a.peer_iterations} sweeps, seed 0)"
                                  " on the same documents, same run"))
    for n in a.sizes:
        sub = train if n >= train.n_docs else train.subset(np.sort(perm[:n]))
        ref = None
        if not a.no_peer:
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                peer = LDA(n_topics=20, n_iter=a.peer_iterations, seed=0, verbose=0).fit(sub)
                ref = topic_quality(peer, test, top_n=10)["npmi"]
            print(f"{min(n, train.n_docs):6d} docs, non-private LDA peer: NPMI {ref:.4f}"
                  f" ({time.perf_counter() - t:.1f} s)", flush=True)
        for share in a.background_share:
            bg = None if share == "off" else share if share == "auto" else float(share)
            cells = []
            for nw in a.n_words:
                nw = nw if nw == "auto" else int(nw)
                scores, kept = [], []
                t = time.perf_counter()
                for s in range(a.seeds):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        m = DocDPCooccurrence(n_topics=20, epsilon=a.epsilon, delta=1e-5, n_words=nw,
                                              background_share=bg, seed=s).fit(sub)
                        scores.append(topic_quality(m, test, top_n=10)["npmi"])
                    kept.append(len(m.kept_words_))
                label = f"auto ({int(np.median(kept))})" if nw == "auto" else str(nw)
                med = float(np.median(scores))
                cells.append(f"{label}: {med:.4f}" + ("" if ref is None else f" ({med / ref:.2f})"))
            print(f"{min(n, train.n_docs):6d} docs, background_share={share:5}  " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
