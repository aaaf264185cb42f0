"""CLI errors name the flags the user typed (``--n-words``, ``--pad-length``), never the library's Python parameters
(``n_words=``, ``pad_length``): one ``error: ...`` line on stderr, exit status 2, no traceback."""
import random
import re

import pytest

from dptopic.cli.main import main

WORDS = ("government people congress states war peace year nation country world tax economy law court army"
         " trade money bank school health").split()


def _run(argv):
    try:
        return main([str(x) for x in argv])
    except SystemExit as e:  # argparse refuses a flag's value itself
        return e.code


def _error(capsys, *argv) -> str:
    rc = _run(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert rc == 2 and len(lines) == 1, (rc, err)
    return lines[0]


# snake_case identifiers, and "name=" as in "invalid n_words=...", outside quoted text
_PY_NAME = re.compile(r"(?<![\w\-./'])([a-z][a-z0-9]*_[a-z0-9_]+|[a-z]+)=|(?<![\w\-./'])[a-z][a-z0-9]*_[a-z0-9_]+\b")


def _python_names(line: str) -> list:
    """Python-looking parameter names in an error line: ``foo_bar`` or ``foo=`` (eps_I, eps_word: the docs'
    notation, not parameters)."""
    text = re.sub(r"'[^']*'", "", line)
    return [m.group(0) for m in _PY_NAME.finditer(text) if not m.group(0).startswith(("eps_", "eps="))]


def _check(line: str, *flags: str, absent=()) -> None:
    for flag in flags:
        assert flag in line, line
    for name in absent:
        assert name not in line, line
    assert not _python_names(line), (line, _python_names(line))


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    """A tiny text corpus: 60 documents over 20 words (loads in milliseconds)."""
    rng = random.Random(0)
    p = tmp_path_factory.mktemp("corpus") / "docs.txt"
    p.write_text("\n".join(" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(60)) + "\n")
    return p


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    p = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    p.write_text("\n".join(WORDS[:12]) + "\n")
    return p


@pytest.fixture(scope="module")
def small_model(tmp_path_factory, docs):
    out = tmp_path_factory.mktemp("model") / "m"
    assert _run(["train", "--corpus", docs, "--topics", 2, "--iterations", 2, "--quiet", "--out", out]) == 0
    return out


def _train(docs, out, *extra):
    return ["train", "--corpus", docs, "--topics", 2, "--quiet", "--out", out, *extra]


# ------------------------------------------------------------------ the translation itself
def test_translate_renames_parameters_and_keeps_the_rest():
    from dptopic.cli._flags import translate

    names = {"pad_length": "--pad-length", "sample_ratio": "--sample-ratio", "exclusion": "--exclusion",
             "local_inference": "--local-inference", "epsilon": "--epsilon", "n_topics": "--topics"}
    assert translate("pad_length=1 is too small for sample_ratio=0.1: raise pad_length or sample_ratio.", names) == \
        "--pad-length 1 is too small for --sample-ratio 0.1: raise --pad-length or --sample-ratio."
    assert translate("local_inference='gibbs' applies to exclusion='none' only.", names) == \
        "--local-inference gibbs applies to --exclusion none only."
    assert translate("invalid n_topics=1.5.", names) == "invalid --topics 1.5."
    assert translate("give epsilon > 20, or a larger epsilon.", names) == "give --epsilon > 20, or a larger epsilon."
    # paths, flags and names the user typed himself stay as they are
    kept = "file '/tmp/pad_length.txt' and --pad-length and 'sample_ratio'"
    assert translate(kept, names) == kept
    assert translate("LDA has no parameter 'x'; valid: n_topics.", names, keep="has no parameter") == \
        "LDA has no parameter 'x'; valid: n_topics."
    assert translate("invalid alpha=-1: must be None or a number.", {"alpha": "--alpha"}) == \
        "invalid --alpha -1: must be a number."
    assert translate("made with fed_report_words=None, not fed_report_words=5.", {"fed_report_words": "--fed-words"}) \
        == "made with no --fed-words, not --fed-words 5."


# ------------------------------------------------------------------ train: parameters validated before any data
@pytest.mark.parametrize("extra, flags, absent", [
    (["--sample-ratio", "1.5"], ["--sample-ratio 1.5"], ["sample_ratio"]),
    (["--gamma", "0.5"], ["--gamma 0.5"], ["gamma="]),
    (["--pad-length", "99999999999"], ["--pad-length 99999999999"], ["pad_length"]),
    (["--subset-size", "-1"], ["--subset-size -1"], ["subset_size"]),
    (["--pad-length", "1", "--sample-ratio", "0.1"], ["--pad-length 1", "--sample-ratio 0.1"], ["pad_length"]),
    (["--exclusion", "tail", "--local-inference", "gibbs"], ["--local-inference gibbs", "--exclusion none"],
     ["local_inference", "exclusion="]),
    (["--exclusion", "floor", "--report-words", "10"], ["--report-words 10"], ["report_words"]),
    (["--rounds", "99999999999"], ["--rounds 99999999999"], ["rounds="]),
    (["--jobs", "300"], ["--jobs", "from 1 to 256, got 300"], ["n_jobs", "None"]),  # refused by the flag itself
    (["--beta", "1e300"], ["--beta"], ["beta="]),
])
def test_train_fed_parameters_name_their_flags(capsys, tmp_path, docs, extra, flags, absent):
    line = _error(capsys, *_train(docs, tmp_path / "m", "--algorithm", "fed", "--rounds", 1, *extra))
    _check(line, *flags, absent=absent)


def test_train_fed_user_budget_errors_name_user_budget(capsys, tmp_path, docs):
    line = _error(capsys, *_train(docs, tmp_path / "m", "--algorithm", "fed", "--rounds", 1, "--user-budget", "1e12"))
    _check(line, "--user-budget 1e+12", "too large", absent=["pad_length", "--pad-length"])
    line = _error(capsys, *_train(docs, tmp_path / "m", "--algorithm", "fed", "--rounds", 1, "--user-budget", "1e-9"))
    _check(line, "--user-budget 1e-09", "too small", absent=["epsilon="])


@pytest.mark.parametrize("extra, flags, absent", [
    (["--algorithm", "svi", "--noise-multiplier", "1e-9"], ["--noise-multiplier 1e-09"], ["noise_multiplier"]),
    (["--algorithm", "svi", "--epsilon", "1", "--sampling-rate", "1e-12", "--epochs", "1"],
     ["--epochs 1", "--sampling-rate 1e-12"], ["n_epochs", "sampling_rate"]),
    (["--algorithm", "svi", "--epsilon", "1", "--beta", "1e-300"], ["--beta 1e-300"], ["eta=", "None"]),
    (["--algorithm", "online-vb", "--epochs", "1e9"], ["--epochs"], ["n_epochs"]),
    (["--algorithm", "docdp-cooc", "--epsilon", "1", "--n-words", "100000"], ["--n-words 100000"], ["n_words"]),
    (["--algorithm", "docdp", "--epsilon", "1e9"], ["--epsilon"], ["epsilon="]),
    (["--unit", "document", "--epsilon", "1", "--n-words", "99999999"], ["--n-words 99999999"], ["n_words"]),
    (["--algorithm", "lda", "--iterations", "99999999999"], ["--iterations 99999999999"], ["n_iter"]),
    (["--algorithm", "lda", "--iterations", 1, "--alpha", "1e300"], ["--alpha"], ["alpha="]),
    (["--algorithm", "hdp", "--iterations", 2, "--epsilon-laplace", "1e9"], ["--epsilon-laplace"], ["epsilon_laplace"]),
    (["--algorithm", "hdp", "--iterations", 2, "--epsilon-inherent", "1e9"], ["--epsilon-inherent"],
     ["epsilon_inherent"]),
    (["--algorithm", "hdp", "--iterations", 2, "--epsilon", "1"], ["--epsilon 1", "--epsilon-inherent 10"],
     ["epsilon_inherent", "epsilon="]),
    (["--unit", "word", "--iterations", 2, "--epsilon", "1"], ["--epsilon 1"], ["epsilon_inherent", "epsilon="]),
    (["--algorithm", "lda", "--iterations", 1, "--private-vocabulary", "1e9,0.5"], ["--private-vocabulary", "(0, 500]"],
     ["eps="]),
])
def test_train_parameters_name_their_flags(capsys, tmp_path, docs, extra, flags, absent):
    line = _error(capsys, *_train(docs, tmp_path / "m", *extra))
    _check(line, *flags, absent=absent)


# ------------------------------------------------------------------ train: errors met while fitting
@pytest.mark.parametrize("extra, flags, absent", [
    (["--algorithm", "lda", "--iterations", 1, "--topics", 100], ["--topics 100"], ["n_topics"]),
    (["--algorithm", "fed", "--rounds", 1, "--clients", 100000], ["--clients 100000"], ["n_clients"]),
    (["--algorithm", "fed", "--rounds", 1, "--report-words", 1000], ["--report-words 1000"], ["report_words"]),
    (["--algorithm", "fed", "--rounds", 1, "--subset-size", 1000], ["--subset-size 1000"], ["subset_size"]),
    (["--algorithm", "docdp-cooc", "--epsilon", 1, "--n-words", 3, "--topics", 5], ["--n-words 3", "--topics 5"],
     ["n_words", "n_topics"]),
    (["--algorithm", "docdp-cooc", "--epsilon", 1, "--background-share", 0.5],
     ["--topics 2", "--background-share off"], ["n_topics", "n_background"]),
    (["--algorithm", "cdp", "--iterations", 1, "--paper-epsilon", "1e-13"], ["--paper-epsilon", "too small"], ["scale="]),
    (["--algorithm", "cdp", "--iterations", 1, "--paper-epsilon", "1e9"], ["--paper-epsilon", "too large"],
     ["sensitivity/scale)="]),
    (["--algorithm", "lda", "--iterations", 1, "--min-df", 1000], ["--min-df 1000"], ["min_df", "max_df"]),
    (["--algorithm", "lda", "--iterations", 1, "--min-df", 0.9, "--max-df", 0.1], ["--min-df 0.9", "--max-df 0.1"],
     ["min_df", "max_df"]),
    (["--algorithm", "lda", "--iterations", 1, "--max-df", 1], ["--min-df", "--max-df"], ["min_df", "min_length"]),
])
def test_train_fit_errors_name_their_flags(capsys, tmp_path, docs, extra, flags, absent):
    line = _error(capsys, *_train(docs, tmp_path / "m", *extra))
    _check(line, *flags, absent=absent)


# ------------------------------------------------------------------ local DP: randomize, lp/olp
@pytest.fixture(scope="module")
def reports(tmp_path_factory, docs, vocab):
    out = tmp_path_factory.mktemp("reports") / "reports.bin"
    assert _run(["randomize", "--vocabulary", vocab, "--corpus", docs, "--out", out, "--epsilon-word", 1]) == 0
    return out


@pytest.mark.parametrize("extra, flags, absent", [
    (["--epsilon-word", "1e-300"], ["--epsilon-word 1e-300", "too small"], ["f="]),
    (["--epsilon-word", "1e9"], ["--epsilon-word"], ["epsilon_word"]),
    (["--f", "1.5"], ["--f 1.5"], ["f="]),
    (["--unit", "document", "--epsilon-doc", "1e9"], ["--epsilon-doc"], ["epsilon="]),
])
def test_randomize_names_its_flags(capsys, tmp_path, docs, vocab, extra, flags, absent):
    line = _error(capsys, "randomize", "--vocabulary", vocab, "--corpus", docs, "--out", tmp_path / "r.bin", *extra)
    _check(line, *flags, absent=absent)


@pytest.mark.parametrize("extra, flags, absent", [
    (["--algorithm", "olp", "--prior", "none", "--lam", "2"], ["--lam 2"], ["lam="]),
    (["--algorithm", "olp", "--prior", "none", "--omega", "2"], ["--omega 2"], ["omega=", "None"]),
    (["--algorithm", "olp", "--prior", "none", "--omega", "0.3", "--sigma2", "2"], ["--omega", "--sigma2"],
     ["omega=None"]),
    (["--algorithm", "lp", "--topics", "100"], ["--topics 100"], ["n_topics"]),
])
def test_train_local_names_its_flags(capsys, tmp_path, reports, extra, flags, absent):
    line = _error(capsys, "train", "--quiet", "--iterations", 1, "--topics", 2, "--reports", reports,
                  "--out", tmp_path / "m", *extra)
    _check(line, *flags, absent=absent)


# ------------------------------------------------------------------ evaluate, demo, corpus, privacy
def test_evaluate_top_n(capsys, docs, small_model):
    line = _error(capsys, "evaluate", "--model", small_model, "--corpus", docs, "--top-n", 1)
    _check(line, "--top-n 1", absent=["top_n"])


def test_corpus_info_min_df(capsys, docs):
    line = _error(capsys, "corpus", "info", docs, "--min-df", 1000)
    _check(line, "--min-df 1000", absent=["min_df", "max_df"])


@pytest.mark.parametrize("argv, flags, absent", [
    (["privacy", "hdp", "--epsilon-inherent", "1e9"], ["--epsilon-inherent"], ["epsilon_inherent"]),
    (["privacy", "hdp", "--clip", "3", "--epsilon-laplace", "1e9"], ["--epsilon-laplace"], ["epsilon_laplace"]),
    (["privacy", "hdp", "--clip", "3", "--epsilon-laplace", "1", "--iterations", "99999999999"], ["--iterations"],
     ["n_iter"]),
    (["privacy", "hdp", "--clip", "3", "--epsilon", "1e-9"], ["--epsilon 1e-09", "--clip"], ["epsilon_inherent"]),
    (["privacy", "hdp", "--epsilon-inherent", "3", "--epsilon", "1e-9"], ["--epsilon 1e-09", "--epsilon-inherent 3"],
     ["epsilon_inherent"]),
    (["privacy", "inherent", "--n-t", "99999999999999999999", "--max-n-tprime", "1"], ["--n-t"], ["n_tok"]),
    (["privacy", "fed-report-words", "--epsilon-per-entry", "1e-9", "--vocab-size", "100", "--users", "10"],
     ["--epsilon-per-entry 1e-09"], ["epsilon="]),
])
def test_privacy_calculators_name_their_flags(capsys, argv, flags, absent):
    line = _error(capsys, *argv)
    _check(line, *flags, absent=absent)


# ------------------------------------------------------------------ audit: flags mapped, --set names kept
@pytest.mark.parametrize("extra, flags, absent", [
    (["--algorithm", "lda", "--topics", 2, "--iterations", 1, "--alpha", "0"], ["--alpha 0"], ["alpha="]),
    (["--algorithm", "lda", "--topics", 2, "--iterations", "99999999999"], ["--iterations"], ["n_iter"]),
    (["--algorithm", "lda", "--topics", 100, "--iterations", 1], ["--topics 100"], ["n_topics"]),
    (["--algorithm", "hdp", "--topics", 2, "--iterations", 1, "--epsilon-laplace", "1e9"], ["--epsilon-laplace"], ["epsilon_laplace"]),
    (["--algorithm", "lp", "--topics", 2, "--epsilon", "1e-300"], ["--epsilon 1e-300"], ["f="]),
    (["--algorithm", "lda", "--topics", 2, "--iterations", 1, "--min-df", 1000], ["--min-df 1000"], ["min_df"]),
])
def test_audit_flags(capsys, tmp_path, docs, extra, flags, absent):
    line = _error(capsys, "audit", "--corpus", docs, "--shadows", 4, "--quiet", "--out", tmp_path / "a", *extra)
    _check(line, *flags, absent=absent)


def test_audit_set_keeps_the_name_the_user_typed(capsys, tmp_path, docs):
    base = ["audit", "--corpus", docs, "--shadows", 4, "--quiet", "--out", tmp_path / "a", "--algorithm", "lda",
            "--topics", 2]
    line = _error(capsys, *base, "--iterations", 1, "--set", "n_iter=3")
    assert "--set n_iter=" in line and "--iterations" in line, line      # the clash names the flag
    line = _error(capsys, *base, "--iterations", 1, "--set", "alpha=-1")
    assert "alpha=-1" in line and "--alpha" not in line, line            # typed in --set: left as typed
    line = _error(capsys, *base, "--iterations", 1, "--set", "foo=1")
    assert "valid: n_topics" in line, line                                # the names --set takes


# ------------------------------------------------------------------ serve: fails before serving
@pytest.fixture
def no_serving(monkeypatch):
    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("starlette")

    def refuse(*a, **k):
        raise AssertionError("a bad flag value reached uvicorn.run")

    monkeypatch.setattr(uvicorn, "run", refuse)
    monkeypatch.setattr(uvicorn, "Config", _NoLoggingConfig)   # uvicorn's Config sets up logging on pytest's stderr
    monkeypatch.setattr(uvicorn.Server, "run", refuse)


class _NoLoggingConfig:
    """Stands in for ``uvicorn.Config`` in tests that stop before serving: the real one configures logging handlers on
    the ``sys.stderr`` of the moment (pytest's capture), which later tests then find closed."""

    def __init__(self, app, **kw):
        self.app, self.kw = app, kw


@pytest.mark.parametrize("extra, flags, absent", [
    (["--epsilon-word", "1", "--lam", "2"], ["--lam 2"], ["lam="]),
    (["--epsilon-word", "1", "--omega", "-1"], ["--omega -1"], ["omega="]),
    (["--epsilon-word", "1", "--train-interval", "-1"], ["--train-interval -1"], ["train_interval"]),
    (["--epsilon-word", "1", "--max-body-bytes", "1"], ["--max-body-bytes 1"], ["max_body_bytes"]),
    (["--epsilon-word", "1", "--topics", "1"], ["--topics 1"], ["n_topics"]),
    (["--epsilon-word", "1e9"], ["--epsilon-word"], ["epsilon_word"]),
    (["--epsilon-word", "1e-300"], ["--epsilon-word 1e-300"], ["f="]),
    (["--report-kind", "document", "--epsilon-doc", "1e9"], ["--epsilon-doc"], ["epsilon_doc"]),
    (["--epsilon-word", "1", "--fed-epsilon-per-entry", "1", "--fed-topics", "2", "--fed-sample-ratio", "0"],
     ["--fed-sample-ratio 0"], ["fed_sample_ratio"]),
    (["--epsilon-word", "1", "--fed-epsilon-per-entry", "1", "--fed-topics", "2", "--fed-min-updates", "-1"],
     ["--fed-min-updates -1"], ["fed_min_updates"]),
    (["--epsilon-word", "1", "--fed-epsilon-per-entry", "1e-9", "--fed-topics", "2"], ["--fed-epsilon-per-entry 1e-09"], ["epsilon="]),
    (["--epsilon-word", "1", "--fed-user-budget", "10", "--fed-topics", "2", "--fed-sample-ratio", "0"],
     ["--fed-sample-ratio 0"], ["sample_ratio"]),
    (["--epsilon-word", "1", "--fed-user-budget", "1e-9", "--fed-topics", "2"], ["--fed-user-budget 1e-09"],
     ["epsilon="]),
])
def test_serve_names_its_flags(capsys, tmp_path, vocab, no_serving, extra, flags, absent):
    line = _error(capsys, "serve", "--vocabulary", vocab, "--database", f"sqlite:///{tmp_path / 's.db'}",
                  "--topics", 2, *extra)
    _check(line, *flags, absent=absent)


def test_serve_database_bound_to_other_settings_names_the_flags(capsys, tmp_path, vocab, monkeypatch):
    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("sqlalchemy")
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, **k: setattr(self, "started", True))   # binds, serves nothing
    monkeypatch.setattr(uvicorn, "Config", _NoLoggingConfig)
    base = ["serve", "--vocabulary", vocab, "--database", f"sqlite:///{tmp_path / 's.db'}", "--topics", 2]
    assert _run(base + ["--epsilon-word", 1]) == 0
    capsys.readouterr()
    line = _error(capsys, *base, "--epsilon-word", 2)
    _check(line, "--epsilon-word 1 ", "--epsilon-word 2:", absent=["f="])
    line = _error(capsys, *base, "--epsilon-word", 1, "--fed-epsilon-per-entry", 3, "--fed-topics", 2, "--fed-report-words", 5)
    _check(line, "no --fed-report-words", "--fed-report-words 5", absent=["fed_report_words", "None"])
    other = tmp_path / "other.txt"
    other.write_text("\n".join(WORDS[5:17]) + "\n")
    line = _error(capsys, "serve", "--vocabulary", other, *base[3:], "--epsilon-word", 1)
    _check(line, "another --vocabulary", absent=["vocabulary_sha256"])


def test_serve_fed_report_words_below_two_is_refused_by_its_flag(capsys, tmp_path, vocab):
    line = _error(capsys, "serve", "--vocabulary", vocab, "--database", f"sqlite:///{tmp_path / 's.db'}",
                  "--epsilon-word", 1, "--fed-epsilon-per-entry", 1, "--fed-report-words", 1)
    _check(line, "--fed-report-words", absent=["fed_report_words"])


# ------------------------------------------------------------------ clients: no traceback for a huge timeout
@pytest.mark.parametrize("argv, flag", [
    (["submit", "--retries", "0", "--timeout", "1e300"], "--timeout"),
    (["submit", "--retries", "-1"], "--retries"),
    (["fed-client", "--retries", "0", "--poll", "1e300"], "--poll"),
    (["fed-client", "--retries", "0", "--round-timeout", "1e300"], "--round-timeout"),
])
def test_clients_refuse_unusable_numbers(capsys, docs, argv, flag):
    line = _error(capsys, argv[0], "--server", "http://127.0.0.1:9", "--corpus", docs, *argv[1:])
    assert flag in line and "argument" in line, line


# ------------------------------------------------------------------ experiments
@pytest.mark.parametrize("argv, flags, absent", [
    (["experiment", "svi", "--corpus", "demo", "--max-docs", 20, "--topics", 2, "--seeds", 1, "--sigmas", 1,
      "--sampling-rates", 0.5, "--delta", 2], ["--delta 2"], ["delta="]),
    (["experiment", "fedlda", "--tasks", "sotu", "--eps-table", 5, "--topics", 2, "--max-docs", 20, "--no-figures",
      "--seed", 0, "--rounds", "99999999999"], ["--rounds 99999999999"], ["rounds="]),
])
def test_experiment_parameters_name_their_flags(capsys, tmp_path, argv, flags, absent):
    line = _error(capsys, *argv, "--out", tmp_path / "x")
    _check(line, *flags, absent=absent)
    assert not (tmp_path / "x").exists()      # a failed experiment leaves no marked folder behind


@pytest.mark.parametrize("argv, flags, absent", [
    (["experiment", "lira", "--corpus", "demo", "--subsample", 20, "--shadows", 4, "--max-vocab", "1"],
     ["--max-vocab"], ["max_vocab"]),
    (["experiment", "lira", "--corpus", "demo", "--subsample", 20, "--shadows", 4, "--private-vocabulary", "1e9"],
     ["--private-vocabulary", "(0, 500]"], ["sensitivity"]),
])
def test_experiment_flags_checked_by_argparse(capsys, tmp_path, argv, flags, absent):
    line = _error(capsys, *argv, "--out", tmp_path / "x")
    _check(line, *flags, absent=absent)


def test_experiment_flag_names_leave_dp_set_names_alone():
    import argparse

    from dptopic.cli.experiment import experiment_flag_names

    a = argparse.Namespace(dp_set=["sampling_rate=5", "n_topics=3"])
    names = experiment_flag_names("lira", a)
    assert names["n_iter"] == "--cgs-iterations" and "n_topics" not in names
    assert experiment_flag_names("fedlda", argparse.Namespace())["epsilon"] == "--eps-table"


@pytest.mark.parametrize("argv", [["audit", "--model", "m", "--jobs", "100000"],
                                  ["experiment", "lira", "--jobs", "100000"],
                                  ["train", "--jobs", "257"], ["demo", "--jobs", "1000"],
                                  ["experiment", "fedlda", "--jobs", "300"]])
def test_jobs_beyond_the_librarys_bound_is_refused_by_the_flag(capsys, argv):
    assert "--jobs: must be an integer from 1 to 256" in _error(capsys, *argv)
