"""The figures ``dptopic demo`` writes beside its models (its ``out`` folder + ``-figures``): the top words of the
model it leads with, as bars, and the topic quality against epsilon that the shipped utility table measured (``utility_table.json``).

Both are drawn from released topics and published measurements only, so they are covered by the model's guarantee
(post-processing) or by none being needed; nothing here reads the paragraphs."""
from __future__ import annotations

import json
from pathlib import Path

from .._io import check_output_folder, mark_output_folder, save_fig
from ..models.registry import TRAINERS

FIGURES_SUFFIX = "-figures"
COMMAND = "demo"
TOPICS_SHOWN = 8
WORDS_SHOWN = 8
CORPUS_NAMES = {"sotu": "State of the Union (this demo's corpus)", "20newsgroups": "20 Newsgroups"}
CURVE_CORPORA = {"sotu": "-", "20newsgroups": "--"}
"""The corpora of the table drawn, and their line styles."""
Y_RANGE = (-0.3, 1.05)


def figures_dir(out) -> Path:
    """The figures' folder beside the model folder ``out``."""
    return Path(str(out).rstrip("/\\") + FIGURES_SUFFIX)


def check_figures_out(out, overwrite: bool = False) -> Path:
    """The figures' folder, checked before any work by the rule for a folder of results (new, empty, or with
    ``overwrite`` one a demo wrote)."""
    return check_output_folder(figures_dir(out), overwrite=overwrite, what="demo figures", command=COMMAND)


def write_demo_figures(out, model, marks: dict) -> list[Path]:
    """Write ``topics.png`` (``model``'s top words) and ``quality_vs_epsilon.png`` (the shipped table, with the
    epsilons of ``marks``, ``{unit: epsilon}`` of the demo's models, marked) into the figures' folder; returns their
    paths."""
    import matplotlib  # heavy: not loaded at the CLI's start-up

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # heavy: not loaded at the CLI's start-up

    out = figures_dir(out)
    mark_output_folder(out, COMMAND)
    paths = []
    unit = model.privacy_["unit"]
    for name, draw in (("topics.png", lambda: _topic_bars(plt, model, marks[unit], unit)),
                       ("quality_vs_epsilon.png", lambda: _quality_curve(plt, marks))):
        fig = draw()
        try:
            save_fig(fig, out / name)
        finally:
            plt.close(fig)
        paths.append(out / name)
    mark_output_folder(out, COMMAND, done=True)
    return paths


def _topic_bars(plt, model, epsilon: float, unit: str):
    import numpy as np  # heavy: not loaded at the CLI's start-up

    phi = np.asarray(model.components_, dtype=np.float64)
    phi = phi / phi.sum(axis=1, keepdims=True)
    background = set(model.background_topic_ids())
    topics = [k for k in range(phi.shape[0]) if k not in background][:TOPICS_SHOWN]
    cols = 4
    rows = -(-len(topics) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.3 * rows), squeeze=False)
    words = model.vocabulary_.words
    for ax, k in zip(axes.flat, topics):
        top = np.argsort(-phi[k], kind="stable")[:WORDS_SHOWN][::-1]
        ax.barh(range(len(top)), phi[k, top], color="C0")
        ax.set_yticks(range(len(top)), [words[i] for i in top], fontsize=9)
        ax.set_title(f"topic {k}", fontsize=10)
        ax.tick_params(axis="x", labelsize=7)
        ax.spines[["top", "right"]].set_visible(False)
    for ax in list(axes.flat)[len(topics):]:
        ax.axis("off")
    fig.suptitle(f"{type(model).__name__}: top {WORDS_SHOWN} words of {len(topics)} of its {phi.shape[0]} topics"
                 f" (weight in the topic); epsilon = {epsilon:.3g} per {unit}", fontsize=11)
    fig.tight_layout()
    return fig


def _quality_curve(plt, marks: dict):
    from matplotlib.ticker import NullFormatter, ScalarFormatter  # heavy: not loaded at the CLI's start-up

    from ..advice import TABLE, USEFUL_RATIO  # advice reads the estimators: only when a figure is drawn

    table = json.loads(TABLE.read_text("utf-8"))
    rows = [r for r in table["rows"] if r["corpus"] in CURVE_CORPORA]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    for ax, level in zip(axes, ("document", "word")):
        # the trainers' own rows (a table row of a trainer with an option, docdp-cooc-vectors, is no curve here)
        mine = [r for r in rows if r["unit"] == level and r["trainer"] in TRAINERS]
        trainers = sorted({r["trainer"] for r in mine}, key=list(TRAINERS).index)
        for i, trainer in enumerate(trainers):
            for corpus, style in CURVE_CORPORA.items():
                pts = sorted((r["epsilon"], r["npmi_ratio"]) for r in mine
                             if r["trainer"] == trainer and r["corpus"] == corpus)
                if not pts:
                    continue
                low = any(y < Y_RANGE[0] for _, y in pts)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=4, color=f"C{i}",
                        label=f"{_trainer_name(trainer)}, {CORPUS_NAMES[corpus]}"
                              + (" (some points below the axis)" if low else ""))
        ax.axhline(USEFUL_RATIO, color="grey", lw=0.8, ls=":")
        ax.text(0.99, USEFUL_RATIO, f"useful from {USEFUL_RATIO:g} ", color="grey", fontsize=8, va="top", ha="right",
                transform=ax.get_yaxis_transform())
        ax.set_xscale("log")
        xs = [r["epsilon"] for r in mine]
        lo, hi = min(xs), max(xs)
        epsilon = marks.get(level)
        if epsilon is not None:
            ax.axvline(epsilon, color="k", lw=1, ls="--")
            ax.text(epsilon, 0.97, f" this demo: {epsilon:.3g}", fontsize=8, va="top",
                    transform=ax.get_xaxis_transform())
            lo, hi = min(lo, epsilon), max(hi, epsilon)
        ax.set_xlim(lo / 1.25, hi * 1.25)
        ax.set_xticks(sorted(set(xs)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_ylim(*Y_RANGE)
        ax.set_xlabel(f"epsilon per {level}" + (" (a document of L words: L x epsilon)" if level == "word" else ""))
        ax.set_ylabel("NPMI ratio to non-private LDA")
        ax.set_title(f"{level}-level DP", fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle("Topic quality against epsilon, as measured for dptopic's utility table"
                 f" ({table.get('source', '')})", fontsize=9)
    fig.tight_layout()
    return fig


def _trainer_name(name: str) -> str:
    """A trainer of the table as the legend names it: its class, and which unit it is the default of."""
    t = TRAINERS.get(name)
    if t is None:
        return name
    return t.class_name + (f" (the {t.default_for[0]}-level default)" if t.default_for else "")
