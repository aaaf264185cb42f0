"""Estimators, one per algorithm (scikit-learn style ``fit``/``transform``/``components_``)."""
from .base import GibbsTopicModel, IterationInfo, load
from .lda import LDA
from .private import CDPLDA, CDPLDAPlus, HDPLDA
from .svi import DPSVI, OnlineVB

ALGORITHMS = {"lda": LDA, "cdp": CDPLDA, "cdp+": CDPLDAPlus, "hdp": HDPLDA, "online-vb": OnlineVB, "svi": DPSVI}

__all__ = ["LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "OnlineVB", "DPSVI", "GibbsTopicModel", "IterationInfo", "load", "ALGORITHMS"]
