"""``corpus``: corpus tools."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .._io import marked_run
from ..backends import write_shards
from ..corpus.corpus import tokenising_progress
from ..corpus.shards import ShardSet, check_prepared_out, folder_shards
from ..corpus.summary import corpus_summary, shard_set_summary
from ..dataset_ledger.people import read_aliases
from ..errors import DPTopicError
from ..protocol.document_reports import report_file_summary
from ..reporting.terminal import esc, make_console, prepared_line, print_corpus_summary
from ._common import refuse_data_cuts
from ._flags import CORPUS_FLAGS, with_flag_names
from ._run_common import corpus_from_args, load_corpus, read_vocabulary


def corpus_hints(info: dict, max_df_given: bool, stop_words_given: bool, sharded: bool = False) -> str | None:
    """The hints ``corpus info`` prints under a corpus summary (:func:`print_corpus_summary`): words in most documents
    (unless a ``--max-df`` cut was given) and the user's own stop words (unless stop words were given or the corpus was
    prepared with its own); for a shard folder (``sharded``) they are for preparing the shards."""
    hints = []
    most = info["words_in_most_documents"]
    if most and not max_df_given:
        hints.append(f"{len(most)} word{'s are' if len(most) > 1 else ' is'} in more than half of the documents"
                     f" ({', '.join(most[:5])}{', ...' if len(most) > 5 else ''}), often filler: --max-df 0.5"
                     f" drops {'them' if len(most) > 1 else 'it'}")
    reading = (info.get("metadata") or {}).get("reading")
    chosen = isinstance(reading, dict) and reading.get("stop_words") not in (None, "english")   # prepared with its own
    if not stop_words_given and not chosen:
        hints.append("--stop-words english+FILE adds your own words to the English list (FILE alone replaces it)")
    return ("when preparing the shards: " if sharded else "") + "; ".join(hints) if hints else None


def _prepared_corpus(a):
    """``--vocabulary FILE``: the corpus on that public word list, which it remembers (a private fit then records
    the vocabulary as supplied); otherwise the vocabulary options choose the words from the data."""
    if a.vocabulary is None:
        return corpus_from_args(a)
    refuse_data_cuts(a, "--vocabulary gives the words")
    # stop words are a fixed list, not read from the data: as for dptopic train, they apply to the text
    return load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, lowercase=a.lowercase,
                       stop_words=a.stop_words, vocabulary=read_vocabulary(a.vocabulary))


@with_flag_names({**CORPUS_FLAGS, "vocabulary": "--vocabulary", "out": "--out", "n_shards": "--shards",
                  "directory": "--out"})
def cmd_corpus_prepare(a):
    check_prepared_out(a.out, a.shards, a.overwrite)

    with tokenising_progress():
        corpus = _prepared_corpus(a)
    if a.private:
        corpus.metadata["private"] = True      # every shard too: each is a part of the private corpus
    if a.shards is not None:

        with marked_run(a.out, "corpus prepare"):      # corpus.shard_folder.SHARD_RUN: a folder is a shard set
            # the new set is written under temporary names and takes the old one's place only once complete: a run
            # that fails part-way leaves the shards there as they were
            paths = write_shards(corpus, a.out, a.shards, replace=True)
        make_console().print(prepared_line(corpus, a.out, paths, a.shards))
        return
    make_console().print(prepared_line(corpus, corpus.save(a.out)))


PRIVATE_STATS_WARNING = ("these statistics are computed from private documents and are NOT protected by"
                         " differential privacy: do not publish or share them")


def _shard_summary(a):
    """The summary of a folder of corpus shards, read one shard at a time, or ``None`` when ``a.corpus`` is not one.
    Shards are summarised as prepared: options that would read text or cut the vocabulary are refused."""
    p = Path(a.corpus) if isinstance(a.corpus, str) else None
    if p is None or a.format not in ("auto", "dir") or not p.is_dir() or not folder_shards(p):
        return None
    given = [flag for flag, v, default in (("--vocab", a.vocab, None), ("--text-field", a.text_field, "text"),
                                           ("--label-field", a.label_field, None),
                                           ("--max-vocab", a.max_vocab, None), ("--min-df", a.min_df, None),
                                           ("--max-df", a.max_df, None), ("--stop-words", a.stop_words, None),
                                           ("--lowercase/--no-lowercase", a.lowercase, None)) if v != default]
    if given:
        raise DPTopicError(f"{a.corpus!r} is a folder of corpus shards, summarised as 'corpus prepare' wrote them:"
                           f" {given[0]} does not apply to it; drop it, or prepare the shards again with it.")
    return shard_set_summary(ShardSet(folder_shards(p), folder=p), a.top)


@with_flag_names(CORPUS_FLAGS)
def cmd_corpus_info(a):
    reports = report_file_summary(a.corpus)
    if reports is not None:
        if a.json:
            print(json.dumps(reports, indent=2))
        else:
            make_console().print(reports["summary"])
        return
    info = _shard_summary(a)
    sharded = info is not None
    if not sharded:
        a.unit = "user" if a.user_field is not None else None     # the people, read as train --unit user reads them
        with tokenising_progress():
            corpus = corpus_from_args(a)

        aliases = ()
        if getattr(a, "person_aliases", None) is not None:

            aliases = read_aliases(a.person_aliases)
        info = corpus_summary(corpus, a.top, aliases)
    private = bool(info.get("metadata", {}).get("private")) or a.private
    if private:
        info["warning"] = PRIVATE_STATS_WARNING
        print(f"warning: {PRIVATE_STATS_WARNING}.", file=sys.stderr)
    if a.json:
        print(json.dumps(info, indent=2))
        return
    con = make_console()
    print_corpus_summary(info, con)
    # the cuts of a shard folder were made when it was prepared: the hints are for 'corpus prepare' then
    hint = corpus_hints(info, a.max_df is not None, a.stop_words is not None, sharded)
    if hint:
        con.print(f"[dim]{esc(hint)}[/]", markup=True)


