"""The corpus readers: a corpus file or folder read into a :class:`~dptopic.corpus.Corpus`, by format
(``Corpus.from_jsonl``, ``from_csv``, ``from_uci``, ``from_directory``, a prepared ``.npz``, text with one document per
line), and :func:`read_corpus`, which picks the reader by the path's name (``format="auto"``) or the format given.

The records of each file format are read in :mod:`dptopic.corpus.records` (below ``corpus.py``); this module sits
above both and imports them at the top."""
from __future__ import annotations

import os
from pathlib import Path

from .._io import load_json
from ..errors import DPTopicError, ParameterError
from . import stream
from .corpus import Corpus, tokenising
from .files import _open_text, broken_link, not_a_regular_file, read_lines
from .numbered_ids import NumberedIds
from .preprocess import DEFAULT_MAX_VOCAB
from .vocabulary import Vocabulary

TAB_SUFFIXES = (".tsv", ".tab")      # tab-separated tables (.tab: Orange's, with its three header rows)


_AUTO_SUFFIXES = {".npz": "npz", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "csv", ".tab": "csv",
                  ".txt": "text", ".text": "text"}


FORMAT_NAMES = {"text": "text, one document per line", "jsonl": "JSONL, one JSON object per line", "dir":
                 "a folder of .txt files, one document per file", "npz": "a prepared corpus", "uci":
                 "a UCI bag-of-words file"}


def file_suffix(p) -> str:
    """A file's extension in lower case, a ``.gz`` after it left off (``docs.jsonl.gz``: ``.jsonl``)."""
    name = Path(p).name.lower().removesuffix(".gz")
    return Path(name).suffix


def is_tab_separated(p) -> bool:
    return file_suffix(p) in TAB_SUFFIXES


def auto_format(p) -> str:
    """The format ``format="auto"`` reads the existing path ``p`` in: by its extension, never guessed. An extension it
    does not know (or none) is refused in one line, which names the formats to choose from (as ``format=``)."""
    p = Path(p)
    if p.is_dir():
        return "dir"
    if p.name.lower().startswith("docword"):
        return "uci"
    ext = file_suffix(p)
    if ext == ".json":
        return _json_format(p)
    if ext in _AUTO_SUFFIXES:
        return _AUTO_SUFFIXES[ext]
    what = f"its extension {ext!r}" if ext else "it has no extension, which"
    raise ParameterError("corpus {path}: {format=auto} reads a file by its extension, and {what} says no format: give"
                         " {format=text} (one document per line), jsonl, csv, uci or npz, or name the file .txt,"
                         " .jsonl, .csv, .tsv/.tab (tab-separated), .npz or docword.*.txt.", "format", "auto",
                         path=repr(str(p)), what=what, auto="auto", text="text")


def _json_format(p) -> str:
    """``jsonl`` for a ``.json`` file whose first non-blank line is a JSON object (one object per line, JSONL saved
    under another name); any other ``.json`` file (one array, an object over several lines) is refused."""
    with _open_text(p) as fh:
        first = next((ln.strip() for ln in fh if ln.strip()), "")
    try:
        if isinstance(load_json(first, f"{str(p)!r}"), dict):     # nesting bounded: never a RecursionError
            return "jsonl"
    except ValueError:          # not JSON, or too deeply nested (DPTopicError is a ValueError)
        pass
    raise ParameterError("{path} is JSON {what}: dptopic reads JSONL, one JSON object per line with the text in a"
                         " field (for example jq -c '.[]' for a file that is one array), or pass {format=text} for"
                         " plain text.", "format", path=repr(str(p)), text="text",
                         what="holding an array" if first.startswith("[") else "that is not one object per line")


