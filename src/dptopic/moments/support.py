"""Which released topics stand above the noise of their release (``supported_topics_``).

Post-processing only: every function here reads a noisy release and the public noise scale, never the documents, so
deciding support costs no privacy (Dwork & Roth 2014, Prop. 2.1).

Both tests ask the same question of a Gaussian release ``R = S + noise``: is there structure in ``S`` beyond the one
direction every corpus has, its corpus-wide word frequencies (a corpus whose tokens are shuffled across documents has
that direction too, and no topic)? The null hypothesis is that the signal ``S`` has rank one. The two facts used are

* Weyl's inequality: adding a rank-one matrix moves the second eigenvalue (or singular value) of the noise by nothing,
  so under the null the second eigenvalue (singular value) of the release is at most the first of the noise alone;
* the edge of the noise's spectrum (Tracy & Widom 1996 for a symmetric Gaussian, i.e. Wigner, matrix; Johnstone 2001
  for a rectangular one): a symmetric n x n Gaussian matrix with off-diagonal standard deviation ``s`` and diagonal
  ``s sqrt(2)`` (the Gaussian orthogonal ensemble) has its largest eigenvalue at ``s (2 sqrt(n) + n^(-1/6) TW1)``
  with ``TW1`` Tracy-Widom distributed, whose 95% quantile is 0.98; a K x V matrix of independent N(0, s^2) cells has
  its largest singular value at about ``s (sqrt(K) + sqrt(V) + 1/2 (1/sqrt(K) + 1/sqrt(V))^(1/3) TW1)``.

A topic direction ``u`` (unit norm, orthogonal to the release's leading direction) has ``u' R u`` (or ``||R u||``) no
larger than the release's second eigenvalue (singular value), hence below the edge with probability at least 95%
under the null, for every topic at once, however the topics were computed from the release. A topic above the edge
is therefore supported at a 5% family-wise false-support rate. Below the BBP transition (Baik, Ben Arous & Peche
2005; Benaych-Georges & Nadakuditi 2011: a planted direction with eigenvalue ``lambda`` below ``s sqrt(n)`` leaves no
outlier in the spectrum, and above it its outlier sits at ``lambda + s^2 n / lambda``) no test of the release can
find a topic, so support needs a topic's own eigenvalue to clear ``s sqrt(n)`` at least; the edge asks for about
``2 s sqrt(n)``.

What the tests do not see: the sampling variation of the documents themselves (the release is of the corpus at
hand, so a huge corpus released at a large epsilon shows its chance co-occurrences as structure), and, for iterated
releases (EM), structure a trainer's own start put into its statistic (see :func:`em_supported_topics`).
"""
from __future__ import annotations

import numpy as np

TW1_95 = 0.9793
"""The 95% quantile of the Tracy-Widom distribution of the Gaussian orthogonal ensemble (beta = 1; Tracy & Widom
1996, tabulated e.g. by Bornemann 2010)."""

FALSE_SUPPORT_LEVEL = 0.05
"""The family-wise false-support rate the edges keep (every non-background topic of a model at once)."""


def wigner_edge(n: int, s: float) -> float:
    """The 95% point of the largest eigenvalue of an n x n symmetric Gaussian matrix with off-diagonal standard
    deviation ``s`` (diagonal ``s sqrt(2)``): ``s (2 sqrt(n) + n^(-1/6) TW1_95)``."""
    n = max(int(n), 1)
    return float(s) * (2.0 * np.sqrt(n) + n ** (-1.0 / 6.0) * TW1_95)


def rectangular_edge(k: int, v: int, s: float) -> float:
    """The 95% point of the largest singular value of a k x v matrix of independent N(0, s^2) cells (Johnstone 2001:
    the largest eigenvalue of the Wishart matrix sits at ``(sqrt(k) + sqrt(v))^2`` with Tracy-Widom fluctuations of
    scale ``(sqrt(k) + sqrt(v)) (1/sqrt(k) + 1/sqrt(v))^(1/3)``; its square root halves that scale over the centre)."""
    a, b = np.sqrt(max(int(k), 1)), np.sqrt(max(int(v), 1))
    return float(s) * (a + b + 0.5 * (1.0 / a + 1.0 / b) ** (1.0 / 3.0) * TW1_95)


