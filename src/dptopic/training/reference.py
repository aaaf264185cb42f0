"""The non-private reference a training run's held-out figures are read beside: collapsed Gibbs LDA with the model's
number of topics, trained on the run's own training split (by document, or by person under the user unit) and scored
on its held-out split by the same function that scored the model (``training_run_metrics``, in the model's style), so
that its perplexity, NPMI and diversity compare with the model's figure for figure. ``dptopic train`` and ``dptopic
demo`` print it beside a private model's.

It reads the private documents in the clear: every figure is outside the guarantee, printed, never saved.
"""
from __future__ import annotations

import warnings

from ..evaluation import npmi_and_diversity, training_run_metrics
from ..models import LDA
from .run import VARIATIONAL, TrainingResult

REFERENCE_ITERATIONS = 200
"""Gibbs sweeps of the reference LDA where the model has no number of its own (``LDA``'s default); a Gibbs trainer's
reference takes the model's ``n_iter``, as the demo's does."""

REFERENCE_MAX_WORK = 400_000_000
"""The most token-sweeps (training tokens times sweeps) a reference is fitted for by default: 2 million tokens at 200
sweeps, about half a minute of one core. Beyond it the reference would cost more than the private fit it is read
beside (a corpus of a million documents: several minutes), so it is not computed unless asked for
(``max_work=None``)."""


def reference_style(model) -> str:
    """The style of held-out metrics a run records for ``model`` (``training_run_metrics``): ``"variational"`` for
    the variational and document-level trainers, ``"gibbs"`` otherwise."""
    return "variational" if type(model).__name__ in VARIATIONAL else "gibbs"


def _sweeps(result: TrainingResult, n_iter: int | None) -> int:
    model = result.model
    style = reference_style(model)
    return int(n_iter or (getattr(model, "n_iter", None) if style == "gibbs" else None) or REFERENCE_ITERATIONS)


def reference_too_large(result: TrainingResult, n_iter: int | None = None,
                        max_work: float | None = REFERENCE_MAX_WORK) -> str | None:
    """Why :func:`nonprivate_reference` would not fit its LDA for ``result`` under ``max_work`` token-sweeps (a
    sentence), or None where it would."""
    if max_work is None or result.train is None:
        return None
    tokens = int(getattr(result.train, "n_tokens", 0) or 0)
    sweeps = _sweeps(result, n_iter)
    if tokens * sweeps <= max_work:
        return None
    return (f"not computed: LDA's {sweeps} sweeps over the {tokens:,} training tokens would take longer than the"
            f" private fit (more than {max_work:,.0f} token-sweeps)")


def nonprivate_reference(result: TrainingResult, n_iter: int | None = None, seed=None, n_jobs: int = 1,
                         max_work: float | None = REFERENCE_MAX_WORK) -> dict | None:
    """The held-out figures of non-private LDA on ``result``'s split, by the function and in the style that scored
    ``result.model`` (:func:`~dptopic.evaluation.training_run_metrics`); ``n_topics`` the model's, ``n_iter`` the
    model's own where it has one (else :data:`REFERENCE_ITERATIONS`), plus ``"n_iter"``; a run that scored NPMI and
    diversity alone (``dptopic.train(..., metrics="coherence")``) gets those alone. None without a held-out
    part (``result.test`` None) or metrics, and where the fit would exceed ``max_work`` token-sweeps
    (:func:`reference_too_large` says so; None: no bound). Under a private model every figure reads private documents
    in the clear: outside the guarantee, never saved."""
    model = result.model
    if result.test is None or result.train is None or not result.metrics:
        return None
    if reference_too_large(result, n_iter, max_work):
        return None
    style = reference_style(model)
    sweeps = _sweeps(result, n_iter)
    lda = LDA(n_topics=int(model.components_.shape[0]), n_iter=sweeps, seed=seed, n_jobs=n_jobs, verbose=0)
    with warnings.catch_warnings():     # the private model's warnings were said already; these documents are its
        warnings.simplefilter("ignore")
        lda.fit(result.train)
        if not any(k.startswith("perplexity") for k in result.metrics):     # the run scored NPMI and diversity alone
            metrics = npmi_and_diversity(lda, result.test)
        else:
            metrics = training_run_metrics(lda, result.train, result.test, style=style)
    return {**metrics, "n_iter": sweeps}
