"""A training run as terminal text: the held-out figures (outside the guarantee where a private model's), the notes of
each step of :func:`dptopic.train` and what it returns (what ``dptopic train`` and ``dptopic demo`` print).
"""
from __future__ import annotations

import math
from types import SimpleNamespace

from ..accounting.card import epsilon_text
from ..models import CDPLDA, HDPLDA
from ..models.registry import trainer_of
from ..reporting.terminal import esc, print_privacy, styled
from ..training.by_unit import SPLIT_NAMES, split_by
from ..training.reference import nonprivate_reference, reference_too_large
from ._common import print_topics

_SAVED = {True: "saved in model.json, labelled as such.",
          False: "not saved (pass --save-metrics to save them, labelled as such)."}



def corpus_line(corpus, train, test, private: bool, word_level: bool = False, saved: bool = False,
                split: str | None = None):
    """The corpus summary printed before training (``test`` None: no held-out part); for a private trainer its exact
    sizes are labelled as what
    they are: under word-level DP alone public (a replacement changes neither; model.json keeps them), otherwise
    statistics of the private corpus that the guarantee does not cover (printed, saved only with the metrics that
    ``--save-metrics`` asks for: ``saved``)."""
    line = (f"[bold]corpus[/]: {corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size}"
            f" ({corpus.n_empty_dropped} empty documents dropped); "
            + (f"train {train.n_docs} / test {test.n_docs}" + (f" ({SPLIT_NAMES[split]}: compare held-out figures"
                                                                 " only between runs split alike)" if split else "")
               if test is not None else
               f"train on all {train.n_docs} (no held-out part, so no held-out evaluation: --test-size 0, the"
               " default with --unit user; run 'dptopic evaluate' on documents kept aside)"))
    if private and word_level:
        line += " [yellow](sizes are public under word-level DP: a word replacement changes neither)[/]"
    elif private:
        line += (" [yellow](exact sizes of the private corpus: outside the guarantee; "
                 + ("its document counts are saved with the metrics, as --save-metrics asks)[/]" if saved else
                    "shown here, not saved)[/]"))
    return styled(line)


def umass_text(v) -> str:
    """Mimno's UMass sum for the terminal: "undefined" when every topic has a ranked top word in no held-out
    document (the mean over the others otherwise)."""
    return "undefined (top words absent from the held-out documents)" if v is None or math.isnan(v) else f"{v:.3f}"


def print_metrics(model, console, baseline=None, saved=True) -> None:
    """The held-out figures of a Gibbs trainer (``model.metrics_``), beside a non-private ``baseline``'s."""
    m = model.metrics_
    console.print(f"[bold]held-out NPMI[/] (top 10, boolean documents): {m['npmi_top10']:.3f}   [bold]topic"
                  f" diversity[/] (top 25): {m['topic_diversity_top25']:.3f}", markup=True)
    console.print(f"[bold]held-out perplexity[/]: {m['perplexity_completion']:.1f} (document completion), "
                  f"{m['perplexity_paper']:.1f} (paper mode)   [bold]held-out UMass coherence[/] (top 10, Mimno's"
                  f" sum): {umass_text(m['umass_coherence_top10'])}"
                  + (f" (over {m['umass_topics_scored']} of {model.n_topics} topics: the others' top words are absent"
                     " from the held-out documents)" if "umass_topics_scored" in m and m["umass_topics_scored"] else ""), markup=True)
    if model.is_private:
        console.print("[yellow]NPMI, perplexity and UMass are computed on held-out documents of the private corpus:"
                      " outside the guarantee (diversity reads only the released topics);[/] " + _SAVED[bool(saved)], markup=True)
    if baseline is not None:
        console.print(f"[bold]non-private reference[/]: NPMI {baseline['npmi_top10']:.3f} (ratio"
                      f" {m['npmi_top10'] / baseline['npmi_top10']:.2f}), diversity"
                      f" {baseline['topic_diversity_top25']:.3f}, perplexity {baseline['perplexity_completion']:.1f}"
                      f" (completion), UMass {umass_text(baseline['umass_coherence_top10'])}"
                      + _reference_label(model, baseline), markup=True)