def _load_uci(p, vocab, drop_empty: bool = True, vocab_settable: bool = True):
    """A UCI bag-of-words file; its vocabulary from ``vocab``, else the vocab.* file beside it. ``vocab_settable``:
    whether the caller can name the vocabulary file (False: it reads the file beside)."""
    if vocab is None:
        if "docword" not in p.name and vocab_settable:
            raise ParameterError("a UCI corpus needs its vocabulary file, and {name} is not named docword.*, so no"
                                 " vocab.* file can be found beside it: pass {vocab=} FILE.", "vocab",
                                 name=repr(p.name))
        if "docword" not in p.name:
            head = ("a UCI corpus needs its vocabulary file, and {name} is not named docword.*, so no vocab.* file can"
                    " be found beside it: name the pair docword.NAME.txt and vocab.NAME.txt, side by side")
            raise ParameterError(head + " (the UCI vocabulary is read from there; {vocabulary=} is the public word"
                                 " list the documents are read into).", "vocab", None, name=repr(p.name),
                                 key="corpus.readers.uci_vocabulary")
        guess = p.with_name(p.name.replace("docword", "vocab").removesuffix(".gz"))
        if not guess.is_file():
            raise ParameterError("a UCI corpus needs its vocabulary file, and there is no {guess} beside {name}: "
                                 + ("pass {vocab=} FILE." if vocab_settable else "put it there."), "vocab",
                                 guess=guess.name, name=repr(p.name))
        vocab = guess
    return Corpus.from_uci(p, vocab, drop_empty=drop_empty)



FORMATS = ("auto", "text", "jsonl", "csv", "dir", "uci", "npz")


