"""CDP-LDA and CDP-LDA+, the central-DP baselines of Zhao et al. (2021): the paper's per-release figure, no guarantee
claimed (see docs/privacy.md).
"""
from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._validation import Options, Real
from ..accounting import WORD_RELATION, non_private_report
from ..accounting.events import LaplaceEvent
from ..accounting.plan import PlannedRelease, ReleasePlan
from ..mechanisms import laplace_with_scale, normalize_rows
from ._private_gibbs import _PRIVATE_CONSTRAINTS, _PrivateGibbs


@functools.lru_cache(maxsize=None)
def _release_pool() -> ThreadPoolExecutor:
    """The helper thread that noises the document–topic table while the caller noises the word–topic one."""
    return ThreadPoolExecutor(1, thread_name_prefix="dptopic-release")


class _DocNoise:
    """``N_m^k + Lap(scale)`` for one block of documents, drawn wherever that block lives."""

    def __init__(self, scale, kw):
        self.scale, self.kw = scale, kw

    def __call__(self, ndk, rng):
        inplace = ndk.dtype == np.float64 and ndk.flags.c_contiguous and ndk.flags.writeable
        return laplace_with_scale(ndk, self.scale, rng, changes=(1, 1), out=ndk if inplace else None, **self.kw)[0]


def cdp_count_release(paper_epsilon: float, discrete: bool, count: int) -> PlannedRelease:
    """CDP-LDA's count release (Zhao et al. 2020 Sec. VII-A, after Foulds et al. 2016): ``N_k^t + Lap(1/eps)``. The
    paper takes the L1 sensitivity to be 1; replacing one token's word changes two cells, so it is 2 and each release
    is 2 eps-DP for the counts alone (Laplace mechanism, Dwork & Roth 2014, Thm 3.6); no theorem covers the model."""
    event = LaplaceEvent(scale=1.0 / paper_epsilon, changes=(1, 1), discrete=bool(discrete),
                         label="noisy N_k^t + Lap(1/eps)")
    return PlannedRelease("noisy topic-word counts", "discrete_laplace" if discrete else "laplace", 2.0,
                          1.0 / paper_epsilon, event, int(count))


