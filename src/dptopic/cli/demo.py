"""``demo``: the main job on the demo corpus, document-level DP first, then word-level HDP-LDA beside a non-private
reference, each model trained by :func:`dptopic.train` and printed as it goes, and the figures
(:mod:`dptopic.reporting.demo_figures`)."""
from __future__ import annotations

import warnings

from ..accounting.card import epsilon_text
from ..corpus.corpus import NO_CAP
from ..datasets import load_corpus
from ..models import HDPLDA, LDA
from ..reporting.demo_figures import check_figures_out, write_demo_figures
from ..reporting.terminal import esc, make_console, print_privacy
from ..training import train
from ..training.reference import nonprivate_reference
from ._common import print_topics
from ._flags import with_flag_names
from ._run_common import check_out
from ._training_output import copies_note, print_metrics, print_training_step, word_level_guarantee


@with_flag_names({"n_topics": "--topics", "n_iter": "--iterations", "epsilon_laplace": "--epsilon-laplace",
                  "epsilon": "--epsilon-laplace", "epsilon_inherent": "--epsilon-inherent", "n_jobs": "--jobs",
                  "seed": "--seed"})
def cmd_demo(a):
    check_out(a, "-nonprivate", *(() if a.word_level_only else ("-document",)))
    check_figures_out(a.out, a.overwrite)
    run_demo(a, make_console())


DEMO_DOCUMENT_BUDGET = {"epsilon": 0.6, "delta": 5e-6, "epsilon_vocab": 0.4, "delta_vocab": 5e-6}
"""The demo's document-level run: epsilon = 1 and delta = 1e-5 in all, 0.4 of it for the vocabulary (DP set union),
the split ``dptopic recommend --unit document`` advises without a public word list."""


def run_demo(a, console) -> None:
    """The demo, printed on ``console``: first the guarantee a review board accepts (one paragraph protected, epsilon
    = 1 in all), then the word-level model, whose epsilon is per word; the models and figures saved. ``a``: the
    parsed flags."""
    document = None if a.word_level_only else _document_level(a, console)
    console.rule(("dptopic demo, part 2" if document else "dptopic demo") + ": HDP-LDA, word-level DP (epsilon per"
                 " word)")
    corpus = load_corpus("demo")
    # the private model takes fresh OS entropy unless a seed is given (then its report warns)
    private = HDPLDA(n_topics=a.topics, epsilon_laplace=a.epsilon_laplace, epsilon_inherent=a.epsilon_inherent,
                     beta=1.0, n_iter=a.iterations, delta=1e-5, seed=a.seed, n_jobs=a.jobs, verbose=0 if a.quiet else 1)
    baseline = LDA(n_topics=a.topics, n_iter=a.iterations, seed=a.seed, n_jobs=a.jobs,
                   verbose=0 if a.quiet else 1)
    nonprivate = str(a.out).rstrip("/\\") + "-nonprivate"
    with warnings.catch_warnings():     # the paragraphs part 1 read: said once below, for the two models together
        if document is not None:
            for text in (r".*already used by an earlier private fit", r".*trained a private model in this process"):
                warnings.filterwarnings("ignore", text)
        mine = train(corpus, model=private, test_size=0.2, out=a.out, overwrite=a.overwrite,
                     save_metrics=a.save_metrics,
                     callback=lambda step, res: print_training_step(step, res, console, save_metrics=a.save_metrics))
        console.print("non-private reference: LDA on the same split")
        ref = train(corpus, model=baseline, test_size=0.2, split_as=private, out=nonprivate, overwrite=a.overwrite)
    print_topics(private, 8, max_topics=a.show_topics, console=console)
    print_metrics(private, console, ref.metrics, saved=a.save_metrics)
    print_privacy(private.privacy_, console)
    console.print(word_level_guarantee(private.privacy_, None if document is None else document[1].privacy_['epsilon']),
                  markup=True)
    out = mine.path
    console.print(f"word-level private model written to [bold]{esc(out)}[/] (non-private reference beside it, suffix"
                  " -nonprivate)", markup=True)
    if document is not None:
        console.print("[yellow]both models read the same paragraphs: each card covers its own model; published"
                      " together, their guarantees compose (docs/privacy.md)[/]", markup=True)
    shown, lead = (out, private) if document is None else document
    marks = {"word": float(private.privacy_["epsilon"]),
             **({} if document is None else {"document": float(document[1].privacy_["epsilon"])})}
    figures = write_demo_figures(a.out, lead, marks)
    console.print(f"figures: [bold]{esc(figures[0])}[/] (the top words of {type(lead).__name__}'s topics) and [bold]"
                  f"{esc(figures[1])}[/] (topic quality against epsilon, as the shipped utility table measured it)", markup=True)
    console.print(f"next: [bold]dptopic report --model {esc(shown)} --out demo.html[/] (the topics and the privacy card"
                  " as a page a review board can file), [bold]dptopic topics --model " f"{esc(shown)}[/], or train on your"
                  " own text: dptopic train --help", markup=True)


