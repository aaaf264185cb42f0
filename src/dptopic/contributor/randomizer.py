"""The contributor-side randomizer of LP-LDA / OLP-LDA (Zhao et al. 2020, Sec. V, Steps 1-3)."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from .._validation import SEED, validate_value
from ..accounting.local import FlipParameterMixin, check_reporting_f, local_privacy_report, resolve_f
from ..corpus import Corpus, Vocabulary
from ..errors import DPTopicError, ParameterError, SeededNoiseWarning, user_stacklevel
from ..mechanisms.randomized_response import randomized_response
from ..protocol.reports import WORD_SCOPE, ReportSet, vocabulary_fingerprint

SEED_WARNING = ("an explicit seed makes the randomization reproducible: anyone who knows the seed can undo it."
                " Use seeds for tests only and keep them secret; leave seed=None for real reports.")


def count_matrix_corpus(docs, vocabulary):
    """A count matrix (scipy.sparse or a 2-D array, one row per document and one column per word of ``vocabulary``)
    as a :class:`Corpus` that keeps every row; anything else unchanged."""
    if sp.issparse(docs) or (isinstance(docs, np.ndarray) and docs.ndim == 2):
        if docs.shape[1] != len(vocabulary):
            raise DPTopicError(f"the count matrix has {docs.shape[1]} columns but the vocabulary has {len(vocabulary)}"
                               " words: give one column per vocabulary word, in its order (or a Corpus, which is"
                               " mapped onto the vocabulary by its words).")
        return Corpus.from_bow(docs, vocabulary=vocabulary)
    if isinstance(docs, np.ndarray) and docs.dtype.kind in "biuf":
        raise DPTopicError(f"a count matrix is 2-D (one row per document), but this array has shape {docs.shape}: for"
                           " one document's counts pass X.reshape(1, -1) (or the row as X[[i]]).")
    return docs


def not_a_document(doc) -> DPTopicError | None:
    """The one-line refusal of a list item that is no document (a number, or a string to tokenise), else None."""
    if isinstance(doc, (str, bytes)):
        return DPTopicError("documents must be token lists, not strings: tokenize first (e.g. text.split()) or pass a"
                            " Corpus.")
    if not hasattr(doc, "__iter__"):
        return DPTopicError(f"a document is a list of words, not a {type(doc).__name__}: pass a list of documents"
                            " (each a list of words), a Corpus, or a 2-D count matrix.")
    return None


class Randomizer(FlipParameterMixin):
    """Turn documents into randomized word-presence reports (local DP; Zhao et al. 2020, Thm 4).

    Each document becomes its presence vector over the public ``vocabulary`` (word counts and
    order are dropped); every bit is then kept with probability ``1 − f`` and replaced by a fair
    coin otherwise, i.e. flipped with probability ``f/2``. Each report is
    ``eps_word = ln((2 − f)/f)``-LDP for the presence of one word and ``eps_doc = V·eps_word``-LDP
    for the whole document. Run it on the contributor's side: the raw document never leaves.

    Parameters
    ----------
    vocabulary : the public vocabulary (:class:`~dptopic.corpus.Vocabulary` or a list of words),
        shared by every contributor and the server.
    epsilon_word, f : give exactly one; ``f = 2/(1 + e^eps_word)``.
    secure : (default) the coins come from the OS CSPRNG (``os.urandom``): what every report that leaves a
        contributor's device needs.
    simulation : ``True`` selects the fast compiled generator (xorshift128+ seeded from NumPy's PCG64), which
        is statistically sound but not cryptographic: for simulations and experiments only, never for real
        reports. Only a simulation takes a ``seed`` (for tests; it warns).

    Example
    -------
    >>> rz = Randomizer(["apple", "pear", "plum"], epsilon_word=3.0)
    >>> reports = rz.randomize([["apple", "plum", "plum"], ["pear"], []])
    >>> reports.n_reports
    3
    """

    def __init__(self, vocabulary, epsilon_word: float | None = None, f: float | None = None, seed=None,
                 secure: bool | None = None, simulation: bool = False, **unknown):
        if "epsilon" in unknown:        # DocumentRandomizer's spelling: say which budget this one takes
            raise DPTopicError("Randomizer's budget is per word: give epsilon_word= (a report then costs V x"
                               " epsilon_word for the whole document); for a budget per document use"
                               " DocumentRandomizer(vocabulary, epsilon=...).")
        if unknown:
            raise DPTopicError(f"Randomizer got unexpected argument(s) {', '.join(sorted(unknown))}: it takes"
                               " vocabulary, epsilon_word or f, seed, secure and simulation.")
        self.vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
        if len(self.vocabulary) < 1:
            raise ParameterError("empty {vocabulary}: give at least one word.", "vocabulary",
                                 key="contributor.randomizer.empty_vocabulary")
        self.f = check_reporting_f(resolve_f(f, epsilon_word))
        validate_value("seed", seed, SEED)
        if simulation not in (True, False) or secure not in (True, False, None):
            raise DPTopicError(f"invalid secure={secure!r} / simulation={simulation!r}: each must be True or False.")
        secure = (not simulation) if secure is None else bool(secure)
        if secure and simulation:
            raise DPTopicError("simulation=True uses the fast non-cryptographic generator: drop secure=True.")
        if not secure and not simulation:
            raise DPTopicError("the fast generator (xorshift128+) is not cryptographic and exists for simulations only:"
                               " pass simulation=True for a simulation, or keep the default (OS CSPRNG) for real reports.")
        if seed is not None and not simulation:
            raise DPTopicError("a seed makes the randomization reproducible, so anyone who knows it can undo it: seeds"
                               " are for simulations only (simulation=True); real reports take their coins from the"
                               " operating system's CSPRNG.")
        if seed is not None:
            warnings.warn(SEED_WARNING, SeededNoiseWarning, stacklevel=user_stacklevel())
        self.secure = secure
        self.simulation = bool(simulation)
        self.noise_reproducible = seed is not None
        self._rng = None if secure else (seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed))
        self.fingerprint = vocabulary_fingerprint(self.vocabulary)

    @classmethod
    def for_simulation(cls, vocabulary, epsilon_word: float | None = None, f: float | None = None, seed=None):
        """The fast, non-cryptographic randomizer, for simulations and experiments only."""
        return cls(vocabulary, epsilon_word=epsilon_word, f=f, seed=seed, simulation=True)

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    def privacy_report(self, delta: float = 1e-5) -> dict:
        rep = local_privacy_report(self.f, self.vocab_size, delta, scope=WORD_SCOPE)
        rep["secure_noise"] = self.secure
        rep["randomness"] = ("coins from the operating system's CSPRNG (os.urandom)" if self.secure else
                             "SIMULATION: coins from xorshift128+ seeded from NumPy's PCG64, not cryptographic; not for"
                             " reports that leave a device")
        if self.noise_reproducible:
            rep["noise_reproducible"] = True
            rep["warning"] = SEED_WARNING
        return rep

    def _as_csr(self, docs) -> tuple[np.ndarray, np.ndarray]:
        docs = count_matrix_corpus(docs, self.vocabulary)
        if isinstance(docs, Corpus) and docs.n_empty_dropped and not self.simulation:
            # every document sends exactly one report (one with no vocabulary word sends pure noise): real reports
            # from a corpus that left such documents out would be fewer by how many held none of the words, an exact
            # function of the text that no epsilon covers (DocumentRandomizer refuses it too). A simulation
            # randomizes the documents it was given (experiments and audits on a prepared corpus).
            raise DPTopicError(f"this corpus left out {docs.n_empty_dropped} document(s) with no vocabulary word, and"
                               " every document must send one report (an empty one sends pure noise) so that their"
                               " number says nothing of the text: build it with drop_empty=False.")
        if isinstance(docs, Corpus):
            if docs.vocabulary != self.vocabulary:
                docs = docs.restrict(self.vocabulary, drop_empty=False)
            return docs.word_ids, docs.doc_ptr
        if isinstance(docs, (str, bytes)) or not hasattr(docs, "__iter__"):
            raise DPTopicError(f"cannot randomize a {type(docs).__name__}: pass a Corpus, a count matrix (one column"
                               " per vocabulary word) or a list of documents (each a list of words or of word ids).")
        V, ids, ptr = self.vocab_size, [], [0]
        for doc in docs:
            if (err := not_a_document(doc)) is not None:
                raise err
            for w in doc:
                if isinstance(w, str):
                    j = self.vocabulary.get(w)
                    if j >= 0:
                        ids.append(j)
                elif isinstance(w, (int, np.integer)) and not isinstance(w, bool) and 0 <= w < V:
                    ids.append(int(w))
                else:
                    raise DPTopicError(f"invalid token {w!r}: tokens are words (str) or word ids in [0, {V}).")
            ptr.append(len(ids))
        return np.asarray(ids, dtype=np.int32), np.asarray(ptr, dtype=np.int64)

    def randomize(self, docs) -> ReportSet:
        """Randomize every document; returns a :class:`ReportSet` (one report per document).

        Words outside the vocabulary are ignored (they are never reported).
        """
        word_ids, doc_ptr = self._as_csr(docs)
        packed, _event = randomized_response(word_ids, doc_ptr, self.vocab_size, self.f, self._rng, self.secure)
        return ReportSet(packed, self.vocab_size, self.fingerprint, self.f, self.vocabulary)

    __call__ = randomize
