"""``audit``: attack a topic model's training procedure with LiRA and print the measured leakage beside
what its privacy report claims (Manzonelli et al. 2024; Carlini et al. 2022)."""
from __future__ import annotations

import math

from ..errors import DPTopicError
from ._common import add_corpus_args, corpus_from_args, make_console, print_table
from ._flags import CORPUS_FLAGS, CORPUS_RULES, epsilon_rules, epsilon_word_rules, flag_errors

MAX_SHADOWS = 10_000  # shadow models each train a topic model: more than this would never finish


def _number(name, value, check, what):
    if value is None:
        return None
    if not (math.isfinite(value) and check(value)):
        raise DPTopicError(f"invalid {name} {value:g}: {what}.")
    return value


def parse_set(items, flag: str = "--set"):
    """``NAME=VALUE`` pairs (``--set``, ``--dp-set``); values are parsed as JSON numbers/booleans where possible."""
    from .._io import load_json

    out = {}
    for it in items or []:
        if "=" not in it:
            raise DPTopicError(f"invalid {flag} {it!r}: write NAME=VALUE, e.g. {flag} sampling_rate=0.2.")
        k, v = it.split("=", 1)
        try:
            out[k.strip()] = load_json(v, f"{flag} {k.strip()}")
        except ValueError:
            out[k.strip()] = v
    return out


def _trainer_from_args(a):
    """``(train_fn, claimed privacy or None, description)`` from ``--model`` or ``--algorithm``."""
    import inspect

    from ..attacks.lira import epsilon_parameter, estimator_trainer, make_estimator
    from ..models import ALGORITHMS

    if a.model is not None:
        from ..models import load

        given = [f"--{f}" for f in ("topics", "iterations", "alpha", "beta", "epsilon", "delta")
                 if getattr(a, f) is not None] + (["--set"] if a.set else [])
        if given:
            raise DPTopicError(f"{', '.join(given)} do(es) not apply with --model: the saved model fixes its trainer's"
                               " settings; use --algorithm NAME to audit other settings.")
        model = load(a.model)
        params = {k: v for k, v in model.get_params().items() if k not in ("seed", "verbose", "n_jobs", "secure")}
        return estimator_trainer(type(model), **params), model, f"{type(model).__name__} from {a.model}"
    if a.algorithm not in ALGORITHMS:
        raise DPTopicError(f"unknown algorithm {a.algorithm!r}: choose one of {', '.join(ALGORITHMS)}.")
    cls = ALGORITHMS[a.algorithm]
    names = inspect.signature(cls.__init__).parameters
    params_epsilon = epsilon_parameter(a.algorithm, required=False)
    params = {}
    for flag, keys in (("topics", ("n_topics", "n_components")), ("iterations", ("n_iter", "max_iter")),
                       ("alpha", ("alpha",)), ("beta", ("beta", "eta")),
                       ("epsilon", (epsilon_parameter(a.algorithm, required=False),)),
                       ("delta", ("delta",))):
        v = getattr(a, flag)
        if v is None:
            continue
        key = next((k for k in keys if k is not None and (k in names or flag == "epsilon")), None)
        if key is None:
            raise DPTopicError(f"--{flag} does not apply to {a.algorithm}; see its parameters with --set NAME=VALUE.")
        params[key] = v
    extra = parse_set(a.set)
    for k in ("seed", "verbose", "n_jobs"):
        if k in extra:
            raise DPTopicError(f"--set {k}=... is not a trainer setting here: the audit gives every shadow model its own"
                               f" {'seed (use --seed)' if k == 'seed' else k}; drop it.")
    clash = sorted(set(extra) & set(params))
    if clash:
        flag = next((f"--{f}" for f, keys in (*_FLAG_KEYS, ("epsilon", (params_epsilon,))) if clash[0] in keys),
                    "the flag")
        raise DPTopicError(f"--set {clash[0]}=... clashes with {flag}, which sets {clash[0]}: give it once.")
    params.update(extra)
    make_estimator(a.algorithm, **params)  # unknown or clashing parameters fail before the corpus loads
    return estimator_trainer(a.algorithm, **params), None, f"{a.algorithm} {params}"


COVERAGE_LIMIT = 0.10
"""With ``--model`` and without ``--restrict``, an audit refuses a corpus more than this share of whose tokens are
words the model does not know (counted in the corpus's most frequent words, as many as the model has): the audit
would attack documents other than the ones the model saw, with those tokens silently dropped. A model trained on a
given word list leaves most tokens out by design; such a corpus passes when its documents hold as many of the
model's words as the training documents did (within the same share)."""


