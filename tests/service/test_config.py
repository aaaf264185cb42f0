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


"""ServiceConfig (``service/config.py``): FedLDA's epsilon is named per entry, and databases keep reading it."""
import json
import sqlite3

from dptopic.accounting.local import f_from_epsilon
from dptopic.errors import DPTopicError
from dptopic.service.app import Service
from dptopic.service.config import ServiceConfig
from dptopic.service.storage import StorageError

WORDS = [f"w{i}" for i in range(40)]


def test_fed_epsilon_is_refused_in_one_line_naming_fed_epsilon_per_entry():
    with pytest.raises(DPTopicError) as e:
        ServiceConfig(WORDS, 0.3, fed_epsilon=3.0, fed_topics=3)
    line = str(e.value)
    assert "fed_epsilon_per_entry=" in line and "\n" not in line, line


def test_fed_epsilon_per_entry_is_the_attribute_and_is_validated():
    cfg = ServiceConfig(WORDS, 0.3, fed_epsilon_per_entry=3.0, fed_topics=3)
    assert cfg.fed_epsilon_per_entry == 3.0 and not hasattr(cfg, "fed_epsilon")
    with pytest.raises(DPTopicError, match="fed_epsilon_per_entry"):
        ServiceConfig(WORDS, 0.3, fed_epsilon_per_entry=-1.0)


def _stored_settings(db) -> dict:
    con = sqlite3.connect(db)
    try:
        return {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM service_settings")}
    finally:
        con.close()


def _open(db, eps_entry):
    svc = Service(ServiceConfig(WORDS, f_from_epsilon(2.0), database=f"sqlite:///{db}", n_topics=3,
                                fed_epsilon_per_entry=eps_entry, fed_topics=3, fed_pad_length=32),
                  start_trainer=False)
    svc.open()
    svc.close()


def test_a_database_keeps_the_settings_key_that_databases_made_before_hold(tmp_path):
    """Databases made before the rename record FedLDA's epsilon per entry under ``fed_epsilon``: the key on disk is
    unchanged, so such a database opens with the same figure and refuses another."""
    db = tmp_path / "s.db"
    _open(db, 5.0)
    stored = _stored_settings(db)
    assert stored["fed_epsilon"] == 5.0 and "fed_epsilon_per_entry" not in stored
    _open(db, 5.0)
    with pytest.raises(StorageError, match="fed_epsilon=5.0"):
        _open(db, 2.0)


def test_a_token_file_readable_by_others_is_read_with_a_warning_naming_it_and_chmod(tmp_path):
    """The admin token file (``--token-file``) readable by other users is used with one warning naming the file and
    ``chmod 600``; a file readable by its owner only gives none."""
    import os
    import warnings

    from dptopic.service.config import read_token_file

    token = tmp_path / "admin.token"
    token.write_text("t" * 32 + "\n")
    os.chmod(token, 0o600)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_token_file(token) == "t" * 32
    os.chmod(token, 0o640)
    with pytest.warns(UserWarning) as seen:
        assert read_token_file(token) == "t" * 32
    assert len(seen) == 1 and str(token) in str(seen[0].message) and f"chmod 600 {token}" in str(seen[0].message)
    assert "mode 0640" in str(seen[0].message) and "admin token" in str(seen[0].message)


def test_config_refuses_a_short_admin_token():
    with pytest.raises(Exception, match="shorter than 16"):
        ServiceConfig(["a", "b"], 0.2, admin_token="short")


@pytest.mark.parametrize("key, value", [("fed_pad_length", 10**11), ("fed_topics", 10**6), ("train_interval", 1e300),
                                        ("n_iter", 10**9), ("fed_report_words", 10**10)])
def test_config_bounds_what_would_exhaust_memory_or_timers(key, value):
    with pytest.raises(Exception, match=f"invalid {key}"):
        ServiceConfig(["a", "b"], 0.2, **{key: value})


def test_fed_report_words_refuse_an_alphabetical_vocabulary():
    """The first N words must be the most common: an alphabetical --vocabulary would keep those that sort first."""
    words = [f"{c}{d}" for c in "abcdefgh" for d in "xyz"]                  # 24 words in alphabetical order
    with pytest.raises(Exception, match="^fed_report_words=10 keeps .* but vocabulary is in alphabetical order"):
        ServiceConfig(words, 0.2, fed_epsilon_per_entry=5.0, fed_topics=2, fed_report_words=10)
    ServiceConfig(words[::-1], 0.2, fed_epsilon_per_entry=5.0, fed_topics=2, fed_report_words=10)    # another order: taken
    ServiceConfig(words, 0.2, fed_epsilon_per_entry=5.0, fed_topics=2)                # every word: the order does not matter