def _off_direction(vectors: np.ndarray, direction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row of ``vectors`` with its component along the unit ``direction`` removed, scaled to unit norm, and
    whether it had any norm left (a row that was the direction itself is not a topic beyond it)."""
    rest = vectors - np.outer(vectors @ direction, direction)
    norm = np.linalg.norm(rest, axis=1)
    scale = np.linalg.norm(vectors, axis=1)
    ok = norm > 1e-9 * np.maximum(scale, 1e-300)
    rest[ok] /= norm[ok, None]
    rest[~ok] = 0.0
    return rest, ok


def cooccurrence_supported_topics(Q, topics, noise_std: float) -> np.ndarray:
    """Which ``topics`` (rows over the words of ``Q``) stand above the noise of the co-occurrence release ``Q``.

    ``Q``: the symmetrised noisy co-occurrence matrix (n x n), ``noise_std``: the standard deviation of each of its
    off-diagonal cells (the diagonal's is sqrt(2) times that: the Gaussian orthogonal ensemble), ``edge``:
    ``wigner_edge(n, noise_std)``. The leading eigenvector ``v1`` of ``Q`` carries the corpus-wide word frequencies
    (the rank-one part a corpus without topics has too). A topic ``h`` is supported when

    (a) its unit direction off ``v1`` has ``u' Q u > edge``: under the null of a rank-one signal every such value is
        at most ``Q``'s second eigenvalue, which is at most the noise's largest (Weyl), so no topic passes with
        probability at least 95% (module note);
    (b) its unit direction off the topics supported before it (taken in decreasing order of (a)'s value) also has
        ``u' Q u > edge``: it brings a direction of its own, so a topic that repeats a supported one, or that reaches
        the signal only through another's words (a factorisation fitting noise), is not supported;
    (c) fewer topics were supported before it than ``Q`` has eigenvalues above ``edge``: a signal of rank ``m`` leaves
        at most ``m`` of them with probability at least 95% (Weyl again), so their count bounds the topics the
        release can tell apart;
    (d) the topic beats a single word-frequency topic at describing its own signal: with ``t`` the topic's part in the
        release's signal space (the span of its eigenvectors above ``edge``), the topic is closer to ``t`` (cosine)
        than the word-frequency topic ``v1`` is. A topic whose direction off ``v1`` clears the edge can still be
        mostly noise as a word distribution; the word frequencies alone then describe what the release shows of it
        better than the topic does (as with a per-person model at epsilon 1 whose supported topics together covered
        non-private topics less than the word frequencies did). (d) only removes topics, so the 5% bound holds.

    Reads the release and the public noise scale only."""
    Q = np.asarray(Q, dtype=np.float64)
    return _supported_by_edge(Q, topics, wigner_edge(Q.shape[0], max(float(noise_std), 0.0)))


def rectangular_supported_topics(M, topics, noise_std: float) -> np.ndarray:
    """Which ``topics`` (rows over the row words of ``M``) stand above the noise of a rectangular release ``M``
    (n_rows x n_columns, every cell with independent noise of standard deviation ``noise_std``): the tests of
    :func:`cooccurrence_supported_topics` with singular values in place of eigenvalues. For a unit ``u`` over the
    rows, ``||M^T u||`` is at most ``M``'s second singular value when ``u`` is orthogonal to its leading left singular
    vector (the corpus-wide frequencies), which under the null of a rank-one signal is at most the noise's largest
    (Weyl), below :func:`rectangular_edge` with probability at least 95%: so the tests read ``M M^T`` against the
    squared edge. Reads the release and the public noise scale only."""
    M = np.asarray(M, dtype=np.float64)
    edge = rectangular_edge(M.shape[0], M.shape[1], max(float(noise_std), 0.0))
    return _supported_by_edge(M @ M.T, topics, edge ** 2)


def _supported_by_edge(Q: np.ndarray, topics, edge: float) -> np.ndarray:
    """:func:`cooccurrence_supported_topics`'s conditions (a) to (d) on the symmetric ``Q`` against ``edge``."""
    H = np.atleast_2d(np.asarray(topics, dtype=np.float64))
    values, vecs = np.linalg.eigh(Q)
    outliers = int((values > edge).sum())
    U, ok = _off_direction(H, vecs[:, -1])
    ok = ok & beats_frequency_topic(H, vecs[:, values > edge], vecs[:, -1])
    first = np.einsum("kv,vw,kw->k", U, Q, U)
    supported = np.zeros(len(H), dtype=bool)
    basis = np.zeros((Q.shape[0], 0))         # a column per supported topic (orthonormal)
    for k in np.argsort(-first, kind="stable"):
        if not (ok[k] and first[k] > edge) or basis.shape[1] >= outliers:
            continue
        u = H[k] - basis @ (basis.T @ H[k])
        u = u - basis @ (basis.T @ u)         # twice: Gram-Schmidt keeps its orthogonality in floating point
        norm = np.linalg.norm(u)
        if not norm > 1e-6 * np.linalg.norm(H[k]):
            continue
        u /= norm
        if u @ Q @ u > edge:
            supported[k] = True
            basis = np.column_stack([basis, u])
    return supported


def beats_frequency_topic(topics, signal, v1) -> np.ndarray:
    """Condition (d) of :func:`cooccurrence_supported_topics`: for each topic ``h`` (a row of ``topics``), with ``t``
    its projection on ``signal`` (orthonormal columns: the release's eigenvectors above the edge), whether
    ``cos(h, t) > cos(v1, t)``, ``v1`` the release's leading eigenvector (the word frequencies). A topic with no part
    in the signal space does not beat it."""
    H = np.atleast_2d(np.asarray(topics, dtype=np.float64))
    S = np.asarray(signal, dtype=np.float64).reshape(H.shape[1], -1)
    T = (H @ S) @ S.T
    tn = np.linalg.norm(T, axis=1)
    hn = np.linalg.norm(H, axis=1)
    v = np.asarray(v1, dtype=np.float64)
    v = v * (1.0 if v.sum() >= 0 else -1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        own = np.einsum("kv,kv->k", H, T) / (hn * tn)
        freq = (T @ v) / (tn * max(np.linalg.norm(v), 1e-300))
    return (tn > 1e-12 * np.maximum(hn, 1e-300)) & (own > freq)


def em_supported_topics(release, noise_std: float) -> np.ndarray:
    """Which rows (topics) of an EM release stand above its noise: ``release`` is K x V (each row a topic's noisy
    expected word counts), every cell with independent noise of standard deviation ``noise_std``. ``DocDPEM`` passes
    its last release; ``DPSVI`` the sum of its raw releases (each divided by the sampling rate) weighted as its
    ``lambda`` weights them, ``w_t = rho_t prod_(s>t) (1 - rho_s)``, whose noise has standard deviation
    ``noise_multiplier clip / q sqrt(sum_t w_t^2)``.

    The corpus-wide direction is the release's leading right singular vector ``v1``; a topic's row ``r`` is supported
    when what is left of it off ``v1`` has norm ``||r - (r.v1) v1|| > rectangular_edge(K, V, noise_std)``. Those
    norms are at most the release's second singular value, which under the null of a rank-one signal (every topic a
    multiple of one word distribution) is at most the noise's largest (Weyl): no topic passes with probability at least
    95%. Caveat: EM's statistic is computed under the topics of the iteration before, so a corpus without topics
    still shows, in its release, the differences between the topics it was started from (a random start echoes
    through the iterations); the test says that a topic stands above the noise of the release, not that the start
    did not put it there (use ``init`` with public topics, or :class:`~dptopic.models.DocDPCooccurrence`, whose one
    release reads no start). DPSVI's mini-batch releases average many steps and start from a weak ``lambda``: on
    shuffled corpora of 500 documents its false support stayed under 5% (``tests/models/test_supported_topics.py``),
    and it grows with the corpus (1 run in 12 at 1,000 documents, epsilon 2)."""
    R = np.atleast_2d(np.asarray(release, dtype=np.float64))
    if R.shape[0] < 2:
        return np.zeros(R.shape[0], dtype=bool)
    _, _, vt = np.linalg.svd(R, full_matrices=False)
    v1 = vt[0]
    rest = R - np.outer(R @ v1, v1)
    return np.linalg.norm(rest, axis=1) > rectangular_edge(R.shape[0], R.shape[1], max(float(noise_std), 0.0))


def mass_supported(masses, n_cells, noise_std: float) -> np.ndarray:
    """Whether each released word mass (a sum of ``n_cells`` noisy cells, each with noise of standard deviation
    ``noise_std``) stands above its noise: one-sided z-tests at ``FALSE_SUPPORT_LEVEL`` spread over the masses
    (Bonferroni): ``mass > z sqrt(n_cells) noise_std``."""
    from scipy.stats import norm  # scipy.stats takes about a second to import

    m = np.atleast_1d(np.asarray(masses, dtype=np.float64))
    z = float(norm.isf(FALSE_SUPPORT_LEVEL / max(len(m), 1)))
    return m > z * np.sqrt(np.maximum(np.asarray(n_cells, dtype=np.float64), 1.0)) * max(float(noise_std), 0.0)
