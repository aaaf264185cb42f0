"""dptopic train --unit user (a guarantee per person) and dptopic recommend --unit user, in-process: a run that saves a
model whose card names the person as the unit, and every refusal in one line, before anything is spent."""
import json
import re

import numpy as np
import pytest

from helpers import main_output

TOPICS = [["apple", "banana", "cherry", "grape", "melon", "peach", "plum", "berry"],
          ["engine", "wheel", "brake", "motor", "gear", "piston", "clutch", "tyre"]]


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """A JSONL file of 40 people, each writing 1 to 4 documents about one topic, and a folder of folders."""
    root = tmp_path_factory.mktemp("people")
    rng = np.random.default_rng(0)
    records = []
    for p in range(40):
        for _ in range(rng.integers(1, 5)):
            records.append({"text": " ".join(rng.choice(TOPICS[p % 2], size=20)), "user": f"p{p}"})
    (root / "people.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "missing.jsonl").write_text("".join(json.dumps({k: v for k, v in r.items() if i != 5 or k != "user"})
                                                + "\n" for i, r in enumerate(records)))
    (root / "numbers.jsonl").write_text("".join(json.dumps({**r, "user": i}) + "\n" for i, r in enumerate(records)))
    for i, r in enumerate(records):
        (root / "folders" / r["user"]).mkdir(parents=True, exist_ok=True)
        (root / "folders" / r["user"] / f"{i}.txt").write_text(r["text"])
    (root / "words.txt").write_text("\n".join(sum(TOPICS, [])) + "\n")
    return root


@pytest.mark.parametrize("corpus, extra", [("people.jsonl", ["--user-field", "user"]), ("folders", [])])
def test_train_unit_user_saves_a_model_whose_unit_is_the_person(people, tmp_path, capsys, corpus, extra):
    rc, out, err = main_output(capsys, ["train", "--unit", "user", *extra, "--corpus", people / corpus, "--epsilon", "2",
                                 "--topics", "2", "--vocabulary", people / "words.txt", "--out", tmp_path / "m",
                                 "--quiet"])
    assert rc == 0, err
    saved = json.loads((tmp_path / "m" / "model.json").read_text())
    privacy = saved["privacy"]
    assert privacy["unit"] == "user" and privacy["epsilon"] <= 2.0
    assert "scaled to norm at most 1" in privacy["user_bound"]
    assert "each person's contribution" in out


def test_train_unit_user_prints_the_non_private_reference_beside_its_perplexity(people, tmp_path, capsys):
    """The held-out perplexity of a per-person model is read beside non-private LDA's on the same split (by person),
    scored by the same function (:func:`dptopic.training.reference.nonprivate_reference`), labelled outside the
    guarantee, as the demo reads its reference."""
    rc, out, err = main_output(capsys, ["train", "--unit", "user", "--user-field", "user", "--corpus",
                                        people / "people.jsonl", "--epsilon", "2", "--topics", "2", "--vocabulary",
                                        people / "words.txt", "--out", tmp_path / "m", "--quiet", "--seed", "3",
                                        "--test-size", "0.2"])
    assert rc == 0, err
    text = " ".join(out.split())
    assert "the held-out people are charged on the ledger as the others are" in text
    mine = re.search(r"held-out per-word perplexity: ([\d.]+) \(paper mode", text)
    ref = re.search(r"non-private reference: perplexity ([\d.]+) \(paper mode: fold-in Gibbs sampling under the"
                    r" released topics\), NPMI -?[\d.]+.*?, diversity [\d.]+ \(LDA, 200 sweeps, on the same split;"
                    r" outside the guarantee: it reads the private documents in the clear; not saved\)", text)
    assert mine and ref, text
    saved = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "non-private" not in json.dumps(saved)        # printed, never saved


