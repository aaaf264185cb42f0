"""DP set union (thresholds, weights, release) and the FDPTM composition."""
import json
import math

import numpy as np
import pytest

from dptopic.accounting import LaplaceEvent, PrivacyLedger
from dptopic.accounting import ApproxDPEvent
from dptopic.accounting.set_union import gaussian_sigma
from dptopic.corpus import Corpus
from dptopic.corpus.private_vocabulary import _l2_descent, _water_fill, dp_set_union, dpsu_threshold, set_union_weights
from dptopic.errors import DPTopicError


def test_thresholds_hand_computed():
    # rho = 1 + ln(1/(2 delta))/eps for delta0 = 1; Gamma = rho + alpha/eps
    assert dpsu_threshold(1.0, 1e-4, 1) == pytest.approx(1 + math.log(5000), abs=1e-9)
    assert dpsu_threshold(1.0, 1e-4, 1) == pytest.approx(9.517, abs=1e-3)
    assert dpsu_threshold(1.0, 1e-4, 1) + 3.0 == pytest.approx(12.517, abs=1e-3)
    assert dpsu_threshold(1.0, 1e-4, 10) == pytest.approx(10.920, abs=1e-3)
    # Gaussian: sigma from the analytic Gaussian mechanism at (eps, delta/2); rho at t = 1
    from scipy.stats import norm

    s = gaussian_sigma(1.0, 0.5e-4)
    assert norm.cdf(0.5 / s - s) - math.e * norm.cdf(-0.5 / s - s) == pytest.approx(0.5e-4, rel=1e-6)
    assert dpsu_threshold(1.0, 1e-4, 1, "gaussian") == pytest.approx(1 + s * norm.isf(0.5e-4), rel=1e-9)


def test_water_fill_and_l2_descent():
    np.testing.assert_allclose(_water_fill(np.array([0.2, 1.0, 1.0])), [0.2, 0.4, 0.4])
    np.testing.assert_allclose(_water_fill(np.array([0.3, 0.2])), [0.3, 0.2])  # everything fits
    np.testing.assert_allclose(_l2_descent(np.array([3.0, 4.0])), [0.6, 0.8])    # a step of length 1 along the gaps
    np.testing.assert_allclose(_l2_descent(np.array([0.3, 0.4])), [0.3, 0.4])    # shorter than 1: filled


class _FixedOrder:
    """The documents' order fixed (the added one inserted anywhere), and each document's own sample the same in
    both runs: the coupling under which Gopi et al. bound the histogram's sensitivity."""

    def __init__(self, order):
        self.order = order

    def permutation(self, n):
        return np.asarray(self.order)

    def choice(self, words, size, replace):
        return np.random.default_rng(int(np.sum(np.asarray(words) * 7919)) % 2 ** 32).choice(words, size, replace)


def _difference(docs, extra, at, gamma, delta0, order, p, V=None):
    V = V or 1 + max(max(d) for d in docs + [extra])
    words = [f"w{i}" for i in range(V)]
    less = Corpus.from_token_ids(docs, words)
    more = Corpus.from_token_ids(docs + [extra], words)
    o = list(range(len(docs)))
    o.insert(at, len(docs))
    H = set_union_weights(less, gamma, delta0, order, p, _FixedOrder(list(range(len(docs)))))
    H2 = set_union_weights(more, gamma, delta0, order, p, _FixedOrder(o))
    return float(np.linalg.norm(H2 - H, ord=p))


def test_one_document_moves_the_histogram_by_at_most_one():
    """Gopi et al.'s Theorems 5.2 and 5.3 need each policy to be contractive. Two cases that broke it before: an L2
    budget water-filled (1.066 in L2), and the cap delta0 applied after dropping the words others had filled, so a
    document's kept words depended on the others (1.1 in L1); then a seeded search over small corpora."""
    assert _difference([[2, 0], [3, 0], [1, 2]], [0, 3, 1, 2], 1, 1.5, 10, "gopi", 2) <= 1 + 1e-12
    a, b, c, d = 0, 1, 2, 3
    docs = [[c, c, c, b], [a, a, a, a, d, d], [d, c, c, a, a, a, a]]
    assert _difference(docs, [d, c, c, c, a, a, a], 0, 1.1, 2, "frequency", 1) <= 1 + 1e-12
    rng = np.random.default_rng(0)
    worst = {}
    for order, p in (("frequency", 1), ("gopi", 1), ("gopi", 2)):
        for _ in range(1500):
            V, n = int(rng.integers(2, 6)), int(rng.integers(1, 5))
            docs = [list(rng.integers(0, V, size=rng.integers(1, 7))) for _ in range(n + 1)]
            worst[order, p] = max(worst.get((order, p), 0.0),
                                  _difference(docs[:-1], docs[-1], int(rng.integers(0, n + 1)),
                                              float(rng.choice([0.6, 1.0, 1.1, 1.5, 2.0, 3.0])),
                                              int(rng.integers(1, 4)), order, p, V))
    assert max(worst.values()) <= 1 + 1e-12, worst


