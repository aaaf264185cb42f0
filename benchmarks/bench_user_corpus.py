"""The user unit's vectors route on a real labelled corpus: ``DocDPCooccurrence(unit="user")`` with
``vectors_route="spread"`` against ``"groups"``, people built from the documents of one of ``bench_utility.py``'s
labelled corpora (20 Newsgroups, the State of the Union, ...), measured by its protocol on the documents.

People (``--people``): ``one``, one document a person; ``same``, ``--docs-per-person`` documents a person from one
label (newsgroup, or president for the State of the Union), the label's documents shuffled and cut in turn; ``mixed``,
the same count from random labels (all documents shuffled and cut: a person of several subjects). The fit is at
epsilon per person; non-private LDA, the coverage share, the accuracy share and the supported topics are
``bench_utility.py``'s, on the documents (LDA run A seed 0, runs B seeds 1..n; the shares over their medians). Run
``r`` fits both routes with the seed ``r`` (paired: the same first release and words, the same noise seeds).

    python benchmarks/bench_user_corpus.py --corpus 20newsgroups --people one same mixed --runs 3 --epsilon 1
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common  # noqa: E402,F401 - this run's own ledger and state folders
import dptopic  # noqa: E402
from bench_utility import CORPORA, DELTA, VECTORS, corpora, measure, shares  # noqa: E402

PEOPLE = ("one", "same", "mixed")
SIGNAL = {}
"""The last fit's first-release signal, ``presence / (175 sigma)``, as ``choose_route`` reads it."""


def _recording(choose):
    def choose_route(route, presence, sigma, unit="document"):
        SIGNAL["signal"] = presence / (175.0 * float(sigma))
        return choose(route, presence, sigma, unit)
    return choose_route

ROUTES = ("spread", "groups")


def person_ids(labels, how: str, per_person: int, seed: int = 0) -> list[str]:
    """Each document's person: one a document (``one``), ``per_person`` documents of one label (``same``), or of
    labels drawn at random (``mixed``)."""
    labels = np.asarray(labels)
    n = len(labels)
    if how == "one":
        return [f"p{i}" for i in range(n)]
    rng = np.random.default_rng(seed)
    ids = np.empty(n, dtype=object)
    if how == "mixed":
        order = rng.permutation(n)
        for k, i in enumerate(order):
            ids[i] = f"p{k // per_person}"
        return list(ids)
    for lab in np.unique(labels):
        docs = rng.permutation(np.flatnonzero(labels == lab))
        for k, i in enumerate(docs):
            ids[i] = f"{lab}-{k // per_person}"
    return list(ids)


