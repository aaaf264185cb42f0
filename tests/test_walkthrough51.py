"""Walk-through 51 (a new user's own CSV / JSONL / .txt folder, the CLI and the scikit-learn API): one regression
test per fix."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.cli.main import main
from dptopic.errors import DPTopicError

WORDS = ["recipe", "oven", "flour", "sugar", "storm", "rain", "wind", "cloud", "market", "stock", "bank", "fund"]


def _texts(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS[4 * (i % 3):4 * (i % 3) + 4], 10)) for i in range(n)]


def _err(capsys, *argv):
    """Run the CLI in this process; its stderr must be one 'error:' line, exit status 2."""
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("error:"), err
    return err[0]


def test_a_prepared_npz_read_as_jsonl_or_csv_is_called_binary_not_a_latin1_text(tmp_path, capsys):
    from dptopic.corpus import Corpus

    npz = tmp_path / "docs.npz"
    Corpus.from_texts(_texts()).save(npz)
    for fmt in ("jsonl", "csv"):
        line = _err(capsys, "corpus", "info", npz, "--format", fmt)
        assert "binary file" in line and "--format npz" in line and "iconv" not in line, line
    with pytest.raises(DPTopicError, match="binary file") as e:
        Corpus.from_jsonl(npz)
    assert "Windows-1252" not in str(e.value)
    latin = tmp_path / "l1.csv"               # real Latin-1 text keeps its own advice
    latin.write_bytes("text\ncafé recipe oven\n".encode("latin-1"))
    assert "iconv" in _err(capsys, "corpus", "info", latin)


def test_a_csv_without_the_text_column_names_the_flag_that_picks_it(tmp_path, capsys):
    p = tmp_path / "docs.csv"
    p.write_text("id,body,label\n" + "".join(f"{i},{t},x\n" for i, t in enumerate(_texts(10))))
    line = _err(capsys, "corpus", "info", p)
    assert "no column 'text'" in line and "--text-field" in line, line
    assert "--label-field" in _err(capsys, "corpus", "info", p, "--text-field", "body", "--label-field", "lab")
    from dptopic.corpus import Corpus

    with pytest.raises(DPTopicError, match="set text_column"):
        Corpus.from_csv(p)


def test_docdpem_verbose_shows_a_bar_over_its_em_iterations(monkeypatch):
    import contextlib

    import dptopic.models.docdp as docdp

    calls = []

    @contextlib.contextmanager
    def spy(total, description, verbose=1, transient=False):
        class Bar:
            def advance(self, n=1, **fields):
                calls.append(("advance", verbose))
        calls.append(("open", total, verbose))
        yield Bar()

    monkeypatch.setattr(docdp, "progress_bar", spy)
    X = dptopic.CountVectorizer().fit_transform(_texts())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.DocDPEM(n_topics=2, n_iter=3, seed=0, verbose=1).fit(X)
    assert calls[0] == ("open", 3, 1) and calls.count(("advance", 1)) == 3


def test_the_sklearn_page_names_every_estimator_whose_verbose_default_is_0():
    import inspect
    from pathlib import Path

    import dptopic.models as M

    page = (Path(__file__).resolve().parents[1] / "docs" / "sklearn.md").read_text()
    para = page[page.index("`verbose=1` by default"):]
    para = para[:para.index("\n- ") if "\n- " in para else para.index("\n\n")]
    quiet = [n for n in dir(M) if inspect.isclass(getattr(M, n)) and hasattr(getattr(M, n), "get_params")
             and inspect.signature(getattr(M, n)).parameters.get("verbose") is not None
             and inspect.signature(getattr(M, n)).parameters["verbose"].default == 0]
    assert quiet and all(f"`{n}`" in para for n in quiet), (quiet, para)


@pytest.mark.parametrize("argv, flag", [
    (["train"], "--jobs"),
    (["audit"], "--topics"), (["audit"], "--iterations"), (["audit"], "--epsilon"), (["audit"], "--delta"),
    (["experiment", "topic-attack"], "--targets"), (["experiment", "olp"], "--iterations"),
])
def test_help_states_the_default(argv, flag):
    import argparse

    from dptopic.cli.main import build_parser

    parser = build_parser()
    for name in argv:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    action = next(a for a in parser._actions if flag in a.option_strings)
    assert "default" in action.help.replace("by default", ""), action.help


def test_evaluate_compare_to_labels_the_match_of_a_private_model(tmp_path, capsys):
    from dptopic.corpus import Corpus

    corpus = Corpus.from_texts(_texts(200))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.DocDPCooccurrence(n_topics=3, seed=0).fit(corpus).save(tmp_path / "private")
    dptopic.LDA(n_topics=3, n_iter=5, seed=0, verbose=0).fit(corpus).save(tmp_path / "plain")
    test = tmp_path / "test.jsonl"
    test.write_text("".join(json.dumps({"text": t}) + "\n" for t in _texts(20, seed=1)))
    base = ["evaluate", tmp_path / "private", "--corpus", test, "--compare-to", tmp_path / "plain",
            "--reference-public"]
    assert main([str(a) for a in base + ["--json"]]) == 0
    q = json.loads(capsys.readouterr().out)
    assert "outside the guarantee" in q["match"]["note"] and "note" not in q     # the corpus is public
    assert main([str(a) for a in base]) == 0
    assert "outside the guarantee" in " ".join(capsys.readouterr().out.split())
    assert main([str(a) for a in ["evaluate", tmp_path / "plain", "--corpus", test, "--compare-to",
                                  tmp_path / "private", "--json"]]) == 0
    assert "note" not in json.loads(capsys.readouterr().out)["match"]        # a non-private model: no label


@pytest.mark.parametrize("make, suggestion", [
    (lambda: dptopic.LDA(n_topic=5), "n_topics"),
    (lambda: dptopic.DocDPCooccurrence(epsilion=2), "epsilon"),
    (lambda: dptopic.HDPLDA.from_budget(1000, 1e-5, 20, n_topic=5), "n_topics"),
    (lambda: dptopic.for_unit("document", 1, n_topic=5), "n_topics"),
])
def test_a_misspelt_parameter_is_one_line_that_names_the_right_one(make, suggestion):
    with pytest.raises(DPTopicError, match=f"did you mean {suggestion}=") as e:
        make()
    assert isinstance(e.value, TypeError)          # still what Python and scikit-learn raise for it
    with pytest.raises(TypeError, match="its parameters are"):
        dptopic.for_unit("document", 1, algorithm="docdp")


# ------------------------------------------------------------------ left by the walk-through, fixed after it
def test_prepare_shards_into_a_name_ending_npz_is_refused_before_any_work(tmp_path, capsys):
    from dptopic.cli.main import main

    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(f"apple banana cherry {i}" for i in range(20)) + "\n")
    code = main(["corpus", "prepare", "--corpus", str(docs), "--out", str(tmp_path / "shards.npz"), "--shards", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "names a .npz file" in err and "--out" in err
    assert len([ln for ln in err.strip().splitlines() if ln.strip()]) == 1
    assert not (tmp_path / "shards.npz").exists()
    assert main(["corpus", "prepare", "--corpus", str(docs), "--out", str(tmp_path / "shards"), "--shards", "2"]) in (0, None)


def test_help_states_the_topics_format_and_fedlda_max_docs_defaults(capsys):
    from dptopic.cli.main import main

    for argv, needle in ((["topics", "--help"], "the default"), (["experiment", "fedlda", "--help"], "default 3000")):
        try:
            main(argv)
        except SystemExit:
            pass
        assert needle in " ".join(capsys.readouterr().out.split())