def _audit_corpus(a, model):
    """``(corpus, note)``: the audited documents, in the saved model's own vocabulary by default (a model trained
    with --vocabulary included), in ``--vocabulary FILE`` when given, else built from the corpus as ``train`` builds
    it; ``note`` says how many tokens a restriction to the model's vocabulary dropped (None when none)."""
    from ._common import load_corpus, read_vocabulary

    vocab = read_vocabulary(a.vocabulary) if a.vocabulary else None
    if model is None:
        if a.restrict:
            raise DPTopicError("--restrict applies with --model only (it drops words the saved model does not know);"
                               " drop it.")
        if vocab is None:
            return corpus_from_args(a), None
        return load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=vocab,
                           stop_words=a.stop_words, lowercase=a.lowercase), None
    if vocab is None:
        if a.max_vocab is not None or a.min_df is not None or a.max_df is not None:
            raise DPTopicError("with --model the corpus is read in the model's own vocabulary: drop --max-vocab,"
                               " --min-df and --max-df (or give --vocabulary FILE).")
        # the corpus as train would read it at the model's vocabulary size: the words it would use
        reference = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field,
                                max_vocab=max(2, len(model.vocabulary_)),
                                stop_words=a.stop_words, lowercase=a.lowercase)
        share = _outside_share(model, reference)
        try:
            corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=model.vocabulary_,
                                 stop_words=a.stop_words, lowercase=a.lowercase)
        except DPTopicError:        # no document holds a word of the model: say how foreign the corpus is
            _check_coverage(share, a.restrict, reference.vocab_size)
            raise
        empty = (f"; {corpus.n_empty_dropped} documents held none of its words and were left out"
                 if getattr(corpus, "n_empty_dropped", 0) else "")
        if share > COVERAGE_LIMIT and _as_dense_as_training(model, corpus):
            # a vocabulary given to train (a public word list) leaves most tokens out by design: the documents hold
            # as many of the model's words as its training documents did, so they are no stranger to it
            return corpus, (f"{share:.1%} of the tokens of the corpus's {reference.vocab_size} most frequent words are"
                            " outside the model's vocabulary (its training documents held as many of its words per"
                            f" document) and were dropped{empty}")
        note = _check_coverage(share, a.restrict, reference.vocab_size)
        return corpus, (note + empty if note else (empty[2:] if empty else None))
    reference = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=vocab,
                            stop_words=a.stop_words, lowercase=a.lowercase)
    note = _check_coverage(_outside_share(model, reference), a.restrict, None)
    return reference.restrict(model.vocabulary_).require_nonempty(), note


def _as_dense_as_training(model, corpus) -> bool:
    """Whether ``corpus`` (read in the model's vocabulary) holds at least 1 - :data:`COVERAGE_LIMIT` times as many of
    the model's tokens per document as the model's training documents did (a saved Gibbs model records them)."""
    stats = getattr(model, "_train_stats", None)
    try:
        trained = float(stats["n_tokens"]) / float(stats["n_docs"])
    except (TypeError, KeyError, ValueError, ZeroDivisionError):
        return False
    return corpus.n_docs > 0 and trained > 0 and corpus.n_tokens / corpus.n_docs >= (1 - COVERAGE_LIMIT) * trained


def _outside_share(model, corpus) -> float:
    """The share of ``corpus``'s tokens whose word the model's vocabulary lacks."""
    import numpy as np

    if corpus.n_tokens == 0:
        return 0.0
    words = set(model.vocabulary_.words)
    known = np.fromiter((w in words for w in corpus.vocabulary.words), dtype=bool, count=corpus.vocab_size)
    return float(1.0 - known[corpus.word_ids].mean())


def _check_coverage(share: float, restrict: bool, top: int | None):
    """Refuse (without ``--restrict``) a corpus more than :data:`COVERAGE_LIMIT` of whose tokens the model does not
    know; otherwise the note to print (None when every token is known)."""
    where = f"of the tokens of its {top} most frequent words" if top else "of its tokens"
    if share > COVERAGE_LIMIT and not restrict:
        raise DPTopicError(f"{share:.0%} {where} are outside the model's vocabulary (more than"
                           f" {COVERAGE_LIMIT:.0%}): audit on the corpus the model was trained on, or pass --restrict"
                           " to drop those words and audit what remains.")
    if share <= 0:
        return None
    return (f"{share:.1%} {where} are outside the model's vocabulary and were dropped"
            + (" (--restrict)" if restrict else ""))


