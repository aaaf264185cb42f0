"""The new user's walk-through of issue 93, on two real projects' commit histories: a budget that follows people.

Reads the commit messages of scipy and numpy (their git directories, ``--scipy`` and ``--numpy``), one document a
commit, its author's e-mail the person, and walks through what a privacy team would do, each step a ``dptopic``
command on one ledger with a per-person cap of ``--cap`` (8):

1. ``train`` scipy at epsilon 4 per person, with scipy's ``.mailmap`` as ``--person-aliases``;
2. ``budget plan --corpus`` numpy before its first release: how many of its people scipy already charged;
3. ``train`` numpy at epsilon 4 per person;
4. the same numpy commits with every e-mail replaced by the first 16 hex digits of its sha256 (a pipeline's
   pseudonyms), then with every e-mail upper-cased and every message upper-cased: each ``train`` at the cap's epsilon
   (8) must be refused, since every one of its people was charged before (before this issue, the first was accepted
   and its card said "8 per person over 1 release");
5. a secure-sum round of 300 scipy people, invited by their e-mails (``secure-sum invite --ids`` in Python: the
   invitations, the pseudonyms and the charge a server makes), charged to the same people;
6. ``budget show`` and ``budget show --person-level``: the time each takes, and the linked ids.

Every figure is printed with the command that produced it. The numbers are exact counts of public commit histories.

Run:  python benchmarks/walkthrough_people.py --scipy SCIPY.git --numpy NUMPY.git [--out runs/walkthrough]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

DPTOPIC = [sys.executable, "-m", "dptopic"]


def commits(gitdir: str) -> list[tuple[str, str]]:
    """``(author e-mail, message)`` of every commit of a git directory, newest first."""
    out = subprocess.run(["git", f"--git-dir={gitdir}", "log", "--format=%ae%x00%B%x1e"], capture_output=True,
                         check=True).stdout.decode("utf-8", "replace")
    rows = [r.strip("\n").split("\x00", 1) for r in out.split("\x1e") if r.strip()]
    return [(r[0], r[1]) for r in rows if len(r) == 2 and r[1].strip()]


def write_jsonl(path: Path, rows) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for author, text in rows:
            f.write(json.dumps({"author": author, "text": text}) + "\n")
    return path


def run(*args, show: bool = True) -> tuple[int, str, float]:
    t = time.perf_counter()
    r = subprocess.run([*DPTOPIC, *map(str, args)], capture_output=True, text=True)
    took = time.perf_counter() - t
    if show:
        print(f"$ dptopic {' '.join(map(str, args))}   # {took:.1f} s, exit {r.returncode}")
        lines = [x for x in (r.stdout + r.stderr).splitlines() if x.startswith(("error:", "ledger", "  ", "people",
                                                                                  "ids linked", "largest"))]
        for line in lines[:12]:
            print("    " + line)
    return r.returncode, r.stdout + r.stderr, took


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scipy", required=True, help="scipy's git directory")
    ap.add_argument("--numpy", required=True, help="numpy's git directory")
    ap.add_argument("--out", default="runs/walkthrough_people", help="a folder for the files and the ledger")
    ap.add_argument("--cap", type=float, default=8.0)
    ap.add_argument("--epsilon", type=float, default=4.0)
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    L = out / "ledger.sqlite"
    if L.exists():
        L.unlink()
    scipy, numpy_ = commits(a.scipy), commits(a.numpy)
    files = {"scipy": write_jsonl(out / "scipy.jsonl", scipy), "numpy": write_jsonl(out / "numpy.jsonl", numpy_),
             "numpy, e-mails hashed": write_jsonl(out / "numpy_hashed.jsonl", [
                 (hashlib.sha256(e.encode()).hexdigest()[:16], t) for e, t in numpy_]),
             "numpy, upper case": write_jsonl(out / "numpy_upper.jsonl", [(e.upper(), t.upper()) for e, t in numpy_])}
    mailmap = out / "scipy.mailmap"
    mailmap.write_bytes(subprocess.run(["git", f"--git-dir={a.scipy}", "show", "HEAD:.mailmap"], capture_output=True,
                                       check=True).stdout)
    shared = sorted({e for e, _ in scipy} & {e for e, _ in numpy_})
    print(f"scipy: {len(scipy):,} commits by {len({e for e, _ in scipy}):,} e-mails; numpy: {len(numpy_):,} by"
          f" {len({e for e, _ in numpy_}):,}; {len(shared):,} e-mails in both")
    eps = str(a.epsilon)
    common = ["--unit", "user", "--user-field", "author", "--epsilon", eps, "--topics", "20", "--ledger", L, "--quiet"]
    run("budget", "cap", "--ledger", L, "--per-person", "--epsilon", a.cap, "--delta", "1e-5")
    run("train", "--corpus", files["scipy"], *common, "--person-aliases", mailmap, "--out", out / "m_scipy",
        "--overwrite")
    rc, text, _ = run("budget", "plan", "--ledger", L, "--corpus", files["numpy"], "--user-field", "author", "--unit",
                      "user", "--epsilon", eps, "--json", show=False)
    plan = json.loads(text[text.index("{"):])
    print(f"$ dptopic budget plan --corpus numpy.jsonl --user-field author --unit user --epsilon {eps}: of its"
          f" {plan['owners']:,} people, {plan['owners_charged_before']:,} were charged before; refused:"
          f" {plan['refused']}")
    run("train", "--corpus", files["numpy"], *common, "--out", out / "m_numpy", "--overwrite")
    at_cap = [x if x != eps else str(a.cap) for x in common]
    for name in ("numpy, e-mails hashed", "numpy, upper case"):
        rc, _, _ = run("train", "--corpus", files[name], *at_cap, "--out", out / f"m_{len(name)}", "--overwrite")
        print(f"    -> {name}: {'refused' if rc == 2 else 'ACCEPTED'}")
    served_round(L, [e for e in sorted({e for e, _ in scipy})][:300], out)
    for args in (("budget", "show"), ("budget", "show", "--person-level")):
        run(*args, "--ledger", L)


def served_round(L: Path, ids: list, out: Path) -> None:
    """300 scipy people invited by their e-mails; the round charged as a server charges it."""
    import shutil

    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from dptopic.service.ledger import charge_secure_round

    inv = out / "invitations"
    shutil.rmtree(inv, ignore_errors=True)
    led = DatasetLedger(L)
    before = [led.person_total(p)["epsilon"] for p in ids[:3]]
    t = time.perf_counter()
    make_invitations(out / "enrollment.key", None, inv, round_id="walkthrough", ids=ids, ledger=L)
    directory = read_directory(inv / "directory.json")
    plan = SecureSumPlan(1.0, 1e-5, len(ids), max(1, len(ids) // 10), 40, 7)
    try:
        charge_secure_round(str(L), "scipy-round", plan, sorted(directory["members"]), directory)
        verdict = "charged"
    except Exception as e:      # noqa: BLE001 - a cap that refuses the round: said, as a server would
        verdict = f"refused: {' '.join(str(e).split())[:160]}"
    after = [DatasetLedger(L).person_total(p)["epsilon"] for p in ids[:3]]
    print(f"served round of {len(ids)} scipy people invited by e-mail ({time.perf_counter() - t:.1f} s): {verdict};"
          f" the first three people's totals {', '.join(f'{b:.3f}' for b in before)} -> "
          f"{', '.join(f'{x:.3f}' for x in after)}")
    print(f"    ({os.path.basename(str(inv))}/directory.json names {len(directory['members'])} pseudonyms, no e-mail)")


if __name__ == "__main__":
    main()
