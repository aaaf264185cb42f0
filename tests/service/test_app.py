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
