"""The service's trainer (``dptopic.service.trainer``): each mini-batch goes through the library's steps for a batch
(``dptopic.training.train_batch``), so the card the server saves and serves is the one ``dptopic.train`` writes for the
same trainer, budget and reports."""
from __future__ import annotations

import hashlib
import json
import secrets

import pytest

import dptopic
from dptopic.contributor.document_randomizer import DocumentRandomizer
from dptopic.contributor.randomizer import Randomizer
from service_helpers import make_words, service_config

WORDS = make_words(50)


def _docs(n_docs):
    from dptopic.corpus import lda_corpus

    c = lda_corpus(n_docs=n_docs, vocab_size=len(WORDS), n_topics=3, doc_length=20, seed=1).corpus
    return [[WORDS[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]] for d in range(c.n_docs)]


def _service(kind, tmp_path):
    from dptopic.service.app import Service
    from dptopic.service.config import ServiceConfig

    database = f"sqlite:///{tmp_path / 't.db'}"
    if kind == "word":
        cfg = service_config(WORDS, database, batch_size=50, n_iter=3)
        rz = Randomizer(WORDS, f=cfg.f, secure=True)
    else:
        cfg = ServiceConfig(WORDS, None, database=database, report_kind="document", epsilon_doc=8.0, batch_size=50,
                            n_topics=3, train_interval=0)
        rz = DocumentRandomizer(WORDS, 8.0)
    svc = Service(cfg, start_trainer=False)
    svc.open()
    return svc, rz


def _upload(svc, rz, docs, contributor):
    from dptopic.protocol import codec as protocol_codec
    from dptopic.service import codec
    from dptopic.service.storage import Submission

    body = protocol_codec.encode_reports(rz.randomize(docs))
    rows = codec.report_rows(svc.kind.decode(body, svc.cfg, svc.fingerprint))
    svc.storage.store([Submission(secrets.token_hex(8), hashlib.sha256(body).hexdigest(), contributor, rows)])


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", ["word", "document"])
def test_the_card_the_server_saves_and_serves_is_the_one_dptopic_train_writes(kind, tmp_path):
    """One batch of 50 reports, 30 of them from one contributor: the stored model's card (and /v1/model's) equals
    the card dptopic.train saves for the same reports, trainer and budget, stated for 30 reports a contributor."""
    from dptopic.service import codec
    from dptopic.service.app import public_model

    svc, rz = _service(kind, tmp_path)
    try:
        docs = _docs(50)
        _upload(svc, rz, docs[:30], "alice")
        _upload(svc, rz, docs[30:], "bob")
        assert svc.trainer.step()["status"] == "trained"
        row, arrays = svc.storage.active_model_with_arrays()
        saved = json.loads(row["meta_json"])["privacy_card"]
        served = json.loads(public_model(row["meta_json"], arrays)[0])["privacy_card"]
        stored = [payload for _, payload in svc.storage.fetch_reports(0, 50)]
        reports = svc.kind.from_rows(stored, svc.cfg)
        cfg = svc.cfg
    finally:
        svc.close()
    params = (dict(prior_corpus="none", n_topics=3, n_iter=3, batch_size=50, delta=cfg.delta, verbose=0)
              if kind == "word" else dict(n_topics=3))
    algorithm = "olp" if kind == "word" else "ldp-doc"
    whole = dptopic.train(reports, algorithm=algorithm, vocabulary=WORDS, reports_per_contributor=30,
                          out=str(tmp_path / "library"), **params)
    library = json.loads((tmp_path / "library" / "model.json").read_text())["privacy_card"]
    assert saved == served == library
    assert {k: v for k, v in saved.items() if k != "ledger_check"} == whole.card
    assert codec.model_from_blobs(row["meta_json"], arrays).privacy_["reports_per_contributor"] == 30


@pytest.mark.filterwarnings("ignore")
def test_a_batch_the_library_refuses_is_skipped_and_saves_no_model(tmp_path, monkeypatch):
    """A refusal from the library's batch step (here its input check) consumes the batch as skipped, with the
    reason, and leaves the stored model as it was."""
    from dptopic.errors import DPTopicError
    from dptopic.training import run

    svc, rz = _service("document", tmp_path)
    try:
        _upload(svc, rz, _docs(50), "alice")

        def refuse(*a, **k):
            raise DPTopicError("refused by the check")

        monkeypatch.setattr(run, "check_reports", refuse)
        done = svc.trainer.step()
        assert done["status"] == "skipped" and done["note"] == "refused by the check"
        row = svc.storage.active_model()
        assert not row["meta_json"] and row["last_report_id"] == 50
    finally:
        svc.close()