def _toy():
    # ten documents "a a b", one document "c"
    docs = [[0, 0, 1]] * 10 + [[2]]
    return Corpus.from_token_ids(docs, ["a", "b", "c"])


def test_weights_frequency_order_by_hand():
    c = _toy()
    gamma = 1.5
    H = set_union_weights(c, gamma, delta0=1, order="frequency", rng=np.random.default_rng(0))
    # delta0 = 1: each document keeps its most frequent word, a, whatever the others did: a fills (1 + 0.5), the
    # other documents then have nothing open (b is never kept), c gets 1
    np.testing.assert_allclose(H, [1.5, 0.0, 1.0])
    H = set_union_weights(c, 10.0, delta0=2, order="frequency", rng=np.random.default_rng(0))
    np.testing.assert_allclose(H, [10.0, 0.0, 1.0])  # the whole unit budget goes to "a" until it is full
    H = set_union_weights(c, 10.0, delta0=2, order="gopi", rng=np.random.default_rng(0))
    np.testing.assert_allclose(H, [5.0, 5.0, 1.0])  # water-filling splits evenly


def test_release_by_hand_and_event():
    c = _toy()
    # eps = 100: noise scale 0.01; rho = 1 + ln(500)/100 = 1.0621; Gamma = rho + 10 * 0.01
    vocab, ev = dp_set_union(c, 100.0, 1e-3, delta0=1, alpha=10.0, seed=0, mechanism="laplace", order="frequency")
    assert vocab.words == ["a"]  # "c" has weight 1 < rho: a single user's word is not released; "b" is never kept
    assert isinstance(ev, ApproxDPEvent) and ev.epsilon == 100.0 and ev.delta == 1e-3 and ev.unit == "document"
    vocab, _ = dp_set_union(c, 100.0, 1e-3, delta0=2, alpha=10.0, seed=0, order="gopi", mechanism="gaussian")
    assert "c" not in vocab.words
    for bad in (dict(epsilon=0.0, delta=1e-5), dict(epsilon=1.0, delta=1.0), dict(epsilon=1.0, delta=0.0)):
        with pytest.raises(DPTopicError):
            dp_set_union(c, **bad)


def test_default_is_the_gaussian_policy_and_releases_more_words_than_the_laplace_one():
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=3000, vocab_size=2000, n_topics=10, doc_length=60, seed=2).corpus
    default, ev = dp_set_union(c, 0.5, 1e-6, seed=0)
    assert "gaussian" in ev.label and "gopi" in ev.label and "delta0=100" in ev.theorem
    laplace, ev_l = dp_set_union(c, 0.5, 1e-6, mechanism="laplace", seed=0)
    assert "frequency" in ev_l.label and "delta0=50" in ev_l.theorem
    # the same (eps, delta): an L2 budget spreads each document's weight over its words (148 against 47)
    assert len(default) >= 2 * len(laplace) > 0
    with pytest.raises(DPTopicError, match="order='frequency'"):
        dp_set_union(c, 0.5, 1e-6, order="frequency")


def test_ledger_with_approximate_events_keeps_pure_reports():
    pure = PrivacyLedger()
    pure.spend(LaplaceEvent(1.0), 3)
    rep = pure.report(1e-5)
    assert "delta_basic" not in rep and rep["epsilon_basic"] == pytest.approx(3.0)
    mixed = PrivacyLedger()
    mixed.spend(LaplaceEvent(1.0), 3)
    mixed.spend(ApproxDPEvent(0.5, 1e-6))
    rep = mixed.report(1e-5)
    assert rep["epsilon_basic"] == pytest.approx(3.5) and rep["delta_basic"] == pytest.approx(1e-6)
    assert rep["epsilon_pld"] <= 3.5 + 1e-6
    assert rep["epsilon_pld"] >= pure.epsilon_tight(1e-5)


def test_fdptm_composed_report():
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import HDPLDA, LDA
    from dptopic.models.fdptm import fit_fdptm

    corpus = lda_corpus(n_docs=300, vocab_size=60, n_topics=3, doc_length=30, seed=0).corpus
    m, restricted = fit_fdptm(HDPLDA(n_topics=3, n_iter=2, epsilon_laplace=1.0, epsilon_inherent=1.0, seed=0,
                                     verbose=0, delta=1e-5), corpus, 2.0, 1e-6, seed=0)
    p = m.privacy_
    assert restricted.vocabulary.words == m.vocabulary_.words
    assert p["private"] and p["epsilon_basic"] == pytest.approx(2.0 + 2 * (1.0 + 1.0))
    assert p["delta"] == pytest.approx(1e-5 + 1e-6) and p["delta_basic"] == pytest.approx(1e-6)
    assert p["epsilon_pld"] == pytest.approx(2.0 + p["topic_model"]["epsilon_pld"])
    assert p["epsilon_pld_tight"] <= p["epsilon_pld"] + 1e-6
    assert p["guarantee"] == "partial" and any("different privacy units" in w for w in p["warnings"])
    assert restricted.vocab_size >= 3 and math.isfinite(m.coherence(restricted, top_n=3))  # coherence on the private vocabulary
    json.dumps(p)
    m2, _ = fit_fdptm(LDA(n_topics=3, n_iter=2, seed=0, verbose=0), corpus, 0.5, 1e-6, seed=0)
    assert not m2.privacy_["private"] and "vocabulary_selection" in m2.privacy_


