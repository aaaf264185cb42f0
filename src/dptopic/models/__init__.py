"""Estimators, one per algorithm (scikit-learn style ``fit``/``transform``/``components_``)."""
from .base import GibbsTopicModel, IterationInfo, load
from .fedlda import FedLDA
from .lda import LDA
from .private import CDPLDA, CDPLDAPlus, HDPLDA

ALGORITHMS = {"lda": LDA, "cdp": CDPLDA, "cdp+": CDPLDAPlus, "hdp": HDPLDA, "fed": FedLDA}

__all__ = ["LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "FedLDA", "GibbsTopicModel", "IterationInfo", "load", "ALGORITHMS"]
