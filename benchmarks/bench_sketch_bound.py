"""How well the dataset ledger's low-bit bound filters the sketches' candidate pairs (``dataset_ledger.people.
document_links``): every band's candidate pairs of a planted corpus, their agreements on the compact sketches, and how
many of them a bound on the lowest 1, 2 or 4 bits of each position lets through to be verified on the signatures. The
peer is verifying every candidate on the signatures (what the ledger did before): the bound's time is printed beside
it, as a ratio.

A bound on ``b`` bits holds ``b / 8`` of a signature's memory (16, 32 or 64 bytes a document of 128 positions); a pair
it lets through is read from disk and verified. The library uses one bit (``BOUND_BITS``; docs/research/pipeline.md,
"The record holds one bit a position").

    python benchmarks/bench_sketch_bound.py --docs 200000
    python benchmarks/bench_sketch_bound.py --corpus planted.jsonl
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import machine, table


def main(argv=None) -> None:
    from bench_pipeline import write_planted
    from dptopic.corpus.ledger_documents import documents_of
    from dptopic.corpus.readers import read_corpus
    from dptopic.dataset_ledger import people
    from dptopic.kernels.sketch_pairs import agreements, bounded_agreements, low_bits

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=200_000, help="planted documents to write (without --corpus)")
    ap.add_argument("--corpus", type=Path, help="a JSONL corpus to read instead")
    a = ap.parse_args(argv)
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        path = a.corpus
        if path is None:
            path = Path(tmp) / "planted.jsonl"
            write_planted(path, a.docs)
        docs = documents_of(read_corpus(str(path)))
    sig = np.asarray(docs.signatures)
    K = sig.shape[1]
    need = people._least_agreement(K, sig.dtype == np.uint8, people.SKETCH_THRESHOLD)
    bags = np.asarray(docs.bags, dtype=np.uint64)
    keep = np.zeros(len(bags), bool)
    keep[np.unique(bags, return_index=True)[1]] = True
    keep |= bags == 0
    four = sig & np.uint8(15)
    packed = {bits: low_bits(sig, bits=bits) for bits in (1, 2)}
    exact, bound = [], {1: [], 2: [], 4: []}
    t_exact, t_bound = 0.0, {1: 0.0, 2: 0.0}
    for lo, hi in people._band_pairs(docs.bands, keep):
        t = time.perf_counter()
        exact.append(agreements(sig, lo, hi))
        t_exact += time.perf_counter() - t
        for bits in (1, 2):
            t = time.perf_counter()
            bound[bits].append(bounded_agreements(packed[bits], K, lo, hi, bits=bits))
            t_bound[bits] += time.perf_counter() - t
        bound[4].append(agreements(four, lo, hi))
    A = np.concatenate(exact)
    print(f"{len(sig):,} documents, {len(A):,} candidate pairs (with repeats), {int((A >= need).sum()):,} reach the"
          f" threshold ({need} of {K} positions); agreements' median {np.median(A):.0f}, 99.9th percentile"
          f" {np.percentile(A, 99.9):.0f}")
    for bits in (1, 2):
        print(f"agreements on the signatures (the peer) {t_exact:.2f} s, the {bits}-bit bound {t_bound[bits]:.2f} s:"
              f" ratio {t_bound[bits] / max(t_exact, 1e-9):.2f}")
    rows = []
    for bits, parts in bound.items():
        u = np.concatenate(parts)
        assert (u >= A).all()
        passed = int((u >= need).sum())
        rows.append([bits, f"{bits * K // 8}", f"{passed:,}", f"{passed / max(1, len(u)):.4%}"])
    table(rows, ["bits", "bytes a document", "pairs let through", "share"])


if __name__ == "__main__":
    main()
