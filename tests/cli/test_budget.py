"""``dptopic budget show/cap``, ``train``'s ledger flags and ``dptopic refit`` (docs/budget.md)."""
import json

import numpy as np
import pytest

from dptopic.dataset_ledger.ledger import DatasetLedger
from helpers import one_line_stderr, run_dptopic

WORDS = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("budget")
    rng = np.random.default_rng(0)
    halves = (WORDS[:7], WORDS[7:])
    with open(d / "docs.txt", "w") as f:
        for i in range(400):
            f.write(" ".join(rng.choice(halves[i % 2], 12)) + "\n")
    (d / "vocab.txt").write_text("\n".join(WORDS))
    with open(d / "public.txt", "w") as f:         # public documents of the same domain, none of them private
        for i in range(100):
            f.write(" ".join(rng.choice(halves[i % 2], 15)) + "\n")
    return d


def _train(d, out, *extra, ledger=None):
    args = ["train", "--algorithm", "docdp-cooc", "--corpus", d / "docs.txt", "--format", "text",
            "--vocabulary", d / "vocab.txt",
            "--epsilon", "1", "--topics", "2", "--test-size", "0", "--out", out, "--quiet"]
    if ledger is not None:
        args += ["--ledger", ledger]
    return run_dptopic(*args, *extra)


