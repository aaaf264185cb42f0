"""Topics of a :class:`~dptopic.models.DocDPCooccurrence` read from its saved releases: at another number of topics,
or to choose that number, for free.

The model's two Gaussian releases (the noisy word counts that chose the kept words, and the noisy co-occurrence
matrix of those words) are differentially private outputs: keeping them, and reading topics at another number of
topics from them, is post-processing (Dwork & Roth 2014, Prop 2.1). Nothing here reads a document or draws noise,
and nothing is charged to any ledger.

- :func:`refit_from_releases` (``model.refit(n_topics=K)``, ``dptopic refit``): the topics at K from the same
  releases, as the fit would have read them (the kept words and the background words stay those the fit chose: the
  co-occurrence release is over them);
- :func:`suggest_n_topics`: one selection from the releases alone, the support test the model already runs
  (:func:`~dptopic.moments.support.cooccurrence_supported_topics`): the largest K whose factorised topics all stand
  above the noise, no more than the release's eigenvalues above the noise edge.

- :func:`topic_word_matrix`: topics over the whole vocabulary from topics over the kept words and the noisy word
  counts, as both the fit and a refit read them.

The releases are saved with the model (``release_*.npy``); a folder saved before they were kept cannot be refitted.
The functions read and set a fitted model's attributes (duck-typed: no estimator class is imported here).
"""
from __future__ import annotations

import numpy as np

from .._validation import Int, validate_value
from ..corpus.vectors import OFF, load_public_vectors
from ..errors import DPTopicError, ParameterError
from ..person_bound import support_view
from .factorize import topics_from_cooccurrence
from .public_groups import spread_tail, word_topics
from .support import cooccurrence_supported_topics, mass_supported, wigner_edge

ARRAYS = ("release_cooccurrence", "release_ranking", "release_kept", "release_background", "release_scales",
          "release_groups")


def keep_releases(model, cooccurrence, ranking, groups=None) -> None:
    """At the end of a fit: the two noisy releases (``ranking`` None when the fit made one release only; ``groups``
    the column of each kept word when the co-occurrence release grouped words, else None)."""
    model.releases_ = {"cooccurrence": np.asarray(cooccurrence, dtype=np.float64),
                       "ranking": None if ranking is None else np.asarray(ranking, dtype=np.float64),
                       "groups": None if groups is None else np.asarray(groups, dtype=np.int64)}


def release_arrays(model) -> dict:
    """The arrays ``save`` writes so that a loaded model can be refitted."""
    rel = getattr(model, "releases_", None)
    if not rel:
        return {}
    out = {"release_cooccurrence": rel["cooccurrence"],
           "release_kept": np.asarray(model.kept_words_, dtype=np.int64),
           "release_background": np.asarray(model.background_words_, dtype=np.int64),
           "release_scales": np.array([model.noise_std_, np.nan if model.ranking_noise_std_ is None
                                       else model.ranking_noise_std_, model.n_background_topics_,
                                       1.0 if getattr(model, "word_choice_", None) == "repetition" else 0.0])}
    if rel["ranking"] is not None:
        out["release_ranking"] = rel["ranking"]
    if rel.get("groups") is not None:
        out["release_groups"] = rel["groups"]
    return out


