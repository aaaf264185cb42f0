"""Public word vectors as a prior for ``DocDPCooccurrence`` (its ``public_vectors`` parameter).

What the vectors decide, and what they never decide:

* which vectors a fit reads (:func:`resolve_vectors`): ``"auto"`` (the default) takes the installed vectors of the
  vocabulary's language (:func:`dptopic.corpus.vectors.default_vectors`), a name or a path reads those, ``None`` or
  ``"none"`` none. The choice reads the vocabulary and the installed packages only, and is made before anything is
  spent, so a refused file costs nothing;
* ``vectors_route="spread"`` (default): the release is as without vectors; afterwards each word the release did not
  hold (beyond the kept words) is placed in the topics of its nearest kept words by vector, in proportion to how near
  they are (:func:`~dptopic.moments.public_groups.spread_tail`), instead of in every topic alike;
* ``vectors_route="groups"``: the co-occurrence release counts the kept words and, beside them, groups of the other
  words made by their vectors (:func:`~dptopic.moments.public_groups.word_groups`); topics over the groups are shared
  among their words by noisy frequency.
* ``vectors_route="rectangular"``: the co-occurrence release pairs 500 kept words (rows) with the most frequent words
  and groups of the other words made by their vectors (columns; :mod:`dptopic.moments.rectangular`), the same
  sensitivity; each row word gets topic weights of its own. Document unit only.

Both are functions of the releases and of public input only. ``supported_topics_`` is decided on the release alone
(at the level it was made: words, or words and groups), so a topic the prior shapes but the release does not
support is still marked unsupported. Measured routes and their numbers: ``docs/research/public_vectors.md``.
"""
from __future__ import annotations

import numpy as np

from ..corpus.vectors import AUTO, MIN_COVERAGE, OFF, PublicVectors, default_vectors, describe, load_public_vectors
from ..errors import MISSING, DPTopicError, ParameterError
from .public_groups import prior_topics

ROUTES = ("auto", "spread", "groups", "rectangular")

GROUPS_FROM = 75.0
"""``vectors_route="auto"`` at the document unit (at the user unit :data:`GROUPS_FROM_PER_PERSON`, the same): the
release of word groups where the first release's signal is large enough and its presence reaches
:data:`GROUPS_MIN_PRESENCE`, spreading otherwise: the sum of its noisy word entries over ``175 sigma`` (the count
``n_words="auto"`` reads before it clips it to 200-2,000 words) at least this. Measured at epsilon 1: the groups did
better on 20 Newsgroups (106) and the State of the Union paragraphs (124), worse in coverage on its first 5,000 posts
(43), Reuters R52 (51) and the election tweets (18). The signal grows with epsilon, and from 2 on small corpora pass
it and lose coverage with the groups: hence :data:`GROUPS_MIN_PRESENCE` (docs/research/public_vectors.md)."""

GROUPS_MIN_PRESENCE = 50_000.0
"""``vectors_route="auto"`` takes the groups only where the first release's presence (its noisy word entries summed,
each document's presence vector of norm 1: about the sum over the documents of the square root of their distinct
words; the figure the signal divides by ``175 sigma``) is at least this, besides the signal (:data:`GROUPS_FROM`). It
does not grow with epsilon, as the signal does. A cut between measured corpora, not a fitted optimum: about the
geometric midpoint (49,900) of the largest presence where the groups lost coverage at a signal above the threshold
(Reuters R52, 34,400, at epsilon 4 and 8; 20 Newsgroups' first 5,000 posts, 29,100, at every epsilon from 2 to 8; 20
Newsgroups' posts by their first 12 words, 21,400, at 4; the friends' lines, 40,200, tied at 2 and lost 0.013 +-
0.009 at 4) and the smallest where they won (20 Newsgroups, 72,400; the State of the Union, 85,200, won or tied at
every epsilon; people of two State of the Union paragraphs, about 57,000, tied). The first release carries no count
of documents (its last entry sums each document's 1 / norm); a count estimated from it (within 8% on the corpora
measured) does not separate them: the posts' first words (11,237 documents) lose with the groups where 20 Newsgroups
(11,287) wins. Draws of 20 Newsgroups bracket it (7,000 posts, 44,630, lost against the spread at epsilon 4; 8,500,
54,447, won or tied at 1, 2 and 4); draws of the State of the Union lose coverage with the groups up to 72,800, so the
presence alone does not place the cut on every corpus, and a cut above them would take 20 Newsgroups off the groups.
The same figure at the user unit, where it sums the people's bounded contributions (docs/research/public_vectors.md,
"Locating the cut"; docs/research/user_level.md)."""

