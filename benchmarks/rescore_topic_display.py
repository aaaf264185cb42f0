"""Score other word rankings on topics a ``bench_utility.py --save-topics`` run saved (post-processing of the same fits:
no fit, no budget): NPMI ratio (top 10, held-out boolean documents) and diversity (top 25 and top 10) of each saved fit
ranked by probability and by relevance at several lambdas (Sievert & Shirley 2014), beside non-private LDA's as that
run measured it.

    python benchmarks/rescore_topic_display.py runs/after/utility_20newsgroups.json --lambdas 1 0.8 0.6 0.4 0.2

``--background C``: also a background route, decided from the topics alone: every topic less ``C`` times the weight
every topic gives the word (its minimum over topics), renormalised; this changes the topics, so its coverage share of
non-private LDA run A (seed 0, refitted here as bench_utility fits it) is printed too.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from bench_utility import corpora
from dptopic.evaluation import npmi_coherence, topic_diversity


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("result", help="a utility_<corpus>.json written with --save-topics (its topics_*.npy beside it)")
    ap.add_argument("--lambdas", type=float, nargs="+", default=[1.0, 0.8, 0.6, 0.4, 0.2])
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--background", type=float, nargs="*", default=[],
                    help="shares of the topics' common minimum to take away (coverage needs one LDA fit)")
    ap.add_argument("--cgs-iterations", type=int, default=300)
    a = ap.parse_args(argv)
    result = json.loads(Path(a.result).read_text())
    name, base = result["corpus"], result["lda"]["baseline"]
    files = sorted(Path(a.result).parent.glob(f"topics_{name}_*.npy"))
    if not files:
        print(f"no topics_{name}_*.npy beside {a.result}: run bench_utility.py with --save-topics", file=sys.stderr)
        return 2
    _, train, test = next(corpora([name], a.vocab))
    print(f"{name}: non-private LDA NPMI {base['npmi']:.4f}, diversity {base.get('diversity', float('nan')):.3f}"
          f" (top 10 {base.get('diversity_top10', float('nan')):.3f}); {len(files)} saved fits")
    K = result["n_topics"]
    for f in files:     # the words a release estimated per topic: every other column is the same in every topic
        B = np.load(f)
        B = B / B.sum(axis=1, keepdims=True)
        top = B.max(axis=0)
        n = int(np.sum(top - B.min(axis=0) > 1e-6 * top))
        print(f"{f.name}: {n} words differ between topics; top-25 diversity at most (n + 25) / (25 K) ="
              f" {min((n + 25) / (25 * K), 1.0):.3f}")
    print(f"{'ranking':22} {'NPMI ratio':>22} {'diversity':>22} {'diversity top 10':>22}")
    for lam in a.lambdas:
        rows = []
        for f in files:
            ranking = {"by": "relevance", "lambda": lam} if lam < 1 else {"by": "probability"}
            shown = type("Shown", (), {"components_": np.load(f), "word_ranking": ranking})()
            rows.append((npmi_coherence(shown, test, 10) / base["npmi"], topic_diversity(shown, 25),
                         topic_diversity(shown, 10)))
        r = np.array(rows)
        label = "probability" if lam >= 1 else f"relevance, λ = {lam:g}"
        print(f"{label:22} " + " ".join(f"{np.median(r[:, j]):8.3f} ({r[:, j].min():.3f}-{r[:, j].max():.3f})"
                                        for j in range(3)))
    if a.background:
        import warnings

        import dptopic
        from dptopic.evaluation import topic_coverage

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lda = dptopic.LDA(n_topics=result["n_topics"], n_iter=a.cgs_iterations, seed=0, verbose=0).fit(train)
        ref = (lda.components_, train.vocabulary)
        print(f"background route (coverage share of LDA run A over {base['coverage']:.3f}; ranked by probability)")
        for c in [0.0] + list(a.background):
            rows = []
            for f in files:
                B = np.load(f)
                B = np.maximum(B - c * B.min(axis=0), 0.0) + 1e-12
                B /= B.sum(axis=1, keepdims=True)
                rows.append((topic_coverage((B, train.vocabulary), ref)["coverage"] / base["coverage"],
                             npmi_coherence(B, test, 10) / base["npmi"], topic_diversity(B, 25)))
            r = np.array(rows)
            print(f"{'less ' + format(c, 'g') + ' x min':22} " + " ".join(
                f"{np.median(r[:, j]):8.3f} ({r[:, j].min():.3f}-{r[:, j].max():.3f})" for j in range(3)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
