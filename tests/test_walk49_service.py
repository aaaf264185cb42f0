"""Walk-through 49, the collection service: a restart with other trainer flags, the prior's sentence on the status
page, FedLDA's idempotency order and its /v1/config."""
from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from test_walk47a import InProcessServer, _body, _cfg, _key  # noqa: E402
from service_helpers import corpus_of, get_json, http, make_data, post_reports  # noqa: E402


def _trained(tmp_path, **kw):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=60, n_prior=30)
    prior = corpus_of((tmp_path / "prior.txt").read_text().splitlines(), words)
    cfg = _cfg(words, f"sqlite:///{tmp_path / 's.db'}", prior=prior, prior_iter=5, n_iter=3, batch_size=20, **kw)
    with InProcessServer(cfg) as srv:
        assert post_reports(srv.url, _body(words, texts[:30]), _key(), "walk49-a")[0] == 201
        srv.service.trainer.drain(True, 10)
        assert srv.service.model_view(3)["privacy"]["prior_data"] != "none"
    return words, texts


def test_a_restart_without_prior_keeps_the_status_pages_prior_sentence(tmp_path):
    """The page read the prior from this start's --prior: restarted without it, it said the output was
    post-processing of the reports alone, while the model it served was still started from the prior in the clear."""
    import html
    import re

    words, texts = _trained(tmp_path)
    cfg = _cfg(words, f"sqlite:///{tmp_path / 's.db'}", n_iter=3, batch_size=20)        # no prior this time
    with InProcessServer(cfg) as srv:
        page = html.unescape(re.sub(r"\s+", " ", http("GET", srv.url + "/")[2].decode()))
        assert "and of the prior corpus, which it uses in the clear and no epsilon covers" in page
        kept = dict((k, (held, given)) for k, held, given in srv.service.settings_kept_by_model())
        assert kept["prior"] == (True, False) and kept["prior_iter"] == (5, 200)


def test_a_fresh_server_without_prior_says_nothing_of_one(tmp_path):
    import html
    import re

    words, _ = make_data(tmp_path, vocab_size=60, n_docs=10, n_prior=5)
    with InProcessServer(_cfg(words, f"sqlite:///{tmp_path / 's.db'}")) as srv:
        page = html.unescape(re.sub(r"\s+", " ", http("GET", srv.url + "/")[2].decode()))
        assert "post-processing of the randomized reports." in page and "prior corpus" not in page
        assert srv.service.settings_kept_by_model() == []


def test_serve_warns_that_the_active_model_keeps_its_settings(tmp_path, monkeypatch, capsys):
    """The banner echoed --topics 7 while the server went on serving the 5-topic model; now a warning says so."""
    import uvicorn

    from dptopic.cli.main import main
    from service_helpers import free_port
    from test_walk47a import _NoServer

    words, _ = _trained(tmp_path)
    monkeypatch.setattr(uvicorn, "Config", lambda *a, **k: None)
    monkeypatch.setattr(uvicorn, "Server", _NoServer)
    rc = main(["serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--database",
               f"sqlite:///{tmp_path / 's.db'}", "--topics", "7", "--delta", "1e-7", "--port", str(free_port()),
               "--quiet"])
    err = " ".join(capsys.readouterr().err.split())
    assert rc in (0, None), err
    assert "the database's active model keeps n_topics=3" in err and "delta=1e-05" in err and "a prior corpus" in err
    assert "--topics" in err and "--delta" in err and "--prior" in err and "POST /v1/admin/rotate" in err


def test_fed_another_body_under_a_used_key_is_checked_before_the_key(tmp_path):
    import numpy as np

    from dptopic.corpus import Corpus
    from dptopic.federated.client import FedClient
    from dptopic.service import codec

    words, texts = make_data(tmp_path, vocab_size=60, n_docs=20, n_prior=5)
    cfg = _cfg(words, f"sqlite:///{tmp_path / 's.db'}", fed_epsilon_per_entry=5.0, fed_pad_length=16, fed_min_updates=2)
    with InProcessServer(cfg) as srv:
        status, conf = get_json(srv.url + "/v1/config")
        fed = conf["fed"]
        assert fed["subset_size"] == 0 and fed["words_per_report"] >= 1
        assert fed["unused_by_this_rule"] == ["delta", "gamma", "variant", "replacement", "local_iter"]
        rrp = codec.fed_config_from_dict(fed)
        c = Corpus.from_texts(texts[:5], vocabulary=cfg.fed_vocabulary.words, max_vocab=None)
        client = FedClient("u1", c, rrp, np.random.default_rng(0))
        _, _, broadcast = http("GET", srv.url + "/v1/fed/round")
        body = client.run_round(broadcast)
        key = _key()
        hdr = {"Content-Type": "application/octet-stream", "Idempotency-Key": key}
        assert http("POST", srv.url + "/v1/fed/updates", body, hdr)[0] in (200, 201)
        broken = bytearray(body)
        broken[-1] ^= 0xFF
        status, _, data = http("POST", srv.url + "/v1/fed/updates", bytes(broken), hdr)
        assert status == 400 and b"malformed_update" in data            # was 409 idempotency_key_reused
        assert http("POST", srv.url + "/v1/fed/updates", body, hdr)[0] == 200     # the retry is still a replay
