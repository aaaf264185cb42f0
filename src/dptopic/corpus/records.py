"""Corpus files read into records: each document's text, label, id and person as the file holds them (or a UCI
file's counts), every field checked, before any word is chosen. ``Corpus.from_jsonl``, ``from_csv``, ``from_uci`` and
``from_directory`` build a :class:`~dptopic.corpus.Corpus` from them, and :func:`dptopic.corpus.readers.read_corpus`
picks one by the file's name. This module sits below ``corpus.py`` (it builds no Corpus), so the two never import each
other; the checks of a single value that both use (a blank or missing label, an invisible character in a person's id)
live here."""
from __future__ import annotations

import json
import math
import os
import re
import unicodedata
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._io import load_json, pairs_noting_repeats
from ..errors import DPTopicError, ParameterError
from .files import (
    _column_list,
    _nul_error,
    _open_text,
    _other_delimiter,
    _other_delimiter_char,
    _read_csv,
    orange_header_rows,
    read_text_file,
)
from .shard_folder import check_unfinished_shard_folder


def invisible_character(s: str) -> str | None:
    """The first control or format character (Unicode category Cc or Cf: NUL, tab, zero-width space, BOM, ...) in
    ``s`` and where it stands, as ``"U+0000 at character 2"``; None when it holds none. A person id holding one is
    refused: ``"v"`` and ``"v\u0000"`` look like one id (and a NumPy string array even drops the NUL) but would be two
    people, so one person could be split in two, or another filed under a victim's id."""
    if s.isprintable() and all(unicodedata.category(ch) != "Cf" for ch in s):
        return None     # isprintable() is False for every Cc (and for spaces other than ' ', checked below)
    for at, ch in enumerate(s, 1):
        if unicodedata.category(ch) in ("Cc", "Cf"):
            return f"U+{ord(ch):04X} at character {at}"
    return None


def _json_kind(v) -> str:
    return {dict: "an object", list: "a list", type(None): "null", bool: "true/false"}.get(type(v), "a number")


def _missing_label(v) -> bool:
    """A label that is not there: None, NaN (of any float type: Python's, NumPy's float32, a Decimal), pandas' NA, a
    NaT, or a string that is empty or holds only spaces and invisible characters (controls such as NUL, a zero-width
    space, a stray byte-order mark). Every loader that reads labels refuses one, rather than read it as a class of its
    own ('' or 'nan')."""
    if v is None or type(v).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(v, str):
        return _blank(v)
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(v))
    if isinstance(v, (list, tuple, dict, set, frozenset, np.ndarray, bytes, bytearray)):
        return False
    try:
        return bool(v != v)     # NaN is the one value unequal to itself
    except Exception:           # a signalling Decimal NaN, or a type whose comparison fails
        return type(v).__name__ == "Decimal" and v.is_nan()


def _blank(s: str) -> bool:
    """Whether ``s`` shows nothing: empty, or spaces, control characters and invisible format characters only."""
    if s and s[0].isprintable() and not s[0].isspace():      # a visible first character: the common case
        return False
    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in s)


def _missing_label_fix(param: str) -> str:
    """How to mend a document without a label, for the :class:`~dptopic.errors.ParameterError` that refuses it (a
    template naming ``param``, the loader's setting)."""
    return ("fill in every document's label or drop the unlabelled ones, or read no labels (leave out {%s})" % param)


USER_FIELD = "user_field"  # metadata key: the field, column or folder level the person of each document was read from


