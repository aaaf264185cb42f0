"""A private search at the user unit, attacked with neighbouring datasets that differ by one person: every release of
every run moves by at most the sensitivity its noise was calibrated for (the runs' noise held fixed, as the harness
holds it), and the dataset ledger charges the person once for the whole search, whatever they wrote, through both
front doors (``RandomStoppingSearch`` and ``dptopic search --unit user``)."""
import json
import warnings

import pytest

from dptopic.corpus import Vocabulary
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.mechanisms.observer import observing
from dptopic.models import DocDPCooccurrence
from dptopic.training import private_search
from dptopic.training.private_search import RandomStoppingSearch

RUNS = 2
"""K, fixed here so that the run on D' replays the run on D release for release (one candidate: no draw of it)."""


class _Run:
    def __init__(self, releases, report, epsilon):
        self.releases, self.report, self.epsilon = releases, report, epsilon


def _observer(records, replay):
    def watch(release):
        records.append(release)
        if replay is None:
            return None
        assert len(records) <= len(replay.releases), "D' made more releases than D"
        return replay.releases[len(records) - 1].noisy
    return watch


def _search(front, data, words, folder, replay=None) -> _Run:
    import helpers

    folder.mkdir(parents=True, exist_ok=True)
    L = folder / "l.sqlite"
    records = []
    with observing(_observer(records, replay)), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if front == "library":
            s = RandomStoppingSearch(DocDPCooccurrence(n_topics=2, epsilon=1.0, unit="user"), {"n_topics": [2]},
                                     ledger=L, dataset="d").fit(data.corpus(Vocabulary(words)), vocabulary=words)
            report = s.best_estimator_.privacy_
        else:
            (folder / "words.txt").write_text("\n".join(words) + "\n")
            r = helpers.run_dptopic("search", "--corpus", data.write_jsonl(folder / "d.jsonl"), "--unit", "user",
                                    "--user-field", "user", "--vocabulary", folder / "words.txt", "--epsilon", "1",
                                    "--grid", "topics=2", "--ledger", L, "--dataset", "d", "--out", folder / "m")
            assert r.returncode == 0, r.stderr
            report = json.loads((folder / "m" / "model.json").read_text())["privacy"]
    return _Run(records, report, report["search"]["epsilon"])


@pytest.mark.parametrize("front", ["library", "cli"])
@pytest.mark.parametrize("name, person", [("copies of one message across people, no split", "P"),
                                          ("one person with thousands of documents", "big")])
def test_a_user_level_search_moves_each_release_at_most_its_sensitivity_and_charges_the_person_once(
        harness, tmp_path, monkeypatch, front, name, person):
    pair = next(p for p in harness.PAIRS if p.unit == "user" and p.name == name)
    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: RUNS)
    a = _search(front, pair.d, harness.WORDS, tmp_path / "a")
    b = _search(front, pair.d2, harness.WORDS, tmp_path / "b", replay=a)
    assert len(a.releases) == RUNS * len(a.report["plan"]["releases"]) > 0      # every release of every run
    harness.within_sensitivity(a, b)
    led = DatasetLedger(tmp_path / "a" / "l.sqlite")
    (r,) = led.releases("d")
    assert r["unit"] == "user" and r["kind"] == "search"
    total = led.person_total(person)        # one release for the whole search, the person counted once in it
    assert total["releases"] == [{"release": r["id"], "group": 1}]
    assert total["epsilon"] == pytest.approx(a.epsilon, rel=1e-6)
    assert DatasetLedger(tmp_path / "b" / "l.sqlite").person_total(person)["releases"] == []