def _document_level(a, console):
    """The demo's first part: State of the Union paragraphs under the guarantee a review board asks for, one whole
    paragraph protected at epsilon = 1 in all, the words chosen privately inside it (``dptopic train --unit document
    --private-vocabulary``, through :func:`dptopic.train`); its NPMI is read beside non-private LDA on the same words
    and split. Returns the folder the model was saved to and the model."""
    b = DEMO_DOCUMENT_BUDGET
    total_eps, total_delta = b["epsilon"] + b["epsilon_vocab"], b["delta"] + b["delta_vocab"]
    console.rule(f"dptopic demo, part 1: document-level DP: epsilon = {total_eps:g} per paragraph in all")
    full = load_corpus("demo", max_vocab=NO_CAP, min_df=1)     # every word: DP set union chooses them

    def say(step, res):
        if step == "split":
            copies_note(res, console)
            console.print(f"[bold]vocabulary[/]: {res.corpus.vocab_size} words chosen by DP set union (eps_V ="
                          f" {b['epsilon_vocab']:g}, delta_V = {b['delta_vocab']:g}), then {type(res.model).__name__}"
                          f" (eps = {b['epsilon']:g}, delta = {b['delta']:g}): {total_eps:g} and {total_delta:g} in all"
                          " (docs/choosing_a_guarantee.md)", markup=True)

    # the words are chosen from the paragraphs by DP set union inside the budget; private noise: fresh OS entropy
    # unless a seed is given (tests only)
    with warnings.catch_warnings():     # said once below, for the two models together
        warnings.filterwarnings("ignore", r".*already used by an earlier private fit")
        res = train(full, unit="document", epsilon=b["epsilon"], delta=b["delta"], n_topics=a.topics, n_jobs=a.jobs,
                    seed=a.seed, private_vocabulary=(b["epsilon_vocab"], b["delta_vocab"]), test_size=0.2,
                    metrics="coherence", callback=say, out=str(a.out).rstrip("/\\") + "-document",
                    overwrite=a.overwrite, save_metrics=a.save_metrics)
    model, mine = res.model, res.metrics
    ref = nonprivate_reference(res, n_iter=a.iterations, seed=a.seed, n_jobs=a.jobs)   # LDA on the same split
    print_topics(model, 8, max_topics=a.show_topics, console=console,
                 hint=f"'dptopic topics --model {str(a.out).rstrip('/')}-document --show-unsupported' shows them")
    console.print(f"[bold]held-out NPMI[/] (top 10, boolean documents): {mine['npmi_top10']:.3f}, ratio"
                  f" {mine['npmi_top10'] / ref['npmi_top10']:.2f} to non-private LDA on the same words and split"
                  f" ({ref['npmi_top10']:.3f}, {a.iterations} sweep{'' if a.iterations == 1 else 's'})   [bold]topic"
                  " diversity[/] (top 25):"
                  f" {mine['topic_diversity_top25']:.3f} (LDA {ref['topic_diversity_top25']:.3f})", markup=True)
    console.print("[yellow]NPMI is computed on held-out paragraphs of the private corpus: outside the guarantee"
                  " (diversity reads only the released topics);[/] " + (
                      "saved in model.json, labelled as such." if a.save_metrics else "not saved."), markup=True)
    rep = model.privacy_
    console.print(f"[bold]GUARANTEE[/]: epsilon = {epsilon_text(rep['epsilon'])} at delta = {rep['delta']:g} per"
                  f" {rep['unit']} (one paragraph added or removed), the choice of the words included", markup=True)
    out = res.path
    console.print(f"document-level model written to [bold]{esc(out)}[/] (its whole privacy card: dptopic topics --model"
                  f" {esc(out)})", markup=True)
    return out, model