def _is_utf8(s: str) -> bool:
    """Whether ``s`` can be written as UTF-8 (holds no lone surrogate such as JSON's ``"\\udc00"``)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class TextRecords:
    """The documents of a corpus file as read: their texts and, where the file gives them, labels, ids and persons
    (``user_source``: where the persons were read from, as a model's card names it, e.g. ``"field 'author'"``)."""
    texts: list
    labels: list | None = None
    doc_ids: list | None = None
    user_ids: list | None = None
    user_source: str | None = None


def _name_text(name: str) -> str:
    """A file or folder name as a label or document id: itself, or, for a name whose bytes are not UTF-8 (a Latin-1
    name, which Python reads with lone surrogates that no UTF-8 output can hold: ``transform`` failed to write its
    rows), those bytes written as backslash escapes (byte 0xe9 as the four characters ``\\xe9``)."""
    return name if _is_utf8(name) else os.fsencode(name).decode("utf-8", "backslashreplace")


def _check_field_names(*specs) -> None:
    """Each ``(parameter, value, may_be_none)`` names a JSONL field or CSV column: a string (or None where allowed)."""
    for name, v, none_ok in specs:
        if not isinstance(v, str) and not (none_ok and v is None):
            raise DPTopicError(f"invalid {name}={v!r}: give the name of a JSONL field or CSV column as a string"
                               + (", or None." if none_ok else "."))


def _record_id(value, where: str, name: str, kind: str, null_ok: bool = True):
    """A document id read from a record: a string or a number (kept as its text), or None when the record lacks it
    (``null_ok``: None is a missing value). A blank string is no id, in a JSONL field as in a CSV cell (it named no
    document: transform's rows could not be joined back by it); null (unless ``null_ok``), true/false, an object or a
    list is refused."""
    if (value is None and null_ok) or (isinstance(value, str) and _blank(value)):
        return None
    if value is None or isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise DPTopicError(f"{where}: id {kind} {name!r} is {_json_kind(value)}; ids must be strings or numbers: give"
                           f" the record one, or drop the {kind} from it.")
    return str(value)


def _uci_line(docword, row: int):
    """The file line (from 1) of the UCI data row ``row`` (from 0; blank lines are no rows), after the 3 header lines;
    None when the file has fewer rows."""
    seen = -1
    with _open_text(docword) as fh:
        for n, text in enumerate(fh, 1):
            if n > 3 and text.strip():
                seen += 1
                if seen == row:
                    return n
    return None


def _uci_row_error(message: str, docword) -> str:
    """NumPy's loadtxt error in the file's own terms, no NumPy words (``could not convert string 'x' to int64 at row
    0, column 3.`` → ``line 4, field 3 is 'x', not a whole number``): NumPy counts the data rows it read, blank lines
    not included, so the line is found again in the file."""
    def line_of(row: int):
        return _uci_line(docword, row)

    m = re.search(r"string '(.*)' to \w+ at row (\d+), column (\d+)", message)
    if m:                                        # this message counts rows from 0
        where = line_of(int(m.group(2)))
        return f"{'line ' + str(where) if where else 'a line'}, field {m.group(3)} is {m.group(1)!r}, not a whole number"
    m = re.search(r"columns changed from (\d+) to (\d+) at row (\d+)", message)
    if m:                                        # and this one from 1
        # NumPy takes the first data line's field count as the rule: when that line is the odd one, it blames the next
        if m.group(1) != "3":
            where, got = line_of(0), m.group(1)
        else:
            where, got = line_of(int(m.group(3)) - 1), m.group(2)
        return f"{'line ' + str(where) if where else 'a line'} has {got} fields, not 3 ('docID wordID count')"
    return message.rstrip(".")


def _ids_or_none(ids, name, require_ids: bool, what: str, kind: str, param: str):
    """The ids read from the records; None when ``name`` is None, or with ``require_ids=False`` when a record has
    none; with ``require_ids=True`` a record without one is refused."""
    if name is None:
        return None
    missing = [i for i, v in enumerate(ids) if v is None]
    if not missing:
        first: dict = {}
        for i, v in enumerate(ids):
            if str(v) in first:     # rows written beside the ids could not be joined back to their records
                if not require_ids:
                    warnings.warn(f"{what}: records {first[str(v)] + 1} and {i + 1} share the {kind} {name!r} value"
                                  f" {str(v)!r}, so the documents are named doc0, doc1, ... in their order instead;"
                                  f" give every record its own id to keep them.", UserWarning, stacklevel=4)
                    return None
                raise ParameterError("bad {what}: records {a} and {b} share the id {id}: give every record its own"
                                     " id, or set {%s} to a {kind} that has one per record." % param, param, name,
                                     what=what, a=first[str(v)] + 1, b=i + 1, id=repr(str(v)), kind=kind)
            first[str(v)] = i
        return ids
    if not require_ids:
        if len(missing) < len(ids):     # some records have ids: the rows written could not be joined back by them
            warnings.warn(f"{what}: record {missing[0] + 1} has no {kind} {name!r} ({len(ids) - len(missing)} of"
                          f" {len(ids)} records have one), so the documents are named doc0, doc1, ... in their order"
                          " instead; give every record its own id to keep them.", UserWarning, stacklevel=4)
        return None
    raise ParameterError("bad {what}: record {row} has no id {kind} {name} ({found} of {n} records have one): give"
                         " every record an id, or set {%s} to the {kind} that holds them." % param, param, name,
                         what=what, row=missing[0] + 1, kind=kind, name=repr(name), found=len(ids) - len(missing),
                         n=len(ids))

def uci_counts(docword: str | os.PathLike, vocab: str | os.PathLike):
    """A UCI bag-of-words file (``docword.*.txt[.gz]`` + ``vocab.*.txt``) as ``(X, words)``: the D x W count matrix
    (scipy CSR, row d the document numbered d + 1) and the W words; :meth:`Corpus.from_uci` builds the corpus."""
    if vocab is None:
        raise DPTopicError(f"the UCI corpus {str(docword)!r} needs its vocabulary file: pass vocab= the path of its"
                           " vocab.*.txt (one word per line).")
    if isinstance(vocab, (str, os.PathLike)) and os.fspath(vocab).strip() and Path(vocab).is_dir():
        raise DPTopicError(f"the UCI vocabulary {str(vocab)!r} is a folder, not a file: give its vocab.*.txt (one"
                           " word per line).")
    with _open_text(vocab) as fh:
        lines = [w.strip() for w in fh.read().split("\n")]
    while lines and not lines[-1]:          # blank lines at the end name no word
        lines.pop()
    blank = next((n for n, w in enumerate(lines, 1) if not w), None)
    if blank is not None:   # line n is word n: a blank line would shift every word after it onto another id
        raise DPTopicError(f"bad UCI vocabulary file {str(vocab)!r}: line {blank} is blank, and in the UCI format line"
                           f" n names word n, so every word after it would take the next one's id: remove the line"
                           f" (or put the missing word there).")
    words = lines
    seen: dict = {}
    for n, w in enumerate(words, 1):    # two ids for one word: its counts would be split between them
        if w in seen:
            raise DPTopicError(f"bad UCI vocabulary file {str(vocab)!r}: line {n} repeats the word {w[:40]!r} of line"
                               f" {seen[w]}, and each line names one word id: merge the two words' counts in the"
                               " docword file and remove one line.")
        seen[w] = n
    with _open_text(docword) as fh:
        header = [fh.readline().strip() for _ in range(3)]
        try:
            D, W, NNZ = (int(h) for h in header)
        except ValueError:
            raise DPTopicError(f"bad UCI docword file {str(docword)!r}: the first three lines must be D, W and NNZ.") from None
        for name, v, lo in (("D", D, 1), ("W", W, 2), ("NNZ", NNZ, 0)):
            if v < lo:
                raise DPTopicError(f"bad UCI docword file {str(docword)!r}: header {name}={v} must be at least {lo}.")
        if W != len(words):
            raise DPTopicError(f"UCI files disagree: docword says W={W} but {str(vocab)!r} has {len(words)} words.")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "input contained no data": reported below
                arr = np.loadtxt(fh, dtype=np.int64, ndmin=2) if NNZ else np.zeros((0, 3), np.int64)
        except DPTopicError:        # the file itself cannot be read (a truncated .gz): said as it is
            raise
        except ValueError as e:
            raise DPTopicError(f"bad UCI docword file {str(docword)!r}: each line must be 'docID wordID count'"
                               f" ({_uci_row_error(str(e), docword)}).") from None
    if arr.shape[1:] != (3,) and len(arr):
        raise DPTopicError(f"bad UCI docword file {str(docword)!r}: each line must be 'docID wordID count'"
                           f" (3 numbers), found {arr.shape[1]}.")
    if arr.shape[0] != NNZ:
        raise DPTopicError(f"bad UCI docword file {str(docword)!r}: header says NNZ={NNZ} but {arr.shape[0]} triples were read.")
    if D > NNZ + 10 ** 7 or W > NNZ + 10 ** 7:  # sizes no entry supports: a wrong header, not 10 million empty rows
        raise DPTopicError(f"bad UCI docword file {str(docword)!r}: header says D={D} documents and W={W} words for"
                           f" only {NNZ} entries; correct the first two lines.")
    d, w, c = arr[:, 0] - 1, arr[:, 1] - 1, arr[:, 2]
    if len(arr) and (d.min() < 0 or d.max() >= D):
        row = int(np.flatnonzero((d < 0) | (d >= D))[0])
        raise DPTopicError(f"bad UCI docword file {str(docword)!r}: line {_uci_line(docword, row)} has document id"
                           f" {int(arr[row, 0])}, and ids must lie in [1, {D}] (the header's D): correct the id or"
                           f" the first line.")
    if len(arr) and (w.min() < 0 or w.max() >= W):
        raise DPTopicError(f"unknown word id {int(w.max() + 1 if w.max() >= W else w.min() + 1)} in {str(docword)!r}: ids must lie in [1, {W}].")
    if len(arr) and c.min() < 1:
        raise DPTopicError(f"bad UCI docword file {str(docword)!r}: counts must be positive.")
    if len(arr) > 1:        # an entry given twice (a broken export) would silently add its counts up
        key = d * W + w
        order = np.argsort(key, kind="stable")
        same = np.flatnonzero(key[order][1:] == key[order][:-1])
        if len(same):
            j = same[np.argmin(order[same + 1])]       # the first line that repeats an earlier one
            first, again = int(order[j]), int(order[j + 1])
            raise DPTopicError(f"bad UCI docword file {str(docword)!r}: line {_uci_line(docword, again)} repeats the"
                               f" entry of line {_uci_line(docword, first)} (document {int(arr[again, 0])}, word"
                               f" {int(arr[again, 1])}); each pair is listed once with its count: merge the two"
                               " lines into one.")
    return sp.csr_matrix((c, (d, w)), shape=(D, W)), words


def jsonl_record(line: str, n: int, path, text_field: str, label_field, id_field, user_field) -> tuple:
    """``(text, label, id, user)`` of line ``n`` (not blank) of the JSONL file ``path``, checked as
    :func:`jsonl_records` checks every line (None for a field not asked for; the id None when the record has none).
    The streaming reader (:mod:`dptopic.corpus.stream`) reads each chunk's lines with it."""
    label = doc_id = user = None
    repeated: set = set()
    try:
        rec = load_json(line, f"line {n} of {str(path)!r}", pairs_noting_repeats(repeated))
    except json.JSONDecodeError:
        if "\x00" in line:
            raise _nul_error(path, n, "a JSONL file of UTF-8 text") from None
        hint = (": it looks like pretty-printed JSON; a JSONL file holds one JSON object per line (for"
                " example jq -c '.[]' for a file that is one array)") if line.strip() in ("[", "{") else ""
        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} is not valid JSON{hint}.") from None
    if isinstance(rec, list):
        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} is a JSON array, not an object: a JSONL"
                           " file holds one JSON object per line (write each element of the array on its"
                           " own line, for example with jq -c '.[]').")
    for key in (label_field, id_field) if isinstance(rec, dict) else ():   # both are written out
        v = rec.get(key)
        if isinstance(v, str) and not _is_utf8(v):
            raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} field {key!r} holds a lone"
                               " surrogate (an escape such as \\udc00 that is half of a character), which"
                               " no UTF-8 output can hold: fix the value.")
    if not isinstance(rec, dict):       # a number, a string, null, true/false
        kind = "a string" if isinstance(rec, str) else _json_kind(rec)
        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} is {kind}, not a JSON object: a JSONL"
                           f" file holds one JSON object per line, the text in a field ({text_field!r}).")
    twice = [k for k in (text_field, label_field, id_field) if k is not None and k in repeated]
    if twice:   # json.loads would keep the last value silently
        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} has the field {twice[0]!r} more than"
                           " once; keep one value per field.")
    if text_field not in rec:
        raise ParameterError("bad JSONL file {path}: line {n} has no field {field} (fields: {fields}); set"
                             " {text_field} to the field that holds the text.", "text_field", text_field,
                             path=repr(str(path)), n=n, field=repr(text_field),
                             fields=_column_list([str(k) for k in rec]))
    if not isinstance(rec[text_field], str):
        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} field {text_field!r} is"
                           f" {_json_kind(rec[text_field])}, not a string.")
    if user_field is not None:
        user = _record_user(rec.get(user_field), user_field in rec, f"bad JSONL file {str(path)!r}: line {n}",
                            user_field, "field")
    if label_field is not None:
        if label_field not in rec:
            raise ParameterError("bad JSONL file {path}: line {n} has no field {field}, so no label: "
                                 + _missing_label_fix("label_field") + "; if another field holds them, set"
                                 " {label_field} to it.", "label_field", label_field, path=repr(str(path)),
                                 n=n, field=repr(label_field))
        lab = rec[label_field]
        if lab is None or (isinstance(lab, str) and _missing_label(lab)):
            raise ParameterError("bad JSONL file {path}: line {n} has no label (field {field} is {lab}): "
                                 + _missing_label_fix("label_field") + ".", "label_field", label_field,
                                 path=repr(str(path)), n=n, field=repr(label_field),
                                 lab="null" if lab is None else repr(lab))
        if isinstance(lab, bool) or not isinstance(lab, (str, int, float)):
            raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} label {label_field!r} is"
                               f" {_json_kind(lab)}; labels must be strings or numbers.")
        if isinstance(lab, float) and not math.isfinite(lab):   # NaN, Infinity: not standard JSON
            raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} label {label_field!r} is {lab!r},"
                               " not a finite number; labels must be strings or finite numbers.")
        if isinstance(lab, float) and lab.is_integer() and abs(lab) < 2**53:  # JSON's 1.0 is 1: "1"
            lab = int(lab)
        label = lab
    if id_field is not None:
        # a record that holds the field holds a string or a number there, whether the field was named
        # or is transform's default 'id' (null, true/false, an object or a list: refused, never renamed)
        doc_id = (_record_id(rec[id_field], f"bad JSONL file {str(path)!r}: line {n}", id_field, "field",
                             null_ok=False) if id_field in rec else None)
    return rec[text_field], label, doc_id, user


