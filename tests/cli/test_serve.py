"""``dptopic serve``, ``submit`` and ``fed-client`` on the command line: bad input is refused in one line that names
what the user gave, before anything is sent, spent or written."""
from __future__ import annotations

import pytest

from dptopic.cli.main import main

# nothing listens on port 9 (discard): a command that got as far as the server would say it cannot reach it
NO_SERVER = "http://127.0.0.1:9"

BAD_STATE_FILES = {
    "prose.txt": b"my own notes, not a state file\n",
    "empty.json": b"",
    "truncated.json": b'{"format": "dptopic-submit-state", "version": 1, "uploads": [',
    "nul.json": b"\0" * 64,
}


def _refusal(capsys, argv) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: "), (rc, err)
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("command", ["submit", "fed-client"])
@pytest.mark.parametrize("name", sorted(BAD_STATE_FILES))
def test_a_state_file_that_is_not_one_is_refused_naming_it_and_left_alone(tmp_path, monkeypatch, capsys, command,
                                                                          name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs.txt").write_text("apple banana cherry\ngrape lemon mango\n")
    (tmp_path / name).write_bytes(BAD_STATE_FILES[name])
    line = _refusal(capsys, [command, "--server", NO_SERVER, "--corpus", "docs.txt", "--state", name,
                             "--retries", "0"])
    assert f"--state '{name}' is not a" in line and "state file" in line, line
    assert "empty" in line if name == "empty.json" else "not JSON" in line, line
    assert (tmp_path / name).read_bytes() == BAD_STATE_FILES[name]      # the user's file is not touched
