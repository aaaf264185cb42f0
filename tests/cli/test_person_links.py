"""A budget that follows people through both front doors: ``dptopic train --unit user`` on a copy whose ids were
re-keyed and whose text was upper-cased is charged to the same people (refused by a person cap the first run leaves
no room under), ``--person-aliases`` (git's .mailmap, or a CSV) links ids before the caps are checked, and
``budget show --person-level`` says how many ids were linked and why (docs/budget.md)."""
from __future__ import annotations

import hashlib
import json

import pytest

import dptopic
from dptopic.corpus.readers import read_corpus
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.datasets import sotu_texts
from helpers import one_line_stderr, run_dptopic

N, K = 30, 4


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("people")
    texts = [t for t in sotu_texts()[0] if 40 <= len(t.split()) <= 120][:N * K]
    people = [f"dev{i}@example.org" for i in range(N) for _ in range(K)]
    for name, tt, pp in (("orig.jsonl", texts, people),
                         ("rekeyed.jsonl", [t.upper() for t in texts],
                          [hashlib.sha256(p.encode()).hexdigest()[:16] for p in people])):
        with open(d / name, "w") as f:
            for t, p in zip(tt, pp):
                f.write(json.dumps({"author": p, "text": t}) + "\n")
    with open(d / "newer.jsonl", "w") as f:        # the same people under new addresses, with new documents
        for i in range(N):
            for t in sotu_texts()[0][1000 + K * i: 1000 + K * i + K]:
                f.write(json.dumps({"author": f"dev{i}@new.example.org", "text": t}) + "\n")
    (d / ".mailmap").write_text("".join(f"Dev {i} <dev{i}@example.org> <dev{i}@new.example.org>\n"
                                        for i in range(N)))
    return d


def _refusal(r) -> str:
    """The one error line of a refused run (notes and warnings may come before it), no traceback."""
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, r.stderr
    return errors[0]


def _train(corpus, out, ledger, *extra):
    return run_dptopic("train", "--corpus", corpus, "--unit", "user", "--user-field", "author", "--epsilon", "1",
                       "--topics", "3", "--ledger", ledger, "--out", out, "--quiet", *extra)


def test_a_rekeyed_upper_cased_copy_meets_the_person_cap_of_its_people(files, tmp_path):
    L = tmp_path / "l.sqlite"
    assert run_dptopic("budget", "cap", "--ledger", L, "--per-person", "--epsilon", "1.2", "--delta",
                       "1e-5").returncode == 0
    r = _train(files / "orig.jsonl", tmp_path / "m1", L)
    assert r.returncode == 0, r.stderr
    before = L.read_bytes()
    r = _train(files / "rekeyed.jsonl", tmp_path / "m2", L)
    assert "every person is capped" in _refusal(r)
    assert not (tmp_path / "m2").exists() and L.read_bytes() == before


def test_person_aliases_link_ids_before_the_cap_is_checked(files, tmp_path):
    L = tmp_path / "l.sqlite"
    assert _train(files / "orig.jsonl", tmp_path / "m1", L).returncode == 0
    assert run_dptopic("budget", "cap", "--ledger", L, "--per-person", "--epsilon", "1.2", "--delta",
                       "1e-5").returncode == 0
    assert _train(files / "newer.jsonl", tmp_path / "m2", L).returncode == 0     # unrelated ids: admitted
    r = _train(files / "newer.jsonl", tmp_path / "m3", L, "--person-aliases", files / ".mailmap")
    assert "every person is capped" in _refusal(r)
    show = run_dptopic("budget", "show", "--person-level", "--ledger", L)
    assert show.returncode == 0 and "linked" not in show.stdout       # the refused run linked nothing
    DatasetLedger(L).add_aliases(dptopic.dataset_ledger.people.read_aliases(files / ".mailmap"))
    show = run_dptopic("budget", "show", "--person-level", "--ledger", L)
    assert f"ids linked to another id as one person: {N}" in show.stdout and f"{N} by an alias" in show.stdout


def test_person_aliases_in_python_and_their_refusals(files, tmp_path):
    L = tmp_path / "l.sqlite"
    corpus = read_corpus(files / "orig.jsonl", "jsonl", user_field="author")
    dptopic.train(corpus, unit="user", epsilon=1.0, n_topics=3, ledger=str(L), test_size=0,
                  person_aliases=[("someone@else.org", "dev0@example.org")])
    assert DatasetLedger(L).person_summary()["linked"]["why"]["alias"] == 1
    with pytest.raises(dptopic.errors.ParameterError, match="ledger is off"):
        dptopic.train(corpus, unit="user", epsilon=1.0, ledger=False, person_aliases=files / ".mailmap")
    bad = tmp_path / "circle.csv"
    bad.write_text("a@x.org,b@x.org\nb@x.org,a@x.org\n")
    r = _train(files / "orig.jsonl", tmp_path / "m", tmp_path / "l2.sqlite", "--person-aliases", bad)
    assert "circle" in one_line_stderr(r) and not (tmp_path / "l2.sqlite").exists()
    r = run_dptopic("train", "--corpus", files / "orig.jsonl", "--unit", "user", "--user-field", "author",
                    "--epsilon", "1", "--no-ledger", "--person-aliases", files / ".mailmap", "--out", tmp_path / "n")
    assert "--person-aliases" in one_line_stderr(r)


def test_budget_plan_on_a_corpus_the_ledger_has_not_seen_writes_nothing(files, tmp_path):
    """numpy's first release planned against scipy's: the people already charged and the person cap they would meet,
    with nothing written (the ledger's bytes unchanged) and no ledger created where none was."""
    L = tmp_path / "l.sqlite"
    assert _train(files / "orig.jsonl", tmp_path / "m1", L).returncode == 0
    assert run_dptopic("budget", "cap", "--ledger", L, "--per-person", "--epsilon", "1.2", "--delta",
                       "1e-5").returncode == 0
    before = L.read_bytes()
    r = run_dptopic("budget", "plan", "--ledger", L, "--corpus", files / "rekeyed.jsonl", "--user-field", "author",
                    "--unit", "user", "--epsilon", "1", "--json")
    assert r.returncode == 3, r.stderr          # refused: the re-keyed people are the charged ones
    out = json.loads(r.stdout)
    assert out["owners"] == N and out["owners_charged_before"] == N and out["refused"]
    (person,) = [c for c in out["caps"] if c["scope"] == "person"]
    assert person["refused"] and person["epsilon_after"] > 1.2
    assert L.read_bytes() == before
    r = run_dptopic("budget", "plan", "--ledger", L, "--corpus", files / "newer.jsonl", "--user-field", "author",
                    "--unit", "user", "--epsilon", "1")
    assert r.returncode == 0 and "0 were charged before" in " ".join(r.stdout.split()), r.stdout + r.stderr
    fresh = tmp_path / "none.sqlite"
    r = run_dptopic("budget", "plan", "--ledger", fresh, "--corpus", files / "orig.jsonl", "--user-field", "author",
                    "--unit", "user", "--epsilon", "1")
    assert r.returncode == 0 and not fresh.exists(), r.stderr
