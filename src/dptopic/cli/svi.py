"""``train --algorithm svi|online-vb``'s flags and printouts (stochastic variational inference, private: Park et al.
2016, or not), the document-level trainers' public corpus; the run itself is :func:`dptopic.train`'s."""
from __future__ import annotations

import math
import os
from pathlib import Path

from ..errors import DPTopicError
from ._common import (NO_VOCAB_CAP, PUBLIC_VOCABULARY_DECIDES, experiment_corpora, load_corpus, make_console,
                      positive_float, positive_int, print_verdict, seeds_int)


def add_svi_args(t) -> None:
    g = t.add_argument_group("svi / online-vb (stochastic variational inference)")
    g.add_argument("--sampling-rate", type=float, default=0.05,
                   help="svi: probability q that each document joins a step's mini-batch (default 0.05)")
    g.add_argument("--noise-multiplier", type=float, default=None,
                   help="svi: noise std / clip; the run's epsilon is reported (instead of --epsilon)")
    g.add_argument("--max-doc-len", type=int, default=500, help="svi: tokens kept per document (default 500)")
    g.add_argument("--epochs", type=float, default=None,
                   help="svi: expected passes, steps = round(epochs/q) (default 1); online-vb: passes (default 10)")
    g.add_argument("--no-clip", action="store_true", help="svi: no clipping (sensitivity = --max-doc-len)")


def _check(a) -> None:
    if not 0 < a.sampling_rate <= 1:
        raise DPTopicError(f"invalid --sampling-rate {a.sampling_rate:g}: must lie in (0, 1].")
    if a.noise_multiplier is not None and not a.noise_multiplier > 0:
        raise DPTopicError(f"invalid --noise-multiplier {a.noise_multiplier:g}: must be > 0.")
    if a.max_doc_len < 1:
        raise DPTopicError(f"invalid --max-doc-len {a.max_doc_len}: must be an integer >= 1.")
    if a.epochs is not None and not a.epochs > 0:
        raise DPTopicError(f"invalid --epochs {a.epochs:g}: must be > 0.")
    if a.algorithm == "svi":
        if (a.epsilon is None) == (a.noise_multiplier is None):
            raise DPTopicError("svi needs exactly one of --epsilon (sigma is calibrated) or --noise-multiplier"
                               " (epsilon is reported).")
        if a.no_clip and a.clip is not None:
            raise DPTopicError("give --clip or --no-clip, not both.")


def svi_parameters(a) -> dict:
    """``dptopic.train``'s parameters for ``--algorithm svi|online-vb`` (``--beta`` is their ``eta``; svi with
    ``--epsilon`` solves its noise from it, with ``--noise-multiplier`` reports the epsilon)."""
    _check(a)
    p = {}
    if a.beta is not None:
        p["eta"] = a.beta
    if a.algorithm == "online-vb":
        if a.epochs is not None and (not math.isfinite(a.epochs) or a.epochs != int(a.epochs)):
            raise DPTopicError(f"invalid --epochs {a.epochs:g} for online-vb: it makes whole passes over the corpus; give"
                               " an integer >= 1 (svi takes fractional epochs: steps = round(epochs / q)).")
        return {**p, "batch_size": a.batch_size or 256, "n_epochs": int(a.epochs or 10)}
    if a.secure and a.seed is not None:
        raise DPTopicError("--secure draws noise from the operating system's CSPRNG and refuses a seed: remove --seed.")
    p.update(clip=None if a.no_clip else (a.clip if a.clip is not None else 50.0), max_doc_len=a.max_doc_len,
             secure=a.secure, n_epochs=a.epochs or 1.0, sampling_rate=a.sampling_rate)
    if a.epsilon is None:
        p["noise_multiplier"] = a.noise_multiplier
    return p


def _same_file(a_path, b_path) -> bool:
    """Whether two paths name one file or folder (the same device and inode: a ``../`` path, a symlink, a hard
    link)."""

    try:
        x, y = os.stat(a_path), os.stat(b_path)
    except OSError:
        return False
    return (x.st_dev, x.st_ino) == (y.st_dev, y.st_ino)


