"""``dptopic.contributor.secure_client``: what a pool's contributor process loads, and the garbage collector's time
it counts."""
import gc
import subprocess
import sys

from dptopic.contributor import secure_client
from dptopic.experiments import secure_sum as experiment


def test_a_pools_contributor_process_loads_no_model_code():
    # play_round spawns its processes on play_part: each imports play_part's module (and what it imports), so that
    # module must not reach the models (scikit-learn, two seconds of imports per process)
    assert experiment.play_part is secure_client.play_part
    code = ("import sys; from dptopic.contributor.secure_client import play_part; "
            "print(sorted(m for m in ('sklearn', 'dptopic.models', 'dptopic.experiments') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_collectors_runs_and_cpu_are_counted_by_generation_until_closed():
    counter = secure_client.CollectorTime()
    try:
        junk = []
        for _ in range(2000):        # cycles: the collector has work to do
            a = []
            a.append(a)
            junk.append(a)
        del junk, a
        gc.collect()
        gc.collect(0)
        s = counter.summary()
        assert s["runs"][2] >= 1 and s["runs"][0] >= 1
        assert all(t >= 0 for t in s["seconds"]) and s["seconds"][2] > 0
    finally:
        counter.close()
    assert counter._callback not in gc.callbacks
    before = list(counter.runs)
    gc.collect()
    assert counter.runs == before
