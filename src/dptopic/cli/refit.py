"""``refit``: read a saved model's topics at another number of topics from its own releases (post-processing).

Only a trainer whose saved releases determine the topics at any K allows it: ``docdp-cooc``
(``DocDPCooccurrence.refit``). No document is read and no noise drawn; the card and the ledger stay as they are
(docs/budget.md)."""
from __future__ import annotations

from ..errors import DPTopicError
from ..models import load
from ..models.registry import trainer_of
from ..moments.refit import suggest_n_topics
from ..reporting.terminal import esc, make_console
from ._common import print_topics
from ._flags import with_flag_names
from ._run_common import check_out


@with_flag_names({"n_topics": "--topics"})
def cmd_refit(a):
    if a.topics is None and not a.suggest:
        raise DPTopicError("refit needs --topics K (the number of topics to read), or --suggest.")
    model = load(a.model)
    if refit_refusal(a.model, model) is not None:
        raise DPTopicError(refit_refusal(a.model, model))
    console, topics = make_console(), a.topics
    if a.suggest:

        s = suggest_n_topics(model)
        console.print(f"from the releases alone (free): {s['outliers']} eigenvalue(s) of the co-occurrence release"
                      " stand above its noise; supported topics at each K (each above the noise of the release and"
                      " closer to what the release shows of it than a single word-frequency topic is): "
                      + ", ".join(f"K={k}: {c}" for k, c in s["supported"].items()))
        if not any(s["supported"].values()):
            console.print("no topic at any K stands above the noise and beats a single word-frequency topic: the"
                          " release supports none (more documents or a larger epsilon would)")
        console.print(f"suggested number of topics: [bold]{s['n_topics']}[/]", markup=True)
        topics = s["n_topics"] if topics is None else topics
    check_out(a)
    model.refit(n_topics=topics)
    print_topics(model, 10, console=console)
    console.print(f"refitted at K = {topics} from the saved releases (post-processing: nothing spent, the card and the"
                  f" ledger unchanged); model written to [bold]{esc(model.save(a.out))}[/]", markup=True)


def refit_refusal(path, model) -> str | None:
    """Why ``refit`` cannot read ``model``'s topics at another K, and what gives them instead; None when it can."""
    entry, name = trainer_of(model), f"{path!r} holds a {type(model).__name__} model"
    if entry is not None and entry.reads == "reports":
        return (f"{name} trained on randomized reports, which are the release: train again on the same reports with"
                f" --topics K (dptopic train --algorithm {entry.name} --reports FILE --topics K), which spends nothing"
                " more (docs/budget.md).")
    if not model.is_private:
        return f"{name}, which is not private (no budget is involved): train it again with --topics K."
    if not callable(getattr(model, "refit", None)):
        return (f"{name}, whose releases do not determine topics at another K (only docdp-cooc's do): a new K needs a"
                " new fit, which spends budget again; to choose K privately, search the candidates once (dptopic"
                " search, or RandomStoppingSearch in Python; docs/budget.md).")
    if "public_input" in (getattr(model, "privacy_", None) or {}):
        return (f"{name} trained with --public-corpus: its topics also read the public documents, and refit reads the"
                " releases alone; train again with --public-corpus FILE --topics K.")
    return None