def results_table(summaries: dict):
    """The table of each attack's AUC (± its standard error) and TPR at low FPR."""
    from rich.table import Table

    t = Table(title="Membership inference (higher = more leakage)")
    for col in ("attack", "AUC", "TPR@FPR=1%", "TPR@FPR=0.1%", "TPR@FPR=0"):
        t.add_column(col, justify="right" if col != "attack" else "left", no_wrap=(col == "attack"),
                     min_width=max(len(n) for n in summaries) if col == "attack" else None)
    for name, s in summaries.items():
        t.add_row(name, f"{s['auc']:.3f} ± {s['auc_se']:.3f}", f"{s['tpr_at_fpr_0.01']:.3%}",
                  f"{s['tpr_at_fpr_0.001']:.3%}", f"{s['tpr_at_fpr_0']:.3%}")
    return t


_FLAG_KEYS = (("topics", ("n_topics", "n_components")), ("iterations", ("n_iter", "max_iter")), ("alpha", ("alpha",)),
              ("beta", ("beta", "eta")), ("delta", ("delta",)))


def audit_flag_names(a) -> tuple:
    """``(names, rules)`` for :func:`~dptopic.cli._flags.flag_errors`: with ``--algorithm``, the trainer's parameters
    that the flags set (given or at the trainer's default), never one the user named in ``--set``; with ``--model`` the
    saved model fixes them, so only the corpus flags are mapped."""
    names, rules = dict(CORPUS_FLAGS), CORPUS_RULES
    if a.model is None and a.algorithm is not None:
        from ..models import ALGORITHMS

        if a.algorithm in ALGORITHMS:
            from ..attacks.lira import epsilon_parameter

            key = epsilon_parameter(a.algorithm, required=False)
            if key is not None:
                names.update({key: "--epsilon", "epsilon": "--epsilon"})
                rules = (epsilon_word_rules("--epsilon", a.epsilon) if key == "epsilon_word" else
                         epsilon_rules("--epsilon")) + rules
        for flag, keys in _FLAG_KEYS:
            names.update({k: f"--{flag}" for k in keys})
        for item in a.set or []:
            names.pop(item.split("=", 1)[0].strip(), None)
    return names, rules


def cmd_audit(a):
    # "LDA has no parameter 'foo'; valid: n_topics, ...": the names --set takes, kept as they are
    with flag_errors(*audit_flag_names(a), keep=r"has no parameter"):
        _audit(a)


def _audit(a):
    from .._io import atomic_write_json
    from ..attacks.lira import run_lira

    console = make_console()
    if a.shadows < 4 or a.shadows % 2 or a.shadows > MAX_SHADOWS:
        raise DPTopicError(f"invalid --shadows {a.shadows}: need an even number in [4, {MAX_SHADOWS:,}]"
                           " (64 is typical).")
    if a.targets is not None and a.targets > a.shadows:
        raise DPTopicError(f"invalid --targets {a.targets}: at most --shadows ({a.shadows}) models can serve as the"
                           " attacked target; lower --targets or leave it out to attack every shadow.")
    _number("--epsilon", a.epsilon, lambda v: v > 0, "must be a number > 0")
    _number("--delta", a.delta, lambda v: 0 < v < 1, "must lie in (0, 1)")
    _number("--confidence", a.confidence, lambda v: 0 < v < 1, "must lie in (0, 1)")
    if (a.model is None) == (a.algorithm is None):
        raise DPTopicError("give exactly one of --model DIR (audit a saved model's training settings) or --algorithm NAME.")
    if a.seed is not None and a.seed < 0:
        raise DPTopicError(f"invalid --seed {a.seed}: give an integer >= 0, or leave it out for fresh OS entropy.")
    from .._io import check_output_folder, mark_output_folder, refuse_other_writer

    refuse_other_writer(a.out, "audit")
    check_output_folder(a.out, overwrite=a.overwrite, what="audit")
    train_fn, model, desc = _trainer_from_args(a)
    corpus, coverage_note = _audit_corpus(a, model)
    console.print(f"[bold]audit[/]: {desc}; corpus {corpus.n_docs} documents, V={corpus.vocab_size};"
                  f" {a.shadows} shadow models on complementary halves")
    if coverage_note:
        console.print(f"[yellow]note: {coverage_note}[/]")
    import warnings

    with warnings.catch_warnings():  # shadow models reuse the documents by design: an audit measures, releases nothing
        warnings.filterwarnings("ignore", message=r".*already used by an earlier private fit", category=UserWarning)
        from ..errors import DataVocabularyWarning, SeededNoiseWarning

        for quiet in (SeededNoiseWarning, DataVocabularyWarning):   # the shadow models' own seeds and vocabulary
            warnings.simplefilter("ignore", quiet)
        res = run_lira(corpus, train_fn, n_shadows=a.shadows, seed=a.seed, n_jobs=a.jobs, verbose=0 if a.quiet else 1,
                       n_targets=a.targets, confidence=a.confidence,
                       claim=None if model is None else dict(getattr(model, "privacy_", None) or {"private": False}))
    out = mark_output_folder(a.out, "audit")
    doc = res.to_json()
    doc["settings"]["seed"] = a.seed
    if coverage_note:
        doc["settings"]["coverage"] = coverage_note
    # figures computed from the documents of the (possibly private) corpus: owner-only, as every such file is
    atomic_write_json(out / "audit.json", doc, private=True)
    res.plot(out / "roc.png", attacks=list(res.summaries), private=True)  # every attack the table shows
    mark_output_folder(out, "audit", done=True)
    print_table(console, results_table(res.summaries))
    e = res.empirical_epsilon
    c = doc["claimed_privacy"]
    rel = "for adding/removing a document, via group privacy" if e["relation"] == "add_remove" else "for replacing a document"
    console.print(f"[bold]empirical epsilon lower bound[/] ({rel}; online LiRA, delta={e['delta']:g},"
                  f" nominal {e['confidence']:.0%} confidence, see docs/auditing.md): {e['epsilon_lower_bound']:.3f}")
    if c.get("epsilon") is not None:
        from ..reporting.card import epsilon_text

        claim = f"{epsilon_text(c['epsilon'])} (unit: {c.get('unit')}, delta={c.get('delta')}; {c.get('guarantee')} guarantee)"
    elif c.get("private"):
        claim = f"none: no guarantee claimed ({c.get('reason', '')})"
    else:
        claim = "none (not private)"
    console.print(f"[bold]claimed epsilon[/]: {claim}")
    colour = {"exceeds the claim": "bold red", "consistent with the claim": "green"}.get(res.verdict, "yellow")
    console.print(f"[{colour}]{'WARNING: ' if res.verdict == 'exceeds the claim' else ''}verdict: {res.verdict}[/]"
                  f" ({res.verdict_note})")
    for n in c.get("notes", []):
        console.print(f"note: {n}")
    console.print(f"note: {doc['metrics_guarantee']}")
    console.print(f"written: {out / 'audit.json'}, {out / 'roc.png'}")


