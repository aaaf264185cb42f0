"""``evaluate`` and ``topics``: a saved model's figures on a corpus, its topics and privacy card."""
from __future__ import annotations

import json
import sys

from ..models import load
from ..reporting import export
from ..reporting.export import topics_csv, topics_document
from ..reporting.page import evaluation_figures
from ..reporting.terminal import esc, make_console, print_privacy
from ._common import print_topics, refuse_show_unsupported
from ._flags import with_flag_names
from ._run_common import load_corpus

# how topics names the parameters of the topics' documents (reporting.export.topics_document, topics_csv)
TOPICS_FLAGS = {"show_unsupported": "--show-unsupported", "model": "--model", "format": "--format"}


@with_flag_names({"top_n": "--top-n", "window": "--window", "seed": "--seed", "mode": "--mode"})
def cmd_evaluate(a):
    model = load(a.model)
    # the model's vocabulary, never one built from the test file (its words outside a top-N cut would vanish); text is
    # only tokenised, with the vocabulary's own case (docs/preprocessing.md)
    corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, None, vocabulary=model.vocabulary_, into_model=True,
                         tokenizer=getattr(model, "tokenizer_", None))
    # a private model's figures on the documents of --corpus lie outside its guarantee unless that corpus is public
    # (--reference-public, as for report)
    q = evaluation_figures(model, corpus, top_n=a.top_n, window=a.window, mode=a.mode, seed=a.seed,
                           reference_name=str(a.corpus), compare=None if a.compare_to is None else load(a.compare_to),
                           compare_name=a.compare_to, corpus_public=a.corpus_public,
                           names={"corpus": "--corpus", "corpus_public": "--reference-public"})
    if a.json:
        print(json.dumps(q, indent=2))
        return
    print_quality(q, make_console(), top_n=min(a.top_n, len(model.vocabulary_)), asked_top_n=a.top_n,
                  vocab_size=len(model.vocabulary_), mode=a.mode, compare_to=a.compare_to,
                  umass_defined=hasattr(model, "coherence"), private="note" in q)


def cmd_topics(a):
    model = load(a.model)
    if a.show_unsupported:
        refuse_show_unsupported(model, a.model)
    if a.format == "table":
        print_topics(model, a.n, show_unsupported=a.show_unsupported)
        print_privacy(model.privacy_)
        return

    if a.format == "json":
        print(json.dumps(topics_document(model, a.n, a.model, a.show_unsupported, names=TOPICS_FLAGS), indent=2))
        return
    table, notes = topics_csv(model, a.n, a.model, a.show_unsupported, names=TOPICS_FLAGS)
    for line in notes:
        print(line, file=sys.stderr)
    print(table, end="")


def privacy_card_line(model, path) -> str:
    """One line pointing a CSV's reader to the model's privacy card
    (:func:`dptopic.reporting.export.privacy_card_line`)."""
    return export.privacy_card_line(model, path, TOPICS_FLAGS)


def print_quality(q: dict, console, *, top_n: int, asked_top_n: int, vocab_size: int, mode: str, compare_to=None,
                  umass_defined: bool = True, private: bool = False) -> None:
    """Print ``q`` (``topic_quality``'s figures with ``perplexity``, ``umass_mimno_sum`` and, against
    ``compare_to``, ``match``): ``top_n`` the words read (``asked_top_n`` capped at the model's ``vocab_size``);
    ``umass_defined``: the model has Mimno's UMass; ``private``: the figures read private documents (``q["note"]``
    says so)."""
    if top_n < asked_top_n:
        console.print(f"--top-n {asked_top_n} is more than the model's {vocab_size} words: the top {top_n} are used")
    console.print(f"reference: {q['reference']} (read in the model's vocabulary)")
    console.print(f"perplexity ({mode}): {q['perplexity']:.2f}")
    console.print(f"NPMI (top {top_n}, {q['npmi_reference']}): {q['npmi']:.4f}")
    console.print(f"C_v (top {top_n}, {q['c_v_reference']}): "
                  + ("undefined (no topic has 2 top words in the reference)" if q["c_v"] is None
                     else f"{q['c_v']:.4f}"))
    console.print(f"top words {q['top_words']}: NPMI, C_v, diversity and UMass read them in that order")
    console.print(f"topic diversity (unique share of the top 25 words): {q['diversity']:.3f}")
    console.print(f"UMass (top {top_n}), mean over word pairs as gensim reports it: {q['umass_pairwise_mean']:.4f}")
    if q["umass_mimno_sum"] is not None:
        console.print(f"UMass (top {top_n}), sum over word pairs as Mimno et al. define it: {q['umass_mimno_sum']:.4f}")
    elif umass_defined:
        console.print(f"UMass (top {top_n}), sum over word pairs as Mimno et al. define it: undefined (every topic has"
                      " a ranked top word in no reference document)")
    if "absent_top_words" in q:
        console.print(f"[yellow]note[/]: {esc(q['absent_top_words'])}", markup=True)
    if "match" in q:
        m = q["match"]
        console.print(f"match to the topics of {compare_to}: {m['match']:.3f} (mean cosine of {m['matched']}"
                      f" Hungarian-matched topic pairs over {m['shared_words']} shared words; 1 = the same topics,"
                      " random topics near 0; reads only the two models)")
        if "note" in m:
            console.print(f"[yellow]match: {esc(m['note'])}[/]", markup=True)
    if private:
        console.print(f"[yellow]{esc(q['note'])}[/]", markup=True)


