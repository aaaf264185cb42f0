"""``dptopic audit``: the one-run design's canaries are bounded before anything is built, the help says which
design's confidence is exact, and the console's lines are left whole off a terminal."""
import pytest

from dptopic.cli.main import main


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    from dptopic.datasets import sotu_texts

    d = tmp_path_factory.mktemp("audit-cli")
    src = d / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    return src


def _error(args, capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def _never(*args, **kwargs):
    raise AssertionError("reached although the canaries were refused")


def test_canary_length_beyond_memory_is_refused_before_the_corpus_is_read(docs, tmp_path, capsys, monkeypatch):
    import dptopic.attacks.one_run as one_run
    import dptopic.cli.audit as audit

    monkeypatch.setattr(audit, "_audit_corpus", _never)        # nothing read, trained or allocated
    monkeypatch.setattr(one_run, "make_canaries", _never)
    err = _error(["audit", "--design", "one-run", "--canaries", "10", "--canary-length", "1000000000",
                  "--algorithm", "lda", "--corpus", str(docs), "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--canary-length 1,000,000,000" in err and f"{one_run.MAX_CANARY_TOKENS:,}" in err and "memory" in err
    assert f"at most {one_run.MAX_CANARY_TOKENS // 10:,}" in err
    assert not (tmp_path / "a").exists()
    # a count of canaries that memory cannot hold names --canaries
    err = _error(["audit", "--design", "one-run", "--canaries", "1000000000", "--algorithm", "lda", "--corpus",
                  str(docs), "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--canaries 1,000,000,000" in err and "memory" in err


def test_canary_longer_than_the_corpus_is_refused_before_training(docs, tmp_path, capsys, monkeypatch):
    import dptopic.attacks.one_run as one_run

    monkeypatch.setattr(one_run, "make_canaries", _never)
    err = _error(["audit", "--design", "one-run", "--canaries", "4", "--canary-length", "2000000", "--algorithm",
                  "lda", "--corpus", str(docs), "--max-vocab", "200", "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--canary-length 2,000,000" in err and "longer than the whole corpus" in err and "tokens" in err


def test_confidence_help_says_exact_for_one_run(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    at = text.rindex("--confidence CONFIDENCE") + len("--confidence CONFIDENCE")   # the option, not the usage
    confidence = text[at:text.index("--seed", at)]
    assert "approximate for --design lira" in confidence and "exact for --design one-run" in confidence


def test_console_lines_are_whole_off_a_terminal_and_name_settings_in_words(docs, tmp_path, capsys):
    assert main(["audit", "--design", "one-run", "--canaries", "20", "--canary-length", "20", "--algorithm", "lda",
                 "--topics", "3", "--iterations", "3", "--corpus", str(docs), "--max-vocab", "200", "--seed", "0",
                 "--out", str(tmp_path / "a"), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(ln for ln in lines if ln.startswith("audit (one-run design)"))
    # one line, not broken at 80 columns (a break left "; " dangling at the end of the corpus line)
    assert head.endswith("one model trained") and "V=200; 20 canaries" in head
    assert "lda (n_iter = 3, n_topics = 3)" in head and "{" not in head      # the trainer's settings, not a dict
    bound = next(ln for ln in lines if ln.startswith("empirical epsilon lower bound"))
    assert "exact 95% confidence" in bound and not any(ln.rstrip() != ln for ln in lines)


def test_empty_corpus_file_is_named_as_empty(docs, tmp_path, capsys):
    model = tmp_path / "m"
    assert main(["train", "--algorithm", "lda", "--corpus", str(docs), "--max-vocab", "200", "--topics", "3",
                 "--iterations", "2", "--seed", "0", "--out", str(model), "--quiet"]) == 0
    (tmp_path / "empty.txt").write_text("")
    capsys.readouterr()
    err = _error(["audit", "--model", str(model), "--corpus", str(tmp_path / "empty.txt"), "--out",
                  str(tmp_path / "a"), "--quiet"], capsys)
    assert repr(str(tmp_path / "empty.txt")) in err and "no non-blank lines" in err


# ---------------------------------------------------------------- --epsilon is the guarantee in total, as in train
def test_epsilon_is_the_total_guarantee_and_a_total_too_small_is_refused_before_the_corpus_is_read(
        docs, tmp_path, capsys, monkeypatch):
    """hdp splits --epsilon into its per-iteration part as ``train --epsilon`` does; a total the inherent part alone
    exceeds is refused before anything is read or trained."""
    import dptopic.cli.audit as audit

    monkeypatch.setattr(audit, "_audit_corpus", _never)
    err = _error(["audit", "--algorithm", "hdp", "--topics", "3", "--iterations", "2", "--epsilon", "0.5",
                  "--corpus", str(docs), "--shadows", "4", "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--epsilon 0.5 cannot cover 2 iterations" in err


def test_epsilon_maps_to_the_trainers_total(docs):
    """The procedure audited takes --epsilon as its ``epsilon`` (the total), never as a component."""
    import argparse

    from dptopic.cli.audit import _trainer_from_args

    a = argparse.Namespace(model=None, algorithm="hdp", topics=3, iterations=2, alpha=None, beta=None, epsilon=40.0,
                           delta=None, set=[])
    _, _, text = _trainer_from_args(a)
    assert "epsilon = 40" in text and "epsilon_laplace" not in text


def test_a_baseline_without_a_guarantee_refuses_epsilon_naming_its_papers_figure(docs, tmp_path, capsys):
    err = _error(["audit", "--algorithm", "cdp", "--topics", "3", "--iterations", "2", "--epsilon", "1",
                  "--corpus", str(docs), "--shadows", "4", "--out", str(tmp_path / "a"), "--quiet"], capsys)
    assert "--set paper_epsilon=VALUE" in err and "claims none" in err
