"""Helpers shared by the command groups: argument types, corpus loading, report printing."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..errors import DPTopicError
from ._flags import FORMAT_FLAG, flag_errors

FORMATS = ("auto", "uci", "jsonl", "csv", "dir", "text", "npz")


def make_console(stderr=False):
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:   # the reader went away (`| head`): exit as every other output does
            self.quiet = True
            raise BrokenPipeError

    console = _Console(stderr=stderr, highlight=False)
    # off a terminal (a file, a pipe) rich would break prose at 80 columns while tables take their natural width
    # (print_table): lines are left whole there, for the pager or terminal that shows them to wrap
    console.soft_wrap = not console.is_terminal
    return console


def warn(text: str) -> None:
    """One warning line on stderr (``warning: ...``), as every warning of the command line and the library's own
    (``main`` shows those alike): never on stdout, which carries the command's output."""
    print(f"warning: {' '.join(str(text).split())}", file=sys.stderr)


def print_table(console, table) -> None:
    """Print a rich table. Off a terminal (a file, a pipe) rich assumes 80 columns and would cut cells with '…' or
    split numbers: there the table gets its natural width (a column's ``max_width`` still wraps long prose)."""
    if console.is_terminal:
        console.print(table)
        return
    # a table is laid out at its natural width (soft wrapping, which leaves prose lines whole, would not lay it out)
    from rich.measure import Measurement

    saved = console._width           # None: rich's own width (restored as it was, not pinned to a number)
    console.width = max(console.width, Measurement.get(console, console.options.update_width(1 << 16), table).maximum)
    try:
        console.print(table, soft_wrap=False)
    finally:
        console._width = saved


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
epsilon_value = _float_arg(lambda v: 1e-9 <= v <= 500, "an epsilon must lie in [1e-09, 500]")
# an epsilon handed to the accountants as it is (the vocabulary's EPS_V): their range, (0, 500]
epsilon_budget = _float_arg(lambda v: 0 < v <= 500, "an epsilon must lie in (0, 500]")
unit_interval = _float_arg(lambda v: 0 < v < 1, "must lie in (0, 1)")
held_out_share = _float_arg(lambda v: 0 <= v < 1, "must lie in [0, 1) (0: train on every document, no held-out part)")


def _int_arg(lo: int, hi: int | None = None):
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {s}" if hi is None else
                                             f"must be an integer from {lo} to {hi}, got {s}")
        return v

    return parse


positive_int = _int_arg(1)
seed_int = _int_arg(0)
MAX_SEEDS = 1000            # an experiment's runs (--seeds N: seeds 0..N-1); more would never finish
seeds_int = _int_arg(1, MAX_SEEDS)
MAX_JOBS = 256          # the library's bound on n_jobs (dptopic._validation.N_JOBS)
jobs_int = _int_arg(1, MAX_JOBS)


def words_or(*keywords: str):
    """A parser for a number of words (an integer >= 2) or one of ``keywords`` (``--n-words``, ``--report-words``)."""
    def parse(s: str):
        if s in keywords:
            return s
        try:
            n = int(s)
        except ValueError:
            n = 0
        if n < 2:
            raise argparse.ArgumentTypeError(f"must be {' or '.join(keywords)} or an integer >= 2, got {s}")
        return n

    return parse
DEFAULT_MAX_VOCAB = 1000
NO_VOCAB_CAP = 2**31 - 1  # max_vocab that keeps every word: corpus.corpus.NO_CAP (a copy: CLI imports stay light)


def max_vocab_arg(s: str) -> int:
    """``--max-vocab``: an integer >= 2, or ``all`` (no cap: every word, as DP set union needs)."""
    if s.strip().lower() == "all":
        return NO_VOCAB_CAP
    return _int_arg(2)(s)


def add_out_args(p, default: str, what: str = "model") -> None:
    """``--out`` and ``--overwrite`` for a command that writes a {what} folder (checked before any work)."""
    p.add_argument("--out", default=default, help=f"new or empty folder for the {what} (default {default})")
    p.add_argument("--overwrite", action="store_true", help=f"replace --out if it already holds a dptopic {what}")


def check_out(a, *suffixes: str) -> None:
    """Refuse an ``--out`` that cannot or must not be written, before training (see ``_io.check_output_dir``).
    ``suffixes`` name sibling folders the command also writes (``runs/demo-nonprivate``)."""
    from .._io import check_output_dir, claim_output

    # held until the command ends (main's _dispatch lets go): another run into the same --out is refused meanwhile,
    # and the check below cannot pass for two runs at once
    for out in (a.out, *(str(a.out).rstrip("/\\") + suf for suf in suffixes)):
        check_output_dir(out, overwrite=a.overwrite, flag="--out")      # a path that may be written at all
        claim_output(out, "--out")
        check_output_dir(out, overwrite=a.overwrite, flag="--out")      # and still may, now that it is held


def eps_delta_pair(s: str) -> tuple:
    """``EPS,DELTA`` with EPS in (0, 500] (the accountants' range) and DELTA in (0, 1)."""
    parts = s.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected EPS,DELTA (e.g. 1.0,1e-5), got {s!r}")
    return epsilon_budget(parts[0].strip()), unit_interval(parts[1].strip())