def _reference_label(model, baseline) -> str:
    """What the reference is, said after its figures where :func:`dptopic.training.reference.nonprivate_reference`
    computed it: LDA on the same split, read in the clear (outside the guarantee, not saved)."""
    if "n_iter" not in baseline:
        return ""
    return (f" (LDA, {baseline['n_iter']} sweeps, on the same split"
            + ("; [yellow]outside the guarantee[/]: it reads the private documents in the clear; not saved)"
               if model.is_private else ")"))


def print_variational_metrics(model, console, saved: bool, baseline=None) -> None:
    """The held-out figures of the variational and document-level trainers (``model.metrics_``), a private model's
    labelled outside the guarantee, beside a non-private ``baseline``'s (the same figures,
    :func:`dptopic.training.reference.nonprivate_reference`)."""
    m = model.metrics_
    console.print(f"[bold]held-out NPMI[/] (top 10, boolean documents): {m['npmi_top10']:.3f}   [bold]topic"
                  f" diversity[/] (top 25): {m['topic_diversity_top25']:.3f}", markup=True)
    # the mode named, as 'dptopic evaluate --mode paper' computes it for this model
    bound = hasattr(model, "lambda_")
    mode = ("paper mode: the variational bound with the topics fixed, Hoffman et al. 2010 eq. 16" if bound
            else "paper mode: fold-in Gibbs sampling under the released topics")
    console.print(f"[bold]held-out per-word perplexity{' bound' if bound else ''}[/]: {m['perplexity_bound']:.1f}"
                  f" ({mode}, as 'dptopic evaluate --mode paper'"
                  + ("; [yellow]outside the guarantee[/])" if model.is_private else ")"), markup=True)
    if model.is_private:    # diversity reads only the released topics; NPMI and perplexity read private documents
        console.print("[yellow]the NPMI and perplexity are computed on held-out documents of the private corpus:"
                      " outside the guarantee;[/] " + _SAVED[bool(saved)], markup=True)
    if baseline is not None:
        ratio = (f" (ratio {m['npmi_top10'] / baseline['npmi_top10']:.2f})" if baseline["npmi_top10"] > 0 else "")
        console.print(f"[bold]non-private reference[/]: perplexity {baseline['perplexity_bound']:.1f} ({mode}), NPMI"
                      f" {baseline['npmi_top10']:.3f}{ratio}, diversity {baseline['topic_diversity_top25']:.3f}"
                      + _reference_label(model, baseline), markup=True)


def print_variational_privacy(rep: dict, console) -> None:
    """DP-SVI's card, then its noise and the other accountants' figures for the same noise."""
    print_privacy(rep, console)
    if not rep.get("private"):
        return
    p = rep["parameters"]
    console.print(f"noise multiplier {p['noise_multiplier']:.4g}, sampling rate {p['sampling_rate']:g},"
                  f" {p['steps']} steps, L2 sensitivity {p['l2_sensitivity']:g}")
    if "epsilon_moments_accountant" not in rep:
        return

    ma = rep.get("epsilon_moments_accountant_paper")
    sc = rep.get("epsilon_strong_composition")
    console.print("for comparison (same noise): moments accountant as in Park et al.'s code "
                  + ("n/a (sigma < 1 or q >= 1/(16 sigma))" if ma is None else f"eps = {epsilon_text(ma)}")
                  + f"; orders 1..64: eps = {epsilon_text(rep['epsilon_moments_accountant'])}; strong composition"
                  + " baseline: " + ("n/a" if sc is None else f"eps = {epsilon_text(sc)}"))
    og = rep.get("outside_guarantee", {})
    if og.get("clipped_fraction") is not None:
        console.print(f"clipped documents: {100 * og['clipped_fraction']:.1f}% (outside the guarantee: computed from"
                      " the private documents; not saved)")


