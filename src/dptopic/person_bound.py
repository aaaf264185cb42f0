"""The person bound: user-level DP for the document-level trainers, one person's documents added or removed.

Each document's contribution to a release is computed as for document-level DP (norm at most 1); then, per person,
either (``documents_per_user=None``, the default) the person's contributions are summed and the sum scaled to norm
at most 1 (:mod:`dptopic.kernels.user_level`), or (``documents_per_user=m``) at most ``m`` of the person's documents,
chosen at random, each weighted ``1/m``. Either way one person moves every released statistic by at most 1 in L2,
the sensitivity the document-level accounting assumes, so the noise and the accounting are unchanged, with the
person as the unit. What is not covered: a person whose documents carry two or more ids (each id is one person).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .accounting.events import DOCUMENT_ADD_REMOVE
from .errors import DPTopicError, ParameterError

USER_RELATION = ("user-level add/remove: D' is D with every document of one person (one user id) added or removed;"
                 " each person's contribution to every release is bounded as a whole")
USER_NOT_COVERED = ("a person whose documents carry two or more user ids (each id counts as one person: k ids are"
                    " protected only as a group of k, at more than k x epsilon: see the card's group privacy),"
                    " several people sharing one id (shared or anonymous accounts: the id is the unit, so one of them"
                    " is not protected as a person added or removed), ")
USER_BOUND = {None: "each person's normalised document contributions summed, the sum scaled to norm at most 1",
              "m": "at most {m} documents a person (chosen at random), each weighted 1/{m}",
              "profile": "each person's normalised presence vectors summed, the sum scaled to norm at most 1; in the"
                         " co-occurrence statistic, u u^T, u the person's word counts over all their documents scaled"
                         " to norm 1"}
PERSON_STATISTICS = ("sum", "profile")
"""``person_statistic`` of ``DocDPCooccurrence(unit="user")``: how a person's co-occurrence contribution is made.
``"sum"``: each document's normalised pair matrix, summed, the sum scaled to norm at most 1 (as the first release);
``"profile"``: ``u u^T``, ``u`` the person's word counts over all their documents scaled to norm 1 (norm 1 a person;
docs/research/user_level.md)."""
UNITS = ("document", "user")


def support_view(Q, person_statistic: str = "sum") -> np.ndarray:
    """The symmetrised co-occurrence release ``Q`` as the support tests read it
    (:func:`~dptopic.moments.support.cooccurrence_supported_topics`): as it is, or for ``person_statistic="profile"``
    with its diagonal set to 0 (post-processing).

    The tests' null is a corpus without topics, whose signal is rank one (the word frequencies). Each person's
    ``u u^T`` also puts ``u_i^2`` on the diagonal, a full-rank part that such a corpus has too: read with it, people of
    few short documents drawn from one word distribution had most topics marked supported
    (``docs/research/user_level.md``). Off the diagonal, a person's counts ``c`` of such a corpus give
    ``E[c_i c_j] = n(n-1) f_i f_j``: a rank-one matrix less a non-negative diagonal, with at most one positive
    eigenvalue, so the tests' bound (Weyl) holds again. The sum's pair matrices ``c c^T - diag(c)`` have no such
    diagonal, and its release is read as it is."""
    Q = np.array(Q, dtype=np.float64)
    if person_statistic == "profile":
        np.fill_diagonal(Q, 0.0)
    return Q


def user_bound_text(documents_per_user, person_statistic: str = "sum") -> str:
    """How each person's contribution is bounded, in words (the report's and the card's ``user_bound``)."""
    if person_statistic == "profile":
        return USER_BOUND["profile"]
    if documents_per_user is None:
        return USER_BOUND[None]
    return USER_BOUND["m"].format(m=int(documents_per_user))


def user_codes(user_ids, n_docs: int) -> np.ndarray:
    """One integer per document, the same for the documents of one person, from ``user_ids`` (one string per
    document; :func:`~dptopic.corpus.corpus.check_user_ids` refuses anything else in one line)."""
    from .corpus.corpus import check_user_ids  # start-up: corpus.corpus loads numba

    return person_codes(check_user_ids(user_ids, n_docs))


