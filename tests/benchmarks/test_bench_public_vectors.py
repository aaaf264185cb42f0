"""The denoisers and the singles' choice of benchmarks/bench_public_vectors.py, checked against plain NumPy: the
James-Stein (SURE) block shrinkage in the public embedding subspace, its band form in the public kernel's
eigenbasis, the singles chosen by public cluster coverage, the lighter spreads of the fifth round and what
``--cached --stats`` reads from the saved first releases."""
from types import SimpleNamespace

import numpy as np
import pytest


def goe(n, s, rng):
    """A symmetric Gaussian matrix with off-diagonal deviation ``s`` and diagonal ``s sqrt(2)``, as the symmetrised
    release's noise."""
    G = s * rng.standard_normal((n, n))
    return (G + G.T) / np.sqrt(2.0)


def test_sure_blocks_scales_each_block_by_its_james_stein_factor(bench):
    rng = np.random.default_rng(0)
    n, d, s = 30, 4, 0.7
    B, _ = np.linalg.qr(rng.standard_normal((n, d)))
    Q = goe(n, s, rng) + 5.0 * (B @ np.diag([3.0, 2.0, 1.0, 0.5]) @ B.T)
    est, factors = bench.sure_blocks(Q, B, s)
    P = B @ B.T
    inside, outside = P @ Q @ P, (np.eye(n) - P) @ Q @ (np.eye(n) - P)
    cross = Q - inside - outside
    noise = (s * s * d * (d + 1), 2 * s * s * d * (n - d), s * s * (n - d) * (n - d + 1))
    expect = [max(0.0, 1 - e / (X ** 2).sum()) for X, e in zip((inside, cross, outside), noise)]
    np.testing.assert_allclose(factors, expect)
    np.testing.assert_allclose(est, expect[0] * inside + expect[1] * cross + expect[2] * outside, atol=1e-12)
    assert expect[0] > 0.9 and expect[2] < 0.2       # the signal lies inside the span, only noise outside


def test_block_noise_energies_are_those_of_the_goe(bench):
    """The expected noise energy of each block (the factors' numerators) matches a Monte Carlo mean within 3 s.e."""
    rng = np.random.default_rng(1)
    n, d, s = 20, 3, 1.3
    B, _ = np.linalg.qr(rng.standard_normal((n, d)))
    P = B @ B.T
    draws = []
    for _ in range(400):
        N = goe(n, s, rng)
        inside, outside = P @ N @ P, (np.eye(n) - P) @ N @ (np.eye(n) - P)
        draws.append([(inside ** 2).sum(), ((N - inside - outside) ** 2).sum(), (outside ** 2).sum()])
    draws = np.array(draws)
    expect = np.array([s * s * d * (d + 1), 2 * s * s * d * (n - d), s * s * (n - d) * (n - d + 1)])
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - expect) < 3 * se)


def test_band_sure_matches_a_rotation_and_per_block_scaling(bench):
    rng = np.random.default_rng(2)
    n, s = 24, 0.5
    B, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q = goe(n, s, rng) + 4.0 * np.outer(B[:, 0], B[:, 0])
    bands = bench.geometric_bands(n, first=4)
    assert bands == [4, 8, 12] and sum(bands) == n
    est, F = bench.band_sure(Q, B, bands, s)
    C = B.T @ Q @ B
    cut = np.cumsum([0] + bands)
    for i in range(len(bands)):
        for j in range(len(bands)):
            blk = C[cut[i]:cut[i + 1], cut[j]:cut[j + 1]]
            noise = s * s * bands[i] * ((bands[i] + 1) if i == j else bands[j])
            assert F[i, j] == pytest.approx(max(0.0, 1 - noise / (blk ** 2).sum()))
            C[cut[i]:cut[i + 1], cut[j]:cut[j + 1]] = F[i, j] * blk
    np.testing.assert_allclose(est, B @ C @ B.T, atol=1e-12)
    np.testing.assert_allclose(est, est.T, atol=1e-12)             # symmetric: F is symmetric
    # with every factor 1 (no noise) the estimate is the matrix itself
    np.testing.assert_allclose(bench.band_sure(Q, B, bands, 0.0)[0], Q, atol=1e-10)


def test_band_sure_lowers_the_error_of_a_smooth_signal(bench):
    """A signal smooth in the public basis (its first band) under GOE noise: the shrunk estimate is closer to it
    than the noisy matrix, over 20 draws."""
    rng = np.random.default_rng(3)
    n, s = 60, 1.0
    B, _ = np.linalg.qr(rng.standard_normal((n, n)))
    S = B[:, :4] @ np.diag([40.0, 30.0, 20.0, 10.0]) @ B[:, :4].T
    bands = bench.geometric_bands(n, first=4)
    err_raw, err_sure = [], []
    for _ in range(20):
        Q = S + goe(n, s, rng)
        err_raw.append(((Q - S) ** 2).sum())
        err_sure.append(((bench.band_sure(Q, B, bands, s)[0] - S) ** 2).sum())
    assert np.mean(err_sure) < 0.2 * np.mean(err_raw)