def test_cli_train_private_vocabulary(tmp_path):
    from dptopic.cli.main import main

    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:1500]))
    out = tmp_path / "m"
    assert main(["train", "--corpus", str(src), "--algorithm", "hdp", "--topics", "3", "--iterations", "2",
                 "--private-vocabulary", "1.0,1e-5", "--out", str(out), "--quiet", "--seed", "0"]) == 0
    meta = json.loads((out / "model.json").read_text())
    rep = meta["privacy"]
    assert rep["vocabulary_selection"]["epsilon"] == 1.0 and rep["warnings"]
    # the vocabulary protects a whole document (add/remove): the exact corpus sizes would undo that, so only the
    # released vocabulary size is saved
    assert meta["training"] == {"vocab_size": len(meta["vocabulary"])}
    assert "gaussian" in json.dumps(rep["vocabulary_selection"])          # the default policy
    out2 = tmp_path / "m2"
    assert main(["train", "--corpus", str(src), "--algorithm", "hdp", "--topics", "3", "--iterations", "2",
                 "--private-vocabulary", "1.0,1e-5", "--vocabulary-policy", "laplace", "--out", str(out2), "--quiet",
                 "--seed", "0"]) == 0
    sel = json.dumps(json.loads((out2 / "model.json").read_text())["privacy"]["vocabulary_selection"])
    assert "laplace" in sel and "frequency" in sel
    assert main(["train", "--corpus", str(src), "--algorithm", "hdp", "--vocabulary-policy", "laplace",
                 "--out", str(tmp_path / "m3"), "--quiet"]) == 2          # a policy without --private-vocabulary


def test_cut_off_defaults_by_policy_and_a_larger_gaussian_cut_off_releases_more_words():
    from dptopic.corpus.private_vocabulary import noise_scale
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=3000, vocab_size=2000, n_topics=10, doc_length=60, seed=2).corpus
    for mech, alpha in (("gaussian", 10.0), ("laplace", 3.0)):
        _, ev = dp_set_union(c, 0.5, 1e-6, mechanism=mech, seed=0)
        d0 = 100 if mech == "gaussian" else 50
        gamma = dpsu_threshold(0.5, 1e-6, d0, mech) + alpha * noise_scale(0.5, 1e-6, mech)
        assert f"Gamma={gamma:.4f}" in ev.theorem
    # the same documents, order and noise (seed 0): only the cut-off differs
    near = len(dp_set_union(c, 0.5, 1e-6, alpha=3.0, seed=0)[0])
    default = len(dp_set_union(c, 0.5, 1e-6, seed=0)[0])
    assert default > near > 0


def test_a_private_vocabularys_scope_and_corpus_line_do_not_call_the_corpus_sizes_public(tmp_path, capsys):
    # (review, 2026-11-24) the sizes are no longer saved, but the scope still said they were public under word
    # replacement and the corpus line labelled them so: the vocabulary's guarantee protects whole documents
    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:1500]))
    assert main(["train", "--corpus", str(src), "--algorithm", "hdp", "--topics", "3", "--iterations", "2",
                 "--private-vocabulary", "1.0,1e-5", "--out", str(tmp_path / "m"), "--quiet", "--seed", "0"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "sizes are public" not in printed and "outside the guarantee; shown here, not saved" in printed
    scope = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]["scope"]
    assert "public under word replacement" not in scope and "count and lengths are not saved" in scope


def test_a_private_vocabulary_beside_a_trainer_with_no_guarantee_composes_to_none(tmp_path):
    # (review, 2026-11-24) FedLDA's tail rule gives no (epsilon, delta); composing a private vocabulary with it crashed
    # in dp_accounting (IndexError) at fit, and the recomputation at load did too
    import warnings

    import dptopic
    from dptopic.accounting.verify import verify_report
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models.fdptm import fit_fdptm

    corpus = lda_corpus(n_docs=300, vocab_size=60, n_topics=3, doc_length=30, seed=0).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, _ = fit_fdptm(dptopic.FedLDA(n_topics=3, rounds=2, n_clients=10, exclusion="tail", verbose=0), corpus,
                         1.0, 1e-6)
    p = m.privacy_
    assert p["epsilon"] is None and p["guarantee"] == "none" and p["epsilon_method"].startswith("none")
    assert verify_report(p).status == "verified"
    m.save(tmp_path / "m")
    assert dptopic.load(tmp_path / "m").privacy_["guarantee"] == "none"