class CDPLDA(_PrivateGibbs):
    """CDP-LDA and CDP-LDA+ baselines (Zhao et al. 2020 Sec. VII-A, after Foulds et al. 2016).

    Noise of scale ``1/ε`` is added to ``N_k^t`` and ``N_m^k`` in the first iteration
    (CDP-LDA) or in every iteration (``every_iteration=True``: CDP-LDA+): by default
    (``noise="discrete"``) discrete Laplace noise, ``P(x) ∝ exp(−ε|x|)`` on the integers, so the
    counts stay integers; ``noise="continuous"`` adds the paper's ``Lap(1/ε)``. The noise
    persists in the counts, negative counts are clamped to 0 where they enter the
    conditional. The report gives the paper's nominal ε and the corrected ε
    (word replacement changes two cells of ``N_k^t``: L1 sensitivity 2, so noise of scale ``1/ε``
    is 2ε-DP per release; ``docs/privacy.md``, "CDP-LDA and CDP-LDA+"). Neither baseline protects
    the sampled topics or the final Φ, so the report says ``private: false`` and gives the
    count-release ε only as a separately labelled partial figure
    (``privacy_["count_release_epsilon"]``). ``training_theta_`` (θ of the training documents from
    the final z) exists as for :class:`HDPLDA`, but here z is not covered.

    Parameters
    ----------
    n_topics : number of topics K (default 50).
    paper_epsilon : the paper's nominal ε per release (default 1.0): the noise scale is ``1/ε``. It is no
        guarantee of the model (the report says ``private: false``), hence not named ``epsilon`` (which
        is refused): with the corrected sensitivity each release is 2ε-DP for the counts alone
        (``count_release_epsilon``).
    every_iteration : False (default, CDP-LDA): noise once, before the first sweep; True (CDP-LDA+,
        :class:`CDPLDAPlus`): fresh noise before every sweep, added to the already noisy counts.
    alpha, beta : symmetric Dirichlet priors on θ and Φ (defaults 0.1 and 0.01).
    n_iter : number of Gibbs sweeps (default 100).
    count_release_delta : δ at which the tight ε(δ) of the partial figure ``count_release_epsilon`` is reported
        (default 1e-5); not the δ of a guarantee (there is none), hence not named ``delta`` (which is refused).
    noise : ``"discrete"`` (default: discrete Laplace, i.e. two-sided geometric, integer counts) or
        ``"continuous"`` (Laplace).
    secure : draw the noise with OpenDP's exact samplers and seed the topic sampler from the OS
        CSPRNG (no seed allowed); ``privacy_["randomness"]`` says what that covers.
    seed : None (default: fresh OS entropy). An explicit seed makes the noise reproducible by
        whoever knows it: for tests only; the report then says ``noise_reproducible: true``.
        The seed is never saved.
    n_jobs : threads (see ``parallel``); with two or more, the two count tables are noised at the
        same time.
    verbose : 0 silences the progress bar (default 1).
    backend, client, parallel : as in :class:`HDPLDA` (``docs/scaling.md``).

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words), the topic-word probabilities (rows sum to 1), from the last
        sweep's noisy counts.
    training_theta_ : ndarray of shape (n_docs, n_topics), the training documents' topic proportions (outside the
        guarantee: computed from the private documents, never saved).
    log_likelihood_ : list of ``(iteration, log p(w, z))`` (outside the guarantee).
    n_iter_ : int, the sweeps run. ``n_replayed_`` : int, the sweeps whose noisy release was replayed, not drawn
        fresh.
    vocabulary_ : Vocabulary of n_words words. ``n_features_in_`` : int, n_words.
    privacy_ : dict, the privacy report (``private: false``; the count releases' figure in
        ``count_release_epsilon``). ``ledger_`` : PrivacyLedger, the releases it spent.
    """

    _parameter_constraints = {**{k: v for k, v in _PRIVATE_CONSTRAINTS.items() if k != "delta"},
                              "count_release_delta": _PRIVATE_CONSTRAINTS["delta"],
                              "paper_epsilon": [Real(0, None, "neither")],
                              "every_iteration": [Options((True, False))]}
    _renamed_params = {"epsilon": ("CDP-LDA is a baseline with no guarantee: it takes paper_epsilon= (the paper's"
                                   " nominal figure per release, noise of scale 1/paper_epsilon), not epsilon=."),
                       "delta": ("CDP-LDA is a baseline with no guarantee: the delta at which its count releases'"
                                 " partial epsilon(delta) is reported is count_release_delta=, not delta=.")}

    @classmethod
    def _params_from_saved(cls, params: dict) -> dict:
        """A folder saved when the paper's figure was named ``epsilon``, or the count releases' delta ``delta`` (same
        meanings): read as ``paper_epsilon`` and ``count_release_delta``."""
        for old, new in (("epsilon", "paper_epsilon"), ("delta", "count_release_delta")):
            if old in params and new not in params:
                params = {(new if k == old else k): v for k, v in params.items()}
        return params
    _theorem = ("Laplace mechanism (Dwork & Roth 2014 Thm 3.6) on the count matrices only, with the L1"
                " sensitivity corrected to 2 under word replacement (docs/privacy.md); basic and tight composition")

    def __init__(self, n_topics: int = 50, paper_epsilon: float = 1.0, every_iteration: bool = False, alpha: float = 0.1,
                 beta: float = 0.01, n_iter: int = 100, count_release_delta: float = 1e-5, noise: str = "discrete",
                 secure: bool = False, seed=None, n_jobs: int = 1, verbose: int = 1, backend: str = "threads",
                 client=None, parallel: str = "partition"):
        self.n_topics = n_topics
        self.paper_epsilon = paper_epsilon
        self.every_iteration = every_iteration
        self.alpha = alpha
        self.beta = beta
        self.n_iter = n_iter
        self.count_release_delta = count_release_delta
        self.noise = noise
        self.secure = secure
        self.seed = seed
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.backend = backend
        self.client = client
        self.parallel = parallel

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """The paper's figure, stated as such (``guarantee`` False: the model has no guarantee, only its count
        releases are accounted): the noisy topic-word counts once (CDP-LDA) or before every sweep (CDP-LDA+,
        :func:`cdp_count_release`). The noise is set by ``paper_epsilon`` itself; nothing is calibrated."""
        count = int(self.n_iter) if self.every_iteration else 1
        return ReleasePlan(type(self).__name__, "word", (cdp_count_release(float(self.paper_epsilon),
                                                                          self.noise == "discrete", count),),
                           relation=WORD_RELATION, theorem=self._theorem, guarantee=False,
                           note="a baseline with no guarantee: the releases are the paper's Lap(1/paper_epsilon) count"
                                " releases, 2 x paper_epsilon each with the corrected sensitivity 2; the sampled"
                                " topics and Phi are not covered (docs/privacy.md)")

    def _start(self, arrays, corpus, rng) -> None:
        super()._start(arrays, corpus, rng)
        self.log_likelihood_ = []
        # Noisy counts live in float64 for both noises: discrete-Laplace counts stay exact integers there
        # (|values| < 2**53), and the dense sampler reads float64 rows without per-entry conversion.
        dtype = np.float64
        arrays.nwk = arrays.nwk.astype(dtype)
        self._backend_.cast_doc_counts(dtype)
        arrays.nk = arrays.nwk.sum(axis=0)
        self._n_releases = 0

    def _before_sweep(self, it, arrays, rng, want_release):
        if it == 0 or self.every_iteration:
            kw = dict(discrete=self.noise == "discrete", secure=self.secure)
            nrng = self._coins(rng)
            wrng, drng = nrng.spawn(2) if nrng is not None else (None, None)
            # With threads to spare, the two tables are noised at the same time: N_m^k on a helper thread (or
            # on the Dask workers), N_k^t here. Each has its own child stream, so the result does not depend
            # on which finishes first.
            doc_share = self._jobs // 2
            doc_noise = _DocNoise(1.0 / self.paper_epsilon, {**kw, "workers": max(doc_share, 1)})
            docs = _release_pool().submit(self._backend_.perturb_doc_counts, doc_noise, drng) if doc_share else None
            try:
                _, ev = laplace_with_scale(arrays.nwk, 1.0 / self.paper_epsilon, wrng, changes=(1, 1), out=arrays.nwk,
                                           label="noisy N_k^t + Lap(1/eps)", workers=self._jobs - doc_share,
                                           **kw)  # noised in place
            finally:
                if docs is None:
                    self._backend_.perturb_doc_counts(doc_noise, drng)
                else:
                    docs.result()
            arrays.nk[...] = arrays.nwk.sum(axis=0)
            # N_m^k is unchanged by a word replacement (same document, same topic): only N_k^t costs
            self.ledger_.spend(ev)
            self._n_releases += 1
        return None, np.inf, (arrays.nwk.copy() if want_release else None)

    def _finish(self, arrays, rng) -> np.ndarray:
        self.training_theta_ = self._training_theta(arrays)
        return normalize_rows(arrays.nwk.T, self.beta)

    def privacy_report(self) -> dict:
        n = self._n_releases
        counts = self.ledger_.report(self.count_release_delta)
        del counts["private"]
        partial = {"label": "partial figure: covers the noisy count releases only, NOT the model", **counts}
        return self._finalize(non_private_report(
            "only the noisy count releases are differentially private; the sampled topics and the final Phi keep"
            " using the exact data after the noise and no theorem covers them (Zhao et al. 2020's criticism of"
            " these baselines).",
            mode="CDP-LDA+" if self.every_iteration else "CDP-LDA",
            parameters={"epsilon": self.paper_epsilon, "n_iter": self.n_iter, "noise_releases": n},
            epsilon_nominal=n * self.paper_epsilon,
            count_release_epsilon=partial,
            # reporting.card splits the scope at "not covered": the covered part must not say it, and names no
            # internal key (the composition table labels the count releases' own figure)
            scope="only the noisy count releases (N_k^t plus Laplace noise) are differentially private; the"
                  " composition table's partial count-release figure is theirs, not the model's."
                  " NOT covered: the sampled topics z, Phi (the whole released model) and anything computed from"
                  " them, which keep using the exact counts.",
            note="epsilon_nominal is the paper's Lap(1/eps) claim (sensitivity 1); count_release_epsilon uses the"
                 " correct L1 sensitivity 2 of N_k^t under word replacement."))