def test_train_unit_user_releases_every_person_unless_a_held_out_share_is_asked(people, tmp_path, capsys):
    """Every person a user-level run reads is charged, so by default it holds none out (``--test-size`` 0 at the user
    unit, in both front doors); the document unit keeps its 20%."""
    import dptopic
    from dptopic.corpus.readers import read_corpus

    rc, out, err = main_output(capsys, ["train", "--unit", "user", "--user-field", "user", "--corpus",
                                        people / "people.jsonl", "--epsilon", "2", "--topics", "2", "--vocabulary",
                                        people / "words.txt", "--out", tmp_path / "m", "--quiet", "--no-ledger"])
    assert rc == 0, err
    assert "train on all" in " ".join(out.split())
    corpus = read_corpus(people / "people.jsonl", "jsonl", user_field="user",
                         vocabulary=(people / "words.txt").read_text().split())
    assert dptopic.train(corpus, unit="user", epsilon=2.0, n_topics=2, ledger=False, metrics=False).test is None
    assert dptopic.train(corpus, unit="document", epsilon=2.0, n_topics=2, ledger=False,
                         metrics=False).test is not None


@pytest.mark.parametrize("argv, fragment", [
    (["--unit", "user"], "--unit user needs --user-field FIELD"),
    (["--unit", "user", "--user-field", "user", "--algorithm", "hdp"],
     "--algorithm hdp cannot give it"),
    (["--unit", "document", "--user-field", "user"], "--user-field is for a guarantee per person"),
    (["--algorithm", "docdp", "--documents-per-user", "3"], "--documents-per-user is for a guarantee per person"),
    (["--unit", "user", "--user-field", "user", "--private-vocabulary", "1,1e-6"],
     "--private-vocabulary chooses the words by DP set union per document"),
    (["--unit", "user", "--user-field", "person"], "line 1 has no field 'person', so no user id"),
])
def test_train_unit_user_refusals_are_one_line(people, tmp_path, capsys, argv, fragment):
    rc, _, err = main_output(capsys, ["train", "--corpus", people / "people.jsonl", "--epsilon", "1", "--topics", "2",
                               "--out", tmp_path / "m", *argv])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0], err
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("corpus, fragment", [("missing.jsonl", "line 6 has no field 'user', so no user id"),
                                              ("numbers.jsonl", "line 1: user id field 'user' is a number")])
def test_a_user_id_missing_from_some_rows_is_refused_before_anything_is_spent(people, tmp_path, capsys, corpus,
                                                                             fragment):
    rc, out, err = main_output(capsys, ["train", "--unit", "user", "--user-field", "user", "--corpus", people / corpus,
                                 "--epsilon", "1", "--topics", "2", "--out", tmp_path / "m"])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and fragment in lines[0] and str(people / corpus) in lines[0], err
    assert "Privacy report" not in out and not (tmp_path / "m").exists()


def test_train_unit_user_refuses_a_built_in_corpus(tmp_path, capsys):
    rc, _, err = main_output(capsys, ["train", "--unit", "user", "--corpus", "demo", "--epsilon", "1",
                               "--out", tmp_path / "m"])
    assert rc == 2 and "the built-in corpus 'demo' has none" in err


def test_recommend_unit_user_counts_people_and_names_the_flag(capsys):
    rc, out, _ = main_output(capsys, ["recommend", "--unit", "user", "--epsilon", "1", "--docs", "3000"])
    assert rc == 0
    assert "user-level DP, epsilon = 1, 3,000 people" in out
    assert "--unit user" in out and "--user-field FIELD" in out
    assert "read as a count of people" in " ".join(out.split())


def test_recommend_unit_user_with_vectors_reads_the_rows_of_the_route_both_units_take(capsys, monkeypatch):
    """With public vectors installed, the user unit's fit takes the route the document unit's takes (by the first
    release's signal): both forecasts read the same rows (0.775 on the State of the Union's 18,740 paragraphs, read as
    people at the user level); the spread's rows, which the user level read before, gave 0.76."""
    import dptopic.advice as advice

    monkeypatch.setattr(advice, "vectors_installed", lambda: True)
    figures = {}
    for unit in ("user", "document"):
        rc, out, _ = main_output(capsys, ["recommend", "--unit", unit, "--epsilon", "1", "--docs", "18740"])
        assert rc == 0 and "forecast with public word vectors" in " ".join(out.split())
        figures[unit] = re.search(r"\bsotu (\d+)%", " ".join(out.split())).group(1)     # the corpora in any order
    assert figures == {"user": "78", "document": "78"}


