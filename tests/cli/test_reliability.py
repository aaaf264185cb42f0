"""Inputs a fuzz run found that crashed or misled, on the command line and in the Python API: the ``--out`` rules and
atomic saves, the discrete sampler's range, the ledger's and calculators' checks, one-line errors for bad corpora,
model folders and flags, and Ctrl-C at start-up. Each test here failed on the code before its fix."""
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dptopic
from dptopic import _io
from dptopic.accounting import (
    LaplaceEvent,
    PrivacyLedger,
    PureDPEvent,
    compose_pld,
    compose_rdp,
    eps_iter_static,
    eps_total_static,
    hdp_clip_bound,
    hdp_total_epsilon,
    smallest_hdp_budget,
    solve_hdp_epsilon_laplace,
)
from dptopic.cli.main import main
from dptopic.corpus import Corpus
from dptopic.errors import CorruptModelError, DPTopicError
from dptopic.mechanisms import laplace_mechanism, laplace_noise
from dptopic.mechanisms.laplace import MAX_SCALE
from helpers import loaded_in_a_new_process

TEXTS = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students", "students teachers education college"] * 8
SRC = str(Path(dptopic.__file__).resolve().parents[1])


def one_line(e) -> str:
    msg = str(e.value if hasattr(e, "value") else e)
    assert "\n" not in msg and msg, msg
    return msg


@pytest.fixture
def textfile(tmp_path):
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(TEXTS))
    return p


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    c = Corpus.from_texts(TEXTS)
    m = dptopic.LDA(3, n_iter=3, seed=0, verbose=0).fit(c)
    d = tmp_path_factory.mktemp("m") / "model"
    m.save(d)
    return m, d


def train_args(textfile, out, *extra):
    return ["train", "--corpus", str(textfile), "--topics", "3", "--iterations", "3", "--out", str(out), "--quiet",
            *extra]


def err_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


# ------------------------------------------------------------------ --out rules (data loss)
def test_out_never_deletes_user_files(textfile, tmp_path, capsys):
    mydocs = tmp_path / "mydocs"
    mydocs.mkdir()
    (mydocs / "thesis.tex").write_text("x")
    assert main(train_args(textfile, mydocs)) == 2
    assert "does not hold a dptopic model" in err_line(capsys)
    assert (mydocs / "thesis.tex").read_text() == "x" and len(list(mydocs.iterdir())) == 1
    afile = tmp_path / "afile"
    afile.write_text("keep")
    assert main(train_args(textfile, afile)) == 2
    assert "not a folder" in err_line(capsys) and afile.read_text() == "keep"


def test_out_model_needs_overwrite_and_empty_folder_is_fine(textfile, tmp_path, capsys):
    out = tmp_path / "m"
    out.mkdir()
    assert main(train_args(textfile, out)) == 0           # an empty folder
    capsys.readouterr()                                   # its notes (how the file was read)
    assert main(train_args(textfile, out)) == 2
    assert "--overwrite" in err_line(capsys)
    assert main(train_args(textfile, out, "--overwrite")) == 0
    assert dptopic.load(out).n_topics == 3


def test_out_checked_before_training(textfile, tmp_path, monkeypatch, capsys):
    def boom(*a, **k):
        raise AssertionError("training started before --out was checked")

    monkeypatch.setattr(dptopic.LDA, "fit", boom)
    (tmp_path / "afile").write_text("x")
    monkeypatch.chdir(tmp_path)
    for out in (".", str(tmp_path / "afile" / "sub"), str(tmp_path)):
        assert main(train_args(textfile, out)) == 2
        err_line(capsys)


