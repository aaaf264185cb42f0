"""Estimators, one per algorithm (scikit-learn style ``fit``/``transform``/``components_``).

Names are imported on first use (PEP 562, as in ``dptopic/__init__.py``), so that reading the trainer registry
(:mod:`dptopic.models.registry`: the command line builds its parser and help from it) loads no estimator, numba or
scikit-learn."""
from .._lazy_names import lazy_names as _lazy_names
from .registry import TRAINERS as _TRAINERS

_EXPORTS = {"GibbsTopicModel": "base", "IterationInfo": "base", "TopicModel": "base", "load": "base",
            "TRAINERS": "registry", "Trainer": "registry", "model_to_blobs": "blobs", "model_from_blobs": "blobs",
            # each estimator where the registry says it stands (one place for the fact)
            **{t.class_name: t.where.split(".")[0] for t in _TRAINERS.values()}}

__all__ = ["LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "LPLDA", "OnlineLDA", "OLPLDA",
           "FedLDA", "OnlineVB", "DPSVI", "DocDPEM", "DocDPCooccurrence", "LocalDocumentLDA", "SecureSumTopics",
           "GibbsTopicModel", "TopicModel", "IterationInfo", "load", "TRAINERS", "Trainer",
           "model_to_blobs", "model_from_blobs"]


__getattr__, __dir__ = _lazy_names(__name__, _EXPORTS, globals())
