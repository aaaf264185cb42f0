"""Local DP, contributor side: the randomizer, its kernel, its accounting and the report format."""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import struct

import numpy as np
import pytest

from conftest import column_corpus, seeded_randomizer
from dptopic.accounting.local import (
    RandomizedResponseEvent,
    epsilon_from_f,
    f_from_epsilon,
    local_privacy_report,
    resolve_f,
)
from dptopic.contributor.randomizer import Randomizer
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.kernels.randomized_response import flip_threshold, packed_column_sums, presence_packed, randomize_presence
from dptopic.kernels.rng import PyXorShift
from dptopic.protocol.estimation import presence_bits
from dptopic.protocol.reports import MAGIC, ReportSet

# Gaps closed in the mechanisms, local randomizers and accountants.


# ------------------------------------------------------------------ Theorem 4
def test_epsilon_f_conversions():
    assert f_from_epsilon(3.0) == pytest.approx(0.094852, abs=1e-6)
    for eps, f in [(0.5, 0.7551), (1, 0.5379), (2, 0.2384), (5, 0.01339), (8, 0.000671)]:
        assert f_from_epsilon(eps) == pytest.approx(f, rel=1e-3)
        assert epsilon_from_f(f_from_epsilon(eps)) == pytest.approx(eps, rel=1e-12)
    rz = Randomizer(["a", "b", "c", "d"], epsilon_word=2.0, secure=True)
    assert rz.epsilon_doc == pytest.approx(8.0)
    for bad in (0.0, 1.0, -0.1, 1.5, float("nan")):
        with pytest.raises(DPTopicError, match="f="):
            resolve_f(f=bad)
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(DPTopicError, match="epsilon_word"):
            resolve_f(epsilon_word=bad)
    with pytest.raises(DPTopicError, match="exactly one"):
        resolve_f(f=0.2, epsilon_word=1.0)


def test_exact_worst_likelihood_ratio_small_vocabulary():
    """Enumerate every input pair and output on V=3: the realised flip probability T/2^32 keeps
    every ratio within e^eps_word for one-word neighbours and e^(V eps_word) overall."""
    V = 3
    for eps in (0.5, 1.0, 3.0, 8.0):
        f = f_from_epsilon(eps)
        p = flip_threshold(f / 2) / 2.0**32
        assert p >= f / 2
        cube = list(itertools.product((0, 1), repeat=V))

        def prob(y, x):
            return math.prod((p if yi != xi else 1 - p) for yi, xi in zip(y, x))

        worst_word = worst_doc = 0.0
        for x, x2 in itertools.product(cube, cube):
            r = max(prob(y, x) / prob(y, x2) for y in cube)
            worst_doc = max(worst_doc, r)
            if sum(a != b for a, b in zip(x, x2)) == 1:
                worst_word = max(worst_word, r)
        assert worst_word <= math.exp(eps) * (1 + 1e-12)
        assert worst_doc <= math.exp(V * eps) * (1 + 1e-12)
        assert worst_word >= math.exp(eps) * (1 - 1e-6)  # and the bound is tight


def test_flip_rates_within_4_se():
    rng = np.random.default_rng(5)
    M, V, f = 3000, 64, 0.4
    corpus, bits = column_corpus(M, V, rng.integers(300, 2700, V), rng)
    for secure in (False, True):
        rz = Randomizer(corpus.vocabulary, f=f, secure=True) if secure else seeded_randomizer(corpus.vocabulary, f=f, seed=11)
        out = rz.randomize(corpus).bits()
        n1, n0 = bits.sum(), (~bits).sum()
        keep = (out & bits).sum() / n1
        create = (out & ~bits).sum() / n0
        assert abs(keep - (1 - f / 2)) <= 4 * math.sqrt((f / 2) * (1 - f / 2) / n1)
        assert abs(create - f / 2) <= 4 * math.sqrt((f / 2) * (1 - f / 2) / n0)