def load_release_arrays(model, arrays) -> None:
    """Read back what :func:`release_arrays` wrote (nothing when the folder has none), checked."""
    if "release_cooccurrence" not in arrays:
        return
    V = model.components_.shape[1]
    Q = np.asarray(arrays["release_cooccurrence"])
    kept = np.asarray(arrays.get("release_kept", np.zeros(0)))
    bg = np.asarray(arrays.get("release_background", np.zeros(0, dtype=np.int64)))
    scales = np.asarray(arrays.get("release_scales", np.zeros(0)))
    rank = arrays.get("release_ranking")
    groups = arrays.get("release_groups")
    if groups is not None:
        groups = np.asarray(groups)
        if (groups.dtype.kind not in "iu" or groups.shape != kept.shape or not len(groups) or groups.min() < 0
                or set(np.unique(groups)) != set(range(int(groups.max()) + 1))):
            raise DPTopicError("release_groups.npy does not give each kept word's column of the release")
    n = len(kept) if groups is None else int(groups.max()) + 1
    if (Q.dtype.kind != "f" or Q.ndim != 2 or Q.shape != (n, n) or kept.dtype.kind not in "iu" or n < 2
            or not np.all((kept >= 0) & (kept < V)) or bg.dtype.kind not in "iu" or not np.all((bg >= 0) & (bg < V))
            or scales.shape != (4,) or scales.dtype.kind != "f" or not np.all(np.isfinite(Q))
            or not (np.isfinite(scales[0]) and scales[0] > 0) or scales[2] not in (0, 1, 2) or scales[3] not in (0, 1)
            or not (np.isnan(scales[1]) or (np.isfinite(scales[1]) and scales[1] > 0))
            or np.isnan(scales[1]) != (rank is None)):
        raise DPTopicError("release_*.npy do not hold the releases of this model (shapes or values)")
    stated = ((getattr(model, "privacy_", None) or {}).get("parameters") or {})
    for i, key, what in ((0, "noise_multiplier", "noise scale"), (1, "ranking_noise_multiplier", "ranking noise scale"),
                         (2, "background_topics", "number of background topics")):
        said = stated.get(key)
        if key in stated and not _same_figure(scales[i], said):
            raise DPTopicError(f"release_scales.npy's {what} ({scales[i]:.6g}) is not the privacy report's"
                               f" {key} ({said!r}): the folder was edited")
    if rank is not None:
        rank = np.asarray(rank)
        if rank.dtype.kind != "f" or rank.ndim != 1 or len(rank) < V or not np.all(np.isfinite(rank)):
            raise DPTopicError("release_ranking.npy must hold the noisy word counts (one per word at least)")
    model.releases_ = {"cooccurrence": Q.astype(np.float64),
                       "ranking": None if rank is None else rank.astype(np.float64),
                       "groups": None if groups is None else groups.astype(np.int64)}
    model.word_groups_ = model.releases_["groups"]
    model.kept_words_ = kept.astype(np.int64)
    model.background_words_ = np.sort(bg.astype(np.int64))
    model.noise_std_ = float(scales[0])
    model.ranking_noise_std_ = None if np.isnan(scales[1]) else float(scales[1])
    model.n_background_topics_ = int(scales[2])
    model.word_choice_ = ("repetition" if scales[3] else "frequency") if model.ranking_noise_std_ is not None else None


def _releases(model):
    rel = getattr(model, "releases_", None)
    if not rel and (getattr(model, "public_vectors_", None) or {}).get("route") == "rectangular":
        raise DPTopicError("this model's co-occurrence release is rectangular (vectors_route='rectangular'): refit"
                           " reads square releases only; fit again at that K (the fit spends the budget again).")
    if not rel:
        raise DPTopicError(f"{type(model).__name__} has no saved releases to read topics from: fit it (or load a"
                           " folder saved by this version of dptopic) first.")
    if (getattr(model, "public_input_", None) or getattr(model, "public_route_", None)
            or "public_input" in (getattr(model, "privacy_", None) or {})):    # a fitted model, or a loaded folder
        raise DPTopicError("this model's topics also read public documents (public_corpus=): refit reads the"
                           " releases alone, so its topics at another K would say they come from the public and"
                           " private co-occurrence together while reading the private release only; fit again with"
                           " public_corpus at that K (the public documents cost no budget; the fit spends it again).")
    return rel


def _check_k(model, n_topics) -> int:
    K = int(validate_value("n_topics", n_topics, [Int(1, 100_000)]))
    n_bg, kept = int(model.n_background_topics_), len(model.kept_words_)
    if K - n_bg < 1:
        raise ParameterError("{n_topics=} leaves no topic beside the model's {n_bg} background topic(s): give more"
                             " than that.", "n_topics", K, n_bg=n_bg)
    if K - n_bg > kept:
        raise ParameterError("{n_topics=} asks for more topics than the {kept} words of the co-occurrence release"
                             " allow (at most {most}); a larger K needs a new fit, which spends budget again.",
                             "n_topics", K, kept=kept, most=kept + n_bg)
    return K