def _show(ledger, *extra):
    r = run_dptopic("budget", "show", "--ledger", ledger, "--json", *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_two_runs_total_between_one_and_two_and_show_json(corpus_file, tmp_path):
    L = tmp_path / "l.sqlite"
    for i in range(2):
        r = _train(corpus_file, tmp_path / f"m{i}", "--dataset", "posts", ledger=L)
        assert r.returncode == 0, r.stderr
        assert "releases recorded for these documents" in r.stdout
    data = _show(L)
    (d,) = data["datasets"]
    assert {"name", "releases", "epsilon_total", "delta_total", "cap"} <= set(d)
    assert d["name"] == "posts" and len(d["releases"]) == 2 and 1.0 < d["epsilon_total"] <= 2.0
    assert d["releases"][1]["model_path"] == str((tmp_path / "m1").resolve())
    assert _show(L, "--dataset", "posts") == data        # stable: the same JSON read again
    text = run_dptopic("budget", "show", "--ledger", L)
    assert text.returncode == 0 and "posts" in text.stdout and "2 release(s)" in text.stdout


def test_a_cap_admits_the_first_run_and_refuses_a_later_one_before_spending(corpus_file, tmp_path):
    L = tmp_path / "l.sqlite"
    r = run_dptopic("budget", "cap", "--ledger", L, "--dataset", "posts", "--epsilon", "1.5", "--delta", "1e-5")
    assert r.returncode == 0, r.stderr
    assert _train(corpus_file, tmp_path / "m0", "--dataset", "posts", ledger=L).returncode == 0
    outcomes = [_train(corpus_file, tmp_path / f"m{i}", "--dataset", "posts", ledger=L) for i in (1, 2)]
    refused = [i for i, r in zip((1, 2), outcomes) if r.returncode != 0]
    assert refused, "a cap of 1.5 admitted three runs at epsilon 1"
    i = refused[0]
    assert "capped at epsilon = 1.5" in one_line_stderr(outcomes[i - 1])
    assert not (tmp_path / f"m{i}").exists()
    d = _show(L)["datasets"][0]
    assert len(d["releases"]) == i and d["cap"] == {"epsilon": 1.5, "delta": 1e-5}
    assert d["epsilon_total"] <= 1.5


def test_a_cap_refuses_a_private_vocabulary_run_before_the_set_union_draws(corpus_file, tmp_path, monkeypatch):
    """The cap of the --corpus file's dataset admits the vocabulary's 0.4 alone, not with the trainer's 1: refused in
    one line before the DP set union draws, nothing written to the ledger or the model folder."""
    from dptopic.corpus.ledger_documents import documents_of
    from dptopic.corpus.readers import read_corpus
    from dptopic.training import fdptm

    monkeypatch.setattr(fdptm, "restrict_to_private_vocabulary", lambda *a, **k: pytest.fail("drawn"))
    L = tmp_path / "l.sqlite"
    name = DatasetLedger(L).content_name(documents_of(read_corpus(corpus_file / "docs.txt", "text")))
    assert run_dptopic("budget", "cap", "--ledger", L, "--dataset", name, "--epsilon", "1", "--delta",
                       "1e-5").returncode == 0
    r = run_dptopic("train", "--algorithm", "docdp-cooc", "--corpus", corpus_file / "docs.txt", "--format", "text",
                    "--epsilon", "1", "--delta", "5e-6", "--private-vocabulary", "0.4,5e-6", "--topics", "2",
                    "--test-size", "0", "--out", tmp_path / "m", "--quiet", "--ledger", L)
    assert r.returncode != 0 and "capped at epsilon = 1" in one_line_stderr(r)
    assert DatasetLedger(L).releases(name) == [] and not (tmp_path / "m").exists()


def test_the_default_ledger_is_in_the_data_folder_and_named_by_the_file(corpus_file, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert _train(corpus_file, tmp_path / "m").returncode == 0
    L = tmp_path / "data" / "dptopic" / "ledger.sqlite"
    (d,) = DatasetLedger(L).show()["datasets"]
    assert d["name"].startswith("content:")
    assert _train(corpus_file, tmp_path / "m2", "--no-ledger").returncode == 0
    assert len(DatasetLedger(L).releases(d["name"])) == 1
    monkeypatch.setenv("DPTOPIC_LEDGER", str(tmp_path / "env.sqlite"))
    assert _train(corpus_file, tmp_path / "m3").returncode == 0
    assert (tmp_path / "env.sqlite").exists()


def test_a_non_private_run_touches_no_ledger(corpus_file, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    r = run_dptopic("train", "--corpus", corpus_file / "docs.txt", "--topics", "2", "--iterations", "5",
                    "--out", tmp_path / "lda", "--quiet")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "data").exists()


def test_a_corrupt_ledger_is_refused_before_anything(corpus_file, tmp_path):
    L = tmp_path / "bad.sqlite"
    L.write_bytes(b"not a database" * 200)
    r = _train(corpus_file, tmp_path / "m", ledger=L)
    assert "nothing was spent" in one_line_stderr(r)
    assert not (tmp_path / "m").exists()
    assert "nothing was spent" in one_line_stderr(run_dptopic("budget", "show", "--ledger", L))


def test_bad_ledger_flags_are_one_line(corpus_file, tmp_path):
    r = _train(corpus_file, tmp_path / "m", "--no-ledger", ledger=tmp_path / "l.sqlite")
    assert "--no-ledger" in one_line_stderr(r)
    r = _train(corpus_file, tmp_path / "m", "--dataset", "a\tb", ledger=tmp_path / "l.sqlite")
    assert "invalid dataset name" in one_line_stderr(r)
    assert "no ledger at" in one_line_stderr(run_dptopic("budget", "show", "--ledger", tmp_path / "none.sqlite"))
    r = run_dptopic("budget", "cap", "--ledger", tmp_path / "l.sqlite", "--dataset", "d")
    assert "--epsilon" in one_line_stderr(r)


def test_refit_reads_another_k_and_adds_no_release(corpus_file, tmp_path):
    L = tmp_path / "l.sqlite"
    assert _train(corpus_file, tmp_path / "m", "--dataset", "posts", ledger=L).returncode == 0
    before = _show(L)
    r = run_dptopic("refit", "--model", tmp_path / "m", "--topics", "3", "--out", tmp_path / "m3")
    assert r.returncode == 0, r.stderr
    assert _show(L) == before
    meta = json.loads((tmp_path / "m3" / "model.json").read_text())
    old = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["params"]["n_topics"] == 3 and meta["privacy_card"] == old["privacy_card"]
    r = run_dptopic("refit", tmp_path / "m", "--suggest", "--out", tmp_path / "ms")
    assert r.returncode == 0 and "suggested number of topics" in r.stdout
    assert _show(L) == before


def test_refit_refuses_a_trainer_whose_releases_fix_k(corpus_file, tmp_path):
    r = run_dptopic("train", "--corpus", corpus_file / "docs.txt", "--topics", "2", "--iterations", "3",
                    "--out", tmp_path / "lda", "--quiet")
    assert r.returncode == 0
    r = run_dptopic("refit", "--model", tmp_path / "lda", "--topics", "3", "--out", tmp_path / "x")
    line = one_line_stderr(r)   # a non-private model: no budget is involved (it said "spends budget")
    assert "not private" in line and "budget again" not in line and "--topics K" in line
    r = run_dptopic("train", "--algorithm", "svi", "--corpus", corpus_file / "docs.txt", "--topics", "2", "--epochs",
                    "1", "--epsilon", "2", "--test-size", "0", "--out", tmp_path / "svi", "--quiet", "--no-ledger")
    assert r.returncode == 0, r.stderr
    line = one_line_stderr(run_dptopic("refit", tmp_path / "svi", "--topics", "3", "--out", tmp_path / "y"))
    assert "new fit" in line and "dptopic search" in line


def test_refit_of_a_model_trained_on_reports_says_retraining_spends_nothing(corpus_file, tmp_path):
    """LP/OLP/ldp-doc refusals said "a new fit spends budget again": training again on the same reports spends
    nothing."""
    r = run_dptopic("randomize", "--vocabulary", corpus_file / "vocab.txt", "--corpus", corpus_file / "docs.txt",
                    "--format", "text", "--epsilon-word", "2", "--out", tmp_path / "rep.jsonl")
    assert r.returncode == 0, r.stderr
    r = run_dptopic("train", "--algorithm", "lp", "--reports", tmp_path / "rep.jsonl", "--vocabulary",
                    corpus_file / "vocab.txt", "--topics", "2", "--iterations", "3", "--out", tmp_path / "lp", "--quiet")
    assert r.returncode == 0, r.stderr
    line = one_line_stderr(run_dptopic("refit", tmp_path / "lp", "--topics", "3", "--out", tmp_path / "x"))
    assert "spends nothing" in line and "--algorithm lp --reports FILE --topics K" in line


def test_refit_names_the_topics_flag_and_refuses_a_public_corpus_model(corpus_file, tmp_path):
    """--topics 61 said n_topics=61 on the command line; a folder trained with --public-corpus was refitted."""
    assert _train(corpus_file, tmp_path / "m", "--no-ledger").returncode == 0
    line = one_line_stderr(run_dptopic("refit", tmp_path / "m", "--topics", "61", "--out", tmp_path / "x"))
    assert "--topics 61" in line and "n_topics" not in line
    r = _train(corpus_file, tmp_path / "p", "--no-ledger", "--public-corpus", corpus_file / "public.txt")
    assert r.returncode == 0, r.stderr
    line = one_line_stderr(run_dptopic("refit", tmp_path / "p", "--topics", "3", "--out", tmp_path / "y"))
    assert "--public-corpus" in line and not (tmp_path / "y").exists()


def test_the_json_fields_are_those_privacy_md_documents(corpus_file, tmp_path):
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "privacy.md").read_text()
    section = text[text.index("## The dataset ledger"):]
    documented = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))
    L = tmp_path / "l.sqlite"
    assert _train(corpus_file, tmp_path / "m", "--dataset", "posts", ledger=L).returncode == 0
    run_dptopic("budget", "cap", "--ledger", L, "--dataset", "posts", "--epsilon", "3")
    shown = _show(L)
    assert list(shown) == list(documented)
    (d,), (doc,) = shown["datasets"], documented["datasets"]
    assert list(d) == list(doc) and list(d["releases"][0]) == list(doc["releases"][0])
    assert list(d["cap"]) == list(doc["cap"])
    for key in list(d) + list(d["releases"][0]):
        assert f"`{key}`" in section, key