def copies_note(result, console) -> None:
    """How many held-out documents were left out as copies of training documents (an exact count of the private
    corpus under a private model: labelled)."""
    if result.held_out_copies:
        console.print(f"held-out: {result.held_out_copies} of the {result.test.n_docs + result.held_out_copies}"
                      " held-out documents repeat a training document and are left out of the evaluation"
                      + (" [yellow](exact counts of the private corpus: outside the guarantee; shown here, not"
                         " saved)[/]" if result.model.is_private else ""), markup=True)


def _variational(model) -> bool:
    """Whether the model's held-out figures are the variational ones (svi, online-vb, the document-level trainers)."""
    t = trainer_of(model)
    return t is not None and (t.name in ("svi", "online-vb") or {"document", "user"} <= set(t.units))


def print_training_step(step: str, result, console, *, private_vocabulary=None, vocabulary_policy=None,
                        save_metrics: bool = False) -> None:
    """What a front door prints as :func:`dptopic.train` goes (its ``callback``): the private vocabulary, the
    corpus's sizes and split, the held-out copies, FedLDA's pad-length note."""
    model = result.model
    if step == "vocabulary" and result.vocabulary_event is not None:
        eps_v, delta_v = private_vocabulary
        console.print(f"[bold]private vocabulary[/]: {result.corpus.vocab_size} words by DP set union"
                      f" (eps_V={eps_v:g}, delta_V={delta_v:g}, {vocabulary_policy or 'gaussian'} policy)", markup=True)
    elif step == "split" and result.corpus is None:     # a shard folder
        s = result.train
        console.print(f"[bold]corpus[/]: {len(s.paths)} shards, {s.n_docs} documents, {s.n_tokens} tokens,"
                      f" V={s.vocab_size}; held-out evaluation skipped (run 'dptopic evaluate' on a test corpus)", markup=True)
    elif step == "split":
        # sizes are public under word-level DP, unless a private vocabulary (a document-level guarantee) is composed in
        word_level = isinstance(model, (HDPLDA, CDPLDA)) and private_vocabulary is None
        by = split_by(model)
        test = None if result.test is None else SimpleNamespace(n_docs=result.test.n_docs + result.held_out_copies)
        console.print(corpus_line(result.corpus, result.train, test, model.is_private, word_level,
                                  saved=bool(save_metrics),
                                  split=by if not _variational(model) or by == "person" else None), markup=True)
        copies_note(result, console)
    elif step == "pad_length":
        note = result.notes[-1]
        console.print("[bold yellow]note[/]:" + esc(note[len("note:"):]) if note.startswith("note:") else esc(note),
                      markup=True)


def _hdp_epsilon_line(model, console) -> None:
    """HDP-LDA: the total per word and its per-iteration component, said in one line (``--epsilon`` once meant
    eps_L)."""
    eps_l = getattr(model, "epsilon_laplace_", None)
    if eps_l is None or not isinstance(model.privacy_, dict) or model.privacy_.get("epsilon") is None:
        return

    console.print(f"[bold]hdp[/]: epsilon = {epsilon_text(model.privacy_['epsilon'])} per word in total"
                  f" (epsilon_laplace = {eps_l:g} per iteration)", markup=True)


