"""`dptopic demo`: it leads with the document-level model (epsilon = 1 per paragraph), keeps the word-level model as its
second part with its per-paragraph figure, and writes its figures as PNG files."""
import json

import numpy as np
import pytest

from dptopic.cli.main import build_parser, main


def _flat(s: str) -> str:
    return " ".join(s.split())


def test_the_demo_leads_with_the_document_level_guarantee(demo):
    out, text, _ = demo
    first, second = text.index("part 1: document-level DP: epsilon = 1 per paragraph"), text.index("part 2: HDP-LDA")
    assert first < second
    assert text.index("GUARANTEE: epsilon = 0.9") < second      # the document-level one first
    word = text[text.index("GUARANTEE (word level)"):]
    assert "per paragraph, by group privacy, L times" in word and "for a paragraph of 10 words" in word
    assert "far weaker than the document-level model above" in word
    assert f"dptopic report --model {out}-document" in text


def test_the_demo_writes_its_figures_and_says_where(demo):
    out, text, err = demo
    figures = out.parent / "d-figures"
    for name in ("topics.png", "quality_vs_epsilon.png"):
        path = figures / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert str(path) in text
    # the reuse of the same paragraphs by the second model is said once, as the two guarantees' composition
    assert "already used by an earlier private fit" not in err and "published together" in text


def test_the_figures_folder_is_checked_before_any_training(tmp_path, capsys):
    (tmp_path / "d-figures").mkdir()
    (tmp_path / "d-figures" / "mine.png").write_bytes(b"x")
    assert main(["demo", "--out", str(tmp_path / "d"), "--quiet", "--topics", "3", "--iterations", "2",
                 "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "d-figures" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "d").exists() and not (tmp_path / "d-document").exists()


def _train(args, textfile, out):
    return main(["train", "--corpus", str(textfile), "--topics", "3", "--iterations", "5", "--out", str(out),
                 "--quiet", *args])


def test_cli_private_default_is_unseeded_and_explicit_seed_warns(textfile, tmp_path, capsys):
    for name in ("a", "b"):
        assert _train(["--algorithm", "hdp"], textfile, tmp_path / name) == 0
    a, b = (np.load(tmp_path / n / "components.npy") for n in ("a", "b"))
    assert not np.allclose(a, b)  # fresh OS entropy each run, not seed 0
    assert "warning" not in capsys.readouterr().out
    assert _train(["--algorithm", "hdp", "--seed", "3"], textfile, tmp_path / "c") == 0
    cap = capsys.readouterr()
    err = " ".join(cap.err.split())         # a warning goes to stderr, never stdout
    assert "warning:" in err and "seed stays secret" in err and "warning:" not in cap.out
    rep = json.loads((tmp_path / "c" / "model.json").read_text())
    assert rep["privacy"]["noise_reproducible"] is True and rep["params"]["seed"] is None
    assert build_parser().parse_args(["demo"]).seed is None  # demo does not seed the private model


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
    from dptopic.reporting.terminal import make_console, print_topics

    X = np.array([[3, 0, 1], [0, 2, 2], [1, 1, 0]])
    m = LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(X, vocabulary=["apple", "berry", "cherry"])
    print_topics(m, 2, console=make_console())
    assert "words per topic of LDA" in " ".join(capsys.readouterr().out.split())


# ----------------------------------------------------------------- the demo's second part
def test_demo_with_one_iteration_says_one_sweep(demo):
    from dptopic.cli.main import main

    out, printed, _ = demo                      # the shared demo run is one of one sweep (tests/cli/conftest.py)
    assert "1 sweep)" in printed and "1 sweeps" not in printed
    assert main(["topics", "--model", str(out) + "-document"]) == 0