def jsonl_records(path, text_field: str = "text", label_field: str | None = None, id_field: str | None = None,
                  require_ids: bool = True, user_field: str | None = None) -> TextRecords:
    """The records of a JSONL file, one JSON object per line (:meth:`Corpus.from_jsonl` says what each setting does)."""
    _check_field_names(("text_field", text_field, False), ("label_field", label_field, True),
                       ("id_field", id_field, True), ("user_field", user_field, True))
    texts, labels, ids, users = [], [], [], []
    with _open_text(path, "a JSONL file of UTF-8 text") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            text, label, doc_id, user = jsonl_record(line, n, path, text_field, label_field, id_field, user_field)
            texts.append(text)
            if user_field is not None:
                users.append(user)
            if label_field is not None:
                labels.append(label)
            if id_field is not None:
                ids.append(doc_id)
    if not texts:
        raise DPTopicError(f"empty corpus: JSONL file {str(path)!r} holds no records; give one JSON object per line,"
                           f" the text in a field ({text_field!r}).")
    return TextRecords(texts, labels=labels if label_field else None, doc_ids=_ids_or_none(
        ids, id_field, require_ids, f"JSONL file {str(path)!r}", "field", "id_field"),
        user_ids=users if user_field else None, user_source=user_field and f"field {user_field!r}")


