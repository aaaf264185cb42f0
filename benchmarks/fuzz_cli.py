"""A bounded, seeded fuzz run of the ``dptopic`` command line and a few library calls, classified by outcome.

Two parts:

* the concrete cases of the review issue (the privacy review, the fuzz findings and the walk-through frictions), each
  run as its command or a short Python script, with a check of the result where the right one is known;
* a randomized sweep: every command's flags and file inputs given odd values (rich markup, control characters, huge,
  NaN and negative numbers, look-alike digits, FIFOs and devices, empty and truncated files, tampered model folders),
  one odd value per command, drawn from ``--seed``.

Each command runs in a fresh process under a timeout, with ``HOME``, ``XDG_DATA_HOME``, the ledger, the bytecode and
numba caches and the working folder all inside one temporary folder (removed at the end unless ``--keep``). Each
outcome is one of:

* ``traceback``: a Python traceback, or an exit status that is neither 0 nor a refusal's;
* ``hang``: the command ran past its timeout (a server that should have refused counts as ``wrong``);
* ``wrong``: a result that is checkable and wrong (a refusal missing, a figure that leaks, a name lost);
* ``badly worded``: a refusal that is not one ``error:`` line, or that names none of the flags and files that
  carried the odd value;
* ``fine``.

Run it against another checkout (the commit before a fix) with ``--src OTHER/src``; the cases are the same for every
checkout, so the counts compare::

    .venv/bin/python benchmarks/fuzz_cli.py                      # this checkout, seed 0
    .venv/bin/python benchmarks/fuzz_cli.py --src /tmp/old/src   # another checkout
    .venv/bin/python benchmarks/fuzz_cli.py --sweep 200 --seed 3 -v

It prints each case that is not fine, then the counts per class (``--json FILE`` writes every outcome).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ("traceback", "hang", "wrong", "badly worded", "fine")
REFUSAL_STATUSES = (0, 2, 3, 130)


# ------------------------------------------------------------------------------------------------------ the cases
@dataclass
class Case:
    """One case: ``steps`` (each a list of ``dptopic`` arguments, or ``("python", code)``), run in order in one
    folder; ``names`` (the flags and files that carry the odd value: a refusal must name one); ``check(results,
    ctx)`` returns why the result is wrong, or None; ``refuse``: the last step must be refused (exit 2); ``server``:
    a command that would serve forever if it accepted its input (a timeout is then ``wrong``)."""
    id: str
    steps: list
    names: tuple = ()
    check: object = None
    refuse: bool = False
    server: bool = False
    timeout: float = 60.0
    needs: tuple = ()          # the fixtures it reads
    env: dict = field(default_factory=dict)


@dataclass
class Result:
    rc: int | None
    out: str
    err: str
    seconds: float


def _py(code: str) -> tuple:
    return ("python", textwrap.dedent(code))


def _has(text: str, *needles: str) -> bool:
    return all(n in text for n in needles)


# the Python cases report what they find on stdout: "WRONG: why" or "BADLY: why"; an exception that escapes is a
# traceback
PY_PRELUDE = """
import json, os, sys, warnings
from pathlib import Path
warnings.simplefilter("ignore")
def wrong(why): print("WRONG: " + why); sys.exit(0)
def badly(why): print("BADLY: " + why); sys.exit(0)
from dptopic.corpus.readers import read_corpus
"""


def issue_cases(fx: dict) -> list[Case]:
    """The review issue's concrete cases (the item number leads each id)."""
    C = fx["corpus"]
    cases = []
    add = cases.append

    # 1. the random-stopping search
    add(Case("1 search: K, the runs' scores and a seeded K are not published", [_py(f"""
        from dptopic.models import DocDPCooccurrence
        from dptopic.training.private_search import RandomStoppingSearch
        import dptopic
        c = read_corpus({C!r})
        s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {{"n_topics": [2, 3]}}, gamma=0.3, ledger=False)
        s.fit(c)
        for a in ("n_runs_", "scores_"):
            if hasattr(s, a): wrong(f"the search publishes {{a}} (K or every run's score)")
        if "runs" in s.privacy_: wrong("privacy_['runs'] publishes K")
        if "runs" in (s.best_estimator_.privacy_.get("search") or {{}}): wrong("the best model's report holds K")
        s.best_estimator_.save("best")
        if '"runs"' in Path("best/model.json").read_text(): wrong("the saved model.json holds K")
        if "secret" not in json.dumps(s.privacy_).lower(): wrong("the search's scope does not say K is secret")
        try:
            RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {{"n_topics": [2]}}, seed=4, ledger=False).fit(c)
            wrong("a seed= fixes K (and the candidates): K is predictable")
        except dptopic.DPTopicError as e:
            if "seed" not in str(e): badly("the refusal of seed= does not name seed")
    """)], timeout=120))
    add(Case("1 search: dptopic search exists", [["search", "--help"]],
             check=lambda r, c: None if r[-1].rc == 0 else "no 'dptopic search' command"))
    add(Case("1 search: dptopic search trains and saves the best run alone",
             [["search", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--grid", "topics=2,3",
               "--out", "best", "--no-ledger"]],
             check=lambda r, c: (None if r[-1].rc == 0 and (Path(c) / "best" / "model.json").exists()
                                 else "the search did not save its best model")
             if r[-1].rc in (0, 2) and "invalid choice" not in r[-1].err else "no 'dptopic search' command",
             timeout=120))

    # 1b. (issue 92) the search: a reader that goes away, Ctrl-C, the score, the mean number of runs, the unit
    ledger_import = """
        try:
            from dptopic.dataset_ledger.ledger import DatasetLedger
        except ImportError:         # a checkout from before the ledger's own package
            from dptopic.accounting.dataset_ledger import DatasetLedger
        def releases():
            return DatasetLedger("l.sqlite").releases("d") if Path("l.sqlite").exists() else []
    """
    search_argv = ["search", "--corpus", C, "--epsilon", "1", "--grid", "topics=2,3", "--expected-runs", "2",
                   "--ledger", "l.sqlite", "--dataset", "d", "--out", "best"]
    add(Case("92 search | head -1: the model its release paid for is saved before anything is printed", [_py(f"""
        import subprocess
        {textwrap.indent(textwrap.dedent(ledger_import), " " * 8).strip()}
        read, write = os.pipe()
        os.close(read)      # the reader is gone before the first line
        p = subprocess.Popen([sys.executable, "-m", "dptopic", *{search_argv!r}], stdout=write,
                             stderr=subprocess.PIPE)
        os.close(write)
        err = p.communicate(timeout=150)[1].decode()
        if "Traceback" in err: wrong("a traceback when the reader went away: " + err.strip().splitlines()[-1][:100])
        if releases() and not Path("best/model.json").exists():
            wrong("the search was recorded (a release spent) and no model was saved: it printed before it saved")
    """)], timeout=200))
    add(Case("92 search: Ctrl-C stops a search started with SIGINT ignored and says what stays spent", [_py(f"""
        import signal, subprocess, time
        {textwrap.indent(textwrap.dedent(ledger_import), " " * 8).strip()}
        code = ("import sys\\n"
                "try:\\n    from dptopic.training import private_search\\n"
                "except ImportError:\\n    from dptopic.models import private_search\\n"
                "private_search.sample_runs = lambda *a, **k: 10 ** 9\\n"
                "from dptopic.cli.main import main\\nsys.exit(main(sys.argv[1:]))\\n")
        p = subprocess.Popen([sys.executable, "-c", code, *{search_argv!r}], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        for _ in range(300):
            if releases() or p.poll() is not None:
                break
            time.sleep(0.5)
        if p.poll() is not None:
            badly("the search ended before it was interrupted: " + p.communicate()[1].decode()[-100:])
        p.send_signal(signal.SIGINT)
        try:
            err = p.communicate(timeout=60)[1].decode()
        except subprocess.TimeoutExpired:
            p.kill(); p.communicate()
            wrong("the search was still running 60 s after SIGINT")
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("warning:")]
        if p.returncode != 130 or len(lines) != 1: badly(f"exit {{p.returncode}}, not one line: {{lines[-3:]}}")
        if "spent" not in lines[0] or "release" not in lines[0]:
            badly("the interruption does not say that the recorded release stays spent: " + lines[0][:100])
        if Path("best").exists(): wrong("an interrupted search saved a model (the best of a number of runs set by"
                                        " the interruption, which the theorem does not cover)")
    """)], timeout=200))
    for what, score in (("returns a string", "lambda m: 'high'"), ("raises", "lambda m: m.no_such_attribute")):
        add(Case(f"92 search: a score that {what} is refused before anything is spent", [_py(f"""
            import dptopic
            {textwrap.indent(textwrap.dedent(ledger_import), " " * 12).strip()}
            try:
                from dptopic.training.private_search import RandomStoppingSearch
            except ImportError:
                from dptopic.models.private_search import RandomStoppingSearch
            from dptopic.models import DocDPCooccurrence
            c = read_corpus({C!r})
            try:
                RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {{"n_topics": [2, 3]}}, score={score},
                                     ledger="l.sqlite", dataset="d").fit(c)
                wrong("the search ran with a score that {what}")
            except dptopic.DPTopicError as e:
                if "score" not in str(e): badly("the refusal does not name score: " + str(e)[:100])
            except Exception as e:
                wrong(f"{{type(e).__name__}} after the search was recorded, not a refusal: {{str(e)[:80]}}")
            if releases(): wrong("the search was recorded (spent) before its score was found wanting")
        """)], timeout=120))
    add(Case("92 search: RandomStoppingSearch(gamma=1e-9) is refused, not run until killed", [_py(f"""
        import dptopic
        try:
            from dptopic.training.private_search import RandomStoppingSearch
        except ImportError:
            from dptopic.models.private_search import RandomStoppingSearch
        from dptopic.models import DocDPCooccurrence
        try:
            RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {{"n_topics": [2]}}, gamma=1e-9,
                                 ledger=False).fit(read_corpus({C!r}))
            wrong("a search of 10^9 runs on average ran to its end")
        except dptopic.DPTopicError as e:
            if "gamma" not in str(e): badly("the refusal does not name gamma: " + str(e)[:100])
    """)], timeout=60))
    for mean in ("0.5", "1e300"):
        add(Case(f"92 budget plan --search-runs {mean} is refused as search refuses it", [
            ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2", "--test-size",
             "0", "--ledger", "l.sqlite", "--dataset", "d", "--out", "m"],
            ["budget", "plan", "--ledger", "l.sqlite", "--dataset", "d", "--algorithm", "docdp-cooc", "--epsilon",
             "1", "--search-runs", mean]], names=("--search-runs",), refuse=True, timeout=90))
        add(Case(f"92 search --expected-runs {mean} is refused in the rule budget plan shares",
                 [[*search_argv[:8], mean, *search_argv[9:]]], names=("--expected-runs",), refuse=True))
    add(Case("92 search --unit user --user-field --vocabulary: charged per person", [
        [*search_argv, "--unit", "user", "--user-field", "user", "--vocabulary", fx["vocab"]],
        _py(f"""
            {textwrap.indent(textwrap.dedent(ledger_import), " " * 12).strip()}
            rel = releases()
            if len(rel) != 1: wrong("the search took no --unit user (nothing recorded)")
            r = rel[0]
            if r["unit"] != "user": wrong(f"the search was charged per {{r['unit']}}, not per person")
            t = DatasetLedger("l.sqlite").person_total("u0")
            if [x["group"] for x in t["releases"]] != [1]: wrong(f"a person of 5 documents was charged {{t}}")
            if not Path("best/model.json").exists(): wrong("no model saved")
        """)], timeout=150))

    # 2. FedLDA's people
    add(Case("2 fed: one client per person of the corpus", [_py(f"""
        import dptopic
        from dptopic.models import FedLDA
        from dptopic.accounting.card import privacy_card
        c = read_corpus({C!r}, user_field="user")
        m = FedLDA(n_topics=2, epsilon=20.0, rounds=2, pad_length=16, verbose=0).fit(c)
        people = len(set(c.user_ids))
        if m.n_clients_ != people:
            wrong(f"{{c.n_docs}} documents of {{people}} people became {{m.n_clients_}} users")
        c2 = read_corpus({C!r})
        m2 = FedLDA(n_topics=2, epsilon=20.0, rounds=2, pad_length=16, verbose=0).fit(c2)
        card = json.dumps(privacy_card(m2.privacy_, "FedLDA")).lower()
        if "simulated" not in card: wrong("the card does not say each simulated user is one document")
    """)], timeout=120))

    # 3. (the dataset ledger) a document-level and a user-level release of one dataset
    add(Case("3 ledger: a total that adds units names them", [_py(f"""
        import dptopic
        c = read_corpus({C!r}, user_field="user")
        dptopic.train(c, algorithm="docdp-cooc", epsilon=1, n_topics=2, ledger="l.sqlite", dataset="d", metrics=False)
        r = dptopic.train(c, unit="user", epsilon=1, n_topics=2, ledger="l.sqlite", dataset="d", metrics=False)
        line = json.dumps(r.card.get("dataset_total") or {{}}).lower()
        if "document" not in line: wrong("the user-level card's total adds a document-level release unnamed")
    """)], timeout=120))

    # 4. exact counts without the label
    add(Case("4 warnings: re-used documents are counted with the label", [_py(f"""
        import dptopic
        from dptopic.models import DocDPCooccurrence
        c = read_corpus({C!r})
        DocDPCooccurrence(epsilon=1.0, n_topics=2, ledger=False).fit(c)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            DocDPCooccurrence(epsilon=1.0, n_topics=2, ledger=False).fit(c)
        for x in w:
            t = str(x.message)
            if "already used" in t and "outside the guarantee" not in t: wrong("exact count unlabelled: " + t[:80])
    """)]))
    add(Case("4 errors: texts that hold no word are counted with the label", [_py("""
        import dptopic
        from dptopic import Corpus
        from dptopic.models import DocDPCooccurrence
        texts = ["river water boat fish bank"] * 8 + ["", "!!!"] + ["money loan bank credit"] * 8
        users = [f"u{i % 4}" for i in range(len(texts))]
        c = Corpus.from_texts(texts)
        try:
            DocDPCooccurrence(epsilon=1.0, n_topics=2, unit="user", ledger=False).fit(c, user_ids=users)
        except dptopic.DPTopicError as e:
            if "hold no word" in str(e) and "outside the guarantee" not in str(e):
                wrong("exact count unlabelled: " + str(e)[:80])
    """)]))

    # 5. the public corpus guard
    add(Case("5 public corpus: a few identical texts warn, with the count labelled", [_py(f"""
        import dptopic
        from dptopic.models import DocDPCooccurrence
        c = read_corpus({C!r})
        pub = read_corpus({fx['public']!r})
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                DocDPCooccurrence(epsilon=1.0, n_topics=2, ledger=False).fit(c, public_corpus=pub)
            except dptopic.DPTopicError as e:
                wrong("refused for a few shared texts: " + str(e)[:100])
        said = [str(x.message) for x in w if "public" in str(x.message).lower() and "outside the guarantee"
                in str(x.message)]
        if not said: wrong("no labelled warning about the texts the public corpus shares with the private one")
    """)], timeout=90))
    add(Case("5 public corpus: the same object and a large overlap are refused", [_py(f"""
        import dptopic
        from dptopic import Corpus
        from dptopic.models import DocDPCooccurrence
        c = read_corpus({C!r})
        for pub, what in ((c, "the same object"), (c.subset(list(range(0, c.n_docs, 2))), "half of the documents")):
            try:
                DocDPCooccurrence(epsilon=1.0, n_topics=2, ledger=False).fit(c, public_corpus=pub)
                wrong(what + " given as public was accepted")
            except dptopic.DPTopicError:
                pass
    """)], timeout=90))
    add(Case("5 public corpus: the same file is refused", [
        ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2", "--public-corpus",
         C, "--out", "m", "--no-ledger", "--test-size", "0"]], names=("--public-corpus",), refuse=True))

    # 6. markup in user-given names
    for name in ("[/]", "[bold red]x", "[link=file:///etc]y[/link]"):
        add(Case(f"6 markup: budget cap --dataset {name!r}, then budget show",
                 [["budget", "cap", "--dataset", name, "--epsilon", "5", "--ledger", "l.sqlite"],
                  ["budget", "show", "--ledger", "l.sqlite"]],
                 check=lambda r, c, n=name: None if n in r[-1].out else f"the name {n!r} is not printed as given"))
        add(Case(f"6 markup: train --dataset {name!r}",
                 [["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2",
                   "--dataset", name, "--ledger", "l.sqlite", "--out", "m", "--test-size", "0"],
                  ["budget", "show", "--ledger", "l.sqlite", "--dataset", name]],
                 check=lambda r, c, n=name: None if n in r[-1].out and n in r[0].out
                 else f"the name {n!r} is not printed as given", timeout=90))
    add(Case("6 markup: a corpus file named with markup", [
        ["train", "--corpus", fx["markup_corpus"], "--algorithm", "lda", "--topics", "2", "--iterations", "5",
         "--out", "[bold]m", "--test-size", "0"]],
        check=lambda r, c: None if "[bold]m" in r[-1].out else "the --out folder's name is not printed as given"))
    add(Case("6 markup: a model whose trainer and words hold markup", [["topics", fx["markup_model"]]],
             check=lambda r, c: None if "[red]" in r[-1].out else "a word '[red]...' is not printed as given",
             needs=("markup_model",)))
    add(Case("6 markup: report --title with markup", [
        ["report", fx["m_cooc"], "--out", "r.html", "--title", "[/]"]], needs=("m_cooc",), timeout=90))

    # 7. an edited ledger (the dataset ledger's helper fixes it)
    for col, val, what in (("epsilon", -5.0, "a negative epsilon"), ("delta", 2.0, "delta = 2"),
                           ("epsilon", float("inf"), "an infinite epsilon")):
        add(Case(f"7 ledger: a release edited to {what} is refused", [
            ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2", "--dataset",
             "d", "--ledger", "l.sqlite", "--out", "m", "--test-size", "0"],
            _py(f"""
                import sqlite3
                con = sqlite3.connect("l.sqlite"); con.execute("UPDATE releases SET {col} = ?", (float({str(val)!r}),))
                con.commit(); con.close()
            """),
            ["budget", "show", "--ledger", "l.sqlite"]], names=("l.sqlite", "--ledger"), refuse=True, timeout=90))
    add(Case("7 ledger: a NaN cap is refused", [
        ["budget", "cap", "--dataset", "d", "--epsilon", "5", "--ledger", "l.sqlite"],
        _py("""
            import sqlite3
            con = sqlite3.connect("l.sqlite"); con.execute("UPDATE datasets SET cap_epsilon = ?", (float("nan"),))
            con.commit(); con.close()
        """),
        ["budget", "show", "--ledger", "l.sqlite"]], names=("l.sqlite", "--ledger"), refuse=True))

    # 8. dptopic.train(dataset=...) with the ledger from DPTOPIC_LEDGER
    add(Case("8 ledger: train(dataset=) records on DPTOPIC_LEDGER's ledger", [_py(f"""
        import dptopic
        from dptopic.dataset_ledger.ledger import DatasetLedger
        c = read_corpus({C!r})
        dptopic.train(c, algorithm="docdp-cooc", epsilon=1, n_topics=2, dataset="d", metrics=False)
        if not DatasetLedger(os.environ["DPTOPIC_LEDGER"]).releases("d"): wrong("the fit spent and nothing was recorded")
    """)], env={"DPTOPIC_LEDGER": "env.sqlite"}, timeout=90))

    # 9. refit of a model trained with a public corpus
    add(Case("9 refit: a model trained with --public-corpus is refused from its folder",
             [["refit", fx["m_pub"], "--topics", "2", "--out", "r"]], names=("refit", fx["m_pub"]), refuse=True,
             needs=("m_pub",)))
    add(Case("9 refit: load(folder).refit() of a public-corpus model is refused", [_py(f"""
        import dptopic
        m = dptopic.load({fx['m_pub']!r})
        try:
            m.refit(2); wrong("refit accepted")
        except dptopic.DPTopicError:
            pass
    """)], needs=("m_pub",)))
    add(Case("9 refit: a tampered public_input is refused", [
        ("copy", fx["m_pub"], "m"),
        _py("""
            p = Path("m/model.json"); d = json.loads(p.read_text())
            d["privacy"].pop("public_input", None); p.write_text(json.dumps(d))
        """),
        ["refit", "m", "--topics", "2", "--out", "r"]], names=("m",), refuse=True, needs=("m_pub",)))

    # 12b. person ids that differ only by Unicode normalization
    add(Case("12b user ids: NFC and NFD of one name are one person", [_py("""
        import unicodedata
        from dptopic import Corpus
        a, b = unicodedata.normalize("NFC", "José"), unicodedata.normalize("NFD", "José")
        c = Corpus.from_texts(["river water boat", "river bank fish"], user_ids=[a, b])
        if len(set(c.user_ids)) != 1: wrong("José in NFC and NFD are two people")
    """)]))
    # 12c. a run charged before its inputs are checked (the ledger's helper)
    add(Case("12c ledger: private_vocabulary=(1, 0) is refused before anything is charged", [_py(f"""
        import dptopic
        from dptopic.dataset_ledger.ledger import DatasetLedger
        c = read_corpus({C!r})
        try:
            dptopic.train(c, algorithm="docdp-cooc", epsilon=1, n_topics=2, private_vocabulary=(1, 0),
                          ledger="l.sqlite", dataset="d", metrics=False)
        except dptopic.DPTopicError:
            pass
        if Path("l.sqlite").exists() and DatasetLedger("l.sqlite").releases("d"): wrong("charged, then refused")
    """)]))
    # 12d. FIFOs and devices as --corpus with the default ledger
    for dev in ("fifo", "/dev/zero", "/dev/urandom"):
        path = fx["fifo"] if dev == "fifo" else dev
        add(Case(f"12d --corpus {dev} with the default ledger",
                 [["train", "--corpus", path, "--algorithm", "docdp-cooc", "--epsilon", "1", "--out", "m"]],
                 names=("--corpus", path), refuse=True, timeout=30))
    # 12e. --keep-urls kept whole
    add(Case("12e --keep-urls: the tokenizer record and transform keep the addresses", [
        ["train", "--corpus", fx["urls"], "--algorithm", "lda", "--topics", "2", "--iterations", "20", "--keep-urls",
         "--out", "m", "--test-size", "0"],
        _py("""
            import numpy as np, dptopic
            m = dptopic.load("m")
            rec = json.dumps(json.loads(Path("m/model.json").read_text()).get("tokenizer")
                             or json.loads(Path("m/model.json").read_text()).get("preprocessing") or {}).lower()
            if "keep_urls" not in rec or '"keep_urls": false' in rec: wrong("the tokenizer record says addresses were dropped")
            row = m.transform(["https://example.com/page https://example.com/page"])[0]
            if np.allclose(row, row.mean(), atol=1e-3): wrong("transform drops the URL words the model was trained on")
        """)], timeout=90))

    # 13. the ledger's wording (the ledger's helper)
    add(Case("13 ledger: show --json of a ledger holding inf", [
        ["budget", "cap", "--dataset", "d", "--epsilon", "5", "--ledger", "l.sqlite"],
        _py("""
            import sqlite3
            con = sqlite3.connect("l.sqlite"); con.execute("UPDATE datasets SET cap_epsilon = ?", (float("inf"),))
            con.commit(); con.close()
        """),
        ["budget", "show", "--json", "--ledger", "l.sqlite"]], names=("l.sqlite", "--ledger")))
    add(Case("13 ledger: a read command leaves a user's empty file alone", [
        ("touch", "empty.txt"), ["budget", "show", "--ledger", "empty.txt"]], names=("empty.txt", "--ledger"),
        check=lambda r, c: None if (Path(c) / "empty.txt").stat().st_size == 0 else "the empty file became a ledger"))
    add(Case("13 ledger: cap --clear of an unknown dataset adds none", [
        ["budget", "cap", "--dataset", "typo", "--clear", "--ledger", "l.sqlite"],
        ["budget", "show", "--ledger", "l.sqlite"]],
        check=lambda r, c: "cap --clear of a typo added the dataset" if "typo" in r[-1].out else None))
    add(Case("13 ledger: cap --clear --delta is refused", [
        ["budget", "cap", "--dataset", "d", "--clear", "--delta", "1e-6", "--ledger", "l.sqlite"]],
        names=("--delta", "--clear"), refuse=True))
    add(Case("13 ledger: a symlink loop as --ledger", [
        ("loop", "loop.sqlite"), ["budget", "show", "--ledger", "loop.sqlite"]], names=("loop.sqlite", "--ledger"),
        refuse=True))
    add(Case("13 ledger: an over-long --ledger path", [["budget", "show", "--ledger", "x" * 5000]],
             names=("--ledger",), check=lambda r, c: "prints OSError" if "OSError" in r[-1].err else None))
    add(Case("13 ledger: --ledger with --no-ledger is refused", [
        ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2", "--no-ledger",
         "--ledger", "l.sqlite", "--out", "m", "--test-size", "0"]], names=("--ledger", "--no-ledger"), refuse=True))
    add(Case("13 ledger: --dataset with a non-private trainer is refused", [
        ["train", "--corpus", C, "--algorithm", "lda", "--topics", "2", "--iterations", "5", "--dataset", "d",
         "--out", "m", "--test-size", "0"]], names=("--dataset",), refuse=True))
    for v in ("5", "''", "True"):
        add(Case(f"13 ledger: dptopic.train(ledger={v})", [_py(f"""
            import dptopic
            c = read_corpus({C!r})
            try:
                dptopic.train(c, algorithm="docdp-cooc", epsilon=1, n_topics=2, ledger={v}, metrics=False)
            except dptopic.DPTopicError as e:
                if "ledger" not in str(e): badly("the refusal names no ledger: " + str(e)[:80])
            except TypeError as e:
                badly("a raw TypeError: " + str(e)[:80])
        """)], env={"XDG_DATA_HOME": "xdg"}, timeout=90))
    add(Case("13 ledger: a ledger inside a new --out", [
        ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2", "--ledger",
         "new/l.sqlite", "--out", "new", "--test-size", "0"]],
        check=lambda r, c: "the ledger it created in --out is refused as a file dptopic did not write"
        if r[-1].rc == 2 and "did not write" in r[-1].err else None, timeout=90))

    # 14. refit's wording
    add(Case("14 refit --topics 61 names the flag", [["refit", fx["m_cooc"], "--topics", "61", "--out", "r"]],
             names=("--topics",), refuse=True, needs=("m_cooc",),
             check=lambda r, c: "names the Python parameter n_topics=" if "n_topics" in r[-1].err else None))
    for key, val in (("scales", "nan"), ("scales", "-1"), ("scales", "'x'")):
        add(Case(f"14 refit: tampered {key} = {val}", [
            ("copy", fx["m_cooc"], "m"),
            _py(f"""
                p = Path("m/model.json"); d = json.loads(p.read_text())
                def walk(o):
                    if isinstance(o, dict):
                        for k in list(o):
                            if k in ("noise_std", "sigma", "noise_multiplier", "scale", "noise_scale"):
                                o[k] = {val if val != "nan" else 'float("nan")'}
                            walk(o[k])
                    elif isinstance(o, list):
                        for x in o: walk(x)
                walk(d); p.write_text(json.dumps(d))
            """),
            ["refit", "m", "--topics", "2", "--out", "r"]], names=("m",), needs=("m_cooc",)))
    add(Case("14 refit of an LP model: the reason", [["refit", fx["m_lp"], "--topics", "2", "--out", "r"]],
             names=(fx["m_lp"],), refuse=True, needs=("m_lp",),
             check=lambda r, c: "says a new fit spends budget (retraining on the same reports spends nothing)"
             if "spends budget" in r[-1].err else None))
    add(Case("14 refit of a non-private model: the reason", [["refit", fx["m_lda"], "--topics", "2", "--out", "r"]],
             names=(fx["m_lda"],), refuse=True, needs=("m_lda",),
             check=lambda r, c: "a non-private model is said to spend budget" if re.search(
                 r"spends? budget|budget again", r[-1].err) else None))

    # 15. the secure-sum server's flags (the secure sum's helper): it should refuse, not serve
    for extra in (["--batch-size", "5"], ["--lam", "0.3"], ["--fed-topics", "4"], ["--epsilon", "1e308"]):
        add(Case(f"15 serve secure-sum {' '.join(extra)}", [      # invited contributors first: the server needs them
            ["secure-sum", "invite", "--key", "enroll.key", "--count", "3", "--out", "inv", "--collusion", "0"],
            ["serve", "--report-kind", "secure-sum", "--vocabulary", fx["vocab"], "--database",
             "sqlite:///s.db", "--port", str(18700 + len(cases)), "--unit", "user", "--epsilon", "1",
             "--directory", "inv/directory.json", *extra]],
            names=(extra[0],), refuse=True, server=True, timeout=15))

    # issue 92: a single round's plan and mode are the operator's (its invitations and directory pin them)
    def serve_secure(*extra, directory="inv/directory.json"):
        return ["serve", "--report-kind", "secure-sum", "--vocabulary", fx["vocab"], "--database", "sqlite:///s.db",
                "--port", str(18700 + len(cases)), "--unit", "user", "--epsilon", "1", "--directory", directory,
                *extra]

    invite40 = ["secure-sum", "invite", "--key", "enroll.key", "--count", "40", "--out", "inv", "--collusion", "7",
                "--dropout-tolerance", "4", "--round-id", "r"]
    add(Case("92 serve secure-sum --collusion 0 where the invitations pin 7", [invite40, serve_secure(
        "--collusion", "0")], names=("--collusion",), refuse=True, server=True, timeout=15,
        check=lambda r, c: None if "the invitations pin" in r[-1].err else "the refusal does not say what is pinned"))
    add(Case("92 serve secure-sum --secure-committee auto on a plain directory", [invite40, serve_secure(
        "--secure-committee", "auto")], names=("--secure-committee", "--directory"), refuse=True, server=True,
        timeout=15))
    add(Case("92 serve secure-sum: a committee directory without --secure-committee", [
        [*invite40, "--committee"], serve_secure()], names=("--directory", "--secure-committee"), refuse=True,
        server=True, timeout=15))
    add(Case("92 serve secure-sum: a plain round's database restarted in the committee mode", [
        invite40, ["secure-sum", "invite", "--key", "enroll.key", "--count", "40", "--out", "inv2", "--collusion", "7",
                   "--dropout-tolerance", "4", "--round-id", "r", "--committee"],
        _py(f"""
            from dptopic.protocol.secure_sum.enrollment import read_directory
            from dptopic.protocol.secure_sum.plan import SecureSumPlan
            from dptopic.service.secure_sum.config import SecureSumConfig
            from dptopic.service.secure_sum.default import SecureRound
            words = Path({fx["vocab"]!r}).read_text().split()
            plan = SecureSumPlan(1.0, 1e-5, 40, 4, len(words), 7)
            SecureRound(SecureSumConfig(words, plan, read_directory("inv/directory.json"), n_topics=2,
                                        database="sqlite:///s.db")).engine.dispose()
        """),
        serve_secure("--secure-committee", "auto", directory="inv2/directory.json")],
        names=("--database", "s.db"), refuse=True, server=True, timeout=20,
        check=lambda r, c: None if "without a committee" in r[-1].err else "the refusal does not name the mode"))
    for stated, why in (("SecureSumPlan(8.0, 1e-5, 40, 4, 30, 0)", "collusion 0"),
                        ("SecureSumPlan(8.0, 1e-5, 40, 4, 30, 7, committee='auto')", "this is a committee round")):
        add(Case(f"92 a contributor holding an invitation of t = 7 against {stated}", [invite40, _py(f"""
            from dptopic.contributor.secure_sum.default import SecureContributor
            from dptopic.errors import DPTopicError
            from dptopic.protocol.secure_sum.enrollment import read_directory, read_invitation
            from dptopic.protocol.secure_sum.plan import SecureSumPlan
            plan = {stated}
            config = {{"report_kind": "secure-sum", "round_id": "r", "vocabulary": [f"w{{i}}" for i in range(30)],
                       "vocab_size": 30, "n_topics": 3, "epsilon": plan.epsilon, "delta": plan.delta,
                       "secure_sum": plan.to_dict(), "directory": read_directory("inv/directory.json")}}
            try:
                SecureContributor(config, None, read_invitation("inv/invitation-0001.json"))
                wrong("a contributor accepted a server whose plan or mode its invitation does not pin")
            except DPTopicError as e:
                if {why!r} not in str(e): badly("the refusal does not say what differs: " + str(e)[:120])
        """)], timeout=60))

    cases += secure_sum_operation_cases(fx, 18800)

    # 16, 17. totals at one delta; the report's total
    add(Case("16 ledger: a total never falls when a release is added", [_py(f"""
        import dptopic
        c = read_corpus({C!r})
        seen = []
        for i in range(3):
            r = dptopic.train(c, algorithm="docdp-cooc", epsilon=1, n_topics=2, ledger="l.sqlite", dataset="d",
                              metrics=False)
            t = r.card.get("dataset_total") or {{}}
            seen.append((t.get("epsilon"), t.get("delta")))
        eps = [e for e, _ in seen]
        if any(b is not None and a is not None and b < a for a, b in zip(eps, eps[1:])):
            wrong(f"the total fell: {{eps}}")
        if len({{d for _, d in seen}}) > 1: wrong(f"totals stated at several deltas: {{seen}}")
    """)], timeout=120))
    add(Case("17 report: the HTML report reads the ledger's total", [
        *[["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2", "--dataset", "d",
           "--ledger", "l.sqlite", "--out", f"m{i}", "--test-size", "0"] for i in range(3)],
        ["report", "m0", "--out", "r.html"]],
        check=lambda r, c: "the report states a stale total (1 release)"
        if (Path(c) / "r.html").exists() and "over 1 release" in (Path(c) / "r.html").read_text() else None,
        timeout=150, env={"DPTOPIC_LEDGER": "l.sqlite"}))

    # 18. words the release never estimated: the saved kept words (and background topics) against what is shown
    thin = fx.get("m_thin", "")
    add(Case("18 topics --format json: words never estimated are left out or marked", [_py(f"""
        import subprocess
        from dptopic.models import load
        m = load({thin!r})
        kept, bg, words = set(int(i) for i in m.kept_words_), set(m.background_topic_ids()), list(m.vocabulary_.words)
        shown = json.loads(subprocess.run([sys.executable, "-m", "dptopic", "topics", {thin!r}, "--format", "json",
                                           "--show-unsupported"], capture_output=True, text=True).stdout)
        bad = [w for t in shown["topics"] if t["topic"] not in bg for w in t["words"]
               if w in words and words.index(w) not in kept]
        if bad and "estimated" not in shown["words"]:
            wrong(f"{{len(bad)}} listed words were never estimated by the release, unmarked")
    """)], needs=("m_thin",), timeout=90))
    add(Case("18 topic_words: words never estimated are left out", [_py(f"""
        from dptopic.models import load
        m = load({thin!r})
        kept, bg, words = set(int(i) for i in m.kept_words_), set(m.background_topic_ids()), list(m.vocabulary_.words)
        bad = [w for k, t in enumerate(m.topic_words(10)) if k not in bg for w in t if words.index(w) not in kept]
        if bad: wrong(f"topic_words lists {{len(bad)}} words the release never estimated, unmarked")
    """)], needs=("m_thin",)))
    add(Case("18 pyLDAvis export: words never estimated are marked", [
        ["export", thin, "--to", "pyldavis", "--corpus", fx["thin"], "--corpus-public", "--show-unsupported",
         "--out", "e.json"],
        _py(f"""
            from dptopic.models import load
            m = load({thin!r})
            kept, words = set(int(i) for i in m.kept_words_), set(m.vocabulary_.words)
            d = json.loads(Path("e.json").read_text())
            plain = [v for i, v in enumerate(d["vocab"]) if i not in kept and v in words]
            if plain: wrong(f"{{len(plain)}} words never estimated are exported unmarked")
        """)], needs=("m_thin",), timeout=90))

    # 19. (public vectors' helper) refit --suggest says what it compared with
    add(Case("19 refit --suggest says what the support test compared with",
             [["refit", fx["m_cooc"], "--suggest", "--out", "r"]], needs=("m_cooc",),
             check=lambda r, c: "'above the noise' without the floor it beat" if "above the noise" in r[-1].out
             and "frequency" not in r[-1].out else None))

    # 20. the white-box audit charges no ledger (the ledger's helper)
    add(Case("20 audit --score release charges no ledger", [
        ["audit", "--algorithm", "docdp-cooc", "--corpus", C, "--epsilon", "1", "--topics", "2", "--design",
         "one-run", "--score", "release", "--canaries", "8", "--out", "a", "--ledger", "l.sqlite"],
        _py("""
            from dptopic.dataset_ledger.ledger import DatasetLedger
            if Path("l.sqlite").exists():
                L = DatasetLedger("l.sqlite")
                n = sum(len(L.releases(d)) for d in L.datasets())
                if n: wrong(f"the audit recorded {n} release(s)")
        """)], timeout=180))

    # 21. recommend's and help's wording
    add(Case("21 recommend --doc-length 5: 'useful' beside one supported topic",
             [["recommend", "--epsilon", "8", "--docs", "2000", "--doc-length", "5"]], check=_check_useful))
    add(Case("21 recommend --unit user speaks of people", [["recommend", "--unit", "user", "--epsilon", "8", "--docs",
                                                           "2000"]],
             check=lambda r, c: "says documents for people" if re.search(r"\b2,?000 documents\b", r[-1].out)
             else None))
    add(Case("21 train --unit user: no warning suggests --private-vocabulary, which --unit user refuses",
             [["train", "--corpus", C, "--unit", "user", "--user-field", "user", "--epsilon", "2", "--topics", "2",
               "--no-ledger", "--test-size", "0", "--out", "m"]],
             check=lambda r, c: "a warning suggests --private-vocabulary" if re.search(
                 r"^warning:.*(or choose one privately|select it privately) \(--private-vocabulary\)",
                 r[-1].err + r[-1].out, re.M) else None, timeout=90))
    add(Case("21 train --unit user --help labels no option '(--unit document)'",
             [["train", "--unit", "user", "--help"]],
             check=lambda r, c: "help labels a --unit user option '(--unit document)'"
             if "(--unit document)" in r[-1].out else None))
    add(Case("21 corpus info --user-field lists near-identical ids",
             [["corpus", "info", fx["lookalike"], "--user-field", "user"]],
             check=lambda r, c: None if r[-1].rc == 0 and "alice" in r[-1].out.lower() and "similar" in
             r[-1].out.lower() else "no list of people with near-identical ids"))
    add(Case("21 the HTML report's audit chart title is whole", [_py("""
        import io
        import matplotlib.image as mpimg
        from dptopic.attacks.one_run import bound_figure
        audit = {"empirical_epsilon": {"epsilon_lower_bound": 0.8, "ideal_bound": 2.5, "confidence": 0.95,
                 "n_canaries": 1000, "canary_unit": "person", "canary_documents": 5, "score": "release"},
                 "claimed_privacy": {"epsilon": 3.0}, "score": "release"}
        img = mpimg.imread(io.BytesIO(bound_figure(audit)))
        band = (img[..., :3].mean(axis=2) < 0.5)[: int(0.12 * img.shape[0])]
        if band[:, -4:].any(): wrong("the chart's title runs past its right edge")
    """)]))

    # issue 92: the ledger's and budget's items
    user_run = ["train", "--corpus", C, "--unit", "user", "--user-field", "user", "--epsilon", "1", "--topics", "2",
                "--ledger", "l.sqlite", "--dataset", "d", "--out", "m", "--test-size", "0", "--quiet"]
    for sql, what in (("DELETE FROM docs", "its document rows deleted"),
                      ("UPDATE docs SET doc = NULL WHERE rowid = 1", "a document row's doc set NULL"),
                      ("UPDATE docs SET copies = 1000000 WHERE rowid = 1", "a document row's copies set to 10^6")):
        add(Case(f"92 ledger: a ledger with {what} is refused", [
            user_run,
            _py(f"""
                import sqlite3
                con = sqlite3.connect("l.sqlite"); con.execute({sql!r}); con.commit(); con.close()
            """),
            ["budget", "show", "--ledger", "l.sqlite", "--person-level"]], names=("l.sqlite", "--ledger"),
            refuse=True, timeout=90))
    add(Case("92 ledger: --ledger mysql://x@y/z is refused and creates nothing", [
        ["budget", "cap", "--dataset", "d", "--epsilon", "1", "--ledger", "mysql://x@y/z"]], names=("--ledger",),
        refuse=True, check=lambda r, c: "a file was created for the URL" if (Path(c) / "mysql:").exists() else None))
    add(Case("92 ledger: --ledger sqlite:///x.sqlite is the file x.sqlite", [
        ["budget", "cap", "--dataset", "d", "--epsilon", "1", "--ledger", "sqlite:///x.sqlite"]],
        check=lambda r, c: None if (Path(c) / "x.sqlite").is_file() and not (Path(c) / "sqlite:").exists()
        else "sqlite:///x.sqlite did not name the file x.sqlite"))
    add(Case("92 ledger: --ledger POSTGRESQL://... is one line", [
        ["budget", "show", "--ledger", "POSTGRESQL://nobody@127.0.0.1:1/none"]],
        names=("--ledger", "postgresql://nobody@127.0.0.1:1/none"), refuse=True, timeout=30))
    add(Case("92 ledger: dataset names the command line refuses are refused in Python", [_py(f"""
        import dptopic
        from dptopic.models import DocDPCooccurrence
        c = read_corpus({C!r})
        for kw in ({{"dataset": ""}}, {{"dataset": "d", "ledger": False}}, {{"dataset": "content:abc", "ledger": "l"}},
                   {{"dataset": "audit-shadow:x", "ledger": "l"}}):
            for fit in (lambda: DocDPCooccurrence(epsilon=1.0, n_topics=2, **kw).fit(c),
                        lambda: dptopic.train(c, algorithm="docdp-cooc", epsilon=1, n_topics=2, metrics=False, **kw)):
                try:
                    fit(); wrong(f"{{kw}} accepted")
                except dptopic.DPTopicError as e:
                    if "dataset" not in str(e): badly("the refusal names no dataset: " + str(e)[:80])
    """)], timeout=90))
    add(Case("92 ledger: budget cap --dataset content:abc is refused", [
        ["budget", "cap", "--dataset", "content:abc", "--epsilon", "1", "--ledger", "l.sqlite"]],
        names=("--dataset",), refuse=True))
    add(Case("92 ledger: person_total(5) is refused as the person fields refuse it", [_py("""
        import numpy as np, dptopic
        from dptopic.accounting import PureDPEvent
        from dptopic.dataset_ledger.identity import Documents
        from dptopic.dataset_ledger.ledger import DatasetLedger
        L = DatasetLedger("l.sqlite")
        L.debit("d", "T", "user", [(PureDPEvent(1.0), 1)], 1e-5,
                documents=Documents(np.arange(1, 4, dtype=np.uint64), ["5", "5", "6"]))
        try:
            if L.person_total(5)["epsilon"] != L.person_total("5")["epsilon"]: wrong("person_total(5) differs from '5'")
            badly("person_total(5) is taken, where the person fields refuse ids that are not strings")
        except dptopic.DPTopicError as e:
            if "person" not in str(e): badly("the refusal names no person: " + str(e)[:80])
    """)]))
    add(Case("92 ledger: DatasetLedger('') says it names no ledger", [_py("""
        import dptopic
        from dptopic.dataset_ledger.ledger import DatasetLedger
        try:
            DatasetLedger(""); wrong("DatasetLedger('') opened a ledger")
        except dptopic.DPTopicError as e:
            if "folder" in str(e): badly("DatasetLedger('') says: " + str(e)[:80])
    """)]))
    add(Case("92 ledger: a damaged key row is refused before the corpus is read", [
        ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2", "--ledger",
         "l.sqlite", "--out", "m", "--test-size", "0", "--quiet"],
        _py("""
            import sqlite3
            con = sqlite3.connect("l.sqlite"); con.execute("UPDATE meta SET value = 'xyz' WHERE key = 'key'")
            con.commit(); con.close()
        """),
        ["train", "--corpus", fx["fifo"], "--format", "text", "--algorithm", "docdp-cooc", "--epsilon", "1",
         "--ledger", "l.sqlite", "--out", "m2"]], names=("l.sqlite", "--ledger"), refuse=True, timeout=60,
        check=lambda r, c: None if "hashing key" in r[-1].err else "the corpus was read before the ledger was checked"))
    add(Case("92 ledger: a write that waits for a held ledger says so", [_py("""
        import sqlite3, numpy as np
        from dptopic.accounting import PureDPEvent
        from dptopic.dataset_ledger import store
        from dptopic.dataset_ledger.identity import Documents
        from dptopic.dataset_ledger.ledger import DatasetLedger
        import dptopic
        L = DatasetLedger("l.sqlite")
        store.LOCK_TIMEOUT = 1.0
        holder = sqlite3.connect("l.sqlite", isolation_level=None); holder.execute("BEGIN IMMEDIATE")
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            try:
                L.debit("d", "T", "document", [(PureDPEvent(1.0), 1)], 1e-5,
                        documents=Documents(np.arange(1, 4, dtype=np.uint64)))
                wrong("a write went through a held ledger")
            except dptopic.DPTopicError:
                pass
        if not [w for w in said if "waiting" in str(w.message)]: badly("a write waits for a held ledger in silence")
    """)]))
    add(Case("92 budget: plan --algorithm X --unit U says they cannot be combined", [
        ["budget", "plan", "--dataset", "d", "--algorithm", "hdp", "--unit", "document", "--epsilon", "1",
         "--ledger", "l.sqlite"]], names=("--algorithm", "--unit"), refuse=True,
        check=lambda r, c: None if re.search(r"drop --(algorithm|unit)|cannot be combined", r[-1].err)
        else "the refusal of both flags says which to keep for neither"))
    add(Case("92 budget: cap --per-person --dataset D says they cannot be combined", [
        ["budget", "cap", "--per-person", "--dataset", "d", "--epsilon", "1", "--ledger", "l.sqlite"]],
        names=("--per-person", "--dataset"), refuse=True,
        check=lambda r, c: None if "cannot be combined" in r[-1].err
        else "the refusal of both flags says which to keep for neither"))
    # issue 92, what a new user reads: words public vectors placed, the forecast for few people, the reference
    placed = fx.get("m_placed", "")
    add(Case("92 topic_words returns the vocabulary's words; placed_words_ says which the vectors placed", [_py(f"""
        from dptopic.models import load
        m = load({placed!r})
        words = set(m.vocabulary_.words)
        lists = m.topic_words(30, estimated_only=False)
        odd = [w for t in lists for w in t if w not in words]
        if odd: wrong(f"topic_words returns {{len(odd)}} strings that are no word of the vocabulary, e.g. {{odd[0]!r}}")
        mask = getattr(m, "placed_words_", "missing")
        if isinstance(mask, str): wrong("no placed_words_ attribute says which words the vectors placed")
        if mask is None or not mask.any(): wrong("the fixture's vectors placed no word (the case checks nothing)")
    """)], needs=("m_placed",)))
    def _estimated_counts(r, c):
        lines = [ln for ln in r[-1].out.splitlines() if re.search(r"\w\*", ln)]
        if not lines:
            return "no placed word is marked '*' in the printed topics"
        if any("words estimated" not in ln for ln in lines):
            return "a topic line with placed words does not say how many of its words the release estimated"
        return None
    add(Case("92 topics: a topic line with placed words says how many of its words were estimated",
             [["topics", placed, "--show-unsupported", "-n", "20"]], needs=("m_placed",),
             check=_estimated_counts))

    def _people_needed(r, c):
        out = " ".join(r[-1].out.split())
        if "NOT useful yet" in out and re.search(r"people for useful topics \([^)]*\) at this epsilon: [\d,]+ or fewer",
                                                 out):
            return "'NOT useful yet' beside a count of people for useful topics that the 2,129 given may meet"
        if "NOT useful yet" in out and "to get useful topics" not in out:
            return "'NOT useful yet' with no word on what to do"
        return None
    add(Case("92 recommend --unit user --epsilon 2 --docs 2129: the people needed agree with the verdict",
             [["recommend", "--unit", "user", "--epsilon", "2", "--docs", "2129"]], check=_people_needed))

    def _fewer_topics(r, c):
        def count(out):
            m = re.search(r"topics the budget supports: (?:at most )?(\d+) of", " ".join(out.split()))
            return int(m.group(1)) if m else None
        ten, twenty = count(r[0].out), count(r[1].out)
        if ten is not None and twenty is not None and ten < twenty and "cannot have more" not in r[0].out:
            return f"--topics 10 forecasts {ten} supported topics against {twenty} at 20, with no word why"
        return None
    add(Case("92 recommend --topics 10: fewer supported topics than at 20 say why",
             [["recommend", "--unit", "user", "--epsilon", "4", "--docs", "2129", "--topics", t] for t in ("10", "20")],
             check=_fewer_topics))
    add(Case("92 train --unit user prints the non-private reference beside its perplexity",
             [["train", "--corpus", C, "--unit", "user", "--user-field", "user", "--epsilon", "2", "--topics", "2",
               "--no-ledger", "--test-size", "0.3", "--out", "m"]],
             check=lambda r, c: None if r[-1].rc != 0 or re.search(
                 r"non-private reference: perplexity [\d.]+", " ".join(r[-1].out.split()))
             else "a held-out perplexity with no non-private reference beside it", timeout=120))
    return cases


