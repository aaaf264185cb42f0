"""Topics from a released word co-occurrence (second-moment) matrix.

Pure post-processing: every function here reads only the matrix it is given (a noisy release, or an
unbiased estimate built from local reports), never the documents.
"""
from .cooccurrence import normalised_cooccurrence, document_frequency_statistic
from .factorize import topics_from_cooccurrence

__all__ = ["normalised_cooccurrence", "document_frequency_statistic", "topics_from_cooccurrence"]
