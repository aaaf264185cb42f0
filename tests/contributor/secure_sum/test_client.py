"""``dptopic.contributor.secure_sum.client``: one person's round over HTTP (:func:`take_part`)."""
from dptopic.contributor.secure_sum import client as secure_client


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