# the Python cases of a secure-sum round's server: a live app (a single round's or the committee mode's) served by
# uvicorn on 127.0.0.1 in a thread of the case's process, and one request
SECURE_PRELUDE = """
import socket, subprocess, threading, time, urllib.error, urllib.request
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
def serve_app(app):
    import uvicorn
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", access_log=False))
    threading.Thread(target=server.run, daemon=True).start()
    for _ in range(400):
        if server.started:
            break
        time.sleep(0.05)
    return "http://127.0.0.1:%d" % port
def call(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in (e.headers or {}).items()}, e.read()
def invited(n=6, committee=False, dropouts=2):
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory
    make_invitations("enroll.key", n, "inv", round_id="r1", committee=committee, dropouts=dropouts, collusion=0)
    return read_directory("inv/directory.json")
WORDS = ["w%02d" % i for i in range(30)]
def round_app(n=6, dropouts=2, committee=False):
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    d = invited(n, committee, dropouts)
    if committee:
        from dptopic.service.secure_sum.committee_app import create_committee_app
        plan = SecureSumPlan(8.0, 1e-5, n, dropouts, 30, 0, committee="auto")
        return create_committee_app(plan, d, WORDS, 3, admin_token="t" * 24)
    from dptopic.service.secure_sum.config import SecureSumConfig
    from dptopic.service.secure_sum.default_app import create_secure_sum_app
    cfg = SecureSumConfig(WORDS, SecureSumPlan(8.0, 1e-5, n, dropouts, 30, 0), d, n_topics=3,
                          database="sqlite:///r.db", admin_token="t" * 24)
    return create_secure_sum_app(cfg, freeze_gc=False)
def dptopic(*args):
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          timeout=120)
"""


