"""A saved model's topic quality on a corpus as terminal text (``dptopic evaluate``): the figures of
:func:`dptopic.evaluation.topic_quality`, its perplexity and, against another model, the topics' match."""
from __future__ import annotations

from .terminal import esc


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
                  + ("undefined (no topic has 2 top words in the reference)" if q["c_v"] is None else f"{q['c_v']:.4f}"))
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
