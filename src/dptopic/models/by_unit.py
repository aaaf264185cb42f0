"""One call for a guarantee: the best measured trainer for a privacy unit and a budget, with its defaults.

The choice and the defaults come from public corpora (``benchmarks/bench_utility.py``; see
``docs/choosing_a_guarantee.md``), never from the user's data.
"""
from __future__ import annotations

from .._validation import Int, Real, validate_value
from ..errors import DPTopicError

# unit -> (algorithm name, how it is built from (epsilon, delta, n_topics, **kw))
UNIT_TRAINERS = {"document": "docdp-cooc", "word": "hdp"}  # docdp-cooc: NPMI ratio 0.58 at epsilon 1 on 20 Newsgroups (docs/document_dp.md)
WORD_ITERATIONS = 50   # as measured for the utility table (benchmarks/bench_utility.py): HDPLDA needs epsilon > 500


def for_unit(unit: str, epsilon: float, delta: float = 1e-5, n_topics: int = 20, **kw):
    """An unfitted estimator whose whole run is (epsilon, delta)-DP for one ``unit`` ("document": one document added
    or removed; "word": one token's word replaced), the best trainer measured for that unit, with its defaults."""
    # a document-level budget above 500 protects nothing; a word-level one is per word and starts in the hundreds
    validate_value("epsilon", epsilon, [Real(0, 500 if unit != "word" else 1e7, "right")])
    validate_value("delta", delta, [Real(0, 1, "neither")])
    validate_value("n_topics", n_topics, [Int(1, 100_000)])
    if unit not in UNIT_TRAINERS:
        raise DPTopicError(f"invalid unit {unit!r}: give 'document' (one document added or removed) or 'word' (one"
                           " token's word replaced); for local DP see dptopic.local.")
    from . import ALGORITHMS

    cls = ALGORITHMS[UNIT_TRAINERS[unit]]
    if unit == "word":
        return cls.from_budget(epsilon, delta, kw.pop("n_iter", WORD_ITERATIONS), n_topics=n_topics, **kw)
    return cls.from_budget(epsilon, delta, n_topics=n_topics, **kw)