def _secure(code: str) -> tuple:
    return ("python", SECURE_PRELUDE + textwrap.dedent(code))


def secure_sum_operation_cases(fx: dict, port: int) -> list[Case]:
    """The secure sum's operational cases (issue 92's, badly worded: no-shows, submit's first request and limits,
    the round's files, the round servers' HTTP answers); ``port``: the first TCP port the servers that should refuse
    may take."""
    C, V = fx["corpus"], fx["vocab"]
    invite = ["secure-sum", "invite", "--key", "enroll.key", "--count", "3", "--out", "inv", "--collusion", "0"]
    cases = []
    add = cases.append

    # no-shows: the roster closes without them within what the plan tolerates, and the server says so at start
    add(Case("92 secure: a roster closed with one no-show (within F) goes on to the shares", [_secure("""
        from dptopic.contributor.secure_sum.default import SecureContributor
        from dptopic.protocol.secure_sum.plan import SecureSumPlan
        from dptopic.protocol.secure_sum.enrollment import read_invitation
        from dptopic.service.secure_sum.config import SecureSumConfig
        from dptopic.service.secure_sum.default import SecureRound
        import numpy as np
        d = invited(6)
        cfg = SecureSumConfig(WORDS, SecureSumPlan(8.0, 1e-5, 6, 2, 30, 0), d, n_topics=3, database="sqlite:///r.db")
        rnd = SecureRound(cfg)
        doc = {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": WORDS, "vocab_size": 30,
               "n_topics": 3, "round_id": "r1", "secure_sum": cfg.plan.to_dict(), "epsilon": 8.0, "delta": 1e-5,
               "directory": d}
        bow = (np.array([0, 2]), np.array([1, 2]), np.ones(2, np.int64))
        for i in range(1, 6):
            c = SecureContributor(doc, bow, read_invitation("inv/invitation-%04d.json" % i))
            r = c.registration()
            rnd.post_keys(r["contributor"], r["keys"], r["signature"])
        view = rnd.close()
        if view["state"] != "shares":
            wrong("one no-show of the 2 the plan tolerates failed the round: " + str(view.get("reason"))[:100])
        try:
            from dptopic.service.secure_sum.config import roster_line
        except ImportError:
            badly("the server says nothing at start of what a no-show does")
    """)], timeout=90))
    add(Case("92 secure: serve --registration-deadline 0 is refused", [
        invite, ["serve", "--report-kind", "secure-sum", "--vocabulary", V, "--database", "sqlite:///s.db", "--port",
                 str(port), "--unit", "user", "--epsilon", "1", "--directory", "inv/directory.json",
                 "--registration-deadline", "0"]],
        names=("--registration-deadline",), refuse=True, server=True, timeout=20))

    # submit: the first request retried; every local limit before anything is sent; --state none
    add(Case("92 secure: submit --retries 2 retries the first GET /v1/config", [invite, _secure(f"""
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        seen = []
        class H(BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append(self.path)
                body = b'{{"error": {{"code": "starting", "message": "starting"}}}}'
                self.send_response(503); self.send_header("Content-Length", str(len(body))); self.end_headers()
                self.wfile.write(body)
            def log_message(self, *a):
                pass
        srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        r = dptopic("submit", "--server", "http://127.0.0.1:%d" % srv.server_address[1], "--corpus", {C!r},
                    "--invitation", "inv/invitation-0001.json", "--state", "s.json", "--retries", "2")
        if len(seen) != 3:
            wrong("the first GET /v1/config was tried %d time(s) with --retries 2" % len(seen))
    """)], timeout=90))
    add(Case("92 secure: submit to a committee round checks --max-epsilon before its keys", [_secure(f"""
        app = round_app(6, 2, committee=True)
        url = serve_app(app)
        r = dptopic("submit", "--server", url, "--corpus", {C!r}, "--invitation", "inv/invitation-0001.json",
                    "--state", "s.json", "--max-epsilon", "1", "--retries", "0")
        if app.state.served.rnd.keys:
            wrong("the keys were registered before --max-epsilon refused the round")
    """)], timeout=120))
    add(Case("92 secure: submit --state none with an invitation", [
        invite, ["submit", "--server", "http://127.0.0.1:9", "--corpus", C, "--invitation",
                 "inv/invitation-0001.json", "--state", "none", "--retries", "0"]],
        names=("--state",), refuse=True))

    # the round's files
    for flag, what in (("--key", "key"), ("--directory", "directory"), ("--invitation", "invitation")):
        steps = [("touch", f"junk-{what}.json")]
        if flag == "--key":
            steps.append(["secure-sum", "invite", "--key", f"junk-{what}.json", "--count", "3", "--out", "inv",
                          "--collusion", "0"])
        elif flag == "--directory":
            steps.append(["serve", "--report-kind", "secure-sum", "--vocabulary", V, "--database", "sqlite:///s.db",
                          "--port", str(port + 1), "--unit", "user", "--epsilon", "1", "--directory",
                          f"junk-{what}.json"])
        else:
            steps.append(["submit", "--server", "http://127.0.0.1:9", "--corpus", C, "--invitation",
                          f"junk-{what}.json", "--retries", "0"])
        add(Case(f"92 secure: {'an' if what[0] in 'aeiou' else 'a'} {what} that is not JSON ({flag})", steps,
                 names=(f"junk-{what}.json",), refuse=True, server=flag == "--directory", timeout=30))
    add(Case("92 secure: an invitation others can read is used with a word", [invite, _secure(f"""
        os.chmod("inv/invitation-0001.json", 0o644)
        r = dptopic("submit", "--server", "http://127.0.0.1:9", "--corpus", {C!r}, "--invitation",
                    "inv/invitation-0001.json", "--state", "s.json", "--retries", "0")
        if "chmod 600" not in r.stderr:
            badly("an invitation readable by everyone is used without a word")
    """)]))
    add(Case("92 secure: a token file others can read is used with a word", [_py("""
        Path("token").write_text("t" * 32)
        os.chmod("token", 0o644)
        from dptopic.service.config import read_token_file
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            read_token_file("token")
        if not any("chmod 600" in str(x.message) for x in w):
            badly("an admin token file readable by everyone is used without a word")
    """)]))
    add(Case("92 secure: invite --out under a folder it cannot write", [_py("""
        import contextlib, io
        from dptopic.cli.main import main
        from dptopic.protocol.secure_sum import enrollment
        os.mkdir("ro")
        real = os.access
        enrollment.os.access = lambda p, mode: False if os.path.abspath(p) == os.path.abspath("ro") else real(p, mode)
        real_write = enrollment.atomic_write_bytes
        def refused(path, *a, **k):       # a folder this user may not write (as root, the kernel lets it)
            if os.path.abspath(path).startswith(os.path.abspath("ro")):
                raise PermissionError(13, "Permission denied", str(path))
            return real_write(path, *a, **k)
        enrollment.atomic_write_bytes = refused
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            main(["secure-sum", "invite", "--key", "enroll.key", "--count", "3", "--out", "ro/inv", "--collusion", "0"])
        line = err.getvalue().strip()
        if "PermissionError" in line or "ro" not in line or "--out" not in line:
            badly("invite into a read-only folder says: " + line[:120])
    """)]))

    # the round servers' HTTP answers: deep JSON, unknown routes and methods, in the API's JSON shape
    for mode in ("single", "committee"):
        add(Case(f"92 secure: the {mode} round's server answers deep JSON and unknown routes in JSON", [_secure(f"""
            url = serve_app(round_app(6, 2, committee={mode == "committee"!r}))
            path = "/v1/secure/prekeys" if {mode == "committee"!r} else "/v1/secure/keys"
            status, h, body = call("POST", url + path, b"[" * 3000 + b"]" * 3000)
            if status != 400 or "json" not in h.get("content-type", ""):
                badly("3,000 nested brackets: %d %s" % (status, body[:60]))
            for method, p, want in (("GET", "/no/such/route", 404), ("DELETE", "/v1/config", 405)):
                status, h, body = call(method, url + p)
                if status != want or "json" not in h.get("content-type", ""):
                    badly("%s %s: %d %s, not the API's JSON error" % (method, p, status, body[:40]))
        """)], timeout=90))
    return cases