GROUPS_FROM_PER_PERSON = GROUPS_FROM
"""``vectors_route="auto"`` at the user unit: the document unit's rule and thresholds (the first release's signal,
the people's summed contributions, against :data:`GROUPS_FROM`, and their sum against :data:`GROUPS_MIN_PRESENCE`);
until 2026-11-27 the user unit took the spread
whatever the signal. Two measurements at epsilon 1 per person, paired (docs/research/user_level.md): on planted
people (1,000 to 30,000; recovery of the planted topics only) the groups recovered 0.01-0.08 less than the spread at
every signal (15 to 1,500); on real labelled documents grouped into people (20 Newsgroups, its first 5,000 posts,
the State of the Union, Reuters R52 and the election tweets, 1, 2, 3 or 6 documents a person, of one label or of
random ones; ``bench_utility.py``'s coverage and accuracy shares), the groups won or tied wherever the signal reached
75 (20 Newsgroups, 104: coverage +0.014, accuracy +0.15; State of the Union, 82-123: coverage -0.016 to -0.002,
accuracy tied, 6-8 more topics supported), and below it lost coverage (20NG-5000 at 21-41: -0.09; Reuters at
23-49: -0.025 to -0.09; tweets at 8-17: -0.026; State of the Union at 65: -0.02; 20 Newsgroups at 33: -0.02 to
-0.04) except on 20 Newsgroups at 53-70, where they won both and this rule leaves them (accuracy +0.15 to +0.24).
Every measured set of people above the signal's threshold had a presence of 57,000 or more, so
:data:`GROUPS_MIN_PRESENCE` changes none of their routes. The rule is judged on real corpora, as the document
unit's was."""


def choose_route(route: str, presence: float, sigma: float, unit: str = "document") -> str:
    """The route a fit takes: ``route`` as given, or for ``"auto"`` the groups when ``presence`` (the first release's
    noisy word entries summed) reaches :data:`GROUPS_MIN_PRESENCE` and ``presence / (175 sigma)`` (``sigma`` the
    co-occurrence release's noise multiplier) reaches :data:`GROUPS_FROM` (:data:`GROUPS_FROM_PER_PERSON` at the
    user unit), else the spread (post-processing of the first release and of public settings)."""
    if route != "auto":
        return route
    threshold = GROUPS_FROM_PER_PERSON if unit == "user" else GROUPS_FROM
    if presence < GROUPS_MIN_PRESENCE:
        return "spread"
    return "groups" if presence / (175.0 * float(sigma)) >= threshold else "spread"


