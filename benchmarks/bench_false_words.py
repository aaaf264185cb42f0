"""False words: the share of the words a document-level model keeps that occur in no document, when its words are
chosen by noisy counts from a long public word list, with the false-word threshold (``max_false_words``, the default)
against the rule without it (the most frequent ``n_words`` by noisy count), in the same run.

A few thousand short texts and a 50,000-word list are where the rule without a threshold fails: most of the list
never occurs, and at epsilon = 1 the noise decides which of those words look frequent. Reported per rule: words kept,
share of kept words that occur in no document, share of the non-background topics' top-10 words that occur in no
document (the words a user reads), median and runs. The private trainer runs unseeded (fresh noise each run).

    python benchmarks/bench_false_words.py                       # 5,000 State of the Union paragraphs, 3 runs
    python benchmarks/bench_false_words.py --docs 2000 --epsilon 0.5 1 4 --runs 5

The word list is wordfreq's (``pip install -e '.[wordlist]'``).
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine, table  # noqa: E402


def document_frequency(corpus) -> np.ndarray:
    df = np.zeros(corpus.vocab_size, dtype=np.int64)
    for d in range(corpus.n_docs):
        df[np.unique(corpus.word_ids[corpus.doc_ptr[d]:corpus.doc_ptr[d + 1]])] += 1
    return df


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=5000, help="State of the Union paragraphs drawn (default 5,000)")
    ap.add_argument("--words", type=int, default=50000, help="length of the public word list (default 50,000)")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0])
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="which paragraphs are drawn")
    a = ap.parse_args(argv)

    from dptopic.corpus import Corpus, general_word_list
    from dptopic.datasets import sotu_texts
    from dptopic.models import DocDPCooccurrence

    texts = sotu_texts()[0]
    pick = np.random.default_rng(a.seed).choice(len(texts), min(a.docs, len(texts)), replace=False)
    words = general_word_list("en", a.words)
    corpus = Corpus.from_texts([texts[i] for i in pick], vocabulary=words)
    df = document_frequency(corpus)
    print(f"corpus: {corpus.n_docs:,} State of the Union paragraphs, {corpus.n_tokens:,} tokens of a {len(words):,}-word"
          f" public list ({int(np.sum(df > 0)):,} of its words occur); K={a.topics}, delta=1e-5, {a.runs} runs each;"
          f" {machine()}")
    rows = []
    for eps in a.epsilon:
        for rule in (0.5, None):
            kept, share, top = [], [], []
            for _ in range(a.runs):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = DocDPCooccurrence(n_topics=a.topics, epsilon=eps, max_false_words=rule).fit(
                        corpus, vocabulary=words)
                kept.append(len(m.kept_words_))
                share.append(float(np.mean(df[m.kept_words_] == 0)))
                first = np.argsort(-m.components_[~m.background_topics_], axis=1)[:, :10]
                top.append(float(np.mean(df[first] == 0)))
            rows.append([f"{eps:g}", "max_false_words=0.5 (default)" if rule else "none (most frequent n_words)",
                         f"{np.median(kept):.0f}", f"{np.median(share):.3f}", " ".join(f"{x:.3f}" for x in share),
                         f"{np.median(top):.3f}"])
    table(rows, ["epsilon", "rule", "kept words", "kept in no document", "runs", "top-10 words in no document"])


if __name__ == "__main__":
    main()