def register(sub) -> None:
    from ._common import jobs_int, positive_int

    p = sub.add_parser("audit", help="attack a model's training procedure (LiRA) and compare with its privacy claim")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", default=None, help="a saved model directory: its class and settings are audited")
    src.add_argument("--algorithm", default=None, help="a trainer name (lda, hdp, cdp, ...; see 'dptopic train --help')")
    add_corpus_args(p)
    p.add_argument("--topics", type=positive_int, default=None, help="number of topics (with --algorithm)")
    p.add_argument("--iterations", type=positive_int, default=None, help="training iterations (with --algorithm)")
    p.add_argument("--alpha", type=float, default=None, help="document-topic prior of the shadow models (default: the trainer's)")
    p.add_argument("--beta", type=float, default=None, help="topic-word prior of the shadow models (default: the trainer's)")
    p.add_argument("--epsilon", type=float, default=None, help="the trainer's epsilon (epsilon; hdp: epsilon_laplace per iteration; lp/olp: epsilon_word; svi: the total budget)")
    p.add_argument("--delta", type=float, default=None, help="the trainer's delta")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="any other trainer parameter (repeatable)")
    p.add_argument("--restrict", action="store_true",
                   help="with --model: drop corpus words the model does not know and audit the rest (without it, a"
                        f" corpus more than {COVERAGE_LIMIT:.0%}% of whose tokens the model does not know is refused)")
    p.add_argument("--shadows", type=int, default=64, help=f"shadow models, even, in [4, {MAX_SHADOWS:,}] (default 64)")
    p.add_argument("--targets", type=positive_int, default=None,
                   help="how many shadow models serve in turn as the attacked target (default: all)")
    p.add_argument("--confidence", type=float, default=0.95, help="nominal confidence of the epsilon lower bound (default 0.95)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed (>= 0) for the shadow splits and training (default: fresh OS entropy)")
    p.add_argument("--jobs", type=jobs_int, default=2, help="worker threads training shadows (default 2)")
    p.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="a public vocabulary (one word per line), as for train; with --model the default is the"
                        " model's own vocabulary")
    p.add_argument("--out", default="runs/audit", help="a new or empty folder for audit.json and roc.png")
    p.add_argument("--overwrite", action="store_true", help="replace --out if an earlier 'dptopic audit' wrote it (results of another command are never replaced)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_audit)
