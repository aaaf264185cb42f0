"""``dptopic.local.estimation``."""
import math
import numpy as np


# ---------------------------------------------------------------- unbiased estimators (fixed seed)
def test_local_frequency_estimators_are_unbiased():
    from dptopic.local.estimation import moment_estimate
    from dptopic.mechanisms.frequency_oracle import subset_selection, subset_selection_counts
    from dptopic.mechanisms.randomized_response import randomized_response
    from dptopic.mechanisms.rrp import subset_frequencies, subset_report

    rng = np.random.default_rng(52)
    R = 120
    items = rng.integers(0, 7, 1000)
    ests = np.array([subset_selection_counts(subset_selection(items, 7, 1.0, rng)[0], 7, 1.0)[0] for _ in range(R)])
    z = (ests.mean(0) - np.bincount(items, minlength=7)) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)
    words = rng.integers(0, 6, 1500)
    ests = np.array([subset_frequencies(subset_report(words, 6, 1.5, rng)[0], 6, 1.5) for _ in range(R)])
    z = (ests.mean(0) - np.bincount(words, minlength=6) / words.size) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)
    docs = [rng.choice(5, size=rng.integers(0, 4), replace=False) for _ in range(500)]
    ids = np.concatenate(docs).astype(np.int32)
    ptr = np.concatenate([[0], np.cumsum([len(d) for d in docs])])
    ests = []
    for _ in range(R):
        packed, _ = randomized_response(ids, ptr, 5, 0.4, rng)
        ests.append(moment_estimate(np.unpackbits(packed, axis=1, count=5, bitorder="little").sum(0), len(docs), 0.4))
    ests = np.array(ests)
    z = (ests.mean(0) - np.bincount(ids, minlength=5)) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)