def test_public_basis_is_orthonormal_and_starts_smooth(bench):
    rng = np.random.default_rng(4)
    U = rng.standard_normal((15, 5))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    B = bench.public_basis(U)
    np.testing.assert_allclose(B.T @ B, np.eye(15), atol=1e-10)
    K = np.exp(10 * (U @ U.T - 1))
    q = np.einsum("ni,nm,mi->i", B, K, B)           # each basis vector's kernel quotient: decreasing
    assert np.all(np.diff(q) <= 1e-9)


def test_cover_order_takes_one_single_from_each_public_cluster(bench):
    """Two tight clusters of words by vector, the most frequent words all in the first: the singles by cluster
    coverage are the most frequent word of each cluster, then every other candidate in its order."""
    rng = np.random.default_rng(5)
    a, b = np.eye(3)[0], np.eye(3)[1]
    E = np.vstack([a + 0.01 * rng.standard_normal((6, 3)), b + 0.01 * rng.standard_normal((4, 3))])
    weight = np.array([100, 90, 80, 70, 60, 50, 40, 30, 20, 10], dtype=float)
    run = SimpleNamespace(kept=np.arange(10), found=np.ones(10, dtype=bool), E=E)
    order = np.arange(10)
    got = bench.cover_order(run, order, weight, 2)
    assert list(got[:2]) == [0, 6]
    assert sorted(got) == list(range(10)) and list(got[2:]) == [1, 2, 3, 4, 5, 7, 8, 9]


def test_rectangular_routes_read_the_library_statistic_and_place_the_other_words(bench):
    """Each shape of ``RECT_SHAPES`` is a route with its noiseless ceiling; on a planted corpus the noiseless
    rectangular route gives topics over the whole vocabulary, and the placement by the columns' weights moves the
    words outside the rows only (the rows' topics are the same)."""
    import types

    from dptopic.corpus import lda_corpus
    from dptopic.kernels.docdp import tokens_to_bow

    for shape in bench.RECT_SHAPES:
        assert {f"rect-{shape}", f"rect-{shape}-noiseless", f"rect-{shape}-place"} <= set(bench.ROUTES)
    p = lda_corpus(n_docs=600, vocab_size=120, n_topics=3, doc_length=40, alpha=0.1, beta=0.05, seed=1)
    c = p.corpus
    rng = np.random.default_rng(0)
    E = np.eye(3)[np.argmax(p.phi, axis=0)] + 0.1 * rng.standard_normal((120, 3))
    counts = np.bincount(c.word_ids, minlength=120).astype(float)
    run = SimpleNamespace(K=3, V=120, counts=counts, sigma_rank=1.0, sigma=1.0, E=E, found=np.ones(120, dtype=bool),
                          bow=tokens_to_bow(c.doc_ptr, c.word_ids, 120), _memo={}, index=0)
    for name in ("memo", "full", "spread", "paired_noise"):
        setattr(run, name, types.MethodType(getattr(bench.Run, name), run))
    plain, _ = bench.rectangular(run, 40, 4, 4, noise=False, method="direct")
    placed, _ = bench.rectangular(run, 40, 4, 4, noise=False, place=True)
    assert plain.shape == placed.shape == (3, 120)
    np.testing.assert_allclose(placed.sum(axis=1), 1.0)
    rows = np.sort(np.argsort(-counts, kind="stable")[:40])
    outside = np.setdiff1d(np.arange(120), rows)
    np.testing.assert_allclose(placed[:, rows] / placed[:, rows].sum(axis=1, keepdims=True),
                               plain[:, rows] / plain[:, rows].sum(axis=1, keepdims=True), rtol=1e-6)
    assert not np.allclose(placed[:, outside], plain[:, outside], rtol=1e-2)


def test_paired_differences_mark_a_route_by_two_standard_errors(bench, tmp_path, capsys):
    """``--cached --paired spread``: each route's mean difference from the spread over the same releases, with its
    standard error; a route below by more than two of them is marked ``-``, above ``+``, else ``=``."""
    import json

    folder = tmp_path / "tiny-eps1-K20"
    folder.mkdir()
    spread = [0.70, 0.72, 0.71, 0.73]
    scores = {"signal": {str(r): 17.0 + r for r in range(4)},
              "spread": {str(r): {"coverage": c, "accuracy": 0.8, "supported": 2} for r, c in enumerate(spread)},
              # coverage 0.05 below on every release (loses), accuracy within noise of the spread's
              "groups": {str(r): {"coverage": c - 0.05, "accuracy": 0.8 + 0.01 * (-1) ** r, "supported": 8}
                         for r, c in enumerate(spread)}}
    (folder / "scores.json").write_text(json.dumps(scores))
    args = bench.argparse.Namespace(cache=str(tmp_path), corpora=["tiny"], epsilon=1.0, topics=20, runs=4,
                                    routes=["groups"], paired="spread", markdown=False)
    bench.cached(args)
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("tiny"))
    assert "17-20" in line and "-0.050 ± 0.000 -" in line and "=" in line.split("-0.050")[1]


