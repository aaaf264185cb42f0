"""The command line's console: off a terminal, prose is left in whole lines (rich broke it at 80 columns while the
tables beside it were laid out wider, leaving a stray '; ' at the end of the corpus line); load_corpus's errors name
the command line's flags."""
import argparse
import csv
import importlib.util
import io
import json

import pytest

import dptopic
from dptopic import CDPLDA, CDPLDAPlus
from dptopic.cli._run_common import load_corpus
from dptopic.cli._training_output import corpus_line
from dptopic.errors import DPTopicError
from dptopic.reporting.terminal import make_console


def test_prose_is_not_broken_at_80_columns_off_a_terminal(tiny, capsys):
    console = make_console()            # stdout is captured: not a terminal
    train, test = tiny.corpus.train_test_split(0.2, seed=0)
    console.print(corpus_line(tiny.corpus, train, test, private=True))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and len(lines[0]) > 80 and lines[0].startswith("corpus: ") and lines[0].rstrip() == lines[0]
    assert "dropped); train " in lines[0]


def test_a_scheduler_lost_mid_run_is_named_in_one_line(capsys, monkeypatch):
    # the CLI printed "error: CommClosedError: ConnectionPool closing."
    import argparse

    from distributed.comm.core import CommClosedError

    from dptopic.cli import _common
    from dptopic.cli import main as cli_main

    def lost(a):
        raise CommClosedError("ConnectionPool closing.")

    monkeypatch.setattr(_common, "resolve_model_arg", lambda a: None)
    assert cli_main._dispatch(argparse.Namespace(func=lost)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: lost the connection to the Dask scheduler")


DOCS = ["The café in Zürich serves coffee and cake", "Straße strasse Große große", "İstanbul istanbul ISTANBUL",
        "cafe\u0301 café CAFÉ Café résumé", "ﬁnance ｗｏｒｄ word finance", "Hello, world! hello again world"]


# ------------------------------------------------------------------ the same documents in every format
def test_same_documents_as_jsonl_csv_text_and_folder_give_one_corpus(tmp_path):
    with open(tmp_path / "c.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"text": d}) + "\n" for d in DOCS)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["text"])
    w.writerows([d] for d in DOCS)
    (tmp_path / "c.csv").write_text(buf.getvalue(), encoding="utf-8")
    (tmp_path / "c.txt").write_text("\r\n".join(DOCS) + "\r\n", encoding="utf-8")
    (tmp_path / "dir").mkdir()
    for i, d in enumerate(DOCS):
        (tmp_path / "dir" / f"{i}.txt").write_text(d, encoding="utf-8")
    from dptopic.cli._run_common import load_corpus

    got = []
    for name in ("c.jsonl", "c.csv", "c.txt", "dir"):
        c = load_corpus(str(tmp_path / name), stop_words="none")
        got.append((c.vocabulary.words, c.to_bow().toarray().tolist()))
    assert all(g == got[0] for g in got[1:])
    words = got[0][0]
    # one entry each for the NFC/NFD/upper-case spellings, the ligature and the full-width letters, Turkish İ
    assert words.count("café") == 1 and "istanbul" in words and "finance" in words and "word" in words
    assert "straße" in words and "große" in words   # str.lower, not case folding (docs/preprocessing.md)



def _privacy_text(report) -> str:
    from rich.console import Console

    from dptopic.reporting.terminal import print_privacy

    buf = io.StringIO()
    print_privacy(report, Console(file=buf, width=200))
    return buf.getvalue()


# ----------------------------------------------------------------- 1: odd values in a privacy report's extra fields
ODD = [{"epsilon_nominal": "x"}, {"claimed_by_paper": 5}, {"count_release_epsilon": {"a": 1}},
       {"count_release_epsilon": 7}, {"warnings": 5}, {"epsilon_basic": "abc"}, {"epsilon_pld": "abc"},
       {"epsilon_rdp": [1]}, {"epsilon_paper": "x"}, {"per_document": 5}, {"per_document": {"examples": 3}},
       {"per_document": {"rule": "r", "examples": {"10": "x"}}}, {"epsilon_nominal": 10**400}]


@pytest.mark.parametrize("private", [True, False])
@pytest.mark.parametrize("odd", ODD, ids=[next(iter(o)) + str(i) for i, o in enumerate(ODD)])
def test_print_privacy_shows_odd_values_as_they_are(hdp_model_dir, private, odd):
    report = dict(json.loads((hdp_model_dir / "model.json").read_text())["privacy"], **odd)
    report["private"] = private
    text = _privacy_text(report)
    assert "Privacy report" in text


@pytest.fixture(scope="module")
def small(planted):
    return planted.corpus.subset(range(80))


# ----------------------------------------------------------- 5. CDP reports
@pytest.mark.parametrize("cls", [CDPLDA, CDPLDAPlus])
def test_cdp_reports_not_private_with_partial_count_figure(small, cls, capsys):
    rep = cls(4, paper_epsilon=1.0, n_iter=3, verbose=0).fit(small).privacy_
    assert rep["private"] is False and rep["epsilon"] == float("inf") and rep["delta"] is None
    assert rep["unit"] == "word" and "replacement" in rep["neighbouring_relation"] and rep["theorem"]
    part = rep["count_release_epsilon"]
    assert "partial" in part["label"] and part["epsilon_basic"] == pytest.approx(2.0 * rep["parameters"]["noise_releases"])
    assert part["epsilon_pld"] <= part["epsilon_basic"] + 1e-9 and part["delta"] == 1e-5
    from dptopic.reporting.terminal import print_privacy

    print_privacy(rep)
    out = capsys.readouterr().out
    assert "NO" in out and "partial figure" in out and "nominal" in out


def test_the_clis_no_cap_is_the_corpus_no_cap():
    """--max-vocab all stands for the cap data_cut_of takes as none (the CLI keeps its own copy of the number so that
    its light imports stay light)."""
    from dptopic.cli._common import NO_VOCAB_CAP, max_vocab_arg
    from dptopic.corpus.corpus import NO_CAP

    assert NO_VOCAB_CAP == NO_CAP == max_vocab_arg("all")


@pytest.mark.parametrize("exc", [OSError("Timed out trying to connect to tcp://127.0.0.1:18786 after 20 s")])
def test_a_scheduler_lost_after_the_reconnect_timeout_is_one_line(capsys, monkeypatch, exc):
    # item 2: distributed raises a plain OSError once its reconnect time-out is over; the CLI printed
    # "error: OSError: Timed out trying to connect ..." instead of its scheduler-lost line
    from dptopic.cli import _common
    from dptopic.cli import main as cli_main

    def lost(a):
        raise exc

    monkeypatch.setattr(_common, "resolve_model_arg", lambda a: None)
    assert cli_main._dispatch(argparse.Namespace(func=lost, scheduler="tcp://127.0.0.1:18786", dask_local=None)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: lost the connection to the Dask scheduler")


@pytest.mark.parametrize("exc", [FileNotFoundError(2, "No such file or directory", "s3://bucket/x.npz"),
                                 TimeoutError("lock timed out")])
def test_an_ordinary_os_error_on_a_cluster_run_keeps_its_own_line(capsys, monkeypatch, exc):
    # a missing file whose name holds "://", or a time-out of something else, is not a lost scheduler
    from dptopic.cli import _common
    from dptopic.cli import main as cli_main

    def fails(a):
        raise exc

    monkeypatch.setattr(_common, "resolve_model_arg", lambda a: None)
    assert cli_main._dispatch(argparse.Namespace(func=fails, scheduler="tcp://127.0.0.1:18786", dask_local=None)) == 2
    err = capsys.readouterr().err.strip()
    assert "Dask scheduler" not in err and err.startswith(f"error: {type(exc).__name__}"), err


def test_an_os_error_off_the_cluster_keeps_its_own_line(capsys, monkeypatch):
    from dptopic.cli import _common
    from dptopic.cli import main as cli_main

    def denied(a):
        raise PermissionError(13, "Permission denied", "/x/model")

    monkeypatch.setattr(_common, "resolve_model_arg", lambda a: None)
    assert cli_main._dispatch(argparse.Namespace(func=denied, scheduler=None, dask_local=None)) == 2
    assert capsys.readouterr().err.strip() == "error: PermissionError: Permission denied (/x/model)"


def test_the_terminal_card_of_a_report_without_a_guarantee_shows_replayed_sweeps(capsys):
    # CDP-LDA+'s report (no proven guarantee) took a branch of print_privacy that left replayed_iterations out
    from dptopic.reporting.terminal import make_console, print_privacy

    print_privacy({"private": False, "mode": "CDP-LDA+", "scope": "s", "replayed_iterations": 2},
                  make_console())
    assert "replayed_iterations 2" in " ".join(capsys.readouterr().out.replace("│", " ").split())


def test_max_vocab_all_goes_with_a_private_vocabulary():
    from argparse import Namespace

    from dptopic.cli._common import NO_VOCAB_CAP, refuse_data_cuts

    refuse_data_cuts(Namespace(max_vocab=NO_VOCAB_CAP, min_df=None), "--private-vocabulary chooses the words")
    with pytest.raises(DPTopicError, match="--max-vocab"):
        refuse_data_cuts(Namespace(max_vocab=500, min_df=None), "--private-vocabulary chooses the words")


def test_topic_quality_reads_texts_as_evaluate_does(tmp_path):
    from dptopic.evaluation import topic_quality

    texts = ["The rocket reached orbit and the moon", "a doctor treats the disease of the patient",
             "the moon and the rocket orbit", "the patient saw the doctor about a disease"] * 15
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(dptopic.Corpus.from_texts(texts, stop_words=None))
    assert "the" in m.vocabulary_.words          # a stop word the model kept: text must be read with it
    texts = texts + ["nothing here matches"] * 5  # documents with none of the model's words: dropped, as evaluate does
    from dptopic.cli._run_common import load_corpus

    f = tmp_path / "ref.txt"
    f.write_text("\n".join(texts))
    ref = load_corpus(str(f), "text", None, "text", None, vocabulary=m.vocabulary_, into_model=True)
    assert ref.n_docs == 60
    assert topic_quality(m, texts) == topic_quality(m, ref)


@pytest.mark.skipif(importlib.util.find_spec("wordfreq") is None, reason="needs wordfreq")
@pytest.mark.parametrize("spec, message", [
    ("wordfreq:xx", "no word list for language 'xx'"),
    ("wordfreq:en:abc", "SIZE must be a whole number"),
    ("wordfreq:en:1", "invalid word-list size 1"),
    ("wordfreq:", "write wordfreq:LANG or wordfreq:LANG:SIZE"),
    ("wordfreq:en:10:2", "write wordfreq:LANG or wordfreq:LANG:SIZE"),
])
def test_bad_specs_are_one_line_errors(spec, message):
    from dptopic.cli._run_common import read_vocabulary

    with pytest.raises(DPTopicError) as e:
        read_vocabulary(spec)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("name,content,flag", [
    ("d.json", '["a b"]\n', "pass --format text"),                          # the reader says format='text'
    ("d.csv", '{"text": "a b"}\n{"text": "c d"}\n', "(--format jsonl,"),     # ... format='jsonl'
    ("notes.xyz", "a b\n", "--format auto reads a file by its extension"),   # ... format='auto'
])
def test_load_corpus_names_the_format_flag_where_the_reader_names_format(tmp_path, name, content, flag):
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(DPTopicError) as e:
        load_corpus(str(p))
    assert flag in str(e.value) and "format=" not in str(e.value), str(e.value)


def test_load_corpus_without_vocab_flag_names_the_vocabulary_flag_for_a_uci_file(tmp_path):
    p = tmp_path / "counts.txt"
    p.write_text("1\n2\n2\n1 1 1\n1 2 1\n")
    with pytest.raises(DPTopicError) as e:
        load_corpus(str(p), "uci", vocab_settable=False)
    assert "(this command reads the UCI vocabulary from there; --vocabulary is the public word list" in str(e.value)


@pytest.mark.parametrize("supported, said", [
    ([False] * 20, "None of the 20 topics stands above the noise"), ([True] + [False] * 19, "1 of 20 topics stands"),
    ([True] * 3 + [False] * 17, "3 of 20 topics stand"), ([True] * 4, "All 4 topics stand"),
    ([False], "The one topic does not stand above")])
def test_the_count_of_topics_above_the_noise_reads_right_for_none_one_and_all(supported, said):
    """The page said "Only 0 of 20 topics stand above the noise"."""
    from dptopic.reporting.html import _utility_warning
    from dptopic.reporting.terminal import support_summary

    assert said in support_summary(supported)
    if not all(supported):
        banner = _utility_warning(supported, {"guarantee": "none"})
        assert "Only 0" not in banner and "supports 0" not in banner
        assert (" 1 distinct topics" not in banner) and ("the other 1 are" not in banner)
