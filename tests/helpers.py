"""Small helpers that test modules in several folders share (tests/ is on the path: ``from helpers import ...``)."""
import contextlib
import io
import itertools
import json
import math
import os
import subprocess
import sys
import warnings
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import dptopic
from dptopic._validation import Interval
from dptopic.accounting import (
    eps_iter_static,
    eps_related,
    eps_total_static,
    hdp_clip_bound,
    hdp_epsilon_inherent,
    hdp_total_epsilon,
    smallest_hdp_budget,
)
from dptopic.attacks.lira import ALGORITHMS
from dptopic.backends import ThreadBackend
from dptopic.cli.main import main
from dptopic.corpus import lda_corpus
from dptopic.errors import CorruptModelError, DPTopicError
from dptopic.models import FedLDA

SRC = str(Path(__file__).resolve().parents[1] / "src")


def run_dptopic_process(*args, timeout=120, cwd=None, env=None):
    """``python -m dptopic ARGS`` in a subprocess (this checkout's src/ first on the path), its output captured: for
    what only a real process shows (the entry point, a reader that goes away, signals, memory maps)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=cwd)


class _RunTimedOut(BaseException):
    """Raised into a command run in-process when its time is up (a BaseException: no ``except Exception`` of the
    command catches it)."""


def run_dptopic(*args, timeout=600, cwd=None, env=None, input=None):
    """``dptopic ARGS`` run in this process as ``python -m dptopic`` runs it (``main`` with its exit status; an
    argparse exit; an exception that escapes ``main`` printed as Python prints it, status 1), with stdout and stderr
    captured: a ``subprocess.CompletedProcess``. It spares the second or so a new interpreter takes to import numpy,
    numba and dptopic; ``run_dptopic_process`` is the real process. ``cwd``, ``env`` (the whole environment, as
    ``subprocess.run`` takes it) and ``input`` (stdin text) hold for the run only. A run longer than ``timeout``
    seconds is stopped with ``subprocess.TimeoutExpired``, as ``subprocess.run`` stops it (by SIGALRM, so only on
    the main thread; elsewhere it is not enforced), so that a command that hangs fails its test instead of the
    suite."""
    import contextlib
    import io
    import signal
    import threading
    import traceback

    from dptopic.models import base as model_base

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    # a new process has trained on no documents yet: the re-use warnings of this process's fits stay out of the run
    saved_docs = set(model_base._PRIVATE_DOCS)
    model_base._PRIVATE_DOCS.clear()
    alarm = False
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.StringIO(input or "")
        alarm = timeout is not None and threading.current_thread() is threading.main_thread()
        if alarm:
            def _time_up(signum, frame):
                raise _RunTimedOut()

            previous_handler = signal.signal(signal.SIGALRM, _time_up)
            signal.setitimer(signal.ITIMER_REAL, float(timeout))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except _RunTimedOut:
                raise subprocess.TimeoutExpired(["dptopic", *argv], timeout, out.getvalue(), err.getvalue()) from None
            except SystemExit as e:
                code = e.code
                if code is not None and not isinstance(code, int):
                    print(code, file=sys.stderr)
                    code = 1
            except Exception:   # what the interpreter would print for an exception escaping main()
                traceback.print_exc()
                code = 1
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous_handler)
        model_base._PRIVATE_DOCS.clear()
        model_base._PRIVATE_DOCS.update(saved_docs)
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(saved_env)
    return subprocess.CompletedProcess(["dptopic", *argv], 0 if code is None else int(code), out.getvalue(),
                                       err.getvalue())


def main_output(capsys, argv):
    """``(exit status, stdout, stderr)`` of ``dptopic ARGV`` run through ``main`` in this process (an argparse exit
    counts), its output read from ``capsys``."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def subprocess_error_line(r, *needles):
    """The one line of error (``error: ...``) of a finished ``dptopic`` subprocess ``r`` with exit status 2 and no
    traceback, holding every needle given."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def one_line_stderr(r):
    """stderr of a finished ``dptopic`` subprocess ``r`` that exited with status 2 writing one line, no traceback."""
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    return r.stderr


def cli_error_line(capsys, argv) -> str:
    """Run the CLI on ``argv`` in this process (an argparse exit counts): exit status 2, one line ``error: ...`` on
    stderr, no traceback; returns that line."""
    try:
        rc = main([str(x) for x in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, (rc, err)
    return lines[0]


def one_line_error(r, *phrases) -> str:
    """The one line of error of a finished ``dptopic`` subprocess ``r`` (exit status 2, no traceback), holding every
    phrase given. (In this process: :func:`cli_error_line`.)"""
    assert r.returncode == 2 and "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    for p in phrases:
        assert p in lines[0], lines[0]
    return lines[0]


def topic_ranking(ref, words):
    """A K=1 topic whose ranking is ``words`` (over ``ref``'s vocabulary)."""
    comp = np.full((1, ref.vocab_size), 1e-6)
    for r, w in enumerate(words):
        comp[0, ref.vocabulary.get(w)] = 1.0 - 0.1 * r
    return comp


# ------------------------------------------------------------------ the kernels' inputs and a plain-Python xorshift
M64 = (1 << 64) - 1


class XorShiftReference:
    """xorshift128+ (Vigna 2014) in plain Python: the kernels' stream, written out here independently."""

    def __init__(self, state):
        self.s0, self.s1 = int(state[0]), int(state[1])

    def u64(self) -> int:
        a, b = self.s0, self.s1
        self.s0 = b
        a ^= (a << 23) & M64
        self.s1 = a ^ b ^ (a >> 17) ^ (b >> 26)
        return (self.s1 + b) & M64

    def uniform(self) -> float:
        return (self.u64() >> 11) * 2.0 ** -53


def xorshift_state(rng):
    """A random nonzero xorshift128+ state (two uint64 words)."""
    return rng.integers(1, 2 ** 63 - 1, size=2).astype(np.uint64)


def csr_token_corpus(rng, D, V, max_len, n_empty=1):
    """A CSR token corpus of ``D`` documents over ``V`` words; the first ``n_empty`` documents are empty."""
    lens = rng.integers(1, max_len + 1, D)
    lens[:n_empty] = 0
    rng.shuffle(lens)
    ptr = np.zeros(D + 1, np.int64)
    np.cumsum(lens, out=ptr[1:])
    return rng.integers(0, V, int(ptr[-1])).astype(np.int32), ptr


def topic_counts(word_ids, ptr, z, K, V, dtype=np.int32):
    """The document-topic, word-topic and topic counts of the assignment ``z``."""
    ndk = np.zeros((len(ptr) - 1, K), dtype)
    nwk = np.zeros((V, K), dtype)
    doc = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    np.add.at(ndk, (doc, z), 1)
    np.add.at(nwk, (word_ids, z), 1)
    return ndk, nwk, nwk.sum(0).astype(dtype)


# (documents, vocabulary, topics): one word, one topic, both lane / block draws, more than 64 topics
KERNEL_SHAPES = [(3, 1, 1), (4, 1, 3), (6, 5, 1), (8, 7, 5), (10, 20, 9), (5, 12, 70)]


def canonical_and_messy_csr(rng, D=40, V=25):
    """A random count matrix (canonical CSR) and the same counts as a messy CSR: every count split over 1-3 entries,
    explicit zeros added, each row's entries shuffled."""
    dense = rng.poisson(0.6, size=(D, V)).astype(np.float64)
    dense[3] = 0.0                                       # an empty document
    dense[7] = 0.0
    dense[7, 4] = 5.0                                    # one word, written below as a zero then its count
    X = sp.csr_matrix(dense)
    ptr, ids, cts = [0], [], []
    for d in range(D):
        row_ids, row_cts = [], []
        for w in np.flatnonzero(dense[d]):
            c = int(dense[d, w])
            parts = rng.multinomial(c, np.ones(k := int(rng.integers(1, 4))) / k)
            row_ids += [w] * k
            row_cts += list(parts.astype(float))         # a part may be 0: an explicit zero of a present word
        for w in rng.choice(V, 2, replace=False):        # explicit zeros, of present and absent words
            row_ids.append(int(w))
            row_cts.append(0.0)
        order = rng.permutation(len(row_ids))
        if d == 7:
            row_ids, row_cts, order = [4, 4], [0.0, 5.0], np.arange(2)
        ids += [row_ids[i] for i in order]
        cts += [row_cts[i] for i in order]
        ptr.append(len(ids))
    M = sp.csr_matrix((np.array(cts), np.array(ids, dtype=np.int32), np.array(ptr)), shape=(D, V))
    assert not M.has_canonical_format
    np.testing.assert_array_equal(M.toarray(), dense)
    return X, M


def csr_arrays(X):
    """A CSR matrix as the kernels' (row pointers, column ids, counts)."""
    return X.indptr.astype(np.int64), X.indices, X.data


# ------------------------------------------------------------------ property tests: odd values and who takes them
FAST = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


SPECIAL = [float("nan"), np.float32("nan"), np.float64("nan"), float("inf"), -float("inf"), np.float32("inf"),
           -np.float64("inf"), 0, 0.0, -0.0, -1, -1.5, np.int64(-3), 1e308, -1e308, 5e-324, 1e-300, 10**30, -(10**30),
           2**63, 10**400, np.float32(1e38), np.int32(0), True, False, np.bool_(True), None, "1", "nan", "abc", b"1", [1],
           {"a": 1}, 1 + 1j, np.complex64(1), (), object()]


NASTY = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True),
                  st.integers(-(10**20), 10**20), st.floats(-1e-3, 1e3), st.integers(-3, 12), st.text(max_size=3))


