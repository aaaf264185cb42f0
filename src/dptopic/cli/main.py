"""The ``dptopic`` command line.

Every user error ends in one line on stderr (``error: ...``) and exit status 2.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from ..errors import DPTopicError

FORMATS = ("auto", "uci", "jsonl", "csv", "dir", "text", "npz")


# ----------------------------------------------------------------- helpers
def _console(stderr=False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _float_arg(check, what):
    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not a number") from None
        if not check(v):
            raise argparse.ArgumentTypeError(f"{what}, got {s}")
        return v

    return parse


positive_float = _float_arg(lambda v: v > 0 and math.isfinite(v), "must be a finite number > 0")
unit_interval = _float_arg(lambda v: 0 < v < 1, "must lie in (0, 1)")


def positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {s}")
    return v


def load_corpus(spec: str | None, fmt: str = "auto", vocab: str | None = None, text_field: str = "text",
                label_field: str | None = None, max_vocab: int | None = 1000, min_df: int = 1):
    """Resolve ``--corpus``: ``demo``/``sotu``, ``20newsgroups``, or a path in one of the formats."""
    from ..corpus import Corpus
    from ..datasets import load_20newsgroups, load_sotu

    if spec in (None, "demo", "sotu"):
        return load_sotu(max_vocab=max_vocab)
    if spec == "20newsgroups":
        return load_20newsgroups("train", max_vocab=max_vocab)
    p = Path(spec)
    if not p.exists():
        raise DPTopicError(f"corpus {spec!r} not found: give 'demo', '20newsgroups' or an existing path.")
    if fmt == "auto":
        name = p.name.lower()
        fmt = ("dir" if p.is_dir() else "npz" if name.endswith(".npz") else "jsonl" if ".jsonl" in name
               else "csv" if ".csv" in name else "uci" if name.startswith("docword") else "text")
    kw = dict(max_vocab=max_vocab, min_df=min_df)
    if fmt == "npz":
        return Corpus.load(p)
    if fmt == "uci":
        if vocab is None:
            guess = p.with_name(p.name.replace("docword", "vocab").removesuffix(".gz"))
            if not guess.is_file():
                raise DPTopicError(f"UCI corpus needs its vocabulary file: pass --vocab (looked for {guess.name}).")
            vocab = guess
        c = Corpus.from_uci(p, vocab)
        return c.prune(max_vocab=max_vocab, min_df=min_df) if max_vocab else c
    if fmt == "jsonl":
        return Corpus.from_jsonl(p, text_field=text_field, label_field=label_field, **kw)
    if fmt == "csv":
        return Corpus.from_csv(p, text_column=text_field, label_column=label_field, **kw)
    if fmt == "dir":
        return Corpus.from_directory(p, **kw)
    lines = [ln for ln in p.read_text("utf-8", errors="replace").splitlines() if ln.strip()]
    return Corpus.from_texts(lines, **kw)


def _add_corpus_args(p, required=False):
    p.add_argument("--corpus", default=None, required=required,
                   help="'demo' (State of the Union paragraphs, default), '20newsgroups', or a path")
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help="input format (auto: by name; text = one document per line)")
    p.add_argument("--vocab", default=None, help="UCI vocab file (default: next to the docword file)")
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text")
    p.add_argument("--label-field", default=None, help="JSONL field / CSV column holding a label")
    p.add_argument("--max-vocab", type=positive_int, default=1000, help="keep the most frequent words (default 1000)")
    p.add_argument("--min-df", type=positive_int, default=1, help="minimum document frequency")


def _corpus_from_args(a):
    return load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, a.max_vocab, a.min_df)


def print_topics(model, n=10, max_topics=None, console=None):
    console = console or _console()
    from rich.table import Table

    t = Table(title=f"Top {n} words per topic", show_lines=False)
    t.add_column("topic", justify="right")
    t.add_column("words")
    for k, words in enumerate(model.topic_words(n)):
        if max_topics is not None and k >= max_topics:
            break
        t.add_row(str(k), " ".join(words))
    console.print(t)


def print_privacy(report: dict, console=None):
    console = console or _console()
    from rich.table import Table

    t = Table(title="Privacy report", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value")
    if not report.get("private"):
        t.add_row("private", "NO")
        for key in ("mode", "reason"):
            if key in report:
                t.add_row(key, str(report[key]))
        if "claimed_by_paper" in report:
            t.add_row("paper's claim (not proven)", f"eps = {report['claimed_by_paper']['epsilon']:.4g}")
        console.print(t)
        return
    t.add_row("private", "yes" + (" (partial: see scope)" if report.get("guarantee") == "partial" else ""))
    t.add_row("privacy unit", str(report.get("unit")))
    t.add_row("neighbouring relation", str(report.get("neighbouring_relation")))
    t.add_row("theorem", str(report.get("theorem")))
    if "epsilon_nominal" in report:
        t.add_row("eps, paper's nominal claim", f"{report['epsilon_nominal']:.4g}")
    if "epsilon_paper" in report:
        t.add_row("eps, paper (T(eps_L+eps_I))", f"{report['epsilon_paper']:.4g}")
    t.add_row("eps, basic composition (delta=0)", f"{report['epsilon_basic']:.4g}")
    t.add_row(f"eps, tight PLD (delta={report['delta']:g})", f"{report['epsilon_pld']:.4g}")
    t.add_row(f"eps, RDP cross-check (delta={report['delta']:g})", f"{report['epsilon_rdp']:.4g}")
    for key in ("parameters", "scope", "note"):
        if key in report:
            v = report[key]
            t.add_row(key, ", ".join(f"{k}={x:.4g}" if isinstance(x, float) else f"{k}={x}" for k, x in v.items())
                      if isinstance(v, dict) else str(v))
    t.add_row("noise", f"{report.get('noise')}{' (secure, CSPRNG)' if report.get('secure_noise') else ''}")
    console.print(t)


def _resolve_seed(a):
    """``--seed`` defaults to 0; ``--secure`` draws from the OS CSPRNG and refuses an explicit seed."""
    if getattr(a, "secure", False):
        if a.seed is not None:
            raise DPTopicError("--secure draws noise from the operating system's CSPRNG and refuses a seed: remove --seed.")
        return None
    return 0 if a.seed is None else a.seed


def _build_model(a, n_topics, n_iter, seed):
    from ..models import CDPLDA, HDPLDA, LDA, CDPLDAPlus

    common = dict(n_topics=n_topics, n_iter=n_iter, seed=seed, n_jobs=a.jobs, verbose=0 if a.quiet else 1)
    if a.alpha is not None:
        common["alpha"] = a.alpha
    if a.beta is not None:
        common["beta"] = a.beta
    algo = a.algorithm
    if algo == "lda":
        return LDA(**common)
    priv = dict(delta=a.delta, noise=a.noise, secure=a.secure)
    if algo in ("cdp", "cdp+"):
        cls = CDPLDAPlus if algo == "cdp+" else CDPLDA
        return cls(epsilon=a.epsilon if a.epsilon is not None else 1.0, **common, **priv)
    hdp_kw = dict(paper_literal=a.paper_literal, **priv)
    if a.clip is not None:
        hdp_kw["clip"] = a.clip
    else:
        hdp_kw["epsilon_inherent"] = a.epsilon_inherent
    if a.budget is not None:
        if a.clip is not None or a.no_noise:
            raise DPTopicError("--budget solves eps_L for a given --epsilon-inherent: drop --clip/--no-noise.")
        return HDPLDA.from_budget(a.budget, a.delta, n_iter, epsilon_inherent=a.epsilon_inherent,
                                  **{k: v for k, v in common.items() if k != "n_iter"},
                                  paper_literal=a.paper_literal, noise=a.noise, secure=a.secure)
    eps_l = None if a.no_noise else (a.epsilon if a.epsilon is not None else 1.0)
    return HDPLDA(epsilon_laplace=eps_l, **common, **hdp_kw)


def _train_eval_report(model, corpus, a, console):
    train, test = corpus.train_test_split(a.test_size, seed=0)  # the same split whatever the training seed
    console.print(f"[bold]corpus[/]: {corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size}"
                  f" ({corpus.n_empty_dropped} empty documents dropped); train {train.n_docs} / test {test.n_docs}")
    model.fit(train)
    ppl_c = model.perplexity(test, mode="completion")
    ppl_p = model.perplexity(test, mode="paper")
    coh = model.coherence(train, top_n=10)
    model.metrics_ = {"perplexity_completion": ppl_c, "perplexity_paper": ppl_p, "umass_coherence_top10": coh,
                      "n_train_docs": train.n_docs, "n_test_docs": test.n_docs}
    return train, test


def _print_metrics(model, console, baseline=None):
    m = model.metrics_
    console.print(f"[bold]held-out perplexity[/]: {m['perplexity_completion']:.1f} (document completion), "
                  f"{m['perplexity_paper']:.1f} (paper mode)   [bold]UMass coherence[/] (top 10): "
                  f"{m['umass_coherence_top10']:.3f}")
    if baseline is not None:
        console.print(f"[bold]non-private reference[/]: perplexity {baseline['perplexity_completion']:.1f} "
                      f"(completion), coherence {baseline['umass_coherence_top10']:.3f}")


# ---------------------------------------------------------------- commands
def cmd_train(a):
    console = _console()
    seed = _resolve_seed(a)
    corpus = _corpus_from_args(a)
    model = _build_model(a, a.topics, a.iterations, seed)
    _train_eval_report(model, corpus, a, console)
    print_topics(model, 10, console=console)
    _print_metrics(model, console)
    print_privacy(model.privacy_, console)
    out = model.save(a.out)
    console.print(f"model written to [bold]{out}[/]")


def cmd_demo(a):
    from ..models import HDPLDA, LDA

    console = _console()
    console.rule("dptopic demo: HDP-LDA on State of the Union paragraphs")
    corpus = load_corpus("demo")
    a.test_size = 0.2
    private = HDPLDA(n_topics=a.topics, epsilon_laplace=a.epsilon_laplace, epsilon_inherent=a.epsilon_inherent,
                     beta=1.0, n_iter=a.iterations, delta=1e-5, seed=a.seed, n_jobs=a.jobs, verbose=0 if a.quiet else 1)
    _train_eval_report(private, corpus, a, console)
    baseline = LDA(n_topics=a.topics, n_iter=a.iterations, seed=a.seed, n_jobs=a.jobs, verbose=0 if a.quiet else 1)
    _train_eval_report(baseline, corpus, a, console)
    print_topics(private, 8, max_topics=a.show_topics, console=console)
    _print_metrics(private, console, baseline.metrics_)
    print_privacy(private.privacy_, console)
    out = private.save(a.out)
    baseline.save(Path(a.out).with_name(Path(a.out).name + "-nonprivate"))
    console.print(f"private model written to [bold]{out}[/] (non-private reference beside it, suffix -nonprivate)")


def cmd_evaluate(a):
    from ..models import load

    console = _console()
    model = load(a.model)
    corpus = _corpus_from_args(a)
    ppl = model.perplexity(corpus, mode=a.mode, seed=a.seed)
    coh = model.coherence(corpus.restrict(model.vocabulary_), top_n=a.top_n)
    console.print(f"perplexity ({a.mode}): {ppl:.2f}")
    console.print(f"UMass coherence (top {a.top_n}): {coh:.4f}")


def cmd_topics(a):
    from ..models import load

    model = load(a.model)
    print_topics(model, a.n)
    print_privacy(model.privacy_)


def cmd_corpus_prepare(a):
    corpus = _corpus_from_args(a)
    out = corpus.save(a.out)
    _console().print(f"{corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size} "
                     f"({corpus.n_empty_dropped} empty dropped) written to {out}")


def cmd_privacy_inherent(a):
    import numpy as np

    from ..accounting import eps_related, eps_iter_static

    console = _console()
    n_tok = np.array([a.n_t, a.max_n_tprime], float)
    per = eps_iter_static(n_tok, a.beta, 0, cmax=a.cmax)
    console.print(f"Prop. 2, per related token and iteration: eps = 2 log(1 + 1/beta) = {eps_related(a.beta):.4f}")
    console.print(f"Thm 1 (static), per iteration: eps_i <= {per:.6g}")
    console.print(f"Thm 2 (static), over {a.iterations} iterations: eps <= {a.iterations * per:.6g}")
    console.print("[dim]These bounds use the private counts (spec A-02): monitoring numbers, not DP guarantees.[/]")


def cmd_privacy_hdp(a):
    from ..accounting import (hdp_clip_bound, hdp_epsilon_inherent, hdp_total_epsilon, solve_epsilon_laplace)

    console = _console()
    if (a.clip is None) == (a.epsilon_inherent is None):
        raise DPTopicError("give exactly one of --clip or --epsilon-inherent.")
    eps_i = a.epsilon_inherent if a.clip is None else hdp_epsilon_inherent(a.clip, a.beta)
    C = a.clip if a.clip is not None else hdp_clip_bound(a.epsilon_inherent, a.beta)
    console.print(f"beta={a.beta:g}: clip C = {C:.6g}  <->  eps_I = 2 log(C/beta + 1) = {eps_i:.6g} per iteration")
    if a.epsilon is not None:
        eps_l = solve_epsilon_laplace(a.epsilon, a.delta, a.iterations, eps_i)
        console.print(f"budget (eps={a.epsilon:g}, delta={a.delta:g}) over T={a.iterations}: largest eps_L = {eps_l:.6g}"
                      f" per iteration (tight PLD); paper's basic total T(eps_L+eps_I) = {a.iterations * (eps_l + eps_i):.6g}")
    elif a.epsilon_laplace is not None:
        tight = hdp_total_epsilon(a.epsilon_laplace, eps_i, a.iterations, a.delta, discretization=1e-4)
        console.print(f"T={a.iterations}, eps_L={a.epsilon_laplace:g}: basic eps = {a.iterations * (a.epsilon_laplace + eps_i):.6g},"
                      f" tight PLD eps({a.delta:g}) = {tight:.6g}")


def cmd_privacy_compose(a):
    from ..accounting import LaplaceEvent, PrivacyLedger, PureDPEvent

    led = PrivacyLedger(unit=a.unit)
    for eps, n in a.laplace or []:
        led.spend(LaplaceEvent(scale=1.0 / float(eps)), int(n))
    for eps, n in a.pure or []:
        led.spend(PureDPEvent(float(eps)), int(n))
    if led.n_events == 0:
        raise DPTopicError("nothing to compose: give --laplace EPS COUNT and/or --pure EPS COUNT.")
    rep = led.report(a.delta)
    _console().print(f"basic composition: eps = {rep['epsilon_basic']:.6g} (delta = 0)\n"
                     f"tight PLD:         eps = {rep['epsilon_pld']:.6g} (delta = {a.delta:g})\n"
                     f"RDP cross-check:   eps = {rep['epsilon_rdp']:.6g} (delta = {a.delta:g})")


def _experiment_corpora(name, max_vocab=1000):
    from ..datasets import load_20newsgroups

    if name == "20newsgroups":
        train = load_20newsgroups("train", max_vocab=max_vocab)
        test = load_20newsgroups("test", vocabulary=train.vocabulary)
        return train, test
    c = load_corpus(name)
    return c.train_test_split(0.2, seed=0)


def cmd_experiment(a):
    from .. import experiments

    console = _console()
    train, test = _experiment_corpora(a.corpus)
    if a.max_docs and train.n_docs > a.max_docs:
        train = train.subset(range(a.max_docs))
    seeds = list(range(a.seeds))
    out = Path(a.out)
    if a.which == "hdp-utility":
        s = experiments.hdp_utility(train, test, out, eps_grid=tuple(a.eps_grid), n_topics=a.topics,
                                    n_iter=a.iterations, seeds=seeds,
                                    progress=lambda n, e, sd: console.print(f"  {n} eps_L={e} seed={sd} done"))
        console.print(f"non-private {s['non_private']:.1f}, limited inherent {s['limited_inherent']:.1f}")
        for e, h, c in zip(s["eps_grid"], s["hdp"], s["cdp_plus"]):
            console.print(f"eps_L={e:g}: HDP-LDA {h:.1f}  CDP-LDA+ {c:.1f}")
        files = ["hdp_utility.csv", "hdp_utility.png", "hdp_utility_summary.json"]
    else:
        s = experiments.topic_attack_experiment(train, out, n_topics=a.topics, n_iter=a.iterations, seeds=seeds,
                                                n_targets=a.targets, progress=lambda n: console.print(f"  {n} done"))
        for n, v in s["final_p_true"].items():
            console.print(f"{n}: P(true word) after {a.iterations} iterations = {v:.4f}")
        files = ["topic_attack.csv", "topic_attack.png", "topic_attack_summary.json"]
    verdict = "has" if s["has_paper_shape"] else "does NOT have"
    console.print(f"The result {verdict} the paper's qualitative shape: {s['paper_shape_checks']}")
    console.print("written: " + ", ".join(str(out / f) for f in files))


# ------------------------------------------------------------------ parser
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="dptopic", description="Differentially private topic models (LDA) and auditing.")
    from .. import __version__

    ap.add_argument("--version", action="version", version=f"dptopic {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser("train", help="train a topic model, evaluate it and save it")
    _add_corpus_args(t)
    t.add_argument("--algorithm", choices=("lda", "cdp", "cdp+", "hdp"), default="lda")
    t.add_argument("--topics", type=positive_int, default=50)
    t.add_argument("--iterations", type=positive_int, default=200)
    t.add_argument("--seed", type=int, default=None, help="random seed (default 0; not allowed with --secure)")
    t.add_argument("--alpha", type=positive_float, default=None)
    t.add_argument("--beta", type=positive_float, default=None)
    t.add_argument("--epsilon", type=positive_float, default=None,
                   help="cdp/cdp+: the paper's eps; hdp: eps_L per iteration (default 1)")
    t.add_argument("--delta", type=unit_interval, default=1e-5, help="delta for the tight report (default 1e-5)")
    t.add_argument("--epsilon-inherent", type=positive_float, default=10.0, help="hdp: eps_I per iteration")
    t.add_argument("--clip", type=positive_float, default=None, help="hdp: clip bound C (instead of eps_I)")
    t.add_argument("--budget", type=positive_float, default=None,
                   help="hdp: total eps; eps_L is solved with the tight accountant")
    t.add_argument("--no-noise", action="store_true", help="hdp: 'limited inherent' (clipping only, not DP)")
    t.add_argument("--paper-literal", action="store_true", help="hdp: Algorithm 1 exactly as written (unsound)")
    t.add_argument("--noise", choices=("discrete", "continuous"), default="discrete")
    t.add_argument("--secure", action="store_true", help="CSPRNG exact noise via OpenDP (refuses --seed)")
    t.add_argument("--jobs", type=positive_int, default=1, help="threads (AD-LDA shards)")
    t.add_argument("--test-size", type=unit_interval, default=0.2)
    t.add_argument("--out", default="runs/model")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=cmd_train)

    d = sub.add_parser("demo", help="the main job: private HDP-LDA on the demo corpus, with a non-private reference")
    d.add_argument("--topics", type=positive_int, default=20)
    # 50 sweeps: half the word-level epsilon of 100 sweeps (531 vs 1053 by PLD) for +2% perplexity
    d.add_argument("--iterations", type=positive_int, default=50)
    d.add_argument("--epsilon-laplace", type=positive_float, default=1.0)
    d.add_argument("--epsilon-inherent", type=positive_float, default=10.0)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--jobs", type=positive_int, default=min(2, os.cpu_count() or 1))
    d.add_argument("--show-topics", type=positive_int, default=20)
    d.add_argument("--out", default="runs/demo")
    d.add_argument("--quiet", action="store_true")
    d.set_defaults(func=cmd_demo)

    e = sub.add_parser("evaluate", help="perplexity and coherence of a saved model on a corpus")
    e.add_argument("--model", required=True)
    _add_corpus_args(e)
    e.add_argument("--mode", choices=("paper", "completion"), default="completion")
    e.add_argument("--top-n", type=positive_int, default=10)
    e.add_argument("--seed", type=int, default=0)
    e.set_defaults(func=cmd_evaluate)

    tp = sub.add_parser("topics", help="show a saved model's topics and privacy report")
    tp.add_argument("--model", required=True)
    tp.add_argument("-n", type=positive_int, default=10)
    tp.set_defaults(func=cmd_topics)

    c = sub.add_parser("corpus", help="corpus tools")
    csub = c.add_subparsers(dest="corpus_command", required=True, metavar="ACTION")
    cp = csub.add_parser("prepare", help="load, preprocess and save a corpus (.npz)")
    _add_corpus_args(cp)
    cp.add_argument("--out", required=True)
    cp.set_defaults(func=cmd_corpus_prepare)

    pr = sub.add_parser("privacy", help="privacy calculators")
    psub = pr.add_subparsers(dest="privacy_command", required=True, metavar="CALCULATOR")
    pi = psub.add_parser("inherent", help="inherent privacy of plain CGS (Zhao et al. Prop. 2, Thm 1-2, static form)")
    pi.add_argument("--beta", type=positive_float, default=0.01)
    pi.add_argument("--n-t", type=positive_int, required=True, help="total count of the replaced word t")
    pi.add_argument("--max-n-tprime", type=positive_int, required=True, help="largest total count of any other word")
    pi.add_argument("--cmax", type=positive_float, default=None, help="upper bound on max n_k^t' (default: max count)")
    pi.add_argument("--iterations", type=positive_int, default=1)
    pi.set_defaults(func=cmd_privacy_inherent)
    ph = psub.add_parser("hdp", help="HDP-LDA: clip <-> eps_I, and budget splitting")
    ph.add_argument("--beta", type=positive_float, default=0.1)
    ph.add_argument("--clip", type=positive_float, default=None)
    ph.add_argument("--epsilon-inherent", type=positive_float, default=None)
    ph.add_argument("--epsilon", type=positive_float, default=None, help="total budget to split")
    ph.add_argument("--epsilon-laplace", type=positive_float, default=None, help="per-iteration eps_L to compose")
    ph.add_argument("--delta", type=unit_interval, default=1e-5)
    ph.add_argument("--iterations", type=positive_int, default=100)
    ph.set_defaults(func=cmd_privacy_hdp)
    pc = psub.add_parser("compose", help="compose Laplace and pure-eps events: basic vs tight")
    pc.add_argument("--laplace", nargs=2, action="append", metavar=("EPS", "COUNT"),
                    help="COUNT Laplace mechanisms at EPS each (sensitivity 1)")
    pc.add_argument("--pure", nargs=2, action="append", metavar=("EPS", "COUNT"), help="COUNT pure EPS-DP steps")
    pc.add_argument("--delta", type=unit_interval, default=1e-5)
    pc.add_argument("--unit", default="word")
    pc.set_defaults(func=cmd_privacy_compose)

    ex = sub.add_parser("experiment", help="reproduce figures of Zhao et al. (CSV + PNG)")
    ex.add_argument("which", choices=("hdp-utility", "topic-attack"))
    ex.add_argument("--corpus", default="demo", choices=("demo", "20newsgroups"))
    ex.add_argument("--topics", type=positive_int, default=50)
    ex.add_argument("--iterations", type=positive_int, default=100)
    ex.add_argument("--seeds", type=positive_int, default=3)
    ex.add_argument("--targets", type=positive_int, default=20, help="topic-attack: target tokens per run")
    ex.add_argument("--eps-grid", type=positive_float, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    ex.add_argument("--max-docs", type=positive_int, default=None, help="use only the first N training documents")
    ex.add_argument("--out", default="runs/experiment")
    ex.set_defaults(func=cmd_experiment)
    return ap


def main(argv=None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    try:
        a.func(a)
    except DPTopicError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (OSError, MemoryError) as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
