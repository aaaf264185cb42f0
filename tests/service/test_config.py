"""``dptopic.service.config``."""
import numpy as np
import pytest


def test_config_names_the_contributor_header(tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    from dptopic.service import ServiceConfig
    from dptopic.service.app import Service

    cfg = ServiceConfig([f"w{i}" for i in range(20)], database=f"sqlite:///{tmp_path / 'c.db'}",
                        f=2 / (1 + np.exp(2.0)))
    doc = Service(cfg, start_trainer=False).config_doc()
    assert "Dptopic-Contributor" in doc["contributor"] and "1-128 characters" in doc["contributor"]
