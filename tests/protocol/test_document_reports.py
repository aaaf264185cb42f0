"""Document-level local DP: k-subset selection, one word pair per document, the report format, the server estimate."""
import itertools
import math
import warnings

import numpy as np
import pytest

from dptopic.contributor.document_randomizer import DocumentRandomizer
from dptopic.contributor.randomizer import Randomizer
from dptopic.corpus import Corpus, lda_corpus
from dptopic.errors import DPTopicError
from dptopic.mechanisms.frequency_oracle import (
    inclusion_probabilities,
    subset_selection,
    subset_selection_counts,
    subset_size,
)
from dptopic.protocol.document_reports import DocumentReportSet, domain_size, n_pairs, pair_cooccurrence, pair_index
from helpers import quiet_small_fits


def exact_subset_probabilities(D, eps):
    """P(S | x) for every k-subset S and item x, from the sampling rule (own item kept w.p. p, rest uniform)."""
    k = subset_size(D, eps)
    p, _ = inclusion_probabilities(D, eps, k)
    subsets = list(itertools.combinations(range(D), k))
    P = np.zeros((D, len(subsets)))
    for x in range(D):
        for s, S in enumerate(subsets):
            P[x, s] = p / math.comb(D - 1, k - 1) if x in S else (1 - p) / math.comb(D - 1, k)
    return subsets, P


@pytest.mark.parametrize("D,eps", [(5, 1.0), (6, 0.5), (7, 2.0), (9, 0.1), (4, 3.0)])
def test_worst_case_likelihood_ratio_is_exactly_e_eps(D, eps):
    _, P = exact_subset_probabilities(D, eps)
    assert np.allclose(P.sum(1), 1)
    ratio = max(P[x, s] / P[y, s] for x in range(D) for y in range(D) for s in range(P.shape[1]))
    assert ratio <= math.exp(eps) * (1 + 1e-12)
    assert ratio == pytest.approx(math.exp(eps), rel=1e-9)   # tight, not a loose bound


def test_sampler_matches_the_exact_distribution():
    D, eps, n = 6, 0.5, 60_000
    subsets, P = exact_subset_probabilities(D, eps)
    index = {S: i for i, S in enumerate(subsets)}
    rng = np.random.default_rng(3)
    for x in (0, 4):
        R, event = subset_selection(np.full(n, x), D, eps, rng)
        counts = np.bincount([index[tuple(int(v) for v in r)] for r in R], minlength=len(subsets))
        se = np.sqrt(n * P[x] * (1 - P[x]))
        assert np.all(np.abs(counts - n * P[x]) < 4.5 * se)
    assert event.epsilon == eps and "subset" in event.label


def test_document_reports_are_eps_ldp_for_whole_documents():
    """Every document (any word set over a 3-word vocabulary) against every other: ratio <= e^eps, by enumeration."""
    V, eps = 2, 1.2
    D = domain_size(V)
    _, P = exact_subset_probabilities(D, eps)
    dists = []
    for L in range(5):
        for doc in itertools.product(range(V), repeat=L):     # every document of up to 4 tokens
            item = np.zeros(D)
            if L < 2:
                item[n_pairs(V)] = 1.0
            else:
                pairs = list(itertools.combinations(range(L), 2))
                for a, b in pairs:
                    item[pair_index(doc[a], doc[b], V)] += 1 / len(pairs)
            dists.append(item @ P)
    ratio = max((a / b).max() for a in dists for b in dists)
    assert ratio <= math.exp(eps) * (1 + 1e-12)


@pytest.mark.parametrize("D", [3, 7, 1000, 20_101, 80_201, 2_001_001])
def test_realised_keep_probability_never_exceeds_e_eps(D):
    """The coin realises T / 2^53: checked against e^eps with 80 digits, at every epsilon of a grid (comparing a
    float in [0, 1) with p, as before, realised ceil(p 2^53) / 2^53 and went above e^eps in about half of them)."""
    from decimal import Decimal, localcontext

    from dptopic.mechanisms.frequency_oracle import keep_threshold

    for eps in (0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0):
        k, T = subset_size(D, eps), keep_threshold(D, eps)
        with localcontext() as ctx:
            ctx.prec = 80
            def ratio(t):                                                 # P(S | x in S) / P(S | x not in S)
                return Decimal(t) * (D - k) / (Decimal(2 ** 53 - t) * k)
            bound = Decimal(eps).exp()
            assert ratio(T) <= bound < ratio(T + 1)                       # sound, and the largest sound threshold
        assert inclusion_probabilities(D, eps)[0] == T / 2 ** 53          # the estimator uses the realised p