def test_user_advice_is_the_document_advice_per_person():
    from dptopic.advice import USER_NOTE, recommend, too_small_message

    doc, user = recommend("document", 1.0, 3000), recommend("user", 1.0, 3000)
    assert user.unit == "user" and user.trainer == doc.trainer
    assert user.expected_npmi_ratio == doc.expected_npmi_ratio and user.notes[0] == USER_NOTE
    assert not any("--private-vocabulary EPS_V" in n for n in user.notes)      # --unit user refuses it
    assert "3,000 people" in too_small_message("user", 1.0, 3000, 20, what="people")


def test_train_unit_user_holds_out_whole_people_through_the_library_split(people, tmp_path, capsys, monkeypatch):
    """The command splits through dptopic.training.by_unit.split_for, which holds out whole people under the user
    unit: no person has documents on both sides."""
    import dptopic.training.by_unit as by_unit

    splits = []
    real = by_unit.held_out_split

    def recording(corpus, test_size, by="stable", user_ids=None):
        out = real(corpus, test_size, by=by, user_ids=user_ids)
        splits.append((by, out))
        return out

    monkeypatch.setattr(by_unit, "held_out_split", recording)
    rc, out, err = main_output(capsys, ["train", "--unit", "user", "--user-field", "user", "--corpus",
                                        people / "people.jsonl", "--epsilon", "2", "--topics", "2", "--vocabulary",
                                        people / "words.txt", "--test-size", "0.3", "--out", tmp_path / "m"])
    assert rc == 0, err
    assert "held out by person" in out
    assert splits and all(by == "person" for by, _ in splits)
    train, test = splits[0][1]
    assert test is not None and not set(train.user_ids) & set(test.user_ids)


@pytest.mark.parametrize("argv", [["--documents-per-user", "2"], ["--documents-per-user", "2", "--epsilon", "1"],
                                  ["--user-field", "user", "--epsilon", "1"],
                                  ["--algorithm", "lda", "--documents-per-user", "2"]])
def test_the_fix_suggested_for_a_person_flag_without_the_unit_is_one_train_takes(people, tmp_path, capsys, argv):
    """--documents-per-user without --unit suggested 'add --unit user (and --epsilon)', which was then refused for want
    of --user-field (or, the default trainer being lda, --epsilon was refused first)."""
    import re

    base = ["train", "--corpus", people / "people.jsonl", "--topics", "2", "--vocabulary", people / "words.txt",
            "--quiet", "--out", tmp_path / "m"]
    rc, _, err = main_output(capsys, base + argv)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "is for a guarantee per person: add --unit user" in lines[0], err
    add = re.search(r"add (.*?)(?: and drop (.*?))?; or drop", lines[0])
    fixed = [w for w in argv if w != "lda"] if add.group(2) else list(argv)
    if add.group(2):
        fixed.remove("--algorithm")
    fixed += ["--unit", "user"]
    if "--epsilon EPS" in add.group(1):
        fixed += ["--epsilon", "1"]
    if "--user-field FIELD" in add.group(1):
        fixed += ["--user-field", "user"]
    rc, _, err = main_output(capsys, base + fixed)
    assert rc == 0, err


def test_the_printed_card_shows_the_person_field_group_privacy_and_replacement(people, tmp_path, capsys):
    """The card's computed figures per person (k people together; one person replaced) and the field that named the
    person reach the terminal card and the HTML report, not only model.json."""
    rc, out, err = main_output(capsys, ["train", "--unit", "user", "--user-field", "user", "--corpus",
                                        people / "people.jsonl", "--epsilon", "2", "--topics", "2", "--vocabulary",
                                        people / "words.txt", "--test-size", "0", "--out", tmp_path / "m"])
    assert rc == 0, err
    flat = " ".join(out.split())
    assert "person field" in flat and "'user'" in flat
    assert "group privacy" in flat and "for k = 10" in flat
    assert "one person replaced" in flat and "sqrt(2)" in flat
    rc, _, err = main_output(capsys, ["report", "--model", tmp_path / "m", "--out", tmp_path / "r.html"])
    assert rc == 0, err
    page = (tmp_path / "r.html").read_text()
    assert "person field" in page and "group privacy" in page and "one person replaced" in page


