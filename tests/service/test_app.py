"""The collection service's app in this process (``dptopic.service.app``): what start-up leaves to the garbage collector, and a
trainer step whose read of the store fails."""
from __future__ import annotations

import pytest

from dptopic.contributor.document_randomizer import DocumentRandomizer
from service_helpers import make_words


def test_start_up_objects_are_frozen_out_of_the_collector(tmp_path):
    """Full collections under load would otherwise scan every object the start-up left (imports, vocabulary, prior
    model): pauses of 100-250 ms for every request in flight on a 2-core machine (benchmarks/bench_service.py)."""
    import asyncio
    import gc

    from dptopic.service import ServiceConfig, create_app

    cfg = ServiceConfig(make_words(50), 0.2, database=f"sqlite:///{tmp_path / 'gc.db'}")

    async def frozen_while_serving(app):
        async with app.router.lifespan_context(app):
            return gc.get_freeze_count()

    gc.unfreeze()
    try:
        assert asyncio.run(frozen_while_serving(create_app(cfg, start_trainer=False))) > 1000
        gc.unfreeze()
        assert asyncio.run(frozen_while_serving(create_app(cfg, start_trainer=False, freeze_gc=False))) == 0
    finally:
        gc.unfreeze()


def _planted_docs(words, n_docs=200):
    from dptopic.corpus import lda_corpus

    c = lda_corpus(n_docs=n_docs, vocab_size=len(words), n_topics=3, doc_length=20, seed=1).corpus
    return [[words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]] for d in range(c.n_docs)]


@pytest.mark.filterwarnings("ignore")
def test_a_failed_store_read_leaves_the_batch_untrained_not_logged_as_skipped(tmp_path):
    import hashlib
    import secrets

    from dptopic.protocol import codec as protocol_codec
    from dptopic.service import ServiceConfig, codec
    from dptopic.service.app import Service
    from dptopic.service.storage import StorageError, Submission
    from service_helpers import make_words

    words = make_words(50)
    docs = _planted_docs(words, 100)
    cfg = ServiceConfig(words, None, database=f"sqlite:///{tmp_path / 't.db'}", report_kind="document",
                        epsilon_doc=8.0, batch_size=50)
    svc = Service(cfg, start_trainer=False)
    svc.open()
    rz = DocumentRandomizer(words, 8.0)
    for i in range(2):
        body = protocol_codec.encode_reports(rz.randomize(docs[i * 50:(i + 1) * 50]))
        rows = codec.report_rows(svc.kind.decode(body, cfg, svc.fingerprint))
        svc.storage.store([Submission(secrets.token_hex(8), hashlib.sha256(body).hexdigest(), f"c{i}", rows)])
    real, calls = svc.storage.max_reports_per_contributor, []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise StorageError("database error: connection reset (simulated)")
        return real()

    svc.storage.max_reports_per_contributor = flaky
    with pytest.raises(StorageError):
        svc.trainer.step()
    assert svc.trainer.step()["status"] == "trained" and svc.trainer.step()["status"] == "trained"
    assert [b["status"] for b in svc.storage.batches()] == ["trained", "trained"]
    row, arrays = svc.storage.active_model_with_arrays()
    assert codec.model_from_blobs(row["meta_json"], arrays).n_reports_ == 100


def _request(names=None, **cfg):
    """What the app's answers read of a request: the service's settings and the names its starter gave them."""
    from types import SimpleNamespace

    state = SimpleNamespace(service=SimpleNamespace(cfg=SimpleNamespace(**cfg)))
    if names is not None:
        state.setting_names = names
    return SimpleNamespace(app=SimpleNamespace(state=state), headers={})


def test_an_answer_names_the_servers_setting_in_the_names_of_whoever_started_it():
    """A server started from Python (ServiceConfig) answers in its fields; one started by 'dptopic serve' in the flags
    that set them (create_app's setting_names)."""
    from dptopic.cli.serve import SERVE_FLAGS
    from dptopic.service.app import ApiError, _fed_disabled, require_admin

    with pytest.raises(ApiError) as e:
        require_admin(_request(admin_token=None))
    assert e.value.status == 403 and "started without admin_token" in e.value.message
    with pytest.raises(ApiError) as e:
        require_admin(_request(SERVE_FLAGS, admin_token=None))
    assert "started without --token-file" in e.value.message and "admin_token" not in e.value.message
    assert _fed_disabled(_request()).message.endswith("(start it with fed_epsilon_per_entry).")
    assert _fed_disabled(_request(SERVE_FLAGS)).message.endswith("(start it with --fed-epsilon-per-entry).")