def print_training_result(result, console, *, save_metrics: bool = False, show_unsupported: bool = False, seed=None,
                          n_jobs: int = 1) -> None:
    """The topics, the held-out metrics (outside the guarantee) beside a private model's non-private reference
    (:func:`~dptopic.training.reference.nonprivate_reference`: LDA on the same split, ``seed`` and ``n_jobs`` its
    own), the privacy card, where the model was saved."""
    model = result.model
    print_topics(model, 10, console=console, show_unsupported=show_unsupported)
    variational = _variational(model)
    saved = save_metrics or not model.is_private
    if result.metrics:
        # a private model's figures beside non-private LDA's on the same split, by the same function, as the demo's
        baseline = nonprivate_reference(result, seed=seed, n_jobs=n_jobs) if model.is_private else None
        (print_variational_metrics if variational else print_metrics)(model, console, saved=saved, baseline=baseline)
        skipped = reference_too_large(result) if model.is_private else None
        if skipped and result.test is not None:
            console.print(f"[bold]non-private reference[/]: {skipped}; 'dptopic train --algorithm lda' on the same"
                          " corpus gives it", markup=True)
    _hdp_epsilon_line(model, console)
    (print_variational_privacy if variational else print_privacy)(model.privacy_, console)
    if save_metrics and not model.is_private:
        console.print("note: --save-metrics changes nothing here: a model trained without privacy always saves its"
                      " metrics.")
    console.print(f"model written to [bold]{esc(result.path)}[/]", markup=True)


def word_level_guarantee(rep: dict, document_epsilon=None) -> str:
    """The word-level model's guarantee in one sentence, with its per-paragraph figure (group privacy: the card's
    examples, no statistic of the paragraphs) and, beside a document-level model's ``document_epsilon``, how the two
    compare."""
    per = rep.get("per_document") if isinstance(rep.get("per_document"), dict) else {}
    ex = per.get("examples") if isinstance(per.get("examples"), dict) else {}
    shown = ", ".join(f"{e:,.0f} for a paragraph of {L} words" for L, e in list(ex.items())[:2])
    pure = per.get("epsilon_per_word")
    return (f"[bold]GUARANTEE[/] (word level): epsilon = {epsilon_text(rep['epsilon'])} at delta = {rep['delta']:g} per"
            " word (one word replaced); per paragraph, by group privacy, L times "
            + (f"{epsilon_text(pure)} (pure DP, delta = 0)" if pure else "that")
            + (f": {shown}" if shown else "")
            + (f": far weaker than the document-level model above (epsilon ="
               f" {epsilon_text(document_epsilon)} per whole paragraph)" if document_epsilon is not None else ""))


def print_reports(reports, console) -> None:
    """What a local trainer reads: the reports' number, their vocabulary's size and the randomizer's epsilon."""
    if hasattr(reports, "epsilon_word"):
        console.print(f"[bold]reports[/]: {reports.n_reports} reports, V={reports.vocab_size}, f={reports.f:.6g}"
                      f" (eps_word={epsilon_text(reports.epsilon_word)})", markup=True)
    else:
        console.print(f"[bold]reports[/]: {reports.n_reports} document-level reports, V={reports.vocab_size},"
                      f" eps_doc={epsilon_text(reports.epsilon)}", markup=True)


def print_local_result(result, console, *, batch_size=None, seeded: bool = False) -> None:
    """A model trained on local reports (LP-LDA, OLP-LDA, LocalDocumentLDA): its stream of mini-batches (OLP-LDA,
    ``batch_size``), topics, card, guarantee per word and per document, and where it was saved."""
    model, p = result.model, result.model.privacy_
    if batch_size is not None:
        console.print(f"[bold]stream[/]: {model.n_batches_} mini-batches of up to {batch_size} reports", markup=True)
    print_topics(model, 10, console=console)
    print_privacy(p, console)
    if "epsilon_word" not in p:     # document-level reports
        console.print(f"eps_doc = {epsilon_text(p['epsilon_doc'])} for any two documents of a contributor; every"
                      " server step is post-processing.")
    else:
        console.print(f"eps_word = {epsilon_text(p['epsilon_word'])} ({p['epsilon_word_relation']}); eps_doc ="
                      f" {epsilon_text(p['epsilon_doc'])} (any two documents). Server steps are post-processing.")
    if seeded:
        console.print("[yellow]note[/]: --seed only fixes the server's post-processing; it is not saved.", markup=True)
    console.print(f"model written to [bold]{esc(result.path)}[/]", markup=True)