def person_codes(ids) -> np.ndarray:
    """One integer per entry of ``ids``, equal exactly when the ids are equal as Python strings (numbered in the
    ids' sorted order). Never through a NumPy string array, which drops trailing NULs and so would make ``"v"`` and
    ``"v\u0000"`` one person."""
    ids = list(ids)
    code = {u: i for i, u in enumerate(sorted(set(ids)))}
    return np.fromiter((code[u] for u in ids), dtype=np.int64, count=len(ids))


def take_documents(bow, order):
    """The bag of words ``(ptr, ids, counts)`` with its documents in ``order`` (a subset or a permutation)."""
    ptr, ids, cts = bow
    order = np.asarray(order, dtype=np.int64)
    lengths = np.diff(ptr)[order]
    new_ptr = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_ptr[1:])
    at = np.repeat(np.asarray(ptr)[order] - new_ptr[:-1], lengths) + np.arange(new_ptr[-1])
    return new_ptr, np.asarray(ids)[at], np.asarray(cts)[at]


def group_by_person(bow, codes, documents_per_user, rng):
    """``(bow, gptr, weight)``: the documents in person order (``gptr``: person ``g`` holds documents
    ``gptr[g]..gptr[g+1]-1``) and the weight of each document's contribution. ``documents_per_user`` None: every
    document, weight 1 (the kernels scale each person's sum); ``m``: at most ``m`` of each person's documents, chosen
    at random from ``rng``, weight ``1/m`` (each person then adds at most ``m * 1/m = 1``)."""
    codes = np.asarray(codes, dtype=np.int64)
    if documents_per_user is None:
        order = np.argsort(codes, kind="stable")
        weight = 1.0
    else:
        m = int(documents_per_user)
        order = np.lexsort((rng.random(len(codes)), codes))    # each person's documents in random order
        first = np.searchsorted(codes[order], codes[order], side="left")
        order = order[np.arange(len(order)) - first < m]
        weight = 1.0 / m
    kept = codes[order]
    starts = np.flatnonzero(np.r_[True, kept[1:] != kept[:-1]]) if len(kept) else np.zeros(0, np.int64)
    gptr = np.append(starts, len(kept)).astype(np.int64)
    return take_documents(bow, order), gptr, weight


def check_unit(model, user_ids) -> None:
    """Before the documents are read: ``user_ids`` only with ``unit="user"``, and ``documents_per_user`` too."""
    name = type(model).__name__
    if model.unit != "user" and user_ids is not None:
        raise ParameterError("{user_ids=} makes the guarantee per person: give {model}(unit='user', ...), or leave"
                             " {user_ids} out for a guarantee per document.", "user_ids", others=("unit",), model=name)
    if model.unit != "user" and model.documents_per_user is not None:
        raise DPTopicError(f"documents_per_user={model.documents_per_user!r} bounds each person's documents: give"
                           f" {name}(unit='user', ...) with it, or leave it out.")
    if getattr(model, "person_statistic", "sum") != "sum":
        if model.unit != "user":
            raise ParameterError("{person_statistic=} makes each person's contribution from all their documents:"
                                 " give {model}(unit='user', ...) with it, or leave it out.", "person_statistic",
                                 model.person_statistic, others=("unit",), model=name,
                                 key="person_bound.check_unit")
        if model.documents_per_user is not None:
            raise ParameterError("{person_statistic=} reads every document of each person: leave"
                                 " {documents_per_user} out (None).", "person_statistic", model.person_statistic,
                                 others=("documents_per_user",))


def people_of(model, corpus, passes, rng):
    """``None`` for ``unit="document"``; for ``unit="user"`` the documents grouped by person, ``(bow, gptr,
    weight)`` (:func:`group_by_person`; ``gptr`` None with ``documents_per_user``: the document-level kernels then
    sum the chosen documents, each weighted ``1/m``), and the number of people. The user ids come from the corpus
    (read with them, or given to ``fit`` and attached to it before any document was dropped)."""
    if model.unit != "user":
        return None, None
    name = type(model).__name__
    ids = getattr(corpus, "user_ids", None) if corpus is not None else None
    if ids is None:
        raise ParameterError("{model}(unit='user') needs the person of each document: pass {user_ids=} to fit (one"
                             " string per document), or a Corpus read with its user ids ({user_field=}).", "user_ids",
                             others=("unit",), model=name)
    from .corpus.corpus import USER_FIELD  # start-up: corpus.corpus loads numba

    # where the person of each document was read from (a JSONL field, a CSV column, a folder level), for the report
    model.user_field_ = corpus.metadata.get(USER_FIELD) if isinstance(getattr(corpus, "metadata", None), dict) else None
    codes = user_codes(ids, corpus.n_docs)
    bow, gptr, weight = group_by_person(next(iter(passes())), codes, model.documents_per_user, rng)
    return (bow, None if model.documents_per_user is not None else gptr, weight), len(gptr) - 1