def works_or_refuses(fn):
    """Run ``fn``: return ``(True, result)``, or ``(False, None)`` after a one-line DPTopicError. Any other
    exception propagates and fails the test."""
    try:
        return True, fn()
    except DPTopicError as e:
        msg = str(e)
        assert msg and "\n" not in msg and len(msg) < 500, msg
        return False, None


def is_clean_number(v) -> bool:
    """A finite real number, not a bool (an int of any size counts)."""
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return True   # any size: a seed may exceed the float range
    return isinstance(v, (float, np.floating)) and math.isfinite(float(v))


def numeric_params():
    """(name, estimator class, parameter) for each estimator parameter bounded by an Interval."""
    for algo, cls in ALGORITHMS.items():
        for name, cons in cls._parameter_constraints.items():
            if any(isinstance(c, Interval) for c in cons):
                yield algo, cls, name


PARAMS = list(numeric_params())


def base_kwargs(cls):
    """Small, valid settings for whichever of these parameters the estimator takes."""
    small = dict(n_topics=2, n_iter=2, rounds=2, seed=0, verbose=0, n_jobs=1)
    return {k: v for k, v in small.items() if k in cls._param_names()}


CALCULATORS = {
    "eps_related": lambda v: eps_related(v),
    "hdp_clip_bound eps": lambda v: hdp_clip_bound(v, 1.0),
    "hdp_clip_bound beta": lambda v: hdp_clip_bound(10.0, v),
    "hdp_epsilon_inherent": lambda v: hdp_epsilon_inherent(v, 0.5),
    "eps_iter_static beta": lambda v: eps_iter_static([3, 5, 2], v, 0),
    "eps_iter_static t": lambda v: eps_iter_static([3, 5, 2], 0.1, v),
    "eps_iter_static cmax": lambda v: eps_iter_static([3, 5, 2], 0.1, 1, cmax=v),
    "eps_iter_static n_tok": lambda v: eps_iter_static([3, v, 2], 0.1, 0),
    "eps_total_static n_iter": lambda v: eps_total_static([3, 5], 0.1, v),
    "smallest_hdp_budget eps": lambda v: smallest_hdp_budget(v, 3, 1e-5),
    "smallest_hdp_budget n_iter": lambda v: smallest_hdp_budget(1.0, v, 1e-5),
    "hdp_total_epsilon eps_L": lambda v: hdp_total_epsilon(v, 1.0, 3, 1e-5),
    "hdp_total_epsilon delta": lambda v: hdp_total_epsilon(1.0, 1.0, 3, v),
}