def test_counts_are_unbiased_within_standard_error():
    D, eps = 200, 4.0
    rng = np.random.default_rng(0)
    truth = np.zeros(D, dtype=np.int64)
    truth[:5] = [3000, 1500, 800, 200, 0]
    truth[5] = 20_000 - truth[:5].sum()
    items = np.repeat(np.arange(D), truth)
    reps = [subset_selection_counts(subset_selection(items, D, eps, rng)[0], D, eps) for _ in range(4)]
    est = np.mean([r[0] for r in reps], axis=0)
    floor = reps[0][1][0] / 2                               # the std of the mean of 4 estimates at count 0
    assert np.all(np.abs(est[:5] - truth[:5]) < 5 * floor * np.sqrt(1 + truth[:5] / 200))
    assert abs(est[6:].mean()) < 5 * floor / np.sqrt(D - 6)  # the zero-count items average to 0


def test_pair_index_follows_the_upper_triangle():
    V = 7
    iu = np.triu_indices(V)
    assert np.array_equal(pair_index(iu[0], iu[1], V), np.arange(n_pairs(V)))
    assert pair_index(5, 2, V) == pair_index(2, 5, V)


VOCAB = ["tax", "budget", "war", "army", "school", "teachers"]


@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_randomizer_rules_and_no_pair_documents():
    with pytest.raises(DPTopicError, match="simulation"):
        DocumentRandomizer(VOCAB, 8.0, seed=1)
    with pytest.raises(DPTopicError, match="epsilon"):
        DocumentRandomizer(VOCAB, 0.0)
    with pytest.raises(DPTopicError, match="vocabulary"):
        DocumentRandomizer(["one"])
    rz = DocumentRandomizer.for_simulation(VOCAB, 8.0, seed=0)
    items = rz.sample_pairs([["tax", "budget"], ["war"], [], ["nothing", "here"], ["tax", "tax", "x"]])
    assert items[0] == pair_index(0, 1, 6) and items[4] == pair_index(0, 0, 6)
    assert list(items[1:4]) == [n_pairs(6)] * 3
    rs = DocumentRandomizer(VOCAB, 8.0).randomize([["tax", "war"], []])    # the default: OS CSPRNG
    assert rs.n_reports == 2 and rs.reports.dtype == np.uint32
    rep = rz.privacy_report(reports_per_contributor=5)
    assert rep["epsilon_doc"] == 8.0 and rep["epsilon_contributor"] == 40.0 and rep["epsilon"] == pytest.approx(40.0)
    assert "NOT covered" in rep["scope"] and rep["kind"] == "document"


@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_format_roundtrip_and_refusals(tmp_path):
    rz = DocumentRandomizer.for_simulation(VOCAB, 2.0, seed=0)
    rs = rz.randomize([["tax", "budget"], ["war", "army", "school"], []] * 5)
    back = DocumentReportSet.from_bytes(rs.to_bytes())
    assert np.array_equal(back.reports, rs.reports) and back.vocabulary.words == VOCAB and back.epsilon == 2.0
    p = rs.save(tmp_path / "r.bin")
    assert np.array_equal(DocumentReportSet.load(p, epsilon=2.0).reports, rs.reports)
    data = bytearray(rs.to_bytes())
    data[40] ^= 1
    with pytest.raises(DPTopicError, match="checksum"):
        DocumentReportSet.from_bytes(bytes(data))
    with pytest.raises(DPTopicError, match="epsilon"):
        DocumentReportSet.load(p, epsilon=8.0)
    word_reports = Randomizer.for_simulation(VOCAB, epsilon_word=1.0, seed=0).randomize([["tax"]]).to_bytes()
    with pytest.raises(DPTopicError, match="document-report") as e:
        DocumentReportSet.from_bytes(word_reports)
    # in the library's names (the trainers' registry names, the randomizers' classes), with the command that runs them
    assert "algorithm='lp' or olp (LPLDA, OLPLDA), not ldp-doc (LocalDocumentLDA)" in str(e.value)
    assert "--" not in str(e.value) and "--algorithm lp or olp" in e.value.message({"algorithm": "--algorithm"})
    with pytest.raises(DPTopicError, match="bad magic") as e:
        DocumentReportSet.from_bytes(b"x" * 64)
    assert str(e.value).endswith("re-create it with a DocumentRandomizer (which 'dptopic randomize' runs for the"
                                 " document unit).") and "--" not in str(e.value)
    bad = rs.reports.copy()
    bad[0, 0], bad[0, 1] = bad[0, 1], bad[0, 0]
    with pytest.raises(DPTopicError, match="corrupt"):
        DocumentReportSet(bad, 6, rs.vocabulary_sha256, 2.0)


