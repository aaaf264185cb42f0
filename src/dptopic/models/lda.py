"""Plain collapsed Gibbs LDA: the non-private reference (Griffiths & Steyvers 2004)."""
from __future__ import annotations

import numpy as np

from .._validation import Int, Options
from ..accounting import non_private_report
from ..errors import DPTopicError
from ..evaluation import joint_log_likelihood
from .base import GibbsTopicModel

# sampler="auto" runs the word-ordered sampler from this many threads on (measured on 16 cores: the exact sampler's
# partition scheme gained nothing from 8 threads to 16; docs/research/cgs_scaling.md)
WARP_FROM_THREADS = 4


class LDA(GibbsTopicModel):
    """Latent Dirichlet allocation by collapsed Gibbs sampling (Griffiths & Steyvers 2004).

    Parameters
    ----------
    n_topics : number of topics K.
    alpha, beta : symmetric Dirichlet priors on θ and Φ.
    n_iter : number of full Gibbs sweeps.
    seed : int, None or a numpy Generator; every random choice flows from it.
    n_jobs : threads (see ``parallel``).
    backend : ``"threads"`` (this machine, ``n_jobs`` threads) or ``"dask"`` (one shard per
        Dask worker or per shard file, see ``docs/scaling.md``).
    client : the ``distributed.Client`` for ``backend="dask"``; not saved.
    parallel : how ``n_jobs > 1`` threads split the work: ``"partition"`` (default: documents × words
        blocks swept one diagonal at a time, Yan et al. 2009; threads never write the same counts and
        nothing is merged; measured faster than AD-LDA, see ``docs/scaling.md``) or ``"adlda"`` (above).
        Both are bit-identical for a fixed seed and ``n_jobs``. The threads backend only: with
        ``backend="dask"`` each shard is swept by its worker as in AD-LDA, and ``parallel`` (saved as given)
        has no effect.
    sampler : ``"sparse"`` (SparseLDA bucket decomposition, exact), ``"dense"`` (exact), ``"warp"`` (word-ordered
        Metropolis-Hastings passes, WarpLDA, Chen et al. 2016: O(1) per token and the word-topic table read in
        order, for large ``n_topics`` and vocabularies; not exact, see ``docs/scaling.md``; threads backend only),
        or ``"auto"``: the exact sparse sampler on 1 to 3 threads, ``"warp"`` from 4 threads on the threads backend
        with ``parallel="partition"`` (on 16 cores the exact sampler's partition stopped scaling at 8 threads,
        0.6-1.2x tomotopy at 16, while the warp sampler ran at 1.9-3.9x tomotopy with held-out perplexity within
        1.3% of tomotopy's exact sampler: ``docs/research/cgs_scaling.md``). ``sampler_`` says which one ran.
    eval_every : record the joint log-likelihood every this many sweeps (0: never).
    verbose : 0 silences the progress bar.

    Attributes
    ----------
    components_ : (K, V) topic–word probabilities, rows sum to 1.
    sampler_ : the sampler the last fit ran (``"sparse"``, ``"dense"`` or ``"warp"``); not saved.
    log_likelihood_ : list of ``(iteration, log p(w, z))``.
    privacy_ : ``{"private": False, ...}``.
    """

    _never_private = True
    _parameter_constraints = {**GibbsTopicModel._parameter_constraints,
                              "sampler": [Options(("auto", "sparse", "dense", "warp"))],
                              "eval_every": [Int(0, None)]}

    def __init__(self, n_topics: int = 50, alpha: float = 0.1, beta: float = 0.01, n_iter: int = 200,
                 seed=None, n_jobs: int = 1, sampler: str = "auto", eval_every: int = 10, verbose: int = 1,
                 backend: str = "threads", client=None, parallel: str = "partition"):
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = beta
        self.n_iter = n_iter
        self.seed = seed
        self.n_jobs = n_jobs
        self.sampler = sampler
        self.eval_every = eval_every
        self.verbose = verbose
        self.backend = backend
        self.client = client
        self.parallel = parallel

    def _validate(self) -> None:
        super()._validate()
        if self.sampler == "warp" and self.backend != "threads":
            raise DPTopicError(f"sampler='warp' runs on the threads backend only, not backend={self.backend!r}:"
                               " use sampler='sparse' there.")

    @property
    def _kernel(self) -> str:
        if self.sampler == "auto":
            threads = self.backend == "threads" and self.parallel == "partition"   # AD-LDA asked for: kept exact
            return "warp" if threads and self._jobs >= WARP_FROM_THREADS else "sparse"
        return self.sampler

    def _after_sweep(self, it, arrays, corpus) -> str:
        if self.eval_every and ((it + 1) % self.eval_every == 0 or it + 1 == self.n_iter):
            ll = joint_log_likelihood(arrays.nwk, arrays.nk, self._backend_.doc_topic_counts(),
                                      self._backend_.doc_lengths, self.alpha, self.beta)
            self.log_likelihood_.append((it + 1, ll))
            return f"log p(w,z)={ll:.4g}"
        return ""

    def _finish(self, arrays, rng) -> np.ndarray:
        self.sampler_ = self._kernel
        # the posterior mean of GibbsTopicModel._finish, bit for bit, from the K x V counts transposed once, in blocks
        self.topic_word_counts_ = _transposed(arrays.nwk)
        V = arrays.nwk.shape[0]
        phi = self.topic_word_counts_.astype(np.float64)
        phi += self.beta
        phi /= (arrays.nk + V * self.beta)[:, None]
        return phi

    def _extra_arrays(self) -> dict:
        return {"topic_word_counts": self.topic_word_counts_} if hasattr(self, "topic_word_counts_") else {}

    def _load_extra(self, arrays) -> None:
        if "topic_word_counts" in arrays:
            c = arrays["topic_word_counts"]
            if c.dtype.kind not in "iu" or c.shape != self.components_.shape or (c.size and c.min() < 0):
                raise DPTopicError(f"topic_word_counts.npy must be a non-negative integer {self.components_.shape[0]}x"
                                   f"{self.components_.shape[1]} matrix, got {c.dtype} {c.shape}")
            self.topic_word_counts_ = c

    def privacy_report(self) -> dict:
        return non_private_report(
            "plain collapsed Gibbs sampling adds no noise. Its 'inherent' privacy (Zhao et al. Prop. 1-2, Thm 1-2)"
            " depends on the private counts and is vacuous in practice (about 2 log(1+1/beta) per related token and"
            " iteration); see `dptopic privacy inherent`.")


def _transposed(a: np.ndarray, rows: int = 256) -> np.ndarray:
    """``a.T`` as a C-contiguous copy, ``rows`` rows of ``a`` at a time, so that each block is read and written in
    cache: at V = 50,000 and K = 1,000 about 0.4 s where ``a.T.copy()`` and ``a.T.astype(float)`` took 2.8–4 s
    together (docs/research/cgs_scaling.md)."""
    out = np.empty((a.shape[1], a.shape[0]), dtype=a.dtype)
    for start in range(0, a.shape[0], rows):
        out[:, start:start + rows] = a[start:start + rows].T
    return out