# ------------------------------------------------------------------------------- plan, persons, caps, bad ledgers
def test_plan_says_what_a_run_would_add_and_spends_nothing(corpus_file, tmp_path):
    L = tmp_path / "l.sqlite"
    assert _train(corpus_file, tmp_path / "m", "--dataset", "posts", ledger=L).returncode == 0
    assert run_dptopic("budget", "cap", "--ledger", L, "--dataset", "posts", "--epsilon", "1.6").returncode == 0
    before = L.read_bytes()
    r = run_dptopic("budget", "plan", "--ledger", L, "--dataset", "posts", "--algorithm", "docdp-cooc",
                    "--epsilon", "1")
    assert r.returncode == 0, r.stderr
    assert "nothing was read or spent" in r.stdout and "would remain" in r.stdout
    r = run_dptopic("budget", "plan", "--ledger", L, "--dataset", "posts", "--unit", "document", "--epsilon", "2",
                    "--json")
    assert r.returncode == 3 and json.loads(r.stdout)["refused"] is True
    r = run_dptopic("budget", "plan", "--ledger", L, "--dataset", "posts", "--algorithm", "docdp-cooc",
                    "--epsilon", "0.2", "--search-runs", "10", "--json")
    plan = json.loads(r.stdout)
    assert plan["trainer"].startswith("RandomStoppingSearch") and plan["epsilon"] > 0.2
    assert L.read_bytes() == before
    line = one_line_stderr(run_dptopic("budget", "plan", "--ledger", L, "--dataset", "nope", "--algorithm",
                                       "docdp-cooc", "--epsilon", "1"))
    assert "holds no dataset under --dataset nope" in line