@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_server_estimate_recovers_planted_cooccurrence():
    # two word groups that never mix: the estimated co-occurrence between groups is noise, within groups large
    rz = DocumentRandomizer.for_simulation(VOCAB, 8.0, seed=1)
    docs = [["tax", "budget"], ["war", "army"], ["school", "teachers"]] * 4000
    Q, std = pair_cooccurrence(rz.randomize(docs))
    # each two-token document draws its one pair: (c c^T - diag c) / (L (L - 1)) puts 1/2 on each order
    assert Q[0, 1] == pytest.approx(2000, abs=5 * std) and Q[2, 3] == pytest.approx(2000, abs=5 * std)
    assert abs(Q[0, 2]) < 5 * std and np.allclose(Q, Q.T) and abs(Q[0, 0]) < 10 * std


@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_server_model_learns_planted_topics_and_saves(tmp_path):
    import dptopic
    from dptopic.corpus import lda_corpus
    from dptopic.evaluation.topic_matching import topic_recovery
    from dptopic.models import LocalDocumentLDA
    s = lda_corpus(n_docs=20_000, vocab_size=30, n_topics=3, doc_length=12, alpha=0.05, beta=0.05, seed=2)
    rz = DocumentRandomizer.for_simulation(s.corpus.vocabulary, 8.0, seed=0)
    rs = rz.randomize(s.corpus)
    m = LocalDocumentLDA(n_topics=3, reports_per_contributor=2).fit(rs)
    assert topic_recovery(m.components_, s.phi) > 0.85
    assert m.privacy_["epsilon"] == pytest.approx(16.0) and m.privacy_["unit"] == "contributor (local DP, 2 documents)"
    m.save(tmp_path / "m")
    m2 = dptopic.load(tmp_path / "m")
    assert np.array_equal(m2.components_, m.components_) and m2.privacy_["epsilon_doc"] == 8.0
    with pytest.raises(DPTopicError, match="document-level reports"):
        LocalDocumentLDA(n_topics=3).fit(s.corpus)


