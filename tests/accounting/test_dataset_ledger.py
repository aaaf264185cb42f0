"""The dataset ledger's file, its events as JSON, its totals and its caps (accounting.dataset_ledger)."""
import json
import math
import sqlite3

import pytest

from dptopic.accounting import LaplaceEvent, PureDPEvent, ApproxDPEvent
from dptopic.accounting.dataset_ledger import (DatasetLedger, LedgerFileError, compose_releases, default_path,
                                               events_from_json, events_to_json, release_guarantee, total_line)
from dptopic.accounting.gaussian import SubsampledGaussianEvent, calibrate_noise_multiplier
from dptopic.accounting.ledger import compose_pld
from dptopic.errors import BudgetExceededError, DPTopicError


def _gaussian_plan(epsilon=1.0, delta=1e-5):
    """One Gaussian release calibrated to (epsilon, delta), as DocDPCooccurrence's one-release fit spends."""
    return [(SubsampledGaussianEvent(calibrate_noise_multiplier(epsilon, delta, 1.0, 1), 1.0), 1)]


def test_events_round_trip_through_json():
    groups = [(LaplaceEvent(scale=2.0, changes=(1, 1), discrete=True, label="counts"), 7),
              (PureDPEvent(0.5, label="sampling"), 7), (ApproxDPEvent(0.3, 1e-7, label="set union"), 1),
              (SubsampledGaussianEvent(2.0, 0.01), 100)]
    back = events_from_json(events_to_json(groups))
    assert [n for _, n in back] == [7, 7, 1, 100]
    assert [e for e, _ in back] == [e for e, _ in groups]      # the same events (frozen dataclasses compare fields)
    assert compose_pld(back, 1e-5) == compose_pld(groups, 1e-5)


