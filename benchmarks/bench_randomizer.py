"""Contributor-side randomizer throughput: documents per second at V=1000, one core.

Corpus: the demo corpus (State of the Union paragraphs, V=1000 most frequent words), repeated to
``--docs`` documents. Compared in the same run against a plain NumPy baseline that does the same
work: presence vectors, ``rng.random((D, V)) < f/2`` flips, XOR, ``np.packbits``.
Rows: the compiled kernel (seeded xorshift128+), the secure mode (``os.urandom`` coins), the baseline.
Target: the compiled randomizer >= 100,000 documents/s.

Run:  NUMBA_NUM_THREADS=1 python benchmarks/bench_randomizer.py [--docs 200000] [--epsilon-word 3] [--repeats 5]
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np

from _common import machine, median_time, table

from dptopic.datasets import load_sotu
from dptopic.local import Randomizer, f_from_epsilon
from dptopic.local.estimation import presence_bits


def numpy_baseline(bits: np.ndarray, f: float, rng: np.random.Generator) -> np.ndarray:
    flips = rng.random(bits.shape) < f / 2
    return np.packbits(bits ^ flips, axis=1, bitorder="little")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--epsilon-word", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
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


if __name__ == "__main__":
    main()