def test_cli_randomize_and_train_document_reports(tmp_path, capsys):
    import json

    from dptopic.cli.main import main
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB))
    texts = tmp_path / "docs.txt"
    texts.write_text("\n".join(["tax budget tax", "war army", "school teachers school", "nothing here"] * 300))
    rep = tmp_path / "r.bin"
    assert main(["randomize", "--unit", "document", "--epsilon-doc", "8", "--vocabulary", str(vocab), "--corpus",
                 str(texts), "--out", str(rep)]) == 0
    err = capsys.readouterr().err
    assert "1,200 document-level reports" in err and "300 of 1,200 documents" in err
    assert DocumentReportSet.load(rep).n_reports == 1200
    out = tmp_path / "m"
    assert main(["train", "--algorithm", "ldp-doc", "--reports", str(rep), "--topics", "3", "--out", str(out),
                 "--quiet"]) == 0
    meta = json.loads((out / "model.json").read_text())
    assert meta["class"] == "LocalDocumentLDA" and meta["privacy"]["epsilon_doc"] == 8.0
    # wrong flags for the unit, and word-level reports given to the document-level server: one line each
    assert main(["randomize", "--unit", "document", "--epsilon-word", "1", "--vocabulary", str(vocab), "--corpus",
                 str(texts), "--out", str(tmp_path / "x.bin")]) == 2
    assert main(["randomize", "--vocabulary", str(vocab), "--corpus", str(texts), "--out", str(tmp_path / "y.bin")]) == 2
    wrep = tmp_path / "w.bin"
    assert main(["randomize", "--epsilon-word", "1", "--vocabulary", str(vocab), "--corpus", str(texts),
                 "--out", str(wrep)]) == 0
    capsys.readouterr()
    assert main(["train", "--algorithm", "ldp-doc", "--reports", str(wrep), "--topics", "3", "--out",
                 str(tmp_path / "m2"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "document" in err[0]


@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_partial_fit_equals_one_fit_and_survives_a_save(tmp_path):
    import dptopic
    from dptopic.models import LocalDocumentLDA
    rz = DocumentRandomizer.for_simulation(VOCAB, 4.0, seed=3)
    a = rz.randomize([["tax", "budget"], ["war", "army"], ["school", "teachers"]] * 300)
    b = rz.randomize([["tax", "budget", "war"], ["school", "army"]] * 200)
    whole = LocalDocumentLDA(n_topics=2).fit(DocumentReportSet.concatenate([a, b]))
    m = LocalDocumentLDA(n_topics=2).partial_fit(a)
    m.save(tmp_path / "m")
    m = dptopic.load(tmp_path / "m").partial_fit(b)
    np.testing.assert_allclose(m.components_, whole.components_, atol=1e-12)
    assert m.n_reports_ == whole.n_reports_ == 1300
    other = DocumentRandomizer.for_simulation(VOCAB, 8.0, seed=0).randomize([["tax", "war"]])
    before = m.components_.copy()
    with pytest.raises(DPTopicError, match="made at eps_doc=8, the model.s at 4"):
        m.partial_fit(other)
    np.testing.assert_array_equal(m.components_, before)
# ``dptopic.protocol.document_reports``.


@quiet_small_fits
@pytest.mark.parametrize("make", ["word", "document"])
def test_randomizers_refuse_a_one_dimensional_array_and_a_number_as_a_document_in_one_line(make):
    import numpy as np

    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.contributor.randomizer import Randomizer

    words = [f"w{i}" for i in range(10)]
    r = (Randomizer(words, epsilon_word=2.0, secure=True) if make == "word" else DocumentRandomizer(words, epsilon=4.0))
    X = np.ones((3, 10), dtype=int)
    assert r.randomize(X).n_reports == 3
    for bad, says in ((X[0], "X.reshape(1, -1)"), (np.array(5), "2-D"), ([1, 2, 3], "not a int")):
        with pytest.raises(DPTopicError, match=None) as e:
            r.randomize(bad)
        assert says in str(e.value) and "\n" not in str(e.value)


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=60, vocab_size=40, n_topics=2, doc_length=15, seed=1).corpus


# ----------------------------------------------------------------- DocumentReportSet
def test_document_report_set_has_a_readable_repr(small):
    words = list(small.vocabulary.words)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = DocumentRandomizer.for_simulation(words, epsilon=8.0, seed=0).randomize(small.subset(np.arange(3)))
    assert isinstance(rs, DocumentReportSet)
    text = repr(rs)
    assert text == (f"DocumentReportSet(3 reports, V={len(words)}, eps_doc=8, subset_size={rs.subset_size})")
    assert "object at 0x" not in repr(rs[:1]) and repr(rs[:1]).startswith("DocumentReportSet(1 reports")


def test_the_document_randomizer_refuses_a_corpus_that_left_out_its_empty_documents():
    """One report per document, an empty one included: a corpus that already dropped documents with no vocabulary
    word would send fewer reports, by a number read from the text."""
    from dptopic.contributor.document_randomizer import DocumentRandomizer

    words = ["fever", "cough", "rash", "pain"]
    texts = ["fever cough today", "nothing here at all", "rash and pain"]
    r = DocumentRandomizer.for_simulation(words, 4.0, seed=0)
    dropped = Corpus.from_texts(texts, vocabulary=words)
    assert dropped.n_docs == 2 and dropped.n_empty_dropped == 1
    with pytest.raises(DPTopicError, match="left out 1 document") as e:
        r.randomize(dropped)
    assert "drop_empty=False" in str(e.value) and "\n" not in str(e.value)
    kept = Corpus.from_texts(texts, vocabulary=words, drop_empty=False)
    assert len(r.sample_pairs(kept)) == 3
    assert len(r.sample_pairs([t.split() for t in texts])) == 3
