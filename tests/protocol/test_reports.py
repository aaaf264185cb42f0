"""Local DP from randomize to report file, train and report/verify, each item once broken:

1. Word-level reports (Randomizer, ReportSet, LPLDA) stated a scope that left out what docs/local_dp.md says is not
   covered: how many reports a contributor sends and when (the document-level reports and OLPLDA named it).
2. Models trained from reports (LPLDA, OLPLDA, LocalDocumentLDA) carried the central trainers' "fits" note: "every
   other private fit on the same documents spends its own budget, and the epsilons add up". A refit of the same
   reports is post-processing and spends nothing.
3. ``dptopic randomize`` and ``train --algorithm lp|ldp-doc`` printed epsilons rounded to nearest (--f 0.2 gave
   eps_word=2.197 for ln 9 = 2.19722, --epsilon-doc 1.2345649 gave 1.23456): below the figure spent. They now round up,
   and randomize states the composition over all the reports it wrote (as ``dptopic submit`` does).
4. A document-level report file whose embedded vocabulary has another length than its ``vocab_size`` (its fingerprint
   matching the shorter list) was accepted, and LocalDocumentLDA fitted topics over V words with V - 1 names; an
   embedded vocabulary that did not match its fingerprint was not checked when a vocabulary was given.
5. The seeded randomizers' SeededNoiseWarning named a line inside dptopic (Randomizer.for_simulation) or none of the
   caller's (DocumentRandomizer(..., seed=, simulation=True)), not the caller's line.
6. DocumentRandomizer's docstring listed ``secure`` (as Randomizer takes it), but ``secure=True`` was refused as an
   unexpected argument; it now takes it with Randomizer's rules (a seed or secure=False only in a simulation).

And statistical checks (fixed seeds, tolerances from standard errors): the document-level
pair estimate is unbiased on a small domain; the word-level moment estimator's variance is its formula.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import struct
import warnings

import numpy as np
import pytest

from dptopic.contributor.document_randomizer import DocumentRandomizer
from dptopic.contributor.randomizer import Randomizer
from dptopic.errors import DPTopicError, SeededNoiseWarning
from dptopic.protocol.document_reports import MAGIC as DOC_MAGIC
from dptopic.protocol.document_reports import DocumentReportSet, pair_cooccurrence
from dptopic.protocol.estimation import moment_estimate, variance_exact
from dptopic.protocol.reports import vocabulary_fingerprint

NOT_COVERED = "how many reports a contributor sends and when"
WORDS = [f"w{i}" for i in range(12)]


def _docs(n=120):
    return [[WORDS[i % 12], WORDS[(3 * i) % 12], WORDS[(5 * i + 1) % 12]] for i in range(n)]


def _seeded(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        return fn(*a, **k)


# ------------------------------------------------------------------ 1. the word-level scope
def test_word_level_scope_names_the_number_and_timing_of_reports():
    from dptopic.models import LPLDA

    rz = Randomizer(WORDS, epsilon_word=2.0)
    reports = rz.randomize(_docs())
    model = LPLDA(n_topics=2, n_iter=3, verbose=0).fit(reports)
    for rep in (rz.privacy_report(), reports.privacy_report(), model.privacy_):
        assert NOT_COVERED in rep["scope"], rep["scope"]
        assert "public vocabulary" in rep["scope"]
    model.for_contributors(3)      # what serve does before a save: the scope stays
    assert NOT_COVERED in model.privacy_["scope"]


# ------------------------------------------------------------------ 2. refits of the same reports spend nothing
def test_models_trained_from_reports_say_a_refit_is_post_processing():
    from dptopic.models import LPLDA, LocalDocumentLDA

    lp = LPLDA(n_topics=2, n_iter=3, verbose=0).fit(Randomizer(WORDS, epsilon_word=2.0).randomize(_docs()))
    doc = LocalDocumentLDA(n_topics=2).fit(DocumentRandomizer(WORDS, 4.0).randomize(_docs()))
    for m in (lp, doc):
        fits = m.privacy_["fits"]
        assert "post-processing" in fits and "spends nothing more" in fits, fits
        assert "spends its own budget" not in fits
        m.for_contributors(2)
        assert "post-processing" in m.privacy_["fits"]


# ------------------------------------------------------------------ 3. the CLI's figures, rounded up
def _shown(text, label):
    m = re.search(rf"{label}=([0-9.e+]+)", text)
    assert m is not None, text
    return float(m.group(1))


def test_randomize_and_train_print_epsilons_rounded_up_with_the_composition(tmp_path, capsys):
    from dptopic.cli.main import main

    words = dict(zip(WORDS, ["apple", "pear", "plum", "grape", "melon", "lemon", "lime", "kiwi", "mango", "peach",
                             "berry", "cherry"]))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(words.values()) + "\n")
    texts = tmp_path / "docs.txt"
    texts.write_text("\n".join(" ".join(words[w] for w in d) for d in _docs(30)) + "\n")
    out = tmp_path / "w.dpr"
    assert main(["randomize", "--vocabulary", str(vocab), "--f", "0.2", "--corpus", str(texts), "--out", str(out)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    eps_word = math.log(9.0)                 # f = 0.2: ln((2 - f)/f), 2.19722...
    assert _shown(err, "eps_word") >= eps_word and "eps_word=2.198 per word" in err, err
    assert _shown(err, "eps_doc") >= 12 * eps_word, err
    assert "together eps_word=65.92" in err and "eps=791.1 for all 30 documents" in err, err   # 30 x, rounded up
    assert "never counted" not in err and "contain no word" not in err, err
    assert main(["train", "--algorithm", "lp", "--reports", str(out), "--topics", "2", "--iterations", "2",
                 "--out", str(tmp_path / "m")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "(eps_word=2.198)" in printed, printed

    eps_doc = 1.2345649                      # :g printed 1.23456, below it
    out = tmp_path / "d.dpr"
    assert main(["randomize", "--unit", "document", "--epsilon-doc", str(eps_doc), "--vocabulary", str(vocab),
                 "--corpus", str(texts), "--out", str(out)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert _shown(err, "eps_doc") >= eps_doc and "eps_doc=1.235 per document" in err, err
    assert "together eps=37.04 for all 30 documents" in err, err          # 37.036947, rounded up
    assert main(["train", "--algorithm", "ldp-doc", "--reports", str(out), "--topics", "2",
                 "--out", str(tmp_path / "md")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "eps_doc=1.235" in printed and "eps_doc = 1.235 for any two documents" in printed, printed


# ------------------------------------------------------------------ 4. the document-level file's vocabulary
def _crafted(head: dict, payload: bytes) -> bytes:
    h = json.dumps(head, separators=(",", ":")).encode()
    body = DOC_MAGIC + struct.pack("<I", len(h)) + h + payload
    return body + hashlib.sha256(body).digest()


def test_document_reports_refuse_a_vocabulary_of_another_size_or_fingerprint():
    rs = _seeded(DocumentRandomizer.for_simulation, WORDS, 4.0, seed=0).randomize(_docs())
    payload = rs.reports.astype("<u4").tobytes()
    short = WORDS[:-1]
    head = {**rs.header(), "vocabulary": short, "vocabulary_sha256": vocabulary_fingerprint(short)}
    with pytest.raises(DPTopicError, match="embedded vocabulary does not match"):
        DocumentReportSet.from_bytes(_crafted(head, payload))
    with pytest.raises(DPTopicError, match="does not match the reports' fingerprint"):
        DocumentReportSet(rs.reports, len(WORDS), vocabulary_fingerprint(short), 4.0, short)
    # an embedded list that is not the fingerprinted one: corrupt, even when the right vocabulary is given
    head = {**rs.header(), "vocabulary": WORDS[::-1]}
    with pytest.raises(DPTopicError, match="embedded vocabulary does not match"):
        DocumentReportSet.from_bytes(_crafted(head, payload), vocabulary=WORDS)
    assert DocumentReportSet.from_bytes(_crafted(rs.header(), payload), vocabulary=WORDS).n_reports == rs.n_reports


# ------------------------------------------------------------------ 5. the seed warning names the caller's line
def test_seed_warnings_name_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Randomizer.for_simulation(WORDS, epsilon_word=1.0, seed=1)
        DocumentRandomizer(WORDS, 1.0, seed=1, simulation=True)
        DocumentRandomizer.for_simulation(WORDS, 1.0, seed=1)
    seeded = [w for w in caught if issubclass(w.category, SeededNoiseWarning)]
    assert len(seeded) == 3 and all(w.filename == __file__ for w in seeded), [(w.filename, w.lineno) for w in seeded]


# ------------------------------------------------------------------ statistical checks
def test_document_level_pair_estimate_is_unbiased_on_a_small_domain():
    """Three words (7 items): the mean of 3,000 independent estimates of the pair matrix of 8 documents lies within
    4.5 standard errors of sum_d (c c^T - diag c) / (L (L - 1)) in every cell (9 cells, two epsilons)."""
    vocab = ["a", "b", "c"]
    docs = [["a", "b"], ["a", "a", "c"], ["b"], [], ["c", "c", "c", "a"], ["a", "b", "c", "b"], ["x", "a"], ["a", "b"]]
    truth = np.zeros((3, 3))
    for d in docs:
        ids = [vocab.index(w) for w in d if w in vocab]
        if len(ids) >= 2:
            c = np.bincount(ids, minlength=3).astype(float)
            truth += (np.outer(c, c) - np.diag(c)) / (len(ids) * (len(ids) - 1))
    R, n = 3000, len(docs)
    for eps, seed in ((0.5, 11), (2.0, 12)):
        rs = _seeded(DocumentRandomizer.for_simulation, vocab, eps, seed=seed).randomize(docs * R)
        est = np.array([pair_cooccurrence(rs[i * n:(i + 1) * n])[0] for i in range(R)])
        se = est.std(0, ddof=1) / np.sqrt(R)
        assert np.all(np.abs(est.mean(0) - truth) < 4.5 * se), (eps, (est.mean(0) - truth) / se)


def test_word_level_moment_estimator_variance_matches_its_formula():
    """Eq. (8) over 2,000 independent randomizations of the same 60 documents: its variance, pooled over 12 words, is
    (2 - f) f M / (4 (1 - f)^2) within 4.5 standard errors (that of a sample variance, sqrt(2/(R - 1)) of it, over
    the 12 independent words), and its mean is the true document frequency within 4.5 standard errors per word."""
    docs = _docs(60)
    truth = np.array([sum(w in d for d in docs) for w in WORDS], dtype=float)
    R, M = 2000, len(docs)
    for eps, seed in ((1.0, 21), (3.0, 22)):
        rz = _seeded(Randomizer.for_simulation, WORDS, epsilon_word=eps, seed=seed)
        rs = rz.randomize(docs * R)
        counts = np.array([rs[i * M:(i + 1) * M].column_sums() for i in range(R)])
        est = moment_estimate(counts, M, rz.f)
        v = variance_exact(M, rz.f)
        assert abs(est.var(0, ddof=1).mean() - v) < 4.5 * v * math.sqrt(2 / (R - 1)) / math.sqrt(len(WORDS))
        assert np.all(np.abs(est.mean(0) - truth) < 4.5 * math.sqrt(v / R))


# ------------------------------------------------------------------ 6. DocumentRandomizer takes secure= as documented
def test_document_randomizer_takes_secure_as_its_docstring_and_randomizer_do():
    """Its docstring listed ``secure`` (as Randomizer takes it), but secure= was an "unexpected argument"."""
    rz = DocumentRandomizer(WORDS, 4.0, secure=True)
    assert rz.secure and not rz.simulation and rz.randomize(_docs(5)).n_reports == 5
    with pytest.raises(DPTopicError, match="seed"):                       # a seed is never secure
        DocumentRandomizer(WORDS, 4.0, secure=True, seed=1)
    with pytest.raises(DPTopicError, match="simulation"):
        DocumentRandomizer(WORDS, 4.0, secure=False)
    with pytest.raises(DPTopicError, match="drop secure=True"):
        DocumentRandomizer(WORDS, 4.0, secure=True, simulation=True)
    with pytest.warns(SeededNoiseWarning):                                 # allowed in a simulation, with a warning
        sim = DocumentRandomizer(WORDS, 4.0, secure=False, simulation=True, seed=1)
    assert not sim.secure and sim.simulation


def test_the_rebuilt_report_of_a_collection_server_keeps_naming_its_guarantee():
    """for_contributors (what serve calls before every save) rebuilt privacy_ without the 'guarantee' field the fitted
    report had (full, partial or none), so a served model's report lost it."""
    from dptopic.models import LPLDA, LocalDocumentLDA

    lp = LPLDA(n_topics=2, n_iter=3, verbose=0).fit(Randomizer(WORDS, epsilon_word=2.0).randomize(_docs()))
    doc = LocalDocumentLDA(n_topics=2).fit(DocumentRandomizer(WORDS, 4.0).randomize(_docs()))
    for m in (lp, doc):
        before = m.privacy_["guarantee"]
        assert m.for_contributors(3) is m       # returns the model, as scikit-learn's setters do
        assert m.privacy_["guarantee"] == before == "full"


