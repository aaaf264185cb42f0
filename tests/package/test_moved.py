"""``dptopic._moved``: a module's old path imports the module at its new path, with a warning naming the new path."""
import importlib
import subprocess
import sys
import warnings

import pytest

from dptopic._moved import MOVED_MODULES, new_path, SPLIT_MODULES


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_an_old_path_gives_the_new_module_and_names_it(old):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED_MODULES[old]}: import {MOVED_MODULES[old]}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED_MODULES[old])


def test_a_moved_package_carries_its_submodules():
    assert new_path("dptopic.recovery.support") == "dptopic.moments.support"
    assert new_path("dptopic.recovery.cooccurrence") == "dptopic.moments.document_statistics"   # moved on its own
    assert new_path("dptopic.moments.support") is None and new_path("dptopic.recoveryx") is None
    sys.modules.pop("dptopic.recovery.support", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from dptopic.recovery.support import wigner_edge
    from dptopic.moments import support
    assert wigner_edge is support.wigner_edge          # one module, not a second copy under the old name


def test_an_old_path_in_a_fresh_interpreter(tmp_path):
    """As a user's script sees it: the old ``from ... import`` works and the warning names its line."""
    script = tmp_path / "old.py"
    script.write_text("import warnings\nwarnings.simplefilter('always')\n"
                      "from dptopic.recovery import topics_from_cooccurrence\n"
                      "print(topics_from_cooccurrence.__module__)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "dptopic.moments.factorize"
    assert f"{script}:3: DeprecationWarning: dptopic.recovery moved to dptopic.moments" in run.stderr


def test_every_new_path_exists_and_no_file_is_left_at_an_old_one():
    from pathlib import Path

    import dptopic

    root = Path(dptopic.__file__).parent
    for old, new in MOVED_MODULES.items():
        assert importlib.util.find_spec(new) is not None, new
        where = root.joinpath(*old.split(".")[1:])
        assert not where.exists() and not where.with_suffix(".py").exists(), where


@pytest.mark.parametrize("old", sorted(SPLIT_MODULES))
def test_a_split_module_s_old_path_holds_the_names_of_every_part_with_a_warning(old):
    from pathlib import Path

    import dptopic

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} was split into"):
        module = importlib.import_module(old)
    for part in SPLIT_MODULES[old]:
        new = importlib.import_module(part)
        for name, value in vars(new).items():
            if not name.startswith("__") and name in vars(module):
                assert getattr(module, name) is value or name in vars(importlib.import_module(SPLIT_MODULES[old][0]))
        # every class defined in a part is reachable from the old path, as before the split
        for name, value in vars(new).items():
            if isinstance(value, type) and value.__module__ == part:
                assert getattr(module, name) is value
    where = Path(dptopic.__file__).parent.joinpath(*old.split(".")[1:]).with_suffix(".py")
    assert not where.exists(), where