def df_arg(s: str):
    """``--min-df``/``--max-df``: a document count (``5``) or a fraction of the documents (``0.5``)."""
    try:
        v = int(s)
    except ValueError:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not a count or a fraction") from None
        if not 0 < v <= 1:
            raise argparse.ArgumentTypeError(f"a fraction of the documents must lie in (0, 1], got {s}")
        return v
    if v < 1:
        raise argparse.ArgumentTypeError(f"a document count must be >= 1, got {s}")
    return v


def owner_only_note(source_flag: str, public_flag: str | None = None) -> str:
    """Said after a file written with mode 0600 because it holds figures computed from the documents of
    ``source_flag``, which may be private (they are outside any model's guarantee)."""
    return (f" (readable by you only: it holds figures computed from the documents of {source_flag}"
            + (f"; pass {public_flag} when they are public" if public_flag else "; change its mode to share it") + ")")


#: ``stop_words`` where documents are read into a public vocabulary a server published (randomize, submit, fed-client,
#: a prior corpus): the vocabulary alone says which words count, so that a word it holds, stop word or not, is counted
#: on every contributor's device as on the server
PUBLIC_VOCABULARY_DECIDES = "none"


def load_corpus(spec: str | None, fmt: str = "auto", vocab: str | None = None, text_field: str = "text",
                label_field: str | None = None, max_vocab: int | None = None, min_df=None,
                vocabulary=None, max_df=None, stop_words=None, lowercase=None, drop_empty: bool = True,
                into_model: bool = False, id_field: str | None = None, require_ids: bool = True, tokenizer=None,
                vocab_flag: str | None = "--vocab", user_cuts: bool = False, user_field: str | None = None,
                users_by_folder: bool = False, keep_urls: bool | None = None):
    """Resolve ``--corpus``: ``demo``/``sotu``, ``20newsgroups``, or a path in one of the formats.

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
    tokeniser made its words, as the model's own ``transform`` of texts does. ``vocab_flag``: the option that names a
    UCI file's vocabulary (``vocab``), None for a command that has none. ``user_cuts``: ``max_vocab``, ``min_df``,
    ``max_df`` and ``stop_words`` are the user's flags (``corpus_from_args``), so on a corpus prepared on a public
    vocabulary, where they would choose words from the data, they are refused (internal readers pass their own).
    ``user_field``: the JSONL field / CSV column of each document's person (``user_ids``); ``users_by_folder``: a
    folder of folders, one per person.
    """
    from ..corpus import Vocabulary
    from ..datasets import load_20newsgroups, load_sotu

    cuts_given = dict(max_vocab=max_vocab, min_df=min_df, max_df=max_df)      # None: the format's default
    if vocabulary is not None:
        vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
        max_vocab = min_df = max_df = None  # nothing is chosen from the data
    given = max_vocab is not None or min_df is not None or max_df is not None or stop_words is not None
    cap_given = max_vocab is not None       # the default cap is for a vocabulary built from text only
    cuts = [f for f, v in (("--max-vocab", max_vocab), ("--min-df", min_df), ("--max-df", max_df)) if v is not None]
    max_vocab = DEFAULT_MAX_VOCAB if max_vocab is None else max_vocab
    min_df = 1 if min_df is None else min_df
    text_kw = dict(max_df=max_df, **({} if stop_words is None else {"stop_words": stop_words}),
                   **({} if lowercase is None else {"lowercase": lowercase}))
    if into_model:  # documents read into a fitted model's words: tokenised only (Corpus.from_texts, "match")
        if vocabulary is None:
            raise DPTopicError("internal: into_model needs the model's vocabulary.")
        text_kw = dict(lowercase="match")
    if keep_urls:       # --keep-urls: the words of web addresses, e-mail addresses and @handles are counted
        text_kw["keep_urls"] = True
    def reading_text():     # raw text into a saved model: as the model's own transform of texts, say when it was
        if into_model and tokenizer is not None:      # made by another version of the tokeniser
            from ..corpus.preprocess import warn_if_other_tokenizer

            warn_if_other_tokenizer(tokenizer, stacklevel=3, words=vocabulary.words)

    def fields_apply(kind: str):   # --text-field/--label-field/--id-field name a JSONL field or CSV column
        given_fields = [flag for flag, v, default in (("--text-field", text_field, "text"), ("--label-field", label_field, None),
                                                      ("--id-field", id_field if require_ids else None, None),
                                                      ("--user-field", user_field, None))
                        if v != default]   # an id field looked for only when present (transform's "id") is no flag
        if given_fields:
            raise DPTopicError(f"{'/'.join(given_fields)} name{'s' if len(given_fields) == 1 else ''} a JSONL field or CSV"
                               f" column, and {kind} has none: drop {'it' if len(given_fields) == 1 else 'them'}, or give a"
                               " .jsonl/.csv file (or --format jsonl/csv).")

    if spec in (None, "demo", "sotu", "20newsgroups"):
        fields_apply("the built-in corpus")
        reading_text()
    def vocab_applies(kind: str):  # --vocab is a UCI file's word list, easily taken for --vocabulary (a public one)
        if vocab is not None and vocab_flag is not None:
            instead = ("" if vocabulary is not None or into_model else
                       " (a public word list for any format is --vocabulary FILE, where the command takes one)")
            raise DPTopicError(f"{vocab_flag} names the word list of a UCI bag-of-words file (docword.*.txt), and"
                               f" {kind} is not one: drop {vocab_flag}{instead}.")

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
        from ..corpus.files import broken_link

        raise DPTopicError(f"corpus {spec!r} not found{broken_link(p)}: give 'demo', '20newsgroups' or an existing path.")
    from ..corpus.files import not_a_regular_file
    from ..corpus.readers import auto_format, read_corpus

    odd = None if p.is_dir() else not_a_regular_file(p)
    if odd is not None:         # /dev/zero, a FIFO: said for what it is, before its name is read for a format
        raise DPTopicError(f"corpus {spec!r} {odd}: give a corpus file or folder (save the data to a regular file"
                           " first).")

    with flag_errors(FORMAT_FLAG):
        fmt = auto_format(p) if fmt == "auto" else fmt
    if fmt != "uci":
        vocab_applies(f"a {'text folder' if fmt == 'dir' else 'file of one document per line' if fmt == 'text' else fmt + ' corpus'}")
    if fmt not in ("jsonl", "csv"):
        fields_apply(f"a {'text folder' if fmt == 'dir' else 'file of one document per line' if fmt == 'text' else fmt + ' corpus'}")
    if fmt not in ("npz", "uci"):           # words already tokenised are read exactly
        reading_text()
    if fmt in ("npz", "uci"):
        if lowercase is not None:
            raise DPTopicError(f"--lowercase/--no-lowercase apply to raw text, not to a {fmt} corpus, whose words are"
                               f" already tokenised: drop the flag, or prepare the corpus again from its text.")
        if keep_urls:
            raise DPTopicError(f"--keep-urls applies to raw text, not to a {fmt} corpus, whose words are already"
                               " tokenised: drop the flag, or prepare the corpus again from its text with it.")
        if vocabulary is not None and stop_words not in (None, PUBLIC_VOCABULARY_DECIDES) and not into_model:
            raise DPTopicError(f"--stop-words applies to raw text, and a {fmt} corpus restricted to --vocabulary keeps"
                               " every word of the list: take the stop words out of the list instead.")
    with flag_errors({**FORMAT_FLAG, "vocabulary": "--vocabulary"}):
        c = read_corpus(p, fmt, vocab=vocab, text_field=text_field, label_field=label_field, id_field=id_field,
                        require_ids=require_ids, vocabulary=vocabulary, **cuts_given,
                        stop_words=None if into_model else stop_words,
                        lowercase="match" if into_model else lowercase, drop_empty=drop_empty,
                        keep_supplied_vocabulary=user_cuts, vocab_flag=vocab_flag, user_field=user_field,
                        users_by_folder=users_by_folder, **({"keep_urls": True} if keep_urls else {}))
    if user_cuts and fmt == "npz" and vocabulary is None and c.metadata.get("vocabulary_source") == "supplied":
        if stop_words not in (None, PUBLIC_VOCABULARY_DECIDES):
            cuts = cuts + ["--stop-words"]    # a prune, which also chooses words by the data (drops unseen ones)
        if cuts:
            raise DPTopicError(f"{spec!r} was prepared on a public vocabulary (--vocabulary), and {' / '.join(cuts)}"
                               " would prune it by the data (a prune keeps only words the documents hold), which the"
                               " guarantee does not cover: drop"
                               f" {'it' if len(cuts) == 1 else 'them'}, or prepare the corpus again with a smaller"
                               " word list (without the stop words).")
    return c


