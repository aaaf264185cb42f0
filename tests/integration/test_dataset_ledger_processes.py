"""The dataset ledger across real processes: concurrent writers against one cap, and a run killed between its debit
and its save (docs/budget.md)."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from dptopic.dataset_ledger.ledger import DatasetLedger

SRC = str(Path(__file__).resolve().parents[2] / "src")

DEBIT = textwrap.dedent("""
    import sys, time
    from dptopic.accounting import PureDPEvent
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.errors import BudgetExceededError
    import os
    led = DatasetLedger(sys.argv[1])
    open(sys.argv[2] + "." + str(os.getpid()), "w").close()     # ready
    while not os.path.exists(sys.argv[2]):                        # start together
        time.sleep(0.002)
    try:
        led.debit("shared", "T", "document", [(PureDPEvent(1.0), 1)], 1e-5)
        print("admitted")
    except BudgetExceededError:
        print("refused")
""")


def _env():
    return dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_concurrent_writers_never_pass_a_cap_together(tmp_path):
    L = tmp_path / "l.sqlite"
    DatasetLedger(L).set_cap("shared", 2.0, 1e-5)      # two pure releases at epsilon 1 fit, a third does not
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", DEBIT, str(L), str(go)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_env()) for _ in range(4)]
    deadline = time.time() + 120
    while len(list(tmp_path.glob("go.*"))) < len(procs) and time.time() < deadline \
            and all(p.poll() is None for p in procs):
        time.sleep(0.05)
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    said = sorted(o[0].strip() for o in outs)
    assert said.count("admitted") == 2 and said.count("refused") == 2, said
    rel = DatasetLedger(L).releases("shared")
    assert len(rel) == 2 and len({r["id"] for r in rel}) == 2


KILLED = textwrap.dedent("""
    import sys, time, warnings
    warnings.simplefilter("ignore")
    from dptopic.corpus import lda_corpus
    from dptopic.models import DocDPCooccurrence, docdp_cooc
    real = docdp_cooc.gaussian_mechanism
    def slow(*a, **k):              # the debit is written; the noise is drawn after a long pause (killed there)
        print("debited", flush=True)
        time.sleep(120)
        return real(*a, **k)
    docdp_cooc.gaussian_mechanism = slow
    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=3, doc_length=10, seed=1).corpus
    m = DocDPCooccurrence(n_topics=3, epsilon=1.0, ledger=sys.argv[1], dataset="posts").fit(c)
    m.save(sys.argv[2])
""")


def test_a_run_killed_after_its_debit_stays_recorded(tmp_path):
    L, out = tmp_path / "l.sqlite", tmp_path / "model"
    p = subprocess.Popen([sys.executable, "-c", KILLED, str(L), str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=_env())
    try:
        line = p.stdout.readline()
        assert line.strip() == "debited", p.stderr.read()[-2000:]
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signal.SIGKILL
    (r,) = DatasetLedger(L).releases("posts")      # recorded, on the safe side, though no model was saved
    assert r["trainer"] == "DocDPCooccurrence" and r["model_path"] is None and r["epsilon"] <= 1.0 + 1e-9
    assert not out.exists()
