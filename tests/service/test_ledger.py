"""Served releases on the dataset ledger (dptopic.service.ledger): a batch of local reports, a FedLDA round and a
secure-sum round, each charged to the contributors it covers, so that a person's total spans central and served
releases (issue 78, item 8)."""
from __future__ import annotations

import hashlib
import json
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


# ----------------------------------------------------------------------------- the people of the central releases
PEOPLE = ["ana@example.org", "bo@example.org", "cy@example.org", "di@example.org", "ed@example.org",
          "fay@example.org"]


def _central(L, people=PEOPLE, eps: float = 1.0):
    """A central user-level release of ``eps`` that held one document of each of ``people``."""
    DatasetLedger(L).debit("central", "DocDPCooccurrence", "user", [(PureDPEvent(eps), 1)], 1e-5,
                           documents=Documents(np.arange(1, len(people) + 1, dtype=np.uint64), list(people)))


def _served(L) -> list:
    led = DatasetLedger(L)
    return [r for d in led.datasets() for r in led.releases(d) if r["kind"] == "served"]


@pytest.mark.filterwarnings("ignore")
def test_reports_sent_under_a_persons_collection_pseudonym_are_charged_to_that_person(tmp_path):
    from dptopic.dataset_ledger.pseudonyms import COLLECTION

    L = tmp_path / "l.sqlite"
    _central(L)
    led = DatasetLedger(L)
    mine = led.pseudonyms([PEOPLE[0]], COLLECTION)[0]
    of_a_round = led.pseudonyms([PEOPLE[0]], "round1")[0]      # another route's: a person of its own here
    svc = _service(tmp_path, L)
    try:
        docs = _docs(50)
        _upload(svc, docs[:25], mine)
        _upload(svc, docs[25:], of_a_round)
        assert svc.trainer.step()["status"] == "trained"
    finally:
        svc.close()
    assert led.person_total(PEOPLE[0])["epsilon"] == pytest.approx(1.0 + 25 * 2.0, rel=1e-4)
    assert led.person_summary()["persons"] == len(PEOPLE) + 1


def test_a_fedlda_client_under_its_persons_collection_pseudonym_is_charged_to_that_person(tmp_path):
    from dptopic.dataset_ledger.pseudonyms import COLLECTION
    from dptopic.service import codec
    from dptopic.service.config import ServiceConfig
    from dptopic.service.ledger import charge_fed_round

    L = tmp_path / "l.sqlite"
    _central(L)
    led = DatasetLedger(L)
    cfg = ServiceConfig(WORDS, 0.5, fed_epsilon_per_entry=3.0, fed_topics=2, fed_pad_length=8, ledger=str(L))
    rid = charge_fed_round(cfg, codec.fed_config(cfg), 0, {p: 1 for p in led.pseudonyms(PEOPLE[:2], COLLECTION)})
    for p in PEOPLE[:2]:
        assert {r["release"] for r in led.person_total(p)["releases"]} == {1, rid}
    assert led.person_summary()["persons"] == len(PEOPLE)


@pytest.mark.service
def test_a_secure_sum_round_whose_invitations_name_people_is_charged_to_them_over_http(tmp_path):
    from service_helpers import SecureSumServer

    L = tmp_path / "l.sqlite"
    _central(L)
    words = [f"word{i:02d}" for i in range(40)]
    with SecureSumServer(tmp_path, words, dropouts=1, ledger=L, ids=PEOPLE) as live:
        assert not any(p in json.dumps(live.directory) for p in PEOPLE)     # what the server reads names no one
        out = live.play(tmp_path)
        assert all(isinstance(o, dict) for o in out), out
        assert live.wait_state("released", "failed")["state"] == "released"
    (served,) = _served(L)
    led = DatasetLedger(L)
    for p in PEOPLE:
        assert {r["release"] for r in led.person_total(p)["releases"]} == {1, served["id"]}, p
    assert led.person_summary()["persons"] == len(PEOPLE)     # no number of an invitation is a person


def test_a_committee_round_whose_invitations_name_people_is_charged_to_them(tmp_path):
    from committee_helpers import InProcessCommitteeRound
    from dptopic.service.secure_sum.committee import CommitteeRound

    L = tmp_path / "l.sqlite"
    people = [f"p{i}@example.org" for i in range(8)]
    _central(L, people)
    rnd = InProcessCommitteeRound(tmp_path, n=8, dropouts=1, collusion=1, ids=people, ledger=L)
    rnd.server = CommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, ledger=str(L), ledger_dataset="clinic")
    rnd.prekeys()
    rnd.open()
    assert rnd.run_from_open()["state"] == "released"
    (r,) = DatasetLedger(L).releases("clinic")
    assert all(len(DatasetLedger(L).person_total(p)["releases"]) == 2 for p in people)
    assert r["unit"] == "user" and DatasetLedger(L).person_summary()["persons"] == 8


@pytest.mark.service
@pytest.mark.filterwarnings("ignore")
def test_a_round_in_cohorts_whose_invitations_name_people_is_charged_to_them(tmp_path):
    from cohort_helpers import LiveCohortRound, play_all, tiny_bows

    L = tmp_path / "l.sqlite"
    people = [f"p{i:02d}@example.org" for i in range(24)]
    _central(L, people)
    with LiveCohortRound(tmp_path, 24, 12, ledger=L, dataset="clinic", ids=people) as live:
        out = play_all(live.url, live.files, tiny_bows(24), tmp_path)
        assert all(isinstance(o, dict) for o in out), [o for o in out if not isinstance(o, dict)]
        assert live.server.view()["state"] == "released"
    assert all(len(DatasetLedger(L).person_total(p)["releases"]) == 2 for p in people)
    assert DatasetLedger(L).person_summary()["persons"] == 24


def test_a_round_named_by_another_ledgers_pseudonyms_or_served_without_one_is_refused(tmp_path):
    from dptopic.errors import DPTopicError, ParameterError
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.service.ledger import charge_secure_round, check_round_people

    make_invitations(tmp_path / "k", None, tmp_path / "inv", round_id="r1", collusion=1, ids=PEOPLE,
                     ledger=tmp_path / "theirs.sqlite")
    directory = read_directory(tmp_path / "inv" / "directory.json")
    assert check_round_people(directory, str(tmp_path / "theirs.sqlite")) == len(PEOPLE)
    mine = tmp_path / "mine.sqlite"
    with pytest.raises(ParameterError, match="did not make for this round"):
        check_round_people(directory, str(mine))
    with pytest.raises(ParameterError, match="give ledger"):
        check_round_people(directory, None)
    plan = SecureSumPlan(8.0, 1e-5, len(PEOPLE), 1, 40, 1)
    with pytest.raises(DPTopicError, match="refuses the round.*did not make"):
        charge_secure_round(str(mine), None, plan, sorted(directory["members"]), directory)
    assert _served(mine) == [] and _served(tmp_path / "theirs.sqlite") == []
