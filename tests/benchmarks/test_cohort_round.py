"""benchmarks/_cohort_round.py: a round in cohorts run by worker processes (the cohorts' servers and people spawned
out, the bridge and coordinator here) releases exactly the plain sum of what its survivors' rounding and noise give."""
import numpy as np
from tests.cohort_helpers import WORDS, simulation_class, tiny_bows

from dptopic.accounting.skellam import rounded_norms
from dptopic.contributor.secure_sum.person_statistics import person_cooccurrence, person_presence, quantize
from dptopic.mechanisms.skellam import skellam_share
from dptopic.models.secure_sum import released_words
from dptopic.protocol.secure_sum import cohorts as co


def plain_sums(plan, groups, bows, seed, dropped, topics):
    """Each survivor's quantized statistic plus its noise share, drawn as its contributor draws them (its cohort's
    stream, then a seed per person in member order), summed in the clear; step 1 over the words step 0's sum keeps."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from _cohort_round import cohort_streams

    bound = lambda d: rounded_norms(plan.scale, d)[0]  # noqa: E731
    people = []
    for c, stream in enumerate(cohort_streams(seed, len(groups))):
        coins = np.random.default_rng(stream)
        for i in groups[c]:
            rng = np.random.default_rng(coins.integers(2**63))
            if i not in dropped:
                people.append((bows[i], rng))
    s0 = 0
    for bow, rng in people:
        x = person_presence(bow, len(WORDS))
        s0 = s0 + skellam_share(quantize(x, plan.scale, bound(len(x)), rng), plan.mu_shares[0], plan.scale, rng)[0]
    kept = released_words(plan.round_plan, s0, len(people), topics)[0]
    s1 = 0
    for bow, rng in people:
        x = person_cooccurrence(bow, kept, len(WORDS))
        s1 = s1 + skellam_share(quantize(x, plan.scale, bound(len(x)), rng), plan.mu_shares[1], plan.scale, rng)[0]
    return s0, s1, len(people)


def test_worker_processes_release_the_plain_sum_of_the_survivors_shares(tmp_path):
    plan = co.CohortPlan(8.0, 1e-5, 40, 4, len(WORDS), 20, collusion=1)
    bows = tiny_bows(40)
    sim = simulation_class()(tmp_path, plan, bows, WORDS, seed=4, workers=2)
    assert sim.servers and not any(sim.people)             # every cohort's people live in the workers
    drop = {sim.delegates[0][0], next(i for i in sim.groups[1] if i not in sim.delegates[1])}
    assert sim.run(drop0=drop) == "released"
    from dptopic.protocol.secure_sum.enrollment import contributor_ids

    s0, s1, shares = plain_sums(plan, sim.groups, dict(zip(contributor_ids(40), bows)), 4, drop, 3)
    co_ = sim.coordinator
    assert np.array_equal(co_.sums[0], s0) and np.array_equal(co_.sums[1], s1)
    assert co_.shares == {0: shares, 1: shares} == {0: 38, 1: 38}
    assert co_.model_doc is not None and sim.bridge.model_doc() == co_.model_doc
    # each worker reports its CPU, peak memory and wall time, and is gone
    assert [p["process"] for p in sim.processes] == ["worker 0", "worker 1"]
    assert all(p["cpu_s"] > 0 and p["peak_rss_bytes"] > 0 and p["wall_s"] > 0 for p in sim.processes)
    assert not sim._procs and set(sim.server_report["timings"]) == {-1, 0, 1}