def mutations(good: bytes):
    """Damaged copies of the bytes ``good``: random bytes, truncations, overwritten bytes."""
    return st.one_of(
        st.binary(max_size=200),
        st.integers(0, len(good)).map(lambda n: good[:n]),                      # truncations
        st.tuples(st.integers(0, max(len(good) - 1, 0)), st.binary(min_size=1, max_size=4)).map(
            lambda t: good[:t[0]] + t[1] + good[t[0] + len(t[1]):]),            # overwritten bytes
    )


# ------------------------------------------------------------------ models to check cards, ledgers and reports on
def fit_each_private_trainer(corpus):
    """One model fitted by each private trainer (and by the F-DPTM path) on ``corpus``, small settings."""
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.training.fdptm import fit_fdptm

    reports = Randomizer.for_simulation(corpus.vocabulary, epsilon_word=3).randomize(corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield dptopic.HDPLDA(n_topics=4, n_iter=4, epsilon_laplace=1, verbose=0).fit(corpus)
        yield dptopic.DPSVI.from_budget(1, 1e-5, n_topics=4, verbose=0).fit(corpus)
        yield dptopic.DocDPCooccurrence(n_topics=4, epsilon=1, delta=1e-5, verbose=0).fit(corpus)
        yield dptopic.DocDPEM(n_topics=4, epsilon=1, delta=1e-5, verbose=0).fit(corpus)
        yield dptopic.FedLDA(n_topics=4, rounds=2, n_clients=20, verbose=0).fit(corpus)
        yield dptopic.FedLDA(n_topics=4, rounds=2, n_clients=20, exclusion="tail", verbose=0).fit(corpus)
        yield dptopic.LPLDA(n_topics=4, n_iter=3, epsilon_word=3, verbose=0).fit(reports)
        yield fit_fdptm(dptopic.HDPLDA(n_topics=4, n_iter=3, epsilon_laplace=1, verbose=0), corpus, 0.5, 5e-6)[0]
        yield fit_fdptm(dptopic.DocDPCooccurrence(n_topics=4, epsilon=1, delta=1e-5, verbose=0), corpus, 0.5, 5e-6)[0]


def letter_word(i: int) -> str:
    """Word ``i`` spelt in letters (digit d as the d-th letter), so that a vocabulary holds no digits."""
    return "word" + "".join("abcdefghij"[int(d)] for d in str(i))


def letter_texts(n_docs, vocab_size, seed):
    """A small synthetic LDA corpus (3 topics) as texts of letter words."""
    c, _, _, _ = lda_corpus(n_docs=n_docs, vocab_size=vocab_size, n_topics=3, doc_length=12, seed=seed)
    return [" ".join(letter_word(w) for w in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


def fit_fedlda(exclusion="none", **kw):
    """FedLDA (3 topics, 2 rounds, 10 clients, seed 0) fitted on 40 letter-word texts, its warnings silenced."""
    from dptopic.corpus import Corpus

    c = Corpus.from_texts(letter_texts(40, 30, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FedLDA(n_topics=3, rounds=2, pad_length=kw.pop("pad_length_", 8), n_clients=10, exclusion=exclusion,
                      verbose=0, seed=0, **kw).fit(c)


# each trainer of the registry's smallest settings that fit a tiny corpus quickly (the estimator contract test,
# tests/compile_kernels.py); private trainers are never seeded here (no seed is the
# default, and a seed would warn)
SMALL_SETTINGS = {"lda": dict(n_iter=5), "cdp": dict(n_iter=3), "cdp+": dict(n_iter=3),
                  "hdp": dict(n_iter=3, epsilon_inherent=10.0), "lp": dict(n_iter=3, epsilon_word=3),
                  "olp": dict(prior_corpus="none", n_iter=2, epsilon_word=3), "fed": dict(rounds=1, pad_length=8),
                  "online-vb": dict(n_epochs=1), "svi": dict(), "docdp": dict(epsilon=100.0),
                  "docdp-cooc": dict(epsilon=100.0), "ldp-doc": dict(), "online-lda": dict(n_iter=2, batch_size=20),
                  "secure-sum": dict()}


def quiet_fit(model, X, **kw):
    """``model.fit(X, **kw)`` with its warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, **kw)


# three private trainers whose vocabulary source the privacy report states (a vectorizer's, a private vocabulary's)
VOCABULARY_TRAINERS = {
    "DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=2.0, verbose=0),
    "HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_laplace=3.0, verbose=0),
    "DPSVI": lambda: dptopic.DPSVI.from_budget(2.0, 1e-5, n_topics=2, verbose=0),
}


def small_lda_texts() -> list:
    """120 short texts of a planted two-topic LDA corpus over 30 words (seed 4), as strings."""
    from dptopic.corpus import lda_corpus

    c = lda_corpus(n_docs=120, vocab_size=30, n_topics=2, doc_length=15, seed=4).corpus
    return [" ".join(c.vocabulary.words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


# ------------------------------------------------------------------ local (randomized) reports of a few fruit words
FRUIT_WORDS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "orange", "peach", "pear", "plum", "kiwi", "melon"]


FRUIT_DOCS = [d.split() for d in ("apple banana cherry grape lemon mango", "orange peach pear plum kiwi melon",
                                  "apple cherry lemon orange pear kiwi", "banana grape mango peach plum melon")]


def fruit_reports():
    """Word-level randomized reports (epsilon 1 per word, secure) of FRUIT_DOCS over FRUIT_WORDS."""
    from dptopic.contributor.randomizer import Randomizer

    return Randomizer(FRUIT_WORDS, epsilon_word=1.0, secure=True).randomize(FRUIT_DOCS)


class TcpListener:
    """A TCP listener on 127.0.0.1 that accepts connections, greets each with ``greeting`` (bytes, maybe none) and,
    with ``hang_up``, closes it at once."""

    def __init__(self, greeting=b"", hang_up=False):
        import socket
        import threading

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = "tcp://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.greeting, self.hang_up, self.held = greeting, hang_up, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.greeting:
                conn.sendall(self.greeting)
            if self.hang_up:
                conn.close()
            else:
                self.held.append(conn)

    def close(self):
        self.sock.close()
        for c in self.held:
            c.close()


def assert_fit_spent_its_plan(model):
    """A fitted private model spent exactly what its release plan over the fitted vocabulary plans (its ledger's
    events, or for a trainer fitted from contributors' reports the events its report states), the card states that
    plan as planned and spent, and the plan's ``epsilon(delta)`` is the card's epsilon. Returns the plan."""
    from collections import Counter

    from dptopic.accounting.card import privacy_card

    plan = model.release_plan(n_words=len(model.vocabulary_))
    ledger = getattr(model, "ledger_", None)
    if ledger is not None:
        spent = [e for e, n in ledger.groups() for _ in range(n)]
        assert Counter(spent) == Counter(plan.events()), (ledger.groups(), plan.groups())
    else:       # the contributors spent it: the report lists their events
        def key(d):
            return tuple(sorted((k, repr(v)) for k, v in d.items() if k != "count"))
        listed = Counter({key(d): int(d.get("count", 1)) for d in model.privacy_["events"]})
        assert listed == Counter(key(e.describe()) for e in plan.events()), (listed, plan.groups())
    card = privacy_card(model.privacy_, type(model).__name__, check=False)
    assert card["planned_and_spent"]["matches"], card["planned_and_spent"]
    assert card["planned_and_spent"]["planned"] == len(plan.events())
    if plan.guarantee:
        assert math.isclose(plan.epsilon(model.privacy_["delta"]), card["epsilon"], rel_tol=1e-12), (
            plan.epsilon(model.privacy_["delta"]), card["epsilon"])
    return plan


def fitted_state(model) -> dict:
    """Every fitted attribute of ``model`` (a name ending in ``_``), pickled, to compare before and after a call."""
    import pickle

    return {k: pickle.dumps(v) for k, v in vars(model).items() if k.endswith("_") and not k.startswith("__")}


def write_posts(tmp_path, n=40):
    """A JSONL file of ``n`` short labelled posts (fields id, text, label) in ``tmp_path``; returns its path."""
    p = tmp_path / "posts.jsonl"
    rng = np.random.default_rng(0)
    words = ["budget", "army", "navy", "school", "teacher", "farm", "wheat", "tax", "bank", "trade", "ship", "rail"]
    with p.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"d{i}", "text": " ".join(rng.choice(words, 12)) + " and more words here",
                                 "label": "ab"[i % 2]}) + "\n")
    return p


SMALL_PRIVATE_TRAINERS = {
    "DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, verbose=0),
    "DocDPEM": lambda: dptopic.DocDPEM(n_topics=2, epsilon=1.0, n_iter=2, verbose=0),
    "DPSVI": lambda: dptopic.DPSVI.from_budget(1.0, 1e-5, n_topics=2, verbose=0),
    "HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_laplace=3.0, verbose=0),
}
"""Four private trainers at one small setting each (the document-level three and the word-level one), by class name."""


def cli_exit_code(argv):
    """Run the command line in-process on ``argv``: its exit code (0 or 2), a refusal checked to be one line on
    stderr that starts "error: "."""
    from dptopic.cli.main import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse
            rc = e.code
    lines = err.getvalue().strip().splitlines()
    assert rc in (0, 2), (argv, rc, err.getvalue())
    if rc == 2:
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, lines)
    return rc


def exact_exp(eps: float) -> Fraction:
    """e^eps (of the float eps) to 60 significant digits, as an exact fraction."""
    with localcontext() as ctx:
        ctx.prec = 60
        return Fraction(Decimal(eps).exp())


def subset_law(D: int, k: int, p: Fraction, x: int) -> dict:
    """Exact law of a k-subset report of item x kept with probability p (x = -1: a padding entry, uniform)."""
    out = {}
    for S in itertools.combinations(range(D), k):
        if x < 0:
            out[S] = Fraction(1, math.comb(D, k))
        elif x in S:
            out[S] = p / math.comb(D - 1, k - 1)
        else:
            out[S] = (1 - p) / math.comb(D - 1, k)
    return out


def max_ratio(laws) -> Fraction:
    """The largest ratio of two laws' probabilities of one outcome, over every pair of laws (its log: an exact
    epsilon)."""
    return max(a[S] / b[S] for a in laws for b in laws for S in a)


NUMBER_TOKENS = st.one_of(st.sampled_from(["nan", "inf", "-inf", "-5", "0", "1e308", "1e-320", "abc", "", "2.5", "1",
                                           "10"]),
                          st.text(alphabet="0123456789.-e", max_size=5))
"""What a user may type where a number is asked for: odd numbers, words and short runs of number characters."""


THREE_SUBJECTS = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus",
                  "army navy war defense troops", "war troops army peace treaty", "school education teachers students",
                  "students teachers education college"] * 3
"""18 short texts on three subjects (taxes, war, schools)."""


def set_tokenizer_version(path, version):
    """Write ``version`` as the tokenizer version in the saved model at ``path`` (its model.json)."""
    meta = json.loads((path / "model.json").read_text())
    meta["tokenizer"]["version"] = version
    (path / "model.json").write_text(json.dumps(meta))


class ShardLosingBackend(ThreadBackend):
    """The thread backend, but its second sweep reports shard 0 lost with ``lost`` sweeps to replay, as the Dask
    backend does when a worker dies (``sweep`` returns ``{shard: sweeps to redo}``)."""

    def __init__(self, *a, lost=2, **kw):
        super().__init__(*a, **kw)
        self._calls, self._lost = 0, lost

    def sweep(self, alpha, beta, word_table=None, clip=np.inf, shards=None):
        super().sweep(alpha, beta, word_table=word_table, clip=clip, shards=shards)
        if shards is None:
            self._calls += 1
            if self._calls == 2:
                return {0: self._lost}
        return {}


def corrupt_model_line(folder):
    """The refusal ``dptopic.load(folder)`` gives for a corrupt model folder, checked to be one line that says so
    once."""
    import dptopic

    with pytest.raises(CorruptModelError) as e:
        dptopic.load(folder)
    assert "\n" not in str(e.value) and str(e.value).count("re-save the model") == 1
    assert str(e.value).count("corrupt model") == 1
    return str(e.value)


FOUR_DOCS_TEXT = "apple banana cherry\nbanana cherry durian\napple durian cherry\nelder fig grape\n"
"""A text file's content: four short documents, one a line."""


def prepare_shards(tmp_path, out, n, *extra):
    """``dptopic corpus prepare`` of :data:`FOUR_DOCS_TEXT` (written to ``tmp_path``) into ``n`` shards at ``out``,
    with ``extra`` flags: its exit status."""
    src = tmp_path / "ok.txt"
    src.write_text(FOUR_DOCS_TEXT)
    return main(["corpus", "prepare", "--corpus", str(src), "--out", str(out), "--shards", str(n),
                 "--stop-words", "none", *extra])


SPEECH_TEXTS = (["the budget deficit fell by 30 percent in 1999 and the fiscal year closed with 000 jobs added"] * 3
                + ["our army and navy defend the nation at sea and on land with 10 new ships"] * 3
                + ["schools teachers and students need education funding for every child"] * 3) * 8
"""72 sentences on three subjects (taxes, defence, schools), with numbers in them."""


def random_count_csr(rng, D, Vv, unsorted=False):
    """A D x Vv sparse count matrix (density 0.15, counts 1-6) drawn from ``rng``; ``unsorted``: each row's entries
    in reverse order."""
    X = sp.random(D, Vv, density=0.15, random_state=np.random.RandomState(int(rng.integers(1 << 30))), format="csr")
    X.data = np.ceil(X.data * 6)
    X = X.tocsr()
    if unsorted:                                   # reverse each row's entries: the kernel must not care
        for d in range(D):
            a, b = X.indptr[d], X.indptr[d + 1]
            X.indices[a:b] = X.indices[a:b][::-1].copy()
            X.data[a:b] = X.data[a:b][::-1].copy()
        X.has_sorted_indices = False
    return X


def empty_and_small_corpora():
    """``(empty, small)``: a corpus of one empty document over three words, and one of two short documents."""
    from dptopic.corpus import Corpus, lda_corpus
    empty = Corpus(np.zeros(1, np.int64), np.zeros(0, np.int32), ["a", "b", "c"])
    small = lda_corpus(n_docs=2, vocab_size=10, n_topics=2, doc_length=5, seed=0).corpus
    return empty, small


def check_backend_run(b, corpus, K=2, sweeps=3):
    """Open backend ``b`` on ``corpus``, run ``sweeps`` sweeps, check that its counts are those of its topic
    assignments, and close it."""
    from conftest import counts_from_z

    a = b.open(corpus, K, np.random.default_rng(0), "sparse")
    for _ in range(sweeps):
        assert b.sweep(0.1, 0.05) == {}
    assert b.collect() == {}
    ndk, nwk = counts_from_z(corpus, b.z, K)
    np.testing.assert_array_equal(a.nwk, nwk)
    np.testing.assert_array_equal(a.nk, nwk.sum(axis=0))
    np.testing.assert_array_equal(b.doc_topic_counts(), ndk)
    assert b.n_shards <= max(corpus.n_docs, 1)
    b.close()


class _CpuTimeUp(BaseException):
    """Raised into a block that has spent its CPU seconds (a BaseException: no ``except Exception`` catches it)."""


@contextlib.contextmanager
def cpu_time_limit(seconds: float):
    """Run the block on at most ``seconds`` of this process's CPU time, a bound that load on the machine does not move
    as it moves wall time: the block is stopped with a test failure once the process has spent them in it (by
    ``ITIMER_PROF``, so only on the main thread; elsewhere only the figure is checked). Yields a dict whose
    ``"seconds"`` holds, after the block, the CPU time this thread spent in it; a block that ends over the bound
    fails too."""
    import signal
    import threading
    import time

    spent = {"seconds": None}
    armed = threading.current_thread() is threading.main_thread()
    if armed:
        def _time_up(signum, frame):
            raise _CpuTimeUp()

        previous = signal.signal(signal.SIGPROF, _time_up)
        signal.setitimer(signal.ITIMER_PROF, float(seconds))
    t0 = time.thread_time()
    try:
        yield spent
    except _CpuTimeUp:
        pytest.fail(f"the block was stopped after {seconds:g} s of CPU time")
    finally:
        spent["seconds"] = time.thread_time() - t0
        if armed:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
    assert spent["seconds"] < seconds, f"the block took {spent['seconds']:.1f} s of CPU time, over {seconds:g} s"


SMALL_FIT_WARNINGS = ("ignore::dptopic.SeededNoiseWarning", "ignore::dptopic.SmallCorpusWarning",
                      "ignore::dptopic.DataVocabularyWarning", "ignore:.*already used by an earlier private fit",
                      "ignore:.*trained a private model in this process")
"""The warnings a small, seeded private fit gives in a test process: a seed, a small corpus, a vocabulary read from the
data, documents a private fit of this process has already used."""


def quiet_small_fits(test):
    """``test`` with :data:`SMALL_FIT_WARNINGS` ignored (a test of something else than those warnings)."""
    for w in SMALL_FIT_WARNINGS:
        test = pytest.mark.filterwarnings(w)(test)
    return test


def claiming_trainer(report, n_topics=8, n_iter=20):
    """A trainer for the membership audits, ``train(corpus, rng)``, whose model is plain (leaky) LDA but whose privacy
    report claims whatever ``report`` says."""
    def train(corpus, rng):
        m = dptopic.LDA(n_topics=n_topics, n_iter=n_iter, beta=0.01, seed=rng, verbose=0).fit(corpus)
        m.privacy_ = dict(report)
        return m
    return train


def hide_opendp(monkeypatch):
    """Make OpenDP look uninstalled for the test (``import opendp.prelude`` raises ImportError)."""
    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)


def read_before_opendp_check(*a, **kw):
    """A stand-in for a trainer's data reader that fails the test when called: OpenDP is checked first."""
    raise AssertionError("the data was read before OpenDP was checked")


def loaded_in_a_new_process(statement: str, modules) -> list:
    """Which of ``modules`` (names) a new interpreter has imported once it has run ``statement`` (this checkout's src/
    first on the path): for what a light import path must not load."""
    code = f"import sys\n{statement}\nprint(json.dumps([m for m in {list(modules)!r} if m in sys.modules]))"
    r = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])
