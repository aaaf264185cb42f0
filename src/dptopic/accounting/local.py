"""Local DP accounting for randomized response on word-presence vectors (Zhao et al. 2020, Thm 4).

Each of the ``V`` presence bits of a document is reported truthfully with probability
``1 - f/2`` and flipped with probability ``f/2``:

* per word (two documents that differ in the presence of one vocabulary word):
  ``eps_word = ln((1 - f/2) / (f/2)) = ln((2 - f) / f)``, i.e. ``f = 2 / (1 + e^eps_word)``;
* per document (any two documents): the ``V`` bits compose, ``eps_doc = V · eps_word``
  (pure; the tight (eps, delta) curve of the V-fold composition is smaller, see
  :meth:`RandomizedResponseEvent.pld`).

Everything the server computes from the reports is post-processing.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import DPTopicError, ParameterError
from .events import EPSILON_MAX, LOCAL_DOCUMENT_RELATION, RandomizedResponseEvent, check_f, epsilon_from_f
from .ledger import PrivacyLedger

LOCAL_UNIT = "document (local DP)"


def local_unit(reports_per_contributor: int) -> str:
    """What a local report's headline epsilon protects: one document, or all of one contributor's reports when
    they compose (it reads in "epsilon = 80 per contributor (local DP, 10 documents)")."""
    m = int(reports_per_contributor)
    return LOCAL_UNIT if m == 1 else f"contributor (local DP, {m} documents)"
WORD_RELATION_LOCAL = "two documents that differ in the presence of one vocabulary word"
LOCAL_THEOREM = ("Zhao et al. 2020, Theorem 4: randomized response on each presence bit is eps_word-LDP,"
                 " eps_word = ln((2 - f)/f); the V bits compose to eps_doc = V eps_word")
POST_PROCESSING = ("post-processing (Dwork & Roth 2014, Prop. 2.1): computed from the randomized reports"
                   " only, no further privacy cost")


#: the largest per-word epsilon a randomizer (and a collection server) takes: above it a bit is flipped with
#: probability under 2e-22, so the report is the document's presence vector itself (the per-document reports' limit
#: is 50 too). Reports and models made before the limit still account and verify up to the accountants' limit.
EPSILON_WORD_MAX = 50.0


def _check_eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not (0 < eps <= EPSILON_MAX):
        raise ParameterError("invalid {epsilon_word=}: must be a number in (0, {top:g}].", "epsilon_word", eps,
                             top=EPSILON_MAX)
    return float(eps)


def check_reporting_f(f: float) -> float:
    """``f`` for new reports (a randomizer, a server's configuration): its eps_word at most :data:`EPSILON_WORD_MAX`."""
    eps = epsilon_from_f(f)
    if eps > EPSILON_WORD_MAX * (1 + 1e-12):
        raise ParameterError("invalid {epsilon_word=:.6g}: must be a number in (0, {top:g}] for reports (above it a"
                             " bit is flipped with probability under 2e-22, so the report is the document itself; f"
                             " must be at least {least:.3g}).", "epsilon_word", eps, top=EPSILON_WORD_MAX,
                             least=2.0 / (1.0 + math.exp(EPSILON_WORD_MAX)))
    return f


def f_from_epsilon(epsilon_word: float) -> float:
    """The flip parameter that gives ``epsilon_word`` (inverse of :func:`epsilon_from_f`)."""
    e = _check_eps(epsilon_word)
    f = 2.0 / (1.0 + math.exp(e)) if e < 700 else 2.0 * math.exp(-e)
    if f >= 1.0:
        raise ParameterError("{epsilon_word=:g} is too small: its flip parameter f = 2/(1 + e^eps_word) rounds to 1,"
                             " which keeps nothing of the documents; give a larger {epsilon_word}.", "epsilon_word", e)
    return f


def resolve_f(f=None, epsilon_word=None) -> float:
    """Exactly one of ``f`` and ``epsilon_word``; return ``f``."""
    if (f is None) == (epsilon_word is None):
        raise DPTopicError("give exactly one of f and epsilon_word: they determine each other (f = 2/(1 + e^eps_word)).")
    return check_f(f) if f is not None else f_from_epsilon(epsilon_word)


def epsilon_document(f: float, vocab_size: int) -> float:
    """Per-document epsilon ``V · eps_word`` (pure, basic composition over the V bits)."""
    return vocab_size * epsilon_from_f(f)


class FlipParameterMixin:
    """``epsilon_word``, ``epsilon_doc`` and ``flip_probability`` of anything with ``f`` and ``vocab_size``."""

    @property
    def epsilon_word(self) -> float:
        return epsilon_from_f(self.f)

    @property
    def epsilon_doc(self) -> float:
        return self.vocab_size * self.epsilon_word

    @property
    def flip_probability(self) -> float:
        return self.f / 2.0


def local_privacy_report(f: float, vocab_size: int, delta: float = 1e-5, reports_per_contributor: int = 1,
                         server_steps=(), scope: str = "") -> dict:
    """The privacy report of a model trained on randomized reports (same shape as the central trainers').

    ``reports_per_contributor``: how many randomized reports of the same contributor the
    server may hold (their events compose).
    """
    ledger = PrivacyLedger(unit=local_unit(reports_per_contributor), relation=LOCAL_DOCUMENT_RELATION,
                           theorem=LOCAL_THEOREM)
    ledger.spend(RandomizedResponseEvent(f, vocab_size), reports_per_contributor)
    rep = ledger.report(delta)
    eps_w = epsilon_from_f(f)
    rep.update({
        "model": "local",
        "f": f,
        "flip_probability": f / 2,
        "epsilon_word": eps_w,
        "epsilon_word_relation": WORD_RELATION_LOCAL,
        "epsilon_doc": vocab_size * eps_w,
        "epsilon_doc_relation": LOCAL_DOCUMENT_RELATION,
        # the word-level figure for a whole contributor: the presence of one word changed in each of its reports,
        # composed (basic); NOT the document-level guarantee, which is epsilon_doc per report
        "epsilon_word_contributor": reports_per_contributor * eps_w,
        "epsilon_word_contributor_relation": (f"each of a contributor's {reports_per_contributor} report(s) differs in"
                                              " the presence of one vocabulary word (a replaced word changes two"
                                              " presence bits: twice this), basic composition over the reports; not"
                                              " the document-level guarantee (epsilon_doc per report)"),
        "vocab_size": vocab_size,
        "reports_per_contributor": reports_per_contributor,
        "noise": "randomized response on the contributors' devices",
        "randomness": ("the guarantee assumes each report was drawn with fresh coins on its contributor's device (dptopic"
                       " randomize and submit take them from the operating system's CSPRNG); the server cannot check this:"
                       " reports made with a seed (Randomizer.for_simulation, a test) protect nothing from whoever knows the"
                       " seed. The server adds no randomness the guarantee rests on"),
        "server_steps": {s: POST_PROCESSING for s in server_steps},
        "scope": scope or ("covers everything the server computes from the randomized reports (post-processing)."
                           " NOT covered: the public vocabulary, any data the server holds in the clear, how many"
                           " reports a contributor sends and when, and contributors who send more than"
                           " reports_per_contributor reports."),
    })
    return rep
