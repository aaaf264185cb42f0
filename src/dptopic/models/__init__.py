"""Estimators, one per algorithm (scikit-learn style ``fit``/``transform``/``components_``)."""
from .base import GibbsTopicModel, IterationInfo, load
from .lda import LDA
from .private import CDPLDA, CDPLDAPlus, HDPLDA
from .lplda import LPLDA
from .online import OLPLDA, OnlineLDA

ALGORITHMS = {"lda": LDA, "cdp": CDPLDA, "cdp+": CDPLDAPlus, "hdp": HDPLDA, "lp": LPLDA, "olp": OLPLDA}

__all__ = ["LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "LPLDA", "OnlineLDA", "OLPLDA", "GibbsTopicModel", "IterationInfo", "load", "ALGORITHMS"]
