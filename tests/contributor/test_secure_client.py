"""``dptopic.contributor.secure_client``: what a pool's contributor process loads, and the garbage collector's time
it counts."""
import gc

from dptopic.contributor import secure_client
from dptopic.experiments import secure_sum as experiment
from helpers import loaded_in_a_new_process
from service_helpers import StubServer


def test_a_pools_contributor_process_loads_no_model_code():
    # play_round spawns its processes on play_part: each imports play_part's module (and what it imports), so that
    # module must not reach the models (scikit-learn, two seconds of imports per process)
    assert experiment.play_part is secure_client.play_part
    assert loaded_in_a_new_process("from dptopic.contributor.secure_client import play_part",
                                   ("sklearn", "dptopic.models", "dptopic.experiments")) == []


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


def test_each_sending_thread_keeps_its_own_connection_for_all_its_requests():
    """A pool process's threads each keep one HTTP/1.1 connection open (as one contributor's ``submit`` does), not one
    connection a request: the server sees as many connections as threads, however many requests each sends."""
    import threading

    with StubServer(lambda request: (200, {"ok": True}), keep_alive=True) as server:
        client = secure_client.CountingClient(server.url, 4)
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
    player = secure_client.PartPlayer(3, told, threads=2, keep_going=True)
    seats = [(0, None), (1, None), (2, None)]
    assert player._each(seats, send) == 2 and player.failed == {1: "the server lied to person 1"}
    assert player._each(seats, lambda i, c: True) == 2      # person 1 takes no further part
    assert told.get_nowait() == ("sent", 2)
    out = player.close([])
    assert out["failed"] == {"1": "the server lied to person 1"} and out["cpu"] == out["up"] == [0.0] * 3
    single = secure_client.PartPlayer(3, queue.Queue(), threads=2)
    with pytest.raises(DPTopicError, match="the server lied"):
        single._each(seats, send)
    single.close([])