def _spread_run(bench, seed, n_kept, supported, K=3, V=60):
    """A stand-in for a saved fit, for the spread routes: ``K`` topics over ``V`` words, the first ``n_kept`` of them
    released (their weights drawn, the rest a flat tail), 5-dimensional vectors for every word, and the benchmark's
    ``Run.spread`` bound to it; returns it and its topics."""
    import types

    rng = np.random.default_rng(seed)
    kept = np.arange(n_kept)
    beta = np.full((K, V), 1.0)
    beta[:, kept] = rng.gamma(0.3, size=(K, n_kept)) * 50
    beta /= beta.sum(axis=1, keepdims=True)
    model = SimpleNamespace(components_=beta, supported_topics_=np.array(supported))
    run = SimpleNamespace(model=model, kept=kept, E=rng.standard_normal((V, 5)), found=np.ones(V, dtype=bool), V=V)
    run.spread = types.MethodType(bench.Run.spread, run)
    return run, beta


def test_faded_spread_moves_each_topic_by_its_own_share(bench):
    """The fifth round's lighter spreads: ``faded_spread`` is the release where its fade is 0 and the library's
    spread where it is 1, topic by topic; ``spread-supported`` spreads the supported topics only, and
    ``spread-kept100`` moves half as far with 50 kept words."""
    from dptopic.moments.public_groups import spread_tail

    run, beta = _spread_run(bench, 3, 12, [True, False, True])
    E, found = run.E, run.found
    spread = spread_tail(beta, run.kept, E, found)
    assert not np.allclose(spread, beta)
    np.testing.assert_allclose(bench.faded_spread(run, 0.0), beta, atol=1e-12)
    np.testing.assert_allclose(bench.faded_spread(run, 1.0), spread, atol=1e-12)
    out, sup = bench.ROUTES["spread-supported"][0](run)
    assert sup == 2
    np.testing.assert_allclose(out[[0, 2]], spread[[0, 2]], atol=1e-12)
    np.testing.assert_allclose(out[1], beta[1], atol=1e-12)
    run.kept = np.arange(50)
    half, _ = bench.ROUTES["spread-kept100"][0](run)
    full = spread_tail(beta, run.kept, E, found)
    mid = 0.5 * full + 0.5 * beta
    np.testing.assert_allclose(half, mid / mid.sum(axis=1, keepdims=True), atol=1e-12)


def test_short_documents_fade_the_spread_by_kept_words(bench):
    """``spread-short-kept100`` reads the documents' length from the first release (word entries over the document
    entry): under ``SHORT_WORDS`` it moves as far as ``spread-kept100``, at or above it as far as the spread."""
    run, _ = _spread_run(bench, 4, 25, [True, False, False])
    words = np.full(run.V, 10.0)
    run.ranking = np.concatenate([words, [words.sum() / 6.0]])          # 6 distinct words a document: short
    assert bench.mean_distinct_words(run) == pytest.approx(6.0)
    short, _ = bench.ROUTES["spread-short-kept100"][0](run)
    np.testing.assert_allclose(short, bench.ROUTES["spread-kept100"][0](run)[0], atol=1e-12)
    run.ranking = np.concatenate([words, [words.sum() / 30.0]])         # 30: long
    long_, _ = bench.ROUTES["spread-short-kept100"][0](run)
    np.testing.assert_allclose(long_, bench.ROUTES["spread"][0](run)[0], atol=1e-12)
    assert not np.allclose(short, long_)


def test_stats_read_each_saved_fit_first_release(bench, tmp_path, capsys):
    """``--cached --stats``: the signal, kept words and documents' length read from the saved fits' first releases
    (their means over the fits); here one saved fit of a planted corpus of 12-word documents."""
    import warnings

    import dptopic
    from dptopic.corpus import lda_corpus

    c = lda_corpus(n_docs=1500, vocab_size=400, n_topics=3, doc_length=12, alpha=0.1, beta=0.05, seed=2).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.DocDPCooccurrence.from_budget(1.0, 1e-5, n_topics=3, public_vectors=None, seed=0).fit(c)
    m.save(tmp_path / "tiny-eps1-K3" / "fit0")
    args = bench.argparse.Namespace(cache=str(tmp_path), corpora=["tiny"], epsilon=1.0, topics=3, runs=2,
                                    stats=True)
    bench.cached(args)
    row = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| tiny"))
    cells = [x.strip() for x in row.strip("|").split("|")]
    ranking = m.releases_["ranking"]
    assert float(cells[1]) == pytest.approx(ranking[:400].sum() / (175.0 * m.noise_std_), abs=0.06)
    assert int(cells[2]) == len(m.kept_words_)
    # 12 tokens of 400 words: about 10 distinct words a document, read through the noise
    assert 6.0 < float(cells[3]) < 14.0
