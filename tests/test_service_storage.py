"""Storage layer and CLI of the service without a server: migrations, settings binding, group commit
outcomes, the version-guarded training commit, and one-line CLI errors."""
from __future__ import annotations

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import insert  # noqa: E402

from dptopic.cli.main import main  # noqa: E402
from dptopic.service import ServiceConfig  # noqa: E402
from dptopic.service.storage import SCHEMA_VERSION, Storage, StorageError, Submission, schema_table  # noqa: E402

from service_helpers import free_port, make_data  # noqa: E402


@pytest.fixture
def storage(tmp_path):
    st = Storage(f"sqlite:///{tmp_path / 's.db'}")
    yield st
    st.close()


def test_migrations_are_recorded_and_a_newer_schema_is_refused(tmp_path, storage):
    with storage.read() as c:
        versions = [r.version for r in c.execute(schema_table.select().order_by(schema_table.c.version))]
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert Storage(storage.url).schema_version() == SCHEMA_VERSION  # re-opening applies nothing twice
    with storage.write() as c:
        c.execute(insert(schema_table).values(version=SCHEMA_VERSION + 1, description="future", applied_at=0.0))
    with pytest.raises(StorageError, match="newer than this dptopic supports"):
        Storage(storage.url)


def test_settings_are_bound_on_first_start(storage):
    storage.bind_settings({"vocabulary_sha256": "abc", "f": 0.2})
    storage.bind_settings({"vocabulary_sha256": "abc", "f": 0.2})
    with pytest.raises(StorageError, match="same --vocabulary"):
        storage.bind_settings({"vocabulary_sha256": "abc", "f": 0.3})


def test_other_report_kind_is_refused_as_such_not_by_its_f(tmp_path):
    """Real settings of each kind: the kind differs first, f then differs only as its consequence."""
    from dptopic.service.app import Service
    words, _ = make_data(tmp_path, vocab_size=30, n_docs=5, n_prior=5)
    url = f"sqlite:///{tmp_path / 'k.db'}"
    word = Service(ServiceConfig(words, 0.2, database=url), start_trainer=False)
    doc = Service(ServiceConfig(words, None, database=url, report_kind="document", epsilon_doc=6.0),
                  start_trainer=False)
    word.preflight()
    with pytest.raises(StorageError) as e:
        doc.preflight()
    msg = str(e.value)
    assert "holds word-level reports" in msg and "document-level" in msg and "f=" not in msg and "\n" not in msg
    url2 = f"sqlite:///{tmp_path / 'k2.db'}"
    doc.cfg.database = word.cfg.database = url2
    doc.preflight()
    with pytest.raises(StorageError, match="holds document-level reports but the server was started for word-level"):
        word.preflight()


def test_group_commit_outcomes_in_one_transaction(storage):
    a = Submission("key-aaaaaaaa", "h1", "p", [b"\x01", b"\x02"])
    out = storage.store([a, Submission("key-aaaaaaaa", "h1", "p", [b"\x01", b"\x02"]),
                         Submission("key-aaaaaaaa", "h2", "p", [b"\x03"]), Submission("key-bbbbbbbb", "h3", None, [b"\x04"])])
    assert [o for o, _ in out] == ["stored", "replayed", "conflict", "stored"]
    assert storage.count_reports() == 3
    assert [p for _, p in storage.fetch_reports(0, 10)] == [b"\x01", b"\x02", b"\x04"]


def test_training_commit_is_guarded_by_the_model_version(storage):
    storage.store([Submission("key-cccccccc", "h", None, [b"\x00"] * 5)])
    m = storage.active_model()
    assert storage.commit_batch(m["id"], m["version"], 1, 3, 3, None, None, "skipped", "test", 0.0)
    # a second writer holding the old version (or an old cursor) changes nothing
    assert not storage.commit_batch(m["id"], m["version"], 1, 3, 3, None, None, "skipped", "again", 0.0)
    assert not storage.commit_batch(m["id"], m["version"] + 1, 2, 3, 2, None, None, "skipped", "back", 0.0)
    m2 = storage.active_model()
    assert (m2["version"], m2["last_report_id"], m2["n_reports_used"]) == (m["version"] + 1, 3, 3)
    assert len(storage.batches()) == 1
    info = storage.rotate("test")
    assert info["starts_after_report"] == 3 and storage.active_model()["last_report_id"] == 3


