"""Training on a stream of randomized reports, one mini-batch at a time (``dptopic serve``'s trainer).

:func:`train_batch` runs the steps of :func:`dptopic.train` that apply to a batch, the same functions
``dptopic.train`` runs on a whole report file, so that a model trained batch by batch states what ``dptopic.train``
would state for the same trainer and reports:

1. :func:`~dptopic.training.run.check_reports` (``check_inputs`` for reports), before the model reads one report;
2. :func:`~dptopic.training.run.fit_reports`, as ``partial_fit``: a refused batch leaves the model as it was;
3. :func:`~dptopic.training.run.state_contributors`: the guarantee for contributors who sent up to N reports each;
4. :func:`~dptopic.training.run.card`;
5. :func:`~dptopic.training.run.save` (atomic: the model's own ``save``), when ``out`` is given.
"""
from __future__ import annotations

from ..models.registry import trainer_of
from .run import TrainingResult, _train_reports


def train_batch(model, reports, *, vocabulary=None, reports_per_contributor: int | None = None, out=None,
                overwrite: bool = False, quiet: bool = False, names=None, callback=None) -> TrainingResult:
    """Train ``model`` (a trainer of reports: lp, olp, ldp-doc) on one more mini-batch of randomized reports.

    The steps of :func:`dptopic.train` that apply to a batch run in its order: the inputs checked before the model
    reads a report, ``partial_fit`` (the model's warnings, or with ``quiet`` its notes), the contributors'
    guarantee, the card, the save. The others are skipped, each for one reason:

    - ``choose_vocabulary``: the vocabulary is public and fixed before the first report is made (contributors
      randomize over it);
    - ``split`` and ``held_out_metrics``: a stream is trained once, every report in its batch; nothing is held out
      (``dptopic evaluate`` on a public test corpus);
    - ``forecast``: the utility table measures the central units; ``dptopic.train`` on reports forecasts nothing
      either;
    - ``compose_vocabulary`` and ``record_words``: no vocabulary is chosen with a budget, and the public one is bound
      to the reports (each report set carries its fingerprint).

    Parameters
    ----------
    model : an estimator that reads reports (``OLPLDA``, ``LPLDA``, ``LocalDocumentLDA``), fresh or trained on
        earlier batches.
    reports : the batch, a ``ReportSet`` or ``DocumentReportSet``.
    vocabulary : the public word list the reports were made with (default: the one they embed).
    reports_per_contributor : int, state the guarantee for contributors who sent up to this many reports each (their
        epsilons add; never lowered). ``dptopic serve`` gives the most reports one pseudonym has in its store.
    out : str, a new or empty folder to save the model to (checked before the batch is read); None: not saved
        (``dptopic serve`` stores the files of the model's ``save`` in its database, in the batch's transaction).
    quiet : bool, raise none of the model's warnings; the one a stream must keep (OLP-LDA's "the prior corpus seems
        to overlap the stream") is a line of ``result.notes``. For a server, whose warnings no user reads.
    names, callback : as for :func:`dptopic.train`.

    Returns
    -------
    TrainingResult : ``model``, ``train`` (the batch), ``vocabulary``, ``card``, ``path``, ``notes``.
    """
    entry = trainer_of(model)
    result = TrainingResult(model=model, algorithm=None if entry is None else entry.name)
    return _train_reports(result, reports, vocabulary, reports_per_contributor, out, overwrite, callback,
                          batch=True, quiet=quiet, names=names)


__all__ = ["train_batch"]
