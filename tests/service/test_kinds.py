"""The report-kind registry (``dptopic.service.kinds``): every kind keeps the whole contract, in process."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sqlalchemy")
pytest.importorskip("starlette")

from dptopic.contributor import kinds as contributor_kinds  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.protocol import codec as protocol_codec
from dptopic.service import ServiceConfig, codec, kinds  # noqa: E402
from dptopic.service.app import Service  # noqa: E402
from service_helpers import corpus_of, make_data, with_format_version  # noqa: E402

SETTINGS = {"word": {"f": 2 / (1 + np.exp(2.0))}, "document": {"f": None, "report_kind": "document", "epsilon_doc": 6.0}}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("kinds"), vocab_size=50, n_docs=30)


def test_every_registered_kind_implements_the_whole_contract():
    assert set(kinds.NAMES) == set(contributor_kinds.NAMES) == {"word", "document"}
    for name, kind in kinds.KINDS.items():
        assert kind.name == name and kind.model_name
        missing = [m for m in ("epsilon_doc", "decode", "from_rows", "new_model", "contributor_privacy", "privacy_line")
                   if getattr(type(kind), m) is getattr(kinds.ReportKind, m)]
        assert not missing, f"kind {name!r} does not implement {missing}"
        theirs = contributor_kinds.get(name)        # and its contributor's side: the randomizer, the bytes of a report
        missing = [m for m in ("randomizer", "bytes_per_report", "epsilons")
                   if getattr(type(theirs), m) is getattr(contributor_kinds.ContributorKind, m)]
        assert not missing, f"kind {name!r} has no contributor side for {missing}"
        fmt = kind.report_format()
        assert fmt["kind"] == name and fmt["version"] == kind.module.VERSION and fmt["name"] == kind.module.FORMAT


@pytest.mark.parametrize("name", ["word", "document"])
def test_each_kind_builds_its_registry_trainer_as_the_library_builds_it_unseeded(name, data, tmp_path):
    from dptopic.models.registry import trainer
    from dptopic.training import build_model

    words = data[0]
    cfg = ServiceConfig(words, database=f"sqlite:///{tmp_path / 'k.db'}", n_topics=3, **SETTINGS[name])
    kind = kinds.get(cfg.report_kind)
    model = kinds.new_trainer(cfg)
    assert type(model) is trainer(kind.trainer).cls
    assert model.get_params().get("seed") is None and model.n_topics == 3
    assert model.get_params() == build_model(kind.trainer, **{k: v for k, v in model.get_params().items()
                                                              if k != "seed"}).get_params()


@pytest.mark.parametrize("name", ["word", "document"])
def test_upload_stored_rows_and_config_agree_for_each_kind(name, data, tmp_path):
    words, texts = data
    cfg = ServiceConfig(words, database=f"sqlite:///{tmp_path / 'k.db'}", **SETTINGS[name])
    svc = Service(cfg, start_trainer=False)
    doc = svc.config_doc()
    kind = kinds.get(doc["report_kind"])
    assert kind.name == name and doc["report_format"] == kind.report_format()
    # what a contributor does with /v1/config, what the server parses, what it stores and reads back for training
    rz = contributor_kinds.get(name).randomizer(cfg.vocabulary, doc)
    reports = rz.randomize(corpus_of(texts, words))
    body = protocol_codec.encode_reports(reports)
    parsed = kind.decode(body, cfg, svc.fingerprint)
    rows = codec.report_rows(parsed)
    assert len(rows) == reports.n_reports == len(texts) and {len(r) for r in rows} == {contributor_kinds.get(name).bytes_per_report(reports)}
    again = kind.from_rows(rows, cfg)
    assert codec.report_rows(again) == rows
    assert contributor_kinds.get(name).epsilons(rz)["epsilon_doc"] == pytest.approx(doc["epsilon_doc"])
    privacy = svc.contributor_privacy(3)
    assert privacy["epsilon_contributor_doc_basic"] == pytest.approx(3 * doc["epsilon_doc"])
    # every other registered kind, and this kind at another format version, is refused in one line
    for other in kinds.NAMES:
        if other != name:
            other_cfg = ServiceConfig(words, database=cfg.database, **SETTINGS[other])
            other_body = protocol_codec.encode_reports(contributor_kinds.get(other).randomizer(
                other_cfg.vocabulary, Service(other_cfg).config_doc())
                                              .randomize(corpus_of(texts[:2], words)))
            with pytest.raises(codec.IncompatibleReports, match=f"kind '{name}'"):
                kind.decode(other_body, cfg, svc.fingerprint)
    with pytest.raises(codec.IncompatibleReports, match="format version 7 but this server takes version 1"):
        kind.decode(with_format_version(body, 7), cfg, svc.fingerprint)
    with pytest.raises(codec.MalformedReports):
        kind.decode(body[:-1], cfg, svc.fingerprint)


def test_an_unknown_kind_is_one_line():
    with pytest.raises(DPTopicError, match="invalid report kind 'sentence': one of 'word', 'document'"):
        ServiceConfig(["a", "b"], None, report_kind="sentence")
    with pytest.raises(DPTopicError, match="invalid report kind"):
        kinds.get(None)


@pytest.mark.parametrize("f, kind", [(None, "word"), (0.5, "document")])
def test_a_budget_of_the_other_report_kind_is_refused_in_the_configs_parameters(f, kind):
    """The kinds' refusals told a Python caller of ServiceConfig to give --epsilon-word: they name its parameters
    (f, epsilon_doc), which dptopic serve writes as its flags."""
    from dptopic.corpus import Vocabulary
    from dptopic.errors import ParameterError

    with pytest.raises(ParameterError) as e:
        ServiceConfig(vocabulary=Vocabulary(["apple", "banana", "cherry"]), f=f, report_kind=kind)
    assert str(e.value) == "word-level reports need f; document-level reports take epsilon_doc instead."
    assert e.value.message({"epsilon_word": "--epsilon-word", "epsilon_doc": "--epsilon-doc"}) == (
        "word-level reports need --epsilon-word; document-level reports take --epsilon-doc instead.")