def test_config_refuses_a_short_admin_token():
    with pytest.raises(Exception, match="shorter than 16"):
        ServiceConfig(["a", "b"], 0.2, admin_token="short")


@pytest.mark.parametrize("key, value", [("fed_pad_length", 10**11), ("fed_topics", 10**6), ("train_interval", 1e300),
                                        ("n_iter", 10**9), ("fed_report_words", 10**10)])
def test_config_bounds_what_would_exhaust_memory_or_timers(key, value):
    with pytest.raises(Exception, match=f"invalid {key}"):
        ServiceConfig(["a", "b"], 0.2, **{key: value})


def test_cli_errors_are_one_line(tmp_path, capsys):
    make_data(tmp_path)
    args = ["serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--host", "0.0.0.0"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "--allow-remote" in err
    port = free_port()  # nothing listens there
    assert main(["submit", "--server", f"http://127.0.0.1:{port}", "--corpus", str(tmp_path / "docs.txt"),
                 "--retries", "0", "--timeout", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "running" in err
    # FedLDA parameters with which an update would carry no entry: refused at start-up, before any database
    db = tmp_path / "never.db"
    assert main(["serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--database",
                 f"sqlite:///{db}", "--fed-epsilon-per-entry", "5", "--fed-pad-length", "10", "--fed-sample-ratio",
                 "0.0001"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "--fed-pad-length 10 is too small" in err
    assert not db.exists()


def test_writer_acknowledges_each_request_after_its_commit_with_one_loop_call_per_transaction(storage):
    """Requests wait on asyncio futures; each is resolved only once the transaction holding it committed, and a
    transaction wakes the event loop once, not once per request. A failed commit fails every request it held."""
    import asyncio
    import threading

    from dptopic.service.ingest import GroupCommitWriter

    committed, gate = set(), threading.Event()

    class GatedStorage:
        fail = False

        def store(self, batch):
            gate.wait(10)  # let the requests pile up behind the first transaction
            if self.fail:
                raise RuntimeError("disk full")
            out = storage.store(batch)
            committed.update(s.idempotency_key for s in batch)
            return out

    async def run(fail):
        loop = asyncio.get_running_loop()
        calls = []
        real = loop.call_soon_threadsafe
        loop.call_soon_threadsafe = lambda *a, **k: (calls.append(a[0]), real(*a, **k))[1]
        backend = GatedStorage()
        backend.fail = fail
        writer = GroupCommitWriter(backend).start()
        try:
            subs = [Submission(f"{'f' if fail else 'k'}-key-{i:04d}", f"{i:064x}", None, [bytes([i])]) for i in range(20)]
            futs = [writer.submit_async(s) for s in subs]

            async def acked(sub, fut):
                outcome, ack = await fut
                assert sub.idempotency_key in committed  # the commit came first
                return outcome

            waits = [asyncio.ensure_future(acked(s, f)) for s, f in zip(subs, futs)]
            await asyncio.sleep(0.05)
            gate.set()
            results = await asyncio.gather(*waits, return_exceptions=True)
            return results, len(calls), writer.transactions
        finally:
            writer.stop()
            gate.clear()

    results, calls, transactions = asyncio.run(run(False))
    assert results == ["stored"] * 20 and 1 <= transactions < 20 and calls == transactions
    results, calls, _ = asyncio.run(run(True))
    assert all(isinstance(r, RuntimeError) and str(r) == "disk full" for r in results) and 1 <= calls < 20
    with storage.read() as c:
        from dptopic.service.storage import submissions
        assert {r.idempotency_key for r in c.execute(submissions.select())} >= {f"k-key-{i:04d}" for i in range(20)}


def test_fed_report_words_refuse_an_alphabetical_vocabulary():
    """The first N words must be the most common: an alphabetical --vocabulary would keep those that sort first."""
    words = [f"{c}{d}" for c in "abcdefgh" for d in "xyz"]                  # 24 words in alphabetical order
    with pytest.raises(Exception, match="--vocabulary is in alphabetical order"):
        ServiceConfig(words, 0.2, fed_epsilon_per_entry=5.0, fed_topics=2, fed_report_words=10)
    ServiceConfig(words[::-1], 0.2, fed_epsilon_per_entry=5.0, fed_topics=2, fed_report_words=10)    # another order: taken
    ServiceConfig(words, 0.2, fed_epsilon_per_entry=5.0, fed_topics=2)                # every word: the order does not matter
