"""Document-level local DP on the contributor's machine: one report per document, one word pair by k-subset selection.

The mechanism, its guarantee and the report file are :mod:`dptopic.protocol.document_reports`' (read its note); this
module holds the randomizer a contributor runs on its own documents, with coins from the operating system's CSPRNG
(``secrets``) unless it is a simulation.
"""
from __future__ import annotations

import secrets
import warnings

import numpy as np

from ..corpus import Corpus
from ..errors import DPTopicError, SeededNoiseWarning, user_stacklevel
from ..mechanisms.frequency_oracle import subset_selection
from ..protocol.document_reports import (
    DEFAULT_EPSILON,
    DocumentReportSet,
    check_epsilon,
    check_vocabulary,
    document_privacy_report,
    domain_size,
    n_pairs,
    pair_index,
)
from ..protocol.reports import vocabulary_fingerprint
from .randomizer import SEED_WARNING, count_matrix_corpus, not_a_document


class DocumentRandomizer:
    """Turn documents into document-level ``epsilon``-LDP reports (module note).

    Parameters
    ----------
    vocabulary : the public word list shared by contributors and server (2 to 2,000 words; the 200 or 400 most
        frequent words of the domain are the settings measured in ``docs/local_dp.md``, where 200 learn more
        below about 400,000 contributors).
    epsilon : the per-document epsilon (default 8).
    secure : (default) coins from the operating system's CSPRNG, as every report that leaves a device needs.
    simulation : ``True`` uses a NumPy Generator (for experiments only); only then is ``seed`` accepted.
    """

    def __init__(self, vocabulary, epsilon: float = DEFAULT_EPSILON, seed=None, simulation: bool = False,
                 secure: bool | None = None, **unknown):
        if "epsilon_word" in unknown or "f" in unknown:     # Randomizer's spellings: say which budget this one takes
            raise DPTopicError("DocumentRandomizer's budget is per document: give epsilon= (the whole report's"
                               " epsilon); for word-presence reports with a budget per word use"
                               " Randomizer(vocabulary, epsilon_word=...).")
        if unknown:
            raise DPTopicError(f"DocumentRandomizer got unexpected argument(s) {', '.join(sorted(unknown))}: it takes"
                               " vocabulary, epsilon, seed, simulation and secure.")
        self.vocabulary = check_vocabulary(vocabulary)
        self.epsilon = check_epsilon(epsilon)
        if simulation not in (True, False) or secure not in (True, False, None):
            raise DPTopicError(f"invalid secure={secure!r} / simulation={simulation!r}: each must be True or False.")
        if secure and simulation:       # as Randomizer: the two name opposite sources of coins
            raise DPTopicError("simulation=True draws from a NumPy Generator, not the OS CSPRNG: drop secure=True.")
        if secure is False and not simulation:
            raise DPTopicError("only a simulation draws its coins from a NumPy Generator: pass simulation=True for a"
                               " simulation, or keep the default (OS CSPRNG) for real reports.")
        if seed is not None and not simulation:
            raise DPTopicError("a seed makes the reports reproducible, so anyone who knows it can undo them: seeds are"
                               " for simulations only (simulation=True); real reports use the OS CSPRNG.")
        if seed is not None:
            warnings.warn(SEED_WARNING, SeededNoiseWarning, stacklevel=user_stacklevel())
        self.simulation = bool(simulation)
        self.secure = not simulation
        self._rng = (seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)) if simulation else None
        self.fingerprint = vocabulary_fingerprint(self.vocabulary)

    @classmethod
    def for_simulation(cls, vocabulary, epsilon: float = DEFAULT_EPSILON, seed=None) -> "DocumentRandomizer":
        """The NumPy-Generator randomizer, for simulations and experiments only."""
        return cls(vocabulary, epsilon, seed=seed, simulation=True)

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    def _token_lists(self, docs) -> list[np.ndarray]:
        docs = count_matrix_corpus(docs, self.vocabulary)
        if isinstance(docs, Corpus) and docs.n_empty_dropped:
            # every document sends exactly one report (one with no vocabulary word sends "no pair"): reports from a
            # corpus that left such documents out would be fewer by how many held none of the words
            raise DPTopicError(f"this corpus left out {docs.n_empty_dropped} document(s) with no vocabulary word, and"
                               " every document must send one report (an empty one sends 'no pair') so that their"
                               " number says nothing of the text: build it with drop_empty=False.")
        if isinstance(docs, Corpus):
            c = docs if docs.vocabulary == self.vocabulary else docs.restrict(self.vocabulary, drop_empty=False)
            ids, ptr = c.word_ids, c.doc_ptr
            return [ids[ptr[d]:ptr[d + 1]] for d in range(len(ptr) - 1)]
        if isinstance(docs, (str, bytes)) or not hasattr(docs, "__iter__"):
            raise DPTopicError(f"cannot randomize a {type(docs).__name__}: pass a Corpus, a count matrix (one column per"
                               " vocabulary word) or a list of documents (each a list of words).")
        out = []
        for doc in docs:
            if (err := not_a_document(doc)) is not None:
                raise err
            ids = []
            for w in doc:
                if not isinstance(w, str):
                    raise DPTopicError(f"invalid token {w!r}: tokens are words (str).")
                j = self.vocabulary.get(w)
                if j >= 0:
                    ids.append(j)
            out.append(np.asarray(ids, dtype=np.int64))
        return out

    def sample_pairs(self, docs) -> np.ndarray:
        """Each document's item: the word pair of two of its vocabulary tokens drawn uniformly without replacement,
        or the "no pair" item."""
        V = self.vocab_size
        none = n_pairs(V)
        sets = self._token_lists(docs)
        items = np.full(len(sets), none, dtype=np.int64)
        if self.secure:
            sysrand = secrets.SystemRandom()
            pick = lambda n: sysrand.sample(range(n), 2)  # noqa: E731
        else:
            pick = lambda n: self._rng.choice(n, 2, replace=False)  # noqa: E731
        for d, s in enumerate(sets):
            if len(s) >= 2:
                a, b = pick(len(s))
                items[d] = pair_index(int(s[a]), int(s[b]), V)
        return items

    def randomize(self, docs) -> "DocumentReportSet":
        """One report per document (those without two vocabulary words included: they report "no pair")."""
        items = self.sample_pairs(docs)
        reports, _event = subset_selection(items, domain_size(self.vocab_size), self.epsilon,
                                           None if self.secure else self._rng, secure=self.secure)
        return DocumentReportSet(reports, self.vocab_size, self.fingerprint, self.epsilon, self.vocabulary)

    __call__ = randomize

    def privacy_report(self, reports_per_contributor: int = 1) -> dict:
        return document_privacy_report(self.epsilon, self.vocab_size, reports_per_contributor,
                                       randomness="simulation (NumPy Generator), not for real reports" if self.simulation
                                       else "coins from the operating system's CSPRNG (secrets)")
