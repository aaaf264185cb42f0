"""Contributor-side randomizer throughput: documents per second at V=1000, one core.

Corpus: the demo corpus (State of the Union paragraphs, V=1000 most frequent words), repeated to
``--docs`` documents. Compared in the same run against a plain NumPy baseline that does the same
work: presence vectors, ``rng.random((D, V)) < f/2`` flips, XOR, ``np.packbits``.
Rows: the compiled kernel (seeded xorshift128+), the secure mode (``os.urandom`` coins), the baseline.
Target: the compiled randomizer >= 100,000 documents/s.

Then end to end, as a contributor runs it: ``dptopic randomize`` (read, tokenise, randomize, write) against
``dptopic corpus prepare`` (read, tokenise, write) on the same text file, each a fresh process, median of
``--repeats``; the ratio should stay within 1.25. The file: the 20 Newsgroups training texts (11,293 documents,
16 MB) when the data is installed (``make data``), else the demo paragraphs; vocabulary: its 2,000 most frequent
words.

Run:  NUMBA_NUM_THREADS=1 python benchmarks/bench_randomizer.py [--docs 200000] [--epsilon-word 3] [--repeats 5]
Smoke run (seconds):  bench_randomizer.py --docs 5000 --repeats 1
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np

from _common import machine, median_time, table
from dptopic.accounting.local import f_from_epsilon
from dptopic.contributor.randomizer import Randomizer
from dptopic.datasets import load_sotu
from dptopic.protocol.estimation import presence_bits


def numpy_baseline(bits: np.ndarray, f: float, rng: np.random.Generator) -> np.ndarray:
    flips = rng.random(bits.shape) < f / 2
    return np.packbits(bits ^ flips, axis=1, bitorder="little")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--epsilon-word", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    base = load_sotu(max_vocab=1000)
    reps = -(-a.docs // base.n_docs)
    corpus = base.subset(np.tile(np.arange(base.n_docs), reps)[:a.docs])
    f = f_from_epsilon(a.epsilon_word)
    print(f"machine: {machine()}")
    print(f"corpus: demo (sotu) repeated to {corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size};"
          f" eps_word={a.epsilon_word} (f={f:.4g}); median of {a.repeats} runs\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = Randomizer.for_simulation(corpus.vocabulary, f=f, seed=1)
    secure = Randomizer(corpus.vocabulary, f=f, secure=True)
    fast.randomize(corpus.subset(range(10)))  # compile
    t_fast = median_time(lambda: fast.randomize(corpus), a.repeats)
    t_secure = median_time(lambda: secure.randomize(corpus), max(1, a.repeats // 2))
    rng = np.random.default_rng(1)
    t_np = median_time(lambda: numpy_baseline(presence_bits(corpus), f, rng), max(1, a.repeats // 2))
    D = corpus.n_docs
    rows = [("dptopic Randomizer (compiled)", f"{D / t_fast:,.0f}", f"{t_np / t_fast:.1f}x"),
            ("dptopic Randomizer secure=True (os.urandom)", f"{D / t_secure:,.0f}", f"{t_np / t_secure:.1f}x"),
            ("NumPy rng.random(...) < p + packbits", f"{D / t_np:,.0f}", "1.0x")]
    table(rows, ("randomizer", "documents/s", "vs NumPy"))
    print(f"\ntarget >= 100,000 documents/s: {'met' if D / t_fast >= 1e5 else 'NOT met'}")
    end_to_end(a.repeats)


def end_to_end(repeats: int) -> None:
    import subprocess
    import sys
    import tempfile
    import time
    from pathlib import Path

    from dptopic.datasets import newsgroups_texts
    from dptopic.errors import DPTopicError
    tmp = Path(tempfile.mkdtemp(prefix="dptopic-bench-"))
    try:
        texts, _ = newsgroups_texts("train")
        name = "20 Newsgroups train"
    except (DPTopicError, OSError):
        from dptopic.datasets import sotu_texts
        texts = sotu_texts()[0]
        name = "demo paragraphs"
    (tmp / "docs.txt").write_text("\n".join(" ".join(t.split()) for t in texts))
    from dptopic.corpus import Corpus
    vocab = Corpus.from_texts(texts[:3000], max_vocab=2000).vocabulary.words
    (tmp / "vocab.txt").write_text("\n".join(vocab))
    src = str(Path(__file__).resolve().parents[1] / "src")
    cmds = {"corpus prepare": ["corpus", "prepare", "--corpus", "docs.txt", "--out", "c.npz", "--overwrite"],
            "randomize": ["randomize", "--vocabulary", "vocab.txt", "--epsilon-word", "2", "--corpus", "docs.txt",
                          "--out", "r.bin", "--overwrite"]}
    times = {k: [] for k in cmds}
    for _ in range(repeats):
        for k, c in cmds.items():
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "dptopic", *c], cwd=tmp, check=True, capture_output=True,
                           env={**__import__("os").environ, "PYTHONPATH": src})
            times[k].append(time.perf_counter() - t)
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"\nend to end on {name} ({len(texts):,} documents, V=2000), median of {repeats} fresh processes:")
    table([(k, f"{v:.2f}") for k, v in med.items()], ("command", "seconds"))
    ratio = med["randomize"] / med["corpus prepare"]
    print(f"randomize / corpus prepare = {ratio:.2f} (target <= 1.25: {'met' if ratio <= 1.25 else 'NOT met'})")


if __name__ == "__main__":
    main()