class CDPLDAPlus(CDPLDA):
    """CDP-LDA+: :class:`CDPLDA` with fresh noise in every iteration (Zhao et al. 2020 Sec. VII-A).

    Like :class:`CDPLDA`, ``private: false``: only the noisy count releases are covered
    (``privacy_["count_release_epsilon"]``, one release per sweep), not the topics or Φ
    (``docs/privacy.md``, "CDP-LDA and CDP-LDA+").

    Parameters
    ----------
    n_topics : number of topics K (default 50).
    paper_epsilon : the paper's nominal ε per release (default 1.0; no guarantee of the model, so not named
        ``epsilon``): noise of scale ``1/ε`` before every sweep; each release is 2ε-DP for the counts
        alone, and the releases compose over ``n_iter``.
    every_iteration : True (default; what makes CDP-LDA+). False gives :class:`CDPLDA`.
    alpha, beta : symmetric Dirichlet priors on θ and Φ (defaults 0.1 and 0.01).
    n_iter : number of Gibbs sweeps, hence of noisy releases (default 100).
    count_release_delta : δ at which the tight ε(δ) of ``count_release_epsilon`` is reported (default 1e-5).
    noise : ``"discrete"`` (default: discrete Laplace, i.e. two-sided geometric, integer counts) or
        ``"continuous"`` (Laplace).
    secure, seed, n_jobs, verbose, backend, client, parallel : as in :class:`CDPLDA`.

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words); ``training_theta_`` : ndarray of shape (n_docs, n_topics);
    log_likelihood_, n_iter_, n_replayed_, vocabulary_, n_features_in_, privacy_, ledger_ : as :class:`CDPLDA`.
    """

    def __init__(self, n_topics: int = 50, paper_epsilon: float = 1.0, every_iteration: bool = True, alpha: float = 0.1,
                 beta: float = 0.01, n_iter: int = 100, count_release_delta: float = 1e-5, noise: str = "discrete",
                 secure: bool = False, seed=None, n_jobs: int = 1, verbose: int = 1, backend: str = "threads",
                 client=None, parallel: str = "partition"):
        super().__init__(n_topics, paper_epsilon, every_iteration, alpha, beta, n_iter, count_release_delta, noise,
                         secure, seed, n_jobs, verbose, backend, client, parallel)