def read_corpus(path, format: str = "auto", *, vocab=None, text_field: str = "text", label_field: str | None = None,
                id_field: str | None = None, require_ids: bool = True, vocabulary=None, max_vocab: int | None = None,
                min_df=None, max_df=None, stop_words=None, lowercase=None, drop_empty: bool = True,
                keep_supplied_vocabulary: bool = False, vocab_settable: bool = True, user_field: str | None = None,
                users_by_folder: bool = False, keep_urls: bool | None = None):
    """The corpus in the file or folder ``path``, read in ``format``: ``"auto"`` (by the path's name:
    :func:`auto_format`), ``"text"`` (one document per line; blank lines are no documents), ``"jsonl"``
    (:meth:`Corpus.from_jsonl`), ``"csv"`` (:meth:`Corpus.from_csv`; ``.tsv``/``.tab``: tab-separated), ``"dir"``
    (:meth:`Corpus.from_directory`), ``"uci"`` (:meth:`Corpus.from_uci`; its word list ``vocab``, else the ``vocab.*`` file beside it)
    or ``"npz"`` (a corpus ``Corpus.save`` or ``dptopic corpus prepare`` wrote).

    ``text_field``/``label_field``/``id_field`` name the JSONL field or CSV column of the text, the labels and the
    document ids (``require_ids=False``: ids used when present). ``max_vocab``/``min_df`` left as None mean 1000 and
    1 when a vocabulary is built from text, and "keep as given" for a prepared ``.npz`` or a UCI file, whose
    vocabulary is pruned only by the cuts given (a UCI file's words that occur in no document are left out). A text
    read with ``drop_empty=False`` and no ``vocabulary`` is words to be mapped onto a vocabulary given later: then
    ``max_vocab`` None keeps every word. ``max_df`` (None: no upper bound) and ``stop_words`` (None: ``"english"`` for
    text, none for a prepared corpus) prune likewise; ``lowercase`` (None: True; ``"match"``: the vocabulary's own
    case) applies to raw text only. ``vocabulary`` (a public word list) replaces them all: text is tokenised against
    it and every other format is restricted to it, so no word is chosen from the data. ``drop_empty=False`` keeps
    documents left without a word (one row per input document). ``keep_supplied_vocabulary``: a ``.npz`` prepared on
    a supplied (public) vocabulary is returned as prepared, never pruned by the data. ``vocab_settable``: whether
    the caller can name ``vocab`` (False: the ``vocab.*`` file beside is read, and a refusal says to put it there). ``user_field``:
    the JSONL field / CSV column of each document's person (``Corpus.user_ids``); ``users_by_folder``: a ``"dir"``
    corpus is a folder of folders, one per person. ``keep_urls`` (None: False): count the words of web addresses,
    e-mail addresses and @handles in raw text, which are dropped by default.
    """
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path).strip():      # Path("") is the current folder
        raise DPTopicError("the corpus path is empty: give the path of a corpus file or folder.")
    if format not in FORMATS:
        raise DPTopicError(f"invalid format={format!r}: give one of {', '.join(FORMATS)}.")
    spec, p = os.fspath(path), Path(path)
    if not p.exists():
        raise DPTopicError(f"corpus {spec!r} not found{broken_link(p)}: give an existing path.")
    odd = None if p.is_dir() else not_a_regular_file(p)
    if odd is not None:         # /dev/zero, a FIFO: said for what it is, before its name is read for a format
        raise DPTopicError(f"corpus {spec!r} {odd}: give a corpus file or folder (save the data to a regular file"
                           " first).")
    if vocabulary is not None:
        vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
        max_vocab = min_df = max_df = None  # nothing is chosen from the data
    given = max_vocab is not None or min_df is not None or max_df is not None or stop_words is not None
    cap_given = max_vocab is not None       # the default cap is for a vocabulary built from text only
    max_vocab = DEFAULT_MAX_VOCAB if max_vocab is None else max_vocab
    min_df = 1 if min_df is None else min_df
    fmt = auto_format(p) if format == "auto" else format
    if fmt in ("npz", "uci"):
        if lowercase not in (None, "match"):
            raise DPTopicError(f"lowercase applies to raw text, not to a {fmt} corpus, whose words are already"
                               " tokenised: leave it out, or prepare the corpus again from its text.")
        if keep_urls is not None:
            raise DPTopicError(f"keep_urls applies to raw text, not to a {fmt} corpus, whose words are already"
                               " tokenised: leave it out, or prepare the corpus again from its text.")
        c = Corpus.load(p) if fmt == "npz" else _load_uci(p, vocab, drop_empty, vocab_settable)
        if vocabulary is not None:
            c = c.restrict(vocabulary, drop_empty=drop_empty)
            return c.require_nonempty() if drop_empty else c
        if keep_supplied_vocabulary and fmt == "npz" and c.metadata.get("vocabulary_source") == "supplied":
            return c                    # the public word list as prepared
        if given or fmt == "uci":
            return c.prune(max_vocab=max_vocab if cap_given else None, min_df=min_df, max_df=max_df,
                           stop_words=stop_words)
        return c
    text_kw = dict(max_df=max_df, **({} if stop_words is None else {"stop_words": stop_words}),
                   **({} if lowercase is None else {"lowercase": lowercase}))
    if lowercase == "match":    # tokenised only, into the vocabulary's words (Corpus.from_texts)
        text_kw = dict(lowercase="match")
    if keep_urls is not None:
        text_kw["keep_urls"] = keep_urls
    # rows kept one per input document (drop_empty=False) with words of their own are read to be mapped onto a
    # vocabulary given later (a server's: submit, fed-client): no default cap, which would drop a word that the later
    # vocabulary holds but these documents use rarely
    kw = dict(vocabulary=vocabulary) if vocabulary is not None else dict(
        max_vocab=max_vocab if drop_empty or cap_given else None, min_df=min_df)
    kw.update(text_kw, **({} if drop_empty else {"drop_empty": False}))
    ids = dict(require_ids=require_ids) if id_field is not None else {}
    if fmt == "jsonl" and lowercase != "match":     # read in chunks on every core, never holding the text
        return stream.read_jsonl(p, text_field=text_field, label_field=label_field, id_field=id_field, **ids,
                                 user_field=user_field, progress=tokenising(), **kw)
    if fmt == "jsonl":
        return Corpus.from_jsonl(p, text_field=text_field, label_field=label_field, id_field=id_field, **ids,
                          user_field=user_field, **kw)
    if fmt == "csv":
        return Corpus.from_csv(p, text_column=text_field, label_column=label_field, id_column=id_field, **ids,
                        **({"delimiter": "\t"} if is_tab_separated(p) else {}), user_column=user_field, **kw)
    if fmt == "dir":
        return Corpus.from_directory(p, users_by_folder=users_by_folder, **kw)
    lines = read_lines(p)
    keep = [i for i, ln in enumerate(lines) if ln.strip()]
    if not keep:
        raise DPTopicError(f"empty corpus: {spec!r} has no non-blank lines; give one document per line.")
    if not drop_empty or len(keep) == len(lines):
        return Corpus.from_texts(lines, **kw)
    # blank lines (paragraphs apart) are no documents: left out before the vocabulary is built, so that a fraction
    # min_df/max_df counts the documents only, yet the ids keep their line numbers and the blanks are counted
    c = Corpus.from_texts([lines[i] for i in keep], doc_ids=NumberedIds(len(keep), keep), **kw)
    c.n_empty_dropped += len(lines) - len(keep)
    return c