def test_plan_in_python_reads_no_document(corpus_file, tmp_path):
    from dptopic.training.budget import plan_budget

    L = tmp_path / "l.sqlite"
    assert _train(corpus_file, tmp_path / "m", "--dataset", "posts", ledger=L).returncode == 0
    out = plan_budget("posts", algorithm="docdp-cooc", epsilon=1.0, ledger=str(L))
    (row,) = out["caps"]
    assert row["epsilon_now"] <= 1.0 + 1e-9 and 1.4 < row["epsilon_after"] < 1.5 and row["cap"] is None


def test_person_level_show_and_a_cap_per_person(tmp_path):
    rows = [{"text": f"apple banana cherry grape {w}", "author": f"a{i % 5}"}
            for i, w in enumerate(["lemon mango", "peach plum", "river ocean"] * 20)]
    path = tmp_path / "people.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    L = tmp_path / "l.sqlite"
    base = ["train", "--corpus", path, "--epsilon", "1", "--topics", "2", "--test-size", "0", "--quiet",
            "--ledger", L, "--user-field", "author"]
    assert run_dptopic(*base, "--unit", "user", "--out", tmp_path / "u").returncode == 0
    r = run_dptopic("budget", "show", "--ledger", L, "--person-level")
    assert r.returncode == 0, r.stderr
    assert "largest total of a person" in r.stdout and "people: 5" in r.stdout
    assert "outside the guarantee" in r.stdout
    r = run_dptopic("budget", "cap", "--ledger", L, "--per-person", "--epsilon", "1.2")
    assert r.returncode == 0 and "every person capped at epsilon = 1.2" in r.stdout
    r = run_dptopic(*base, "--unit", "user", "--out", tmp_path / "u2")
    assert r.returncode == 2 and "Traceback" not in r.stderr and not (tmp_path / "u2").exists()
    assert r.stderr.strip().splitlines()[-1].startswith("error: every person is capped at epsilon = 1.2")
    data = json.loads(run_dptopic("budget", "show", "--ledger", L, "--person-level", "--json").stdout)
    assert data["persons"] == 5 and data["person_cap"] == {"epsilon": 1.2, "delta": 1e-5}