def topics_at(model, K: int):
    """``(components, supported)`` at ``K`` topics, from the releases alone (the fit's own post-processing)."""
    rel = _releases(model)
    params = getattr(model, "_fit_params_", None) or model.get_params()
    V = model.components_.shape[1]
    n_bg = int(model.n_background_topics_)
    kept, background = np.asarray(model.kept_words_), np.asarray(model.background_words_)
    sigma, sigma_rank = float(model.noise_std_), model.ranking_noise_std_
    noisy = rel["cooccurrence"]
    vectors = _refit_vectors(model)     # before any work: a refit needs the fit's vectors again
    H = topics_from_cooccurrence(noisy, K - n_bg, params.get("recovery", "refined-anchors"),
                                 noise_std=sigma / np.sqrt(2.0), threshold=float(params.get("threshold", 1.0)))
    supported = np.zeros(K, dtype=bool)
    Q = support_view((noisy + noisy.T) / 2.0, _person_statistic(params))
    supported[:K - n_bg] = cooccurrence_supported_topics(Q, H, sigma / np.sqrt(2.0))
    counts = rel["ranking"][:V] if sigma_rank is not None else None
    H = word_topics(H, rel.get("groups"), kept, counts, sigma_rank)
    beta = topic_word_matrix(H, supported, V, kept, background, n_bg, sigma_rank, counts, params.get("tail"),
                             model.word_choice_)
    if vectors is not None:
        E, found, _ = vectors.for_words(list(model.vocabulary_.words))
        beta = spread_tail(beta, kept, E, found)
    return beta, supported


def _refit_vectors(model):
    """The public vectors the fit read (its ``public_vectors_`` entry), loaded again and checked by their sha256;
    None when it read none. Refused in one line when they cannot be had (a refit reads the same public input)."""
    entry = getattr(model, "public_vectors_", None)
    if not entry:
        return None
    spec = entry.get("name")
    given = (getattr(model, "_fit_params_", None) or model.get_params()).get("public_vectors")
    if isinstance(given, str) and given != "auto" and given.lower() not in OFF:
        spec = given
    try:
        vectors = load_public_vectors(spec)
    except DPTopicError as e:
        raise DPTopicError(f"this model's topics also read public word vectors ({entry.get('name')}), which cannot be"
                           f" read again ({e}); install them, or fit again.") from None
    if vectors.sha256 != entry.get("sha256"):
        raise DPTopicError(f"the public word vectors {entry.get('name')} read now are not those the model was fitted"
                           f" with (sha256 {vectors.sha256[:12]}… against {str(entry.get('sha256'))[:12]}…): install"
                           " the same vectors, or fit again.")
    return vectors


def refit_from_releases(model, n_topics):
    """``model.refit(n_topics=K)``: the topics at ``K`` read from the saved releases, in place (``n_topics``,
    ``components_`` and the topic flags change; the privacy report, its card and every ledger stay as they are).
    Returns the model."""
    _releases(model)
    K = _check_k(model, n_topics)
    comp, supported = topics_at(model, K)
    n_bg = int(model.n_background_topics_)
    model.n_topics = K
    model.components_ = comp
    model.supported_topics_ = supported
    model.background_topics_ = np.arange(K) >= K - n_bg
    if getattr(model, "_fit_params_", None) is not None:
        model._fit_params_ = dict(model._fit_params_, n_topics=K)
    model._dataset_release_ = None      # a save of the refitted model adds nothing to the ledger's record
    model.refitted_from_releases_ = True
    return model


def _same_figure(saved, stated) -> bool:
    """A saved scale against the privacy report's figure (None and NaN both mean "none")."""
    if stated is None or isinstance(stated, bool) or not isinstance(stated, (int, float)):
        return stated is None and bool(np.isnan(saved))
    return bool(np.isfinite(saved)) and abs(float(saved) - float(stated)) <= 1e-9 * max(1.0, abs(float(stated)))


def release_outliers(model) -> int:
    """How many eigenvalues of the symmetrised co-occurrence release stand above the noise edge (Tracy-Widom's 95%
    point): a bound, with probability at least 95%, on the number of directions the release can tell apart, the
    corpus-wide frequencies among them."""
    rel = _releases(model)
    params = getattr(model, "_fit_params_", None) or model.get_params()
    Q = support_view((rel["cooccurrence"] + rel["cooccurrence"].T) / 2.0, _person_statistic(params))
    edge = wigner_edge(Q.shape[0], float(model.noise_std_) / np.sqrt(2.0))
    return int((np.linalg.eigvalsh(Q) > edge).sum())