def test_kernel_matches_numpy_reference():
    """The compiled randomizer reproduces a NumPy/pure-Python reference bit for bit."""
    rng = np.random.default_rng(2)
    V, D = 21, 30
    docs = [list(rng.integers(0, V, rng.integers(0, 12))) for _ in range(D)]
    c = Corpus.from_token_ids(docs, [str(i) for i in range(V)])
    T = flip_threshold(0.3)
    state = np.array([123456789, 987654321], dtype=np.uint64)
    got = randomize_presence(c.word_ids, c.doc_ptr, V, T, state.copy())
    ref_rng = PyXorShift(state)
    nb = (V + 7) // 8
    ref = np.zeros((D, nb * 8), bool)
    for d in range(D):
        for b in range(nb):
            for q in range(4):
                x = ref_rng.uint64()
                ref[d, 8 * b + 2 * q] = (x & 0xFFFFFFFF) < T
                ref[d, 8 * b + 2 * q + 1] = (x >> 32) < T
    ref = ref[:, :V] ^ presence_bits(c)
    assert np.array_equal(np.unpackbits(got, axis=1, count=V, bitorder="little").astype(bool), ref)
    assert not np.any(got[:, -1] >> (V % 8))  # padding stays 0
    assert np.array_equal(packed_column_sums(got, V), ref.sum(axis=0))
    assert np.array_equal(np.unpackbits(presence_packed(c.word_ids, c.doc_ptr, V), axis=1, count=V,
                                         bitorder="little").astype(bool), presence_bits(c))


def test_randomizer_inputs_and_seed_rules():
    vocab = ["apple", "pear", "plum"]
    with pytest.raises(DPTopicError, match="simulations only"):
        Randomizer(vocab, epsilon_word=1.0, seed=1, secure=True)
    with pytest.raises(DPTopicError, match="simulations only"):
        Randomizer(vocab, epsilon_word=1.0, seed=1)                  # the default is the OS CSPRNG: no seed
    with pytest.raises(DPTopicError, match="simulations only"):
        Randomizer(vocab, epsilon_word=1.0, secure=False)            # the fast generator must be asked for by name
    assert Randomizer(vocab, epsilon_word=1.0).secure                # the default is cryptographic
    with pytest.warns(UserWarning, match="undo"):
        Randomizer(vocab, epsilon_word=1.0, seed=1, simulation=True)
    a = seeded_randomizer(vocab, f=0.5, seed=3).randomize([["apple", "plum", "kiwi"], [1, 1], []])
    b = seeded_randomizer(vocab, f=0.5, seed=3).randomize([["apple", "plum"], ["pear"], []])
    assert a.n_reports == 3 and np.array_equal(a.packed, b.packed)
    with pytest.raises(DPTopicError, match="token lists"):
        seeded_randomizer(vocab, f=0.5, seed=3).randomize(["apple plum"])
    with pytest.raises(DPTopicError, match="invalid token"):
        seeded_randomizer(vocab, f=0.5, seed=3).randomize([[7]])
    rep = seeded_randomizer(vocab, f=0.5, seed=3).privacy_report()
    assert rep["noise_reproducible"] is True


# ----------------------------------------------------------------- accounting
def test_rr_event_pld_rdp_and_report():
    f = f_from_epsilon(1.0)
    one = RandomizedResponseEvent(f, 1)
    assert one.pld().get_epsilon_for_delta(0.0) == pytest.approx(1.0, abs=1e-3)
    doc = RandomizedResponseEvent(f, 50)
    assert doc.epsilon == pytest.approx(50.0)
    tight = doc.pld().get_epsilon_for_delta(1e-5)
    assert tight < 50.0
    # the exact V-fold PLD agrees with composing the one-bit PLD 50 times
    assert tight == pytest.approx(one.pld().self_compose(50).get_epsilon_for_delta(1e-5), abs=0.01)
    assert np.allclose(doc.rdp(np.array([2.0, 8.0])), 50 * one.rdp(np.array([2.0, 8.0])))
    rep = local_privacy_report(f, 50)
    assert rep["unit"] == "document (local DP)"
    assert rep["epsilon_word"] == pytest.approx(1.0) and rep["epsilon_doc"] == pytest.approx(50.0)
    assert rep["epsilon_basic"] == pytest.approx(50.0)
    assert rep["epsilon_pld"] <= rep["epsilon_basic"] and rep["epsilon_rdp"] <= rep["epsilon_basic"]
    assert rep["events"][0]["type"] == "randomized_response"