def resolve_vectors(spec, vocab_words, *, applies: bool, why_not: str = "") -> tuple[PublicVectors | None, str,
                                                                                           bool]:
    """``(vectors, note, by_default)`` for a fit over ``vocab_words``.

    ``spec``: ``"auto"``, None, ``"none"``, a name, a path or :class:`~dptopic.corpus.vectors.PublicVectors`.
    ``applies``: whether the fit's other settings use vectors (``why_not`` says why not): ``"auto"`` then uses none,
    and an explicit source is refused in one line. An explicit source that does not cover the vocabulary's language
    is refused in one line; ``"auto"`` then uses none and says so in ``note``. ``vocab_words`` None: the words are not
    known yet (a private vocabulary is still to be drawn): every check but the coverage is made, and ``"auto"`` chooses
    nothing yet."""
    if spec is None or (isinstance(spec, str) and spec.lower() in OFF):
        return None, "public vectors off (public_vectors=None)", False
    auto = isinstance(spec, str) and spec == AUTO
    if not applies:
        if auto:
            return None, f"public vectors not used: {why_not}", False
        raise ParameterError("{public_vectors} applies to DocDPCooccurrence's default settings only: {why}; drop"
                             " {public_vectors} or those settings.", "public_vectors", MISSING, why=why_not)
    if auto and vocab_words is None:
        return None, "public vectors chosen once the vocabulary is known", False
    if auto:
        vectors, note = default_vectors(vocab_words)
        return vectors, note, vectors is not None
    vectors = load_public_vectors(spec)
    if vocab_words is None:
        return vectors, "", False
    share = vectors.coverage(vocab_words)
    if share < MIN_COVERAGE:
        raise ParameterError("{public_vectors} ({name}) has vectors for {n:,} of the vocabulary's {V:,} words"
                             " ({share:.0%}; at least {least:.0%} are needed): they do not match the corpus's language"
                             " or tokenisation; give vectors of the corpus's language.", "public_vectors", MISSING,
                             name=vectors.name, n=int(round(share * len(vocab_words))), V=len(vocab_words),
                             share=share, least=MIN_COVERAGE)
    return vectors, describe(vectors, share), False


def floor_topics(vectors: PublicVectors, vocab_words, n_topics: int) -> np.ndarray:
    """The topics public knowledge alone gives over ``vocab_words`` (:func:`~dptopic.moments.public_groups.
    prior_topics`): the floor the report shows beside a model fitted with these vectors. Reads no document."""
    E, found, rank = vectors.for_words(list(vocab_words))
    return prior_topics(E, found, rank, int(n_topics))


def vectors_entry(vectors: PublicVectors, vocab_words, by_default: bool, route: str) -> dict:
    """The privacy report's and card's ``public_vectors`` entry: what was read in the clear, outside the epsilon."""
    entry = vectors.entry(vocab_words, default=by_default)
    how = {"spread": "the words outside the release are placed in the topics of their nearest released words",
           "groups": "the co-occurrence release also counts groups of the other words made by the vectors",
           "rectangular": "the co-occurrence release pairs the kept words with the most frequent words and with groups"
                          " of the other words made by the vectors (a rectangular release)"}[route]
    entry.update({"route": route, "summary": (
        f"public word vectors {vectors.name}" + (f" {vectors.version}" if vectors.version else "")
        + f" ({vectors.dimension} dimensions, sha256 {vectors.sha256[:12]}…), read in the clear and not covered by the"
        f" epsilon, {'used by default' if by_default else 'given'}: {how}; the guarantee does not depend on them")})
    return entry


def model_floor(model, top: int = 10) -> dict | None:
    """The floor a report shows beside a model fitted with public vectors: ``{"topics": [[word, ...], ...], "note"}``,
    the top ``top`` words of each topic the vectors alone give over the model's vocabulary (reading no document),
    or ``{"topics": None, "note"}`` saying why they cannot be shown (the vectors are not installed here, or not those
    of the fit); None for a model fitted without vectors."""
    entry = getattr(model, "public_vectors_", None)
    if not entry:
        return None
    what = f"{entry.get('name')} ({entry.get('dimension')} dimensions)"
    try:
        vectors = load_public_vectors(entry.get("name"))
    except DPTopicError as e:
        return {"topics": None, "note": f"the floor of {what} cannot be shown: {e}"}
    if vectors.sha256 != entry.get("sha256"):
        return {"topics": None, "note": f"the floor cannot be shown: the vectors installed are not the {what} the"
                                        " model read (their sha256 differs)"}
    words = list(model.vocabulary_.words)
    beta = floor_topics(vectors, words, int(np.asarray(model.components_).shape[0]))
    order = np.argsort(-beta, axis=1)[:, :int(top)]
    return {"topics": [[words[j] for j in row] for row in order],
            "note": f"topics from the public word vectors {what} alone: k-means clusters of the vocabulary's vectors,"
                    " each topic its words by the vectors' own frequency order. They read no document: the private"
                    " topics above are worth their budget where they do better than these."}
