"""Estimators, one per algorithm (scikit-learn style ``fit``/``transform``/``components_``)."""
from .base import GibbsTopicModel, IterationInfo, load
from .fedlda import FedLDA
from .lda import LDA
from .private import CDPLDA, CDPLDAPlus, HDPLDA
from .lplda import LPLDA
from .online import OLPLDA, OnlineLDA

ALGORITHMS = {"lda": LDA, "cdp": CDPLDA, "cdp+": CDPLDAPlus, "hdp": HDPLDA, "lp": LPLDA, "olp": OLPLDA, "fed": FedLDA}

__all__ = ["LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "LPLDA", "OnlineLDA", "OLPLDA", "FedLDA", "GibbsTopicModel",
           "IterationInfo", "load", "ALGORITHMS"]
