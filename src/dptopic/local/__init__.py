"""Local differential privacy on the contributor's side: the randomizer and its reports.

Contributors run :class:`Randomizer` on their own documents and send only the
resulting :class:`ReportSet`; the server trains :class:`~dptopic.models.LPLDA` or
:class:`~dptopic.models.OLPLDA` from the reports (Zhao et al. 2020, Sec. V-VI). Those reports are
private per word; :class:`DocumentRandomizer` makes reports private per document (one word pair by k-subset
selection), from which :class:`~dptopic.models.LocalDocumentLDA` learns topics.
"""
from ..accounting.local import epsilon_document, epsilon_from_f, f_from_epsilon
from .document import DocumentRandomizer, DocumentReportSet
from .randomizer import Randomizer
from .reports import ReportSet, vocabulary_fingerprint

__all__ = ["Randomizer", "ReportSet", "DocumentRandomizer", "DocumentReportSet", "vocabulary_fingerprint", "epsilon_from_f", "f_from_epsilon", "epsilon_document"]