def test_two_releases_at_epsilon_one_total_between_one_and_two(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    for _ in range(2):
        led.debit("posts", "DocDPCooccurrence", "document", _gaussian_plan(), 1e-5)
    tot = led.total("posts")
    assert tot["n_releases"] == 2
    assert 1.0 < tot["epsilon_total"] <= 2.0
    assert tot["epsilon_basic"] == pytest.approx(2.0, rel=1e-3) and tot["delta_basic"] == pytest.approx(2e-5)
    assert tot["epsilon_total"] < tot["epsilon_basic"]          # tight composition below the basic sum
    assert "over 2 releases" in total_line(tot)


def test_a_releases_own_figure_is_its_smallest_valid_one():
    eps, d = release_guarantee([(PureDPEvent(0.5), 2)], 1e-5)
    assert eps <= 1.0 and d in (0.0, 1e-5)
    eps, d = release_guarantee([(ApproxDPEvent(0.5, 1e-4), 2)], 1e-5)      # own deltas past delta: basic at theirs
    assert (eps, d) == (1.0, 2e-4)


def test_a_cap_refuses_a_release_that_would_exceed_it_and_writes_nothing(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.set_cap("posts", 1.5, 1e-5)
    led.debit("posts", "T", "document", _gaussian_plan(), 1e-5)
    led.debit("posts", "T", "document", _gaussian_plan(), 1e-5)        # 1.47 by PLD: admitted
    before = (tmp_path / "l.sqlite").read_bytes()
    with pytest.raises(BudgetExceededError, match="capped at epsilon = 1.5") as e:
        led.debit("posts", "T", "document", _gaussian_plan(), 1e-5)
    assert "\n" not in str(e.value)
    assert (tmp_path / "l.sqlite").read_bytes() == before
    assert led.total("posts")["n_releases"] == 2
    led.debit("other", "T", "document", _gaussian_plan(), 1e-5)          # a cap is per dataset


def test_a_cap_at_its_own_delta_states_the_total_there(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.debit("d", "T", "document", _gaussian_plan(), 1e-5)
    led.set_cap("d", 10.0, 1e-6)
    assert led.total("d")["delta_total"] == 1e-6
    assert led.total("d")["epsilon_total"] > 1.0            # the same release stated at a smaller delta


def test_a_release_without_guarantee_leaves_no_total(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    led.debit("d", "T", "document", _gaussian_plan(), 1e-5)
    led.debit("d", "CDPLDA", "word", [(LaplaceEvent(2.0, (1, 1)), 3)], 1e-5, guarantee=False)
    tot = led.total("d")
    assert tot["epsilon_total"] is None and tot["epsilon_method"].startswith("none:")
    led.set_cap("d", 100.0, 1e-5)
    with pytest.raises(BudgetExceededError):
        led.debit("d", "T", "document", _gaussian_plan(), 1e-5)


def test_adding_to_a_release_keeps_one_release(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    rid = led.debit("d", "HDPLDA", "word", [(PureDPEvent(1.0), 2)], 1e-5)
    assert led.debit("d", "HDPLDA", "word", [(PureDPEvent(1.0), 1)], 1e-5, release_id=rid) == rid
    (r,) = led.releases("d")
    assert r["epsilon"] == pytest.approx(3.0, rel=1e-3) and r["groups"][0][1] == 3


def test_show_has_the_documented_shape(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    rid = led.debit("posts", "DocDPCooccurrence", "document", _gaussian_plan(), 1e-5)
    led.set_model_path(rid, tmp_path / "m")
    data = json.loads(json.dumps(led.show(), allow_nan=False))
    assert list(data) == ["datasets"]
    (d,) = data["datasets"]
    assert list(d) == ["name", "releases", "epsilon_total", "delta_total", "epsilon_basic", "delta_basic",
                       "epsilon_method", "units", "cap"]
    assert list(d["releases"][0]) == ["id", "time", "kind", "trainer", "unit", "epsilon", "delta", "guarantee",
                                      "model_path", "note", "events"]
    assert d["releases"][0]["model_path"] == str(tmp_path / "m") and d["cap"] is None
    assert events_from_json(json.dumps(d["releases"][0]["events"]))[0][0] == _gaussian_plan()[0][0]
    with pytest.raises(DPTopicError, match="no dataset 'nope'"):
        led.show("nope")


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b"\x00" * 50])
def test_a_corrupt_file_is_refused_in_one_line(tmp_path, content):
    p = tmp_path / "l.sqlite"
    p.write_bytes(content)
    with pytest.raises(LedgerFileError, match="nothing was spent") as e:
        DatasetLedger(p)
    assert "\n" not in str(e.value)
    assert p.read_bytes() == content


def test_another_programs_sqlite_file_is_refused(tmp_path):
    p = tmp_path / "other.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE things (x)")
    con.commit()
    con.close()
    with pytest.raises(LedgerFileError, match="another program"):
        DatasetLedger(p)
    con = sqlite3.connect(p)
    con.execute("PRAGMA application_id = 12345")
    con.close()
    with pytest.raises(LedgerFileError, match="another program"):
        DatasetLedger(p)


def test_a_ledger_of_a_newer_version_is_refused(tmp_path):
    p = tmp_path / "l.sqlite"
    DatasetLedger(p)
    con = sqlite3.connect(p)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'version'")
    con.commit()
    con.close()
    with pytest.raises(LedgerFileError, match="newer dptopic"):
        DatasetLedger(p)


def test_default_file_is_in_the_users_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "dptopic" / "ledger.sqlite"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_path().parts[-4:] == (".local", "share", "dptopic", "ledger.sqlite")


def test_bad_names_and_caps_are_refused(tmp_path):
    led = DatasetLedger(tmp_path / "l.sqlite")
    for bad in ("", "a\nb", "x" * 300):
        with pytest.raises(DPTopicError, match="invalid dataset name"):
            led.debit(bad, "T", "document", _gaussian_plan(), 1e-5)
    with pytest.raises(DPTopicError):
        led.set_cap("d", -1.0, 1e-5)
    assert led.datasets() == []


def test_compose_releases_of_nothing_is_zero():
    assert compose_releases([])["epsilon_total"] == 0.0
    assert math.isfinite(compose_releases([])["delta_total"])


def test_the_ledger_path_is_the_one_named_else_the_environment_s_else_the_default(tmp_path, monkeypatch):
    from dptopic.accounting.dataset_ledger import ENV, ledger_path
    from dptopic.errors import ParameterError

    monkeypatch.delenv(ENV, raising=False)
    assert ledger_path() == default_path() and ledger_path(off=True) is None
    assert ledger_path(str(tmp_path / "l.sqlite")) == tmp_path / "l.sqlite"
    monkeypatch.setenv(ENV, str(tmp_path / "env.sqlite"))
    assert ledger_path() == tmp_path / "env.sqlite"
    names = {"ledger": "--ledger", "no_ledger": "--no-ledger"}
    for kw, line in (({"path": "x", "off": True}, "give --ledger PATH or --no-ledger, not both."),
                     ({"path": " "}, "--ledger needs a file path (or give --no-ledger)."),
                     ({"must_exist": True}, f"no ledger at {tmp_path / 'env.sqlite'}: nothing has been recorded there"
                                            f" yet (give --ledger PATH or {ENV} to read another).")):
        with pytest.raises(ParameterError) as e:
            ledger_path(**kw)
        assert e.value.message(names) == line
