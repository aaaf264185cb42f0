"""HDP-LDA, the word-level private Gibbs sampler of Zhao et al. (2021, Alg. 1, Thm 3).

Orchestration only: noise comes from :mod:`dptopic.mechanisms`, sweeps from :mod:`dptopic.kernels`, and every spent
event goes into a :class:`~dptopic.accounting.PrivacyLedger`, reported in ``privacy_``.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._validation import IsNone, Options, Real, validate_value
from ..accounting import (
    WORD_RELATION,
    hdp_clip_bound,
    hdp_epsilon_inherent,
    non_private_report,
    solve_hdp_epsilon_laplace,
)

# HDP-LDA's two releases and its plan stand in accounting (dptopic recommend reads them too); their names import
# from here as well
from ..accounting.budget import HDP_THEOREM, hdp_budget_error, hdp_plan
from ..accounting.events import EPSILON_MAX
from ..accounting.plan import ReleasePlan
from ..errors import DPTopicError, ParameterError, user_stacklevel
from ..mechanisms import clamp, laplace_mechanism, normalize_rows
from ._private_gibbs import _PRIVATE_CONSTRAINTS, _PrivateGibbs


class HDPLDA(_PrivateGibbs):
    """HDP-LDA: hybrid differentially private LDA (Zhao et al. 2020, Algorithm 1, Theorem 3).

    Default (**sound**, see ``docs/privacy.md``): every iteration releases a fresh noisy snapshot
    ``S_i = N + Lap(2/ε_L)`` of the true topic–word counts (never modifying them),
    clamps it to ``[0, C]`` and freezes it as the word factor for the whole sweep.
    Each iteration is ``(ε_L + ε_I)``-DP with ``ε_I = 2·log(C/β + 1)``; Φ is
    post-processed from the last snapshot.

    Parameters
    ----------
    n_topics : number of topics K (default 50).
    epsilon : the guarantee per word, in total: the whole run is (ε, δ)-DP by the tight (PLD) accountant, the
        figure the privacy card puts at the top. The trainer splits it: ε_L per iteration is the largest the
        accountant allows over the ``n_iter`` releases at ``epsilon_inherent`` (as :meth:`from_budget`), so that the
        card states ``epsilon`` to within 0.1% below it, never above (``accounting.budget.HDP_SPEND_RTOL``). Give
        ``epsilon`` or ``epsilon_laplace``, not both.
    epsilon_laplace : the component instead: ε_L per iteration (``"auto"``, the default: solved from ``epsilon``,
        or 1.0 without it); ``None`` gives "limited inherent" (clipping only, no noise, **no** DP guarantee —
        Fig. 5's comparison curve).
    epsilon_inherent, clip : give one; ``C = β(e^{ε_I/2} − 1)``. Default ``ε_I = 10``.
    alpha : symmetric Dirichlet prior on θ (default 0.1).
    beta : default 1.0, the "larger β" of the paper's HDP-LDA runs (value not reported): with ε_I = 10 it gives
        C ≈ 147; β = 0.1 (C ≈ 15) saturates every frequent word and the topics collapse.
    n_iter : number of Gibbs sweeps T (default 100); each one is a release, so ε grows with it
        (:meth:`from_budget` picks ε_L for a given T).
    paper_literal : reproduce Algorithm 1 as written (noise accumulated in place into live
        counts, live updates). Its privacy claim does not hold (``docs/privacy.md``); reported as such.
    final_release : ``"last"`` (Φ from S_T, free) or ``"fresh"`` (one more ε_L release, accounted,
        also by :meth:`from_budget`).
    noise : ``"discrete"`` (two-sided geometric, integer counts; default) or ``"continuous"``.
    secure : draw the noise with OpenDP's exact samplers and seed the topic sampler from the OS
        CSPRNG (no seed allowed); ``privacy_["randomness"]`` says what that covers.
    seed : None (default: fresh OS entropy). An explicit seed makes the noise reproducible by
        whoever knows it: for tests only; the report then says ``noise_reproducible: true``.
        The seed is never saved.
    delta : δ at which the tight ε(δ) is reported.
    sampler : ``"auto"`` (sound mode: exact rejection sampler against the frozen factor,
        :func:`~dptopic.kernels.frozen_sweep`) or ``"dense"`` (the reference dense sweep).
    n_jobs : threads (see ``parallel``).
    verbose : 0 silences the progress bar (default 1).
    parallel : ``"partition"`` (default) or ``"adlda"``: how ``n_jobs`` threads split a sweep (see
        :class:`~dptopic.LDA`); either way the released table stays frozen for the whole sweep.
    backend, client : ``"threads"`` (``n_jobs`` threads) or ``"dask"`` with a ``distributed.Client``; on Dask only
        the frozen noisy release travels to the workers, and replayed iterations are accounted
        (``docs/scaling.md``, ``docs/privacy.md``).

    Attributes
    ----------
    components_ : Φ (K×V), post-processed from the last noisy release.
    training_theta_ : θ (D×K) of the training documents from the final topic assignments z,
        ``(n_m^k + α)/(n_m + Kα)``. In the sound mode z is released and covered by Theorem 3,
        so this is post-processing inside the guarantee, unlike ``transform`` on training documents.
    privacy_ : the privacy report (also saved in ``model.json``).
    """

    _parameter_constraints = {**_PRIVATE_CONSTRAINTS,
                              # per iteration, at most what one Laplace event may spend (EPSILON_MAX): refused before
                              # the fit starts rather than when its first event is made
                              "epsilon": [IsNone(), Real(0, None, "neither")],
                              "epsilon_laplace": [IsNone(), Options(("auto",)), Real(0, EPSILON_MAX, "right")],
                              "epsilon_inherent": [IsNone(), Real(0, None, "neither")],
                              "clip": [IsNone(), Real(0, None, "neither")],
                              "paper_literal": [Options((True, False))],
                              "final_release": [Options(("last", "fresh"))],
                              "sampler": [Options(("auto", "dense"))]}
    _theorem = HDP_THEOREM

    DEFAULT_EPSILON_LAPLACE = 1.0
    """ε_L per iteration when neither ``epsilon`` nor ``epsilon_laplace`` is given."""
    DEFAULT_EPSILON_INHERENT = 10.0
    """ε_I per iteration when neither ``epsilon_inherent`` nor ``clip`` is given (and ``from_budget``'s)."""

    def __init__(self, n_topics: int = 50, epsilon_laplace: float | str | None = "auto", epsilon_inherent: float | None = None,
                 clip: float | None = None, alpha: float = 0.1, beta: float = 1.0, n_iter: int = 100,
                 delta: float = 1e-5, noise: str = "discrete", paper_literal: bool = False,
                 final_release: str = "last", secure: bool = False, seed=None, n_jobs: int = 1, verbose: int = 1,
                 sampler: str = "auto", backend: str = "threads", client=None, parallel: str = "partition", *,
                 epsilon: float | None = None):
        self.n_topics = n_topics
        self.epsilon = epsilon
        self.epsilon_laplace = epsilon_laplace
        self.epsilon_inherent = epsilon_inherent
        self.clip = clip
        self.alpha = alpha
        self.beta = beta
        self.n_iter = n_iter
        self.delta = delta
        self.noise = noise
        self.paper_literal = paper_literal
        self.final_release = final_release
        self.secure = secure
        self.seed = seed
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.sampler = sampler
        self.backend = backend
        self.client = client
        self.parallel = parallel

    @property
    def _kernel(self) -> str:
        # sound mode freezes the word factor, so the exact rejection sampler applies
        return "frozen" if (self.sampler == "auto" and not self.paper_literal) else "dense"

    @classmethod
    def from_budget(cls, epsilon: float, delta: float = 1e-5, n_iter: int = 100,
                    epsilon_inherent: float = DEFAULT_EPSILON_INHERENT, **kw) -> "HDPLDA":
        """Largest-utility ε_L such that the whole run is (ε, δ)-DP by the tight (PLD) accountant, solved now for
        these ``n_iter`` and fixed (``HDPLDA(epsilon=...)`` solves it at each fit for the fit's ``n_iter``); the
        budget is recorded, and a fit that would spend more (more iterations set later) is refused by the ledger."""
        validate_value("epsilon", epsilon, [Real(0, None, "neither")])
        validate_value("delta", delta, [Real(0, 1, "neither")])
        validate_value("epsilon_inherent", epsilon_inherent, [Real(0, None, "neither")])
        if "epsilon_laplace" in kw:
            raise ParameterError("from_budget solves {epsilon_laplace} from {epsilon}: leave it out, or build"
                                 " HDPLDA({epsilon_laplace}=...) directly.", "epsilon_laplace", kw["epsilon_laplace"],
                                 others=("epsilon",), key="models.hdp_lda.from_budget")
        discrete, extra = kw.get("noise", "discrete") == "discrete", 1 if kw.get("final_release") == "fresh" else 0
        refusal = hdp_budget_error(epsilon, n_iter, epsilon_inherent, delta, discrete, extra)  # one rule
        if refusal is not None:
            raise refusal
        eps_l = solve_hdp_epsilon_laplace(epsilon, delta, n_iter, epsilon_inherent, discrete=discrete,
                                          extra_laplace=extra)
        m = cls(epsilon_laplace=eps_l, epsilon_inherent=epsilon_inherent, n_iter=n_iter, delta=delta, **kw)
        m._budget = (float(epsilon), float(delta))
        return m

    @property
    def epsilon_laplace_(self) -> float | None:
        """ε_L per iteration: ``epsilon_laplace``, or solved from the total ``epsilon``
        (:func:`~dptopic.accounting.solve_hdp_epsilon_laplace`), or 1.0."""
        if self.epsilon is None:
            return self.DEFAULT_EPSILON_LAPLACE if self.epsilon_laplace == "auto" else self.epsilon_laplace
        key = (float(self.epsilon), float(self.delta), int(self.n_iter), self.epsilon_inherent_, self.noise,
               self.final_release)
        cached = getattr(self, "_solved_laplace", None)
        if cached is None or cached[0] != key:
            eps_l = solve_hdp_epsilon_laplace(key[0], key[1], key[2], key[3], discrete=self.noise == "discrete",
                                              extra_laplace=1 if self.final_release == "fresh" else 0)
            self._solved_laplace = cached = (key, eps_l)
        return cached[1]

    def _budget_of(self, report: dict) -> tuple | None:
        if self.epsilon is not None:     # the whole run's (epsilon, delta) the noise was calibrated to
            return float(self.epsilon), float(self.delta)
        return super()._budget_of(report)

    def _validate(self) -> None:
        super()._validate()
        if self.epsilon is not None and self.epsilon_laplace != "auto":
            raise DPTopicError(f"give epsilon={self.epsilon!r} (the whole run's total per word; epsilon_laplace is solved"
                               f" from it) or epsilon_laplace={self.epsilon_laplace!r} (per iteration), not both.")
        if self.clip is not None and self.epsilon_inherent is not None:
            raise DPTopicError("give either clip or epsilon_inherent, not both: they determine each other (C = beta(e^(eps_I/2) - 1)).")
        if self.final_release == "fresh" and self.epsilon_laplace_ is None:
            raise DPTopicError("final_release='fresh' needs epsilon_laplace: limited-inherent mode adds no noise.")
        if self.epsilon is not None:    # solving the split refuses a total too small, before anything is read
            # and one too large to spend (as from_budget)
            refusal = hdp_budget_error(self.epsilon, int(self.n_iter), self.epsilon_inherent_, float(self.delta),
                                        self.noise == "discrete", 1 if self.final_release == "fresh" else 0)
            if refusal is not None:
                raise refusal
            self.epsilon_laplace_

    @property
    def clip_(self) -> float:
        return self.clip if self.clip is not None else hdp_clip_bound(self.epsilon_inherent_, self.beta)

    @property
    def epsilon_inherent_(self) -> float:
        if self.epsilon_inherent is not None:
            return float(self.epsilon_inherent)
        if self.clip is not None:
            return hdp_epsilon_inherent(self.clip, self.beta)
        return self.DEFAULT_EPSILON_INHERENT

    @property
    def _discrete(self) -> bool:
        return self.noise == "discrete"

    def _start(self, arrays, corpus, rng) -> None:
        super()._start(arrays, corpus, rng)
        self.log_likelihood_ = []
        C = self.clip_
        if C < 1:
            need = hdp_epsilon_inherent(1.0, self.beta)
            warnings.warn(f"HDPLDA: the clip bound C = {C:.3g} (from epsilon_inherent={self.epsilon_inherent_:g} and"
                          f" beta={self.beta:g}) is under one token: every topic's count of a word is clamped below 1,"
                          " so the topics can hardly differ from one another; give epsilon_inherent of at least"
                          f" {need:.4g} (C >= 1; C = beta(e^(eps_I/2) - 1)), or a larger budget.", UserWarning,
                          stacklevel=user_stacklevel())
        if self.epsilon_laplace_ is not None:
            plan = self._plan()
            self._events = (plan[0][0], plan[1][0])
            self.ledger_.reserve(plan)
        if self.paper_literal:
            # Algorithm 1 keeps (noisy) counts in place: float or int64 live counts
            dtype = np.int64 if self._discrete else np.float64
            arrays.nwk = arrays.nwk.astype(dtype)
            arrays.nk = arrays.nwk.sum(axis=0)
        self._last_release = None

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """The releases a fit makes (public settings alone; the vocabulary's size changes nothing): per iteration the
        noisy topic-word counts (:func:`hdp_count_release`) and the clipped sampling step (:func:`hdp_sampling_step`),
        ``n_iter`` of each, and one more count release with ``final_release="fresh"``; ε_L solved from ``epsilon``
        (:func:`~dptopic.accounting.solve_hdp_epsilon_laplace`) against this plan
        (:func:`~dptopic.accounting.budget.hdp_plan`) and the total it spends by the accountant that reports it
        (:meth:`ReleasePlan.epsilon`), so that the card states ``epsilon`` (within
        :data:`~dptopic.accounting.budget.HDP_SPEND_RTOL` below it).
        ``epsilon_laplace=None`` releases nothing with noise (no guarantee: an empty plan); ``paper_literal``
        spends the same events but claims no guarantee (``guarantee`` False)."""
        name = type(self).__name__
        eps_l = self.epsilon_laplace_
        if eps_l is None:
            return ReleasePlan(name, "word", (), relation=WORD_RELATION, theorem=self._theorem, guarantee=False,
                               note="limited inherent: clipping without noise, no differential privacy guarantee")
        literal = bool(self.paper_literal)
        return hdp_plan(eps_l, self.epsilon_inherent_, int(self.n_iter), self._discrete,
                        1 if self.final_release == "fresh" else 0, trainer=name,
                        budget=None if literal else self._budget_of({}), guarantee=not literal,
                        note=("paper_literal: Algorithm 1 as written; the events are spent, but no guarantee"
                              " holds (docs/privacy.md)") if literal else "")

    def _plan(self) -> list:
        """The events a fit spends (:meth:`release_plan`), as the ledger reserves them."""
        return self.release_plan().groups()

    def _planned_spend(self, report: dict):
        plan = self.release_plan()
        return None if self.epsilon_laplace_ is None else plan.run_plan(budget=self._budget_of(report))

    def _release(self, nwk, rng):
        planned = self._events[0]
        noisy, ev = laplace_mechanism(nwk, self.epsilon_laplace_, self._coins(rng), changes=planned.changes,
                                      discrete=self._discrete, secure=self.secure, label=planned.label,
                                      workers=self._jobs)
        assert ev == planned, "the released noise must be the event the ledger planned"
        return noisy, ev

    def _before_sweep(self, it, arrays, rng, want_release):
        C = self.clip_
        if self.paper_literal:
            if self.epsilon_laplace_ is not None:
                noisy, ev = self._release(arrays.nwk, rng)
                arrays.nwk[...] = noisy            # line 9: noise written into the live counts
                arrays.nk[...] = arrays.nwk.sum(axis=0)
                self.ledger_.spend(ev)
                self.ledger_.spend(self._events[1])
            self._last_release = arrays.nwk
            return None, C, (arrays.nwk.copy() if want_release else None)
        if self.epsilon_laplace_ is None:               # limited inherent: exact snapshot, clipped
            S = arrays.nwk.copy()
        else:
            S, ev = self._release(arrays.nwk, rng)
            self.ledger_.spend(ev)
            self.ledger_.spend(self._events[1])
        self._last_release = S
        table = clamp(S, 0.0, C)
        if self._kernel == "frozen":
            table += self.beta  # the frozen kernel takes the factor clip(S, 0, C) + beta
        return table, C, S

    def _finish(self, arrays, rng) -> np.ndarray:
        self.training_theta_ = self._training_theta(arrays)
        if self.paper_literal:
            return normalize_rows(arrays.nwk.T, self.beta)
        S = self._last_release
        if self.final_release == "fresh":
            S, ev = self._release(arrays.nwk, rng)
            self.ledger_.spend(ev)
        return normalize_rows(S.T, self.beta)

    def privacy_report(self) -> dict:
        eps_i, C, T = self.epsilon_inherent_, self.clip_, self.n_iter
        params = {"epsilon_laplace": self.epsilon_laplace_, "epsilon_inherent": eps_i, "clip": C, "beta": self.beta,
                  "n_iter": T, "final_release": self.final_release}
        if self.epsilon_laplace_ is None:
            return self._finalize(non_private_report(
                "clipping without Laplace noise bounds only the replaced token's sampling step; the exact counts"
                " still drive the sampler, so related tokens leak (Zhao et al. Prop. 2) and no DP guarantee holds.",
                mode="limited-inherent", parameters=params))
        paper_eps = T * (self.epsilon_laplace_ + eps_i)
        if self.final_release == "fresh" and not self.paper_literal:
            # the paper's accounting applied to every release of this run: Phi from one more eps_L release
            paper_eps += self.epsilon_laplace_
        if self.paper_literal:
            return self._finalize(non_private_report(
                "Algorithm 1 as written accumulates the noise in the live counts and updates them within the sweep,"
                " so related tokens leak again and eq. (30) fails; Phi comes from the final live counts, which"
                " no release covers (docs/privacy.md). The paper's epsilon is shown for comparison only; it is"
                " not a proven guarantee.",
                mode="paper-literal", parameters=params,
                claimed_by_paper={"epsilon": paper_eps, "delta": 0.0,
                                  "theorem": "Zhao et al. 2020 Algorithm 1 output eps = T(eps_L + eps_I)"}))
        rep = self._report({"mode": "sound", "parameters": params, "epsilon_paper": paper_eps,
                            "scope": "covers every noisy count release S_i, every sampled topic assignment z"
                                     " (hence training_theta_), and the released Phi (post-processing of "
                                     + ("one more fresh release" if self.final_release == "fresh" else "S_T") + ")."
                                     " Not covered: transform() or perplexity() on training documents, which read"
                                     " their private words again, and the choice of hyper-parameters (a search on"
                                     " the private corpus spends a budget per candidate)."})
        budget = self._budget_of({})
        if budget:
            rep["budget"] = {"epsilon": budget[0], "delta": budget[1]}
        return rep
