"""The white-box one-run audit (``dptopic audit --design one-run --score release``): its lower bound against the claim
by epsilon, for each trainer the audit covers (DocDPCooccurrence; DocDPEM, whose canaries need words of their own, so
at most half the vocabulary of them; DPSVI, per document, one epoch at --svi-rate; HDP-LDA, per word (one token's word
replaced), --hdp-iter iterations with --hdp-inherent-share of the budget on its clipped sampling step, which the
release does not carry), one training run per row, on public data.

For each epsilon (per document, delta 1e-5) the audit writes m canary documents (each its own pair of words the release
holds), includes each by a fair coin, trains one model and bounds epsilon by Steinke, Nasr & Jagielski's Thm 3.1 at 95%
confidence from the canaries' cells of the released co-occurrence matrix. Beside it: what an ideal audit of the same
Gaussian noise expects from as many canaries (each canary's exact shift in pure unit noise, guesses fixed in advance),
which bounds what any one-run audit of m canaries can show; the claim; and the seconds the audit took.

Usage: PYTHONPATH=src python benchmarks/bench_audit_release.py [--canaries 10000] [--epsilons 0.5 1 2 4 8 16]
       [--corpus sotu|20newsgroups] [--seed 1]
Smoke run: bench_audit_release.py --canaries 200 --epsilons 4
"""
from __future__ import annotations

import argparse
import time

from _common import machine, table


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--canaries", type=int, default=10_000)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1, 2, 4, 8, 16])
    ap.add_argument("--corpus", choices=("sotu", "20newsgroups"), default="sotu")
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--trainers", nargs="+", choices=("docdp-cooc", "docdp", "svi", "hdp"),
                    default=["docdp-cooc", "docdp", "svi", "hdp"])
    ap.add_argument("--svi-rate", type=float, default=0.05, help="DPSVI's sampling rate (one epoch)")
    ap.add_argument("--hdp-iter", type=int, default=10, help="HDP-LDA's iterations")
    ap.add_argument("--hdp-inherent-share", type=float, default=0.1,
                    help="HDP-LDA: the share of each iteration's epsilon spent on the clipped sampling step")
    a = ap.parse_args(argv)
    if a.canaries < 2 or any(e <= 0 for e in a.epsilons):
        ap.error("give --canaries >= 2 and every epsilon > 0")

    from dptopic.attacks.release_audit import ideal_bound, release_audit
    from dptopic.datasets import load_20newsgroups, load_sotu
    from dptopic.models import DPSVI, HDPLDA, DocDPCooccurrence, DocDPEM

    def make(trainer, eps):
        if trainer == "svi":
            return DPSVI.from_budget(eps, n_topics=a.topics, sampling_rate=a.svi_rate, n_epochs=1, verbose=0)
        if trainer == "hdp":
            # the per-word claim is T (eps_L + eps_I) at best; eps_I a fixed share of each iteration's epsilon
            inherent = a.hdp_inherent_share * eps / a.hdp_iter
            return HDPLDA.from_budget(eps, n_iter=a.hdp_iter, epsilon_inherent=inherent, n_topics=a.topics,
                                      verbose=0)
        return (DocDPCooccurrence if trainer == "docdp-cooc" else DocDPEM)(n_topics=a.topics, epsilon=eps)

    corpus = load_sotu() if a.corpus == "sotu" else load_20newsgroups()
    print(f"machine: {machine()}")
    print(f"corpus: {a.corpus}, {corpus.n_docs} documents, V={corpus.vocab_size}; {a.canaries} canary documents"
          f" (DocDPEM: at most V/2); K={a.topics}; delta 1e-5; 95% confidence; seed {a.seed}")
    rows = []
    for trainer in a.trainers:
        m = min(a.canaries, corpus.vocab_size // 2) if trainer == "docdp" else a.canaries
        for eps in a.epsilons:
            est = make(trainer, eps)
            t = time.perf_counter()
            r = release_audit(corpus, est, n_canaries=m, seed=a.seed)
            secs = time.perf_counter() - t
            ideal_1k = ideal_bound(1_000, r["mu"], None, 0.95, r["delta"])
            rows.append([trainer, m, f"{eps:g}", f"{r['claimed_privacy']['epsilon']:.3f}",
                         f"{r['epsilon_lower_bound']:.2f}", f"{r['ideal_bound']:.2f}", f"{ideal_1k:.2f}",
                         f"{r['n_correct']}/{r['n_guesses']}", r["verdict"], f"{secs:.0f}"])
            print("  " + " | ".join(map(str, rows[-1])), flush=True)
    table(rows, ["trainer", "canaries", "epsilon", "claim", "lower bound", "ideal (as many)", "ideal (1000)",
                 "right/guesses", "verdict", "seconds"])


if __name__ == "__main__":
    main()
