"""Where ``vectors_route="auto"``'s presence cut lies: reads ``bench_utility.py``'s ``utility_<corpus>.json`` files
(measured with ``--trainers docdp-cooc docdp-cooc-groups docdp-cooc-vectors-spread``) and prints, per corpus and
epsilon, the training split's noise-free presence (the first release's word entries summed, before noise), the
signal ``presence / (175 sigma)``, the route ``auto`` takes on it, the medians coverage / accuracy share / supported
of the groups forced, the spread forced and the model without vectors, and the coverage differences groups - spread
and groups - none (the runs' means, standard error of independent fits, in bold beyond 2 of them;
docs/research/public_vectors.md, "Locating the cut").

    python benchmarks/compare_vector_routes.py runs/cut79/*/utility_*.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import bench_utility  # noqa: E402
from plot_vector_targets import difference, rows_by_epsilon  # noqa: E402

GROUPS, SPREAD, NONE = "docdp-cooc-groups", "docdp-cooc-vectors-spread", "docdp-cooc"


def presence(corpus: str, vocab_size: int) -> float:
    """The noise-free presence of the corpus's training split: each document's ``m / sqrt(m + 1)``, summed (``m``
    its distinct vocabulary words)."""
    _, train, _ = next(bench_utility.corpora([corpus], vocab_size))
    m = np.array([len(np.unique(train.word_ids[train.doc_ptr[d]:train.doc_ptr[d + 1]])) for d in range(train.n_docs)],
                 dtype=float)
    return float(np.sum(m / np.sqrt(m + 1.0)))


def sigma(epsilon: float, n_topics: int, vocab_size: int) -> float:
    """The co-occurrence release's noise multiplier of the trainers measured (public settings alone)."""
    import dptopic

    model = dptopic.DocDPCooccurrence.from_budget(epsilon, bench_utility.DELTA, n_topics=n_topics,
                                                  public_vectors=bench_utility.VECTORS)
    return model.release_plan(n_words=vocab_size).release("co-occurrence statistic").event.noise_multiplier


def cell(row) -> str:
    return f"{row['coverage_share']:.2f} / {row['accuracy_share']:.2f} / {int(row.get('supported', 0))}"


def diff(a, b) -> str:
    """The coverage difference ``a - b`` ± its standard error, in bold beyond 2 standard errors."""
    d = difference(a, b)
    if d is None:
        return "-"
    text = f"{d[0]:+.3f} ± {d[1]:.3f}".replace("-", "−")
    return f"**{text}**" if abs(d[0]) > 2 * d[1] else text


def main(argv=None) -> None:
    from dptopic.moments.vector_prior import choose_route

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", type=Path)
    args = ap.parse_args(argv)
    print("| corpus | presence | ε | signal | `auto` | groups | spread | none | groups − spread | groups − none |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in args.results:
        result = json.loads(path.read_text())
        S = presence(result["corpus"], result["vocab_size"])
        g, s, n = (rows_by_epsilon(result, t) for t in (GROUPS, SPREAD, NONE))
        for eps in sorted(g):
            sig = sigma(eps, result["n_topics"], result["vocab_size"])
            print(f"| {result['corpus']} | {S:,.0f} | {eps:g} | {S / (175 * sig):.0f} | {choose_route('auto', S, sig)}"
                  f" | {cell(g[eps])} | {cell(s[eps])} | {cell(n[eps])} | {diff(g[eps], s[eps])}"
                  f" | {diff(g[eps], n[eps])} |")


if __name__ == "__main__":
    main()
