"""``refit``: read a saved model's topics at another number of topics from its own releases (post-processing).

Only a trainer whose saved releases determine the topics at any K allows it: ``docdp-cooc``
(``DocDPCooccurrence.refit``). No document is read and no noise drawn; the card and the ledger stay as they are
(docs/budget.md)."""
from __future__ import annotations

from ..errors import DPTopicError
from ._common import add_model_arg, add_out_args, check_out, make_console, positive_int, print_topics
from ._flags import with_flag_names


@with_flag_names({"n_topics": "--topics"})
def cmd_refit(a):
    from ..models import load  # loads numba/numpy: not at the CLI's start-up

    if a.topics is None and not a.suggest:
        raise DPTopicError("refit needs --topics K (the number of topics to read), or --suggest.")
    model = load(a.model)
    if not callable(getattr(model, "refit", None)):
        raise DPTopicError(f"{a.model} holds a {type(model).__name__}, whose releases do not determine topics at another"
                           " K (only docdp-cooc's do): a new K needs a new fit, which spends budget again"
                           " (docs/budget.md).")
    console, topics = make_console(), a.topics
    if a.suggest:
        from ..models.cooc_refit import suggest_n_topics  # loads numba/numpy: not at the CLI's start-up

        s = suggest_n_topics(model)
        console.print(f"from the releases alone (free): {s['outliers']} eigenvalue(s) of the co-occurrence release"
                      " stand above its noise; supported topics at each K (each above the noise of the release and"
                      " closer to what the release shows of it than a single word-frequency topic is): "
                      + ", ".join(f"K={k}: {c}" for k, c in s["supported"].items()))
        if not any(s["supported"].values()):
            console.print("no topic at any K stands above the noise and beats a single word-frequency topic: the"
                          " release supports none (more documents or a larger epsilon would)")
        console.print(f"suggested number of topics: [bold]{s['n_topics']}[/]")
        topics = s["n_topics"] if topics is None else topics
    check_out(a)
    model.refit(n_topics=topics)
    print_topics(model, 10, console=console)
    out = model.save(a.out)
    console.print(f"refitted at K = {topics} from the saved releases (post-processing: nothing spent, the card and"
                  f" the ledger unchanged); model written to [bold]{out}[/]")


def register(sub) -> None:
    p = sub.add_parser("refit", help="read a saved docdp-cooc model's topics at another K from its releases (free)",
                       description="Read the topics of a saved model at another number of topics from the noisy"
                                   " releases it saved: post-processing, nothing spent (docs/budget.md).")
    add_model_arg(p, "a saved docdp-cooc model folder")
    p.add_argument("--topics", type=positive_int, default=None, metavar="K", help="the number of topics to read")
    p.add_argument("--suggest", action="store_true",
                   help="choose K from the releases alone (the support test) and print each candidate's supported"
                        " topics; with --topics, only print")
    add_out_args(p, "runs/refit")
    p.set_defaults(func=cmd_refit)