# issue 92's inputs: nothing spent before the input is good, public vectors files, the Python front door
VECTORS_PY = """
import gzip
from dptopic.corpus.vectors import load_public_vectors, PublicVectors
WORDS = {words!r}
def vectors_text(sep=" "):
    return "".join(w + sep + sep.join(f"{{0.1 * (i % 7) + 0.01 * j:.3f}}" for j in range(4)) + "\\n"
                   for i, w in enumerate(WORDS))
def releases(path):
    import sqlite3
    if not Path(path).exists(): return 0
    with sqlite3.connect(path) as con: return con.execute("select count(*) from releases").fetchone()[0]
"""


def _releases_recorded(folder, name="l.sqlite") -> int:
    import sqlite3

    path = Path(folder) / name
    if not path.exists():
        return 0
    with sqlite3.connect(path) as con:
        return con.execute("select count(*) from releases").fetchone()[0]


def input_cases(fx: dict) -> list[Case]:
    """Issue 92's cases of bad input: a release spent before the input is known good, public vectors read without a
    bound, public vectors files read wrongly, and the Python front door (the item leads each id)."""
    C = fx["corpus"]
    words = sorted({w for t in TOPIC_WORDS for w in t})
    pre = VECTORS_PY.format(words=words)

    def vpy(code: str) -> tuple:        # the prelude, then the case's own code (dedented apart)
        return ("python", pre + textwrap.dedent(code))

    cases = []
    add = cases.append

    # 1. budget spent before the input is known good
    add(Case("92 budget: --private-vocabulary with a malformed --public-vectors records nothing", [
        vpy('Path("bad.txt").write_text("river 0.1 0.2\\nwater 0.3\\n")'),
        ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2",
         "--private-vocabulary", "8,1e-6", "--public-vectors", "bad.txt", "--ledger", "l.sqlite", "--dataset", "d",
         "--out", "m"]], names=("bad.txt", "--public-vectors"), refuse=True, timeout=120,
        check=lambda r, c: "the vocabulary was drawn and recorded before the vectors were refused"
        if _releases_recorded(c) else None))
    add(Case("92 budget: PublicVectors built in Python are checked as files are", [vpy("""
        import numpy as np, dptopic
        bad = {"a NaN row": lambda: PublicVectors("x", WORDS, np.where(np.eye(len(WORDS), 4) > 0, np.nan, 1.0)),
               "401 words for 400 rows": lambda: PublicVectors("x", ["w"] * 401, np.ones((400, 3)), "0" * 64),
               "a 1-D array": lambda: PublicVectors("x", WORDS, np.ones(len(WORDS)), "0" * 64),
               "name=None": lambda: PublicVectors(None, WORDS, np.ones((len(WORDS), 4)), None)}
        for what, make in bad.items():
            try:
                make(); wrong(what + " accepted")
            except dptopic.DPTopicError as e:
                if "\\n" in str(e): badly(what + ": not one line")
            except Exception as e:
                badly(what + f": a raw {type(e).__name__}")
    """)]))
    for what, kw in (("a vocabulary policy no set union takes", 'vocabulary_policy="bogus"'),
                     ("a seed no generator takes beside model=", 'model=DocDPCooccurrence(n_topics=2), seed="x"'),
                     ("PublicVectors spoiled after they were made", 'public_vectors=spoiled')):
        add(Case(f"92 budget: {what} is refused before the ledger records anything", [vpy(f"""
            import numpy as np, dptopic
            from dptopic.models import DocDPCooccurrence
            from dptopic.corpus import Corpus
            texts = [json.loads(x)["text"] for x in Path({C!r}).read_text().splitlines()]
            c = Corpus.from_texts(texts, max_vocab=None)
            if "spoiled" in {kw!r}:     # made good (checked when made), then spoiled: checked again when read
                spoiled = PublicVectors("mine", list(c.vocabulary.words), np.ones((c.vocab_size, 4)))
                spoiled.vectors[0, 0] = np.nan
            kw = dict(algorithm="docdp-cooc", epsilon=1.0, n_topics=2)
            kw = {{}} if "model=" in {kw!r} else kw
            try:
                dptopic.train(c, private_vocabulary=(8.0, 1e-6), ledger="l.sqlite", dataset="d", metrics=False,
                              **kw, {kw})
                wrong("accepted")
            except dptopic.DPTopicError:
                pass
            except Exception as e:
                badly(f"a raw {{type(e).__name__}}")
            if releases("l.sqlite"): wrong("a release was recorded before the refusal")
        """)], timeout=120))

    # 3. --public-vectors read without a bound
    add(Case("92 vectors read: a gzipped file of NUL bytes with no newline", [
        vpy('with gzip.open("zeros.txt.gz", "wb") as f:\n    [f.write(bytes(1 << 20)) for _ in range(64)]'),
        ["train", "--corpus", C, "--unit", "document", "--epsilon", "1", "--topics", "2", "--public-vectors",
         "zeros.txt.gz", "--out", "m", "--no-ledger"]], names=("zeros.txt.gz", "--public-vectors"), refuse=True,
        timeout=60))
    for dev in ("/dev/zero", "fifo"):
        path = fx["fifo"] if dev == "fifo" else dev
        add(Case(f"92 vectors read: --public-vectors {dev}", [
            ["train", "--corpus", C, "--unit", "document", "--epsilon", "1", "--topics", "2", "--public-vectors", path,
             "--out", "m", "--no-ledger"]], names=(path, "--public-vectors"), refuse=True, timeout=60))

    # public vectors files
    add(Case("92 vectors files: tabs, a byte-order mark and .TXT.GZ read as the text format", [vpy("""
        Path("tabs.tsv").write_text(vectors_text("\\t"))
        Path("bom.txt").write_bytes(b"\\xef\\xbb\\xbf" + vectors_text().encode())
        with gzip.open("UP.TXT.GZ", "wt") as f: f.write(vectors_text())
        import dptopic
        for name in ("tabs.tsv", "bom.txt", "UP.TXT.GZ"):
            try:
                v = load_public_vectors(name)
            except dptopic.DPTopicError as e:
                wrong(f"{name} refused: {str(e)[:80]}")
            if v.words != WORDS: wrong(f"{name}: the words read are not the file's ({v.words[0]!r} first)")
    """)]))
    for spec, said in (("", "empty"), (fx["dir"], "folder")):
        add(Case(f"92 vectors files: --public-vectors {spec!r} says what it is", [
            ["train", "--corpus", C, "--unit", "document", "--epsilon", "1", "--topics", "2", "--public-vectors", spec,
             "--out", "m", "--no-ledger"]], names=("--public-vectors",), refuse=True,
            check=lambda r, c, said=said: None if said in r[-1].err and "no such file" not in r[-1].err
            else f"the refusal does not say it is {said}"))

    # 4. the Python front door
    add(Case("92 front door: numpy numbers are numbers", [_py(f"""
        import numpy as np, dptopic
        c = read_corpus({C!r})
        try:
            dptopic.train(c, unit="document", epsilon=np.float32(2.0), n_topics=np.int64(2), test_size=np.float32(0.2),
                          ledger=False, metrics=False)
        except dptopic.DPTopicError as e:
            wrong("refused: " + str(e)[:100])
    """)], timeout=120))
    for what, kw in (("callback=5", "algorithm='docdp-cooc', epsilon=1.0, callback=5"),
                     ("a class as model=", "model=dptopic.DocDPCooccurrence"),
                     ("a list as public_corpus=", "algorithm='docdp-cooc', epsilon=1.0, public_corpus=['a b']"),
                     ("metrics='bogus'", "algorithm='docdp-cooc', epsilon=1.0, metrics='bogus'"),
                     ("split_as='x'", "algorithm='docdp-cooc', epsilon=1.0, split_as='x'"),
                     ("user_field= at the document unit", "algorithm='docdp-cooc', epsilon=1.0, user_field='user'"),
                     ("unit= beside model=", "model=dptopic.DocDPCooccurrence(n_topics=2), unit='user', epsilon=1.0"),
                     ("epsilon= beside model=", "model=dptopic.DocDPCooccurrence(n_topics=2), epsilon=5.0"),
                     ("n_topics= beside model=", "model=dptopic.DocDPCooccurrence(n_topics=2), n_topics=5")):
        add(Case(f"92 front door: {what} is refused in one line before anything is spent", [vpy(f"""
            import dptopic
            c = read_corpus({C!r})
            try:
                dptopic.train(c, ledger="l.sqlite", dataset="d", test_size=0, {kw})
                wrong("accepted")
            except dptopic.DPTopicError as e:
                if "\\n" in str(e): badly("not one line")
            except Exception as e:
                badly(f"a raw {{type(e).__name__}}: {{str(e)[:80]}}")
            if releases("l.sqlite"): wrong("a release was recorded")
        """)], timeout=120))
    add(Case("92 front door: vocabulary='path.txt' is read as a word list", [_py(f"""
        import dptopic
        c = read_corpus({C!r})
        r = dptopic.train(c, algorithm="lda", n_topics=2, n_iter=2, verbose=0, vocabulary={fx['vocab']!r},
                          test_size=0)
        if any(len(w) == 1 for w in r.vocabulary): wrong("the path was read as a list of its characters")
    """)], timeout=120))
    return cases