@pytest.mark.parametrize("args, says", [
    (("cap", "--dataset", "typo", "--clear"), "holds no dataset under --dataset typo: nothing to clear"),
    (("cap", "--dataset", "posts", "--clear", "--delta", "1e-6"), "--clear (no cap), not both"),
    (("cap", "--epsilon", "1"), "--dataset NAME"),
    (("show", "--person-level", "--dataset", "posts"), "drop --dataset"),
    (("cap", "--per-person", "--dataset", "posts", "--epsilon", "1"),
     "--dataset and --per-person cannot be combined: keep --dataset NAME to cap that dataset's total, or --per-person"),
    (("plan", "--dataset", "posts", "--algorithm", "hdp", "--unit", "document", "--epsilon", "1"),
     "--unit picks the trainer itself: drop --algorithm, or drop --unit to choose one by hand."),
    (("cap", "--dataset", "content:abc", "--epsilon", "1"), "invalid dataset name --dataset content:abc: the ledger"
                                                             " names datasets itself"),
    (("cap", "--dataset", "Audit-Shadow:x", "--epsilon", "1"), "invalid dataset name --dataset Audit-Shadow:x"),
])
def test_budget_commands_refuse_what_they_would_ignore(corpus_file, tmp_path, args, says):
    L = tmp_path / "l.sqlite"
    assert _train(corpus_file, tmp_path / "m", "--dataset", "posts", ledger=L).returncode == 0
    before = L.read_bytes()
    assert says in one_line_stderr(run_dptopic("budget", *args, "--ledger", L))
    assert L.read_bytes() == before


@pytest.mark.parametrize("extra, says", [
    (("--no-ledger", "--dataset", "posts"), "--no-ledger records none: drop --dataset"),
    (("--algorithm", "lda", "--ledger", "L"), "--ledger records the releases of private trainers"),
    (("--algorithm", "lda", "--dataset", "posts"), "--dataset records the releases of private trainers"),
    (("--ledger", "OUT/l.sqlite"), "lies inside --out"),
    (("--dataset", "content:abc"), "invalid dataset name --dataset content:abc: the ledger names datasets itself"),
    (("--dataset", "people:1f0c9a2b7d4e6a35"), "invalid dataset name --dataset people:1f0c9a2b7d4e6a35"),
])
def test_train_refuses_ledger_flags_it_would_ignore(corpus_file, tmp_path, extra, says):
    out = tmp_path / "m"
    extra = [str(x).replace("OUT", str(out)).replace("L", str(tmp_path / "l.sqlite")) if x in ("L", "OUT/l.sqlite")
             else x for x in extra]
    r = run_dptopic("train", "--corpus", corpus_file / "docs.txt", "--format", "text", "--epsilon", "1",
                    "--topics", "2", "--test-size", "0", "--out", out, "--quiet",
                    *(["--algorithm", "docdp-cooc"] if "--algorithm" not in extra else []), *extra)
    assert says in one_line_stderr(r)
    assert not out.exists() and not (tmp_path / "l.sqlite").exists()


