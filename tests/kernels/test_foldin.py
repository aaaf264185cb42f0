"""``dptopic.kernels.foldin``."""
import numpy as np
import pytest

from dptopic.kernels import kernel_state
from dptopic.kernels.foldin import token_log_likelihood
from helpers import KERNEL_SHAPES, csr_token_corpus


def _fold_in_reference(word_ids, doc_ptr, phi_wk, alpha, n_iter, burn_in, base):
    """A pure-Python fold-in with the kernel's per-document streams (PyXorShift.for_document)."""
    from dptopic.kernels.rng import PyXorShift

    K = phi_wk.shape[1]
    theta = np.zeros((len(doc_ptr) - 1, K))
    for d in range(len(doc_ptr) - 1):
        words = [int(w) for w in word_ids[doc_ptr[d]:doc_ptr[d + 1]]]
        if not words:
            theta[d] = 1.0 / K
            continue
        r = PyXorShift.for_document(base, words)
        z = [min(int(r.uniform() * K), K - 1) for _ in words]
        c = np.bincount(z, minlength=K).astype(float)
        for it in range(n_iter):
            for i, w in enumerate(words):
                c[z[i]] -= 1
                p = np.cumsum(phi_wk[w] * (c + alpha))
                u = r.uniform() * p[-1]
                k = 0
                while k < K - 1 and p[k] <= u:
                    k += 1
                z[i] = k
                c[k] += 1
            if it >= burn_in:
                theta[d] += (c + alpha) / (len(words) + K * alpha)
        theta[d] /= n_iter - burn_in
    return theta


def test_fold_in_kernel_matches_numpy_reference(tiny):
    """The compiled fold-in draws exactly what the pure-Python reference draws, document by document."""
    from dptopic.kernels import fold_in

    c = tiny.corpus
    rng = np.random.default_rng(3)
    phi = rng.dirichlet(np.ones(c.vocab_size), size=3)
    phi_wk = np.ascontiguousarray(phi.T)
    ptr = np.concatenate([c.doc_ptr[:6], [c.doc_ptr[5]]])     # five documents and an empty one
    base = kernel_state(rng)
    got = fold_in(c.word_ids, ptr, phi_wk, 0.3, 6, 2, base.copy())
    want = _fold_in_reference(c.word_ids, ptr, phi_wk, 0.3, 6, 2, base)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.allclose(got[-1], 1 / 3)


# ------------------------------------------------------------------------------ log-likelihood, fold-in state
@pytest.mark.parametrize("D,V,K", KERNEL_SHAPES)
def test_token_log_likelihood_matches_numpy(D, V, K):
    rng = np.random.default_rng(V + K)
    wid, ptr = csr_token_corpus(rng, D, V, 7)
    theta = rng.dirichlet(np.ones(K), size=D)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    phi_wk[0] = 0.0                                         # a word no topic emits: floored at 1e-300
    for lo, hi in ((0, D), (1, D), (0, 0)):                 # all documents, a slice not starting at 0, none
        p = ptr[lo:hi + 1]
        ll, n = token_log_likelihood(wid, p, theta[lo:], phi_wk)
        doc = np.repeat(np.arange(hi - lo), np.diff(p))
        s = (theta[lo:][doc] * phi_wk[wid[p[0]:p[-1]]]).sum(axis=1)
        want = np.log(np.maximum(s, 1e-300)).sum()
        assert n == p[-1] - p[0]
        assert ll == pytest.approx(want, rel=1e-12, abs=1e-12)