def _check_useful(r, c):
    out = r[-1].out
    sup = re.search(r"supports:[^\n]*?\b([01]) of (\d+) topics", out)
    if re.search(r"-> useful\b", out) and sup:
        return f"'useful' beside {sup.group(1)} of {sup.group(2)} topics supported"
    return None


# ------------------------------------------------------------------------------------------------------ the sweep
NUMBERS = ["nan", "inf", "-inf", "-1", "0", "1e308", "1e-320", "99999999999999999999999", "\uff10.\uff15", "\u0661",
           "0x10", "1e", "", " ", "[/]", "1,5", "-0", "2**31"]
INTEGERS = ["nan", "-1", "0", "3.5", "99999999999999999999", "1e3", "\u0663", "", "[bold]2", "2147483648"]
NAMES = ["[/]", "[bold red]x", "a\x1b[31mb", "a\x07b", "\u202eabc", unicodedata.normalize("NFD", "José"), "a\nb", "",
         " ", "x" * 3000, "..", "../x", "a/b", "\t", "%s%n", "{0}", "\uff44\uff45\uff4d\uff4f", "[link=http://x]y[/]"]
FILES = ["fifo", "/dev/zero", "/dev/urandom", "/dev/null", "empty", "truncated", "binary", "dir", "missing", "loop",
         "markup_name", "long", "nul"]