def _person_statistic(params) -> str:
    """The fit's ``person_statistic`` at the user unit (``"sum"`` at the document unit or in an older folder)."""
    return (params.get("person_statistic") or "sum") if params.get("unit") == "user" else "sum"


def suggest_n_topics(model, candidates=None) -> dict:
    """The number of topics the releases support, from the releases alone (post-processing, free): for each
    candidate K (default 2 to the release's outliers + 2, at most 50 values), the topics are read at K and the
    support test counts those that stand above the noise; the suggestion is the largest K whose topics are all
    supported (the background topics aside), or the K with most supported topics when none is. Returns
    ``{"n_topics": K, "supported": {K: count}, "outliers": m}``."""
    _releases(model)
    n_bg = int(model.n_background_topics_)
    m = release_outliers(model)
    if candidates is None:
        hi = min(max(m + 2, n_bg + 2), len(model.kept_words_) + n_bg)
        candidates = range(n_bg + 1, hi + 1)
    counts = {}
    for K in candidates:
        K = _check_k(model, K)
        _, supported = topics_at(model, K)
        counts[K] = int(supported[:K - n_bg].sum())
    if not counts:
        raise DPTopicError("give at least one candidate number of topics.")
    full = [K for K, c in counts.items() if c == K - n_bg]
    best = max(full) if full else max(counts, key=lambda K: (counts[K], -K))
    return {"n_topics": int(best), "supported": counts, "outliers": m}


def topic_word_matrix(H, supported, V: int, kept, background, n_bg: int, sigma_rank, counts, tail, word_choice: str):
    """The topics over the whole vocabulary, from the recovered topics ``H`` over the kept words and the noisy word
    counts of the ranking release (post-processing of the two releases, for ``fit`` and ``refit`` alike): the kept
    words share ``1 - tail`` of each topic, the other words the rest by noisy frequency, and ``n_bg`` background topics
    follow the noisy counts; ``supported`` (length K) gets the background topics' flags. Rows sum to 1."""
    K = len(supported)
    beta = np.zeros((K, V))
    if sigma_rank is None:
        beta[:] = H
        return beta / beta.sum(axis=1, keepdims=True)
    weight = np.maximum(counts, 0.0) + 1e-3 * sigma_rank
    rest = np.setdiff1d(np.arange(V), np.concatenate([kept, background]))
    if len(rest):
        share = (float(np.clip(weight[rest].sum() / (weight[rest].sum() + weight[kept].sum()), 0.01, 0.9))
                 if tail is None else float(tail))
        beta[:K - n_bg, rest] = share * weight[rest] / weight[rest].sum()
    else:
        share = 0.0
    beta[:K - n_bg, kept] = H * (1.0 - share)
    if n_bg == 1:
        beta[K - 1] = weight
    elif n_bg == 2:                      # the background words, then every other word, by noisy frequency
        beta[K - 2, background] = weight[background]
        others = np.setdiff1d(np.arange(V), background)
        beta[K - 1, others] = weight[others]
    if n_bg:
        supported[K - n_bg:] = _background_supported(counts, background, n_bg,
                                                     sigma_rank * (np.sqrt(2.0) if word_choice == "repetition" else 1.0))
    beta += 1e-9 * beta.sum(axis=1, keepdims=True)      # every word stays possible in every topic
    return beta / beta.sum(axis=1, keepdims=True)


def _background_supported(counts: np.ndarray, background: np.ndarray, n_bg: int, noise_std: float) -> np.ndarray:
    """Whether each of the ``n_bg`` background topics stands above the noise of the first release (post-processing):
    the noisy counts of its words (the background words, then every other word, with two; every word with one) summed
    against the noise of that sum (:func:`~dptopic.moments.support.mass_supported`)."""
    V = len(counts)
    if n_bg == 1:
        groups = [np.arange(V)]
    else:
        groups = [background, np.setdiff1d(np.arange(V), background)]
    return mass_supported([counts[g].sum() for g in groups], [len(g) for g in groups], noise_std)
