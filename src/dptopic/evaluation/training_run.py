"""The metrics a training run records (``model.metrics_``): the model's figures on the held-out documents."""
from __future__ import annotations

import numpy as np

from ..errors import DPTopicError
from .topic_quality import npmi_coherence, quiet_absent_words, topic_diversity

TOP_WORDS = 10          # the top words NPMI and UMass score each topic by
DIVERSITY_WORDS = 25    # the top words topic diversity counts

STYLES = ("gibbs", "variational")


def npmi_and_diversity(model, test) -> dict:
    """``npmi_top10`` (NPMI of each topic's top 10 words on the held-out documents) and ``topic_diversity_top25``
    (reads only the released topics): the figures to read beside epsilon, of the top words in the model's display
    order (``topic_quality.top_words``)."""
    top = min(TOP_WORDS, len(model.vocabulary_))
    return {"npmi_top10": npmi_coherence(model, test, top) if top >= 2 else float("nan"),
            "topic_diversity_top25": topic_diversity(model, DIVERSITY_WORDS)}


def training_run_metrics(model, train, test, style: str = "gibbs") -> dict:
    """The metrics a training run of ``model`` (fitted on ``train``) records on the held-out documents ``test``;
    ``{}`` when nothing is held out (``test`` None).

    ``style="gibbs"``: perplexity in both modes (``perplexity_completion``, ``perplexity_paper``) and the mean of
    Mimno's UMass over the topics whose top 10 words all occur in ``test`` (``umass_coherence_top10``; with
    ``umass_topics_scored`` when some do not). ``style="variational"`` (the SVI and document-level trainers): the
    model's own perplexity (``perplexity_bound``). Both: ``n_train_docs``, ``n_test_docs`` and
    :func:`npmi_and_diversity`.

    Under a private model every figure that reads ``test`` is computed from private documents: outside the guarantee
    (topic diversity reads only the released topics).
    """
    if style not in STYLES:
        raise DPTopicError(f"invalid style={style!r}: give 'gibbs' or 'variational'.")
    if test is None:
        return {}
    sizes = {"n_train_docs": train.n_docs, "n_test_docs": test.n_docs}
    if style == "variational":
        return {"perplexity_bound": model.perplexity(test), **sizes, **npmi_and_diversity(model, test)}
    ppl_c = model.perplexity(test, mode="completion")
    ppl_p = model.perplexity(test, mode="paper")
    # a small held-out split may lack some top words: those topics have no UMass, and the figure says over how many
    with quiet_absent_words():
        per = np.asarray(model.coherence(test, top_n=min(TOP_WORDS, len(model.vocabulary_)), per_topic=True),
                         dtype=float)
    scored = int(np.isfinite(per).sum())
    coh = float(np.nanmean(per)) if scored else float("nan")
    return {"perplexity_completion": ppl_c, "perplexity_paper": ppl_p, "umass_coherence_top10": coh,
            **({} if scored == len(per) else {"umass_topics_scored": scored}), **sizes,
            **npmi_and_diversity(model, test)}
