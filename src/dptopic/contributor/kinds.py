"""The kinds of local-DP report as a contributor writes them: the randomizer a server's ``/v1/config`` asks for, the
bytes of one report in an upload, and the epsilons the contributor's summary states.

The kinds' names and file formats are :mod:`dptopic.protocol.formats`' (both sides read them); what a server does
with a kind is :mod:`dptopic.service.kinds`'. Importing this module loads no numerical library.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from ..errors import DPTopicError


class ContributorKind(ABC):
    """One kind of report on the contributor's side. Subclasses implement the three methods."""

    name: str = ""

    @abstractmethod
    def randomizer(self, vocabulary, config_doc: dict):
        """The contributor-side randomizer for a server's ``/v1/config`` (coins from the OS CSPRNG, no seed)."""

    @abstractmethod
    def bytes_per_report(self, reports) -> int:
        """Bytes one report of the set ``reports`` takes in an upload (for splitting uploads under the body limit)."""

    @abstractmethod
    def epsilons(self, randomizer) -> dict:
        """``epsilon_word`` and ``epsilon_doc`` of one report, for the contributor's summary."""


class WordReports(ContributorKind):
    """LP-LDA's word-presence bits (:class:`~dptopic.contributor.randomizer.Randomizer`)."""

    name = "word"

    def randomizer(self, vocabulary, config_doc):
        from .randomizer import Randomizer  # start-up: the randomizer loads numba

        return Randomizer(vocabulary, f=config_doc["f"], secure=True)

    def bytes_per_report(self, reports):
        return (reports.vocab_size + 7) // 8

    def epsilons(self, randomizer):
        return {"epsilon_word": randomizer.epsilon_word, "epsilon_doc": randomizer.epsilon_doc}


class DocumentReports(ContributorKind):
    """One word pair per document (:class:`~dptopic.contributor.document_randomizer.DocumentRandomizer`)."""

    name = "document"

    def randomizer(self, vocabulary, config_doc):
        from .document_randomizer import DocumentRandomizer  # start-up: the randomizer loads numba

        return DocumentRandomizer(vocabulary, config_doc["epsilon_doc"])  # the OS CSPRNG

    def bytes_per_report(self, reports):
        return 4 * reports.subset_size

    def epsilons(self, randomizer):
        return {"epsilon_word": None, "epsilon_doc": randomizer.epsilon}


KINDS: dict[str, ContributorKind] = {k.name: k for k in (WordReports(), DocumentReports())}
NAMES: tuple[str, ...] = tuple(KINDS)


def get(name) -> ContributorKind:
    """The kind called ``name``; one-line error for any other."""
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise DPTopicError(f"invalid report kind {str(name)[:20]!r}: one of {', '.join(repr(n) for n in NAMES)}.")
    return kind