def test_train_states_the_guarantee_for_several_reports_per_contributor(tmp_path, capsys):
    """The API could state a report for contributors who sent several reports (for_contributors); train could not."""
    import json

    from dptopic.cli.main import main
    from dptopic.protocol.reports import ReportSet

    words = [f"word{c}" for c in "abcdefghijkl"]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(words) + "\n")
    texts = tmp_path / "docs.txt"
    texts.write_text("\n".join(" ".join(words[WORDS.index(w)] for w in d) for d in _docs(30)) + "\n")
    out = tmp_path / "w.dpr"
    assert main(["randomize", "--vocabulary", str(vocab), "--epsilon-word", "1", "--corpus", str(texts),
                 "--out", str(out)]) == 0
    eps_doc = ReportSet.load(out).privacy_report()["epsilon_doc"]
    for algo, extra in (("lp", ["--iterations", "2"]), ("olp", ["--prior", "none", "--iterations", "2"])):
        m = tmp_path / algo
        assert main(["train", "--algorithm", algo, "--reports", str(out), "--topics", "2", "--out", str(m),
                     "--reports-per-contributor", "3"] + extra) == 0
        rep = json.loads((m / "model.json").read_text())["privacy"]
        assert rep.get("reports_per_contributor") == 3 and rep["epsilon_basic"] == pytest.approx(3 * eps_doc), rep
        assert eps_doc < rep["epsilon"] <= rep["epsilon_basic"], rep         # tight composition, below the sum
    capsys.readouterr()
    assert main(["train", "--algorithm", "lda", "--corpus", str(texts), "--topics", "2", "--iterations", "2",
                 "--out", str(tmp_path / "x"), "--reports-per-contributor", "3"]) == 2
    assert "--reports-per-contributor" in capsys.readouterr().err