def lda_reference(train, test, a, cache: Path):
    """LDA run A (the reference model) and the baseline medians, cached on disk by corpus and settings."""
    key = cache / f"lda_{a.corpus}_V{a.vocab}_K{a.topics}_n{a.lda_runs}_it{a.cgs_iterations}"
    if key.with_suffix(".json").is_file():
        base = json.loads(key.with_suffix(".json").read_text())
        ref = np.load(key.with_suffix(".npy"))
        from bench_utility import FixedTopics
        return FixedTopics(ref, train.vocabulary), base

    def lda(seed):
        return dptopic.LDA(n_topics=a.topics, n_iter=a.cgs_iterations, seed=seed, verbose=0)

    reference = lda(0)
    run_a = measure(reference, train, test, perplexity=False)
    runs_b = [measure(lda(s), train, test, reference, perplexity=False) for s in range(1, a.lda_runs + 1)]
    base = {k: float(np.median([run_a[k]] + [r[k] for r in runs_b])) for k in ("accuracy", "macro_f1", "npmi")}
    base["coverage"] = float(np.median([r["coverage"] for r in runs_b]))
    cache.mkdir(parents=True, exist_ok=True)
    np.save(key.with_suffix(".npy"), np.asarray(reference.components_))
    key.with_suffix(".json").write_text(json.dumps(base))
    return reference, base


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="20newsgroups", choices=CORPORA)
    ap.add_argument("--people", nargs="+", default=list(PEOPLE), choices=PEOPLE)
    ap.add_argument("--docs-per-person", type=int, default=3)
    ap.add_argument("--routes", nargs="+", default=list(ROUTES), choices=ROUTES)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--first-run", type=int, default=0)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--lda-runs", type=int, default=3, help="LDA runs B (seeds 1..n) beside run A")
    ap.add_argument("--cgs-iterations", type=int, default=300)
    ap.add_argument("--cache", default="runs/bench_user_corpus", help="folder for LDA's reference and the results")
    a = ap.parse_args(argv)
    import dptopic.models.docdp_cooc as fit_module
    fit_module.choose_route = _recording(fit_module.choose_route)
    cache = Path(a.cache)
    name, train, test = next(corpora([a.corpus], a.vocab))
    t0 = time.perf_counter()
    reference, base = lda_reference(train, test, a, cache)
    print(f"== {name}: {train.n_docs} documents, V={train.vocab_size}, K={a.topics}, epsilon {a.epsilon:g} per person;"
          f" LDA accuracy {base['accuracy']:.3f}, coverage of A by B {base['coverage']:.3f}"
          f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    out = {"corpus": name, "epsilon": a.epsilon, "base": base, "rows": {}}
    last = a.first_run + a.runs - 1
    path = cache / f"user_corpus_{name}_d{a.docs_per_person}_eps{a.epsilon:g}_runs{a.first_run}-{last}.json"
    print(f"{'people':7} {'persons':>7} {'route':7} {'run':>3} {'cover.':>6} {'acc.':>6} {'supp.':>5} {'npmi r.':>7}"
          f" {'div.':>5} {'signal':>6} {'s':>5}")
    for how in a.people:
        ids = person_ids(train.labels, how, a.docs_per_person)
        n_people = len(set(ids))
        for run in range(a.first_run, a.first_run + a.runs):
            for route in a.routes:
                model = dptopic.DocDPCooccurrence.from_budget(
                    a.epsilon, DELTA, n_topics=a.topics, unit="user", public_vectors=VECTORS, vectors_route=route,
                    seed=run)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    model.fit(train, user_ids=ids)
                    secs = time.perf_counter() - t
                r = shares([measure(model, train, test, reference, perplexity=False, fitted=True)], base)[0]
                r.update(seconds=secs, run=run, persons=n_people, signal=SIGNAL.get("signal"),
                         route_taken=(model.public_vectors_ or {}).get("route"))
                r.pop("top_words", None)
                out["rows"].setdefault(f"{how}/{route}", []).append(r)
                print(f"{how:7} {n_people:7d} {route:7} {run:3d} {r['coverage_share']:6.3f} {r['accuracy_share']:6.3f}"
                      f" {r.get('supported', -1):5d} {r.get('npmi_ratio', float('nan')):7.2f}"
                      f" {r.get('diversity', float('nan')):5.2f} {r['signal'] or 0:6.0f} {secs:5.0f}", flush=True)
                path.write_text(json.dumps(out, indent=1))
    print("\nmean ± s.e. over runs; groups − spread paired by run")
    for how in a.people:
        rs = {route: out["rows"].get(f"{how}/{route}", []) for route in a.routes}
        for key in ("coverage_share", "accuracy_share", "supported", "npmi_ratio", "diversity"):
            cells = []
            for route in a.routes:
                v = np.array([r.get(key, np.nan) for r in rs[route]], float)
                cells.append(f"{route} {v.mean():.3f} ± {v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0:.3f}")
            if set(ROUTES) <= set(a.routes):
                d = np.array([g.get(key, np.nan) - s.get(key, np.nan) for g, s in zip(rs["groups"], rs["spread"])])
                se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else 0.0
                cells.append(f"groups − spread {d.mean():+.3f} ± {se:.3f}")
            print(f"{how:7} {key:15} " + " | ".join(cells))
    print(f"written: {path}; wall {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