MODELS = ["truncated_model", "empty_model", "missing_arrays", "markup_trainer", "nan_epsilon", "string_topics",
          "dir_not_model", "fifo", "missing", "model_json_list"]


def sweep_templates(fx: dict) -> list[tuple]:
    """``(argv with {slot} placeholders, {slot: (flag, kind, valid value)})``: one slot is given an odd value."""
    C, V = fx["corpus"], fx["vocab"]
    T = []
    add = T.append
    add((["train", "--corpus", "{corpus}", "--algorithm", "docdp-cooc", "--epsilon", "{epsilon}", "--delta",
          "{delta}", "--topics", "{topics}", "--dataset", "{dataset}", "--ledger", "{ledger}", "--out", "{out}",
          "--test-size", "{test}"],
         {"corpus": ("--corpus", "file", C), "epsilon": ("--epsilon", "number", "1"),
          "delta": ("--delta", "number", "1e-5"), "topics": ("--topics", "int", "2"),
          "dataset": ("--dataset", "name", "d"), "ledger": ("--ledger", "file_out", "l.sqlite"),
          "out": ("--out", "name", "m"), "test": ("--test-size", "number", "0.2")}))
    add((["train", "--corpus", "{corpus}", "--algorithm", "lda", "--topics", "{topics}", "--iterations", "{iters}",
          "--alpha", "{alpha}", "--text-field", "{field}", "--vocabulary", "{vocab}", "--out", "m", "--seed", "{seed}"],
         {"corpus": ("--corpus", "file", C), "topics": ("--topics", "int", "2"), "iters": ("--iterations", "int", "5"),
          "alpha": ("--alpha", "number", "0.1"), "field": ("--text-field", "name", "text"),
          "vocab": ("--vocabulary", "file", V), "seed": ("--seed", "int", "1")}))
    add((["train", "--corpus", "{corpus}", "--unit", "user", "--user-field", "{field}", "--epsilon", "{epsilon}",
          "--topics", "2", "--out", "m", "--no-ledger", "--test-size", "0"],
         {"corpus": ("--corpus", "file", C), "field": ("--user-field", "name", "user"),
          "epsilon": ("--epsilon", "number", "4")}))
    add((["train", "--corpus", "{corpus}", "--algorithm", "fed", "--epsilon", "{epsilon}", "--topics", "2",
          "--rounds", "{rounds}", "--pad-length", "{pad}", "--out", "m", "--no-ledger", "--test-size", "0"],
         {"corpus": ("--corpus", "file", C), "epsilon": ("--epsilon", "number", "20"),
          "rounds": ("--rounds", "int", "2"), "pad": ("--pad-length", "int", "16")}))
    add((["topics", "{model}", "-n", "{n}", "--format", "{fmt}"],
         {"model": ("MODEL", "model", fx.get("m_cooc", "missing")), "n": ("-n", "int", "5"),
          "fmt": ("--format", "name", "table")}))
    add((["refit", "{model}", "--topics", "{k}", "--out", "{out}"],
         {"model": ("MODEL", "model", fx.get("m_cooc", "missing")), "k": ("--topics", "int", "2"),
          "out": ("--out", "name", "r")}))
    add((["recommend", "--epsilon", "{epsilon}", "--docs", "{docs}", "--topics", "{topics}", "--delta", "{delta}",
          "--doc-length", "{len}", "--unit", "{unit}"],
         {"epsilon": ("--epsilon", "number", "1"), "docs": ("--docs", "number", "5000"),
          "topics": ("--topics", "int", "20"), "delta": ("--delta", "number", "1e-5"),
          "len": ("--doc-length", "number", "100"), "unit": ("--unit", "name", "document")}))
    add((["corpus", "info", "{corpus}", "--top", "{top}", "--text-field", "{field}", "--min-df", "{mindf}"],
         {"corpus": ("FILE", "file", C), "top": ("--top", "int", "5"), "field": ("--text-field", "name", "text"),
          "mindf": ("--min-df", "number", "1")}))
    add((["corpus", "prepare", "--corpus", "{corpus}", "--out", "{out}", "--max-vocab", "{mv}", "--stop-words",
          "{sw}"],
         {"corpus": ("--corpus", "file", C), "out": ("--out", "name", "p.npz"), "mv": ("--max-vocab", "int", "100"),
          "sw": ("--stop-words", "file", "english")}))
    add((["budget", "show", "--ledger", "{ledger}", "--dataset", "{dataset}", "--json"],
         {"ledger": ("--ledger", "file_out", "l.sqlite"), "dataset": ("--dataset", "name", "d")}))
    add((["budget", "cap", "--ledger", "{ledger}", "--dataset", "{dataset}", "--epsilon", "{epsilon}", "--delta",
          "{delta}"],
         {"ledger": ("--ledger", "file_out", "l.sqlite"), "dataset": ("--dataset", "name", "d"),
          "epsilon": ("--epsilon", "number", "5"), "delta": ("--delta", "number", "1e-5")}))
    add((["privacy", "verify", "{model}"], {"model": ("model", "model", fx.get("m_cooc", "missing"))}))
    add((["privacy", "compose", "--laplace", "{eps}", "{count}", "--delta", "{delta}"],
         {"eps": ("--laplace", "number", "1"), "count": ("--laplace", "int", "3"),
          "delta": ("--delta", "number", "1e-5")}))
    add((["report", "{model}", "--out", "{out}", "--title", "{title}", "--top", "{top}"],
         {"model": ("MODEL", "model", fx.get("m_cooc", "missing")), "out": ("--out", "name", "r.html"),
          "title": ("--title", "name", "t"), "top": ("--top", "int", "5")}))
    add((["transform", "{model}", "--corpus", "{corpus}", "--out", "{out}"],
         {"model": ("MODEL", "model", fx.get("m_lda", "missing")), "corpus": ("--corpus", "file", C),
          "out": ("--out", "name", "t.csv")}))
    add((["evaluate", "{model}", "--corpus", "{corpus}", "--top-n", "{n}", "--window", "{w}"],
         {"model": ("MODEL", "model", fx.get("m_lda", "missing")), "corpus": ("--corpus", "file", C),
          "n": ("--top-n", "int", "5"), "w": ("--window", "int", "10")}))
    add((["export", "{model}", "--to", "pyldavis", "--corpus", "{corpus}", "--out", "{out}"],
         {"model": ("MODEL", "model", fx.get("m_lda", "missing")), "corpus": ("--corpus", "file", C),
          "out": ("--out", "name", "e.json")}))
    add((["randomize", "--vocabulary", "{vocab}", "--unit", "word", "--epsilon-word", "{eps}", "--corpus",
          "{corpus}", "--out", "{out}"],
         {"vocab": ("--vocabulary", "file", V), "eps": ("--epsilon-word", "number", "2"),
          "corpus": ("--corpus", "file", C), "out": ("--out", "name", "rep.jsonl")}))
    return T