def reading_note(spec, fmt: str, text_field: str = "text") -> str | None:
    """One line for stderr saying which format ``--format auto`` read the path ``spec`` in and which field held the
    text (None for a built-in corpus, a shard folder or a format given): the choice is never silent."""
    if fmt != "auto" or spec in (None, "demo", "sotu", "20newsgroups"):
        return None
    from ..corpus.readers import FORMAT_NAMES, auto_format, file_suffix, is_tab_separated

    p = Path(spec)
    chosen = auto_format(p)
    by = ("it is a folder" if chosen == "dir" else "by its name, docword.*" if chosen == "uci" else
          f"by its extension {file_suffix(p)!r}")
    if chosen == "csv" and is_tab_separated(p):
        from ..corpus.files import tab_header_rows

        rows = tab_header_rows(p)
        what = ("tab-separated values with Orange's header rows (names, types, flags)" if rows > 1 else
                "tab-separated values with one header row")
    else:
        what = "CSV with one header row" if chosen == "csv" else FORMAT_NAMES[chosen]
    field = ({"jsonl": f", the text from field {text_field!r}", "csv": f", the text from column {text_field!r}"}
             .get(chosen, ""))
    return (f"read {str(spec)!r} as {what}{field} (--format auto, {by};"
            f" {'--format and --text-field choose' if field else '--format chooses'} otherwise)")


def say_reading(a, n_topics: int | None = None, vocab_size: int | None = None) -> None:
    """``--format auto`` never guesses silently: which format and field the corpus file was read in, one line on stderr
    (once), said just before the first step that spends or trains, once the input is known good (so that an error
    about the input stays the one line on stderr). ``n_topics``/``vocab_size``: first refuse a vocabulary too small for
    the topics, as fit would."""
    if n_topics is not None and vocab_size is not None:
        from ..models.base import check_topics_fit_vocabulary

        check_topics_fit_vocabulary(n_topics, vocab_size)
    if getattr(a, "_reading_said", False) or getattr(a, "corpus", None) is None:
        return
    a._reading_said = True
    note = reading_note(a.corpus, getattr(a, "format", "auto"), getattr(a, "text_field", "text"))
    if note is not None:
        import sys

        print(f"note: {note}", file=sys.stderr)


