"""The ``--out`` marker of a folder of results (``.dptopic-output``): ``--overwrite`` never deletes a result file, a
failed run leaves everything as it was, runs ending at once keep each other's entries (the marker is rewritten under
a lock), the stale-temporary sweep removes only dptopic's own temporaries, and a file removed while the folder is
read is skipped (``dptopic._io``)."""
import json
import os
import threading
import time
from pathlib import Path

import pytest

from dptopic import _io
from dptopic._io import OUTPUT_MARKER, check_output_dir, check_output_folder, mark_output_folder, unmark_failed_run
from dptopic.errors import DPTopicError


def _marker(folder) -> dict:
    return json.loads((Path(folder) / OUTPUT_MARKER).read_text())


def _names(folder) -> list[str]:
    return sorted(os.listdir(folder))


def _start(folder, command, overwrite=True):
    check_output_folder(folder, overwrite=overwrite, command=command)
    mark_output_folder(folder, command)


# ---- --overwrite deletes nothing, at the start or after a failure; the other corpus's files stay
def test_overwrite_deletes_nothing_and_a_failed_run_leaves_everything_as_it_was(tmp_path):
    d, cmd = tmp_path / "figs", "experiment zhao"
    _start(d, cmd, overwrite=False)                                  # a 20 Newsgroups run (hours)
    (d / "fig4-20newsgroups.png").write_text("expensive")
    mark_output_folder(d, cmd, done=True)
    before = _marker(d)["runs"]
    _start(d, cmd)                                                   # a --corpus demo run, --overwrite
    assert (d / "fig4-20newsgroups.png").read_text() == "expensive"  # nothing deleted before any work
    (d / "fig4-demo.png").write_text("half written")
    unmark_failed_run(d, cmd, created=False)                         # ... and it fails
    assert (d / "fig4-20newsgroups.png").read_text() == "expensive"
    runs = _marker(d)["runs"]
    assert runs[f"dptopic {cmd}"]["files"] == before[f"dptopic {cmd}"]["files"] == ["fig4-20newsgroups.png"]
    assert runs[f"dptopic {cmd}"]["unfinished"] == ["fig4-demo.png"]   # what the failed run wrote stays, listed
    check_output_folder(d, overwrite=True, command=cmd)             # and the folder is still accepted


def test_a_rerun_of_one_corpus_keeps_the_other_corpus_listed_as_earlier(tmp_path):
    d, cmd = tmp_path / "figures", "experiment svi"
    _start(d, cmd, overwrite=False)
    for n in ("svi_fig1_demo.png", "svi_fig1_demo.csv"):
        (d / n).write_text("demo")
    mark_output_folder(d, cmd, done=True)
    _start(d, cmd)                                                   # --corpus 20newsgroups --overwrite
    for n in ("svi_fig1_20newsgroups.png", "svi_fig1_20newsgroups.csv"):
        (d / n).write_text("20ng")
    mark_output_folder(d, cmd, done=True)
    assert (d / "svi_fig1_demo.png").read_text() == "demo"
    entry = _marker(d)["runs"][f"dptopic {cmd}"]
    assert entry["files"] == ["svi_fig1_20newsgroups.csv", "svi_fig1_20newsgroups.png"]   # this run's alone
    assert entry["earlier"] == ["svi_fig1_demo.csv", "svi_fig1_demo.png"]
    _start(d, cmd)                                                   # demo again: it rewrites its own files
    (d / "svi_fig1_demo.png").write_text("demo 2")
    mark_output_folder(d, cmd, done=True)
    entry = _marker(d)["runs"][f"dptopic {cmd}"]
    assert entry["files"] == ["svi_fig1_demo.png"]
    assert entry["earlier"] == ["svi_fig1_20newsgroups.csv", "svi_fig1_20newsgroups.png", "svi_fig1_demo.csv"]
    assert len(_names(d)) == 5                                       # the marker and the four files


def test_a_version_2_marker_is_read(tmp_path):
    d = tmp_path / "v2"
    d.mkdir()
    for n in ("fedlda_table.csv", "fig4-demo.png", "svi_fig1_demo.png", "half.png"):
        (d / n).write_text("x")
    (d / OUTPUT_MARKER).write_text(json.dumps({
        "format": "dptopic-output", "version": 2, "note": "...", "kept": ["fig4-demo.png"],
        "runs": {"dptopic experiment fedlda": {"files": ["fedlda_table.csv"]},
                 "dptopic experiment lira": {"files": ["half.png"], "finished": False},
                 "dptopic experiment svi": {"before": {}}}}))               # an svi run killed (or under way)
    _start(d, "experiment fedlda")
    (d / "fedlda_budget.png").write_text("new")
    mark_output_folder(d, "experiment fedlda", done=True)
    runs = _marker(d)["runs"]
    assert runs["dptopic experiment fedlda"] == {"files": ["fedlda_budget.png"], "earlier": ["fedlda_table.csv"]}
    assert runs["dptopic experiment lira"] == {"files": [], "unfinished": ["half.png"]}
    assert runs["dptopic experiment svi"] == {"files": [], "before": {}}   # another run's start is kept as it was
    assert _marker(d)["kept"] == ["fig4-demo.png"] and len(_names(d)) == 6