# -------------------------------------------------------------------- reports
@pytest.fixture()
def reports():
    vocab = [f"w{i}" for i in range(13)]
    docs = [[f"w{i}" for i in range(0, 13, k)] for k in range(1, 8)]
    return seeded_randomizer(vocab, epsilon_word=2.0, seed=4).randomize(docs), vocab


def test_report_file_round_trip(reports, tmp_path):
    rs, vocab = reports
    p = rs.save(tmp_path / "r.bin")
    back = ReportSet.load(p, vocabulary=vocab, f=rs.f)
    assert np.array_equal(back.packed, rs.packed) and back.f == rs.f and back.vocabulary.words == vocab
    assert ReportSet.from_bytes(rs.to_bytes(include_vocabulary=False)).vocabulary is None
    both = ReportSet.concatenate([rs, back[2:4]])
    assert both.n_reports == rs.n_reports + 2


def test_report_file_refuses_corruption_and_mismatch(reports, tmp_path):
    rs, vocab = reports
    data = bytearray(rs.to_bytes())
    for pos in (3, 20, len(data) - 40, len(data) - 5):
        bad = bytearray(data)
        bad[pos] ^= 0x01
        with pytest.raises(DPTopicError, match="corrupt|magic"):
            ReportSet.from_bytes(bytes(bad))
    for cut in (5, 30, len(data) - 1):
        with pytest.raises(DPTopicError, match="corrupt"):
            ReportSet.from_bytes(bytes(data[:cut]))
    with pytest.raises(DPTopicError, match="another vocabulary"):
        ReportSet.from_bytes(bytes(data), vocabulary=vocab[::-1])
    with pytest.raises(DPTopicError, match="13 words"):
        ReportSet.from_bytes(bytes(data), vocabulary=vocab[:5])
    with pytest.raises(DPTopicError, match="f="):
        ReportSet.from_bytes(bytes(data), f=0.3)
    # a well-formed file of a future version is refused by version, not by checksum
    head = json.loads(bytes(data[12:12 + struct.unpack("<I", data[8:12])[0]]))
    head["version"] = 2
    h = json.dumps(head).encode()
    body = MAGIC + struct.pack("<I", len(h)) + h + rs.packed.tobytes()
    with pytest.raises(DPTopicError, match="version 2"):
        ReportSet.from_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(DPTopicError, match="wrong length"):
        ReportSet(rs.packed[:, :1], 13, rs.vocabulary_sha256, rs.f)
    with pytest.raises(DPTopicError, match="does not exist"):
        ReportSet.load(tmp_path / "missing.bin")


