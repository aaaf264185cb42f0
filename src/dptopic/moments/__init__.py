"""Topics from a released word co-occurrence (second-moment) matrix, by the method of moments: the per-document
statistic that is released (``document_statistics``), topics factorised from its noisy sum (``factorize``), and which
of them stand above the noise (``support``).

``document_statistics`` reads the documents (it computes what a trainer releases); everything else here is pure
post-processing, reading only the matrix it is given (a noisy release, or an unbiased estimate built from local-DP
reports), never the documents.
"""
from .document_statistics import document_frequency_statistic, normalised_cooccurrence
from .factorize import topics_from_cooccurrence

__all__ = ["normalised_cooccurrence", "document_frequency_statistic", "topics_from_cooccurrence"]
