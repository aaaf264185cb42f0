"""Walk 47 C: FedLDA's card and exports, `privacy verify` on a model with no guarantee, train's flag checks."""
import json
import warnings

import pytest

from dptopic.cli.main import main
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.models import FedLDA
from dptopic.reporting import privacy_card, render_report


def _flat(s: str) -> str:
    return " ".join(s.split())


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("c") / "docs.txt"
    path.write_text("\n".join(_texts(60, 40, 3)) + "\n")
    return path


def _letters(i: int) -> str:
    return "word" + "".join("abcdefghij"[int(d)] for d in str(i))


def _texts(n_docs, vocab_size, seed):
    c, _, _, _ = lda_corpus(n_docs=n_docs, vocab_size=vocab_size, n_topics=3, doc_length=12, seed=seed)
    return [" ".join(_letters(w) for w in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


def _fit(exclusion="none", **kw):
    from dptopic.corpus import Corpus

    c = Corpus.from_texts(_texts(40, 30, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FedLDA(n_topics=3, rounds=2, pad_length=kw.pop("pad_length_", 8), n_clients=10, exclusion=exclusion,
                      verbose=0, seed=0, **kw).fit(c)


@pytest.fixture(scope="module")
def tail_model():
    return _fit("tail", epsilon_per_entry=5.0)


@pytest.fixture(scope="module")
def none_model():
    return _fit("none", epsilon_per_entry=5.0, report_words=6)


# 1 ------------------------------------------------------------------------------------------------------------
def test_tail_card_names_the_rule_s_reasons_before_the_vocabulary(tail_model):
    card = privacy_card(tail_model.privacy_, "FedLDA")
    reasons = card.get("partial_reasons") or []
    if card["guarantee"] == "partial":
        note = card["guarantee_note"]
        assert note.index("Zipf") < note.index("topic label") < note.index("vocabulary")
    else:   # the tail rule's events added up to no guarantee: the events' unit, labelled, in the card and the page
        assert card["privacy_unit"] == "user" and "NO (epsilon, delta) guarantee" in card["privacy_unit_note"]
        html = render_report(title="t", trainer="FedLDA", card=card, topics=[[("a", 1.0)]])
        assert "<th>privacy unit</th><td>user" in html and "none: no differential privacy guarantee" not in html
        assert not reasons


def test_floor_card_with_a_public_vocabulary_still_names_the_labels():
    rep = {"private": True, "epsilon": 10.0, "delta": 1e-5, "epsilon_method": "PLD", "guarantee": "partial",
           "unit": "user", "epsilon_per_entry": 1.0, "vocabulary_source": "supplied",
           "parameters": {"exclusion": "floor", "replacement": "topic", "entries_per_round": 5, "rounds": 2},
           "events": []}
    card = privacy_card(rep, "FedLDA", check=False)
    assert card["guarantee"] == "partial" and "topic label" in card["guarantee_note"]
    assert "vocabulary" not in card["guarantee_note"] and "Zipf" not in card["guarantee_note"]


# 2 ------------------------------------------------------------------------------------------------------------
def test_tiny_failure_rate_is_refused_before_any_work():
    with pytest.raises(DPTopicError, match=r"eta rounds to 1"):
        FedLDA(exclusion="tail", failure_rate=1e-9, verbose=0)._validate()


def test_cli_tiny_failure_rate_names_the_flag(corpus_file, tmp_path, capsys):
    rc = main(["train", "--algorithm", "fed", "--corpus", str(corpus_file), "--topics", "3", "--rounds", "1",
               "--exclusion", "tail", "--failure-rate", "1e-9", "--pad-length", "8", "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 2 and "--failure-rate" in err and len(err.strip().splitlines()) == 1, err


def test_floor_epsilon_too_small_names_the_failure_rate():
    c, _, _, _ = lda_corpus(n_docs=20, vocab_size=2000, n_topics=3, doc_length=10, seed=1)
    m = FedLDA(n_topics=3, rounds=1, pad_length=8, exclusion="floor", epsilon_per_entry=3.0, failure_rate=1e-3, verbose=0)
    with pytest.raises(DPTopicError) as e:
        m.fit(c)
    assert "variant='coincide'" in str(e.value) and "failure_rate=0.001 (it sets the floor" in str(e.value)


# 4 / B4 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("flag", [["--replacement", "topic"], ["--variant", "coincide"], ["--failure-rate", "0.5"]])
def test_floor_tail_flags_are_refused_with_exclusion_none(flag, corpus_file, tmp_path, capsys):
    rc = main(["train", "--algorithm", "fed", "--corpus", str(corpus_file), "--topics", "3", "--out",
               str(tmp_path / "m")] + flag)
    err = capsys.readouterr().err
    assert rc == 2 and f"{flag[0]} applies to --exclusion floor/tail only" in err and "Traceback" not in err


def test_parallel_with_dask_is_refused(corpus_file, tmp_path, capsys):
    rc = main(["train", "--corpus", str(corpus_file), "--dask-local", "1", "--parallel", "partition", "--out",
               str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 2 and "--parallel has no effect on a Dask cluster" in err


def test_none_rule_card_leaves_out_the_rrp_parameters(none_model):
    params = none_model.privacy_["parameters"]
    assert not {"eta", "delta0", "failure_rate_delta", "gamma", "variant", "replacement"} & set(params)
    assert params["report_words"] == 6 and params["vocab_size"] == len(none_model.vocabulary_)


# 5 / 6c -------------------------------------------------------------------------------------------------------
def test_exports_say_which_words_were_learned(none_model, tmp_path, capsys):
    none_model.save(tmp_path / "m")
    assert main(["topics", "--model", str(tmp_path / "m"), "--format", "json"]) in (0, None)
    doc = json.loads(capsys.readouterr().out)
    V = len(none_model.vocabulary_)
    assert doc["report_words"] == 6 and f"first 6 of {V} words" in doc["report_words_note"]
    assert main(["topics", "--model", str(tmp_path / "m"), "--format", "csv"]) in (0, None)
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "privacy card" in err and "first 6" in err
    docs = tmp_path / "d.txt"
    docs.write_text("\n".join(" ".join(none_model.vocabulary_.words[:5]) for _ in range(3)) + "\n")
    out = tmp_path / "vis.json"
    assert main(["export", "--to", "pyldavis", "--model", str(tmp_path / "m"), "--corpus", str(docs),
                 "--corpus-public", "--out", str(out)]) in (0, None)
    vis = json.loads(out.read_text())
    assert vis["report_words"] == 6 and "shared fill" in vis["privacy_note"]


# 7 ------------------------------------------------------------------------------------------------------------
def test_fed_page_shows_the_per_user_arithmetic(none_model):
    card = privacy_card(none_model.privacy_, "FedLDA")
    html = _flat(render_report(title="t", trainer="FedLDA", card=card, topics=[[("a", 1.0)]]))
    m = none_model._config().n_entries
    assert f"x {m} entries per user" in html and "paid once whatever the 2 rounds" in html
    assert "per report" in html and "first 6 of" in html
    assert "(one word)" not in card["figures"]["epsilon_nominal"]["what"]


# 8 ------------------------------------------------------------------------------------------------------------
def test_verify_on_no_guarantee_is_not_verified(tmp_path, capsys):
    from dptopic.accounting.ledger import claims_no_guarantee
    from dptopic.cli.privacy import NO_GUARANTEE_EXIT, _events_text

    assert _events_text({"events": [{"count": 256}]}) == "1 event repeated 256 times"
    m = _fit("tail", epsilon_per_entry=5.0, pad_length_=60)
    assert claims_no_guarantee(m.privacy_)      # 120 entries' own deltas add up past 1
    m.save(tmp_path / "t")
    assert main(["privacy", "verify", str(tmp_path / "t")]) == NO_GUARANTEE_EXIT == 3
    out = _flat(capsys.readouterr().out)
    assert "consistent, but NO (epsilon, delta) guarantee" in out and "verified:" not in out
    assert "1 event repeated 120 times" in out


# 6d -----------------------------------------------------------------------------------------------------------
def test_gensim_coherence_recipe_runs_as_written(tmp_path, monkeypatch, capsys):
    # the recipe of docs/results.md ("Coming from gensim"), executed as the page prints it, on a saved model
    pytest.importorskip("gensim")
    from pathlib import Path

    from dptopic import LDA

    page = (Path(__file__).resolve().parents[1] / "docs" / "results.md").read_text()
    block = page.split("### Coming from gensim", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    lines = [f"galaxy orbit rocket launch moon crater planet {'star' if i % 2 else 'comet'}" if i % 3 else
             f"senate vote bill law congress court judge {'tax' if i % 2 else 'budget'}" for i in range(40)]
    monkeypatch.chdir(tmp_path)
    LDA(n_topics=2, n_iter=30, seed=0, verbose=0).fit(lines[:30]).save("runs/demo")
    Path("heldout.txt").write_text("\n".join(lines[30:]) + "\n")
    exec(compile(block, "docs/results.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.count("c_v ") == 1 and out.count("c_npmi ") == 1, out


def test_demo_help_describes_every_option_and_topic_tables_name_their_model(capsys):
    from dptopic.cli.main import main

    with pytest.raises(SystemExit) as e:
        main(["demo", "--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "hybrid differentially private LDA" in out and "non-private LDA on the same split" in out
    for flag, phrase in (("--topics", "topics K"), ("--iterations", "Gibbs sweeps"), ("--epsilon-laplace", "eps_L"),
                         ("--epsilon-inherent", "eps_I"), ("--jobs", "threads"), ("--show-topics", "private topics"),
                         ("--quiet", "no progress bars")):
        assert phrase in out, flag
    import numpy as np

    from dptopic import LDA
    from dptopic.cli._common import make_console, print_topics

    X = np.array([[3, 0, 1], [0, 2, 2], [1, 1, 0]])
    m = LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(X, vocabulary=["apple", "berry", "cherry"])
    print_topics(m, 2, console=make_console())
    assert "words per topic of LDA" in " ".join(capsys.readouterr().out.split())


def test_train_says_how_the_held_out_part_was_chosen(tmp_path, capsys):
    # word-level trainers hold out by position, the others by each document's words: two runs a user compares may
    # then hold out different documents, and the corpus line says which split each used
    from dptopic.cli.main import main

    f = tmp_path / "d.txt"
    f.write_text("".join(f"galaxy orbit rocket launch planet{'s' * (i % 3)} moon crater\n" for i in range(30)))
    said = {}
    for algo in ("lda", "hdp"):
        assert main(["train", "--algorithm", algo, "--corpus", str(f), "--topics", "2", "--iterations", "2",
                     "--quiet", "--out", str(tmp_path / algo)]) in (0, None)
        said[algo] = " ".join(capsys.readouterr().out.split())
    assert "held out by each document's words" in said["lda"] and "held out by position" not in said["lda"]
    assert "held out by position, as the word-level trainers split" in said["hdp"]


def test_local_reports_state_the_word_level_figure_of_a_whole_contributor():
    # R reports of one contributor, one presence bit changed in each: R x eps_word by basic composition, labelled as
    # the word-level relation and as not the document-level guarantee
    import math

    from dptopic.accounting.local import f_from_epsilon, local_privacy_report

    rep = local_privacy_report(f_from_epsilon(3.0), 500, reports_per_contributor=7)
    assert math.isclose(rep["epsilon_word_contributor"], 7 * 3.0, rel_tol=1e-9)
    rel = rep["epsilon_word_contributor_relation"]
    assert "presence of one vocabulary word" in rel and "not the document-level guarantee" in rel
    assert rep["epsilon_doc"] > rep["epsilon_word_contributor"]