def without_copies_said(test, train, console, private: bool):
    """The held-out documents that repeat no training document (``dptopic.corpus.without_copies``), saying how many
    were left out. ``private``: the count said is an exact statistic of the private corpus, labelled as the corpus
    line labels its sizes."""
    from ..corpus import without_copies

    kept, n_left_out = without_copies(test, train)
    if n_left_out:
        console.print(f"held-out: {n_left_out} of the {test.n_docs} held-out documents repeat a training"
                      " document and are left out of the evaluation"
                      + (" [yellow](exact counts of the private corpus: outside the guarantee; shown here, not"
                         " saved)[/]" if private else ""))
    return kept


def read_into_model(model, spec, fmt: str = "auto", vocab=None, text_field: str = "text", *, flag: str,
                    keep_empty: bool, **kw):
    """Documents read into a saved model's vocabulary, by one rule for ``transform``, ``export`` and ``report
    --reference``: when none of them has a word of the vocabulary they are refused in one line (nothing could be
    inferred or scored from them: most often another language, corpus or text field); otherwise a document without one
    is kept as a row (``keep_empty``: transform and export, whose rows follow the input; its row is the prior mean) or
    left out (figures read from the documents). ``flag``: the option that named ``spec``, for the refusal."""
    from ..corpus.corpus import no_word_of_vocabulary

    docs = load_corpus(spec, fmt, vocab, text_field, None, vocabulary=model.vocabulary_, drop_empty=False,
                       into_model=True, tokenizer=getattr(model, "tokenizer_", None), **kw)
    if docs.n_docs and not docs.n_tokens:
        raise DPTopicError(no_word_of_vocabulary(docs.n_docs, docs.vocabulary, f"{flag} {spec!r}", "the model's"))
    return docs if keep_empty else docs.drop_empty()


def add_corpus_args(p, required=False, preprocessing=True):
    """``--corpus`` and how to read it; ``preprocessing=False`` where documents are read into a model's vocabulary
    (nothing is chosen from them, so the vocabulary options do not apply)."""
    p.add_argument("--corpus", default=None, required=required,
                   help="'demo' (State of the Union paragraphs), '20newsgroups' (its training split), or a path"
                   if required else "'demo' (State of the Union paragraphs, default), '20newsgroups' (its training"
                   " split), or a path")
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help="input format (auto: by name; text = one document per line)")
    p.add_argument("--vocab", default=None, help="UCI vocab file (default: next to the docword file)")
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    p.add_argument("--label-field", default=None, help="JSONL field / CSV column holding a label")
    if preprocessing:
        add_preprocessing_args(p)


def add_model_arg(p, help: str = "a saved model folder") -> None:
    """The model folder, as ``dptopic CMD MODEL`` (as ``privacy verify`` takes it) or ``--model MODEL``; resolved into
    ``a.model`` by :func:`resolve_model_arg` before the command runs."""
    p.add_argument("model_pos", nargs="?", default=None, metavar="MODEL", help=f"{help} (or --model MODEL)")
    p.add_argument("--model", default=None, help=help)
    p.set_defaults(_model_of=p.prog)


def resolve_model_arg(a) -> None:
    """``a.model`` from the positional MODEL or ``--model`` (one of them; both only when they agree)."""
    prog = getattr(a, "_model_of", None)
    if prog is None:
        return
    pos, opt = a.model_pos, a.model
    if pos is not None and opt is not None and pos != opt:
        raise DPTopicError(f"two models given, {pos!r} and --model {opt!r}: give one ({prog} MODEL or --model MODEL).")
    a.model = opt if opt is not None else pos
    if a.model is None:
        raise DPTopicError(f"no model given: name a saved model folder ({prog} MODEL, or --model MODEL).")


def add_preprocessing_args(p):
    g = p.add_argument_group("preprocessing (a vocabulary built from the data is not private: to train on a private"
                             " corpus, 'dptopic train' takes --vocabulary FILE or --private-vocabulary)")
    g.add_argument("--max-vocab", type=max_vocab_arg, default=None, metavar="N|all",
                   help="keep the N most frequent words, or all of them (default 1000 for text; a prepared .npz or a"
                        " UCI file keeps its own words unless given)")
    g.add_argument("--min-df", type=df_arg, default=None, metavar="N|F",
                   help="keep words in at least N documents, or a fraction F of them (default 1)")
    g.add_argument("--max-df", type=df_arg, default=None, metavar="N|F",
                   help="drop words in more than N documents, or more than a fraction F of them (default: no limit;"
                        " 0.5 drops filler words that occur everywhere)")
    g.add_argument("--stop-words", default=None, metavar="english|none|FILE|english+FILE",
                   help="stop words to drop: scikit-learn's English list (default for text), none, a file with one"
                        " word per line (instead of the English list), or english+FILE (both)")
    g.add_argument("--lowercase", default=None, action=argparse.BooleanOptionalAction,
                   help="fold raw text to lower case (default: yes)")
    g.add_argument("--keep-urls", action="store_true", default=None,
                   help="count the words of web addresses, e-mail addresses and @handles in raw text (default: they"
                        " are dropped before the text is split into words; docs/preprocessing.md)")


