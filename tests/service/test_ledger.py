"""Served releases on the dataset ledger (dptopic.service.ledger): a batch of local reports, a FedLDA round and a
secure-sum round, each charged to the contributors it covers, so that a person's total spans central and served
releases (issue 78, item 8)."""
from __future__ import annotations

import hashlib
import math
import secrets

import numpy as np
import pytest

from dptopic.accounting import PureDPEvent
from dptopic.contributor.document_randomizer import DocumentRandomizer
from dptopic.dataset_ledger.identity import Documents
from dptopic.dataset_ledger.ledger import DatasetLedger
from service_helpers import make_words

WORDS = make_words(50)


def _docs(n_docs):
    from dptopic.corpus import lda_corpus

    c = lda_corpus(n_docs=n_docs, vocab_size=len(WORDS), n_topics=3, doc_length=20, seed=1).corpus
    return [[WORDS[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]] for d in range(c.n_docs)]


def _service(tmp_path, ledger):
    from dptopic.service.app import Service
    from dptopic.service.config import ServiceConfig

    cfg = ServiceConfig(WORDS, None, database=f"sqlite:///{tmp_path / 't.db'}", report_kind="document",
                        epsilon_doc=2.0, batch_size=50, n_topics=3, train_interval=0, ledger=str(ledger))
    svc = Service(cfg, start_trainer=False)
    svc.open()
    return svc


def _upload(svc, docs, contributor):
    from dptopic.protocol import codec as protocol_codec
    from dptopic.service import codec
    from dptopic.service.storage import Submission

    body = protocol_codec.encode_reports(DocumentRandomizer(WORDS, 2.0).randomize(docs))
    rows = codec.report_rows(svc.kind.decode(body, svc.cfg, svc.fingerprint))
    svc.storage.store([Submission(secrets.token_hex(8), hashlib.sha256(body).hexdigest(), contributor, rows)])


@pytest.mark.filterwarnings("ignore")
def test_a_batch_of_reports_is_charged_to_its_contributors_and_joins_their_documents(tmp_path):
    L = tmp_path / "l.sqlite"
    led = DatasetLedger(L)
    # a central release that held alice's and carol's documents (their person field names them as the server does)
    led.debit("central", "DocDPCooccurrence", "user", [(PureDPEvent(1.0), 1)], 1e-5,
              documents=Documents(np.arange(1, 5, dtype=np.uint64), ["alice", "alice", "carol", "carol"]))
    svc = _service(tmp_path, L)
    try:
        docs = _docs(50)
        _upload(svc, docs[:30], "alice")
        _upload(svc, docs[30:45], "bob")
        _upload(svc, docs[45:], None)
        assert svc.trainer.step()["status"] == "trained"
    finally:
        svc.close()
    served = [r for d in led.datasets() for r in led.releases(d) if r["kind"] == "served"]
    assert len(served) == 1 and served[0]["unit"] == "document" and served[0]["epsilon"] == pytest.approx(2.0, rel=1e-4)
    alice = led.person_total("alice")
    assert {"release": served[0]["id"], "group": 30} in alice["releases"]
    assert {"release": 1, "group": 1} in alice["releases"]
    assert alice["epsilon"] == pytest.approx(30 * 2.0 + 1.0, rel=1e-4)   # 30 reports, then the central release
    assert led.person_total("bob")["epsilon"] == pytest.approx(15 * 2.0, rel=1e-4)
    assert led.person_total("carol")["epsilon"] == pytest.approx(1.0, rel=1e-4)
    assert led.person_summary()["persons"] == 4        # alice, bob, carol and the anonymous upload


@pytest.mark.filterwarnings("ignore")
def test_a_batch_a_cap_refuses_is_skipped_and_the_model_never_reads_it(tmp_path):
    L = tmp_path / "l.sqlite"
    DatasetLedger(L).set_person_cap(20.0, 1e-5)
    svc = _service(tmp_path, L)
    try:
        _upload(svc, _docs(50), "alice")                   # 50 reports of 2: 100 for alice
        done = svc.trainer.step()
        assert done["status"] == "skipped" and done["note"].startswith("refused by the dataset ledger: every person")
        assert not svc.storage.active_model()["meta_json"]
    finally:
        svc.close()
    assert [d for d in DatasetLedger(L).datasets()] == []


def test_a_closed_fedlda_round_is_charged_to_its_clients_once_per_randomization(tmp_path):
    from dptopic.accounting.fedlda import rrp_event
    from dptopic.service import codec
    from dptopic.service.config import ServiceConfig
    from dptopic.service.ledger import charge_fed_round

    L = tmp_path / "l.sqlite"
    cfg = ServiceConfig(WORDS, 0.5, fed_epsilon_per_entry=3.0, fed_topics=2, fed_pad_length=8, ledger=str(L))
    rrp = codec.fed_config(cfg)
    rid = charge_fed_round(cfg, rrp, 0, {"c1": 1, "c2": 1})
    charge_fed_round(cfg, rrp, 1, {"c1": 2, "c3": 1})       # c1's entries were randomized once: nothing more
    led = DatasetLedger(L)
    event = rrp_event(3.0, rrp.failure_rate, rrp.gamma, rrp.variant, rrp.exclusion, vocab_size=len(WORDS))
    for c in ("c1", "c2", "c3"):
        got = led.person_total(c)
        assert len(got["releases"]) == 1 and got["epsilon"] == pytest.approx(rrp.n_entries * event.epsilon, rel=1e-6)
    (first,) = [r for d in led.datasets() for r in led.releases(d) if r["id"] == rid]
    assert first["unit"] == "user" and first["kind"] == "served"


def test_a_service_logs_a_round_the_ledger_cannot_record_and_stays_up(tmp_path, caplog):
    from dptopic.service.app import Service
    from dptopic.service.config import ServiceConfig

    bad = tmp_path / "bad.sqlite"
    cfg = ServiceConfig(WORDS, 0.5, database=f"sqlite:///{tmp_path / 't.db'}", fed_epsilon_per_entry=3.0,
                        fed_topics=2, fed_pad_length=8, train_interval=0, ledger=str(bad))
    svc = Service(cfg, start_trainer=False)
    svc.open()
    try:
        bad.write_bytes(b"not a ledger" * 50)
        svc.storage.fed_round_participation = lambda r: {"c1": 1}
        svc.charge_fed_round(0)
    finally:
        svc.close()
    assert "could not be recorded" in caplog.text and "nothing was spent" in caplog.text


@pytest.mark.service
def test_a_released_secure_sum_round_is_charged_to_its_contributors(tmp_path):
    from service_helpers import SecureSumServer

    L = tmp_path / "l.sqlite"
    words = [f"word{i:02d}" for i in range(40)]
    with SecureSumServer(tmp_path, words, n=6, dropouts=2, ledger=L) as live:
        out = live.play(tmp_path)
        assert all(isinstance(o, dict) for o in out), out
        assert live.wait_state("released", "failed")["state"] == "released"
    led = DatasetLedger(L)
    (name,) = led.datasets()
    (r,) = led.releases(name)
    assert r["kind"] == "served" and r["unit"] == "user" and name.startswith("people:")
    summary = led.person_summary()
    assert summary["persons"] == 6 and math.isfinite(summary["largest"]["epsilon"])
    assert summary["largest"]["epsilon"] <= 8.0 * (1 + 1e-6)