def presence_statistic(people, vocab_size: int, n_jobs: int, **kw) -> np.ndarray:
    """The first release's statistic with each person's contribution bounded (``people`` from :func:`people_of`)."""
    from .kernels.pair_moments import document_frequency_bow  # start-up: kernels.pair_moments loads numba
    from .kernels.user_level import user_document_frequency_bow  # start-up: kernels.user_level loads numba

    bow, gptr, weight = people
    if gptr is None:
        return document_frequency_bow(bow, vocab_size, n_jobs, **kw) * weight
    return user_document_frequency_bow(bow, gptr, vocab_size, n_jobs, **kw)


def cooccurrence_statistic(people, columns, vocab_size: int, n_jobs: int, groups=None,
                           person_statistic: str = "sum") -> np.ndarray:
    """The co-occurrence release's statistic with each person's contribution bounded (over the groups of the column
    words with ``groups``); ``person_statistic="profile"``: each person's ``u u^T`` (:data:`PERSON_STATISTICS`)."""
    from .kernels.pair_moments import normalised_cooccurrence_bow  # start-up: kernels.pair_moments loads numba
    from .kernels.user_level import (  # start-up: kernels.user_level loads numba
        user_cooccurrence_bow,
        user_profile_cooccurrence_bow,
    )

    bow, gptr, weight = people
    if gptr is None:
        return normalised_cooccurrence_bow(bow, columns, vocab_size, n_jobs, groups=groups) * weight
    if person_statistic == "profile":
        return user_profile_cooccurrence_bow(bow, gptr, columns, vocab_size, n_jobs, groups=groups)
    return user_cooccurrence_bow(bow, gptr, columns, vocab_size, n_jobs, groups=groups)


def em_statistic(people, beta: np.ndarray, alpha: float, inner: int, n_jobs: int) -> np.ndarray:
    """One EM iteration's statistic (K x V) with each person's contribution bounded."""
    from .kernels.docdp import normalised_statistic  # start-up: kernels.docdp loads numba
    from .kernels.user_level import user_normalised_statistic  # start-up: kernels.user_level loads numba

    bow, gptr, weight = people
    if gptr is None:
        return normalised_statistic(*bow, beta, alpha, inner, n_jobs)[0] * weight
    return user_normalised_statistic(bow, gptr, beta, alpha, inner, n_jobs)


def unit_and_relation(model) -> tuple[str, str]:
    """The ledger's unit and neighbouring relation for ``model.unit``."""
    return ("user", USER_RELATION) if getattr(model, "unit", "document") == "user" else ("document", DOCUMENT_ADD_REMOVE)


def for_unit_event(model, event):
    """``event`` (a release's) naming the model's neighbouring relation."""
    if getattr(model, "unit", "document") != "user":
        return event
    return dataclasses.replace(event, relation=USER_RELATION)


def user_report(model, rep: dict) -> dict:
    """A report of a ``unit="user"`` fit: the theorem and scope per person, and how each person was bounded."""
    if getattr(model, "unit", "document") != "user":
        return rep
    bound = user_bound_text(model.documents_per_user, getattr(model, "person_statistic", "sum"))
    rep["user_bound"] = bound
    field = getattr(model, "user_field_", None)
    rep["user_field"] = field if field else "user_ids given to fit (no field named)"
    rep["theorem"] = str(rep.get("theorem", "")).replace(
        "add/remove of one document", f"add/remove of one person's documents ({bound})")
    scope = str(rep.get("scope", ""))
    rep["scope"] = scope.replace("NOT covered: ", "NOT covered: " + USER_NOT_COVERED, 1)
    if isinstance(rep.get("parameters"), dict):
        rep["parameters"]["documents_per_user"] = model.documents_per_user
        if getattr(model, "person_statistic", "sum") != "sum":
            rep["parameters"]["person_statistic"] = model.person_statistic
    return rep