def user_args(a) -> dict:
    """``load_corpus``'s ``user_field``/``users_by_folder`` for ``train --unit user`` (empty otherwise)."""
    if getattr(a, "unit", None) != "user":
        return {}
    return {"user_field": getattr(a, "user_field", None), "users_by_folder": getattr(a, "user_field", None) is None}


def refuse_data_cuts(a, given: str) -> None:
    """With the words given (``--vocabulary``) or chosen by DP set union (``--private-vocabulary``), the cuts that
    choose words from the data cannot apply: refused in one line (``given`` says what chose the words)."""
    cuts = [flag for flag, v in (("--max-vocab", a.max_vocab), ("--min-df", a.min_df),
                                 ("--max-df", getattr(a, "max_df", None)))
            if v is not None and not (flag == "--max-vocab" and v == NO_VOCAB_CAP)]    # 'all' chooses nothing
    if cuts:
        verb = "chooses" if len(cuts) == 1 else "choose"
        raise DPTopicError(f"{given}, so {' / '.join(cuts)} (which {verb} words from the data) cannot apply: drop one"
                           " or the other.")


def corpus_from_args(a):
    corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, a.max_vocab, a.min_df,
                         max_df=getattr(a, "max_df", None), stop_words=getattr(a, "stop_words", None),
                         lowercase=getattr(a, "lowercase", None), user_cuts=True, **user_args(a),
                         keep_urls=getattr(a, "keep_urls", None))
    if getattr(a, "max_vocab", None) is None and a.corpus not in (None, "demo", "sotu", "20newsgroups"):
        note_vocabulary_cut(corpus)     # a user's text (the built-in corpora are documented with their cap)
    return corpus


def vocabulary_cut_note(corpus) -> str | None:
    """One line saying how many words and what share of the tokens the default ``--max-vocab`` kept, when it left
    words out of a vocabulary built from text; None when it left none out."""
    cut = getattr(corpus, "_vocabulary_cut", None)
    if not cut:
        return None
    share = corpus.n_tokens / cut["tokens_read"] if cut["tokens_read"] else 1.0
    return (f"note: --max-vocab {cut['max_vocab']} (the default) kept the {cut['max_vocab']} most frequent of"
            f" {cut['words']} words, {share:.0%} of the {cut['tokens_read']} tokens read; --max-vocab N keeps more"
            f" (--max-vocab all keeps them all).")


class ExitStatus(int):
    """What a command function returns to end with a status of its own (``privacy verify``'s 3); any other return
    value is ignored and a command that returns ends with 0."""


_PENDING_NOTES: list = []   # notes for stderr, printed once the command has succeeded (an error stays one line)


def note_vocabulary_cut(corpus) -> None:
    line = vocabulary_cut_note(corpus)
    if line and line not in _PENDING_NOTES:
        _PENDING_NOTES.append(line)


def flush_notes(show: bool = True) -> None:
    """Print the pending notes to stderr (``show=False``: drop them, as when the command ends in an error)."""
    lines = list(_PENDING_NOTES)
    _PENDING_NOTES.clear()
    for line in lines if show else ():
        print(line, file=sys.stderr)


SPLIT_NAMES = {"position": "held out by position, as the word-level trainers split",
               "stable": "held out by each document's words, as the other trainers split",
               "person": "held out by person: all of a person's documents on one side, by a keyed hash of their id"}


def corpus_line(corpus, train, test, private: bool, word_level: bool = False, saved: bool = False,
                split: str | None = None) -> str:
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
               f"train on all {train.n_docs} (--test-size 0: no held-out part, so no held-out evaluation; run"
               " 'dptopic evaluate' on documents kept aside)"))
    if private and word_level:
        line += " [yellow](sizes are public under word-level DP: a word replacement changes neither)[/]"
    elif private:
        line += (" [yellow](exact sizes of the private corpus: outside the guarantee; "
                 + ("its document counts are saved with the metrics, as --save-metrics asks)[/]" if saved else "shown here, not saved)[/]"))
    return line


SUPPORT_SOURCE = "decided from the release alone: post-processing, inside the guarantee, no budget spent"
"""What the support flags are, wherever they are printed (they are no figure read from the private data)."""

MORE_SUPPORT = ("more documents, a larger epsilon, public documents of the domain (a public word list, or public"
                " topics to start from), or fewer topics")
"""What would let more topics stand above the noise, as every output says it."""


def topic_support(model):
    """``(supported, background)`` of a model, one bool per topic each: ``supported`` is None for a model that
    carries no ``supported_topics_`` (non-private LDA, the word-level trainers, a folder saved before the flags were
    kept): not assessed, and then nothing is hidden. ``background`` comes from ``background_topics_`` or, without it,
    from ``background_topic_ids()``."""
    import numpy as np

    K = int(np.asarray(model.components_).shape[0])
    s = getattr(model, "supported_topics_", None)
    supported = None
    if s is not None and np.asarray(s).shape == (K,):
        supported = [bool(x) for x in np.asarray(s, dtype=bool)]
    b = getattr(model, "background_topics_", None)
    if b is not None and np.asarray(b).shape == (K,):
        background = [bool(x) for x in np.asarray(b, dtype=bool)]
    else:
        ids = set(model.background_topic_ids()) if hasattr(model, "background_topic_ids") else set()
        background = [k in ids for k in range(K)]
    return supported, background