def test_train_unit_user_with_the_person_profile_says_so_on_the_card(people, tmp_path, capsys):
    rc, _, err = main_output(capsys, ["train", "--unit", "user", "--user-field", "user", "--corpus",
                                      people / "people.jsonl", "--epsilon", "2", "--topics", "2", "--vocabulary",
                                      people / "words.txt", "--person-statistic", "profile", "--out", tmp_path / "m",
                                      "--quiet"])
    assert rc == 0, err
    privacy = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]
    assert privacy["parameters"]["person_statistic"] == "profile" and "u u^T" in privacy["user_bound"]


def test_the_person_profile_without_unit_user_is_refused_in_one_line_naming_the_flag(people, tmp_path, capsys):
    rc, _, err = main_output(capsys, ["train", "--unit", "document", "--corpus", people / "people.jsonl", "--epsilon",
                                      "1", "--topics", "2", "--person-statistic", "profile", "--out", tmp_path / "m"])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert "--person-statistic" in lines[0] and "--unit user" in lines[0] and "person_statistic" not in lines[0]


def test_train_unit_user_takes_the_groups_by_default_where_the_document_unit_does(tmp_path, capsys, monkeypatch):
    """`--vectors-route auto` (the default) at the user unit takes the route the document unit takes, by the first
    release's signal and presence (the library's rule, moments/vector_prior.py): the groups, on a corpus whose signal
    is high at both units (its presence, far below the library's cut, is let through here); the printed card and the
    saved one say which route was taken."""
    from dptopic.corpus import lda_corpus
    from dptopic.moments import vector_prior

    monkeypatch.setattr(vector_prior, "GROUPS_MIN_PRESENCE", 1000.0)

    planted = lda_corpus(n_docs=1500, vocab_size=400, n_topics=5, doc_length=40, alpha=0.1, beta=0.05, seed=3)
    words = ["w" + "".join(chr(97 + j // 26 ** i % 26) for i in (2, 1, 0)) for j in range(400)]     # waaa, waab, ...
    c = planted.corpus
    texts = [" ".join(words[w] for w in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]
    (tmp_path / "people.jsonl").write_text("".join(json.dumps({"text": t, "user": f"p{d // 2}"}) + "\n"
                                                   for d, t in enumerate(texts)))
    (tmp_path / "words.txt").write_text("\n".join(words) + "\n")
    rng = np.random.default_rng(0)
    E = 0.3 * rng.normal(size=(400, 8))
    E[np.arange(400), np.argmax(planted.phi, axis=0)] += 1.0
    (tmp_path / "vec.txt").write_text("\n".join(w + " " + " ".join(f"{x:.5f}" for x in row) for w, row in zip(words, E))
                                      + "\n")
    common = ["--corpus", tmp_path / "people.jsonl", "--epsilon", "20", "--topics", "5", "--vocabulary",
              tmp_path / "words.txt", "--public-vectors", tmp_path / "vec.txt", "--test-size", "0"]
    routes = {}
    for unit, extra in (("user", ["--user-field", "user"]), ("document", [])):
        rc, out, err = main_output(capsys, ["train", "--unit", unit, *extra, *common, "--out", tmp_path / unit])
        assert rc == 0, err
        routes[unit] = json.loads((tmp_path / unit / "model.json").read_text())["privacy"]["public_vectors"]["route"]
        flat = " ".join(out.replace("\u2502", " ").split())          # the printed card's rows, their borders dropped
        assert "also counts groups of the other words made by the vectors" in flat, out
    assert routes == {"user": "groups", "document": "groups"}