def test_an_older_dptopics_marker_of_a_run_that_never_finished_accepts_the_folder(tmp_path):
    d = tmp_path / "old"
    d.mkdir()
    for n in ("fig4-demo.png", "table.csv"):
        (d / n).write_text("old")
    (d / OUTPUT_MARKER).write_text(json.dumps({"written_by": "dptopic experiment topic-attack", "note": "..."}))
    _start(d, "experiment topic-attack")
    (d / "table.csv").write_text("new")
    mark_output_folder(d, "experiment topic-attack", done=True)
    mark = _marker(d)
    assert mark["runs"] == {"dptopic experiment topic-attack": {"files": ["table.csv"]}}
    assert mark["kept"] == ["fig4-demo.png"] and (d / "fig4-demo.png").read_text() == "old"


# ---- runs ending at once keep each other's entries; a user's file written meanwhile is never deleted
def test_concurrent_runs_keep_both_entries_and_delete_nothing_later(tmp_path):
    d, A, B = tmp_path / "figs", "experiment lira", "experiment zhao"
    _start(d, A, overwrite=False)
    _start(d, B)
    (d / "zhao.png").write_text("B")
    (d / "lira.png").write_text("A")
    mark_output_folder(d, B, done=True)
    mark_output_folder(d, A, done=True)
    runs = _marker(d)["runs"]
    assert "lira.png" in runs[f"dptopic {A}"]["files"] and "zhao.png" in runs[f"dptopic {B}"]["files"]
    for cmd in (A, B):                     # each reruns, writing nothing this time: the other's file stays
        _start(d, cmd)
        mark_output_folder(d, cmd, done=True)
    assert _names(d) == [OUTPUT_MARKER, "lira.png", "zhao.png"]


def test_the_marker_is_rewritten_under_a_lock(tmp_path, monkeypatch):
    """A finishes and is paused between reading the marker and writing it; B writes one more file and finishes
    meanwhile. Without the lock A's write would drop what B recorded (b2.png would be listed nowhere)."""
    d, A, B = tmp_path / "figs", "experiment lira", "experiment zhao"
    _start(d, A, overwrite=False)
    _start(d, B)
    (d / "a.png").write_text("A")
    (d / "b.png").write_text("B")
    a_paused, b_finished = threading.Event(), threading.Event()
    write = _io.atomic_write_json

    def slow_write(path, obj, **kw):
        if threading.current_thread().name == "A" and not a_paused.is_set():
            a_paused.set()
            b_finished.wait(1.5)     # with the lock B cannot finish meanwhile: A goes on after the timeout
        write(path, obj, **kw)

    monkeypatch.setattr(_io.output, "atomic_write_json", slow_write)
    errors = []

    def finish(cmd, then=None):
        try:
            mark_output_folder(d, cmd, done=True)
        except BaseException as e:   # noqa: BLE001 (reported below)
            errors.append(e)
        if then is not None:
            then.set()

    ta = threading.Thread(target=finish, args=(A,), name="A")
    ta.start()
    assert a_paused.wait(10)
    (d / "b2.png").write_text("B")
    tb = threading.Thread(target=finish, args=(B, b_finished), name="B")
    tb.start()
    ta.join(20)
    tb.join(20)
    assert not errors and not ta.is_alive() and not tb.is_alive()
    runs = _marker(d)["runs"]
    assert "a.png" in runs[f"dptopic {A}"]["files"]
    assert {"b.png", "b2.png"} <= set(runs[f"dptopic {B}"]["files"])
    assert "before" not in runs[f"dptopic {A}"] and "before" not in runs[f"dptopic {B}"]
    check_output_folder(d, overwrite=True, command=A)           # every file is listed
    assert not (d / _io.MARKER_LOCK).exists()                   # the lock file does not stay behind


