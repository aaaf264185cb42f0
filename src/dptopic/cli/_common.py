"""Helpers shared by the command groups: argument types, corpus loading, report printing."""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..errors import DPTopicError

FORMATS = ("auto", "uci", "jsonl", "csv", "dir", "text", "npz")


def make_console(stderr=False):
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


def add_corpus_args(p, required=False):
    p.add_argument("--corpus", default=None, required=required,
                   help="'demo' (State of the Union paragraphs, default), '20newsgroups', or a path")
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help="input format (auto: by name; text = one document per line)")
    p.add_argument("--vocab", default=None, help="UCI vocab file (default: next to the docword file)")
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text")
    p.add_argument("--label-field", default=None, help="JSONL field / CSV column holding a label")
    p.add_argument("--max-vocab", type=positive_int, default=1000, help="keep the most frequent words (default 1000)")
    p.add_argument("--min-df", type=positive_int, default=1, help="minimum document frequency")


def corpus_from_args(a):
    return load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, a.max_vocab, a.min_df)


def print_topics(model, n=10, max_topics=None, console=None):
    console = console or make_console()
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
    console = console or make_console()
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
    for key in ("parameters", "scope", "note", "warning"):
        if key in report:
            v = report[key]
            t.add_row(key, ", ".join(f"{k}={x:.4g}" if isinstance(x, float) else f"{k}={x}" for k, x in v.items())
                      if isinstance(v, dict) else str(v))
    t.add_row("noise", f"{report.get('noise')}{' (secure, CSPRNG)' if report.get('secure_noise') else ''}")
    console.print(t)
