"""``experiments.secure_sum_players``: what a pool's contributor process loads, the garbage collector's time it
counts, its connections, a person that fails, and where its people's coins come from."""
import gc

import numpy as np
import pytest

from dptopic.experiments import secure_sum as experiment
from dptopic.experiments import secure_sum_players as players
from helpers import loaded_in_a_new_process
from service_helpers import InProcessRound, StubServer, record_noise_draws

pytest.importorskip("cryptography")


def test_a_pools_contributor_process_loads_no_model_code():
    # play_round spawns its processes on play_part: each imports play_part's module (and what it imports, the
    # experiments package's __init__ too), so that module must not reach the models (scikit-learn, two seconds of
    # imports per process)
    assert experiment.play_part is players.play_part
    assert loaded_in_a_new_process("from dptopic.experiments.secure_sum_players import play_part",
                                   ("sklearn", "dptopic.models", "dptopic.experiments.secure_sum",
                                    "dptopic.experiments.fedlda")) == []


def test_the_collectors_runs_and_cpu_are_counted_by_generation_until_closed():
    counter = players.CollectorTime()
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


def test_each_sending_thread_keeps_its_own_connection_for_all_its_requests():
    """A pool process's threads each keep one HTTP/1.1 connection open (as one contributor's ``submit`` does), not one
    connection a request: the server sees as many connections as threads, however many requests each sends."""
    import threading

    with StubServer(lambda request: (200, {"ok": True}), keep_alive=True) as server:
        client = players.CountingClient(server.url, 4)
        seen = []

        def send(i):
            client.who = i
            for _ in range(5):
                assert client.get_json("/v1/anything") == {"ok": True}
            seen.append(id(client._conn))
            client.close()

        threads = [threading.Thread(target=send, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(seen)) == 3                      # one connection each, not shared between threads
        assert len(server.connections) == 3             # 15 requests on 3 connections
        assert client.requests[:3].tolist() == [5, 5, 5]
        assert client._conn is None                     # this thread never sent: it holds none


def test_a_pools_person_whose_message_fails_stops_alone_in_a_round_in_cohorts_and_ends_a_single_rounds_part():
    import queue

    import pytest

    from dptopic.errors import DPTopicError

    def send(i, c):
        if i == 1:
            raise DPTopicError("the server lied\nto person 1")
        return True

    told = queue.Queue()
    player = players.PartPlayer(3, told, threads=2, keep_going=True)
    seats = [(0, None), (1, None), (2, None)]
    assert player._each(seats, send) == 2 and player.failed == {1: "the server lied to person 1"}
    assert player._each(seats, lambda i, c: True) == 2      # person 1 takes no further part
    assert told.get_nowait() == ("sent", 2)
    out = player.close([])
    assert out["failed"] == {"1": "the server lied to person 1"} and out["cpu"] == out["up"] == [0.0] * 3
    single = players.PartPlayer(3, queue.Queue(), threads=2)
    with pytest.raises(DPTopicError, match="the server lied"):
        single._each(seats, send)
    single.close([])


@pytest.mark.parametrize("committee", [False, True])
def test_a_pools_people_draw_their_rounding_and_noise_from_the_csprng_whatever_the_seed(tmp_path, monkeypatch,
                                                                                         committee):
    """The experiment's seed chooses who drops out; each person a pool's process plays (either mode) is built with no
    Generator, so its rounding and noise shares come from the OS CSPRNG: two people built from the same documents
    and invitation mask different noise."""
    from dptopic.mechanisms.skellam import SecureUniform

    calls = record_noise_draws(monkeypatch)
    if committee:
        from committee_helpers import InProcessCommitteeRound

        rnd = InProcessCommitteeRound(tmp_path, n=10)
        config, bows = rnd.config, [c.bow for c in rnd.people]
    else:
        rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
        config, bows = rnd.config_doc(), rnd.bows
    twice = players.build_people(config, bows[:1] * 2, rnd.invitations[:1] * 2, committee=committee)
    assert [type(p).COMMITTEE for p in twice] == [committee, committee]
    assert all(isinstance(p._coins(), SecureUniform) for p in twice)
    x = twice[0].statistic(0)
    a, b = (p._share(0, x) for p in twice)
    assert calls == [(None, True), (None, True)]
    assert not np.array_equal(a, b)          # a Generator seeded alike would have masked the same noise
