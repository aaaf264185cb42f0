"""Issue 79's document-level targets by budget: reads ``bench_utility.py``'s ``utility_<corpus>.json`` files (measured
with ``--trainers docdp-cooc docdp-cooc-vectors``) and draws, per corpus, the coverage share, the downstream accuracy
share and the count of supported topics against epsilon, with and without the public vectors, beside the floor of the
vectors alone and the target lines; prints each target's conditions at each epsilon measured and the smallest epsilon
at which all of them hold (docs/research/public_vectors.md, "The targets by budget").

    python benchmarks/plot_vector_targets.py runs/curve79/ten/utility_*.json \\
        --out docs/img/vector_targets_by_epsilon.png

The targets (medians of the runs, each read at two decimals as the research log reports them):

* 20 Newsgroups (the whole training split): coverage share >= 0.75 and accuracy share >= 0.80 at once, with vectors;
* 20 Newsgroups' first 5,000 posts and the election tweets: with vectors, accuracy share >= the vectors-alone floor's
  + 0.05, coverage share >= the model without vectors' at the same epsilon, and >= 8 of 20 topics supported.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

WITH, WITHOUT, FLOOR = "docdp-cooc-vectors", "docdp-cooc", "public-vectors"
SPREAD = "docdp-cooc-vectors-spread"
"""The spread route forced (an option), drawn and reported beside the default where a file has its rows."""
BOTH = ("20newsgroups",)
"""The corpora whose target is coverage and accuracy at once (the others': floor + 0.05, paired coverage, support)."""
COVERAGE_AT, ACCURACY_AT, FLOOR_MARGIN, SUPPORTED_AT = 0.75, 0.80, 0.05, 8
ORDER = ("20newsgroups", "20newsgroups-5000", "election-tweets")


def rows_by_epsilon(result, trainer) -> dict:
    """The trainer's rows of one corpus's result, by epsilon; each with the supported count's min and max over runs."""
    out = {}
    for r in result["trainers"].get(trainer, {}).get("rows", []):
        supported = [run["supported"] for run in r["runs"] if "supported" in run]
        out[float(r["epsilon"])] = {**r, "supported_min": min(supported, default=r.get("supported", 0)),
                                    "supported_max": max(supported, default=r.get("supported", 0))}
    return out


def routes(row) -> str:
    """The routes ``vectors_route="auto"`` took in the row's runs (``spread``, ``groups x2, spread``; ``-`` where the
    runs did not record it)."""
    taken = [run.get("route") for run in row.get("runs", []) if run.get("route")]
    if not taken:
        return "-"
    return ", ".join(r if taken.count(r) == 1 or len(set(taken)) == 1 else f"{r} x{taken.count(r)}"
                     for r in sorted(set(taken), key=taken.index))


def difference(withv, without):
    """The coverage shares' difference of the runs' means and its standard error (the runs are independent fits), or
    None where either row lacks two runs' shares."""
    a = [run["coverage_share"] for run in withv.get("runs", []) if "coverage_share" in run]
    b = [run["coverage_share"] for run in without.get("runs", []) if "coverage_share" in run]
    if len(a) < 2 or len(b) < 2:
        return None
    return statistics.mean(a) - statistics.mean(b), math.sqrt(statistics.variance(a) / len(a)
                                                              + statistics.variance(b) / len(b))


def conditions(result, trainer=WITH) -> list:
    """Per epsilon measured with vectors (``trainer``'s rows): (epsilon, {condition: (met, text)}); the paired
    coverage condition adds a third item, whether it holds within 2 standard errors (as the first without runs)."""
    corpus = result["corpus"]
    floor = round(result["floors"][FLOOR]["accuracy_share"], 2)
    withv, without = rows_by_epsilon(result, trainer), rows_by_epsilon(result, WITHOUT)
    out = []
    for eps, r in sorted(withv.items()):
        cov, acc, sup = round(r["coverage_share"], 2), round(r["accuracy_share"], 2), r.get("supported", 0)
        if corpus in BOTH:
            conds = {"coverage": (cov >= COVERAGE_AT, f"{cov:.2f} (>= {COVERAGE_AT:.2f})"),
                     "accuracy": (acc >= ACCURACY_AT, f"{acc:.2f} (>= {ACCURACY_AT:.2f})")}
        else:
            plain = without.get(eps)
            base = round(plain["coverage_share"], 2) if plain else None
            diff = difference(r, plain) if plain else None
            conds = {"accuracy": (acc >= floor + FLOOR_MARGIN - 1e-9, f"{acc:.2f} (>= {floor + FLOOR_MARGIN:.2f})"),
                     "coverage": (base is not None and cov >= base,
                                  f"{cov:.2f} (>= {base:.2f}" + (f"; {diff[0]:+.3f} +- {diff[1]:.3f}" if diff else "")
                                  + ")" if base is not None else f"{cov:.2f} (unpaired)",
                                  diff[0] >= -2 * diff[1] if diff else base is not None and cov >= base),
                     "supported": (sup >= SUPPORTED_AT, f"{sup:.0f} (>= {SUPPORTED_AT})")}
        out.append((eps, conds))
    return out


def report(results) -> str:
    """Markdown: per corpus and epsilon, each condition's figure against its line, and the smallest epsilon meeting
    the whole target (or that none measured does)."""
    lines = []
    for result, trainer in ((r, t) for r in results for t in (WITH, SPREAD)):
        conds = conditions(result, trainer)
        if not conds:
            continue
        names = list(conds[0][1])
        withv = rows_by_epsilon(result, trainer)
        n = len(withv[conds[0][0]]["runs"])
        lines.append(f"{result['corpus']}, {trainer} ({n} runs; floor of the vectors alone: accuracy share"
                     f" {result['floors'][FLOOR]['accuracy_share']:.2f})\n")
        lines.append("| epsilon | route | " + " | ".join(names) + " | target |")
        lines.append("|---|---|" + "---|" * (len(names) + 1))
        for eps, c in conds:
            lines.append(f"| {eps:g} | {routes(withv[eps])} | "
                         + " | ".join(("met: " if c[n][0] else "not met: ") + c[n][1] for n in names)
                         + f" | {'met' if all(v[0] for v in c.values()) else 'not met'} |")
        met = [eps for eps, c in conds if all(v[0] for v in c.values())]
        top = max(e for e, _ in conds)
        lines.append("\nsmallest epsilon measured meeting the target: "
                     + (f"{min(met):g}" if met else f"none up to {top:g}"))
        if any(len(v) > 2 for c in conds for v in c[1].values()):
            # the paired coverage condition read as "not lower beyond the noise": the difference of the runs' means
            # no more than 2 standard errors below 0
            tie = [eps for eps, c in conds if all(v[-1] if len(v) > 2 else v[0] for v in c.values())]
            lines.append("with the coverage condition read as no lower than 2 standard errors below the model without"
                         " vectors: " + (f"{min(tie):g}" if tie else f"none up to {top:g}"))
        lines.append("")
    return "\n".join(lines)


def plot(results, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(3, len(results), figsize=(4.2 * len(results), 9.0), squeeze=False, sharex=True)
    ticks = sorted({e for result in results for e in rows_by_epsilon(result, WITH)})
    runs = sorted({len(r["runs"]) for result in results for r in rows_by_epsilon(result, WITH).values()})
    for col, result in enumerate(results):
        corpus = result["corpus"]
        floor = result["floors"].get(FLOOR, {})
        for row, (key, label) in enumerate((("coverage_share", "coverage share"),
                                            ("accuracy_share", "accuracy share"),
                                            ("supported", "topics supported (of 20)"))):
            ax = axes[row][col]
            for trainer, style, name in ((WITHOUT, "s--", "without vectors (docdp-cooc)"),
                                         (WITH, "o-", "with GloVe 6B 50d (default)"),
                                         (SPREAD, "^:", "with GloVe, spread route forced")):
                rs = rows_by_epsilon(result, trainer)
                eps = sorted(rs)
                if not eps:
                    continue
                mid = [rs[e].get(key, 0) for e in eps]
                lo = [m - rs[e].get(f"{key}_min", m) for e, m in zip(eps, mid)]
                hi = [rs[e].get(f"{key}_max", m) - m for e, m in zip(eps, mid)]
                ax.errorbar(eps, mid, yerr=[lo, hi], fmt=style, capsize=3, label=name)
            if key in floor:
                ax.axhline(floor[key], color="grey", ls="-.", lw=1, label="vectors alone (floor)")
            if corpus in BOTH and key != "supported":
                ax.axhline(COVERAGE_AT if key == "coverage_share" else ACCURACY_AT, color="red", ls=":", lw=1.2,
                           label="target")
            elif corpus not in BOTH and key == "accuracy_share" and key in floor:
                ax.axhline(round(floor[key], 2) + FLOOR_MARGIN, color="red", ls=":", lw=1.2,
                           label="target: floor + 0.05")
            elif corpus not in BOTH and key == "supported":
                ax.axhline(SUPPORTED_AT, color="red", ls=":", lw=1.2, label=f"target: {SUPPORTED_AT} supported")
            elif corpus not in BOTH and key == "coverage_share":
                ax.plot([], [], color="red", ls=":", label="target: at least without vectors")
            ax.set_xscale("log")
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xticks(ticks, labels=[f"{e:g}" for e in ticks])
            if key == "supported":
                ax.set_ylim(-0.5, 20.5)
                ax.set_xlabel("epsilon per document")
            if col == 0:
                ax.set_ylabel(label)
            if row == 0:
                ax.set_title(f"{corpus} ({result['n_docs']:,} documents)", fontsize=10)
            ax.legend(fontsize=6, loc="lower right")
    fig.suptitle(f"Issue 79's targets by budget: medians of {'/'.join(map(str, runs))} runs, bars min to max"
                 " (K = 20, V = 2,000)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=72)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+", help="bench_utility.py's utility_<corpus>.json files")
    ap.add_argument("--out", default=None, help="write the figure here (PNG)")
    a = ap.parse_args(argv)
    results = [json.loads(Path(f).read_text()) for f in a.json]
    results = sorted((r for r in results if r["corpus"] in ORDER), key=lambda r: ORDER.index(r["corpus"]))
    print(report(results))
    if a.out:
        plot(results, a.out)
        print(f"written: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
