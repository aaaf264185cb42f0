"""Compile dptopic's numba kernels into their cache before the suite (``make test`` runs this first).

On a fresh clone the kernels' cache is empty, and every test worker, command and server the suite starts compiled the
kernels it met first by itself, the workers at the same time: about 100 s of the suite's time on 2 cores. Here each
trainer of the registry fits a tiny corpus once (3 and 40 topics, the scalar and the vector kernels), in two processes
that share the trainers, and one first release is charged to a ledger in a temporary folder (the dataset ledger's
kernels: its keyed digests alone take about 5 s to compile); the suite then loads most kernels from the cache.
Nothing is asserted: a trainer that fails here is reported on one line and left to its own tests.

    python tests/compile_kernels.py            # both halves, in parallel
    python tests/compile_kernels.py lda hdp    # these trainers, in this process
"""
from __future__ import annotations

import subprocess
import sys
import time
import warnings

# the two halves take about the same time to compile (cold, on 2 cores: 26 and 31 s, the first release in the second)
HALVES = (["lda", "cdp", "cdp+", "lp", "olp", "svi", "ldp-doc", "online-lda", "fed"],
          ["hdp", "online-vb", "docdp", "docdp-cooc"])


def fit_each(names) -> None:
    warnings.simplefilter("ignore")        # tiny corpora and budgets warn; only the compiling matters here
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.corpus import lda_corpus
    from dptopic.models.registry import TRAINERS
    from helpers import SMALL_SETTINGS as SMALL  # the estimator contract test's settings (tests/ is sys.path[0])

    corpus = lda_corpus(n_docs=60, vocab_size=50, n_topics=3, doc_length=12, alpha=0.5, beta=0.1, seed=1).corpus
    reports = Randomizer.for_simulation(corpus.vocabulary, epsilon_word=3).randomize(corpus)
    document_reports = DocumentRandomizer(corpus.vocabulary, epsilon=3.0, simulation=True).randomize(corpus)
    people = [f"p{d // 3}" for d in range(corpus.n_docs)]
    if "lda" in names:          # the tokenizer's kernels (every test that reads text), in one half
        from dptopic.corpus import Corpus

        Corpus.from_texts(["a short text read by the kernel", "and one with an @handle", "and café"] * 2)
    for name in names:
        data = {"lp": reports, "olp": reports, "ldp-doc": document_reports}.get(name, corpus)
        for k in (3, 40):
            try:
                model = TRAINERS[name].cls(n_topics=k, verbose=0, **SMALL[name])
                model.fit(data)
                model.transform(corpus)
                if hasattr(model, "perplexity"):
                    model.perplexity(corpus)
            except Exception as e:  # noqa: BLE001 - a warm-up: the trainer's own tests say what is wrong
                print(f"compile_kernels: {name} (K={k}) did not fit: {type(e).__name__}: {e}", file=sys.stderr)
        if name == "docdp-cooc":        # the dataset ledger's kernels (keyed digests, sketches, sorts): a first release
            _first_release()
        if name in ("docdp", "docdp-cooc"):          # the person-level kernels
            try:
                TRAINERS[name].cls(n_topics=3, verbose=0, unit="user", **SMALL[name]).fit(corpus, user_ids=people)
            except Exception as e:  # noqa: BLE001
                print(f"compile_kernels: {name} (unit user) did not fit: {type(e).__name__}: {e}", file=sys.stderr)


def _first_release() -> None:
    """``dptopic train --unit document`` on a few texts, charged to a new ledger in a temporary folder (the user's
    ledger and state untouched): the dataset ledger's record of a set compiles its kernels."""
    import contextlib
    import io
    import json
    import os
    import tempfile

    from dptopic.cli.main import main as cli

    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="dptopic-compile-") as tmp:
        for var, sub in (("DPTOPIC_LEDGER", "ledger.sqlite"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state")):
            os.environ[var] = os.path.join(tmp, sub)
        texts = os.path.join(tmp, "texts.jsonl")
        words = "apple banana cherry date elder fig grape honeydew kiwi lemon mango nectarine olive pear".split()
        with open(texts, "w") as f:
            for d in range(80):
                f.write(json.dumps({"text": " ".join(words[(d * 7 + j * 3) % len(words)] for j in range(12))}) + "\n")
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = cli(["train", "--corpus", texts, "--unit", "document", "--epsilon", "1", "--topics", "3",
                            "--out", os.path.join(tmp, "m"), "--quiet"])
            if code:
                print(f"compile_kernels: a first release exited with {code}", file=sys.stderr)
        except (Exception, SystemExit) as e:  # noqa: BLE001 - a warm-up: the ledger's own tests say what is wrong
            print(f"compile_kernels: a first release did not run: {type(e).__name__}: {e}", file=sys.stderr)
        finally:
            os.environ.clear()
            os.environ.update(saved)


def main(argv) -> int:
    if argv:
        fit_each(argv)
        return 0
    t = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, *half]) for half in HALVES]
    for p in procs:
        p.wait()
    print(f"compile_kernels: the kernels compiled into their cache in {time.perf_counter() - t:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
