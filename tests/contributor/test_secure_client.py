"""``dptopic.contributor.secure_client``: what a pool's contributor process loads."""
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