def test_budget_plan_takes_the_trainer_as_train_takes_it(corpus_file, tmp_path):
    """``--algorithm`` with ``--unit`` got the message for neither: both are taken where train takes both (a trainer
    that bounds a person under ``--unit user``), else refused in train's words."""
    L = tmp_path / "l.sqlite"
    assert _train(corpus_file, tmp_path / "m", "--dataset", "posts", ledger=L).returncode == 0
    r = run_dptopic("budget", "plan", "--dataset", "posts", "--algorithm", "docdp-cooc", "--unit", "user",
                    "--epsilon", "1", "--ledger", L, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["unit"] == "user"
    assert "--algorithm NAME or --unit UNIT" in one_line_stderr(
        run_dptopic("budget", "plan", "--dataset", "posts", "--epsilon", "1", "--ledger", L))


def test_a_ledger_url_is_taken_by_its_scheme_in_any_case(corpus_file, tmp_path, monkeypatch):
    """``--ledger mysql://x@y/z`` (and ``sqlite:///x.sqlite``) made a SQLite file at ./mysql:/x@y/z, and
    ``POSTGRESQL://`` was a traceback: SQLite's URL names its file, PostgreSQL's is read in any case, and any other
    scheme is refused in one line, nothing created."""
    monkeypatch.chdir(tmp_path)
    for args in (("budget", "show"), ("budget", "cap", "--dataset", "posts", "--epsilon", "1"),
                 ("train", "--corpus", corpus_file / "docs.txt", "--format", "text", "--algorithm", "docdp-cooc",
                  "--epsilon", "1", "--topics", "2", "--out", "m", "--quiet")):
        err = one_line_stderr(run_dptopic(*args, "--ledger", "mysql://x@y/z")).strip()
        assert err == ("error: --ledger mysql://x@y/z is a mysql:// URL: a ledger is a SQLite file (a path, or"
                       " sqlite:///PATH) or a PostgreSQL database (postgresql://USER@HOST/DB).")
    assert list(tmp_path.iterdir()) == []
    assert _train(corpus_file, tmp_path / "m", "--dataset", "posts", ledger="sqlite:///l.sqlite").returncode == 0
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["l.sqlite"]
    assert len(_show("SQLite:///l.sqlite")["datasets"][0]["releases"]) == 1
    r = run_dptopic("budget", "show", "--ledger", "POSTGRESQL://nobody@127.0.0.1:1/none")
    assert "Traceback" not in r.stderr and "nothing was spent" in one_line_stderr(r)


def test_train_refuses_a_damaged_ledger_before_it_reads_the_corpus(corpus_file, tmp_path, monkeypatch):
    """A damaged hashing key was refused only at the debit, after the corpus was read."""
    import sqlite3

    from dptopic.cli import train

    L = tmp_path / "l.sqlite"
    assert _train(corpus_file, tmp_path / "m0", "--dataset", "posts", ledger=L).returncode == 0
    con = sqlite3.connect(L)
    con.execute("UPDATE meta SET value = 'not hex' WHERE key = 'key'")
    con.commit()
    con.close()
    monkeypatch.setattr(train, "load_corpus", lambda *a, **k: pytest.fail("the corpus was read"))
    err = one_line_stderr(_train(corpus_file, tmp_path / "m1", "--dataset", "posts", ledger=L))
    assert "is damaged: its hashing key" in err and "nothing was spent" in err
    assert not (tmp_path / "m1").exists()


def test_a_report_trainer_refuses_ledger_flags(tmp_path):
    r = run_dptopic("train", "--algorithm", "lp", "--reports", tmp_path / "r.json", "--dataset", "posts",
                    "--out", tmp_path / "m")
    assert "contributors drew the noise" in one_line_stderr(r)


def test_reading_an_empty_file_or_a_link_loop_is_one_line_and_changes_nothing(tmp_path):
    import os

    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    assert "is an empty file, not a ledger" in one_line_stderr(run_dptopic("budget", "show", "--ledger", empty))
    assert empty.read_bytes() == b""
    loop = tmp_path / "loop.sqlite"
    os.symlink(loop, loop)
    assert "symbolic link that leads nowhere" in one_line_stderr(run_dptopic("budget", "show", "--ledger", loop))
    long = tmp_path / ("x" * 300) / "l.sqlite"
    assert "too long" in one_line_stderr(run_dptopic("budget", "cap", "--ledger", long, "--dataset", "d",
                                                     "--epsilon", "1"))


def test_show_json_of_an_edited_ledger_is_one_line(corpus_file, tmp_path):
    """Issue 75, item 13: a non-finite figure stored in the ledger gave a traceback from show --json."""
    import sqlite3

    L = tmp_path / "l.sqlite"
    assert _train(corpus_file, tmp_path / "m", "--dataset", "posts", ledger=L).returncode == 0
    con = sqlite3.connect(L)
    con.execute("UPDATE releases SET epsilon = 'inf'")
    con.commit()
    con.close()
    for extra in ((), ("--json",), ("--person-level",)):
        assert "release 1 of dataset 'posts' states epsilon 'inf'" in one_line_stderr(
            run_dptopic("budget", "show", "--ledger", L, *extra))


@pytest.mark.parametrize("source", ["fifo", "/dev/zero", "/dev/urandom"])
def test_a_corpus_that_never_ends_is_refused_without_hanging(tmp_path, source):
    """Issue 75, item 12d: with the default ledger on, the file was hashed before the check that refuses it."""
    import os

    from helpers import run_dptopic_process

    if source == "fifo":
        source = tmp_path / "pipe"
        os.mkfifo(source)
    r = run_dptopic_process("train", "--algorithm", "docdp-cooc", "--corpus", source, "--format", "text",
                            "--epsilon", "1", "--topics", "2", "--out", tmp_path / "m", timeout=60,
                            env=dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data")))
    assert str(source) in one_line_stderr(r) or "--corpus" in r.stderr
    assert not (tmp_path / "m").exists()


def test_report_reads_the_ledger_as_it_is_now(corpus_file, tmp_path):
    """Issue 75, item 17: after more releases, the report of the first model read its total as of its fit."""
    L = tmp_path / "l.sqlite"
    for i in range(3):
        assert _train(corpus_file, tmp_path / f"m{i}", "--dataset", "posts", ledger=L).returncode == 0
    r = run_dptopic("report", "--model", tmp_path / "m0", "--out", tmp_path / "r.html")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "r.html").read_text()
    assert "over 3 releases" in html and "over 1 release" not in html
    assert 'class="badge full"' not in html
    L.rename(tmp_path / "gone.sqlite")
    r = run_dptopic("report", "--model", tmp_path / "m0", "--out", tmp_path / "r2.html")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "r2.html").read_text()
    assert "as of the fit: the ledger was not read now" in html