@pytest.mark.parametrize("cmd", ["randomize", "serve"])
def test_a_per_word_epsilon_above_50_is_refused_as_no_protection(tmp_path, capsys, cmd):
    # eps_word 500 gave f = 1.4e-217: "randomized" reports that are the presence vectors themselves
    from dptopic.accounting.local import f_from_epsilon
    from dptopic.cli.main import main

    with pytest.raises(DPTopicError, match=r"must be a number in \(0, 50\] for reports"):
        Randomizer(["a", "b"], epsilon_word=500)
    with pytest.raises(DPTopicError, match=r"must be a number in \(0, 50\] for reports"):
        Randomizer(["a", "b"], f=1e-30)
    # reports and models made before the limit still account: the accountants take eps_word up to 500
    assert epsilon_from_f(f_from_epsilon(500)) == pytest.approx(500)
    assert local_privacy_report(f_from_epsilon(100), 3)["epsilon_word"] == pytest.approx(100)
    assert Randomizer(["a", "b"], epsilon_word=50).epsilon_word == pytest.approx(50)
    (tmp_path / "v.txt").write_text("apple\nbanana\n")
    (tmp_path / "d.txt").write_text("apple banana\n")
    args = (["randomize", "--corpus", str(tmp_path / "d.txt"), "--out", str(tmp_path / "r.dpr")] if cmd == "randomize"
            else ["serve", "--database", f"sqlite:///{tmp_path / 's.db'}", "--topics", "2"])
    assert main([*args, "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "500"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--epsilon-word" in err and "(0, 50]" in err, err
    assert not (tmp_path / "s.db").exists() and not (tmp_path / "r.dpr").exists()

WORDS = ["apple", "pear", "plum"]
TEXTS = ["apple pear", "zzz qqq", "plum apple"]     # the second document holds no vocabulary word


# ---------------------------------------------------------------- word-level randomizer: one report per document
def test_the_word_randomizer_refuses_a_corpus_that_left_out_its_empty_documents():
    """Real reports from a Corpus built with the default drop_empty=True were one fewer per document without a
    vocabulary word: their number was an exact function of the text (DocumentRandomizer already refused it)."""
    from dptopic.contributor.randomizer import Randomizer

    dropped = Corpus.from_texts(TEXTS, vocabulary=WORDS)
    assert dropped.n_docs == 2 and dropped.n_empty_dropped == 1
    with pytest.raises(DPTopicError, match="drop_empty=False"):
        Randomizer(WORDS, epsilon_word=3.0).randomize(dropped)


def test_the_word_randomizer_sends_one_report_per_document_however_they_are_given():
    from dptopic.contributor.randomizer import Randomizer

    rz = Randomizer(WORDS, epsilon_word=3.0)
    kept = Corpus.from_texts(TEXTS, vocabulary=WORDS, drop_empty=False)
    assert rz.randomize(kept).n_reports == 3
    assert rz.randomize([t.split() for t in TEXTS]).n_reports == 3
    assert rz.randomize(np.array([[1, 1, 0], [0, 0, 0], [1, 0, 1]])).n_reports == 3
    # a simulation randomizes the documents it is given (experiments and audits on a prepared corpus)
    with pytest.warns(UserWarning):
        sim = Randomizer.for_simulation(WORDS, epsilon_word=3.0, seed=0)
    assert sim.randomize(Corpus.from_texts(TEXTS, vocabulary=WORDS)).n_reports == 2


WORDS_2 = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


# ---- item 5: the contributor-side default is the OS CSPRNG
def test_randomizer_default_is_cryptographic():
    from dptopic.contributor.randomizer import Randomizer

    rz = Randomizer(WORDS_2, epsilon_word=1.0)
    assert rz.secure and not rz.simulation and "CSPRNG" in rz.privacy_report()["randomness"]
    fast = Randomizer.for_simulation(WORDS_2, epsilon_word=1.0)
    assert not fast.secure and "SIMULATION" in fast.privacy_report()["randomness"]
    assert rz.randomize([["apple"], [], ["fig", "kiwi"]]).n_reports == 3


def test_an_empty_vocabulary_is_refused_naming_the_parameter():
    from dptopic.errors import ParameterError

    with pytest.raises(ParameterError) as e:
        Randomizer([], epsilon_word=1.0)
    assert str(e.value) == "empty vocabulary: give at least one word." and e.value.parameter == "vocabulary"
    assert e.value.message({"vocabulary": "--vocabulary"}).endswith("(one word per line in --vocabulary).")
