"""A person is charged once for every route their data takes (issue 93, "the same people in every route"): a secure-sum
round whose invitations name the people of a central ``train --unit user --user-field author`` release composes with
that release on each person, whatever numbers the invitations carry, exactly as if each round had been charged to
the person ids themselves; and a round whose invitations name an id the ledger links to another is charged to the
linked person. The attacker here is the pipeline's own numbering: before, a round of 300 people was charged to
``0001`` ... ``0300``, whom no central release names, so every person's total missed it."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("cryptography")

from dptopic.dataset_ledger.ledger import DatasetLedger
from helpers import run_dptopic
from service_helpers import make_words

PEOPLE = ["ana@example.org", "Bo Li <bo@example.org>", "cy@example.org", "di@example.org", "ed@example.org",
          "fay@example.org"]
WORDS = make_words(40)


def _corpus(path, people, seed=0):
    """A JSON-lines corpus of three documents by each of ``people`` (field ``author``)."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for p in people:
            for _ in range(3):
                f.write(json.dumps({"author": p, "text": " ".join(rng.choice(WORDS, 12))}) + "\n")
    return path


def _central(tmp_path, ledger, people=PEOPLE):
    """``dptopic train --unit user --user-field author --epsilon 4`` on ``people``'s documents, on ``ledger``."""
    (tmp_path / "v.txt").write_text("\n".join(WORDS) + "\n")
    r = run_dptopic("train", "--corpus", _corpus(tmp_path / "c.jsonl", people), "--unit", "user", "--user-field",
                    "author", "--epsilon", "4", "--topics", "2", "--vocabulary", tmp_path / "v.txt", "--ledger",
                    ledger, "--out", tmp_path / "model")
    assert r.returncode == 0, r.stderr


def _round_over_http(tmp_path, ledger, ids, round_id):
    """A secure-sum round over HTTP on 127.0.0.1 whose invitations name ``ids``, played by all, released; its
    plan."""
    from service_helpers import SecureSumServer

    tmp_path.mkdir()
    with SecureSumServer(tmp_path, WORDS, dropouts=1, ledger=ledger, ids=ids, round_id=round_id) as live:
        out = live.play(tmp_path)
        assert all(isinstance(o, dict) for o in out), out
        assert live.wait_state("released", "failed")["state"] == "released"
        return live.plan


@pytest.mark.service
@pytest.mark.filterwarnings("ignore")
def test_a_served_round_and_a_central_release_compose_on_the_person_whatever_the_invitation_numbers(tmp_path):
    from dptopic.service.ledger import charge_secure_round

    L, by_id = tmp_path / "l.sqlite", tmp_path / "by_id.sqlite"
    _central(tmp_path, L)
    for f in tmp_path.glob("l.sqlite*"):     # the same central release and key (beside it, or in it): below, the
        shutil.copy(f, tmp_path / f.name.replace("l.sqlite", "by_id.sqlite", 1))     # rounds charged by id
    plans = [_round_over_http(tmp_path / "r1", L, PEOPLE, "r1"),
             _round_over_http(tmp_path / "r2", L, PEOPLE[::-1], "r2")]      # each numbered in a random order
    numbers = [{json.loads(f.read_text())["person"]: json.loads(f.read_text())["contributor"]
                for f in (tmp_path / r / "invitations").glob("invitation-*.json")} for r in ("r1", "r2")]
    assert all(sorted(n) == sorted(PEOPLE) for n in numbers)
    for plan in plans:              # what each round would cost each person, had it named them by their ids
        charge_secure_round(str(by_id), None, plan, PEOPLE)
    led, ref = DatasetLedger(L), DatasetLedger(by_id)
    for p in PEOPLE:
        got, want = led.person_total(p), ref.person_total(p)
        assert len(got["releases"]) == 3 and got["epsilon"] == pytest.approx(want["epsilon"], rel=1e-9), p
        assert got["epsilon"] > 4.0 + plans[0].epsilon      # the central 4 and both rounds, composed
    assert led.person_summary()["persons"] == len(PEOPLE)   # no invitation number became a person


def test_a_round_is_charged_to_the_person_its_invitation_names_through_an_exact_id(tmp_path):
    """Without the ledger's person links (issue 93's second item, another branch): the round reaches the person of
    the central release through the very id their person field holds, and no one else."""
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.service.ledger import charge_secure_round

    L = tmp_path / "l.sqlite"
    _central(tmp_path, L)
    invited = PEOPLE[:3] + ["newcomer@example.org", "ana@example.org.uk", "Bo Li <bo@example.net>"]
    make_invitations(tmp_path / "k", None, tmp_path / "inv", round_id="r", collusion=1, ids=invited, ledger=L)
    directory = read_directory(tmp_path / "inv" / "directory.json")
    charge_secure_round(str(L), None, SecureSumPlan(2.0, 1e-5, 6, 1, 40, 1), sorted(directory["members"]),
                        directory)
    led = DatasetLedger(L)
    assert [len(led.person_total(p)["releases"]) for p in PEOPLE] == [2, 2, 2, 1, 1, 1]
    assert led.person_summary()["persons"] == len(PEOPLE) + 3


def test_a_round_whose_invitation_names_a_linked_id_is_charged_to_the_linked_person(tmp_path):
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.service.ledger import charge_secure_round

    L = tmp_path / "l.sqlite"
    _central(tmp_path, L)
    DatasetLedger(L).add_aliases([("ana@old.example.org", PEOPLE[0])], source="mailmap")
    invited = ["ana@old.example.org", *PEOPLE[1:]]
    make_invitations(tmp_path / "k", None, tmp_path / "inv", round_id="r", collusion=1, ids=invited, ledger=L)
    directory = read_directory(tmp_path / "inv" / "directory.json")
    charge_secure_round(str(L), None, SecureSumPlan(2.0, 1e-5, 6, 1, 40, 1), sorted(directory["members"]),
                        directory)
    assert len(DatasetLedger(L).person_total(PEOPLE[0])["releases"]) == 2
