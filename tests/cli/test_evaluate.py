"""``dptopic evaluate``: what the command does with its flags and files, and its one-line refusals."""
import json
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.cli.main import main
from dptopic.corpus import Corpus
from helpers import cli_error_line, one_line_stderr, run_dptopic, subprocess_error_line


# ----------------------------------------------------------------- 4: evaluate --window beyond a machine integer
def test_evaluate_window_is_bounded(tmp_path):
    subprocess_error_line(run_dptopic("evaluate", "--model", tmp_path, "--corpus", "demo", "--window", "99999999999999999999"),
                    "--window", "at most")


def _cli_2(*args, cwd=None):
    return run_dptopic(*args, cwd=cwd)


# ---- item 11: evaluate reads documents in the model's vocabulary
def test_evaluate_uses_the_models_vocabulary(tmp_path):
    rng = np.random.default_rng(0)
    vocab = [f"{a}{b}" for a in "bcdfgh" for b in ("ax", "ex", "ix", "ox", "ux")][:30]
    texts = [" ".join(rng.choice(vocab, 12)) for _ in range(120)]
    c = Corpus.from_texts(texts, stop_words=None, max_vocab=None)
    dptopic.LDA(n_topics=3, n_iter=30, seed=0, verbose=0).fit(c).save(tmp_path / "m")
    (tmp_path / "t.txt").write_text("\n".join(texts[:40]))
    r = _cli_2("evaluate", "--model", str(tmp_path / "m"), "--corpus", str(tmp_path / "t.txt"), "--json", "--seed", "0")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    m = dptopic.load(tmp_path / "m")
    want = m.perplexity(Corpus.from_texts(texts[:40], vocabulary=m.vocabulary_), mode="completion", seed=0)
    assert got["perplexity"] == pytest.approx(want)
    assert "40 documents" in got["reference"] and -1 <= got["npmi"] <= 1
    assert "--max-vocab" in one_line_stderr(_cli_2("evaluate", "--model", str(tmp_path / "m"), "--corpus",
                                                   str(tmp_path / "t.txt"), "--max-vocab", "5"))


def test_evaluate_says_undefined_rather_than_best_on_a_foreign_reference(tmp_path, capsys):
    import json

    import dptopic

    words = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(30)]     # letters: the tokeniser keeps them
    rng = np.random.default_rng(1)
    train = Corpus.from_tokens([list(rng.choice(words[:12], 20)) for _ in range(60)], vocabulary=words)
    dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(train).save(tmp_path / "m")
    (tmp_path / "ref.txt").write_text("\n".join(" ".join(rng.choice(words[20:], 10)) for _ in range(5)) + "\n")
    assert main(["evaluate", str(tmp_path / "m"), "--corpus", str(tmp_path / "ref.txt")]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "C_v (top 10, sliding windows of 110 tokens): undefined" in out and "C_v (top 10, sliding windows of 110 tokens): 1.0000" not in out
    assert "Mimno et al. define it: undefined" in out and "2 of 2 topics have top words" in out
    assert main(["evaluate", str(tmp_path / "m"), "--corpus", str(tmp_path / "ref.txt"), "--json"]) in (0, None)
    q = json.loads(capsys.readouterr().out)            # valid JSON: null, never NaN
    assert q["c_v"] is None and q["umass_mimno_sum"] is None


def test_hints_name_only_what_the_command_has(tmp_path, capsys):
    from dptopic.models import LDA

    words = ["apple", "banana", "cherry", "grape"]
    LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(
        Corpus.from_tokens([["apple", "banana"], ["cherry", "grape"]] * 5)).save(tmp_path / "m")
    (tmp_path / "empty.jsonl").write_text('{"text": ""}\n{"text": "  "}\n')
    line = cli_error_line(capsys, ["evaluate", str(tmp_path / "m"), "--corpus", str(tmp_path / "empty.jsonl")])
    assert "none of the 2 documents holds any word" in line and "min_df" not in line and "min-df" not in line
    (tmp_path / "d").mkdir()
    (tmp_path / "docs.txt").write_text(" ".join(words) + "\n")
    line = cli_error_line(capsys, ["corpus", "info", "--format", "uci", "--vocab", str(tmp_path / "d"),
                                str(tmp_path / "docs.txt")])
    assert "UCI vocabulary" in line and "--format dir" not in line
    (tmp_path / "x.json").write_text('{"a": 1}')
    assert "model's privacy_)" not in cli_error_line(capsys, ["privacy", "verify", str(tmp_path / "x.json")])
    line = cli_error_line(capsys, ["corpus", "prepare", "--corpus", str(tmp_path / "docs.txt"), "--out", "bad\nname"])
    assert "write it as 'bad\\nname.npz'" in line



# ---------------------------------------------------------------- finding 7: evaluate's note, --reference-public
def test_evaluate_says_which_figures_read_the_corpus_and_takes_reference_public(hdp_cli_files, capsys):
    _, text, private = hdp_cli_files
    capsys.readouterr()
    assert main(["evaluate", str(private), "--corpus", str(text), "--json"]) in (0, None)
    note = json.loads(capsys.readouterr().out)["note"]
    assert note.startswith("outside the guarantee: the reference corpus's exact size, NPMI, C_v, UMass and perplexity read the documents of --corpus")
    assert "topic diversity reads only the released topics" in note and "--reference-public" in note
    # a public corpus: the same flag as report's, and nothing is labelled outside the guarantee
    assert main(["evaluate", str(private), "--corpus", str(text), "--json", "--reference-public"]) in (0, None)
    assert "note" not in json.loads(capsys.readouterr().out)
    assert main(["evaluate", str(private), "--corpus", str(text), "--reference-public"]) in (0, None)
    assert "outside the guarantee" not in capsys.readouterr().out


WORDS = ["recipe", "oven", "flour", "sugar", "storm", "rain", "wind", "cloud", "market", "stock", "bank", "fund"]


def _texts(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS[4 * (i % 3):4 * (i % 3) + 4], 10)) for i in range(n)]


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
