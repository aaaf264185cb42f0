"""``dptopic.contributor.secure_sum.client``: what a pool's contributor process loads, and the garbage collector's time
it counts."""
import gc

from dptopic.contributor.secure_sum import client as secure_client
from dptopic.experiments import secure_sum as experiment
from helpers import loaded_in_a_new_process
from service_helpers import StubServer


def test_a_pools_contributor_process_loads_no_model_code():
    # play_round spawns its processes on play_part: each imports play_part's module (and what it imports), so that
    # module must not reach the models (scikit-learn, two seconds of imports per process)
    assert experiment.play_part is secure_client.play_part
    assert loaded_in_a_new_process("from dptopic.contributor.secure_sum.client import play_part",
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


def test_a_step_is_waited_for_at_most_the_timeout_counted_from_the_message_that_waits_for_it(monkeypatch):
    """``take_part``'s ``timeout`` bounds each step's wait, the post-and-wait's hold included: a server whose round
    never moves on holds the message no longer than the timeout (not its own long poll of 20 s), and the long polls
    after it ask only for what is left (a clock of its own: nothing here waits)."""
    import json
    import types
    from urllib.parse import parse_qs, urlsplit

    import pytest

    from dptopic.errors import DPTopicError

    clock = [0.0]
    monkeypatch.setattr(secure_client, "time", types.SimpleNamespace(
        monotonic=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s)))
    held = []

    class Stuck:
        """A server whose round stays at its first step: each request held as long as it asks (20 s unasked)."""

        keep_alive = False

        def request(self, method, path, body=None, headers=None):
            q = parse_qs(urlsplit(path).query)
            hold = float(q["timeout"][0]) if "timeout" in q else 20.0
            held.append((method, hold))
            clock[0] += hold
            view = {"state": "keys"}
            return 200, {}, json.dumps({"ok": True, "view": view} if method == "POST" else view).encode()

        def get_json(self, path):
            return json.loads(self.request("GET", path)[2])

    class Person:
        finished, me = None, "0001"

        def registration(self):
            return {}

        def finish(self, how):
            pass

    with pytest.raises(DPTopicError, match="did not reach step 'shares' within 5 s"):
        secure_client.take_part("http://127.0.0.1:1", None, None, client=Stuck(), contributor=Person(), timeout=5,
                                poll=0.5)
    assert held[0] == ("POST", 5.0), held
    assert sum(h for _, h in held) <= 5.0, held
