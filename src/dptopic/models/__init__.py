"""Estimators, one per algorithm (scikit-learn style ``fit``/``transform``/``components_``)."""
from .base import GibbsTopicModel, IterationInfo, TopicModel, load
from .docdp import DocDPEM
from .docdp_cooc import DocDPCooccurrence
from .ldp_document import LocalDocumentLDA
from .fedlda import FedLDA
from .lda import LDA
from .private import CDPLDA, CDPLDAPlus, HDPLDA
from .lplda import LPLDA
from .online import OLPLDA, OnlineLDA
from .svi import DPSVI, OnlineVB
from .algorithms import ALGORITHMS
from .by_unit import UNIT_TRAINERS, for_unit
from .secure_sum import SecureSumTopics

__all__ = ["for_unit", "UNIT_TRAINERS", "LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "LPLDA", "OnlineLDA", "OLPLDA", "FedLDA", "OnlineVB", "DPSVI", "DocDPEM", "DocDPCooccurrence", "LocalDocumentLDA",
           "SecureSumTopics", "GibbsTopicModel", "TopicModel", "IterationInfo", "load", "ALGORITHMS"]