def test_corpus_info_describes_a_report_file(tmp_path, capsys):
    """'dptopic corpus info reports.dpr' said the file looked binary: a contributor could not check what it wrote."""
    import json

    from dptopic.cli.main import main

    w, d = tmp_path / "w.dpr", tmp_path / "d.dpr"
    Randomizer(WORDS, epsilon_word=0.5).randomize(_docs(20)).save(w)
    DocumentRandomizer(WORDS, 4.0).randomize(_docs(25)).save(d)
    assert main(["corpus", "info", str(w)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "20 randomized word-level reports" in out and "vocabulary of 12 words" in out, out
    assert "eps_word=0.5 per word, eps_doc=6 per report" in out and "binary" not in out, out
    assert main(["corpus", "info", str(d), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["kind"] == "document-level reports" and info["reports"] == 25 and info["epsilon_doc"] == 4.0
    d.write_bytes(d.read_bytes()[:-7])           # truncated: the loader's one-line refusal
    assert main(["corpus", "info", str(d)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err


def test_a_bad_upload_nonce_is_refused_in_one_line():
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.errors import DPTopicError
    from dptopic.protocol.reports import ReportSet

    rs = Randomizer(["a", "b", "c"], epsilon_word=2.0, secure=True).randomize([["a"]])
    with pytest.raises(DPTopicError, match="upload_nonce is not 32 lowercase hex digits"):
        rs.to_bytes(nonce="XYZ")
    raw = rs.to_bytes(nonce="0" * 32)
    assert ReportSet.from_bytes(raw).upload_nonce == "0" * 32 and ReportSet.from_bytes(rs.to_bytes()).upload_nonce is None
# Damaged or odd local reports and models: each is refused in one line (never a traceback, a hang or two readings).


pytestmark = pytest.mark.filterwarnings("ignore")

FRUIT_WORDS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "orange", "peach", "pear", "plum", "kiwi", "melon"]
DOCS = [d.split() for d in ("apple banana cherry grape lemon mango", "orange peach pear plum kiwi melon",
                            "apple cherry lemon orange pear kiwi", "banana grape mango peach plum melon")]


def _reports():
    from dptopic.contributor.randomizer import Randomizer

    return Randomizer(FRUIT_WORDS, epsilon_word=1.0, secure=True).randomize(DOCS)


def _with_header(raw: bytes, edit) -> bytes:
    """The file with its JSON header text passed through ``edit`` and the checksum made right again."""
    (H,) = struct.unpack("<I", raw[8:12])
    head = edit(raw[12:12 + H].decode())
    body = raw[:8] + struct.pack("<I", len(head.encode())) + head.encode() + raw[12 + H:-32]
    return body + hashlib.sha256(body).digest()


def test_a_huge_vocab_size_is_refused_in_one_line():
    from dptopic.protocol.reports import ReportSet

    def huge(text):
        h = json.loads(text)
        V = 2 ** 70
        h.update(vocab_size=V, n_reports=0, bytes_per_report=(V + 7) // 8)
        h.pop("vocabulary", None)
        return json.dumps(h)

    raw = _reports().to_bytes()
    (H,) = struct.unpack("<I", raw[8:12])
    bad = _with_header(raw[:12 + H] + raw[-32:], huge)        # no payload: 0 reports
    with pytest.raises(DPTopicError, match="vocab_size .* is out of range"):
        ReportSet.from_bytes(bad)


@pytest.mark.parametrize("which", ["word", "document"])
def test_a_header_that_gives_a_field_twice_is_refused(which):
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.protocol.document_reports import DocumentReportSet
    from dptopic.protocol.reports import ReportSet

    if which == "word":
        raw, cls = _reports().to_bytes(), ReportSet
    else:
        raw, cls = DocumentRandomizer(FRUIT_WORDS, 8.0).randomize(DOCS).to_bytes(), DocumentReportSet
    twice = _with_header(raw, lambda t: t[:-1] + ',"n_reports":' + str(json.loads(t)["n_reports"]) + "}")
    with pytest.raises(DPTopicError, match="'n_reports' more than once"):
        cls.from_bytes(twice)
    cls.from_bytes(raw)         # the file as written reads


def test_report_bytes_of_other_types_are_refused_and_a_memoryview_is_read():
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.protocol.document_reports import DocumentReportSet
    from dptopic.protocol.reports import ReportSet

    raw = _reports().to_bytes()
    for bad in (None, "str", 123):
        with pytest.raises(DPTopicError, match="expected the bytes of a report file"):
            ReportSet.from_bytes(bad)
    assert ReportSet.from_bytes(memoryview(raw)).n_reports == 4
    doc = DocumentRandomizer(FRUIT_WORDS, 8.0).randomize(DOCS).to_bytes()
    assert DocumentReportSet.from_bytes(memoryview(doc)).n_reports == 4


def test_document_reports_given_as_word_reports_are_refused_naming_the_trainer_that_reads_them():
    from dptopic.protocol.reports import ReportSet

    data = DocumentRandomizer(WORDS, 4.0).randomize(_docs(5)).to_bytes()
    with pytest.raises(DPTopicError) as e:
        ReportSet.from_bytes(data)
    assert "train on them with algorithm='ldp-doc' (LocalDocumentLDA)" in str(e.value) and "--" not in str(e.value)
    assert "with --algorithm ldp-doc (LocalDocumentLDA)" in e.value.message({"algorithm": "--algorithm"})


def test_padding_bits_are_found_as_numpy_finds_them():
    """``padding_set`` (a pass over the reports' last bytes, none when V is a multiple of 8) agrees with the array
    check it replaced, for every V mod 8 and set sizes 0 to 50."""
    import numpy as np

    from dptopic.kernels.randomized_response import last_byte_mask
    from dptopic.protocol.reports import padding_set

    rng = np.random.default_rng(0)
    for V in range(1, 25):
        for n in (0, 1, 3, 50):
            for clear in (False, True):
                packed = rng.integers(0, 256, (n, (V + 7) // 8), dtype=np.uint8)
                if clear:
                    packed[:, -1] &= last_byte_mask(V)
                want = bool(n and np.any(packed[:, -1] & np.uint8(~last_byte_mask(V) & 0xFF)))
                assert padding_set(packed, V) == want, (V, n, clear)


def test_a_known_header_reads_what_from_bytes_reads_and_leaves_every_other_file_to_it():
    """``KnownHeader.read`` (a server's fast path for the header ``dptopic submit`` writes for its settings) gives the
    set ``ReportSet.from_bytes`` gives for every whole file with that header, and None for any other file, which
    ``from_bytes`` then reads or refuses in its own words."""
    from dptopic.protocol.reports import ReportSet, new_upload_nonce

    rs = _reports()
    fp = vocabulary_fingerprint(FRUIT_WORDS)
    known = ReportSet.known_header(len(FRUIT_WORDS), fp, rs.f)
    for n in range(5):
        for nonce in (None, new_upload_nonce()):
            raw = rs[:n].to_bytes(include_vocabulary=False, nonce=nonce) if n else \
                ReportSet(rs.packed[:0], rs.vocab_size, fp, rs.f).to_bytes(nonce=nonce)
            got, want = known.read(raw), ReportSet.from_bytes(raw)
            assert got is not None and got.n_reports == want.n_reports == n
            assert np.array_equal(got.packed, want.packed) and got.packed.flags.writeable
            assert (got.vocab_size, got.vocabulary_sha256, got.f, got.upload_nonce, got.vocabulary) == \
                (want.vocab_size, want.vocabulary_sha256, want.f, want.upload_nonce, want.vocabulary)
    raw = rs.to_bytes(include_vocabulary=False, nonce=new_upload_nonce())
    (H,) = struct.unpack("<I", raw[8:12])
    padded = bytearray(raw)
    padded[12 + H + (len(FRUIT_WORDS) + 7) // 8 - 1] |= 0x80      # a padding bit of the first report
    padded[-32:] = hashlib.sha256(bytes(padded[:-32])).digest()
    others = {
        "the word list embedded": rs.to_bytes(include_vocabulary=True),
        "another f": Randomizer(FRUIT_WORDS, epsilon_word=1.5, secure=True).randomize(DOCS).to_bytes(False),
        "another vocabulary": Randomizer(WORDS, epsilon_word=1.0, secure=True).randomize([["w1"]]).to_bytes(False),
        "spaces in the header": _with_header(raw, lambda t: json.dumps(json.loads(t))),
        "a field twice": _with_header(raw, lambda t: t[:-1] + ',"n_reports":4}'),
        "fields in another order": _with_header(raw, lambda t: json.dumps(dict(reversed(json.loads(t).items())),
                                                                        separators=(",", ":"))),
        "an upper-case nonce": _with_header(raw, lambda t: t.replace(t[-34:-2], t[-34:-2].upper())),
        "a count of reports the payload does not hold": _with_header(raw, lambda t: t.replace('"n_reports":4',
                                                                                              '"n_reports":5')),
        "a leading zero": _with_header(raw, lambda t: t.replace('"n_reports":4', '"n_reports":04')),
        "a byte changed": raw[:-40] + bytes([raw[-40] ^ 1]) + raw[-39:],
        "truncated": raw[:-1],
        "a padding bit set": bytes(padded),
        "another magic": b"DPTLDPD\n" + raw[8:],
    }
    for what, data in others.items():
        assert known.read(data) is None, what
        try:
            ReportSet.from_bytes(data)
        except DPTopicError:
            pass