def csv_records(path, text_column: str = "text", label_column: str | None = None, id_column: str | None = None,
                require_ids: bool = True, delimiter: str | None = None, user_column: str | None = None) -> TextRecords:
    """The rows of a CSV file with a header row (:meth:`Corpus.from_csv` says what each setting does)."""
    _check_field_names(("text_column", text_column, False), ("label_column", label_column, True),
                       ("id_column", id_column, True), ("user_column", user_column, True))
    guess = delimiter is None           # the default, ',': another one seen in the header may replace it
    delimiter = "," if delimiter is None else delimiter
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise DPTopicError(f"invalid delimiter={delimiter!r}: give one character, such as ',' or '\\t'.")
    cols, rows, lines = _read_csv(path, delimiter)
    wanted = [c for c in (text_column, label_column, id_column if require_ids else None, user_column)
              if c is not None]
    other = _other_delimiter_char(cols, delimiter) if guess else None
    if other is not None and any(c not in cols for c in wanted):
        # a header read as one field that holds another separator (';' from a spreadsheet in many locales): read
        # with it when that finds the columns asked for, and say so; otherwise the error below names it
        o_cols, o_rows, o_lines = _read_csv(path, other)
        if all(c in o_cols for c in wanted):
            warnings.warn(f"CSV file {str(path)!r}: its header has no {delimiter!r} but {other!r} between the"
                          f" column names, so it was read with {other!r} between the fields.", UserWarning,
                          stacklevel=2)
            cols, rows, lines, delimiter = o_cols, o_rows, o_lines, other
    if delimiter == "\t":      # Orange's .tab: the names, then a row of types and a row of flags
        skip = orange_header_rows(rows, lines)
        rows, lines = rows[skip:], lines[skip:]
    bad = f"bad CSV file {str(path)!r}"
    if not cols:
        raise DPTopicError(f"{bad}: it is empty; give a header row naming the columns ({text_column!r}, ...) and one"
                           " row per document.")
    if not rows:
        raise DPTopicError(f"empty corpus: CSV file {str(path)!r} has a header but no rows; give one row per"
                           " document below it.")
    if id_column is not None and id_column not in cols and not require_ids:
        id_column = None
    if text_column not in cols and cols and cols[0].lstrip().startswith("{"):
        raise ParameterError("{bad}: its first line is a JSON object ({first}), not a header: the file looks like JSON"
                             " Lines; read it as JSONL ({format=jsonl}, or a name ending in .jsonl).", "format",
                             bad=bad, first=_column_list(cols[:1]), jsonl="jsonl")
    for col in (text_column, label_column, id_column, user_column):
        if col is not None and col not in cols:
            hint = _other_delimiter(cols, delimiter)
            near = [c for c in cols if c.strip().casefold() == col.strip().casefold()]
            param = ("text_column" if col == text_column else "label_column" if col == label_column else
                     "user_column" if col == user_column else "id_column")
            if not hint and near:      # "text " or "Text": the list of columns below shows no difference
                how = ("case" if near[0].strip() == near[0] else "spaces around it"
                       if near[0].strip() == col.strip() else "case and spaces around it")
                raise ParameterError("{bad}: no column {col}, but the header has {near}, which differs in {how}: set"
                                     " {%s} to {near}, or write the header as {col}." % param, param, col, bad=bad,
                                     col=repr(col), near=repr(near[0]), how=how)
            if not hint:       # name the setting that picks the column, as the JSONL reader does
                raise ParameterError("{bad}: no column {col} (columns: {cols}); set {%s} to the column that holds it."
                                     % param, param, col, bad=bad, col=repr(col), cols=_column_list(cols))
            raise DPTopicError(f"{bad}: no column {col!r} (columns: {_column_list(cols)}){hint}.")
        if col is not None and cols.count(col) > 1:
            raise DPTopicError(f"{bad}: the header names the column {col!r} {cols.count(col)} times: rename all but"
                               " one, so that it says which to read.")
    at = {col: cols.index(col) for col in (text_column, label_column, id_column, user_column) if col is not None}
    # a row with more fields than the header: refused unless the extra ones are empty (a spreadsheet's trailing
    # comma, "hello world,a,")
    long = next((i for i, r in enumerate(rows) if len(r) > len(cols) and any(f.strip() for f in r[len(cols):])),
                None)
    if long is not None:  # an unquoted delimiter inside a field: the words after it would be lost unseen
        raise DPTopicError(f"{bad}: the row on line {lines[long]} has {len(rows[long])} fields where the header names"
                           f" {len(cols)}: a field that holds {delimiter!r} must be quoted (\"like{delimiter} this\"),"
                           f" or add the missing column names to the header.")
    for col in (text_column, label_column, user_column):    # a row too short to reach it: refused, not "" or 'None'
        short = next((i for i, r in enumerate(rows) if col is not None and len(r) <= at[col]), None)
        if short is not None:
            raise DPTopicError(f"{bad}: the row on line {lines[short]} has {len(rows[short])} field(s), so no"
                               f" {col!r} (column {at[col] + 1} of {len(cols)}): give every row a field for"
                               " each column of the header (an empty field is fine).")
    texts = [r[at[text_column]] for r in rows]
    labels = [r[at[label_column]] for r in rows] if label_column else None
    blank = next((i for i, lab in enumerate(labels or ()) if _missing_label(lab)), None)
    if blank is not None:       # an empty cell is no label, as JSON's null is: not the class ''
        what = (f"an empty {label_column!r} field" if not labels[blank] else
                f"a blank {label_column!r} field ({labels[blank]!r}: spaces or invisible characters only)")
        raise ParameterError("{bad}: the row on line {line} has {what}, so no label: "
                             + _missing_label_fix("label_column") + ".", "label_column", label_column, bad=bad,
                             line=lines[blank], what=what)
    ids = None
    if id_column is not None:
        ids = _ids_or_none([_record_id(r[at[id_column]] if len(r) > at[id_column] and r[at[id_column]] else None,
                                       "", id_column, "column") for r in rows], id_column,
                           require_ids, f"CSV file {str(path)!r}", "column", "id_column")
    users = None if user_column is None else [
        _record_user(r[at[user_column]], True, f"{bad}: the row on line {line}", user_column, "column")
        for r, line in zip(rows, lines)]
    return TextRecords(texts, labels=labels, doc_ids=ids, user_ids=users,
                       user_source=user_column and f"column {user_column!r}")