def test_an_upload_is_answered_before_starlettes_middleware_and_router(tmp_path):
    """``POST /v1/reports``, the request every contributor sends, is answered by the upload endpoint itself: Starlette
    never builds its middleware stack for it (its middleware, router and response objects were a fifth of the event
    loop's work per single-report upload). The answers are the route's: 201 with the JSON acknowledgement, 200 and
    ``Idempotent-Replayed`` for a retry, and a refusal in the app's JSON error; other requests take Starlette's
    path (a GET of the upload route is its 405)."""
    import asyncio
    import json

    from dptopic.contributor.randomizer import Randomizer
    from dptopic.protocol import codec as protocol_codec
    from dptopic.service import ServiceConfig, create_app

    words = make_words(40)
    body = protocol_codec.encode_reports(Randomizer(words, epsilon_word=2.0).randomize([words[:5], words[5:9]]))
    cfg = ServiceConfig(words, Randomizer(words, epsilon_word=2.0).f, database=f"sqlite:///{tmp_path / 'u.db'}")
    app = create_app(cfg, start_trainer=False, freeze_gc=False)

    async def call(method, headers, data=b""):
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
                 "path": "/v1/reports", "raw_path": b"/v1/reports", "query_string": b"", "root_path": "",
                 "headers": [(k.encode(), v.encode()) for k, v in headers.items()], "client": ("127.0.0.1", 1),
                 "server": ("127.0.0.1", 2)}
        messages, sent = [], []

        async def receive():
            if not sent:
                sent.append(1)
                return {"type": "http.request", "body": data, "more_body": False}
            await asyncio.sleep(60)

        async def send(message):
            messages.append(message)

        await app(scope, receive, send)
        head = {k.decode(): v.decode() for k, v in messages[0]["headers"]}
        return messages[0]["status"], head, json.loads(b"".join(m.get("body", b"") for m in messages[1:]))

    async def session():
        async with app.router.lifespan_context(app):
            upload = {"content-type": "application/octet-stream", "idempotency-key": "upload-key-0001",
                      "content-length": str(len(body))}
            first = await call("POST", upload, body)
            again = await call("POST", upload, body)
            refused = await call("POST", {"content-type": "application/octet-stream"}, body)
            built = app.middleware_stack
            wrong_method = await call("GET", {})
        return first, again, refused, built, wrong_method

    first, again, refused, built, wrong_method = asyncio.run(session())
    assert first[0] == 201 and first[1]["content-type"] == "application/json"
    assert first[2]["reports"] == 2 and first[2]["replayed"] is False
    assert int(first[1]["content-length"]) == len(json.dumps(first[2], separators=(",", ":")))
    assert again[0] == 200 and again[1]["idempotent-replayed"] == "true" and again[2]["replayed"] is True
    assert refused[0] == 400 and refused[2]["error"]["code"] == "missing_idempotency_key"
    assert built is None                                    # three uploads, no middleware stack
    assert wrong_method[0] == 405 and wrong_method[2]["error"]["code"] == "method_not_allowed"


def test_the_bodies_idle_timeouts_share_one_timer_and_each_read_times_out_on_its_own():
    """``BodyTimeouts``: every body read on a loop has its idle timeout on one timer, armed once for many reads (a
    timer per request was armed and cancelled on every upload); a read is cancelled once its own ``idle`` passes
    without a touch, whatever the others do, and a closed one never is."""
    import asyncio

    from dptopic.service.app import BodyTimeouts

    async def main():
        loop = asyncio.get_running_loop()
        timeouts = BodyTimeouts(loop)
        armed, real = [], loop.call_at
        loop.call_at = lambda when, callback, *a, **kw: (armed.append(when) if callback == timeouts._due else None,
                                                         real(when, callback, *a, **kw))[1]

        async def read(idle: float, touches: int):
            r = timeouts.start(idle)
            try:
                for _ in range(touches):
                    await asyncio.sleep(idle / 2)
                    r.touch()
                last = loop.time()
                await asyncio.sleep(30)
                return None
            except asyncio.CancelledError:
                assert r.expired()
                return loop.time() - last
            finally:
                r.close()

        quiet = [timeouts.start(60.0) for _ in range(50)]      # reads that end well before their timeout
        assert len(armed) == 1
        for r in quiet:
            r.close()
        waited = await asyncio.gather(read(0.6, 0), read(0.2, 0), read(0.4, 3))
        for idle, w in zip((0.6, 0.2, 0.4), waited):
            assert w is not None and idle <= w + 1e-3 < idle + 2.0, (idle, w)
        assert len(armed) < 10
        r = timeouts.start(0.1)
        r.close()
        await asyncio.sleep(0.3)                # a closed read is not cancelled: this task goes on
        assert not r.expired()

    asyncio.run(main())


def test_the_collection_server_answers_deep_json_unknown_routes_and_methods_in_its_json_shape(tmp_path):
    """The collection server answers 3,000 nested brackets in every admin route's JSON body with a 400 ``bad_json``
    in one line, an unknown route with a 404 naming it, and a method a route does not take with a 405 naming the
    methods it takes (its Allow header too), all in the API's JSON error shape."""
    import json

    from dptopic.contributor.randomizer import Randomizer
    from dptopic.service import ServiceConfig
    from service_helpers import InProcessServer, http

    words = make_words(40)
    token = "t" * 24
    cfg = ServiceConfig(words, Randomizer(words, epsilon_word=2.0).f, database=f"sqlite:///{tmp_path / 'u.db'}",
                        admin_token=token)
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with InProcessServer(cfg) as srv:
        for path in ("/v1/admin/train", "/v1/admin/rotate"):
            status, headers, data = http("POST", srv.url + path, b"[" * 3000 + b"]" * 3000, auth)
            err = json.loads(data)["error"]
            assert status == 400 and headers["content-type"] == "application/json" and err["code"] == "bad_json"
            assert "nests" in err["message"], (path, err)
        status, headers, data = http("GET", srv.url + "/v1/no-such-route")
        assert status == 404 and headers["content-type"] == "application/json"
        assert json.loads(data)["error"]["code"] == "not_found" and "/v1/no-such-route" in data.decode()
        status, headers, data = http("DELETE", srv.url + "/v1/config")
        err = json.loads(data)["error"]
        assert status == 405 and err["code"] == "method_not_allowed" and "GET" in headers["allow"]
        assert "/v1/config" in err["message"] and "DELETE" in err["message"] and "GET" in err["message"]