def support_summary(supported) -> str:
    """"K of N topics stand above the noise of the release (...)"."""
    from ..reporting.html import standing_text

    k, n = sum(bool(s) for s in supported), len(supported)
    text = standing_text(k, n)
    if text.startswith("Only "):        # the terminal's line counts, the page's banner stresses
        text = text[len("Only "):]
    return f"{text} above the noise of the release ({SUPPORT_SOURCE})"


def refuse_show_unsupported(model, spec) -> None:
    """``--show-unsupported`` on a model that carries no support assessment: refused in one line."""
    if topic_support(model)[0] is None:
        from ..errors import DPTopicError

        raise DPTopicError(f"--show-unsupported: --model {str(spec)!r} ({type(model).__name__}) carries no assessment"
                           " of which topics stand above the noise (only the document-level private trainers, docdp,"
                           " docdp-cooc and svi, make one), so every topic is shown already: drop --show-unsupported.")


def print_topics(model, n=10, max_topics=None, console=None, show_unsupported=False,
                 hint="--show-unsupported shows their words"):
    """The top words of each topic as a table. For a model with ``supported_topics_``: the line "K of N topics
    stand above the noise", and the topics below it listed apart, their words hidden unless ``show_unsupported``
    (``hint`` says how to show them)."""
    console = console or make_console()
    from rich.table import Table

    from ..evaluation.topic_quality import ranking_text, word_ranking

    supported, background = topic_support(model)
    # the order the words are shown in is said with them (DocDPCooccurrence ranks by relevance)
    t = Table(title=f"Top {n} words per topic of {type(model).__name__}, {ranking_text(word_ranking(model))}",
              show_lines=False)
    t.add_column("topic", justify="right")
    t.add_column("words")
    hidden = []
    for k, words in enumerate(model.topic_words(n)):
        if max_topics is not None and k >= max_topics:
            break
        below = supported is not None and not supported[k]
        if below and not show_unsupported:
            hidden.append(k)
            continue
        label = str(k) + (" (background)" if background[k] else "") + (" (below the noise)" if below else "")
        t.add_row(label, " ".join(words))
    if t.row_count:
        print_table(console, t)
    if supported is None:
        return
    console.print(support_summary(supported))
    below = [k for k in range(len(supported)) if not supported[k]]
    if below:
        names = ", ".join(f"{k} (background)" if background[k] else str(k) for k in below)
        console.print(f"[yellow]below the noise[/]: topic{'' if len(below) == 1 else 's'} {names}"
                      + (f": words hidden ({hint})" if hidden else ": their words are mostly noise")
                      + f"; more topics would stand out with {MORE_SUPPORT}")


