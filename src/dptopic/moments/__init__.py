"""Topics from a released word co-occurrence (second-moment) matrix, by the method of moments: the per-document
statistic that is released (``document_statistics``; its per-person form under the user unit, each person's
contribution bounded as a whole, is :mod:`dptopic.person_bound`), topics factorised from its noisy sum
(``factorize``), which of them stand above the noise (``support``), public word vectors in the release and its
topics (``public_groups``), ``DocDPCooccurrence``'s public priors (public documents of the domain, ``public_prior``;
public word vectors, ``vector_prior``) and a fitted model's topics read again from its saved releases (``refit``).

``document_statistics`` (and :mod:`dptopic.person_bound`) read the documents (they compute what a trainer releases);
everything else here reads no private document: it post-processes the matrix it is given (a noisy release, or an
unbiased estimate built from local-DP reports), with public input only (public documents, word vectors).
"""
from .document_statistics import document_frequency_statistic, normalised_cooccurrence
from .factorize import topics_from_cooccurrence

__all__ = ["normalised_cooccurrence", "document_frequency_statistic", "topics_from_cooccurrence"]