def test_demo_checks_both_outputs(tmp_path, capsys):
    (tmp_path / "d-nonprivate").mkdir()
    (tmp_path / "d-nonprivate" / "notes.txt").write_text("x")
    assert main(["demo", "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert "d-nonprivate" in err_line(capsys) and not (tmp_path / "d").exists()


def test_api_save_refuses_a_foreign_folder(small_model, tmp_path):
    m, _ = small_model
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "x.txt").write_text("x")
    with pytest.raises(DPTopicError) as e:
        m.save(tmp_path / "f")
    one_line(e)
    assert (tmp_path / "f" / "x.txt").exists()


def test_check_output_dir_is_exported():
    from dptopic._io import check_output_dir

    assert callable(check_output_dir)


# ------------------------------------------------------------------ the save window
def test_crash_between_the_two_renames_still_loads(small_model, tmp_path, monkeypatch):
    m, _ = small_model
    d = tmp_path / "model"
    m.save(d)
    monkeypatch.setattr(_io.bundles, "_exchange", lambda a, b: False, raising=False)  # force the two-rename path
    real = os.replace

    def crash(src, dst):
        if Path(dst) == d.resolve() and Path(src).is_dir():
            raise KeyboardInterrupt  # the process dies between the two renames
        return real(src, dst)

    monkeypatch.setattr(_io.bundles.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        m.save(d)
    monkeypatch.setattr(_io.bundles.os, "replace", real)
    assert not d.exists()
    loaded = dptopic.load(d)            # read from the kept .model.old
    np.testing.assert_allclose(loaded.components_, m.components_)
    m.save(d)                           # and the next save completes the folder again
    assert dptopic.load(d).n_topics == 3


def test_exchange_swaps_atomically(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    (b / "x").write_text("b")
    if not _io._exchange(a, b):
        pytest.skip("renameat2(RENAME_EXCHANGE) not available here")
    assert (a / "x").read_text() == "b" and (b / "x").read_text() == "a"


# ------------------------------------------------------------------ tiny epsilon
def test_discrete_sampler_is_correct_at_the_largest_scale():
    rng = np.random.default_rng(0)
    x = laplace_noise((40_000,), MAX_SCALE, rng, discrete=True)
    assert x.dtype == np.int64
    # E|X| of the discrete Laplace ~ scale for large scales; SE of the mean ~ scale / sqrt(n)
    assert abs(np.abs(x).mean() / MAX_SCALE - 1) < 4 * 1.0 / np.sqrt(len(x))
    assert abs(x.mean()) / MAX_SCALE < 4 * np.sqrt(2) / np.sqrt(len(x))


@pytest.mark.parametrize("discrete", [True, False])
def test_sampler_refuses_scales_beyond_its_range(discrete):
    rng = np.random.default_rng(0)
    with pytest.raises(DPTopicError, match=r"\(0, 1e\+12\]") as e:
        laplace_noise((3,), MAX_SCALE * 1.01, rng, discrete=discrete)
    one_line(e)
    with pytest.raises(DPTopicError, match="epsilon"):
        laplace_mechanism(np.zeros(3, np.int64), 1e-300, rng, changes=(1, 1))


@pytest.mark.parametrize("make", [lambda: dptopic.CDPLDAPlus(3, paper_epsilon=1e-300, n_iter=2, seed=0, verbose=0),
                                  lambda: dptopic.HDPLDA(3, epsilon_laplace=1e-30, n_iter=2, seed=0, verbose=0)])
def test_tiny_epsilon_is_refused_not_silently_noise_free(make):
    with pytest.raises(DPTopicError) as e:
        make().fit(Corpus.from_texts(TEXTS))
    one_line(e)


# ------------------------------------------------------------------ ledger and calculators
NONSENSE = [
    lambda: PrivacyLedger(budget=(float("nan"), 0)),
    lambda: PrivacyLedger(budget=(1.0, 2.0)),
    lambda: PrivacyLedger().spend(PureDPEvent(1.0), -10),
    lambda: PrivacyLedger().spend(PureDPEvent(1.0), 2.5),
    lambda: compose_pld([(PureDPEvent(1.0), 0)], 1e-5),
    lambda: compose_pld([(PureDPEvent(1.0), -4)], 1e-5),
    lambda: compose_rdp([(PureDPEvent(1.0), 1)], float("nan")),
    lambda: compose_pld([(PureDPEvent(1.0), 1)], 2.0),
    lambda: LaplaceEvent(scale=-1),
    lambda: LaplaceEvent(scale=float("nan")),
    lambda: PureDPEvent(-5),
    lambda: PureDPEvent(float("inf")),
    lambda: eps_total_static([3, 4], 0.01, -2),
    lambda: eps_iter_static([3, 4], 0.01, 7),
    lambda: eps_iter_static([3, float("nan")], 0.01, 0),
    lambda: hdp_clip_bound(1e6, 1),
    lambda: hdp_total_epsilon(0, 1, 10, 1e-5),
    lambda: smallest_hdp_budget(-1, 10, 1e-5),
    lambda: solve_hdp_epsilon_laplace(10.0, 1e-5, 0, 1.0),
    lambda: dptopic.HDPLDA.from_budget(float("inf")),
    lambda: dptopic.HDPLDA.from_budget(100.0, n_iter=2.5),
    lambda: dptopic.HDPLDA.from_budget(100.0, n_iter=0),
]


@pytest.mark.parametrize("call", NONSENSE)
def test_ledger_and_calculators_refuse_nonsense(call):
    with pytest.raises(DPTopicError) as e:
        call()
    one_line(e)


def test_numpy_delta_is_accepted():
    led = PrivacyLedger()
    led.spend(PureDPEvent(1.0), 2)
    rep = led.report(delta=np.float32(1e-5))
    assert rep["epsilon_basic"] == 2.0 and isinstance(rep["delta"], float)
    json.dumps(rep)


@pytest.mark.parametrize("args", [["--laplace", "1", "-5"], ["--laplace", "nan", "5"], ["--pure", "-2", "3"],
                                  ["--laplace", "1", "abc"], ["--laplace", "inf", "1"]])
def test_privacy_compose_bad_args_one_line(args, capsys):
    assert main(["privacy", "compose", *args]) == 2
    line = err_line(capsys)
    assert "absl" not in line and "basic" not in capsys.readouterr().out


# ------------------------------------------------------------------ parameters
@pytest.fixture(scope="module")
def corpus():
    return Corpus.from_texts(TEXTS)


@pytest.mark.parametrize("kw", [{"alpha": np.float32("nan")}, {"alpha": np.float64("nan")}, {"beta": np.float16("nan")},
                                {"alpha": float("inf")}, {"beta": float("inf")}, {"beta": 1e308},
                                {"n_topics": 10**12}, {"n_topics": 50}, {"n_iter": np.float32(3)},
                                {"alpha": np.bool_(True)}])
def test_parameters_slipping_through_are_refused(corpus, kw):
    base = dict(n_topics=3, n_iter=2, seed=0, verbose=0)
    with pytest.raises(DPTopicError) as e:
        dptopic.LDA(**{**base, **kw}).fit(corpus)
    one_line(e)


def test_numpy_scalars_that_are_valid_still_train(corpus):
    m = dptopic.LDA(np.int64(3), alpha=np.float32(0.1), beta=np.float64(0.01), n_iter=np.int32(2), seed=np.int64(0),
                    verbose=0).fit(corpus)
    assert np.all(np.isfinite(m.components_))


RAW_ERRORS = [
    lambda c: dptopic.HDPLDA(3, epsilon_laplace=1e308, n_iter=2, seed=0, verbose=0).fit(c),
    lambda c: dptopic.HDPLDA(3, epsilon_inherent=1e6, n_iter=2, seed=0, verbose=0).fit(c),
    lambda c: dptopic.LDA(2, n_iter=2, verbose=0).fit(sp.csr_matrix(np.array([[1.0, np.inf], [2, 3]]))),
    lambda c: dptopic.LDA(2, n_iter=2, verbose=0).fit(sp.csr_matrix(np.array([[1.0, 1e12], [2, 3]]))),
    lambda c: dptopic.LDA(2, n_iter=2, verbose=0).fit(np.ones((2, 3, 4))),
    lambda c: dptopic.LDA(2, n_iter=2, verbose=0).fit(np.array([["a", "b"], ["c", "d"]])),
    lambda c: dptopic.LDA(2, n_iter=2, verbose=0).fit(np.array([[1, None], [2, 3]], dtype=object)),
    lambda c: dptopic.LDA(2, n_iter=2, verbose=0).fit(sp.csr_matrix(np.array([[1 + 1j, 2], [2, 3]]))),
    lambda c: Corpus.from_texts(TEXTS, max_vocab=2.5),
    lambda c: Corpus([0, 2], np.array([0.7, 1.2]), ["a", "b"]),
    lambda c: dptopic.load(None),
]


@pytest.mark.parametrize("call", RAW_ERRORS)
def test_raw_exceptions_become_dptopic_errors(corpus, call):
    with pytest.raises(DPTopicError) as e:
        call(corpus)
    one_line(e)


def test_fitted_model_input_checks(small_model):
    m, _ = small_model
    for call in (lambda: m.transform(TEXTS[:2], seed="x"), lambda: m.topic_words(-3),
                 lambda: m.perplexity(["zzzz qqqq xxxx", "wwww yyyy"])):
        with pytest.raises(DPTopicError) as e:
            call()
        one_line(e)
    with pytest.warns(UserWarning, match="prior alone"):  # transform: rows of the prior, as inside a larger batch
        m.transform(["zzzz qqqq xxxx", "wwww yyyy"])


# ------------------------------------------------------------------ CLI input
def test_cli_input_holes(tmp_path, textfile, capsys):
    out = str(tmp_path / "out")
    (tmp_path / "rnd.txt").write_bytes(np.random.default_rng(0).bytes(4000))
    (tmp_path / "tiny.txt").write_text("alpha beta gamma delta epsilon zeta theta iota")
    (tmp_path / "j.jsonl").write_text('{"text": {"a": 1}}\n{"text": null}\n')
    (tmp_path / "docword.x.txt").write_text("-3\n5\n1\n1 1 1\n")
    (tmp_path / "vocab.x.txt").write_text("a\nb\nc\nd\ne\n")
    (tmp_path / "emptydir").mkdir()
    np.savez(tmp_path / "c.npz", doc_ptr=np.array([0, 2]), word_ids=np.array([0, 1]),
             meta=np.frombuffer(json.dumps({"format": "dptopic-corpus"}).encode(), np.uint8))
    cases = [
        (["--corpus", str(tmp_path / "rnd.txt")], "binary"),
        (["--corpus", str(tmp_path / "tiny.txt"), "--topics", "2"], "at least 2 documents"),
        (["--corpus", str(tmp_path / "j.jsonl")], "not a string"),
        (["--corpus", str(tmp_path / "docword.x.txt")], "D=-3"),
        (["--corpus", str(tmp_path / "emptydir"), "--format", "text"], "is a folder"),
        (["--corpus", str(tmp_path / "c.npz")], "vocabulary"),
        (["--corpus", str(textfile), "--algorithm", "lda", "--budget", "600"], "--budget"),
        (["--corpus", str(textfile), "--algorithm", "lda", "--epsilon", "1"], "--epsilon"),
        (["--corpus", str(textfile), "--algorithm", "lda", "--secure"], "--secure"),
    ]
    for args, match in cases:
        assert main(["train", *args, "--iterations", "2", "--out", out, "--quiet"]) == 2, args
        assert match in err_line(capsys), args
    assert not Path(out).exists()


def test_cli_tiny_vocabulary_trains_and_saves(tmp_path, capsys):
    # fewer than 10 distinct words: the top-10 lists and coherence shrink to the vocabulary
    p = tmp_path / "tiny5.txt"
    p.write_text("alpha beta gamma delta\nepsilon zeta theta iota\nalpha zeta iota beta\ndelta gamma theta alpha\n"
                 "beta beta iota zeta\n")
    out = tmp_path / "m"
    assert main(["train", "--corpus", str(p), "--topics", "2", "--iterations", "2", "--out", str(out), "--quiet"]) == 0
    assert (out / "model.json").is_file()


def test_evaluate_negative_seed(small_model, textfile, capsys):
    _, d = small_model
    with pytest.raises(SystemExit) as e:
        main(["evaluate", "--model", str(d), "--corpus", str(textfile), "--seed", "-5"])
    assert e.value.code == 2 and "--seed" in err_line(capsys)


def test_max_vocab_applies_to_npz(textfile, tmp_path):
    npz = tmp_path / "c.npz"
    assert main(["corpus", "prepare", "--corpus", str(textfile), "--out", str(npz)]) == 0
    assert main(["train", "--corpus", str(npz), "--max-vocab", "12", "--topics", "2", "--iterations", "2",
                 "--out", str(tmp_path / "m"), "--quiet"]) == 0
    assert len(dptopic.load(tmp_path / "m").vocabulary_) == 12


def test_misleading_messages(tmp_path):
    (tmp_path / "docword.y.txt").write_text("2\n3\n2\n1 1\n2 2\n")
    (tmp_path / "vocab.y.txt").write_text("a\nb\nc\n")
    with pytest.raises(DPTopicError, match="3 numbers"):
        Corpus.from_uci(tmp_path / "docword.y.txt", tmp_path / "vocab.y.txt")
    one_doc = Corpus([0, 2], [0, 1], ["a", "b"])
    with pytest.raises(DPTopicError, match="at least 2 documents"):
        one_doc.train_test_split(0.5)
    (tmp_path / "d").mkdir()
    with pytest.raises(DPTopicError, match="is a folder"):
        Corpus.from_jsonl(tmp_path / "d")


# ------------------------------------------------------------------ argparse and Ctrl-C
@pytest.mark.parametrize("argv", [["train", "--topics", "x"], ["nope"], [], ["privacy", "compose", "--laplace", "1"],
                                  ["train", "--algorithm", "xyz"]])
def test_argparse_errors_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert "--help" in err_line(capsys)


def test_ctrl_c_during_startup_exits_130(monkeypatch, capsys):
    import dptopic.cli.main as cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["train"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"


def test_cli_import_is_light():
    """The heavy imports happen inside main()'s Ctrl-C guard, not when the entry point is imported."""
    assert loaded_in_a_new_process("import dptopic.cli.main", ("numba", "scipy", "numpy")) == []


# ------------------------------------------------------------------ model files are input
def _edit(d, fn):
    meta = json.loads((d / "model.json").read_text())
    fn(meta)
    (d / "model.json").write_text(json.dumps(meta))


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


EDITS = {
    "alpha -5": lambda m: m["params"].update(alpha=-5),
    "alpha nan": lambda m: m["params"].update(alpha="nan"),
    "alpha abc": lambda m: m["params"].update(alpha="abc"),
    "n_jobs 0": lambda m: m["params"].update(n_jobs=0),
    "unknown param": lambda m: m["params"].update(bogus=1),
    "version 999": lambda m: m.update(version=999),
    "class list": lambda m: m.update({"class": ["LDA"]}),
    "privacy string": lambda m: m.update(privacy="private"),
    "vocabulary string": lambda m: m.update(vocabulary="abc"),
    "params list": lambda m: m.update(params=[1]),
    "array ../": lambda m: m.update(arrays=["../../x", "components"]),
    "array abs": lambda m: m.update(arrays=["/etc/passwd", "components"]),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_load_validates_model_json(small_model, tmp_path, name):
    _, d = small_model
    d = _copy(d, tmp_path / "m")
    (tmp_path / "x.npy").write_bytes(b"")
    np.save(tmp_path / "x.npy", np.ones((3, 3)))
    _edit(d, EDITS[name])
    with pytest.raises(CorruptModelError) as e:
        dptopic.load(d)
    one_line(e)


@pytest.mark.parametrize("name,arr", [
    ("components", np.ones((3, 5), np.complex128)),
    ("components", np.array([["a"] * 5] * 3)),
    ("components", np.full((2, 2), 0.5)),
    ("topic_word_counts", -np.ones((3, 12), np.int64)),
    ("topic_word_counts", np.ones((3, 12), np.float64)),
])
def test_load_validates_arrays(small_model, tmp_path, name, arr):
    _, d = small_model
    d = _copy(d, tmp_path / "m")
    if name == "topic_word_counts":
        arr = np.resize(arr, (3, len(json.loads((d / "model.json").read_text())["vocabulary"])))
    np.save(d / f"{name}.npy", arr)
    with pytest.raises(CorruptModelError) as e:
        dptopic.load(d)
    one_line(e)


def test_gzipped_binary_is_refused(tmp_path):
    p = tmp_path / "x.txt.gz"
    p.write_bytes(gzip.compress(bytes(range(256)) * 20))
    from dptopic.corpus.files import read_text_file

    with pytest.raises(DPTopicError, match="binary"):
        read_text_file(p)


def test_corpus_prepare_out_rules(textfile, tmp_path, capsys):
    other = tmp_path / "thesis.npz"
    other.write_bytes(b"mine")
    assert main(["corpus", "prepare", "--corpus", str(textfile), "--out", str(other)]) == 2
    assert "does not hold a dptopic corpus" in err_line(capsys) and other.read_bytes() == b"mine"
    npz = tmp_path / "c.npz"
    assert main(["corpus", "prepare", "--corpus", str(textfile), "--out", str(npz)]) == 0
    assert main(["corpus", "prepare", "--corpus", str(textfile), "--out", str(npz)]) == 2
    assert "--overwrite" in err_line(capsys)
    assert main(["corpus", "prepare", "--corpus", str(textfile), "--out", str(npz), "--overwrite"]) == 0
    # a name that --corpus would not read back as a prepared corpus (it tells formats by their names) is refused
    for name in ("c.txt", "c"):
        assert main(["corpus", "prepare", "--corpus", str(textfile), "--out", str(tmp_path / name)]) == 2
        assert "is a .npz file" in err_line(capsys) and not (tmp_path / name).exists()


def test_real_ctrl_c_at_startup(tmp_path, textfile):
    import signal
    import time

    p = subprocess.Popen([sys.executable, "-m", "dptopic", *train_args(textfile, tmp_path / "m")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": SRC}, cwd=tmp_path)
    maps = Path(f"/proc/{p.pid}/maps")
    if not maps.exists():
        p.kill()
        pytest.skip("needs /proc to see when the child is importing numpy")
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None:  # wait until numpy is being loaded: inside main()
        try:
            if "_multiarray_umath" in maps.read_text():
                break
        except OSError:
            pass
        time.sleep(0.005)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode in (130, 0), err  # 0 only if the whole run beat the signal
    assert "Traceback" not in err
    assert not (tmp_path / "m").exists() or p.returncode == 0


def test_basic_bound_caps_tight_epsilon_only_for_pure_events():
    from dataclasses import dataclass

    from dptopic.accounting.ledger import pure_basic_bound

    led = PrivacyLedger()
    led.spend(LaplaceEvent(scale=2.0, changes=(1, 1)), 3)
    rep = led.report(delta=1e-300)  # below the PLD's truncated tail: the PLD alone says inf
    assert rep["epsilon_pld"] == pytest.approx(3.0) and rep["epsilon_rdp"] <= 3.0 + 1e-9

    @dataclass(frozen=True)
    class Approx:  # an (eps, delta>0) event: basic composition is no bound at a smaller delta
        epsilon: float = 1.0
        delta_event: float = 1e-3

    assert pure_basic_bound([(Approx(), 2)]) == float("inf")
    assert pure_basic_bound([(PureDPEvent(1.0), 2)]) == 2.0


def test_ints_beyond_the_float_range():
    from dptopic._validation import Int, Real

    assert not Real(0, None, "neither").accepts(10**400)  # would overflow where it is used as a float
    assert Int(0, None).accepts(10**400)                  # a seed may be any non-negative integer
    with pytest.raises(DPTopicError):
        PrivacyLedger(budget=(10**400, 0.0))


def test_atomic_writes_get_the_mode_of_a_plain_open_under_the_umask(tmp_path):
    import os
    import stat

    from dptopic._io import atomic_write_bytes, save_bundle

    old = os.umask(0o027)
    try:
        atomic_write_bytes(tmp_path / "page.html", b"<html></html>")
        save_bundle(tmp_path / "bundle", {"kind": "test"}, {"a": np.zeros(2)})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "page.html").st_mode) == 0o640  # not mkstemp's private 0600
    assert stat.S_IMODE(os.stat(tmp_path / "bundle").st_mode) == 0o750  # not mkdtemp's 0700
    os.chmod(tmp_path / "page.html", 0o600)  # a file the user made private stays private when rewritten
    atomic_write_bytes(tmp_path / "page.html", b"<html>2</html>")
    assert stat.S_IMODE(os.stat(tmp_path / "page.html").st_mode) == 0o600
    from dptopic.corpus import Corpus

    Corpus.from_texts(["apple banana cherry", "river lake mountain"]).save(tmp_path / "c.npz")
    assert stat.S_IMODE(os.stat(tmp_path / "c.npz").st_mode) == 0o600  # documents: owner only


def test_overwrite_never_takes_a_users_folder_with_a_model_json_for_a_model(tmp_path):
    import dptopic

    mine = tmp_path / "ub"
    mine.mkdir()
    (mine / "model.json").write_text('{"my": "config"}')
    np.save(mine / "precious.npy", np.arange(3))
    m = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(["apple banana cherry", "river lake mountain"] * 4)
    with pytest.raises(DPTopicError, match="does not hold a dptopic"):
        m.save(mine)
    assert (mine / "precious.npy").exists()
    m.save(tmp_path / "real")
    m.save(tmp_path / "real")  # a folder dptopic wrote may be replaced
    np.save(tmp_path / "real" / "extra.npy", np.arange(2))  # ... but not once a user's array sits in it
    with pytest.raises(DPTopicError, match="does not hold a dptopic"):
        m.save(tmp_path / "real")


def test_json_with_a_number_of_more_than_4300_digits_is_a_one_line_error(tmp_path):
    import struct
    import zlib

    from dptopic._io import load_json
    from dptopic.corpus import Corpus
    from dptopic.protocol import fedlda_messages as messages

    big = "1" + "0" * 5000
    with pytest.raises(DPTopicError, match="number too long"):
        load_json('{"a": %s}' % big, "the input")
    p = tmp_path / "big.jsonl"
    p.write_text('{"text": "apple banana"}\n{"text": "x", "n": %s}\n' % big)
    with pytest.raises(DPTopicError, match="number too long"):
        Corpus.from_jsonl(p)
    head = ('{"arrays": [], "n": %s}' % big).encode()
    body = messages.MAGIC + struct.pack("<BI", messages.VERSION, len(head)) + head
    with pytest.raises(DPTopicError, match="number too long"):
        messages.decode_message(body + struct.pack("<I", zlib.crc32(body)))


def test_a_saved_lda_whose_report_is_edited_to_claim_a_guarantee_does_not_load(tmp_path):
    import dptopic

    m = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(["apple banana cherry", "river lake mountain"] * 4)
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["privacy"] = {"private": True, "epsilon": 0.1, "delta": 0, "unit": "document", "epsilon_basic": 0.1}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.raises(DPTopicError, match="adds no noise and is never private") as e:
        dptopic.load(tmp_path / "m")
    one_line(e)


def test_api_inputs_from_a_fuzz_run_give_one_line_errors(tmp_path):
    from fractions import Fraction

    import dptopic

    texts = ["apple banana cherry", "river lake mountain"] * 3
    for call, match in ((lambda: dptopic.LDA().fit([["a", "b", None], ["c", "d"]]), "holds None"),
                        (lambda: dptopic.LDA(n_topics=2, alpha=Fraction(1, 10)).fit(texts), "invalid alpha")):
        with pytest.raises(DPTopicError, match=match) as e:
            call()
        one_line(e)
    m = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(texts)
    for where, match in ((None, "invalid folder"), (123, "invalid folder"), ("/proc/x", "cannot write")):
        with pytest.raises(DPTopicError, match=match) as e:
            m.save(where)
        one_line(e)


def test_a_uci_header_with_a_huge_document_count_is_refused_before_allocating(tmp_path):
    from dptopic.corpus import Corpus

    (tmp_path / "docword.x.txt").write_text("999999999999\n5\n2\n1 1 1\n2 2 1\n")
    (tmp_path / "vocab.x.txt").write_text("a\nb\nc\nd\ne\n")
    with pytest.raises(DPTopicError, match="D=999999999999 documents.*correct the first two lines"):
        Corpus.from_uci(tmp_path / "docword.x.txt", tmp_path / "vocab.x.txt")


def test_serve_names_a_malformed_host_before_the_remote_warning():
    import subprocess
    import sys

    pytest.importorskip("uvicorn")
    r = subprocess.run([sys.executable, "-m", "dptopic", "serve", "--host", "bad host", "--vocabulary", "/nonexistent"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "invalid --host 'bad host'" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_tampered_svi_state_is_named_once(tmp_path):
    import dptopic

    m = dptopic.OnlineVB(n_topics=2, n_epochs=1, seed=0, verbose=0).fit(["apple banana cherry", "river lake mountain"] * 4)
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    del meta["array_sha256"]        # as a folder saved before array digests: the state's own checks speak
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    for bad in (np.full(2, np.nan), np.array([-1, 3]), np.arange(5)):
        np.save(tmp_path / "m" / "svi_state.npy", bad)
        with pytest.raises(DPTopicError, match="svi_state.npy must hold") as e:
            dptopic.load(tmp_path / "m")
        one_line(e)
        assert str(e.value).count("re-save the model") == 1


def test_a_device_or_pipe_as_a_corpus_is_named_as_such(tmp_path):
    import os

    from dptopic.corpus.files import _check_file

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for p in ("/dev/null", fifo):
        with pytest.raises(DPTopicError, match="not a regular file"):
            _check_file(p)
    with pytest.raises(DPTopicError, match="does not exist"):
        _check_file(tmp_path / "missing.txt")


def test_a_saved_vocabulary_with_an_empty_word_or_a_line_break_is_refused(tmp_path):
    import dptopic

    dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(["apple banana cherry", "river lake mountain"] * 3).save(
        tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    for word in ("", "a\nb"):
        meta["vocabulary"][0] = word
        (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
        with pytest.raises(DPTopicError, match="is empty or holds a line break or tab") as e:
            dptopic.load(tmp_path / "m")
        one_line(e)