def sweep_cases(fx: dict, n: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    templates = sweep_templates(fx)
    pools = {"number": NUMBERS, "int": INTEGERS, "name": NAMES, "file": FILES, "file_out": FILES + NAMES,
             "model": MODELS}
    cases = []
    for i in range(n):
        argv, slots = templates[rng.randrange(len(templates))]
        slot = sorted(slots)[rng.randrange(len(slots))]
        flag, kind, _ = slots[slot]
        pool = pools[kind]
        odd = pool[rng.randrange(len(pool))]
        value = fx.get(odd, odd) if kind in ("file", "model", "file_out") else odd
        if kind in ("file", "file_out", "model") and odd in ("missing",):
            value = "no/such/file"
        values = {"{" + k + "}": v[2] for k, v in slots.items()}
        values["{" + slot + "}"] = value
        filled = [values.get(a, a) for a in argv]
        names = tuple(x for x in (flag if flag.startswith("-") else None, value if kind in ("file", "model",
                                                                                          "file_out") else None,
                                  Path(value).name if kind in ("file", "model", "file_out") else None) if x)
        if flag in ("MODEL", "model", "FILE"):
            names += ("model", "folder", "FILE")
        shown = odd if len(odd) < 40 else odd[:12] + f"...({len(odd)} chars)"
        setup = [["budget", "cap", "--dataset", "d", "--epsilon", "5", "--ledger", "l.sqlite"]] \
            if argv[0] == "budget" else []
        cases.append(Case(f"sweep {i}: {argv[0]}{' ' + argv[1] if not argv[1].startswith(('-', '{')) else ''}"
                          f" {flag} {shown!r}", setup + [filled], names=names, timeout=45,
                          check=_generic_check))
    return cases


def _generic_check(results, folder):
    r = results[-1]
    text = r.out + r.err
    if r.rc == 0 and re.search(r"epsilon\s*=\s*(nan|-\d|inf)", text, re.I):
        return "claims a non-finite or negative epsilon"
    if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]|\x1b(?!\[[0-9;]*m)", text):
        return "prints a raw control character the user gave (terminal injection)"
    return None


# ------------------------------------------------------------------------------------------------------ fixtures
TOPIC_WORDS = [["river", "water", "boat", "fish", "shore", "flood", "bridge", "stream"],
               ["money", "loan", "credit", "interest", "market", "stock", "price", "bank"],
               ["game", "team", "score", "player", "coach", "season", "match", "goal"]]


def _texts(rng, n, length=30, url_every=0):
    out = []
    for i in range(n):
        t = TOPIC_WORDS[i % 3]
        words = [rng.choice(t) for _ in range(length)]
        if url_every and i % url_every == 0:
            words.append("see https://example.com/page")
        out.append(" ".join(words))
    return out


def make_files(tmp: Path, seed: int) -> dict:
    rng = random.Random(seed)
    fx = {}
    d = tmp / "fixtures"
    d.mkdir(parents=True)
    texts = _texts(rng, 90, url_every=10)
    with open(d / "corpus.jsonl", "w") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"text": t, "user": f"u{i // 5}", "label": str(i % 3)}) + "\n")
    fx["corpus"] = str(d / "corpus.jsonl")
    public = _texts(random.Random(seed + 1), 150, length=25) + texts[:2]        # 2 private texts, cross-posted
    with open(d / "public.jsonl", "w") as f:
        for t in public:
            f.write(json.dumps({"text": t}) + "\n")
    fx["public"] = str(d / "public.jsonl")
    with open(d / "public_clean.jsonl", "w") as f:
        for t in _texts(random.Random(seed + 2), 150, length=25):
            f.write(json.dumps({"text": t}) + "\n")
    fx["public_clean"] = str(d / "public_clean.jsonl")
    with open(d / "urls.jsonl", "w") as f:
        for i, t in enumerate(_texts(random.Random(seed + 3), 60, length=20)):
            extra = " https://example.com/page" * 3 if i % 3 == 0 else ""
            f.write(json.dumps({"text": t + extra}) + "\n")
    fx["urls"] = str(d / "urls.jsonl")
    words = sorted({w for t in TOPIC_WORDS for w in t})
    (d / "vocab.txt").write_text("\n".join(words) + "\n")
    fx["vocab"] = str(d / "vocab.txt")
    with open(d / "lookalike.jsonl", "w") as f:
        ids = ["alice@example.com", "Alice@example.com", "alice@example.com ", "bob", "b0b", "carol"]
        for i, t in enumerate(_texts(random.Random(seed + 4), 36)):
            f.write(json.dumps({"text": t, "user": ids[i % len(ids)].strip() if i % 12 else ids[i % len(ids)]})
                    + "\n")
    fx["lookalike"] = str(d / "lookalike.jsonl")
    # 1,000 words, three topics of 300 words each: a person-level release at epsilon 1 estimates a few of them
    rng2 = random.Random(seed + 5)
    def word(i):        # runs of letters (the tokeniser keeps no digits): zaaa, zaab, ...
        return "z" + "".join("abcdefghijklmnopqrstuvwxyz"[(i // 26 ** j) % 26] for j in range(3))

    groups = [[word(300 * k + i) for i in range(300)] for k in range(3)]
    common = [word(900 + i) for i in range(100)]
    with open(d / "thin.jsonl", "w") as f:
        for i in range(600):
            words = [rng2.choice(groups[i % 3][:30] if rng2.random() < 0.6 else groups[i % 3]) for _ in range(30)]
            words += [rng2.choice(common) for _ in range(10)]
            f.write(json.dumps({"text": " ".join(words), "user": f"p{i // 5}"}) + "\n")
    fx["thin"] = str(d / "thin.jsonl")
    # public vectors of the thin corpus's words (GloVe text), each near its group's axis: the spread places the words
    # outside a release over the thin corpus in the topics of their group's kept words
    vec_rng = random.Random(seed + 6)
    with open(d / "thin_vectors.txt", "w") as f:
        for k, g in enumerate(groups + [common]):
            for w in g:
                f.write(w + " " + " ".join(f"{(1.0 if j == k else 0.0) + vec_rng.gauss(0, 0.3):.4f}" for j in range(6))
                        + "\n")
    fx["thin_vectors"] = str(d / "thin_vectors.txt")
    markup = d / "[bold]corpus.jsonl"
    shutil.copy(d / "corpus.jsonl", markup)
    fx["markup_corpus"] = fx["markup_name"] = str(markup)
    # odd files
    os.mkfifo(d / "fifo")
    fx["fifo"] = str(d / "fifo")
    (d / "empty").write_text("")
    fx["empty"] = str(d / "empty")
    fx["truncated"] = str(d / "truncated.jsonl")
    Path(fx["truncated"]).write_text((d / "corpus.jsonl").read_text()[:1234])
    fx["binary"] = str(d / "binary.jsonl")
    Path(fx["binary"]).write_bytes(bytes(random.Random(seed).randrange(256) for _ in range(4096)))
    fx["nul"] = str(d / "nul.txt")
    Path(fx["nul"]).write_bytes(b"river water\x00boat fish\nmoney\x00loan\n" * 20)
    (d / "adir").mkdir()
    fx["dir"] = str(d / "adir")
    os.symlink("loop_b", d / "loop_a")
    os.symlink("loop_a", d / "loop_b")
    fx["loop"] = str(d / "loop_a")
    long_dir = d
    for _ in range(3):
        long_dir = long_dir / ("l" * 200)
    fx["long"] = str(long_dir / ("f" * 250 + ".jsonl"))
    fx["dir_not_model"] = str(d / "adir")
    return fx


def make_models(tmp: Path, fx: dict, run, log) -> None:
    """Train the model folders the cases read, with the checkout under test (a failure leaves the fixture out and its
    cases skipped)."""
    d = tmp / "fixtures"
    C = fx["corpus"]
    jobs = {
        "m_cooc": ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "3",
                   "--no-ledger", "--test-size", "0"],
        "m_lda": ["train", "--corpus", C, "--algorithm", "lda", "--topics", "3", "--iterations", "20",
                  "--test-size", "0"],
        "m_pub": ["train", "--corpus", C, "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "3",
                  "--public-corpus", fx["public_clean"], "--no-ledger", "--test-size", "0"],
        "m_user": ["train", "--corpus", C, "--unit", "user", "--user-field", "user", "--epsilon", "1", "--topics",
                   "3", "--no-ledger", "--test-size", "0"],
        "m_thin": ["train", "--corpus", fx["thin"], "--unit", "user", "--user-field", "user", "--epsilon", "1",
                   "--topics", "3", "--no-ledger", "--test-size", "0", "--max-vocab", "all", "--min-df", "1"],
        "m_placed": ["train", "--corpus", fx["thin"], "--algorithm", "docdp-cooc", "--epsilon", "2", "--topics", "3",
                     "--public-vectors",
                     fx["thin_vectors"], "--vectors-route", "spread", "--no-ledger", "--test-size", "0",
                     "--max-vocab", "all", "--min-df", "1"],
    }
    for name, argv in jobs.items():
        r = run(argv + ["--out", str(d / name)], d, 300)
        if r.rc == 0:
            fx[name] = str(d / name)
        else:
            log(f"fixture {name} failed: {(r.err.strip().splitlines() or ['?'])[-1][:200]}")
    rep = d / "reports.jsonl"
    r = run(["randomize", "--vocabulary", fx["vocab"], "--unit", "word", "--epsilon-word", "2", "--corpus", C,
             "--out", str(rep)], d, 120)
    if r.rc == 0:
        r = run(["train", "--algorithm", "lp", "--reports", str(rep), "--vocabulary", fx["vocab"], "--topics", "3",
                 "--iterations", "10", "--out", str(d / "m_lp")], d, 300)
        if r.rc == 0:
            fx["m_lp"] = str(d / "m_lp")
    if "m_lda" in fx:       # tampered copies of a model folder
        src = Path(fx["m_lda"])

        def tampered(name, edit):
            dst = d / name
            shutil.copytree(src, dst)
            edit(dst)
            fx[name] = str(dst)

        def set_json(key_path, value):
            def edit(dst):
                p = dst / "model.json"
                doc = json.loads(p.read_text())
                o = doc
                for k in key_path[:-1]:
                    o = o.setdefault(k, {})
                o[key_path[-1]] = value
                p.write_text(json.dumps(doc))
            return edit

        tampered("truncated_model", lambda p: (p / "model.json").write_text((p / "model.json").read_text()[:200]))
        tampered("empty_model", lambda p: (p / "model.json").write_text(""))
        tampered("missing_arrays", lambda p: [f.unlink() for f in p.iterdir() if f.suffix == ".npy"])
        tampered("nan_epsilon", set_json(["privacy", "epsilon"], "NaN"))
        tampered("string_topics", set_json(["params", "n_topics"], "three"))
        tampered("model_json_list", lambda p: (p / "model.json").write_text("[1, 2]"))
        tampered("markup_trainer", set_json(["trainer"], "[/]"))
        # a model whose words hold markup: the vocabulary is public input a user may give
        dst = d / "markup_model"
        shutil.copytree(src, dst)
        p = dst / "model.json"
        doc = json.loads(p.read_text())
        text = json.dumps(doc)
        for w in ("bank", "river", "game"):
            text = text.replace(f'"{w}"', f'"[red]{w}"')
        p.write_text(text)
        for f in dst.iterdir():
            if f.suffix in (".txt", ".json") and f.name != "model.json":
                f.write_text(f.read_text().replace("bank", "[red]bank").replace("river", "[red]river"))
        fx["markup_model"] = str(dst)


# ------------------------------------------------------------------------------------------------------ running
class Runner:
    def __init__(self, src: Path, tmp: Path, python: str):
        self.src, self.tmp, self.python = src, tmp, python

    def env(self, folder: Path, extra: dict | None = None) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DPTOPIC", "XDG_", "PYTHON"))}
        env.update({"PYTHONPATH": str(self.src), "HOME": str(folder / "home"), "XDG_DATA_HOME": str(folder / "xdg"),
                    "PYTHONPYCACHEPREFIX": str(self.tmp / "pycache"), "NUMBA_CACHE_DIR": str(self.tmp / "numba"),
                    "COLUMNS": "160", "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"})
        for k, v in (extra or {}).items():
            env[k] = str(folder / v) if k in ("DPTOPIC_LEDGER", "XDG_DATA_HOME") else v
        return env

    def __call__(self, argv, folder: Path, timeout: float, extra_env=None, code: str | None = None) -> Result:
        folder.mkdir(parents=True, exist_ok=True)
        cmd = [self.python, "-c", PY_PRELUDE + code] if code is not None else [self.python, "-m", "dptopic", *argv]
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(cmd, cwd=folder, env=self.env(folder, extra_env), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            try:
                out, err = p.communicate(timeout=timeout)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                out, err = p.communicate()
                rc = None
        except OSError as e:      # an argument the OS refuses (a NUL byte): the shell could not pass it either
            return Result(0, "", f"(not run: {e})", 0.0)
        return Result(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), time.monotonic() - t0)


def run_case(case: Case, runner: Runner, folder: Path, fx: dict) -> tuple[str, str, list]:
    missing = [n for n in case.needs if n not in fx]
    if missing:
        return "skipped", f"fixture {', '.join(missing)} could not be built", []
    results = []
    for step in case.steps:
        if isinstance(step, tuple) and step[0] == "copy":
            shutil.copytree(step[1], folder / step[2])
            continue
        if isinstance(step, tuple) and step[0] == "touch":
            folder.mkdir(parents=True, exist_ok=True)
            (folder / step[1]).write_text("")
            continue
        if isinstance(step, tuple) and step[0] == "loop":
            folder.mkdir(parents=True, exist_ok=True)
            os.symlink(step[1] + ".b", folder / step[1])
            os.symlink(step[1], folder / (step[1] + ".b"))
            continue
        if isinstance(step, tuple) and step[0] == "python":
            r = runner(None, folder, case.timeout, case.env, code=step[1])
        else:
            r = runner(step, folder, case.timeout, case.env)
        results.append(r)
        if r.rc is None or "Traceback (most recent call last)" in r.err:
            break
    return (*classify(case, results, folder), results)


def classify(case: Case, results: list, folder: Path) -> tuple[str, str]:
    for r in results:
        if r.rc is None:
            return ("wrong", "a server started where it should have refused") if case.server else \
                ("hang", f"ran past {case.timeout:g} s")
        if "Traceback (most recent call last)" in r.err:
            last = [ln for ln in r.err.strip().splitlines() if ln.strip()][-1]
            return "traceback", last[:160]
        if r.rc not in REFUSAL_STATUSES:
            return "traceback", f"exit status {r.rc}: {(r.err.strip().splitlines() or [''])[-1][:120]}"
    for r in results:
        for line in r.out.splitlines():
            if line.startswith("WRONG: "):
                return "wrong", line[7:]
            if line.startswith("BADLY: "):
                return "badly worded", line[7:]
    if case.check is not None:
        why = case.check(results, folder)
        if why:
            return "wrong", why
    last = results[-1] if results else None
    if last is None:
        return "fine", ""
    if case.refuse and last.rc == 0:
        return "wrong", "accepted silently (a refusal was due)"
    if last.rc != 0 and not any(s[0] == "python" for s in case.steps if isinstance(s, tuple)):
        lines = [ln for ln in last.err.splitlines() if ln.strip() and not ln.startswith(("warning:", "note:"))]
        errors = [ln for ln in lines if ln.startswith("error:")]
        if len(errors) != 1 or len(lines) != 1:
            return "badly worded", f"not one error line: {' | '.join(lines[:3])[:160]}"
        if case.names and not any(n and n in errors[0] for n in case.names):
            return "badly worded", f"names none of {', '.join(repr(n[:30]) for n in case.names)}: {errors[0][:140]}"
    return "fine", ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--src", default=str(ROOT / "src"), help="the src/ folder of the checkout to run (default: this one)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter (its environment holds the dependencies)")
    ap.add_argument("--seed", type=int, default=0, help="the sweep's draws and the fixtures' texts (default 0)")
    ap.add_argument("--sweep", type=int, default=70, help="randomized sweep cases (default 70)")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    ap.add_argument("--only", default=None, help="run only the cases whose id holds this text")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    ap.add_argument("--json", default=None, help="write every outcome to this JSON file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every case, fine ones too")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="dptopic-fuzz-"))
    runner = Runner(Path(a.src).resolve(), tmp, a.python)
    t0 = time.monotonic()
    try:
        fx = make_files(tmp, a.seed)
        make_models(tmp, fx, lambda argv, folder, timeout: runner(argv, folder, timeout), print)
        cases = issue_cases(fx) + input_cases(fx) + sweep_cases(fx, a.sweep, a.seed)
        if a.only:
            cases = [c for c in cases if a.only in c.id]
        outcomes = [None] * len(cases)

        def one(i):
            outcomes[i] = run_case(cases[i], runner, tmp / "cases" / f"{i:03d}", fx)

        with ThreadPoolExecutor(max(1, a.jobs)) as pool:
            list(pool.map(one, range(len(cases))))
        counts = {k: {"issue": 0, "sweep": 0} for k in (*CLASSES, "skipped")}
        rows = []
        for case, (cls, why, results) in zip(cases, outcomes):
            part = "sweep" if case.id.startswith("sweep") else "issue"
            counts[cls][part] += 1
            rows.append({"id": case.id, "class": cls, "why": why, "part": part,
                         "argv": [s if not isinstance(s, tuple) else list(s[:1]) for s in case.steps],
                         "rc": [r.rc for r in results], "err": [r.err[-300:] for r in results]})
            if cls != "fine" or a.verbose:
                print(f"[{cls}] {case.id.encode('unicode_escape').decode()}" + (f": {why}" if why else ""))
        print()
        print(f"{'class':<14}{'issue cases':>12}{'sweep':>8}{'total':>8}")
        for k, v in counts.items():
            print(f"{k:<14}{v['issue']:>12}{v['sweep']:>8}{v['issue'] + v['sweep']:>8}")
        print(f"{'all':<14}{sum(v['issue'] for v in counts.values()):>12}{sum(v['sweep'] for v in counts.values()):>8}"
              f"{len(cases):>8}")
        print(f"src {a.src}, seed {a.seed}, {len(cases)} cases in {time.monotonic() - t0:.0f} s")
        if a.json:
            Path(a.json).write_text(json.dumps({"src": a.src, "seed": a.seed, "counts": counts, "cases": rows},
                                               indent=1))
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
