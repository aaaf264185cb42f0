"""Estimators, one per algorithm (scikit-learn style ``fit``/``transform``/``components_``)."""
from .base import GibbsTopicModel, IterationInfo, load
from .docdp import DocDPEM
from .fedlda import FedLDA
from .lda import LDA
from .private import CDPLDA, CDPLDAPlus, HDPLDA
from .lplda import LPLDA
from .online import OLPLDA, OnlineLDA
from .svi import DPSVI, OnlineVB

ALGORITHMS = {"lda": LDA, "cdp": CDPLDA, "cdp+": CDPLDAPlus, "hdp": HDPLDA, "lp": LPLDA, "olp": OLPLDA, "fed": FedLDA,
              "online-vb": OnlineVB, "svi": DPSVI}

__all__ = ["LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "LPLDA", "OnlineLDA", "OLPLDA", "FedLDA", "OnlineVB", "DPSVI", "DocDPEM",
           "GibbsTopicModel", "IterationInfo", "load", "ALGORITHMS"]
