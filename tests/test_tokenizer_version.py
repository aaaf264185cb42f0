"""model.json records the tokeniser's version; text read into a model saved by another version warns."""
import json
import warnings

import pytest

import dptopic
from dptopic.corpus.preprocess import TOKENIZER_VERSION
from dptopic.errors import DPTopicError

TEXTS = ["the rocket launch reached orbit", "the patient saw a doctor about the disease",
         "orbit of the moon and the rocket", "a doctor treats disease in the clinic"] * 10


@pytest.fixture()
def saved(tmp_path):
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(TEXTS)
    m.save(tmp_path / "m")
    return tmp_path / "m"


def _edit(path, version):
    meta = json.loads((path / "model.json").read_text())
    meta["tokenizer"]["version"] = version
    (path / "model.json").write_text(json.dumps(meta))


def test_the_saved_model_records_this_versions_tokenizer_and_keeps_it_on_resave(saved, tmp_path):
    assert json.loads((saved / "model.json").read_text())["tokenizer"]["version"] == TOKENIZER_VERSION
    _edit(saved, TOKENIZER_VERSION - 1)
    dptopic.load(saved).save(tmp_path / "again")         # a re-save does not pretend to be this version's
    assert json.loads((tmp_path / "again" / "model.json").read_text())["tokenizer"]["version"] == TOKENIZER_VERSION - 1


def test_text_into_a_model_of_another_tokenizer_warns_and_tokens_do_not(saved):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dptopic.load(saved).transform(["a rocket in orbit"])      # same version: silent
    _edit(saved, TOKENIZER_VERSION + 1)
    m = dptopic.load(saved)
    with pytest.warns(UserWarning, match=f"tokeniser version {TOKENIZER_VERSION + 1}"):
        m.transform(["a rocket in orbit"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.transform([["rocket", "orbit"]])                         # token lists are read exactly
    _edit(saved, 2)                                                # version 2 split ASCII text as version 3 does
    with pytest.warns(UserWarning, match=r"version 2 .*\(ASCII text is read as it was then; other text may not be\)"):
        dptopic.load(saved).transform(["a rocket in orbit"])


@pytest.mark.parametrize("bad", [0, "2", None, 1.5])
def test_a_malformed_tokenizer_version_is_refused_at_load(saved, bad):
    _edit(saved, bad)
    with pytest.raises(DPTopicError, match="'tokenizer'"):
        dptopic.load(saved)


def test_the_cli_warns_when_it_reads_text_into_a_model_of_another_tokenizer(saved, tmp_path):
    import subprocess
    import sys

    docs = tmp_path / "docs.txt"
    docs.write_text("a rocket in orbit\na doctor\n")
    prepared = tmp_path / "docs.npz"
    dptopic.Corpus.from_texts(docs.read_text().splitlines()).save(prepared)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True)

    cases = [("transform", "--model", saved, "--corpus", docs, "--out", tmp_path / "t.csv"),
             ("evaluate", "--model", saved, "--corpus", docs),
             ("report", "--model", saved, "--reference", docs, "--out", tmp_path / "r.html")]
    for argv in cases:
        r = run(*argv)
        assert r.returncode == 0 and "tokeniser version" not in r.stderr, r.stderr          # same version: silent
    _edit(saved, TOKENIZER_VERSION + 1)
    for argv in cases:
        r = run(*argv, "--overwrite") if argv[0] != "evaluate" else run(*argv)
        assert r.returncode == 0 and f"tokeniser version {TOKENIZER_VERSION + 1}" in r.stderr, (argv[0], r.stderr)
    r = run("transform", "--model", saved, "--corpus", prepared, "--out", tmp_path / "p.csv")  # tokens: exact
    assert r.returncode == 0 and "tokeniser version" not in r.stderr, r.stderr