@pytest.mark.parametrize("name", ["a\x07b", "a\nb", "two words"])
def test_an_unknown_dataset_is_named_by_its_flag_and_shown_as_typed(tmp_path, name):
    """A dataset the ledger does not hold is refused naming --dataset, its control characters escaped (never printed
    raw, so the line stays one line and names what the user gave)."""
    ledger = tmp_path / "l.sqlite"
    DatasetLedger(ledger).set_cap("x", 1.0, 1e-5)
    line = one_line_stderr(run_dptopic("budget", "show", "--ledger", str(ledger), "--dataset", name))
    assert f"holds no dataset under --dataset {name!r}:" in line, line
    line = one_line_stderr(run_dptopic("budget", "cap", "--clear", "--ledger", str(ledger), "--dataset", name))
    assert "--dataset" in line, line


def test_budget_pseudonyms_gives_each_person_their_collection_pseudonym_in_a_private_file(tmp_path):
    import csv
    import stat

    pytest.importorskip("cryptography")
    from dptopic.dataset_ledger.pseudonyms import COLLECTION

    people = ["ana@example.org", "Doe, Jo <jo@example.org>"]
    (tmp_path / "ids.txt").write_text("\n".join(people) + "\n")
    args = ["budget", "pseudonyms", "--ids", tmp_path / "ids.txt", "--ledger", tmp_path / "l.sqlite", "--out",
            tmp_path / "p.csv"]
    r = run_dptopic(*args)
    assert r.returncode == 0 and "2 pseudonyms" in r.stdout, r.stderr
    rows = list(csv.reader((tmp_path / "p.csv").open()))
    assert rows == [["id", "pseudonym"], *map(list, zip(people, DatasetLedger(tmp_path / "l.sqlite").pseudonyms(
        people, COLLECTION)))]
    assert stat.S_IMODE((tmp_path / "p.csv").stat().st_mode) == 0o600
    again = run_dptopic(*args)
    assert again.returncode == 2 and "--out" in again.stderr and "never overwritten" in again.stderr
    (tmp_path / "twice.txt").write_text("a@x\nA@x\n")
    bad = run_dptopic("budget", "pseudonyms", "--ids", tmp_path / "twice.txt", "--ledger", tmp_path / "l.sqlite",
                      "--out", tmp_path / "q.csv")
    assert bad.returncode == 2 and "lines 1 and 2 name one person" in bad.stderr and not (tmp_path / "q.csv").exists()