def test_a_users_file_written_during_a_run_is_never_deleted(tmp_path):
    d, A = tmp_path / "figs", "experiment lira"
    _start(d, A, overwrite=False)
    (d / "lira.png").write_text("x")
    (d / "NOTES.md").write_text("typed while the run was going")   # listed as the run's: a guess, but kept
    mark_output_folder(d, A, done=True)
    for _ in range(2):
        _start(d, A)
        (d / "lira.png").write_text("y")
        mark_output_folder(d, A, done=True)
    assert (d / "NOTES.md").read_text() == "typed while the run was going"
    assert _marker(d)["runs"][f"dptopic {A}"] == {"files": ["lira.png"], "earlier": ["NOTES.md"]}


# ---- the stale-temporary sweep removes only dptopic's own temporaries, and only old ones
def _age(path, seconds):
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_a_users_hidden_files_survive_and_block_the_folder(tmp_path):
    d, A = tmp_path / "figs", "experiment lira"
    _start(d, A, overwrite=False)
    (d / "a.png").write_text("x")
    mark_output_folder(d, A, done=True)
    users = {".draft.my_notes.tmp": "user's hidden draft", ".backup.20240101.tmp": "backup",
             ".fig.png.abcd1234.tmp": "another run's write of a file the marker does not list"}
    for n, text in users.items():
        (d / n).write_text(text)
        _age(d / n, 3600)
    with pytest.raises(DPTopicError, match=r"holds \.backup\.20240101\.tmp, \.draft\.my_notes\.tmp,"
                                           r" \.fig\.png\.abcd1234\.tmp, which dptopic did not write"):
        check_output_folder(d, overwrite=True, command="experiment zhao")
    mark_output_folder(d, "experiment zhao")    # even a run that skipped the check deletes none of them
    for n, text in users.items():
        assert (d / n).read_text() == text


def test_only_an_old_temporary_of_a_listed_file_is_swept(tmp_path):
    d, A = tmp_path / "figs", "experiment lira"
    _start(d, A, overwrite=False)
    (d / "a.png").write_text("x")
    mark_output_folder(d, A, done=True)
    old, fresh = d / ".a.png.k3x_9q2z.tmp", d / ".a.png.m0m0m0m0.tmp"   # atomic_write_bytes's names for a.png
    old.write_text("killed write")
    fresh.write_text("a write under way")
    _age(old, getattr(_io, "STALE_TEMPORARY_AGE", 600) + 60)
    with pytest.raises(DPTopicError, match=r"holds \.a\.png\.m0m0m0m0\.tmp, which"):  # the old one is no blocker
        check_output_folder(d, overwrite=True, command=A)
    mark_output_folder(d, A)
    assert not old.exists() and fresh.read_text() == "a write under way"


# ---- a file listed and then removed before it is examined is skipped
def test_a_file_removed_while_the_folder_is_read_is_skipped(tmp_path, monkeypatch):
    d, A = tmp_path / "figs", "experiment lira"
    _start(d, A, overwrite=False)
    (d / "a.png").write_text("x")
    tmp = d / ".b.png.abcdefgh.tmp"            # another run's temporary, renamed into place meanwhile
    tmp.write_text("y")
    real_lstat = os.lstat

    def lstat(path, *a, **k):
        if str(path) == str(tmp) and tmp.exists():
            os.replace(tmp, d / "b.png")
        return real_lstat(path, *a, **k)

    monkeypatch.setattr(os, "lstat", lstat)
    mark_output_folder(d, A, done=True)
    monkeypatch.undo()
    assert set(_marker(d)["runs"][f"dptopic {A}"]["files"]) <= {"a.png", "b.png"}
    assert "a.png" in _marker(d)["runs"][f"dptopic {A}"]["files"]


def test_a_model_out_that_holds_another_commands_results_does_not_say_dptopic_did_not_write_them(tmp_path):
    # walk C, finding 11: an audit's folder given to train was said to hold files "which dptopic did not write"
    d = tmp_path / "X"
    d.mkdir()
    (d / ".dptopic-output").write_text("{}")
    (d / "audit.json").write_text("{}")
    with pytest.raises(DPTopicError) as e:
        check_output_dir(d, overwrite=True)
    assert "did not write" not in str(e.value) and "another dptopic command's output folder" in str(e.value)
    (d / ".dptopic-output").unlink()
    with pytest.raises(DPTopicError, match="which dptopic did not write"):
        check_output_dir(d, overwrite=True)


# ------------------------------------------------------------------ one run at a time into one output folder
_HOLDER = """
import sys
from dptopic._io import claim_output
assert claim_output(sys.argv[1])
print("held", flush=True)
sys.stdin.read()        # held until the test closes our stdin
"""


