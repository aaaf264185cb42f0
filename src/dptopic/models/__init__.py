"""Estimators, one per algorithm (scikit-learn style ``fit``/``transform``/``components_``)."""
from .base import GibbsTopicModel, IterationInfo, load
from .lda import LDA
from .private import CDPLDA, CDPLDAPlus, HDPLDA

ALGORITHMS = {"lda": LDA, "cdp": CDPLDA, "cdp+": CDPLDAPlus, "hdp": HDPLDA}

__all__ = ["LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "GibbsTopicModel", "IterationInfo", "load", "ALGORITHMS"]