def directory_records(path, pattern: str = "*.txt", users_by_folder: bool = False) -> TextRecords:
    """The text files of a folder, one document each (:meth:`Corpus.from_directory` says which files and how they are
    labelled)."""
    if isinstance(path, (str, os.PathLike)) and not os.fspath(path).strip():     # Path("") is the current folder
        raise DPTopicError("the corpus path is empty: give a folder of .txt files.")
    path = Path(path)
    if not path.is_dir():
        raise DPTopicError(f"{str(path)!r} is not a directory: pass a folder with one .txt file per document.")
    if not isinstance(pattern, str) or not pattern or Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise DPTopicError(f"invalid pattern={pattern!r}: give a file pattern inside the folder, such as '*.txt' or"
                           " 'news/*.txt' (not an absolute path, and no '..').")
    # hidden files and folders (.ipynb_checkpoints/, .git/, editors' backups) are no documents: a checkpoint's
    # copy of a text would count one person's document twice
    found = list(path.rglob(pattern))
    if pattern == "*.txt":      # NOTES.TXT (as Windows tools name files) is a text file too, not left out unseen
        found = sorted(set(found) | {f for f in path.rglob("*.[tT][xX][tT]") if f.suffix.lower() == ".txt"})
    found = [f for f in found if not any(part.startswith(".") for part in f.relative_to(path).parts)]
    linked = sorted(str(f.relative_to(path)) for f in path.rglob("*") if f.is_symlink() and f.is_dir()
                    and next(f.rglob(pattern), None) is not None and not any(part.startswith(".") for part in f.relative_to(path).parts))
    if linked:      # never descended into (a link may loop, or repeat the folder's files): its files would be lost
        raise DPTopicError(f"{str(path)!r} holds {len(linked)} link{'s' if len(linked) > 1 else ''} to a folder"
                           f" ({', '.join(linked[:3])}{', ...' if len(linked) > 3 else ''}), whose files are not"
                           " read: copy the folder in instead of the link, or remove the link.")
    broken = sorted(str(f.relative_to(path)) for f in found if f.is_symlink() and not f.exists())
    if broken:      # a document whose file is gone: leaving it out would train on fewer documents unawares
        raise DPTopicError(f"{str(path)!r} holds {len(broken)} broken link{'s' if len(broken) > 1 else ''}"
                           f" ({', '.join(broken[:3])}{', ...' if len(broken) > 3 else ''}) whose target is"
                           " missing: restore the file or remove the link.")
    files = sorted(f for f in found if f.is_file())
    first: dict = {}
    for f in files:     # a link to another file of the folder: one person's document is read twice
        real = f.resolve()
        if real in first:
            a, b = sorted((first[real], f), key=lambda g: (not g.is_symlink(), g))
            warnings.warn(f"{str(path)!r}: {str(a.relative_to(path))!r} is a link to {str(b.relative_to(path))!r},"
                          " which the folder holds too, so that document is read twice: remove the link unless"
                          " that is meant.", UserWarning,
                          stacklevel=2)
        first[real] = f
    if not files:
        if any(Path(path).glob("shard-*.npz")):       # written by write_shards (dptopic corpus prepare)
            raise DPTopicError(f"{str(path)!r} is a folder of corpus shards, not of {pattern} files: only training"
                               " reads a shard folder whole (fit(FOLDER), or dptopic train on the folder); here"
                               " give one corpus file: one of its shard-*.npz files, or a corpus prepared in one"
                               " piece.")
        check_unfinished_shard_folder(path)     # a killed sharded 'corpus prepare' left it
        raise DPTopicError(f"empty corpus: no {pattern} files in {str(path)!r}.")
    texts = [read_text_file(f, f"a folder of UTF-8 text files, one document each: move {f.name!r} out of the"
                                " folder (in Python, from_directory's pattern= can leave it out)") for f in files]
    top = path.resolve().name or str(path.resolve())    # the folder's own name, also for '.' (never '')
    labels = ([_name_text(f.parent.name) if f.parent != path else _name_text(top) for f in files]
              if any(f.parent != path for f in files) else None)
    if labels is not None:      # a/x/ and b/x/ (or a sub-folder named as the folder): one label, said aloud
        folders: dict = {}
        for f, lab in zip(files, labels):
            folders.setdefault(lab, set()).add(f.parent)
        shared = sorted(lab for lab, where in folders.items() if len(where) > 1)
        if shared:
            where = sorted(str(d.relative_to(path)) or "." for d in folders[shared[0]])
            more = " (and so do other folders)" if len(shared) > 1 else ""
            warnings.warn(f"{str(path)!r}: the folders {', '.join(repr(w) for w in where[:3])} share the name"
                          f" {shared[0]!r}, so their files get one label{more}: rename one of them if they are"
                          " different classes.", UserWarning, stacklevel=2)
    users = None
    if users_by_folder:
        loose = next((f for f in files if f.parent == path), None)
        if loose is not None:
            raise DPTopicError(f"{str(path)!r}: {loose.name!r} lies in the folder itself, not in a person's"
                               " sub-folder: with one folder per person, move each file into its author's folder.")
        users = [_name_text(f.relative_to(path).parts[0]) for f in files]
    return TextRecords(texts, labels=labels, doc_ids=[_name_text(str(f.relative_to(path))) for f in files],
                       user_ids=users, user_source="sub-folder (one folder per person)" if users_by_folder else None)


def _record_user(value, present: bool, where: str, name: str, kind: str) -> str:
    """A record's user id (``user_field``): a non-blank string, else refused in one line naming the record."""
    fix = "give every record the id of the person who wrote it, or set {user_%s} to the {kind} that holds them" % kind
    if not present:
        raise ParameterError("{where} has no {kind} {name}, so no user id: " + fix + ".", f"user_{kind}", name,
                             where=where, kind=kind, name=repr(name))
    if not isinstance(value, str):
        raise DPTopicError(f"{where}: user id {kind} {name!r} is {_json_kind(value)}, not a string: write user ids as"
                           " strings (\"17\", not 17), so that one person has one id.")
    if _blank(value):
        raise ParameterError("{where} has an empty user id ({kind} {name}): " + fix + ".", f"user_{kind}", name,
                             where=where, kind=kind, name=repr(name))
    hidden = invisible_character(value)
    if hidden is not None:
        raise DPTopicError(f"{where}: user id {kind} {name!r} holds an invisible control or format character"
                           f" ({hidden}): two ids that look alike would name two people; remove such characters from"
                           " the user ids.")
    return value