def _hold_in_another_process(path):
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_train_run_into_an_out_folder_another_run_holds_is_refused_in_one_line_and_writes_nothing(tmp_path):
    from helpers import run_dptopic

    out = tmp_path / "runs" / "model"         # a folder (and its parent) not made yet: held all the same
    docs = tmp_path / "docs.txt"               # a small corpus (not the demo's, a minute of tokenizing under load)
    docs.write_text("\n".join(["tax budget deficit spending", "army navy war soldiers"] * 10) + "\n")
    proc = _hold_in_another_process(out)
    try:
        r = run_dptopic("train", "--corpus", docs, "--algorithm", "lda", "--topics", "2", "--iterations", "2",
                        "--out", out, "--quiet")
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "being written by another dptopic run" in r.stderr, r.stderr
        assert f"process {proc.pid}" in r.stderr and "--out" in r.stderr
        assert not out.exists()
    finally:
        proc.stdin.close()
        proc.wait(30)
    r = run_dptopic("train", "--corpus", docs, "--algorithm", "lda", "--topics", "2", "--iterations", "2",
                    "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert (out / "model.json").is_file()
    assert not [p.name for p in out.parent.iterdir() if p.name != "model"], "a lock file or temporary was left"


def test_a_save_never_removes_the_temporary_of_a_save_under_way(tmp_path):
    import numpy as np

    out = tmp_path / "model"
    _io.save_bundle(out, {"format": "dptopic-model"}, {"a": np.zeros(2)})
    live = tmp_path / ".model.abcd1234"         # what a save under way in another process has written so far
    live.mkdir()
    np.save(live / "a.npy", np.ones(2))
    proc = _hold_in_another_process(out)
    try:
        with pytest.raises(DPTopicError, match="being written by another dptopic run"):
            _io.save_bundle(out, {"format": "dptopic-model"}, {"a": np.ones(3)})
        assert (live / "a.npy").is_file()
    finally:
        proc.stdin.close()
        proc.wait(30)
    _io.save_bundle(out, {"format": "dptopic-model"}, {"a": np.ones(3)})     # held by no one: it was left by a crash
    assert not live.exists() and _io.load_bundle(out)[1]["a"].shape == (3,)


def test_saves_from_threads_into_one_folder_are_whole_or_refused_never_broken(tmp_path):
    import numpy as np

    out, errors = tmp_path / "model", []

    def save(k):
        for _ in range(15):
            try:
                _io.save_bundle(out, {"format": "dptopic-model"}, {"a": np.full(20_000, k)})
            except DPTopicError as e:
                assert "being written by another run" in str(e)
            except Exception as e:      # noqa: BLE001 -- a temporary removed under a save, as before
                errors.append(repr(e))

    threads = [threading.Thread(target=save, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    a = _io.load_bundle(out)[1]["a"]
    assert len(set(a.tolist())) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_a_marked_run_lists_its_files_when_done_and_leaves_no_folder_it_created_when_it_fails(tmp_path):
    from dptopic._io import marked_run

    out = tmp_path / "run"
    with pytest.raises(RuntimeError):
        with marked_run(out, "cmd"):
            out.mkdir(exist_ok=True)
            raise RuntimeError("stopped")
    assert not (out / OUTPUT_MARKER).exists()
    with marked_run(out, "cmd"):
        (out / "a.txt").write_text("x")
    runs = json.loads((out / OUTPUT_MARKER).read_text())["runs"]
    assert runs["dptopic cmd"]["files"] == ["a.txt"]


def test_a_refused_output_path_names_the_parameters_a_python_caller_gave(tmp_path):
    """``dptopic.train(out=...)`` told a Python caller to "pass --overwrite": the library names its parameters
    (``out``, ``overwrite=True``), and the command line writes them as its flags through its one table."""
    from dptopic.cli._flags import OUTPUT_FLAGS, flag_message
    from dptopic.errors import ParameterError

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.json").write_text(json.dumps({"format": "dptopic-model", "arrays": []}))
    (tmp_path / "r").mkdir()
    mark_output_folder(tmp_path / "r", "audit")
    (tmp_path / "f.npz").write_bytes(b"x")
    refusals = []
    for check in (lambda: check_output_dir(tmp_path / "m"),
                  lambda: check_output_folder(tmp_path / "r", command="audit"),
                  lambda: _io.check_output_file(tmp_path / "f.npz", lambda p: True)):
        with pytest.raises(ParameterError) as e:
            check()
        refusals.append(e.value)
    for e in refusals:
        assert e.parameters == ("out", "overwrite") and "--" not in str(e), str(e)
        assert str(e).startswith("out '") and "pass overwrite=True" in str(e), str(e)
        line = flag_message(e, OUTPUT_FLAGS)
        assert line.startswith("--out '") and "pass --overwrite " in line and "overwrite=" not in line, line