def read_public_corpus(a):
    """``train --public-corpus PATH`` (docdp-cooc), read and checked before anything is read from the private corpus
    or spent: the format by its own name, the text from ``--public-text-field`` (by default ``--text-field`` where the
    public file has fields too), every word kept (the training vocabulary restricts it later); refused in one line that
    names --public-corpus (and --public-text-field) when it is missing, unreadable, empty, or the private corpus
    itself (the same file by device and inode). None without the flag."""
    spec = getattr(a, "public_corpus", None)
    if spec is None:
        return None

    flag = f"--public-corpus {spec!r}"
    if not str(spec).strip() or not Path(spec).exists():
        raise DPTopicError(f"{flag}: no such file or folder; give public documents of the same domain (a JSONL/CSV"
                           " file, a text file of one document per line, or a folder of text files).")
    if getattr(a, "corpus", None) is not None and _same_file(spec, a.corpus):
        raise DPTopicError(f"{flag} is the private --corpus {a.corpus!r} itself (the same file): public documents are"
                           " read in the clear, outside the epsilon; give public documents of the same domain"
                           " (published reports, a public forum), none of them private.")
    from ..corpus.readers import auto_format  # read on use: the CLI's start-up stays light

    try:
        fmt = auto_format(Path(spec))
    except DPTopicError:
        from ..corpus.readers import file_suffix  # read on use: the CLI's start-up stays light

        raise DPTopicError(f"{flag}: its extension {file_suffix(Path(spec))!r} names no format the public corpus is"
                           " read in: name the file .txt (one document per line), .jsonl, .csv, .tsv or .npz, or give a"
                           " folder of .txt files.") from None
    field = getattr(a, "public_text_field", None)
    if field is None:
        field = getattr(a, "text_field", "text") if fmt in ("jsonl", "csv") else "text"
    try:
        public = load_corpus(spec, fmt, None, field, None, max_vocab=NO_VOCAB_CAP, min_df=1,
                             stop_words=PUBLIC_VOCABULARY_DECIDES, lowercase=getattr(a, "lowercase", None))
    except DPTopicError as e:
        msg = str(e)
        for old, new in (("set text_field (CLI: --text-field) to", "give --public-text-field"),
                         ("--text-field", "--public-text-field"), ("text_field", "--public-text-field")):
            msg = msg.replace(old, new)
        if msg[:1].isupper() and not msg[:2].isupper():
            msg = msg[0].lower() + msg[1:]
        raise DPTopicError(f"{flag}: {msg}" + ("" if "give" in msg or "drop" in msg else
                                                " Give public documents of the same domain in a format --corpus reads"
                                                " (docs/document_dp.md).")) from None
    import numpy as np  # heavy: not loaded at the CLI's start-up
    import scipy.sparse as sp  # heavy: not loaded at the CLI's start-up

    if not np.diff(sp.csr_matrix(public.to_bow()).indptr).max(initial=0) >= 2:     # as fit refuses it, beforehand
        raise DPTopicError(f"{flag} has no document with two different words: its co-occurrences are the prior; give"
                           " public documents of the same domain (whole texts, not a word list).")
    return public


# ---------------------------------------------------------------- experiment svi
def cmd_experiment_svi(a) -> None:
    from .. import experiments  # read on use: the CLI's start-up stays light

    console = make_console()
    train, test = experiment_corpora(a.corpus, max_docs=a.max_docs)
    s = experiments.svi_tradeoff(train, test, a.out, name=a.corpus, sigmas=tuple(a.sigmas),
                                 sampling_rates=tuple(a.sampling_rates), n_topics=a.topics, n_epochs=a.epochs,
                                 clip=a.clip, delta=a.delta, tau0=a.tau0, seeds=tuple(range(a.seeds)),
                                 table_sigma=a.sigmas[min(1, len(a.sigmas) - 1)],
                                 table_q=a.sampling_rates[min(1, len(a.sampling_rates) - 1)],
                                 progress=lambda msg: console.print(f"  {msg}"))
    console.print(f"top-word mass {s['top_word_mass']}, held-out coherence {s['coherence_test']}")
    for claim, ok in s["checks"].items():
        console.print(f"  {'not tested (one sampling rate)' if ok is None else 'holds' if ok else 'FAILS'}: {claim}")
    n = a.corpus
    print_verdict(console, s, Path(a.out), [f"svi_fig1_{n}.csv", f"svi_fig1_{n}.png", f"svi_table1_{n}.csv",
                                            f"svi_summary_{n}.json"])
    if s.get("short_run_note"):
        console.print(f"[yellow]note[/]: {s['short_run_note']}")


def register_svi_experiment(esub) -> None:
    e = esub.add_parser("svi", help="Park et al. Fig. 1 / Table 1: DP-SVI perplexity against eps, tight vs strong"
                                    " composition")
    e.add_argument("--corpus", default="demo", choices=("demo", "20newsgroups"))
    e.add_argument("--topics", type=positive_int, default=20)
    e.add_argument("--seeds", type=seeds_int, default=1)
    e.add_argument("--max-docs", type=positive_int, default=None, help="use only the first N training documents")
    e.add_argument("--out", default="runs/svi-experiment", help="results folder (default runs/svi-experiment)")
    e.add_argument("--sigmas", type=positive_float, nargs="+", default=[1.0, 1.24, 1.5, 2.0])
    e.add_argument("--sampling-rates", type=positive_float, nargs="+", default=[0.02, 0.05, 0.1])
    e.add_argument("--epochs", type=positive_float, default=1.0)
    e.add_argument("--clip", type=positive_float, default=10.0)
    e.add_argument("--delta", type=positive_float, default=1e-5)
    e.add_argument("--tau0", type=positive_float, default=64.0)
    e.set_defaults(func=cmd_experiment_svi)
