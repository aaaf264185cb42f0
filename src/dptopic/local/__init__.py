"""Local differential privacy on the contributor's side: the randomizer and its reports.

Contributors run :class:`Randomizer` on their own documents and send only the
resulting :class:`ReportSet`; the server trains :class:`~dptopic.models.LPLDA` or
:class:`~dptopic.models.OLPLDA` from the reports (Zhao et al. 2020, Sec. V-VI).
"""
from ..accounting.local import epsilon_document, epsilon_from_f, f_from_epsilon
from .randomizer import Randomizer
from .reports import ReportSet, vocabulary_fingerprint

__all__ = ["Randomizer", "ReportSet", "vocabulary_fingerprint", "epsilon_from_f", "f_from_epsilon", "epsilon_document"]