def print_privacy(report: dict, console=None):
    console = console or make_console()
    from rich.table import Table

    if not isinstance(report, dict):
        report = {}
    t = Table(title="Privacy report", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value", max_width=100, overflow="fold")     # prose wraps, even in a file
    if not report.get("private"):
        t.add_row("private", "NO")
        for key in ("mode", "reason"):
            if key in report:
                t.add_row(key, str(report[key]))
        if "claimed_by_paper" in report:
            claim = report["claimed_by_paper"]
            t.add_row("paper's claim (not proven)",
                      f"eps = {_g(claim.get('epsilon'))}" if isinstance(claim, dict) else _g(claim))
        if "epsilon_nominal" in report:
            t.add_row("eps, paper's nominal count-release claim", _g(report["epsilon_nominal"]))
        part = report.get("count_release_epsilon")
        if part:
            if isinstance(part, dict):
                t.add_row("partial figure: count releases only (NOT the model)",
                          f"eps basic {_g(part.get('epsilon_basic'))}, tight PLD {_g(part.get('epsilon_pld'))},"
                          f" RDP {_g(part.get('epsilon_rdp'))} (delta={_fmt_delta(part.get('delta'))},"
                          f" {part.get('unit')}-level)")
            else:
                t.add_row("partial figure: count releases only (NOT the model)", str(part))
        _dataset_row(t, report)
        _report_tail(t, report, ("scope", "vocabulary", "replayed_iterations"), console)
        return
    from ..reporting import privacy_card

    headline = privacy_card(report, check=False)   # the card's rule: the trainer's own reasons first, then the vocabulary
    partial = (headline.get("guarantee_note") or ("partial: see scope" if headline["guarantee"] == "partial" else "")
               if headline["guarantee"] == "partial" else "")
    from ..accounting.ledger import NO_GUARANTEE, claims_no_guarantee

    if claims_no_guarantee(report):    # noise was added, but its events add up to no guarantee: the card says none too
        t.add_row("private", "noise added, but no guarantee (see GUARANTEE below)")
    else:
        t.add_row("private", "yes" + (f" ({partial})" if partial else ""))
    t.add_row("privacy unit", str(report.get("unit")))
    if report.get("user_bound"):    # a guarantee per person: how each person's contribution was bounded
        t.add_row("each person's contribution", str(report["user_bound"]))
    if headline.get("user_field"):  # which field of the input named the person
        t.add_row("person field", str(headline["user_field"]))
    if isinstance(report.get("public_input"), dict):    # fit(public_corpus=) / --public-corpus: read in the clear
        t.add_row("public input", str(report["public_input"].get("summary")))
    # the card's relation: a local report composing a contributor's reports names the contributor's, as its epsilon
    t.add_row("neighbouring relation", str(headline.get("neighbouring_relation") or report.get("neighbouring_relation")))
    t.add_row("theorem", str(report.get("theorem")))
    delta = report.get("delta")

    if claims_no_guarantee(report):
        t.add_row("[bold]GUARANTEE[/]", f"[bold red]NONE[/] ({report['epsilon_method'][len(NO_GUARANTEE):]}); the rows"
                                        " below are what the events give, not a guarantee")
    else:
        eps = _report_number(report, "epsilon")
        from ..accounting.card import PURE_METHOD

        method = str(headline.get("epsilon_is") or report.get("epsilon_method", "as reported"))
        if headline.get("delta") == 0.0:    # the card's rule: a pure headline holds with delta = 0, and says so
            head = f"epsilon = {_g(eps)}, {PURE_METHOD}"
            method = method.replace(f"; {PURE_METHOD}", "").replace(PURE_METHOD, "") or "as reported"
        else:
            head = f"epsilon = {_g(eps)} at delta = {_fmt_delta(delta)}"
        t.add_row("[bold]GUARANTEE[/]", f"[bold]{head}[/] ({method}); the rows below are cross-checks")
        card = headline                     # the card built above
        if card.get("pure_note"):           # the same events as pure DP at almost the same epsilon
            t.add_row("pure DP", str(card["pure_note"]))
        note = card.get("strength_note")      # the card's rule: above epsilon 16, weak
        if note:
            t.add_row("[bold yellow]strength[/]", str(note))
    per = report.get("per_document")
    if per:
        if isinstance(per, dict):
            ex = per.get("examples")
            t.add_row("per document (word-level)", f"{per.get('rule')}: " + ", ".join(
                f"L={L}: {_g(e)}" for L, e in (ex.items() if isinstance(ex, dict) else ())))
        else:
            t.add_row("per document (word-level)", str(per))
    if headline.get("fed_composition"):
        t.add_row("per-user epsilon (FedLDA)", str(headline["fed_composition"]))
    figures = headline.get("figures") if isinstance(headline.get("figures"), dict) else {}
    for key, name in (("epsilon_word_contributor", "eps per contributor, word level"),
                      ("epsilon_word", "eps per report, word level"), ("epsilon_doc", "eps per report, document level")):
        if isinstance(figures.get(key), dict):     # local DP: the word- and report-level figures beside the headline
            t.add_row(name, f"{_g(figures[key]['epsilon'])} (delta=0): {str(figures[key]['what']).split(': ', 1)[-1]}")
    if "epsilon_per_entry" in report:
        t.add_row("epsilon per entry", _g(report["epsilon_per_entry"]))
    elif "epsilon_nominal" in report:
        t.add_row("cross-check: paper's nominal claim", _g(report["epsilon_nominal"]))
    if "epsilon_paper" in report:
        fresh = (report.get("parameters") or {}).get("final_release") == "fresh"
        t.add_row("cross-check: paper (T(eps_L+eps_I)" + (" + eps_L, the final release)" if fresh else ")"),
                  _g(report["epsilon_paper"]))
    if "epsilon_basic" in report:
        t.add_row(f"cross-check: basic composition (delta={_fmt_delta(report.get('delta_basic', 0))})",
                  _g(report["epsilon_basic"]))
    added = isinstance(report.get("vocabulary_selection"), dict) and isinstance(report.get("topic_model"), dict)
    for key, name in (("epsilon_pld", "eps_V + topic model's PLD (Thm 4.1)" if added else "tight PLD"),
                      ("epsilon_pld_tight", "tight PLD over every event"),
                      ("epsilon_rdp", "eps_V + topic model's RDP (Thm 4.1)" if added else "RDP")):
        if key in report:
            t.add_row(f"cross-check: {name} (delta={_fmt_delta(delta)})", _g(report[key]))
    for key, name in (("group_privacy", "group privacy"), ("replacement", "one person replaced")):
        if isinstance(headline.get(key), dict) and headline[key].get("note"):    # computed from the events
            t.add_row(name, str(headline[key]["note"]))
    t.add_row("noise", f"{report.get('noise')}{' (secure, CSPRNG)' if report.get('secure_noise') else ''}")
    _dataset_row(t, report)
    _report_tail(t, report, ("parameters", "scope", "note", "report_words_note", "vocabulary", "randomness",
                                "replayed_iterations"), console)


def _g(x) -> str:
    """An epsilon of a report for display: a number rounded UP at 4 significant digits (never shown below the one
    computed, as the privacy card does), anything else (an edited model.json) as it is."""
    from ..accounting.card import epsilon_text

    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        return str(x)
    try:
        return epsilon_text(float(x))
    except (TypeError, ValueError, OverflowError):
        return str(x)


def _fmt_delta(d) -> str:
    try:
        return f"{float(d):g}"
    except (TypeError, ValueError, OverflowError):
        return "0"


def _report_number(report: dict, key: str) -> float:
    """A number a private report must carry; a report missing it (an edited or truncated model.json) is refused
    in one line rather than half-printed."""
    try:
        return float(report[key])
    except (KeyError, TypeError, ValueError, OverflowError):
        raise DPTopicError(f"the privacy report says private but has no valid {key!r}: the model file was edited or"
                           f" is damaged; re-train or re-save the model.") from None


def _dataset_row(t, report) -> None:
    """The dataset ledger's line: this dataset's total over every release so far (docs/budget.md)."""
    led = report.get("dataset_ledger")
    if isinstance(led, dict) and led.get("line"):
        t.add_row("[bold]dataset[/]", f"{led.get('dataset')}: {led['line']}")


def _report_tail(t, report, keys, console):
    """The descriptive rows, the table, then the seed warning (if any) in plain sight."""
    warnings = report.get("warnings") or []
    for w in (warnings if isinstance(warnings, (list, tuple)) else [warnings]):
        t.add_row("warning", str(w))
    for key in keys:
        if key in report:
            v = report[key]
            t.add_row(key, ", ".join(f"{k}={x:.4g}" if isinstance(x, float) else f"{k}={x}" for k, x in v.items())
                      if isinstance(v, dict) else str(v))
    if report.get("noise_reproducible"):
        t.add_row("noise reproducible", "YES: an explicit seed was given")
    print_table(console, t)
    if report.get("noise_reproducible"):
        warn(report.get('warning', 'the noise is reproducible from the seed.'))


def read_vocabulary(path):
    """A public vocabulary file (``--vocabulary``): one word per line, blank lines and surrounding spaces ignored; or
    ``wordfreq:LANG[:SIZE]``, a general word list of that language (:mod:`dptopic.corpus.wordlist`)."""
    from ..corpus import Vocabulary
    from ..corpus.wordlist import general_word_list, parse_spec

    spec = parse_spec(str(path))
    if spec is not None:
        return Vocabulary(general_word_list(*spec))
    p = Path(path)
    if p.is_dir():
        raise DPTopicError(f"--vocabulary {str(path)!r} is a folder: give the vocabulary file itself, a text file with"
                           " one word per line.")
    if not p.is_file():
        from ..corpus.files import broken_link, not_a_regular_file

        odd = not_a_regular_file(p)
        if odd is not None:     # /dev/zero, a FIFO: named for what it is, not as missing
            raise DPTopicError(f"--vocabulary {str(path)!r} {odd}: give a regular text file with one word per line.")
        raise DPTopicError(f"vocabulary file {str(path)!r} not found{broken_link(p)}: give a text file with one word"
                           " per line.")
    from ..corpus.files import read_text_file   # strict UTF-8: a Latin-1 'café' must not become another word

    words = [ln.strip() for ln in read_text_file(p, "a text file with one word per line").splitlines() if ln.strip()]
    if len(words) < 2:
        raise DPTopicError(f"vocabulary file {str(path)!r} has {len(words)} word(s): a vocabulary needs at least 2, one per line.")
    long = [w for w in words if len(w.split()) > 3]
    if len(long) * 2 > len(words):        # an n-gram vocabulary has a few spaces per line, not sentences
        eg = long[0] if len(long[0]) <= 60 else long[0][:57] + "..."
        raise DPTopicError(f"vocabulary file {str(path)!r} holds text, not words ({len(long)} of its {len(words)} lines"
                           f" have more than three words, e.g. {eg!r}): a vocabulary is one word per line; a corpus"
                           " goes to --corpus.")
    return Vocabulary(words)


# ------------------------------------------------------------- experiments (shared by every experiment command)
def experiment_corpora(name, max_vocab=1000, max_docs=None):
    """``(train, test)`` for ``demo`` (a fixed 80/20 split) or ``20newsgroups`` (its own split)."""
    from ..datasets import load_20newsgroups

    if name == "20newsgroups":
        train = load_20newsgroups("train", max_vocab=max_vocab)
        test = load_20newsgroups("test", vocabulary=train.vocabulary)
    else:
        train, test = load_corpus(name, max_vocab=max_vocab).train_test_split(0.2, seed=0)
    if max_docs and train.n_docs > max_docs:
        train = train.subset(range(max_docs))
    return train, test


def add_common_experiment_args(p, topics=50, iterations=100, seeds=3, out="runs/experiment"):
    p.add_argument("--corpus", default="demo", choices=("demo", "20newsgroups"))
    p.add_argument("--topics", type=positive_int, default=topics)
    p.add_argument("--iterations", type=positive_int, default=iterations)
    p.add_argument("--seeds", type=seeds_int, default=seeds)
    p.add_argument("--max-docs", type=positive_int, default=None, help="use only the first N training documents (default: all of them)")
    p.add_argument("--out", default=out)


def add_seed_arg(p) -> None:
    p.add_argument("--seed", type=seed_int, default=None,
                   help="reproduce a run (the docs' figures use --seed 0); default: fresh OS entropy, printed")


def experiment_seed(a, console) -> int:
    """The experiment's seed: ``--seed``, or a fresh one from the OS that is printed so the run can be
    repeated. Experiments are reproductions on public benchmark corpora; they release no model."""
    if a.seed is None:
        import secrets

        a.seed = secrets.randbelow(2**31)
        console.print(f"seed {a.seed} (pass --seed {a.seed} to repeat this run)")
    return a.seed


def print_verdict(console, s, out, files):
    checks = s["paper_shape_checks"]
    untested = sum(v is None for v in checks.values())
    if checks and untested == len(checks):   # nothing tested: no verdict either way
        console.print(f"This run tests none of the paper's qualitative claims (give grids of two values or more):"
                      f" {checks}")
    else:
        verdict = "has" if s["has_paper_shape"] else "does NOT have"
        note = f" ({untested} claim(s) not tested by this run)" if untested else ""
        console.print(f"The result {verdict} the paper's qualitative shape{note}: {checks}")
    console.print("written: " + ", ".join(str(Path(out) / f) for f in files))


