"""``experiments.secure_sum.play_round``: a secure-sum round over HTTP played from a pool of contributor processes,
with its costs counted where they are made."""
import inspect

import numpy as np
import pytest

pytest.importorskip("cryptography")


def _bows(n, vocab, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        ids = np.sort(rng.choice(vocab, 6, replace=False)).astype("int64")
        out.append((np.array([0, 6], "int64"), ids, np.ones(6, "int64")))
    return out


def test_a_round_is_played_from_several_processes_and_its_costs_are_counted(tmp_path):
    from dptopic.experiments.secure_sum import play_round
    from service_helpers import SecureSumServer

    words = [f"w{i:02d}" for i in range(30)]
    with SecureSumServer(tmp_path, words, n=8, dropouts=2) as srv:
        s = play_round([srv.url], _bows(8, 30), srv.invitations, 0.25, srv.TOKEN, seed=1, workers=2, verbose=0)
        assert s["state"] == "released", s["reason"]
        status, model = srv.call("GET", "/v1/model")
        assert status == 200
    assert s["workers"] == 2 and s["people"] == 8 and s["dropped"] == 2
    # every contributor's own messages: keys, shares, then per step an upload, a signature and perhaps an answer
    assert 2 <= s["requests_per_contributor"] <= 8
    assert s["bytes_per_contributor"] > s["upload_bytes_max"] > 0
    assert s["bytes_down_per_contributor"] > 0 and s["cpu_per_contributor_s"] > 0
    # each contributor process froze what lives as long as its part (its imports at least) out of the collector's
    # full scans once its people were built, and counts the collector's CPU
    assert s["collector_frozen"] > 10_000
    assert s["collector_cpu_per_contributor_s"] >= 0 and len(s["collector_runs"]) == 3
    # the server (here this test's own process) reports its CPU seconds and peak memory
    proc = s["server_process"]
    assert proc["processes"] == 1 and proc["cpu_s"] > 0 and proc["peak_rss_bytes"] > 10 * 2 ** 20


def test_the_dropouts_come_from_the_seed_and_every_contributor_from_the_csprng():
    """The seed chooses who drops out (the only random choice of the experiment); the contributors are built with
    no Generator, so their rounding and noise come from the OS CSPRNG."""
    from dptopic.contributor.secure_client import play_part  # what each contributor process runs

    src = inspect.getsource(play_part)
    assert "SecureContributor(cfg, b, inv)" in src and "rng" not in src


def test_bad_settings_are_refused_before_any_process_starts():
    from dptopic.errors import ParameterError
    from dptopic.experiments.secure_sum import play_round

    bows = _bows(4, 30)
    with pytest.raises(ParameterError, match="invitation"):
        play_round(["http://127.0.0.1:9"], bows, [{}] * 3, 0.0, None, verbose=0)
    with pytest.raises(ParameterError, match="workers"):
        play_round(["http://127.0.0.1:9"], bows, [{}] * 4, 0.0, None, workers=0, verbose=0)
    with pytest.raises(ParameterError, match="token"):
        play_round(["http://127.0.0.1:9"], bows, [{}] * 4, 0.5, None, verbose=0)


def test_the_default_dropout_is_a_tenth_in_a_single_round_and_none_in_a_round_in_cohorts():
    from dptopic.errors import ParameterError
    from dptopic.experiments.secure_sum import experiment_dropout

    assert experiment_dropout(None, cohorts=False) == 0.1 and experiment_dropout(None, cohorts=True) == 0.0
    assert experiment_dropout(0.25, cohorts=False) == 0.25 and experiment_dropout(0.0, cohorts=True) == 0.0
    with pytest.raises(ParameterError, match="without dropouts only; give 0"):
        experiment_dropout(0.1, cohorts=True)
